"""index: the derived, untracked cache under .neocortex/cache/ — vectors, BM25F arrays,
unit metadata and each chunk's current line range in its source.

Rebuilt when a cheap signature changes (mtimes of chunk folders, memory files, sources
and the manifest), under a lock, written to a temp file and renamed into place, so two
ncx processes never see a half-written cache. A missing or corrupt cache is rebuilt.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from ncx.errors import NcxError
from ncx.layout import cache_dir, chunks_dir, manifest_path, memories_dir
from ncx.memory.file import body_sections, memory_embed_text
from ncx.paths import UnsafePath, cache_file, cache_folder
from ncx.query.docmeta import SIDECAR_KEYS, meta_text
from ncx.query.lexical import (
    FIELDS,
    LexIndex,
    Postings,
    index_of,
    patched,
    path_words,
    postings,
    split_code,
    terms,
)
from ncx.query.lines import attach_lines
from ncx.slow import slow
from ncx.sources.roles import without_link_targets
from ncx.store import (
    decode_source,
    inline_vec,
    is_temp,
    open_lock,
    open_regular,
    parse_frontmatter,
    parse_simple_frontmatter,
    read_chunk_file,
    read_regular,
    read_unit,
    split_chunk_file,
    split_frontmatter,
    usable_vec,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# 14: link targets not indexed; 13: a chunk's doc date (Unit.dated); 12: ß folded to "ss"
# in terms; 10: combining marks in terms; 9: terms of any script; 8: postings, rows +
# columns; 7: vectors (dim, n)
CACHE_VERSION = 14
_FILE = "index.npz"


@dataclass
class Unit:
    """One row of the cache, a chunk or a memory: what ranking, frames and memory ops read.

    Mutable only while the cache is being built (line ranges are attached last)."""

    id: str
    kind: str  # "chunk" or "memory"
    file: str  # its .md, repo-relative (a chunk: its doc's chunk file)
    block: int = 0  # a chunk's place among the blocks of its file
    at: int = -1  # ... and its bytes there, [at, at + size): its body is read without a split
    size: int = 0
    tokens: int = 0
    domain: str | None = None
    source_path: str = ""  # a chunk's source doc; a memory's own file
    section: list[str] = field(default_factory=list)  # a chunk's heading trail
    doc_id: str | None = None
    start_line: int | None = None  # current line range in the source (read time, not stored)
    end_line: int | None = None
    cell: str | None = None  # notebook cell(s), e.g. "7" or "7-9"
    status: str | None = None  # memories: active, proposed, superseded, deprecated
    type: str | None = None
    confidence: str | None = None
    updated: str = ""
    usefulness: float | None = None
    keywords: list[str] = field(default_factory=list)
    dated: str | None = None  # a chunk's doc's frontmatter date, as written (docmeta.doc_date)

    def to_json(self) -> dict[str, Any]:
        # Not dataclasses.asdict: its recursive deep copy was 4 s of a 40k-unit cold build.
        # A unit's attributes are its fields, set in field order by __init__ or adopted from
        # its cache row (_units): a shallow copy of them is its row, 10x cheaper than a
        # getattr per field.
        return dict(self.__dict__)


_UNIT_FIELDS = tuple(f.name for f in dataclasses.fields(Unit))
# A row is a unit's fields in field order (Unit.to_json): where its heading trail stands.
_SECTION_KEY = '"section": '
_AFTER_SECTION_KEY = f'"{_UNIT_FIELDS[_UNIT_FIELDS.index("section") + 1]}": '
_UNIT_KEYS = frozenset(_UNIT_FIELDS)


# The fields kept as columns beside the rows: what filters, doc groups and the cache's reuse
# read of every unit. The rest of a unit is decoded from its row when it is first read.
COLUMNS = ("kind", "file", "source_path", "domain", "status")


class Units(Sequence[Unit]):
    """The units of a cache, each decoded from its stored JSON row when first read.

    A query reads a few hundred of 40,000 units; decoding them all was 0.4 s of every warm
    query on such a tree. What every unit is asked for (kind, status, domain, paths) is in
    `columns`. A read unit is kept, so changes to it (line ranges found late) stay."""

    def __init__(self, rows: list[str | Unit], columns: dict[str, list[Any]]) -> None:
        self._rows = rows  # a row's JSON text until it is read, then its Unit
        self._columns = columns

    @classmethod
    def of(cls, units: list[Unit]) -> Units:
        return cls(list(units), {c: [getattr(u, c) for u in units] for c in COLUMNS})

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> Unit: ...
    @overload
    def __getitem__(self, i: slice) -> list[Unit]: ...
    def __getitem__(self, i: int | slice) -> Unit | list[Unit]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        row = self._rows[i]
        if isinstance(row, str):
            row = self._rows[i] = _unit_of(json.loads(row))
        return row

    def __iter__(self) -> Iterator[Unit]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def column(self, name: str) -> list[Any]:
        """One field of every unit (a name in COLUMNS), without decoding a row."""
        return self._columns[name]

    def row(self, i: int) -> str:
        """Unit i's JSON row as stored (as it was read, for a unit read since)."""
        row = self._rows[i]
        return row if isinstance(row, str) else json.dumps(row.to_json())

    def unread(self, i: int) -> str | None:
        """Unit i's JSON row as stored while it has not been decoded, else None: a scan of
        every unit can look at the text and decode only the rows it needs."""
        row = self._rows[i]
        return row if isinstance(row, str) else None

    def unread_section(self, i: int) -> str | None:
        """The JSON text of unit i's heading trail in its undecoded row (between its key and
        the next field's, as rows are written; the whole row if they are not found), else
        None. The keys' quotes are found only as keys: inside a JSON string a quote is
        escaped."""
        row = self.unread(i)
        if row is None:
            return None
        at = row.find(_SECTION_KEY)
        end = row.find(_AFTER_SECTION_KEY, at) if at >= 0 else -1
        return row[at + len(_SECTION_KEY) : end] if end >= 0 else row


