"""memory_ops: what the memory commands do — add, evolve, supersede, review, remove, extract.

Sits on memories (the file format), secrets and extract (pure checks), embedder and index
(vectors of what is already there). Shared by `ncx memory …` and, later, the MCP server.
Every function takes the repo root and, where it writes, `today` (the CLI passes
date.today(); tests pin it). Each one rewrites only the memory files it names: related
discovery writes into the new memory alone, and only supersede touches two files.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ncx.config import Config
from ncx.embedder import Embedder
from ncx.errors import NcxError, UsageError
from ncx.layout import memories_dir
from ncx.locks import exclusive
from ncx.manifest import load_manifest
from ncx.memory.file import (
    CONFIDENCES,
    STATUSES,
    TYPES,
    Memory,
    memory_embed_text,
    memory_path,
    new_memory_id,
    read_memory,
    render_body,
    render_memory,
    write_memory,
)
from ncx.paths import check_write, memory_ref
from ncx.secrets import SecretFinding, find_secrets
from ncx.store import remove_unit, text_lines, write_atomic

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class Near(Protocol):
    """A unit of the search cache close to a new memory (ncx.query.cache.Unit)."""

    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def status(self) -> str | None: ...
    @property
    def source_path(self) -> str: ...
    @property
    def section(self) -> list[str]: ...


# (root, vector, floor) -> the cache's units whose cosine to the vector is at least floor,
# best first. The read side's (ncx.query.search.neighbours): a memory is written here, the
# cache it is compared with is loaded there, and this folder imports nothing of the read side.
Neighbours = Callable[["Path", "NDArray[np.float32]", float], "Sequence[tuple[Near, float]]"]

# Cosine at or above which a new memory is "the same learning" as an active or proposed one.
# Measured on 368 ADR facts with a static model (benchmarks/memory_bench.py --tune): the same
# fact lowercased without punctuation scores >= 0.92 in 99% of cases, while only 5% of
# distinct facts have a nearest other fact that high (mostly boilerplate-like sentences).
DUPLICATE_COS = 0.92
# Related discovery: at most RELATED_MAX units at or above RELATED_COS. On the same set,
# facts of two different ADRs score 0.50 at the median and 0.73 at the 99th percentile,
# facts of the same ADR 0.74 at the median: 0.7 links neighbours, not the whole project.
RELATED_COS = 0.7
RELATED_MAX = 5
_LIVE = frozenset({"active", "proposed"})  # what a new memory may duplicate
# Live memories near a new one (as learning + context) whose learnings are compared alone.
_SAME_LEARNING_CANDIDATES = 20
_USEFUL_STEP = 0.1
_DEFAULT_USEFULNESS = 0.5


_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(fn: _F) -> _F:
    """Run a read-modify-write of memory files under the repo's memory lock (ncx.locks):
    concurrent evolves all count, and a racing add sees the other add's memory."""

    @functools.wraps(fn)
    def wrapper(root: Path, *args: Any, **kwargs: Any) -> Any:
        with exclusive(root):
            return fn(root, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class MemoryNotFound(NcxError):
    """No memory file with that id."""


class SecretRefused(NcxError):
    """Text that would become a memory holds a credential-shaped value."""

    def __init__(self, where: str, findings: Sequence[SecretFinding]):
        lines = "; ".join(f"{where} line {f.line}, column {f.column}: {f.reason}" for f in findings)
        super().__init__(
            f"refused: {lines}",
            hint="secrets never enter memory; remove the value (name the variable that holds it "
            "instead) and run the command again",
        )
        self.findings = tuple(findings)


class DuplicateMemory(NcxError):
    """A near-duplicate of an existing memory."""

    def __init__(self, existing: str, similarity: float, path: Path, *, same: bool = False):
        what = "already remembered as" if same else "a near-duplicate of"
        super().__init__(
            f"refused: this is {what} {existing} (cosine {similarity:.2f})",
            path=path,
            hint=f"evolve the existing memory instead (`ncx memory evolve {existing} --useful` or "
            f'`--incorrect "..."`), or add it anyway with --force',
        )
        self.existing = existing
        self.similarity = similarity


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What a caller asks to remember; validated by `add_memory`."""

    learning: str
    context: str = ""
    type: str = "factual"
    domain: str | None = None
    confidence: str = "medium"
    keywords: tuple[str, ...] = ()
    source_task: str | None = None
    related_docs: tuple[str, ...] = ()
    status: str = "active"
    provenance: str | None = None


@dataclass(frozen=True, slots=True)
class Related:
    id: str
    kind: str  # "memory" or "chunk"
    similarity: float
    label: str  # what the `## Related` line shows


@dataclass(frozen=True, slots=True)
class Added:
    memory: Memory
    written: tuple[str, ...]  # repo-relative paths
    related: tuple[Related, ...]


@dataclass(frozen=True, slots=True)
class Skipped:
    """A proposal `extract` did not write, and why."""

    source_lines: tuple[int, int]
    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class Extracted:
    added: tuple[Added, ...]
    skipped: tuple[Skipped, ...] = field(default_factory=tuple)


# --- model and vectors ------------------------------------------------------------------------


def load_tree_model(root: Path, cfg: Config) -> Embedder:
    """The model that built this tree: a memory embedded by another would not be comparable."""
    from ncx.embedder import load_tree_model as load

    return load(root, load_manifest(root).model, cfg.model, cfg.model_cache)


def _related(neighbours: Iterable[tuple[Near, float]], skip: str) -> tuple[Related, ...]:
    found: list[Related] = []
    for unit, sim in neighbours:
        if len(found) >= RELATED_MAX or sim < RELATED_COS:
            break
        if unit.id == skip or unit.status in ("superseded", "deprecated"):
            continue
        if unit.kind == "chunk":
            trail = " > ".join(unit.section or [])
            label = unit.source_path + (f" § {trail}" if trail else "")
        else:
            label = unit.id
        found.append(Related(unit.id, unit.kind, round(sim, 2), label))
    return tuple(found)


def _related_lines(related: Sequence[Related]) -> tuple[str, ...]:
    return tuple(f"- {r.label} ({r.similarity:.2f})" for r in related)


# --- checks -----------------------------------------------------------------------------------


def guard_secrets(**texts: str) -> None:
    """Raise SecretRefused for the first text (by keyword name) holding a secret."""
    for where, text in texts.items():
        findings = find_secrets(text)
        if findings:
            raise SecretRefused(where, findings)


# A memory is one learning and its context. The cap sits well above long pasted notes
# (a 200 KB file of notes is accepted) and below what would make every retrieve read and
# tokenize megabytes (MCP `remember` once accepted a 10 MB learning); store.MAX_UNIT_BYTES,
# the most a unit file may hold, leaves room for the frontmatter.
MAX_MEMORY_BYTES = 1_000_000


def _validate(new: NewMemory) -> None:
    if not new.learning.strip():
        raise UsageError("the learning is empty", hint="give the text to remember")
    size = len(new.learning.encode("utf-8", "replace")) + len(
        new.context.encode("utf-8", "replace")
    )
    if size > MAX_MEMORY_BYTES:
        raise UsageError(
            f"the learning and context are {size:,} bytes, over the "
            f"{MAX_MEMORY_BYTES:,} a memory may hold",
            hint="a memory is one learning: keep the point, and put a long text in a doc",
        )
    for name, value, allowed in (
        ("type", new.type, TYPES),
        ("confidence", new.confidence, CONFIDENCES),
        ("status", new.status, STATUSES),
    ):
        if value not in allowed:
            raise UsageError(f"unknown {name} {value!r}", hint=f"use one of {', '.join(allowed)}")


def _clean_keywords(keywords: Iterable[str]) -> list[str]:
    out: list[str] = []
    for k in keywords:
        for part in k.split(","):
            word = part.strip()
            if word and word not in out:
                out.append(word)
    return out


# --- add --------------------------------------------------------------------------------------


@_locked
def add_memory(
    root: Path,
    new: NewMemory,
    *,
    embedder: Embedder,
    neighbours: Neighbours,
    today: date,
    force: bool = False,
) -> Added:
    """Write a new memory; refuse secrets always and near-duplicates unless `force`
    (near: what `neighbours` finds in the search cache)."""
    _validate(new)
    # every free-text field that ends up in the committed file, not only the learning
    guard_secrets(
        learning=new.learning,
        context=new.context,
        keywords=" ".join(new.keywords),
        domain=new.domain or "",
        source_task=new.source_task or "",
        related_docs="\n".join(new.related_docs),
        provenance=new.provenance or "",
    )
    load_manifest(root)  # a clear "run ncx init" before any work
    learning, context = new.learning.strip(), new.context.strip()
    mid = new_memory_id(learning, context, today)
    path = memory_path(root, mid)
    if path.exists():
        raise DuplicateMemory(mid, 1.0, path.relative_to(root), same=True)
    vec = embedder.embed([_embed_text(learning, context)])[0]
    # Both uses below stop at their own threshold.
    near = neighbours(root, vec, min(DUPLICATE_COS, RELATED_COS))
    if not force:
        _refuse_duplicate(root, learning, near, embedder)
    related = _related(near, mid)
    meta: dict[str, Any] = {
        "id": mid,
        "type": new.type,
        "domain": new.domain,
        "confidence": new.confidence,
        "status": new.status,
        "keywords": _clean_keywords(new.keywords),
        "source_task": new.source_task,
        "related_docs": list(new.related_docs),
        "related": [{"id": r.id, "similarity": r.similarity} for r in related],
        "created": today,
        "updated": today,
        "verified": None,
        "superseded_by": None,
        "usefulness": _DEFAULT_USEFULNESS,
    }
    if new.provenance:
        meta["provenance"] = new.provenance
    _record_cites(root, meta, learning, context)
    memory = Memory(mid, learning, context, meta, _related_lines(related))
    written = write_memory(root, memory, vec)
    return Added(memory, tuple(p.relative_to(root).as_posix() for p in written), related)


def _refuse_duplicate(
    root: Path, learning: str, neighbours: Sequence[tuple[Near, float]], embedder: Embedder
) -> None:
    """DuplicateMemory when a live memory holds the same learning. Judged on the learning
    itself: the same fact saved with another context (two sessions, two tasks) scored 0.87
    as learning + context, under DUPLICATE_COS. Neighbours of that vector (>= RELATED_COS)
    are the candidates; their learnings alone are compared, text first, then by cosine."""
    import numpy as np

    mine: Any = None
    candidates = 0
    for unit, sim in neighbours:
        if unit.kind != "memory" or (unit.status or "active") not in _LIVE:
            continue
        if sim >= DUPLICATE_COS:
            raise DuplicateMemory(unit.id, sim, Path(unit.file))
        candidates += 1
        if candidates > _SAME_LEARNING_CANDIDATES:
            break
        try:
            other = read_memory(root / unit.file).learning
        except (NcxError, OSError):
            continue  # a broken file is `ncx check`'s to report, not a reason to refuse
        if _words(other) == _words(learning):
            raise DuplicateMemory(unit.id, 1.0, Path(unit.file), same=True)
        if mine is None:
            mine = embedder.embed([_embed_text(learning, "")])[0]
        theirs = embedder.embed([_embed_text(other, "")])[0]
        same = float(np.dot(mine, theirs)) / (
            float(np.linalg.norm(mine) * np.linalg.norm(theirs)) or 1.0
        )
        if same >= DUPLICATE_COS:
            raise DuplicateMemory(unit.id, same, Path(unit.file))


def _words(text: str) -> list[str]:
    """A learning's words, case and punctuation aside: the same fact typed twice."""
    return re.findall(r"\w+", text.casefold())


def _embed_text(learning: str, context: str) -> str:
    # Exactly what sync embeds for this file, so `ncx sync` never re-embeds a fresh memory.
    return memory_embed_text(render_body(learning, context, ()))


# --- lookup -----------------------------------------------------------------------------------


def find_memory(root: Path, ref: str) -> Path:
    """A memory's file from its full id or a unique part of it (the 6-letter suffix)."""
    ref = memory_ref(ref)  # an id, never a path: `../../README` is refused before any join
    folder = memories_dir(root)
    exact = memory_path(root, ref)
    if exact.is_file():
        return exact
    matches = sorted(folder.glob(f"*{ref}*.md")) if ref and folder.is_dir() else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(p.stem for p in matches[:5])
        raise UsageError(
            f"{ref!r} matches {len(matches)} memories: {names}", hint="give more of the id"
        )
    load_manifest(root)
    raise MemoryNotFound(
        f"no memory {ref!r}", path=folder.relative_to(root), hint="see `ncx memory list`"
    )


def list_memories(root: Path) -> tuple[list[Memory], list[NcxError]]:
    """Every memory that parses, by id, and the errors of those that do not."""
    folder = memories_dir(root)
    out: list[Memory] = []
    problems: list[NcxError] = []
    for md in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        try:
            out.append(read_memory(md))
        except NcxError as exc:
            exc.path = md.relative_to(root).as_posix()
            problems.append(exc)
    return out, problems


def _rewrite(root: Path, path: Path, memory: Memory, meta: Mapping[str, Any]) -> str:
    """Write a memory whose Learning/Context did not change: the vector stays as it is."""
    updated = Memory(memory.id, memory.learning, memory.context, meta, memory.related_lines)
    check_write(root, path)
    write_atomic(path, render_memory(updated))
    return path.relative_to(root).as_posix()


# --- evolve -----------------------------------------------------------------------------------


@_locked
def mark_useful(root: Path, ref: str, *, today: date) -> list[str]:
    """Confirmed useful: usefulness +0.1 (max 1), confidence one step up, verified today."""
    path = find_memory(root, ref)
    mem = read_memory(path)
    meta = dict(mem.meta)
    useful = _number(meta.get("usefulness"), _DEFAULT_USEFULNESS)
    meta["usefulness"] = round(min(1.0, useful + _USEFUL_STEP), 2)
    meta["confidence"] = _step(meta.get("confidence"), +1)
    meta["verified"] = today
    meta["updated"] = today
    return [_rewrite(root, path, mem, meta)]


@_locked
def mark_incorrect(
    root: Path, ref: str, correction: str, *, embedder: Embedder, today: date
) -> list[str]:
    """Append a dated correction to the learning, lower confidence, re-embed."""
    if not correction.strip():
        raise UsageError("the correction is empty", hint='--incorrect "what is true instead"')
    if len(correction.encode("utf-8", "replace")) > MAX_MEMORY_BYTES:
        raise UsageError(f"the correction is over {MAX_MEMORY_BYTES:,} bytes")
    guard_secrets(correction=correction)
    path = find_memory(root, ref)
    mem = read_memory(path)
    learning = (
        f"{mem.learning.rstrip()}\n\n**Correction ({today.isoformat()}):** {correction.strip()}"
    )
    meta = dict(mem.meta)
    meta["confidence"] = _step(meta.get("confidence"), -1)
    meta["updated"] = today
    _record_cites(root, meta, learning, mem.context)  # corrected: cited as it is now
    updated = Memory(mem.id, learning, mem.context, meta, mem.related_lines)
    vec = embedder.embed([_embed_text(learning, mem.context.strip())])[0]
    written = write_memory(root, updated, vec)
    return [p.relative_to(root).as_posix() for p in written]


@_locked
def confirm(root: Path, ref: str, *, today: date) -> list[str]:
    """Still true as the cited code and docs are now: record the citations again (a stale
    memory is no longer flagged or ranked down), verified today. The text is unchanged, so
    the vector stays."""
    path = find_memory(root, ref)
    mem = read_memory(path)
    meta = dict(mem.meta)
    _record_cites(root, meta, mem.learning, mem.context)
    meta["verified"] = today
    meta["updated"] = today
    return [_rewrite(root, path, mem, meta)]


def _record_cites(root: Path, meta: dict[str, Any], learning: str, context: str) -> None:
    """Set `cites` to what the memory names, as the work tree has it (no key when none)."""
    from ncx.memory.cites import cites_meta, record

    docs = [str(d) for d in _as_list(meta.get("related_docs"))]
    found = cites_meta(record(root, f"{learning}\n\n{context}", docs))
    if found:
        meta["cites"] = found
    else:
        meta.pop("cites", None)


@_locked
def supersede(root: Path, old_ref: str, new_ref: str, *, today: date) -> list[str]:
    """Mark `old` superseded by `new` and link both ways; the only two files written."""
    old_path, new_path = find_memory(root, old_ref), find_memory(root, new_ref)
    if old_path == new_path:
        raise UsageError("a memory cannot supersede itself")
    old, new = read_memory(old_path), read_memory(new_path)
    if new.status in ("superseded", "deprecated"):
        raise UsageError(
            f"{new.id} is {new.status} itself", hint="supersede by a memory that is current"
        )
    old_meta = dict(old.meta)
    old_meta.update(status="superseded", superseded_by=new.id, updated=today)
    new_meta = dict(new.meta)
    supersedes = [str(s) for s in _as_list(new_meta.get("supersedes"))]
    if old.id not in supersedes:
        supersedes.append(old.id)
    new_meta["supersedes"] = supersedes
    new_meta["updated"] = today
    return [_rewrite(root, old_path, old, old_meta), _rewrite(root, new_path, new, new_meta)]


# --- review -----------------------------------------------------------------------------------


@_locked
def approve(root: Path, ref: str, *, today: date) -> list[str]:
    """A proposed memory becomes active (a one-line change a reviewer sees in the PR)."""
    path = find_memory(root, ref)
    mem = read_memory(path)
    if mem.status != "proposed":
        raise UsageError(f"{mem.id} is {mem.status}, not proposed; nothing to approve")
    # A proposal may have been edited by hand since it was added: approving is what makes it
    # served to every agent, so it is scanned again, whole (frontmatter and body).
    guard_secrets(**{mem.id: path.read_text(encoding="utf-8", errors="replace")})
    meta = dict(mem.meta)
    meta.update(status="active", updated=today)
    return [_rewrite(root, path, mem, meta)]


@_locked
def reject(root: Path, ref: str) -> list[str]:
    """Delete a proposed memory (an active one is removed with `remove`)."""
    path = find_memory(root, ref)
    mem = read_memory(path)
    if mem.status != "proposed":
        raise UsageError(
            f"{mem.id} is {mem.status}, not proposed",
            hint=f"use `ncx memory rm {mem.id}` to delete it",
        )
    return remove(root, mem.id)


@_locked
def remove(root: Path, ref: str) -> list[str]:
    path = find_memory(root, ref)
    check_write(root, path)
    return [p.relative_to(root).as_posix() for p in remove_unit(path)]


def referrers(root: Path, memory_id: str) -> list[str]:
    """Ids of memories that point at `memory_id` (superseded_by, supersedes, related)."""
    found, _ = list_memories(root)
    out = []
    for mem in found:
        links = {str(mem.meta.get("superseded_by") or "")}
        links.update(str(s) for s in _as_list(mem.meta.get("supersedes")))
        links.update(
            str(r.get("id")) for r in _as_list(mem.meta.get("related")) if isinstance(r, dict)
        )
        if memory_id in links and mem.id != memory_id:
            out.append(mem.id)
    return out


# --- extract ----------------------------------------------------------------------------------


def extract(
    root: Path,
    notes: str,
    *,
    embedder: Embedder,
    neighbours: Neighbours,
    today: date,
    auto_save: bool = False,
    source_task: str | None = None,
) -> Extracted:
    """Propose memories from session notes; write them as `proposed` (high-confidence ones as
    `active` with `auto_save`). Proposals holding a secret or repeating a memory are skipped."""
    from ncx.memory.extract import propose_memories

    added: list[Added] = []
    skipped: list[Skipped] = []
    for p in propose_memories(notes):
        active = auto_save and p.confidence == "high"
        new = NewMemory(
            learning=p.text,
            context=_without_secret_lines(p.context),
            type=p.type,
            confidence=p.confidence,
            keywords=p.keywords,
            source_task=source_task,
            status="active" if active else "proposed",
            provenance=f"extract:{p.trigger}",
        )
        try:
            added.append(
                add_memory(root, new, embedder=embedder, neighbours=neighbours, today=today)
            )
        except SecretRefused as exc:
            skipped.append(
                Skipped(p.source_lines, p.text, _secret_reason(notes, p.source_lines, exc))
            )
        except DuplicateMemory as exc:
            skipped.append(Skipped(p.source_lines, p.text, f"already known as {exc.existing}"))
    return Extracted(tuple(added), tuple(skipped))


def _without_secret_lines(context: str) -> str:
    # The extractor quotes neighbouring note lines as context; a credential on one of them
    # must not cost the proposal itself, so that line is dropped (the learning is still checked).
    bad = {f.line for f in find_secrets(context)}
    return "\n".join(x for i, x in enumerate(context.split("\n"), 1) if i not in bad)


def _secret_reason(notes: str, span: tuple[int, int], exc: SecretRefused) -> str:
    """Say where in the notes the secret is (the proposal's own text is a cleaned copy)."""
    first, last = span
    lines = text_lines(notes)[first - 1 : last]
    found = find_secrets("\n".join(lines))
    if found:
        f = found[0]
        return f"holds a secret at line {first + f.line - 1}, column {f.column}: {f.reason}"
    f = exc.findings[0]
    return f"holds a secret (lines {first}-{last}): {f.reason}"


# --- small helpers ----------------------------------------------------------------------------


def _step(confidence: Any, by: int) -> str:
    levels = list(CONFIDENCES)  # low, medium, high
    i = levels.index(confidence) if confidence in levels else 1
    return levels[max(0, min(len(levels) - 1, i + by))]


def _number(value: Any, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def merged_votes(root: Path) -> list[str]:
    """After a merge commit (HEAD with two parents): the memories both sides confirmed
    useful (`evolve --useful`) in the very same way, counted twice. Two same-day votes
    make identical bytes on each branch, which git merges as one (0.6, not 0.7: it calls no
    merge driver when both sides agree); each such memory gets the other side's step again
    (capped at 1). Returns the files rewritten, repo-relative."""
    from ncx import repo
    from ncx.layout import MEMORIES, NCX_DIR
    from ncx.store import parse_frontmatter

    two = repo.git(root, "rev-parse", "--verify", "--quiet", "HEAD^2", check=False).strip()
    if not two:
        return []
    base = repo.git(root, "merge-base", "HEAD^1", "HEAD^2", check=False).decode().strip()
    if not base:
        return []
    prefix = f"{NCX_DIR}/{MEMORIES}/"

    def changed(rev: str) -> set[str]:
        out = repo.git(root, "diff", "--name-only", "-z", "--diff-filter=M", base, rev, "--")
        names = out.decode("utf-8", "surrogateescape").split("\0")
        return {p for p in names if p.startswith(prefix) and p.endswith(".md")}

    def blob(rev: str, path: str) -> bytes:
        return repo.git(root, "cat-file", "blob", f"{rev}:{path}", check=False)

    def useful(data: bytes, path: str) -> float | None:
        try:
            meta, _body, _ = parse_frontmatter(data.decode("utf-8", "replace"), path=path)
        except NcxError:
            return None
        value = meta.get("usefulness")
        return float(value) if isinstance(value, int | float) else None

    written = []
    for path in sorted(changed("HEAD^1") & changed("HEAD^2")):
        ours = blob("HEAD^1", path)
        if ours != blob("HEAD^2", path) or blob("HEAD", path) != ours:
            continue  # the sides differ, or the merge result was edited: not one vote twice
        before, after = useful(blob(base, path), path), useful(ours, path)
        if before is None or after is None or after <= before:
            continue
        file = root / path
        mem = read_memory(file)
        meta = dict(mem.meta)
        meta["usefulness"] = round(min(1.0, after + (after - before)), 2)
        written.append(_rewrite(root, file, mem, meta))
    return written
