"""index: the tree's code as ranked units: one per definition (and one per file for its
module level), their BM25F arrays and the files' reference graph.

Built from the blob-keyed records (ncx.code.store) and kept in cache/code/index.npz under
the hash of the listing, so a query on an unchanged tree loads arrays and parses nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.code.model import CodeFile, Symbol
from ncx.code.store import Source, listing, records
from ncx.layout import cache_dir
from ncx.query.lexical import LexIndex, path_words, terms

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

INDEX_VERSION = 1
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


@dataclass
class CodeIndex:
    files: list[str]
    units: list[CodeUnit]
    lex: LexIndex
    graph: Graph
    names: dict[str, list[int]]  # a definition's name (lowercased) -> units defining it

    @property
    def empty(self) -> bool:
        return not self.units


def load_code_index(root: Path) -> CodeIndex:
    """The code index of the tree as it is now: loaded when the listing is unchanged, else
    built from the records (parsing only blobs not seen before) and saved."""
    sources = listing(root)
    key = _key(sources)
    path = cache_dir(root) / INDEX_FILE
    got = _try_load(path, key)
    if got is not None:
        return got
    recs = records(root, sources)
    idx = build(sources, recs)
    _save(path, key, idx)
    return idx


def build(sources: list[Source], recs: dict[str, CodeFile]) -> CodeIndex:
    import numpy as np

    files = [s.path for s in sources]
    units: list[CodeUnit] = []
    fields: list[dict[str, list[str]]] = []
    defines: dict[str, set[int]] = defaultdict(set)
    file_uses: list[set[str]] = []
    for fi, s in enumerate(sources):
        rec = recs[s.blob]
        used: set[str] = set()
        syms = rec.symbols or (Symbol("", "", "module", 1, max(1, rec.lines), "", "", ()),)
        for sym in syms:
            units.append(
                CodeUnit(
                    s.path, sym.qualname, sym.kind, sym.start, sym.end, sym.signature, sym.doc, fi
                )
            )
            fields.append(_unit_terms(s.path, sym, rec))
            used.update(sym.uses)
            if sym.name:
                defines[sym.name].add(fi)
        file_uses.append(used)
    lex = _bm25f(fields)
    rows, cols, vals = [], [], []
    for fi, used in enumerate(file_uses):
        for name in used:
            owners = defines.get(name)
            if owners and len(owners) <= GRAPH_MAX_DEFINERS:
                for fj in owners:
                    if fj != fi:
                        rows.append(fi)
                        cols.append(fj)
                        vals.append(1.0 / len(owners))
    graph = Graph(np.array(rows, dtype=np.int32), np.array(cols, dtype=np.int32), np.array(vals))
    names: dict[str, list[int]] = defaultdict(list)
    for ui, u in enumerate(units):
        if u.qualname:
            names[u.qualname.rsplit(".", 1)[-1].lower()].append(ui)
    return CodeIndex(files, units, lex, graph, dict(names))


def _unit_terms(path: str, sym: Symbol, rec: CodeFile) -> dict[str, list[str]]:
    if sym.kind == "module":
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        return {
            "name": terms(stem),
            "sig": terms(sym.doc),
            "uses": terms(" ".join(sym.uses)),
            "text": terms(sym.text),
            "path": terms(path_words(path)),
        }
    return {
        "name": terms(sym.qualname.replace(".", " ")),
        "sig": terms(f"{sym.signature} {sym.doc}"),
        "uses": terms(" ".join(sym.uses)),
        "text": terms(sym.text),
        "path": [],
    }


def _bm25f(fields: list[dict[str, list[str]]]) -> LexIndex:
    """BM25F arrays in the layout ncx.query.lexical scores: term-major weighted frequencies,
    each field length-normalised on its own and weighted, saturated once at query time."""
    import numpy as np

    vocab: dict[str, int] = {}
    n = len(fields)
    keys: list[Any] = []
    weights: list[Any] = []
    for f in CODE_FIELDS:
        lists = [ft[f] for ft in fields]
        lens = np.fromiter(map(len, lists), dtype=np.int64, count=n)
        flat = [vocab.setdefault(t, len(vocab)) for ts in lists for t in ts]
        unit = np.repeat(np.arange(n, dtype=np.int64), lens)
        avg = float(lens.mean()) if n and lens.sum() else 1.0
        norm = CODE_FIELD_WEIGHTS[f] / (1 - CODE_B + CODE_B * lens / avg)
        keys.append(np.array(flat, dtype=np.int64) * max(n, 1) + unit)
        weights.append(norm[unit])
    key = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    w = np.concatenate(weights) if weights else np.zeros(0)
    pairs, inv = np.unique(key, return_inverse=True)
    data = np.bincount(inv.ravel(), weights=w, minlength=len(pairs))
    term = pairs // max(n, 1)
    df = np.bincount(term, minlength=len(vocab))
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    return LexIndex(
        vocab=vocab,
        indptr=indptr,
        indices=(pairs % max(n, 1)).astype(np.int32),
        data=data.astype(np.float32),
        idf=idf,
        n_units=n,
    )


def _key(sources: list[Source]) -> str:
    h = hashlib.sha256(f"{INDEX_VERSION}\n".encode())
    for s in sources:
        h.update(f"{s.path}\0{s.blob}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _save(path: Path, key: str, idx: CodeIndex) -> None:
    import io

    import numpy as np

    from ncx.store import write_atomic

    meta = {
        "key": key,
        "files": idx.files,
        "units": [
            [u.path, u.qualname, u.kind, u.start, u.end, u.signature, u.doc, u.file]
            for u in idx.units
        ],
        "vocab": list(idx.lex.vocab),
    }
    g = idx.graph
    buf = io.BytesIO()
    np.savez(
        buf,
        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        indptr=idx.lex.indptr,
        indices=idx.lex.indices,
        data=idx.lex.data,
        idf=idx.lex.idf,
        g_src=g.src,
        g_dst=g.dst,
        g_weight=g.weight,
    )
    try:
        write_atomic(path, buf.getvalue())
    except OSError:
        pass


def _try_load(path: Path, key: str) -> CodeIndex | None:
    import numpy as np

    try:
        with np.load(path) as z:
            meta = json.loads(z["meta"].tobytes())
            if meta["key"] != key:
                return None
            units = [CodeUnit(*u) for u in meta["units"]]
            lex = LexIndex(
                vocab={t: i for i, t in enumerate(meta["vocab"])},
                indptr=z["indptr"],
                indices=z["indices"],
                data=z["data"],
                idf=z["idf"],
                n_units=len(units),
            )
            graph = Graph(z["g_src"], z["g_dst"], z["g_weight"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    names: dict[str, list[int]] = defaultdict(list)
    for ui, u in enumerate(units):
        if u.qualname:
            names[u.qualname.rsplit(".", 1)[-1].lower()].append(ui)
    return CodeIndex(meta["files"], units, lex, graph, dict(names))