def _unit_of(row: dict[str, Any]) -> Unit:
    """A unit from its cache row: the row's dict is taken over as its attributes (20x
    cheaper than __init__) when it holds exactly the unit's fields."""
    if row.keys() == _UNIT_KEYS:
        unit = Unit.__new__(Unit)
        unit.__dict__ = row
        return unit
    return Unit(**{k: v for k, v in row.items() if k in _UNIT_KEYS})


@dataclass(frozen=True)
class Index:
    units: Sequence[Unit]  # one per row of the arrays (Units for a cache)
    # (n, dim), unit rows (zero rows for units with no vector), laid out column by column:
    # a query's cosines then read memory in order (10,916 units: 0.5 ms, not 1.1 ms).
    vectors: NDArray[np.float32]
    lex: LexIndex
    group: NDArray[np.int32]  # units of the same source doc share a group; memories are alone
    root: Path
    memo: dict[Any, Any] = field(default_factory=dict)  # per-process derived values (masks)

    def column(self, name: str) -> list[Any]:
        """One field (a name in COLUMNS) of every unit."""
        if isinstance(self.units, Units):
            return self.units.column(name)
        return [getattr(u, name) for u in self.units]

    def cosines(self, vec: Any) -> NDArray[np.float32]:
        """Cosine of every unit to a unit vector (rows are unit-length, or zero): the one
        dense similarity, for ranking and for related / near-duplicate memories."""
        import numpy as np

        q = np.asarray(vec, dtype=np.float32)
        # A frame searches twice with one query (chunks, then memories), `ncx eval` three
        # times: the last query's cosines are kept (a pass over every vector, ~17 ms on a
        # 34,000-unit tree); each caller gets its own copy (the ranking masks it in place).
        key = q.tobytes()
        last = self.memo.get("cosines")
        if last is None or last[0] != key:
            last = self.memo["cosines"] = (key, self.vectors @ q)
        out: NDArray[np.float32] = last[1].copy()
        return out

    def body(self, i: int) -> str:
        """The unit's markdown body, read from its file (only top results need it)."""
        return unit_body(self.root, self.units[i]).strip()

    def shown(self, i: int, body: str) -> str:
        """Unit i's body as a reader is shown it: a bare `:doc:` reference reads as its
        target's title (ncx.query.doclinks). Ranking reads the body as stored."""
        unit = self.units[i]
        if "](:" not in body or unit.kind != "chunk":
            return body
        from ncx.query.doclinks import resolve

        return resolve(body, unit.source_path, self.root, self.memo.setdefault("doc_titles", {}))


def unit_body(root: Path, unit: Unit) -> str:
    """A unit's markdown body, from its file ("" when it is gone or damaged)."""
    try:
        if unit.kind == "chunk":
            data = _block_bytes(root, unit)
        else:
            data = read_regular(root / unit.file)
    except (OSError, NcxError, IndexError):
        return ""
    # No YAML parse on the query path: only the text after the frontmatter is wanted.
    return split_frontmatter(data.decode("utf-8", "replace").replace("\r\n", "\n"))[1]


