"""lexical: BM25F over chunk fields, as flat numpy arrays (no scipy at query time).

Fields (research/lexical-levers.md §2): prose, code, heading trail, doc title, path.
Each field's term frequency is length-normalised on its own and weighted, then the sum
is saturated once (BM25F). Identifiers are split (snake_case, camelCase: the compound
and its parts), English stopwords dropped, words Snowball-stemmed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ncx.docs import STOPWORDS

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

FIELDS = ("prose", "code", "trail", "title", "path")
FIELD_WEIGHTS = {"prose": 1.0, "code": 0.5, "trail": 1.0, "title": 1.0, "path": 1.0}
# Long natural-language questions want strong saturation; b favours short chunks a little.
K1 = 5.0
B = 0.8

_RAW = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_FENCE_BLOCK = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.MULTILINE | re.DOTALL)


class _Stems:
    """Snowball English with a memo: the same few thousand words recur everywhere."""

    def __init__(self) -> None:
        import Stemmer

        self._stem = Stemmer.Stemmer("english").stemWord
        self._memo: dict[str, str] = {}

    def __call__(self, word: str) -> str:
        s = self._memo.get(word)
        if s is None:
            s = self._memo[word] = self._stem(word)
        return s


_stems: _Stems | None = None


def terms(text: str) -> list[str]:
    """Index terms of a text: split identifiers, drop stopwords, stem."""
    global _stems
    if _stems is None:
        _stems = _Stems()
    stem = _stems
    out: list[str] = []
    for raw in _RAW.findall(text):
        parts = [p for p in raw.split("_") if p]
        pieces: list[str] = []
        for p in parts:
            pieces.extend(_CAMEL.findall(p) or [p])
        if len(pieces) > 1:
            compound = raw.lower().strip("_")
            if compound not in STOPWORDS:
                out.append(compound)
        for piece in pieces:
            w = piece.lower()
            if w in STOPWORDS or (len(w) < 2 and not w.isdigit()):
                continue
            out.append(stem(w))
    return out


def split_code(text: str) -> tuple[str, str]:
    """(prose, code) of a markdown text: fenced blocks are code."""
    code = [m.group(0) for m in _FENCE_BLOCK.finditer(text)]
    prose = _FENCE_BLOCK.sub(" ", text) if code else text
    return prose, "\n".join(code)


def path_words(path: str) -> str:
    return re.sub(r"[/_.\-]+", " ", path.rsplit(".", 1)[0])


@dataclass(frozen=True)
class LexIndex:
    """Weighted term frequencies by column: term t is in units indices[indptr[t]:indptr[t+1]]."""

    vocab: dict[str, int]
    indptr: NDArray[np.int64]
    indices: NDArray[np.int32]
    data: NDArray[np.float32]
    idf: NDArray[np.float32]
    n_units: int

    def score(self, query_terms: Iterable[str], k1: float = K1) -> NDArray[np.float32]:
        import numpy as np

        scores = np.zeros(self.n_units, dtype=np.float32)
        for t in set(query_terms):
            col = self.vocab.get(t)
            if col is None:
                continue
            a, b = self.indptr[col], self.indptr[col + 1]
            x = self.data[a:b]
            scores[self.indices[a:b]] += self.idf[col] * x * (k1 + 1) / (x + k1)
        return scores


def build_index(units: Sequence[dict[str, str]], b: float = B) -> LexIndex:
    """Build BM25F arrays from units given as {field: text}. Lucene idf over units."""
    return build_index_from_terms([{f: terms(u.get(f, "")) for f in FIELDS} for u in units], b)


def build_index_from_terms(field_terms: Sequence[dict[str, list[str]]], b: float = B) -> LexIndex:
    """Build BM25F arrays from units already turned into {field: index terms}."""
    import numpy as np

    n = len(field_terms)
    avg = {f: (sum(len(ft[f]) for ft in field_terms) / n if n else 0.0) or 1.0 for f in FIELDS}
    vocab: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for i, ft in enumerate(field_terms):
        acc: dict[str, float] = {}
        for f in FIELDS:
            toks = ft[f]
            if not toks:
                continue
            norm = FIELD_WEIGHTS[f] / (1 - b + b * len(toks) / avg[f])
            for t, c in Counter(toks).items():
                acc[t] = acc.get(t, 0.0) + c * norm
        for t, v in acc.items():
            col = vocab.setdefault(t, len(vocab))
            rows.append(i)
            cols.append(col)
            vals.append(v)
    col_arr = np.asarray(cols, dtype=np.int64)
    order = np.argsort(col_arr, kind="stable")
    counts = np.bincount(col_arr, minlength=len(vocab))
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    df = counts.astype(np.float64)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    return LexIndex(
        vocab=vocab,
        indptr=indptr,
        indices=np.asarray(rows, dtype=np.int32)[order],
        data=np.asarray(vals, dtype=np.float32)[order],
        idf=idf,
        n_units=n,
    )
