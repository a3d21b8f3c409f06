"""review: the knowledge change between two git refs, as a report for a pull request.

Memories added / changed / superseded / removed (with their text), docs re-chunked (which
sections), and the tree's `ncx check` problems. Reads blobs at refs through GitPython;
never writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ncx.errors import NcxError, UsageError
from ncx.layout import MANIFEST, NCX_DIR
from ncx.memory.file import body_sections
from ncx.store import parse_frontmatter, split_chunk_file, without_inline_vec, without_vec

CHUNKS = f"{NCX_DIR}/chunks/"
MEMORIES = f"{NCX_DIR}/memories/"
_ID_LINE = re.compile(rb"^id: (.*)$", re.MULTILINE)


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
    status: str = "edited"  # added | edited | renamed | deleted
    renamed_from: str | None = None
    added: list[str] = field(default_factory=list)  # section trails
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    # sections whose own chunk is gone because their text now sits in a neighbour's chunk
    # (a section shrunk below the chunker's minimum): trail -> the trail of that chunk
    merged: dict[str, str] = field(default_factory=dict)


@dataclass
class Review:
    base: str
    head: str
    spec: str = ""  # the range as the user gave it
    memories: list[MemoryChange] = field(default_factory=list)
    docs: list[DocChange] = field(default_factory=list)
    tree: list[str] = field(default_factory=list)  # manifest and model changes
    reembedded: int = 0  # units whose vector changed while their text did not
    problems: list[str] = field(default_factory=list)
    evals: dict[str, Any] | None = None  # the eval delta (ncx.eval), when the head has questions
    evals_markdown: str = ""
    stale: list[str] = field(default_factory=list)  # memories citing what changed since

    def as_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "head": self.head,
            "range": self.spec,
            "memories": [m.__dict__ for m in self.memories],
            "docs": [d.__dict__ for d in self.docs],
            "tree": self.tree,
            "reembedded": self.reembedded,
            "problems": self.problems,
            **({"evals": self.evals} if self.evals is not None else {}),
            **({"stale": self.stale} if self.stale else {}),
        }


def resolve_range(root: Path, spec: str | None) -> tuple[str, str]:
    """(base, head) with git's meaning of a range: what `head` adds since it left `base`.

    `A..B` and `A...B` both compare B with the merge base of A and B (a change made on A
    after B branched off is not B's); `A` alone is `A..HEAD`; nothing is the merge base with
    main/master, else HEAD~1.
    """
    import git

    r = git.Repo(root)
    if spec:
        sep = "..." if "..." in spec else ".."
        left, _, right = spec.partition(sep)
        left, head = left or "HEAD", right or "HEAD"
        for ref in (left, head):
            _commit(r, ref)
        try:
            bases = r.merge_base(left, head)
        except git.GitCommandError:
            bases = []
        if not bases:
            raise UsageError(
                f"{left} and {head} share no history",
                hint="compare two refs of the same repository",
            )
        return bases[0].hexsha, head
    head = "HEAD"
    for cand in ("origin/main", "main", "origin/master", "master"):
        try:
            mb = r.merge_base(cand, head)
        except git.GitCommandError:
            continue
        if mb and mb[0].hexsha != r.commit(head).hexsha:
            return mb[0].hexsha, head
    _commit(r, "HEAD~1")
    return "HEAD~1", head


def _commit(r: Any, ref: str) -> Any:
    import git

    try:
        # git itself reads the revision (GitPython's own parser fails on reflog entries,
        # `HEAD@{1}`, with an IndexError); `^{commit}` refuses what names a file
        # (`HEAD:README.md`) here, not deep in a diff. A leading '-' would be an option.
        if ref.startswith("-"):
            raise ValueError(ref)
        sha = r.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}").strip()
        return r.commit(sha)
    except (git.BadName, ValueError, TypeError, AttributeError, git.GitCommandError):
        raise UsageError(
            f"unknown git revision {ref!r}", hint="give a range like main..HEAD or main...HEAD"
        ) from None


def build_review(root: Path, base: str, head: str, *, spec: str = "") -> Review:
    import git

    r = git.Repo(root)
    b, h = _commit(r, base), _commit(r, head)
    review = Review(base=b.hexsha[:10], head=h.hexsha[:10], spec=spec)
    # doc -> trail -> body, on each side, from the chunk files that changed
    before: dict[str, dict[str, str]] = {}
    after: dict[str, dict[str, str]] = {}
    md_changed: set[str] = set()
    npy_changed: set[str] = set()
    for d in b.diff(h, paths=[NCX_DIR], no_renames=True):
        path = d.b_path or d.a_path or ""
        if path == f"{NCX_DIR}/{MANIFEST}":
            review.tree += _manifest_notes(d)
            continue
        if path.endswith(".npy"):  # a memory's vector (or a chunk's, in a format-1 tree)
            npy_changed.add(path[: -len(".npy")])
            continue
        if not path.endswith(".md"):
            continue
        a_data = d.a_blob.data_stream.read() if d.a_blob else None
        b_data = d.b_blob.data_stream.read() if d.b_blob else None
        if a_data is not None and b_data is not None and without_vec(a_data) == without_vec(b_data):
            continue  # only its `vec` (the id of its .npy) changed: a re-embedding
        md_changed.add(path[: -len(".md")])
        if path.startswith(CHUNKS):
            # A doc's chunk file changes as one file: its blocks say which sections did.
            old_blocks, new_blocks = _blocks(a_data, path), _blocks(b_data, path)
            review.reembedded += _reembedded(old_blocks, new_blocks)
            for side, blocks in ((before, old_blocks), (after, new_blocks)):
                for block in blocks:
                    meta, body = _meta_body(block, path)
                    src = str(meta.get("source_path") or path)
                    trail = " > ".join(str(t) for t in meta.get("source_section") or [])
                    side.setdefault(src, {})[trail or "(intro)"] = body
            continue
        old = _meta_body(a_data, path) if a_data is not None else None
        new = _meta_body(b_data, path) if b_data is not None else None
        if path.startswith(MEMORIES):
            review.memories.append(_memory_change(path, old, new))
    review.reembedded += len(npy_changed - md_changed)
    review.docs = _doc_changes(r, b, h, before, after)
    review.memories.sort(key=lambda m: (m.change, m.id))
    return review


def _doc_changes(
    r: Any,
    b: Any,
    h: Any,
    before: dict[str, dict[str, str]],
    after: dict[str, dict[str, str]],
) -> list[DocChange]:
    """Per source doc: its sections added / changed / removed, and whether the doc itself was
    added, deleted or renamed (git's rename detection on the docs, outside .neocortex/)."""
    renamed: dict[str, str] = {}  # new path -> old path
    status: dict[str, str] = {}
    out = r.git.diff("--name-status", "-M", "-z", b.hexsha, h.hexsha, "--", ".", f":!{NCX_DIR}")
    fields = out.split("\0")
    i = 0
    while i < len(fields) and fields[i]:
        code = fields[i]
        if code.startswith(("R", "C")):
            old_path, new_path = fields[i + 1], fields[i + 2]
            if code.startswith("R"):
                renamed[new_path] = old_path
            i += 3
            continue
        status[fields[i + 1]] = {"A": "added", "D": "deleted"}.get(code[0], "edited")
        i += 2
    old_of = {new: old for new, old in renamed.items() if new in after or old in before}
    changes: list[DocChange] = []
    for src in sorted((set(before) | set(after)) - set(old_of.values()) | set(old_of)):
        old_src = old_of.get(src, src)
        was, now = before.get(old_src, {}), after.get(src, {})
        doc = DocChange(src, status=status.get(src, "edited"))
        if src in old_of:
            doc.status, doc.renamed_from = "renamed", old_src
        doc.added = [t for t in now if t not in was]
        doc.removed = [t for t in was if t not in now]
        doc.changed = [t for t in now if t in was and was[t] != now[t]]
        for trail in list(doc.removed):
            into = _merged_into(trail, now)
            if into is not None:
                doc.removed.remove(trail)
                doc.merged[trail] = into
        if doc.status == "renamed" or doc.added or doc.removed or doc.changed or doc.merged:
            changes.append(doc)
    return changes


def _merged_into(trail: str, now: dict[str, str]) -> str | None:
    """The chunk (its trail) whose text holds the heading of the section `trail`, when its
    own chunk is gone: the section was merged into a neighbour, not removed."""
    heading = trail.rsplit(" > ", 1)[-1].strip()
    if not heading or heading == "(intro)":
        return None
    for other, body in now.items():
        lines = [ln.strip() for ln in body.splitlines()]
        for i, line in enumerate(lines):
            if line.lstrip("#").strip() != heading:
                continue
            # a markdown heading (`## Monitor`) or the title line of an underlined one
            under = lines[i + 1] if i + 1 < len(lines) else ""
            if line.startswith("#") or (
                len(under) >= 3 and len(set(under)) == 1 and not under.isalnum()
            ):
                return other
    return None


def _blocks(data: bytes | None, path: str) -> list[bytes]:
    """The blocks of one side's chunk file (none where the file is absent). A file that does
    not split is read as one unit: a chunk file of the one-file-per-chunk format (a range
    that crosses the move to format 2), or a damaged one, whose text is still shown."""
    if data is None:
        return []
    try:
        return split_chunk_file(data, path=path)
    except NcxError:
        return [data]


def _reembedded(old: list[bytes], new: list[bytes]) -> int:
    """Blocks (matched by chunk id) whose vector changed while the rest of them did not."""
    was = {_block_id(b): b for b in old}
    count = 0
    for block in new:
        prev = was.get(_block_id(block))
        if prev is not None and prev != block:
            count += without_inline_vec(prev) == without_inline_vec(block)
    return count


def _block_id(block: bytes) -> bytes:
    m = _ID_LINE.search(block, 0, block.find(b"\n---\n", 3) + 1)
    return m.group(1) if m else block


def _manifest_notes(d: Any) -> list[str]:
    import json

    def load(blob: Any) -> dict[str, Any]:
        if blob is None:
            return {}
        try:
            data = json.loads(blob.data_stream.read())
        except ValueError:
            return {"_broken": True}
        return data if isinstance(data, dict) else {}

    old, new = load(d.a_blob), load(d.b_blob)
    if not old:
        return ["`.neocortex/` created"] if new else []
    notes = []
    om, nm = old.get("model") or {}, new.get("model") or {}
    if om != nm:
        notes.append(
            f"model {om.get('id')} ({om.get('dim')}d) → {nm.get('id')} ({nm.get('dim')}d)"
            if om.get("id") != nm.get("id")
            else f"model {nm.get('id')}: weights changed (sha256 {str(nm.get('sha256'))[:12]})"
        )
    for key in sorted(set(old) | set(new)):
        if key != "model" and old.get(key) != new.get(key):
            notes.append(f"manifest `{key}`: {old.get(key)!r} → {new.get(key)!r}")
    return notes


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


LIMIT = 30  # memories, docs and problems each, in a capped report
LEARNING_CHARS = 1500  # of one memory's text in a capped report
MAX_CHARS = 60_000  # of a capped report: under GitHub's 65,536-character comment limit


def render_markdown(review: Review, *, limit: int | None = None) -> str:
    """The report as markdown. With `limit`, at most that many memories, docs and problems
    each (and long learnings cut), then "… N more": sized for a PR comment, while the full
    report goes to a file or JSON."""
    title = review.spec or f"{review.base}..{review.head}"
    out = [f"## ncx knowledge review `{title}`", ""]
    if review.spec:
        out[0] += f" ({review.base}..{review.head})"
    if not (review.memories or review.docs or review.problems or review.tree or review.reembedded):
        out.append("No change to `.neocortex/` in this range.")
        if review.evals_markdown:
            out += ["", review.evals_markdown.rstrip()]
        out += _stale_section(review, limit)
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
    if review.tree or review.reembedded:
        out += ["### Tree", ""] + [f"- {n}" for n in review.tree]
        if review.reembedded:
            out.append(f"- {review.reembedded} unit(s) re-embedded with unchanged text")
        out.append("")
    more = "… {n} more {what} (the full report: `ncx review --out FILE` or `--json`)"
    if review.memories:
        out += ["### Memories", ""]
        shown = review.memories if limit is None else review.memories[:limit]
        for m in shown:
            tags = ", ".join(f"{k}: {v}" for k, v in m.meta.items())
            out.append(f"- **{m.change}** `{m.id}`" + (f" ({tags})" if tags else ""))
            out += _quote(m.learning, limit)
            if m.before is not None:
                out.append("  <details><summary>before</summary>")
                out.append("")
                out += _quote(m.before, limit)
                out.append("  </details>")
            for n in m.notes:
                out.append(f"  - {n}")
        if len(shown) < len(review.memories):
            out.append(more.format(n=len(review.memories) - len(shown), what="memories"))
        out.append("")
    if review.docs:
        out += [
            "### Docs re-chunked",
            "",
            "| doc | sections added | changed | removed |",
            "|---|---|---|---|",
        ]
        shown_docs = review.docs if limit is None else review.docs[:limit]
        for d in shown_docs:
            name = f"`{d.source_path}`"
            if d.status == "renamed":
                name += f" (renamed from `{d.renamed_from}`)"
            elif d.status in ("added", "deleted"):
                name += f" ({d.status})"
            changed = d.changed + [f"{a} (merged into {b})" for a, b in d.merged.items()]
            cells = [_trails(x, limit) for x in (d.added, changed, d.removed)]
            if d.status == "deleted":
                cells[2] = f"all {len(d.removed)}"
            out.append(f"| {name} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        if len(shown_docs) < len(review.docs):
            out += ["", more.format(n=len(review.docs) - len(shown_docs), what="docs")]
        out.append("")
    if review.evals_markdown:
        out += [review.evals_markdown.rstrip(), ""]
    out += _stale_section(review, limit)
    if review.problems:
        probs = review.problems if limit is None else review.problems[:limit]
        out += ["### Problems", ""] + [f"- {p}" for p in probs]
        if len(probs) < len(review.problems):
            out.append(more.format(n=len(review.problems) - len(probs), what="problems"))
        out.append("")
    text = "\n".join(out).rstrip() + "\n"
    if limit is not None and len(text) > MAX_CHARS:  # GitHub refuses comments over 65,536
        cut = text.rfind("\n", 0, MAX_CHARS - 200)
        text = (
            text[:cut]
            + f"\n\n… cut at {MAX_CHARS:,} characters "
            + "(the full report: `ncx review --out FILE` or `--json`)\n"
        )
    return text


def _stale_section(review: Review, limit: int | None) -> list[str]:
    if not review.stale:
        return []
    shown = review.stale if limit is None else review.stale[:limit]
    out = ["", "### Stale memories", ""] + [f"- {line}" for line in shown]
    if len(shown) < len(review.stale):
        out.append(f"… {len(review.stale) - len(shown)} more")
    return [*out, ""]


def _quote(text: str, limit: int | None) -> list[str]:
    if limit is not None and len(text) > LEARNING_CHARS:
        text = text[:LEARNING_CHARS].rstrip() + " …"
    return [f"  > {line}" if line else "  >" for line in text.splitlines()]


def _trails(trails: list[str], limit: int | None) -> str:
    if not trails:
        return "—"
    if limit is not None and len(trails) > 5:
        return ", ".join(trails[:5]) + f", … {len(trails) - 5} more"
    return ", ".join(trails)