def load_index(root: Path, *, rebuild: bool = False, stale_ok: bool = False) -> Index:
    """The current cache, rebuilt first if stale, missing or corrupt (with `stale_ok`, an
    out-of-date cache is returned as it is; only a missing or corrupt one is rebuilt)."""
    path = cache_file(root, _FILE)
    if path.is_dir() and not path.is_symlink():  # (a link in its place: read as none, replaced)
        raise NcxError(
            "is not the cache file ncx writes (a folder)",
            path=path,
            hint="delete it (the cache is derived and rebuilt on the next query)",
        )
    if not rebuild:
        idx = _try_load(root, path, check=not stale_ok)
        if idx is not None:
            return idx
    if not cache_dir(root).parent.is_dir():
        # No tree here (a hook in a repository without ncx): fail before the lock below
        # creates .neocortex/cache/, an untracked folder in someone else's repository.
        from ncx.manifest import load_manifest

        load_manifest(root)
    with _lock(cache_folder(root)) as writable:
        if not rebuild and writable:  # another process may have rebuilt it while we waited
            idx = _try_load(root, path)
            if idx is not None:
                return idx
        prev = None if rebuild else _previous(path)
        # A fresh clone's first query pays for this (no quick answer: docs/decisions.md §44).
        what = "updating the search cache" if prev else "building the search cache (once a clone)"
        with slow(what):
            members, idx = _build(root, prev)
        if writable:
            _save(path, members)
    return idx


def _save(path: Path, members: dict[str, Any]) -> None:
    """Write the cache file (atomically); a disk that refuses it costs the next query a
    build, never this one its answer."""
    import numpy as np

    # A new name, made exclusively: a link committed at a predictable temp name is never
    # opened through (it could truncate the file it points to).
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        with open(tmp, "xb") as f:
            np.savez(f, **members)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


@contextlib.contextmanager
def _lock(folder: Path) -> Iterator[bool]:
    """Hold the cache's build lock; yields whether the cache folder can be written. A
    read-only .neocortex/ or cache/ (a CI checkout, a mounted volume) yields False and
    takes no lock: the cache is built in memory for this process and not saved."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        f = open_lock(folder / ".lock")  # (a link in its place is replaced, never followed)
    except OSError:
        yield False
        return
    with f:
        try:
            import fcntl

            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                # Another query (or a hook's warm) is building: wait for it and load what it
                # wrote (load_index), rather than build the same cache twice.
                with slow("waiting for the search cache another ncx process is building"):
                    fcntl.flock(f, fcntl.LOCK_EX)
        except ImportError:  # Windows: no flock; the atomic rename still protects readers
            pass
        yield True


def building(root: Path) -> bool:
    """Whether another process holds the cache's lock now (a build under way)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        lock = cache_file(root, ".lock")
        fd = os.open(
            lock, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        )
    except (OSError, UnsafePath):
        return False  # no lock file: nobody has built here yet
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # (closing releases a lock taken here)
    return False


def has_cache(root: Path) -> bool:
    """Whether a cache this ncx can use exists: a fresh clone has none, and one written by
    another version of ncx (or with other ranking settings) counts as none, since it cannot
    be served as it is (after an upgrade, a build as slow as a fresh clone's). An out-of-date
    one is brought up to date incrementally, which is cheap. Reads the small head member only."""
    try:
        path = cache_file(root, _FILE)
    except UnsafePath:
        return False  # (the build that follows names the link)
    return path.is_file() and _head_ok(root, check_tree=False)


def _try_load(root: Path, path: Path, *, check: bool = True) -> Index | None:
    import numpy as np

    try:
        z = np.load(open_regular(path, follow=False), allow_pickle=False)  # (nor a FIFO)
        if not _head_fits(root, _json(z, "head"), check_tree=check):
            return None  # the units are not even decoded
        units = _stored_units(z)
        vectors, group = _stored_vectors(z, len(units)), z["group"]
        if len(group) != len(units):
            return None  # damaged or foreign: rebuilt, not indexed out of bounds at query time
        lex = LexIndex(
            vocab={t: i for i, t in enumerate(_stored_vocab(z))},
            indptr=z["indptr"],
            indices=z["indices"],
            data=z["data"],
            idf=z["idf"],
            n_units=len(units),
        )
        return Index(units, vectors.astype(np.float32).T, lex, group, root)
    except (OSError, ValueError, KeyError, EOFError):
        return None  # missing or corrupt: rebuilt by the caller
    except Exception:  # zipfile.BadZipFile and friends from a torn file
        return None


