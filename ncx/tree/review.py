"""review: the knowledge change between two git refs, as a report for a pull request.

Memories added / changed / superseded / removed (with their text), docs re-chunked (which
sections), and the tree's `ncx check` problems. Reads blobs at refs through GitPython;
never writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ncx.errors import NcxError, UsageError
from ncx.layout import NCX_DIR
from ncx.memory.file import body_sections
from ncx.store import parse_frontmatter

CHUNKS = f"{NCX_DIR}/chunks/"
MEMORIES = f"{NCX_DIR}/memories/"


@dataclass
class MemoryChange:
    id: str
    change: str  # added | changed | superseded | removed | proposed | approved
    learning: str
    before: str | None = None  # the previous learning text when it changed
    meta: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class DocChange:
    source_path: str
    added: list[str] = field(default_factory=list)  # section trails
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass
class Review:
    base: str
    head: str
    memories: list[MemoryChange] = field(default_factory=list)
    docs: list[DocChange] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "head": self.head,
            "memories": [m.__dict__ for m in self.memories],
            "docs": [d.__dict__ for d in self.docs],
            "problems": self.problems,
        }


def resolve_range(root: Path, spec: str | None) -> tuple[str, str]:
    """`BASE..HEAD`, `BASE` (..HEAD), or nothing: the merge base with main/master, else HEAD~1."""
    import git

    r = git.Repo(root)
    if spec:
        base, _, head = spec.partition("..")
        head = head or "HEAD"
    else:
        head = "HEAD"
        base = ""
        for cand in ("origin/main", "main", "origin/master", "master"):
            try:
                mb = r.merge_base(cand, head)
            except git.GitCommandError:
                continue
            if mb and mb[0].hexsha != r.commit(head).hexsha:
                base = mb[0].hexsha
                break
        if not base:
            base = "HEAD~1"
    for ref in (base, head):
        try:
            # `HEAD:README.md` names a file, not a commit: refused here, not deep in a diff.
            if r.rev_parse(ref).type not in ("commit", "tag"):
                raise ValueError(ref)
            r.commit(ref)
        except (git.BadName, ValueError, TypeError, git.GitCommandError, AttributeError):
            raise UsageError(
                f"unknown git revision {ref!r}", hint="give a range like main..HEAD"
            ) from None
    return base, head


def build_review(root: Path, base: str, head: str) -> Review:
    import git

    r = git.Repo(root)
    b, h = r.commit(base), r.commit(head)
    review = Review(base=b.hexsha[:10], head=h.hexsha[:10])
    docs: dict[str, DocChange] = {}
    for d in b.diff(h, paths=[NCX_DIR], no_renames=True):
        path = d.b_path or d.a_path or ""
        if not path.endswith(".md"):
            continue
        old = _meta_body(d.a_blob.data_stream.read(), path) if d.a_blob else None
        new = _meta_body(d.b_blob.data_stream.read(), path) if d.b_blob else None
        if path.startswith(MEMORIES):
            review.memories.append(_memory_change(path, old, new))
        elif path.startswith(CHUNKS):
            meta = (new or old or ({}, ""))[0]
            src = str(meta.get("source_path") or path)
            doc = docs.setdefault(src, DocChange(src))
            trail = " > ".join(str(t) for t in meta.get("source_section") or []) or "(intro)"
            (doc.added if old is None else doc.removed if new is None else doc.changed).append(
                trail
            )
    review.memories.sort(key=lambda m: (m.change, m.id))
    review.docs = sorted(docs.values(), key=lambda d: d.source_path)
    return review


def _meta_body(data: bytes, path: str) -> tuple[dict[str, Any], str]:
    try:
        meta, body, _ = parse_frontmatter(data.decode("utf-8", "replace"), path=path)
        return meta, body
    except NcxError:
        return {"_broken": True}, data.decode("utf-8", "replace")


def _learning(body: str) -> str:
    sec = body_sections(body)
    return (sec.get("learning") or body).strip()


def _memory_change(
    path: str, old: tuple[dict[str, Any], str] | None, new: tuple[dict[str, Any], str] | None
) -> MemoryChange:
    mid = Path(path).stem
    if new is None:
        assert old is not None
        return MemoryChange(mid, "removed", _learning(old[1]), meta=_public(old[0]))
    meta, body = new
    if old is None:
        kind = "proposed" if meta.get("status") == "proposed" else "added"
        return MemoryChange(mid, kind, _learning(body), meta=_public(meta))
    ometa, obody = old
    change = MemoryChange(mid, "changed", _learning(body), meta=_public(meta))
    if ometa.get("status") != meta.get("status"):
        change.notes.append(f"status {ometa.get('status')} → {meta.get('status')}")
        if meta.get("status") == "superseded":
            change.change = "superseded"
        elif ometa.get("status") == "proposed" and meta.get("status") == "active":
            change.change = "approved"
    for key in ("confidence", "usefulness", "type", "domain", "superseded_by"):
        if ometa.get(key) != meta.get(key) and key != "status":
            change.notes.append(f"{key} {ometa.get(key)} → {meta.get(key)}")
    if _learning(obody) != change.learning:
        change.before = _learning(obody)
    return change


def _public(meta: dict[str, Any]) -> dict[str, Any]:
    return {
        k: meta.get(k)
        for k in ("type", "domain", "confidence", "status", "superseded_by")
        if meta.get(k)
    }


def render_markdown(review: Review) -> str:
    out = [f"## ncx knowledge review `{review.base}..{review.head}`", ""]
    if not review.memories and not review.docs and not review.problems:
        out.append("No change to `.neocortex/` in this range.")
        return "\n".join(out) + "\n"
    counts: dict[str, int] = {}
    for m in review.memories:
        counts[m.change] = counts.get(m.change, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    out.append(
        f"**Memories:** {summary or 'none'} · **Docs re-chunked:** {len(review.docs)} · "
        f"**Problems:** {len(review.problems)}"
    )
    out.append("")
    if review.memories:
        out += ["### Memories", ""]
        for m in review.memories:
            tags = ", ".join(f"{k}: {v}" for k, v in m.meta.items())
            out.append(f"- **{m.change}** `{m.id}`" + (f" ({tags})" if tags else ""))
            out += [f"  > {line}" if line else "  >" for line in m.learning.splitlines()]
            if m.before is not None:
                out.append("  <details><summary>before</summary>")
                out.append("")
                out += [f"  > {line}" if line else "  >" for line in m.before.splitlines()]
                out.append("  </details>")
            for n in m.notes:
                out.append(f"  - {n}")
        out.append("")
    if review.docs:
        out += [
            "### Docs re-chunked",
            "",
            "| doc | sections added | changed | removed |",
            "|---|---|---|---|",
        ]
        for d in review.docs:
            cells = [", ".join(x) or "—" for x in (d.added, d.changed, d.removed)]
            out.append(
                f"| `{d.source_path}` | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
            )
        out.append("")
    if review.problems:
        out += ["### Problems (`ncx check`)", ""] + [f"- {p}" for p in review.problems] + [""]
    return "\n".join(out).rstrip() + "\n"
