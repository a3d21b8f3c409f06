"""build: the search cache made from the unit files — a doc's chunk file or a memory
parsed into units, their BM25F terms, vectors and line ranges (ncx.query.lines), laid out
in walk order; files unchanged since the previous cache keep their rows, vectors and
postings (docs/decisions.md §22). The whole cost of a cold cache (a fresh clone, a new
model), so the parsing is spread over worker processes on a large tree.
"""

from __future__ import annotations

import io
import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.errors import NcxError
from ncx.layout import chunks_dir, memories_dir
from ncx.memory.text import body_sections, memory_embed_text
from ncx.query.docmeta import SIDECAR_KEYS, meta_text
from ncx.query.fresh import CACHE_VERSION, _stat_str, chunk_dirs, lex_params, signature
from ncx.query.lexical import (
    Postings,
    index_of,
    patched,
    path_words,
    postings,
    split_code,
    terms,
)
from ncx.query.lines import attach_lines
from ncx.query.units import COLUMNS, Index, Unit, Units
from ncx.sources.roles import without_link_targets
from ncx.store import (
    decode_source,
    inline_vec,
    is_temp,
    parse_frontmatter,
    parse_simple_frontmatter,
    read_chunk_file,
    read_regular,
    read_unit,
    split_chunk_file,
    usable_vec,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


_STORED = ("prose", "code", "trail", "meta")  # title and path terms are cheap to redo per source


@dataclass
class _Previous:
    """The old cache: what a build reuses for the files that did not change."""

    model: str | None
    units: Units
    stats: dict[str, str]
    vectors: Any  # (dim, n) float16, as stored
    postings: Postings


def _build(root: Path, prev: _Previous | None = None) -> tuple[dict[str, Any], Index]:
    """Build the cache (its npz members, and the index they hold). Files (a doc's chunk
    file, a memory) whose stat did not change since `prev` keep their units, vectors and
    postings; only the others are parsed, so a sync that touched one doc costs one doc's
    parsing, and the index arrays are patched in array work (docs/decisions.md §22)."""
    from ncx.parallel import no_collector

    with no_collector():
        return _build_now(root, prev)


def _build_now(root: Path, prev: _Previous | None) -> tuple[dict[str, Any], Index]:
    import numpy as np

    from ncx.manifest import load_manifest

    manifest = load_manifest(root)
    dim = int(manifest.model.get("dim", 0))
    seen: dict[str, str] = {}  # repo-relative path -> its stat now: each file stat'ed once
    base = str(root)

    def stat_now(rel: str) -> str:
        got = seen.get(rel)
        if got is None:
            got = seen[rel] = _stat_str(os.path.join(base, rel))
        return got

    if prev is not None and (
        prev.model != manifest.model.get("sha256") or len(prev.vectors) != dim
    ):
        prev = None  # another model (or a damaged file): every vector is another
    old = prev.units if prev else Units([], {c: [] for c in COLUMNS})
    old_kind, old_source = old.column("kind"), old.column("source_path")
    reuse: dict[str, list[int]] = {}  # unit file -> its old unit rows
    for i, f in enumerate(old.column("file")):
        reuse.setdefault(f, []).append(i)
    # A chunk file is reused when neither it nor its source changed: what the cache reads
    # from the source (line ranges, frontmatter values) may have moved with an edit not yet
    # synced, and such a file is parsed again (one doc's work).
    reuse = {
        k: v
        for k, v in reuse.items()
        if prev is not None
        and prev.stats.get(k) == stat_now(k)
        and (
            old_kind[v[0]] != "chunk"
            or prev.stats.get(old_source[v[0]]) == stat_now(old_source[v[0]])
        )
    }

    # Walk first, parse after: the files to read fresh are parsed in one batch (in worker
    # processes when there are many), then laid out in walk order with the reused ones. A
    # worker also finds its chunks' line ranges: it has their bodies at hand, and reading
    # each source there spreads that cost over the CPUs as well.
    plan: list[tuple[str, Any]] = []  # ("old", rows) | ("new", (kind, files))
    stats: dict[str, str] = {}
    for dirpath, dirs, names in os.walk(chunks_dir(root)) if _owned(root, chunks_dir(root)) else ():
        dirs.sort()
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        for name in sorted(names):
            if not name.endswith(".md") or is_temp(name):
                continue
            rel = f"{rel_dir}/{name}"
            stats[rel] = stat_now(rel)
            if rel in reuse:
                plan.append(("old", reuse[rel]))
            else:
                plan.append(("new", ("chunk", [os.path.join(dirpath, name)])))
    mem = memories_dir(root)
    if mem.is_dir() and _owned(root, mem):
        for md in sorted(mem.glob("*.md")):
            rel = md.relative_to(root).as_posix()
            stats[rel] = stat_now(rel)
            if rel in reuse:
                plan.append(("old", reuse[rel]))
            else:
                plan.append(("new", ("memory", [str(md)])))
    parsed = _parse_plan(root, plan, old, dim)

    lines: list[str] = []  # the units' rows as stored
    columns: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    old_columns = [(columns[c], old.column(c)) for c in COLUMNS]
    rows = np.full(len(old), -1, dtype=np.int64)  # old row -> new row
    fresh: list[tuple[int, Unit, tuple[list[str], ...], Any]] = []  # row, unit, stored terms, vec
    for k, (what, job) in enumerate(plan):
        if what == "old":  # kept as stored: neither decoded nor encoded again
            rows[job] = np.arange(len(lines), len(lines) + len(job))
            lines.extend(old.row(i) for i in job)
            for now, was in old_columns:
                now.extend(was[i] for i in job)
            continue
        for got in parsed[k]:
            if got is not None:  # else `ncx check` reports it; retrieval works with the rest
                fresh.append((len(lines), *got))
                lines.append(json.dumps(got[0].to_json()))
                for c in COLUMNS:
                    columns[c].append(getattr(got[0], c))
    held: list[str | Unit] = list(lines)
    for row, unit, _stored, _vec in fresh:
        held[row] = unit  # at hand: not decoded again
    units = Units(held, columns)

    field_terms = _unit_terms([(unit, stored) for _, unit, stored, _ in fresh])
    added = [(f[0], ft) for f, ft in zip(fresh, field_terms, strict=True)]
    post = patched(prev.postings, rows, added) if prev else postings([ft for _, ft in added])
    lex = index_of(post)
    vectors = np.zeros((dim, len(units)), dtype=np.float16)  # (dim, n): see Index.vectors
    if prev is not None and (rows >= 0).any():
        vectors[:, rows[rows >= 0]] = prev.vectors[:, rows >= 0]
    for row, _unit, _stored, vec in fresh:
        if vec is not None:
            vectors[:, row] = vec
    group = _groups(units)

    chunks = zip(columns["kind"], columns["source_path"], strict=True)
    sources = sorted({s for k, s in chunks if k == "chunk"})
    for src in sources:
        stats[src] = stat_now(src)
    dirs = chunk_dirs(root)
    head = {
        "version": CACHE_VERSION,
        "lex": lex_params(),
        "model": manifest.model.get("sha256"),
        "sources": sources,
        "dirs": dirs,
        "signature": signature(root, sources, dirs),
    }
    members = {
        "head": np.frombuffer(json.dumps(head).encode(), dtype=np.uint8),
        "units": np.frombuffer("\n".join(lines).encode(), dtype=np.uint8),
        "columns": np.frombuffer(json.dumps(columns).encode(), dtype=np.uint8),
        "stats": np.frombuffer(json.dumps(stats).encode(), dtype=np.uint8),
        "vocab": np.frombuffer("\n".join(post.vocab).encode(), dtype=np.uint8),
        "indptr": lex.indptr,
        "indices": lex.indices,
        "data": lex.data,
        "idf": lex.idf,
        "vectors": vectors,
        "group": group,
        "p_ptr": post.ptr,
        "p_seg": post.seg,
        "p_count": post.count,
        "p_lens": post.lens,
    }
    return members, Index(units, vectors.astype(np.float32).T, lex, group, root)


def _parse_plan(
    root: Path, plan: list[tuple[str, Any]], old: Units, dim: int
) -> dict[int, list[_Parsed | None]]:
    """Parse the plan's new files, {its place in the plan: their units}. A doc's title is a
    field of every unit of the doc, so a doc any of whose units is parsed afresh (or gone)
    is parsed afresh whole: its reused files join the batch (with one chunk file per doc,
    format 2, there are none)."""
    new = [k for k, (what, _) in enumerate(plan) if what == "new"]
    parsed = dict(zip(new, _parse_many(str(root), [plan[k][1] for k in new], dim), strict=True))
    kind, source, file = old.column("kind"), old.column("source_path"), old.column("file")
    kept = {i for what, job in plan if what == "old" for i in job}
    touched = {
        got[0].source_path
        for units in parsed.values()
        for got in units
        if got is not None and got[0].kind == "chunk"
    } | {
        s
        for i, (k, s) in enumerate(zip(kind, source, strict=True))
        if k == "chunk" and i not in kept
    }
    redo = [
        k
        for k, (what, job) in enumerate(plan)
        if what == "old" and kind[job[0]] == "chunk" and source[job[0]] in touched
    ]
    for k in redo:
        plan[k] = ("new", ("chunk", [str(root / file[plan[k][1][0]])]))
    if redo:
        again = _parse_many(str(root), [plan[k][1] for k in redo], dim)
        parsed.update(zip(redo, again, strict=True))
    return parsed


def _unit_terms(fresh: list[tuple[Unit, tuple[list[str], ...]]]) -> list[dict[str, list[str]]]:
    """The BM25F field terms of parsed units: their stored fields, and for a chunk its doc's
    title (the doc's first heading: all of a doc's units are parsed together) and path."""
    titles: dict[str, str] = {}
    for u, _ in fresh:
        if u.kind == "chunk" and u.section and u.source_path not in titles:
            titles[u.source_path] = u.section[0]
    memo: dict[str, list[str]] = {}

    def cached_terms(text: str) -> list[str]:
        if text not in memo:
            memo[text] = terms(text)
        return memo[text]

    out = []
    for u, stored in fresh:
        ft = dict(zip(_STORED, stored, strict=True))
        if u.kind == "chunk":
            ft["title"] = cached_terms(titles.get(u.source_path, ""))
            ft["path"] = cached_terms(path_words(u.source_path))
        else:
            ft["title"], ft["path"] = [], []
        out.append(ft)
    return out


def _groups(units: Sequence[Unit]) -> NDArray[np.int32]:
    """The doc group of each unit: the units of a doc share one; a memory is alone."""
    import numpy as np

    if not isinstance(units, Units):
        units = Units.of(list(units))
    paths = zip(
        units.column("kind"), units.column("source_path"), units.column("file"), strict=True
    )
    groups: dict[str, int] = {}
    keys = ("doc:" + s if k == "chunk" else "mem:" + f for k, s, f in paths)
    return np.fromiter((groups.setdefault(k, len(groups)) for k in keys), dtype=np.int32)


def _owned(root: Path, folder: Path) -> bool:
    """`folder` really lies inside .neocortex/ inside the repo: a chunks/ or memories/
    folder linked elsewhere is never indexed (nor served)."""
    from ncx.layout import ncx_dir
    from ncx.paths import is_within

    return is_within(folder, ncx_dir(root)) and is_within(ncx_dir(root), root)


# Bytes of unit files to parse (about 3,000 chunks with their vectors); below this,
# starting worker processes costs more than it saves.
_PARALLEL_FROM = 6_000_000


_Parsed = tuple[Unit, tuple[list[str], ...], Any]  # unit, stored fields' terms (_STORED), vector


def _parse_many(
    root: str, jobs: list[tuple[str, list[str]]], dim: int
) -> list[list[_Parsed | None]]:
    """Parse unit files, extract their index terms and find chunks' line ranges, job by job
    (a doc's chunk file, or one memory), in order: that is the whole cost of a cold cache
    (a fresh clone, a new model), so on a large tree it is spread over the CPUs."""
    import functools

    from ncx.parallel import ordered_map

    size = sum(_size(f) for _kind, files in jobs for f in files)
    at_least = len(jobs) if size >= _PARALLEL_FROM else len(jobs) + 1
    gate = f"{os.getpid()}.{time.monotonic_ns()}"  # this build's, in every worker (lines._gate)
    job = functools.partial(_parse_job, root, dim, gate=gate)
    return ordered_map(job, jobs, at_least=at_least)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _parse_job(
    root: str,
    dim: int,
    job: tuple[str, list[str]],
    *,
    gate: str | None = None,
) -> list[_Parsed | None]:
    """The units of one job (a doc's chunk file, or memory files): metadata with line
    ranges, stored term fields and vectors. `gate`: the build's key for the included files'
    gate (ncx.query.lines)."""
    kind, files = job
    base = Path(root)
    found = [p for path in files for p in _parse_file(base, path, kind, dim)]
    units = [p[0] for p in found if p is not None]
    # The source is read for line ranges; its frontmatter values are taken on the way.
    front: dict[str, str] = {}
    if kind == "chunk":
        front = attach_lines(base, units, [p[3] for p in found if p is not None], gate)
    out: list[_Parsed | None] = []
    for parsed in found:
        if parsed is None:
            out.append(None)
            continue
        unit, fields, vec, _body = parsed
        extra = front.get(unit.source_path)
        if extra:
            fields["meta"] = f"{fields['meta']}\n{extra}"
        # the term lists themselves: pickled, a term met again is a back-reference, and the
        # main process no longer splits a joined string per field (§71)
        out.append((unit, tuple(terms(fields[f]) for f in _STORED), vec))
    return out


def _parse_file(
    root: Path, path: str, kind: str, dim: int
) -> list[tuple[Unit, dict[str, str], Any, str] | None]:
    """(unit metadata, field texts, vector, body) of each unit of a file; None for one that
    cannot be read (a hand edit made a field unusable: `ncx check` names it)."""
    rel = Path(path).relative_to(root).as_posix()
    if kind == "memory":
        try:
            meta, body = read_unit(Path(path))
            if _holds_secret(meta, body):
                # A hand edit put a credential in a memory: never served (`ncx check` names
                # it; `memory add` and `approve` refuse one).
                return [None]
            return [_unit_fields(rel, kind, meta, body, _vector(Path(path[:-3] + ".npy"), dim))]
        except (NcxError, ValueError, TypeError, OverflowError):
            return [None]
    try:
        found = split_chunk_file(read_chunk_file(path), path=rel)
    except NcxError:
        return [None]
    out: list[tuple[Unit, dict[str, str], Any, str] | None] = []
    starts = [0]
    for b in found:
        starts.append(starts[-1] + len(b))
    for i in range(len(found)):
        try:
            got = _own_block(found[i]) if _FAST_BLOCKS else None
            if got is None:  # not as sync writes it: read as any markdown with frontmatter
                meta, body, _ = parse_frontmatter(decode_source(found[i], path=rel), path=rel)
                b64 = inline_vec(found[i])
            else:
                meta, body, b64 = got
            vec = None if b64 is None else usable_vec(b64, dim)
            parsed = _unit_fields(rel, kind, meta, body, vec)
        except (NcxError, ValueError, TypeError, OverflowError, IndexError):
            out.append(None)
            continue
        parsed[0].block, parsed[0].at, parsed[0].size = i, starts[i], len(found[i])
        out.append(parsed)
    return out


_FAST_BLOCKS = True  # off in the test that compares both readers' caches byte for byte


def _own_block(block: bytes) -> tuple[dict[str, Any], str, bytes | None] | None:
    """(metadata, body, vector base64) of a chunk block as `ncx sync` writes it, read the
    way decode_source + parse_frontmatter + inline_vec read it, without their passes over
    the whole block; None for anything else (they read it, and say what is wrong).

    On a cold build these were a third of the parsing: the block decoded and split into
    lines to its end to find a head of a dozen lines, and the head's `vec:` line (a long
    base64 value, unique per chunk) run through the scalar checks and their memo, whose
    room it took from the keywords and headings that recur."""
    if not block.startswith(b"---\n") or b"\r" in block or b"\x00" in block:
        return None  # (CR and NUL: decode_source's rules; the generic path applies them)
    end = block.find(b"\n---\n", 3)
    if end < 0 or b"\n...\n" in block[: end + 1]:
        return None  # (a "..." line ends a YAML head too)
    try:
        head = block[4:end].decode("utf-8")
        body = block[end + 5 :].decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = head.split("\n")
    b64 = None
    if lines and lines[-1].startswith("vec: f16:"):  # the writer's last key (with_inline_vec)
        m = _VEC_VALUE.match(lines[-1])
        if m is None:
            return None
        b64 = m.group(1).encode()
        lines.pop()
    if any(line.startswith("vec:") for line in lines):
        return None
    meta = parse_simple_frontmatter("\n".join(lines))
    if meta is None:
        return None
    return meta, body, b64


_VEC_VALUE = re.compile(r"vec: f16:([A-Za-z0-9+/=]*)\Z")


def _holds_secret(meta: dict[str, Any], body: str) -> bool:
    from ncx.secrets import find_secrets

    return bool(find_secrets(body) or find_secrets(json.dumps(meta, default=str)))


def _text(v: Any) -> str | None:
    return None if v is None else str(v)


def _unit_fields(
    rel: str, kind: str, meta: dict[str, Any], body: str, vec: Any
) -> tuple[Unit, dict[str, str], Any, str]:
    # Every value is coerced to the JSON type the index stores: a YAML date or list where a
    # string belongs must not break the whole cache.
    unit = Unit(
        id=str(meta.get("id") or rel),
        kind=kind,
        file=rel,
        tokens=int(meta.get("tokens") or 0),
        domain=_text(meta.get("domain")),
    )
    if kind == "chunk":
        trail = [str(t) for t in meta.get("source_section") or []]
        unit.source_path = str(meta.get("source_path") or "")
        unit.section = trail
        unit.doc_id = _text(meta.get("source_doc"))
        prose, code = split_code(without_link_targets(body))
        # A sidecar's values are in the block (the doc's own frontmatter is read from the
        # source by ncx.query.lines.attach_lines).
        side = {k: meta[k] for k in SIDECAR_KEYS if k in meta} if meta.get("sidecar") else {}
        fields = {
            "prose": prose,
            "code": code,
            "trail": " ".join(trail),
            "meta": meta_text(side, trail[:1]),
        }
        return unit, fields, vec, body
    sections = body_sections(body)
    learning = sections.get("learning", body)
    unit.source_path = rel
    unit.status = str(meta.get("status") or "active")
    unit.type = _text(meta.get("type"))
    unit.confidence = _text(meta.get("confidence"))
    unit.updated = str(meta.get("updated") or meta.get("created") or "")
    unit.usefulness = _float(meta.get("usefulness"))
    unit.keywords = [str(k) for k in meta.get("keywords") or []]
    if not unit.tokens:
        from ncx.tokens import count_tokens

        unit.tokens = count_tokens(learning)
    # Indexed as it is embedded: Learning and Context, never the derived Related list.
    text = memory_embed_text(body)
    return (
        unit,
        {"prose": text, "code": "", "trail": " ".join(unit.keywords), "meta": ""},
        vec,
        body,
    )


def _float(v: Any) -> float | None:
    try:
        return None if v is None else float(v)
    except (TypeError, ValueError):
        return None


def _vector(npy: Path, dim: int) -> Any:
    """A unit's vector, or None. A file with the exact header numpy writes for the model's
    vectors (what ncx writes) is read directly; any other goes through np.load."""
    import numpy as np

    from ncx.store import npy_headers

    try:
        data = read_regular(npy)
    except OSError:
        return None
    for header, (descr, size) in npy_headers(dim).items():
        if data.startswith(header) and len(data) == size:
            v = np.frombuffer(data, dtype=descr, offset=len(header))
            return v if np.isfinite(v).all() else None
    try:
        v = np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if v.shape != (dim,) or v.dtype.kind != "f" or not np.isfinite(v).all():
        return None  # NaN/inf would poison every score it touches
    return v