def _json(z: Any, member: str) -> Any:
    return json.loads(bytes(z[member]).decode())


def _stored_units(z: Any) -> Units:
    """The `units` member: one JSON row per line (JSON text never holds a raw newline), so
    rows are split apart without decoding them, and a build keeps the rows of the units it
    reuses as they are; `columns` beside it."""
    text = bytes(z["units"]).decode()
    rows = list[str | Unit](text.split("\n")) if text else []
    columns = _json(z, "columns")
    if sorted(columns) != sorted(COLUMNS) or any(len(c) != len(rows) for c in columns.values()):
        raise ValueError("the cache's columns do not match its units")
    return Units(rows, columns)


def _stored_vocab(z: Any) -> list[str]:
    """The `vocab` member: term id -> term, one per line."""
    return bytes(z["vocab"]).decode().split("\n") if len(z["vocab"]) else []


def _stored_vectors(z: Any, n: int) -> Any:
    """The `vectors` member, (dim, n) as stored; ValueError when it does not fit the n units
    (a damaged or foreign file: rebuilt, not indexed out of bounds)."""
    vectors = z["vectors"]
    if vectors.ndim != 2 or vectors.shape[1] != n:
        raise ValueError("the cache's vectors do not match its units")
    return vectors


def lex_params() -> str:
    """The BM25F settings baked into the arrays: a cache built with others is rebuilt."""
    from ncx.query import lexical

    return json.dumps([lexical.FIELD_WEIGHTS, lexical.FIELD_B], sort_keys=True)


def cache_is_current(root: Path) -> bool:
    """Whether the cache exists and matches the tree (stat() only: no parse, no build)."""
    return _head_ok(root, check_tree=True)


def _head_ok(root: Path, *, check_tree: bool) -> bool:
    """Whether the cache file's head fits this ncx (and, `check_tree`, the tree as it is)."""
    import numpy as np

    try:
        z = np.load(open_regular(cache_file(root, _FILE), follow=False), allow_pickle=False)
        return _head_fits(root, _json(z, "head"), check_tree=check_tree)
    except Exception:  # missing, torn or foreign
        return False


def _head_fits(root: Path, head: dict[str, Any], *, check_tree: bool) -> bool:
    """This ncx's cache format and ranking settings, and (`check_tree`) the tree as it is.

    The head is a small member of its own: telling a stale cache from a current one does
    not decode the units (20 MB of JSON on a 40,000-unit tree)."""
    if head.get("version") != CACHE_VERSION or head.get("lex") != lex_params():
        return False
    return not check_tree or head.get("signature") == signature(root, head["sources"], head["dirs"])


def chunk_dirs(root: Path) -> list[str]:
    """Every folder under chunks/, repo-relative (listing them is the expensive part)."""
    out = []
    for dirpath, dirs, _names in os.walk(chunks_dir(root)):
        dirs.sort()
        out.append(Path(dirpath).relative_to(root).as_posix())
    return out


def signature(root: Path, sources: list[str], dirs: list[str]) -> str:
    """Cheap staleness check from stat() alone, no directory listing.

    ncx writes by rename, so any unit added, replaced or removed bumps its folder's mtime,
    and a new folder bumps its parent's; `dirs` are the folders seen at build time.
    """
    h = hashlib.sha1()
    h.update(_stat(manifest_path(root)))
    base = str(root)  # string joins: a Path per source was half of this on a large tree
    for d in dirs:
        h.update(d.encode() + _stat(os.path.join(base, d)))
    mem = memories_dir(root)
    if mem.is_dir():
        for name in sorted(os.listdir(mem)):
            h.update(name.encode() + _stat(mem / name))
    for s in sources:
        h.update(s.encode() + _stat(os.path.join(base, s)))
    return h.hexdigest()


def _stat(p: str | Path) -> bytes:
    try:
        st = os.stat(p)
    except OSError:
        return b"-"
    return f"{st.st_mtime_ns}:{st.st_size}".encode()


_STORED = ("prose", "code", "trail", "meta")  # title and path terms are cheap to redo per source


@dataclass
class _Previous:
    """The old cache: what a build reuses for the files that did not change."""

    model: str | None
    units: Units
    stats: dict[str, str]
    vectors: Any  # (dim, n) float16, as stored
    postings: Postings


