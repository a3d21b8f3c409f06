"""index: the tree's code as ranked units: one per definition (and one per file for its
module level), their BM25F arrays and the files' reference graph.

Kept in cache/code/index.npz under the hash of the listing (every tracked source's path and
git blob id), so a query on an unchanged tree loads arrays and parses nothing, and a change
re-reads the files it touched (docs/decisions.md §29).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.code.model import CodeFile, Symbol
from ncx.code.scope import READ_REASONS
from ncx.code.store import Source, code_listing, listing
from ncx.paths import cache_file
from ncx.query.lexical import add_saturated, path_words, terms
from ncx.store import open_regular

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# 21: a Rust `&[...]` table too, and no TS value an array method computes;
# 20: and a Rust `const`/`static` given an array, struct or tuple; 19: a Go package-level
# table (`var m = map[..]..{...}`) is a definition too;
# 18: a Python module's upper-case constant is a definition (kind "constant"); 17: a TS
# value made by a call handed a function is one (zod's `$constructor(...)` schemas);
# 16: the tree-sitter walk reads named nodes only (a TypeScript `string` type keyword was a
# word of every definition it annotates; the walk an eighth fewer instructions);
# 13: a head written a parameter a line reads `f(a, b)`, not `f( a, b, )`, and a long one is
# cut after a whole parameter;
# 12: a Python class's signature ends at its colon, not at its first method's decorator;
# 11: a tool's directive (`eslint-disable…`, `//go:generate`) or a TODO is no part of a doc;
# 10: a Go method of a generic type is named by the type (`FlagBase.PostParse`, not
# `VC.PostParse`); Go type signatures keep `type`; a TS union alias has one `=`;
# 9: Python `@overload` stubs are not units (their names count for the enclosing one);
# 8: option- and setting-like literals past a definition's text cap (ncx.code.text.words_of);
# 7: each unit's test flag (Symbol.test); 6: a file left out when read (too large,
# minified) has no terms; texts redacted (ncx.code.guard), credentials' lines kept
INDEX_VERSION = 21
INDEX_FILE = "code/index.npz"
# BM25F fields of a code unit and their weights. A definition's own name is the strongest
# evidence (a task names what it changes); its signature and docstring say what it is;
# what it uses, and its strings and comments, say what it touches; a file's path and module
# name go on its module unit. Swept on the code-* development sets (docs/decisions.md §29).
CODE_FIELDS = ("name", "sig", "uses", "text", "path")
CODE_FIELD_WEIGHTS = {"name": 3.0, "sig": 1.5, "uses": 0.6, "text": 0.6, "path": 2.0}
CODE_B = 0.75
# A name defined in more files than this is too common to be an edge of the reference
# graph (`get`, `run`, `__init__`): it would tie every file to every other.
GRAPH_MAX_DEFINERS = 4


KINDS = (
    "module",
    "class",
    "function",
    "method",
    "type",
    "interface",
    "enum",
    "struct",
    "trait",
    "macro",
    "constant",  # a module's named constant or table (Python's `HTTP_PROTOCOLS = {...}`)
)


@dataclass(frozen=True)
class CodeUnit:
    path: str
    qualname: str  # "" for a file's module level
    kind: str
    start: int
    end: int
    signature: str
    doc: str
    file: int  # index into CodeIndex.files


@dataclass(frozen=True)
class Graph:
    """The files' reference graph as edges: file src uses a name file dst defines (weight:
    1 / the number of files defining it). numpy arrays, not scipy.sparse: one walk per query
    is a few bincounts, and scipy's import alone costs more than the whole query
    (docs/decisions.md §15)."""

    src: NDArray[np.int32]
    dst: NDArray[np.int32]
    weight: NDArray[np.float64]


@dataclass(frozen=True)
class CodeLex:
    """BM25F arrays, term-major (term t's units: indices[indptr[t]:indptr[t+1]]), with the
    vocabulary kept as sorted 64-bit hashes: a 100,000-term dict costs a tenth of a second to
    load, a searchsorted for a query's few terms nothing."""

    hashes: NDArray[np.uint64]  # sorted
    order: NDArray[np.int64]  # term id of hashes[i]
    indptr: NDArray[np.int64]
    indices: NDArray[np.int32]
    data: NDArray[np.float32]
    idf: NDArray[np.float32]
    n_units: int

    def term_id(self, term: str) -> int | None:
        import numpy as np

        h = np.uint64(term_hash(term))
        i = int(np.searchsorted(self.hashes, h))
        if i < len(self.hashes) and self.hashes[i] == h:
            return int(self.order[i])
        return None

    def score(self, query_terms: list[str], k1: float) -> NDArray[np.float32]:
        import numpy as np

        scores = np.zeros(self.n_units, dtype=np.float32)
        for t in dict.fromkeys(query_terms):
            col = self.term_id(t)
            if col is not None:
                add_saturated(scores, self, col, k1)
        return scores


@dataclass
class CodeIndex:
    """Columns, one row per unit; a unit's strings are decoded only when it is shown."""

    files: list[str]
    file_of: NDArray[np.int32]
    start: NDArray[np.int32]
    end: NDArray[np.int32]
    kind: NDArray[np.int8]  # index into KINDS
    test: NDArray[np.bool_]  # test code inside a source file (Symbol.test)
    text: NDArray[np.uint8]  # qualname \x1f signature \x1f doc of every unit, UTF-8, joined
    text_at: NDArray[np.int64]  # unit i's strings: text[text_at[i]:text_at[i + 1]]
    lex: CodeLex
    graph: Graph
    name_hashes: NDArray[np.uint64]  # sorted hashes of definitions' names (lowercased)
    name_units: NDArray[np.int32]  # the unit of each
    # (path, line, kind) of each credential in the code, redacted from the texts above
    secrets: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return len(self.file_of) == 0

    def __len__(self) -> int:
        return len(self.file_of)

    def unit(self, i: int) -> CodeUnit:
        qual, sig, doc = (
            self.text[self.text_at[i] : self.text_at[i + 1]].tobytes().decode().split("\x1f")
        )
        return CodeUnit(
            self.files[int(self.file_of[i])],
            qual,
            KINDS[int(self.kind[i])],
            int(self.start[i]),
            int(self.end[i]),
            sig,
            doc,
            int(self.file_of[i]),
        )

    def qualnames(self, units: NDArray[np.int64]) -> list[bytes]:
        """The qualified names of `units` (ascending: a file's are contiguous) as stored, UTF-8
        bytes, from one slice of the packed texts: no decoding, no record per unit."""
        at = self.text_at[units].tolist()
        text = self.text[at[0] : self.text_at[int(units[-1]) + 1]].tobytes()
        return [text[a - at[0] : text.index(b"\x1f", a - at[0])] for a in at]

    def file_unit(self, f: int) -> int:
        """The module unit of file f (the first of its units)."""
        import numpy as np

        return int(np.searchsorted(self.file_of, f, side="left"))

    def defining(self, name: str) -> list[int]:
        """The units that define `name` (compared lowercased)."""
        import numpy as np

        h = np.uint64(term_hash(name.lower()))
        a = int(np.searchsorted(self.name_hashes, h, side="left"))
        b = int(np.searchsorted(self.name_hashes, h, side="right"))
        return [int(u) for u in self.name_units[a:b]]


def term_hash(term: str) -> int:
    digest = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little") or 1  # 0 means "no name" in Blocks.name_hash


class _HashMemo(dict[str, int]):
    """term -> term_hash(term), each term hashed once (looked up in C: `memo.__getitem__`)."""

    def __missing__(self, term: str) -> int:
        h = self[term] = term_hash(term)
        return h


@dataclass
class Blocks:
    """What each file contributes, in file order, so that a change replaces the blocks of the
    files it touched and the index is recomputed from blocks by array work: the BM25F weights
    depend on every unit's lengths and the idf on every unit's terms, the graph on every
    file's names, but none of them needs a file parsed or a word stemmed again (the docs
    cache does the same, docs/decisions.md §22). A unit's postings and a file's names are
    stored by 64-bit hash, so blocks from different builds share one vocabulary."""

    files: list[str]
    blobs: list[str]
    unit_at: NDArray[np.int64]  # file f's units: [unit_at[f], unit_at[f + 1])
    start: NDArray[np.int32]
    end: NDArray[np.int32]
    kind: NDArray[np.int8]
    test: NDArray[np.bool_]
    name_hash: NDArray[np.uint64]  # a definition's name, lowercased; 0 for a module unit
    text: NDArray[np.uint8]
    text_at: NDArray[np.int64]
    lens: NDArray[np.int32]  # (units, fields): terms in each field
    p_at: NDArray[np.int64]  # file f's postings: [p_at[f], p_at[f + 1])
    p_hash: NDArray[np.uint64]
    p_unit: NDArray[np.int32]  # the unit within its file
    p_field: NDArray[np.int8]
    p_count: NDArray[np.int32]
    u_at: NDArray[np.int64]  # file f's used names: [u_at[f], u_at[f + 1])
    u_hash: NDArray[np.uint64]
    d_at: NDArray[np.int64]  # file f's defined names
    d_hash: NDArray[np.uint64]
    # why file f was left out when read ("" for the project's code): it keeps one module
    # unit with no terms, so it never ranks, and `ncx status` can name it
    notes: list[str] = field(default_factory=list)
    # file f's credentials, (line, kind) (CodeFile.secrets): said by every sync
    secrets: list[tuple[tuple[int, str], ...]] = field(default_factory=list)

    def note(self, f: int) -> str:
        return self.notes[f] if f < len(self.notes) else ""


_BLOCK_ARRAYS = (
    "unit_at", "start", "end", "kind", "test", "name_hash", "text", "text_at", "lens",
    "p_at", "p_hash", "p_unit", "p_field", "p_count", "u_at", "u_hash", "d_at", "d_hash",
)  # fmt: skip


@dataclass(frozen=True)
class CodeScope:
    """What `ncx status` and `ncx sync` say of the code index: the files that are the
    project's code, and the tracked ones left out with the reason."""

    files: int  # the project's source files
    left_out: list[tuple[str, str]]  # (path, reason), sorted by path
    built: bool  # an index of this very listing is saved (the read reasons are known)
    stale: bool = False  # an index is saved, of another listing (a file edited since)


def code_scope(root: Path) -> CodeScope:
    """The listing's left-out files, and those the saved index left out when it read them
    (too large, minified) where it is the index of this listing. Parses nothing."""

    import numpy as np

    got = code_listing(root)
    key = _key(got.sources)
    left = dict(got.left_out)
    built = stale = False
    try:
        with open_regular(cache_file(root, INDEX_FILE), follow=False) as f, np.load(f) as z:
            meta = json.loads(z["meta"].tobytes())
        stale = meta.get("key") != key
        if not stale:
            built = True
            for path, note in zip(meta["files"], meta["notes"], strict=True):
                if note:
                    left[path] = note
    except _CORRUPT:
        pass  # no index, or one of another listing: the read reasons are not known yet
    reasons = sorted(left.items())
    return CodeScope(len(got.sources) - (len(left) - len(got.left_out)), reasons, built, stale)


def has_code_index(root: Path) -> bool:
    return cache_file(root, INDEX_FILE).is_file()


def code_index_wants_build(root: Path) -> bool:
    """Whether a build would find work worth a process: the saved index is not the index
    of the tree as it is now, or there is none and the tree has PARALLEL_AT source files or
    more (below that a query builds it in a moment). The listing and the meta member only:
    no parse, no build."""
    import numpy as np

    sources = listing(root)
    if not has_code_index(root):
        return len(sources) >= PARALLEL_AT
    key = _key(sources)
    try:
        with open_regular(cache_file(root, INDEX_FILE), follow=False) as f, np.load(f) as z:
            return bool(json.loads(z["meta"].tobytes()).get("key") != key)
    except _CORRUPT:
        return True


def load_code_index(root: Path, on_read: Callable[[int], None] | None = None) -> CodeIndex:
    """The code index of the tree as it is now. Loaded when the listing is unchanged; else
    the saved blocks are patched: a file whose (path, blob) the index or its spare blocks
    hold is taken as it is, and only the others are parsed (in worker processes when there
    are many). The blocks that leave the index are kept as spares, so switching back to a
    branch parses nothing."""
    sources = listing(root)
    key = _key(sources)
    index = cache_file(root, INDEX_FILE)  # a committed link at cache/ or cache/code/: refused
    got = _try_load(index, key)
    if got is not None:
        return got
    from ncx.layout import ncx_dir

    if not ncx_dir(root).is_dir():
        # A repository ncx is not set up in (`retrieve --kind code` before `ncx init`) gets
        # no untracked .neocortex/ from a query, which `ncx status` would then call no tree:
        # the index is read for this process only.
        return index_of(merge(sources, [read_blocks(root, sources)]))
    from ncx.locks import exclusive

    # one build at a time: a second process (the prompt hook's background build beside a
    # session-start's) waits for the first and loads what it wrote
    with exclusive(root, "code-index"):
        got = _try_load(index, key)
        return got if got is not None else _update(root, sources, key, on_read)


def _update(
    root: Path, sources: list[Source], key: str, on_read: Callable[[int], None] | None
) -> CodeIndex:
    # a committed link at cache/ or cache/code/ is refused, not written through
    index, spare_file = cache_file(root, INDEX_FILE), cache_file(root, SPARE_FILE)
    kept = [b for b in (_load_blocks(spare_file), _load_blocks(index)) if b]
    have = {(p, blob) for b in kept for p, blob in zip(b.files, b.blobs, strict=True)}
    fresh = [s for s in sources if (s.path, s.blob) not in have]
    if on_read is not None and len(fresh) >= PARALLEL_AT:
        on_read(len(fresh))  # progress: a first build reads every file
    parts = [*kept, read_blocks(root, fresh)]
    blocks = merge(sources, parts)
    idx = index_of(blocks)
    _save(index, key, blocks, idx)
    current = {(s.path, s.blob) for s in sources}
    spare = [Source(p, blob, "") for p, blob in sorted(have - current)][: max(64, len(sources))]
    if spare:
        _save(spare_file, "", merge(spare, parts), None)
    return idx


SPARE_FILE = "code/spare.npz"
PARALLEL_AT = 48  # files to read before worker processes pay for their start
_BATCH = 24  # files a worker reads per job


def read_blocks(root: Path, sources: list[Source]) -> Blocks:
    """The blocks of these files, read and parsed from the work tree."""
    if len(sources) < PARALLEL_AT:
        return _blocks_job((str(root), sources))
    from ncx.parallel import ordered_map

    batches = [sources[i : i + _BATCH] for i in range(0, len(sources), _BATCH)]
    got = ordered_map(_blocks_job, [(str(root), b) for b in batches], at_least=2, chunksize=1)
    return merge(sources, got)


def _blocks_job(job: tuple[str, list[Source]]) -> Blocks:
    from ncx.code.store import parse_sources
    from ncx.parallel import no_collector

    root, sources = job
    with no_collector():
        return blocks_of(sources, parse_sources(Path(root), sources))


def build(sources: list[Source], recs: dict[str, CodeFile]) -> CodeIndex:
    """The index of these sources from nothing (what a patch must equal, byte for byte)."""
    return index_of(merge(sources, [blocks_of(sources, recs)]))


def blocks_of(sources: list[Source], recs: dict[str, CodeFile]) -> Blocks:
    import numpy as np

    unit_at, start, end, kind, test, name_hash, strings = [0], [], [], [], [], [], []
    lens: list[list[int]] = []
    p_at: list[int] = [0]
    p_hash: list[int] = []
    p_count: list[int] = []
    runs: list[int] = []  # the postings' (unit, field) as runs: how many, and of which
    run_unit: list[int] = []
    run_field: list[int] = []
    u_at, u_hash, d_at, d_hash = [0], [], [0], []
    found: list[tuple[tuple[int, str], ...]] = []
    kind_of = {k: i for i, k in enumerate(KINDS)}
    ident_terms: dict[str, list[str]] = {}  # identifiers repeat: each split and stemmed once
    # (a term or a name: the same few thousand recur in every file)
    hash_of = _HashMemo().__getitem__
    notes = []
    for s in sources:
        rec = recs[s.blob]
        note = rec.error if rec.error in READ_REASONS else ""
        notes.append(note)
        found.append(rec.secrets)
        syms = rec.symbols or (Symbol("", "", "module", 1, max(1, rec.lines), "", "", ()),)
        used: set[int] = set()
        defined: set[int] = set()
        for local, sym in enumerate(syms):
            start.append(sym.start)
            end.append(sym.end)
            kind.append(kind_of.get(sym.kind, kind_of["type"]))
            test.append(sym.test)
            nh = hash_of(sym.name.lower()) if sym.name else 0
            name_hash.append(nh)
            strings.append(
                f"{sym.qualname}\x1f{sym.signature}\x1f{sym.doc}".encode("utf-8", "replace")
            )
            fields = _unit_terms(s.path, sym, ident_terms) if not note else _NO_TERMS
            lens.append([len(fields[f]) for f in CODE_FIELDS])
            for fi, f in enumerate(CODE_FIELDS):
                got = fields[f]
                if not got:
                    continue
                # (terms in the order first met, as the postings were always written: a
                # Counter is that order, counted in C)
                counts = Counter(got)
                p_hash.extend(map(hash_of, counts))
                p_count.extend(counts.values())
                runs.append(len(counts))  # (unit, field) of each: repeated once, at the end
                run_unit.append(local)
                run_field.append(fi)
            used.update(map(hash_of, sym.uses))
            if sym.name and not note:
                defined.add(hash_of(sym.name))
        unit_at.append(len(start))
        p_at.append(len(p_hash))
        u_hash.extend(sorted(used))
        u_at.append(len(u_hash))
        d_hash.extend(sorted(defined))
        d_at.append(len(d_hash))
    text_lens = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    text_at = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(text_lens, out=text_at[1:])
    return Blocks(
        files=[s.path for s in sources],
        blobs=[s.blob for s in sources],
        unit_at=np.array(unit_at, dtype=np.int64),
        start=np.array(start, dtype=np.int32),
        end=np.array(end, dtype=np.int32),
        kind=np.array(kind, dtype=np.int8),
        test=np.array(test, dtype=np.bool_),
        name_hash=np.array(name_hash, dtype=np.uint64),
        text=np.frombuffer(b"".join(strings), dtype=np.uint8),
        text_at=text_at,
        lens=np.array(lens, dtype=np.int32).reshape(-1, len(CODE_FIELDS)),
        p_at=np.array(p_at, dtype=np.int64),
        p_hash=np.array(p_hash, dtype=np.uint64),
        p_unit=np.repeat(np.array(run_unit, dtype=np.int32), runs),
        p_field=np.repeat(np.array(run_field, dtype=np.int8), runs),
        p_count=np.array(p_count, dtype=np.int32),
        u_at=np.array(u_at, dtype=np.int64),
        u_hash=np.array(u_hash, dtype=np.uint64),
        d_at=np.array(d_at, dtype=np.int64),
        d_hash=np.array(d_hash, dtype=np.uint64),
        notes=notes,
        secrets=found,
    )


_NO_TERMS: dict[str, list[str]] = {f: [] for f in CODE_FIELDS}


def merge(sources: list[Source], parts: list[Blocks]) -> Blocks:
    """The blocks of `sources`, in their order, each taken from the last part that holds that
    path at that blob (a patch lists the fresh blocks last)."""
    import numpy as np

    where: dict[tuple[str, str], tuple[int, int]] = {}
    for pi, b in enumerate(parts):
        for f, (path, blob) in enumerate(zip(b.files, b.blobs, strict=True)):
            where[(path, blob)] = (pi, f)
    picks = [where[(s.path, s.blob)] for s in sources]

    def gather(name: str, at_name: str | None) -> Any:
        pieces = []
        for pi, f in picks:
            b = parts[pi]
            arr = getattr(b, name)
            at = getattr(b, at_name) if at_name else None
            if at is None:
                pieces.append(arr[f : f + 1])
            else:
                pieces.append(arr[at[f] : at[f + 1]])
        if not pieces:
            return getattr(parts[0], name)[:0] if parts else np.zeros(0)
        return np.concatenate(pieces)

    def offsets(at_name: str) -> NDArray[np.int64]:
        sizes = [
            int(getattr(parts[pi], at_name)[f + 1] - getattr(parts[pi], at_name)[f])
            for pi, f in picks
        ]
        out = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(np.array(sizes, dtype=np.int64), out=out[1:])
        return out

    text_pieces = []
    text_sizes = []
    for pi, f in picks:
        b = parts[pi]
        a, z = int(b.text_at[b.unit_at[f]]), int(b.text_at[b.unit_at[f + 1]])
        text_pieces.append(b.text[a:z])
        text_sizes.append(np.diff(b.text_at[b.unit_at[f] : b.unit_at[f + 1] + 1]))
    text_at = np.zeros(1, dtype=np.int64)
    if text_sizes:
        text_at = np.concatenate([text_at, np.cumsum(np.concatenate(text_sizes))])
    return Blocks(
        files=[s.path for s in sources],
        blobs=[s.blob for s in sources],
        unit_at=offsets("unit_at"),
        start=gather("start", "unit_at").astype(np.int32),
        end=gather("end", "unit_at").astype(np.int32),
        kind=gather("kind", "unit_at").astype(np.int8),
        test=gather("test", "unit_at").astype(np.bool_),
        name_hash=gather("name_hash", "unit_at").astype(np.uint64),
        text=(np.concatenate(text_pieces) if text_pieces else np.zeros(0)).astype(np.uint8),
        text_at=text_at.astype(np.int64),
        lens=gather("lens", "unit_at").astype(np.int32).reshape(-1, len(CODE_FIELDS)),
        p_at=offsets("p_at"),
        p_hash=gather("p_hash", "p_at").astype(np.uint64),
        p_unit=gather("p_unit", "p_at").astype(np.int32),
        p_field=gather("p_field", "p_at").astype(np.int8),
        p_count=gather("p_count", "p_at").astype(np.int32),
        u_at=offsets("u_at"),
        u_hash=gather("u_hash", "u_at").astype(np.uint64),
        d_at=offsets("d_at"),
        d_hash=gather("d_hash", "d_at").astype(np.uint64),
        notes=[parts[pi].note(f) for pi, f in picks],
        secrets=[_file_secrets(parts[pi], f) for pi, f in picks],
    )


def _file_secrets(b: Blocks, f: int) -> tuple[tuple[int, str], ...]:
    return b.secrets[f] if f < len(b.secrets) else ()


def index_of(b: Blocks) -> CodeIndex:
    """The ranked index of some blocks: pure array work, identical for identical blocks."""
    import numpy as np

    n_files = len(b.files)
    n = len(b.start)
    file_of = np.repeat(np.arange(n_files, dtype=np.int32), np.diff(b.unit_at)).astype(np.int32)
    p_file = np.repeat(np.arange(n_files, dtype=np.int64), np.diff(b.p_at))
    unit = b.unit_at[p_file] + b.p_unit.astype(np.int64)
    # BM25F: each field's count length-normalised on its own and weighted
    lens = b.lens.astype(np.float64)
    avg = lens.mean(axis=0) if n else np.ones(len(CODE_FIELDS))
    avg[avg == 0] = 1.0
    weight = np.array([CODE_FIELD_WEIGHTS[f] for f in CODE_FIELDS])
    norm = weight / (1 - CODE_B + CODE_B * lens / avg)
    w = b.p_count * norm[unit, b.p_field.astype(np.int64)]
    # one canonical order, (term, unit, field), whatever order the blocks came in: a patched
    # index sums the same floats in the same order as one built from nothing
    order = np.lexsort((b.p_field, unit, b.p_hash))
    h, u, w = b.p_hash[order], unit[order], w[order]
    first = np.ones(len(h), dtype=bool)
    if len(h):
        first[1:] = (h[1:] != h[:-1]) | (u[1:] != u[:-1])
    group = np.cumsum(first) - 1
    data = np.bincount(group, weights=w, minlength=int(first.sum())) if len(h) else np.zeros(0)
    ph, pu = h[first], u[first]
    term_first = np.ones(len(ph), dtype=bool)
    if len(ph):
        term_first[1:] = ph[1:] != ph[:-1]
    vocab = ph[term_first]
    df = np.diff(np.append(np.flatnonzero(term_first), len(ph)))
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    lex = CodeLex(
        hashes=vocab.astype(np.uint64),
        order=np.arange(len(vocab), dtype=np.int64),
        indptr=indptr,
        indices=pu.astype(np.int32),
        data=data.astype(np.float32),
        idf=idf,
        n_units=n,
    )
    names = b.name_hash != 0
    nu = np.flatnonzero(names)
    norder = np.lexsort((nu, b.name_hash[nu]))
    return CodeIndex(
        files=b.files,
        file_of=file_of,
        start=b.start,
        end=b.end,
        kind=b.kind,
        test=b.test,
        text=b.text,
        text_at=b.text_at,
        lex=lex,
        graph=_graph(b),
        name_hashes=b.name_hash[nu][norder],
        name_units=nu[norder].astype(np.int32),
        secrets=[(path, n, k) for f, path in enumerate(b.files) for n, k in _file_secrets(b, f)],
    )


def _graph(b: Blocks) -> Graph:
    """Edges from each file to the files defining a name it uses, for names defined in at
    most GRAPH_MAX_DEFINERS files, weighted 1 / that number; sorted (src, dst, name)."""
    import numpy as np

    n_files = len(b.files)
    d_file = np.repeat(np.arange(n_files, dtype=np.int64), np.diff(b.d_at))
    u_file = np.repeat(np.arange(n_files, dtype=np.int64), np.diff(b.u_at))
    dorder = np.lexsort((d_file, b.d_hash))
    dh, df = b.d_hash[dorder], d_file[dorder]
    lo = np.searchsorted(dh, b.u_hash, side="left")
    hi = np.searchsorted(dh, b.u_hash, side="right")
    owners = hi - lo
    ok = (owners > 0) & (owners <= GRAPH_MAX_DEFINERS)
    lo, owners, src_f, uh = lo[ok], owners[ok], u_file[ok], b.u_hash[ok]
    reps = np.repeat(np.arange(len(lo)), owners)
    step = np.arange(len(reps)) - np.repeat(np.cumsum(owners) - owners, owners)
    dst = df[lo[reps] + step]
    src = src_f[reps]
    wt = 1.0 / owners[reps]
    keep = src != dst
    src, dst, wt, names = src[keep], dst[keep], wt[keep], uh[reps][keep]
    order = np.lexsort((names, dst, src))
    return Graph(src[order].astype(np.int32), dst[order].astype(np.int32), wt[order])


def _unit_terms(path: str, sym: Symbol, memo: dict[str, list[str]]) -> dict[str, list[str]]:
    uses: list[str] = []
    for ident in sym.uses:
        got = memo.get(ident)
        if got is None:
            got = memo[ident] = terms(ident)
        uses.extend(got)
    if sym.kind == "module":
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        return {
            "name": terms(stem),
            "sig": terms(sym.doc),
            "uses": uses,
            "text": terms(sym.text),
            "path": terms(path_words(path)),
        }
    return {
        "name": terms(sym.qualname.replace(".", " ")),
        "sig": terms(f"{sym.signature} {sym.doc}"),
        "uses": uses,
        "text": terms(sym.text),
        "path": [],
    }


def _key(sources: list[Source]) -> str:
    h = hashlib.sha256(f"{INDEX_VERSION}\n".encode())
    for s in sources:
        h.update(f"{s.path}\0{s.blob}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _save(path: Path, key: str, blocks: Blocks, idx: CodeIndex | None) -> None:
    import io

    import numpy as np

    from ncx.store import write_atomic

    meta = {
        "version": INDEX_VERSION,
        "key": key,
        "files": blocks.files,
        "blobs": blocks.blobs,
        "notes": blocks.notes,
        "secrets": {str(f): found for f, found in enumerate(blocks.secrets) if found},
    }
    arrays: dict[str, Any] = {f"b_{name}": getattr(blocks, name) for name in _BLOCK_ARRAYS}
    if idx is not None:
        g, lx = idx.graph, idx.lex
        arrays.update(
            file_of=idx.file_of,
            hashes=lx.hashes,
            order=lx.order,
            indptr=lx.indptr,
            indices=lx.indices,
            data=lx.data,
            idf=lx.idf,
            g_src=g.src,
            g_dst=g.dst,
            g_weight=g.weight,
            name_hashes=idx.name_hashes,
            name_units=idx.name_units,
        )
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
    try:
        write_atomic(path, buf.getvalue())
    except OSError:
        pass  # a read-only cache: the index is used from memory


# What a damaged cache file raises while it is read: a torn or truncated zip (BadZipFile,
# EOFError, zlib.error), garbage where an array or the meta should be (ValueError, KeyError,
# TypeError, IndexError). Each means "build it again", never a failed command.
_CORRUPT = (
    OSError,
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
)


def _meta_secrets(meta: dict[str, Any]) -> list[tuple[tuple[int, str], ...]]:
    got = meta.get("secrets") or {}
    return [
        tuple((int(n), str(k)) for n, k in got.get(str(f), ())) for f in range(len(meta["files"]))
    ]


def _try_load(path: Path, key: str) -> CodeIndex | None:
    import numpy as np

    try:
        # (a FIFO in its place is never waited on, a link never followed)
        with open_regular(path, follow=False) as f, np.load(f) as z:
            meta = json.loads(z["meta"].tobytes())
            if meta.get("key") != key or not key:
                return None
            n = len(z["file_of"])
            return CodeIndex(
                files=meta["files"],
                file_of=z["file_of"],
                start=z["b_start"],
                end=z["b_end"],
                kind=z["b_kind"],
                test=z["b_test"],
                text=z["b_text"],
                text_at=z["b_text_at"],
                lex=CodeLex(
                    z["hashes"], z["order"], z["indptr"], z["indices"], z["data"], z["idf"], n
                ),
                graph=Graph(z["g_src"], z["g_dst"], z["g_weight"]),
                name_hashes=z["name_hashes"],
                name_units=z["name_units"],
                secrets=[
                    (meta["files"][f], n, k)
                    for f, found in enumerate(_meta_secrets(meta))
                    for n, k in found
                ],
            )
    except _CORRUPT:
        return None  # derived: built again


def _load_blocks(path: Path) -> Blocks | None:
    import numpy as np

    try:
        with open_regular(path, follow=False) as f, np.load(f) as z:
            meta = json.loads(z["meta"].tobytes())
            if meta.get("version") != INDEX_VERSION:
                return None  # blocks of another reader or field layout: read the files again
            arrays = {name: z[f"b_{name}"] for name in _BLOCK_ARRAYS}
        b = Blocks(
            files=meta["files"],
            blobs=meta["blobs"],
            notes=meta["notes"],
            **arrays,
            secrets=_meta_secrets(meta),
        )
    except _CORRUPT:
        return None
    if len(b.files) != len(b.blobs) or len(b.unit_at) != len(b.files) + 1:
        return None
    if len(b.notes) != len(b.files) or not all(isinstance(n, str) for n in b.notes):
        return None
    return b