def _previous(path: Path) -> _Previous | None:
    import numpy as np

    try:
        z = np.load(open_regular(path, follow=False), allow_pickle=False)
        head = _json(z, "head")
        if head.get("version") != CACHE_VERSION:
            return None
        units = _stored_units(z)
        p = Postings(_stored_vocab(z), z["p_ptr"], z["p_seg"], z["p_count"], z["p_lens"])
        stats, vectors = _json(z, "stats"), _stored_vectors(z, len(units))
        if not _consistent(p, len(units)) or not isinstance(stats, dict):
            return None
        return _Previous(head.get("model"), units, stats, vectors, p)
    except Exception:  # missing, torn or foreign: build from scratch
        return None


def _consistent(p: Postings, n: int) -> bool:
    """Postings a patch can index without going out of bounds (a foreign or damaged file is
    not patched: the cache is built afresh)."""
    return (
        p.lens.shape == (n, len(FIELDS))
        and len(p.ptr) == len(p.vocab) + 1
        and int(p.ptr[0]) == 0
        and int(p.ptr[-1]) == len(p.seg) == len(p.count)
        and (len(p.seg) == 0 or (int(p.seg.min()) >= 0 and int(p.seg.max()) < n << 3))
    )


def _build(root: Path, prev: _Previous | None = None) -> tuple[dict[str, Any], Index]:
    """Build the cache (its npz members, and the index they hold). Files (a doc's chunk
    file, a memory) whose stat did not change since `prev` keep their units, vectors and
    postings; only the others are parsed, so a sync that touched one doc costs one doc's
    parsing, and the index arrays are patched in array work (docs/decisions.md §22)."""
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
    fresh: list[tuple[int, Unit, tuple[str, ...], Any]] = []  # row, unit, stored terms, vec
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


def _unit_terms(fresh: list[tuple[Unit, tuple[str, ...]]]) -> list[dict[str, list[str]]]:
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
        ft = {f: part.split() for f, part in zip(_STORED, stored, strict=True)}
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

_Parsed = tuple[Unit, tuple[str, ...], Any]  # unit, stored term fields (_STORED), vector


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
    return ordered_map(functools.partial(_parse_job, root, dim), jobs, at_least=at_least)


def _block_bytes(root: Path, unit: Unit) -> bytes:
    """A chunk's block: read at the offset the cache recorded when it is still that chunk's
    (its id line says so); else (a file changed since, a CRLF checkout) the file is split
    again and the block taken by its place."""
    path = root / unit.file
    if unit.at >= 0 and not os.path.islink(path):
        with open_regular(path) as f:
            f.seek(unit.at)
            data = f.read(unit.size)
        first = data[: data.find(b"\n", 4) + 1]
        if len(data) == unit.size and first.startswith(b"---\nid: ") and _names(first, unit.id):
            return data
    return split_chunk_file(read_chunk_file(path), path=unit.file)[unit.block]


def _names(line: bytes, unit_id: str) -> bool:
    """Whether a block's `id:` line (plain or YAML-quoted) is that of `unit_id`."""
    text = line.decode("utf-8", "replace").rstrip("\r\n")[len("---\nid: ") :]
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].replace("''", "'") if text[0] == "'" else text[1:-1]
    return text == unit_id


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _parse_job(
    root: str,
    dim: int,
    job: tuple[str, list[str]],
    blocks: Sequence[int] | None = None,
    lines: bool = True,
) -> list[_Parsed | None]:
    """The units of one job (a doc's chunk file, or memory files): metadata (with line
    ranges unless `lines` is False), stored term fields and vectors. `blocks`: only these
    blocks of a chunk file."""
    kind, files = job
    base = Path(root)
    found = [p for path in files for p in _parse_file(base, path, kind, dim, blocks)]
    units = [p[0] for p in found if p is not None]
    # The source is read for line ranges; its frontmatter values are taken on the way.
    front: dict[str, str] = {}
    if kind == "chunk" and lines:
        front = attach_lines(base, units, [p[3] for p in found if p is not None])
    out: list[_Parsed | None] = []
    for parsed in found:
        if parsed is None:
            out.append(None)
            continue
        unit, fields, vec, _body = parsed
        extra = front.get(unit.source_path)
        if extra:
            fields["meta"] = f"{fields['meta']}\n{extra}"
        out.append((unit, tuple(" ".join(terms(fields[f])) for f in _STORED), vec))
    return out


def _parse_file(
    root: Path, path: str, kind: str, dim: int, blocks: Sequence[int] | None
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
    for i in range(len(found)) if blocks is None else blocks:
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


def _stat_str(p: str | Path) -> str:
    return _stat(p).decode()


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
