"""lexical: BM25F over chunk fields, as flat numpy arrays (no scipy at query time).

Fields (docs/decisions.md §6, §19): prose, code, heading trail, doc title, path, and the
doc's frontmatter values (ncx.query.docmeta).
Each field's term frequency is length-normalised on its own and weighted, then the sum
is saturated once (BM25F). Identifiers are split (snake_case, camelCase: the compound
and its parts), English stopwords dropped, words Snowball-stemmed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from ncx.words import STOPWORDS

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

FIELDS = ("prose", "code", "trail", "title", "path", "meta")
# A result holding under this idf-weighted share of the query's terms is weak evidence for it
# (`weak` in JSON, a line on stderr and in the frame), a doc's or a code file's alike.
# Calibrated on the dev suite: it flags 0-8% of doc questions (18% of LoCoMo notes, too
# short to hold a question's terms), and those miss the top 10 twice as often (SUITE.md).
WEAK_BELOW = 0.3
# A frontmatter value is a property the doc declares of itself: one mention comes close to
# saturating its term (weight 8 against k1 1.2-2.5; swept 1-12 on the suite, §19).
FIELD_WEIGHTS = {"prose": 1.0, "code": 0.5, "trail": 1.0, "title": 1.0, "path": 1.0, "meta": 8.0}
# Long natural-language questions want strong saturation; b favours short chunks a little.
K1 = 5.0
B = 0.8
# Length normalisation per field (a heading trail or a title is short by nature). Frontmatter
# values get none: a handful of short properties, and most units of a tree have none, so an
# average over all units would be near zero and crush the few that do (§19).
FIELD_B = {"prose": B, "code": B, "trail": B, "title": B, "path": B, "meta": 0.0}

# A token: letters and digits of any script with their combining marks, underscores inside
# identifiers. Only ASCII ones were read until §24: a doc in Russian or Chinese could not be
# found by its words.


@functools.cache
def _raw() -> re.Pattern[str]:
    """The token pattern. `\\w` has no combining marks (category M): without them a word of
    Devanagari, Bengali, Tamil or pointed Hebrew and Arabic fell into single letters, which are
    dropped ("हिन्दी भाषा" had no term). The marks' spans come from ncx.query.marks."""
    from ncx.query.marks import mark_spans

    marks = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in mark_spans())
    return re.compile(f"[\\w{marks}]+")


_RAW_ASCII = re.compile(r"[A-Za-z0-9_]+")  # the same tokens for ASCII text, a quarter faster
# Scripts written without spaces between words (Han, kana; Thai, Lao, Myanmar, Khmer): a
# run is indexed as its overlapping character pairs, as common CJK analysis does (a run of
# Thai was one term: a whole sentence); a lone character stays itself.
_UNSPACED = re.compile(
    r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
    r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
)
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
    raws = (_RAW_ASCII if text.isascii() else _raw()).findall(text)
    found = list(map(_TOKEN_TERMS.get, raws))
    if None in found:
        for i, got in enumerate(found):
            if got is None:
                found[i] = _TOKEN_TERMS[raws[i]] = _token_terms(raws[i])
    if "May" in text:
        _months(raws, found)
    return list(chain.from_iterable(found))  # type: ignore[arg-type]


def _months(raws: list[str], found: list[tuple[str, ...] | None]) -> None:
    """ "May" beside a number is the month ("8 May 2023", "May 8"), not the stopword: dates in
    questions and in frontmatter values (ncx.query.docmeta) meet on it (§19)."""
    for i, raw in enumerate(raws):
        if raw == "May" and any(0 <= j < len(raws) and raws[j].isdigit() for j in (i - 1, i + 1)):
            found[i] = ("may",)


# raw token -> its terms. A tree of 10k chunks has ~14M raw tokens but only ~100k distinct
# ones, so splitting and stemming each distinct token once took the cache build's term
# extraction from 3.3 s to under 1 s (rust-lang/rfcs). Bounded: cleared when it grows large.
_TOKEN_TERMS: dict[str, tuple[str, ...]] = {}
_TOKEN_TERMS_MAX = 500_000


def _token_terms(raw: str) -> tuple[str, ...]:
    if len(_TOKEN_TERMS) > _TOKEN_TERMS_MAX:
        _TOKEN_TERMS.clear()
    return _word_terms(raw) if raw.isascii() else _unicode_terms(raw)


def _unicode_terms(raw: str) -> tuple[str, ...]:
    """Terms of a token with characters beyond ASCII. NFKC first, so a ligature, a
    full-width or a decomposed letter is the letter ("ﬁle" is "file", "é" one character);
    then a run of a script without spaces gives its character pairs and the rest are words
    as any other."""
    import unicodedata

    out: list[str] = []
    for token in _raw().findall(unicodedata.normalize("NFKC", raw)):
        at = 0
        for run in _UNSPACED.finditer(token):
            if run.start() > at:
                out += _word_terms(token[at : run.start()])
            chars = run.group()
            out += [chars] if len(chars) == 1 else [chars[i : i + 2] for i in range(len(chars) - 1)]
            at = run.end()
        if at < len(token):
            out += _word_terms(token[at:])
    return tuple(out)


def _word_terms(raw: str) -> tuple[str, ...]:
    global _stems
    if _stems is None:
        _stems = _Stems()
    pieces = _pieces(raw)
    out: list[str] = []
    if len(pieces) > 1:
        compound = _lower(raw).strip("_")
        if compound not in STOPWORDS:
            out.append(compound)
    for piece in pieces:
        w = _lower(piece)
        if w in STOPWORDS or (len(w) < 2 and not w.isdigit()):
            continue
        out.append(_stems(w))
    return tuple(out)


def _lower(word: str) -> str:
    """A word's letters as terms hold them, for the index and the query alike: lower case,
    and German ß (ẞ lowers to it) as "ss", the spelling of Swiss German and of a keyboard
    without it ("Straße" and "strasse" are one word). After the identifier split: "ss"
    inside "GROẞE" would cut it into camelCase pieces."""
    w = word.lower()
    return w.replace("ß", "ss") if "ß" in w else w


def _pieces(raw: str) -> list[str]:
    """The parts of an identifier: snake_case and camelCase split, digits apart (camelCase
    in ASCII letters only: a word of another script is one piece)."""
    pieces: list[str] = []
    for p in raw.split("_"):
        if p:
            pieces.extend((_CAMEL.findall(p) or [p]) if p.isascii() else [p])
    return pieces


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
        for t in sorted(set(query_terms)):  # a fixed order: float sums are order-sensitive
            col = self.vocab.get(t)
            if col is not None:
                add_saturated(scores, self, col, k1)
        return scores


def add_saturated(scores: NDArray[np.float32], lx: Any, col: int, k1: float) -> None:
    """Add term `col`'s BM25 contribution to every unit holding it: idf * tf(k1 + 1)/(tf + k1)
    over the term-major arrays (indptr, indices, data, idf) that LexIndex and the code index
    (ncx.code.index.CodeLex) share."""
    a, b = lx.indptr[col], lx.indptr[col + 1]
    x = lx.data[a:b]
    scores[lx.indices[a:b]] += lx.idf[col] * x * (k1 + 1) / (x + k1)


def build_index(units: Sequence[dict[str, str]], b: float | None = None) -> LexIndex:
    """Build BM25F arrays from units given as {field: text}. Lucene idf over units."""
    return build_index_from_terms([{f: terms(u.get(f, "")) for f in FIELDS} for u in units], b)


def build_index_from_terms(
    field_terms: Sequence[dict[str, list[str]]], b: float | None = None
) -> LexIndex:
    """Build BM25F arrays from units already turned into {field: index terms}.

    b: one length normalisation for every field; None takes FIELD_B.
    """
    return index_of(postings(field_terms), b)


@dataclass(frozen=True)
class Postings:
    """What the BM25F arrays are computed from: the count of every (term, unit, field), in
    that order, and every unit's field lengths. The cache keeps them beside the arrays so a
    change to a few units is a patch (`patched`), not a rebuild from every unit's terms: the
    weights depend on all units' lengths and the idf on all units' terms, but both are array
    work over these counts (docs/decisions.md §22)."""

    vocab: list[str]  # term id -> term
    ptr: NDArray[np.int64]  # the entries of term id t: [ptr[t], ptr[t + 1])
    seg: NDArray[np.int32]  # an entry's unit << 3 | its field's place in FIELDS
    count: NDArray[np.int32]
    lens: NDArray[np.int32]  # (units, fields): terms in each field of each unit


_UNIT_SHIFT = 3  # seg = unit << 3 | field: FIELDS has fewer than 8 fields
_FIELD_BITS = (1 << _UNIT_SHIFT) - 1  # seg & _FIELD_BITS: the field
assert len(FIELDS) <= 1 << _UNIT_SHIFT


def postings(field_terms: Sequence[dict[str, list[str]]]) -> Postings:
    """The postings of units given as {field: index terms}; vocab in order of first use.

    Array work over all term occurrences at once, not a Counter per field: with ten
    thousand units a Python loop per (unit, term) dominated cache builds.
    """
    import numpy as np

    n, nf = len(field_terms), len(FIELDS)
    lists = [ft[f] for ft in field_terms for f in FIELDS]  # unit-major, fields in FIELDS order
    lens = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    vocab, ids = _term_ids(lists)
    # One key per occurrence: (term, unit, field) in that significance, so the sorted
    # unique keys are the counts already in the order of the index.
    cells = np.repeat(np.arange(n * nf), lens)  # unit * nf + field of each occurrence
    keys, counts = np.unique(ids * (n * nf) + cells, return_counts=True)
    term, cell = np.divmod(keys, n * nf)
    unit, fld = np.divmod(cell, nf)
    return Postings(
        vocab=list(vocab),
        ptr=_ptr(term, len(vocab)),
        seg=((unit << _UNIT_SHIFT) | fld).astype(np.int32),
        count=counts.astype(np.int32),
        lens=lens.reshape(n, nf).astype(np.int32),
    )


def patched(
    old: Postings, rows: NDArray[np.int64], added: Sequence[tuple[int, dict[str, list[str]]]]
) -> Postings:
    """`old` with its units moved to new rows and new units put in, in array work over the
    entries: `rows[u]` is old unit u's new row (-1: gone), `added` the new units as (row,
    {field: index terms}). Every row of the result is one or the other.

    Equal to `postings` of the new units in their new order, except for the order of the
    vocabulary (terms new to the tree are appended; terms no unit holds any more are dropped),
    which no score depends on.
    """
    import numpy as np

    n = int(max(rows.max(initial=-1), max((r for r, _ in added), default=-1))) + 1
    term = np.repeat(np.arange(len(old.vocab), dtype=np.int64), np.diff(old.ptr))
    unit = rows[old.seg >> _UNIT_SHIFT]
    keep = unit >= 0
    term, unit = term[keep], unit[keep]
    seg = (unit << _UNIT_SHIFT) | (old.seg[keep] & _FIELD_BITS)
    count = old.count[keep]
    moved = rows[rows >= 0]
    if np.any(moved[1:] <= moved[:-1]):  # kept units changed order: sort again
        order = np.lexsort((seg, term))
        term, seg, count = term[order], seg[order], count[order]

    vocab = list(old.vocab)
    new = postings([ft for _, ft in added])
    # The new units' term ids in the old vocabulary (new terms appended) and their rows.
    at = {t: i for i, t in enumerate(vocab)}
    for t in new.vocab:
        if t not in at:
            at[t] = len(vocab)
            vocab.append(t)
    new_term = np.fromiter(map(at.__getitem__, new.vocab), dtype=np.int64, count=len(new.vocab))
    new_term = np.repeat(new_term, np.diff(new.ptr))
    placed = np.array([r for r, _ in added], dtype=np.int64)
    new_seg = (placed[new.seg >> _UNIT_SHIFT] << _UNIT_SHIFT) | (new.seg & _FIELD_BITS)
    order = np.lexsort((new_seg, new_term))
    new_term, new_seg, new_count = new_term[order], new_seg[order], new.count[order]
    where = np.searchsorted((term << 32) | seg, (new_term << 32) | new_seg)
    term = np.insert(term, where, new_term)
    seg = np.insert(seg, where, new_seg)
    count = np.insert(count, where, new_count)

    held = np.bincount(term, minlength=len(vocab)) > 0
    if not held.all():  # drop the terms of removed units that no unit holds any more
        term = (np.cumsum(held) - 1)[term]
        vocab = [t for t, h in zip(vocab, held.tolist(), strict=True) if h]
    lens = np.zeros((n, len(FIELDS)), dtype=np.int32)
    lens[moved] = old.lens[rows >= 0]
    lens[placed] = new.lens
    return Postings(vocab, _ptr(term, len(vocab)), seg.astype(np.int32), count, lens)


def _ptr(term: NDArray[np.int64], n_terms: int) -> NDArray[np.int64]:
    import numpy as np

    ptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(term, minlength=n_terms), out=ptr[1:])
    return ptr


def index_of(p: Postings, b: float | None = None) -> LexIndex:
    """The BM25F arrays of these postings (b: one length normalisation for every field;
    None takes FIELD_B)."""
    import numpy as np

    n, nf = p.lens.shape
    unit = (p.seg >> _UNIT_SHIFT).astype(np.int64)
    cell = unit * nf + (p.seg & _FIELD_BITS)  # unit * nf + field
    lens = p.lens.reshape(-1).astype(np.int64)
    weights = p.count * _field_norms(lens, n, b, cell)
    term = np.repeat(np.arange(len(p.vocab), dtype=np.int64), np.diff(p.ptr))
    pairs, data = _sum_fields(term * n + unit, weights)  # pair = term * n + unit
    df = np.bincount(pairs // n, minlength=len(p.vocab))
    indptr = np.zeros(len(p.vocab) + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    return LexIndex(
        vocab={t: i for i, t in enumerate(p.vocab)},
        indptr=indptr,
        indices=(pairs % n).astype(np.int32),
        data=data.astype(np.float32),
        idf=idf,
        n_units=n,
    )


def _term_ids(lists: list[list[str]]) -> tuple[dict[str, int], NDArray[np.int64]]:
    """The vocabulary in order of first occurrence, and the term id of every occurrence."""
    import numpy as np

    flat = list(chain.from_iterable(lists))
    vocab = {t: i for i, t in enumerate(dict.fromkeys(flat))}
    return vocab, np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))


def _field_norms(
    lens: NDArray[np.int64], n: int, b: float | None, seg: NDArray[np.int64]
) -> NDArray[np.float64]:
    """BM25F length normalisation times field weight, for each (unit * nf + field) in seg.

    Computed once per (unit, field) and gathered: the same arithmetic per entry, over the
    cells of a tree rather than its millions of entries. Only cells with terms are looked
    up, so b = 1 over an empty field's zero average divides by nothing that is used.
    """
    import numpy as np

    nf = len(FIELDS)
    avg = np.array([(int(t) / n if n else 0.0) or 1.0 for t in lens.reshape(n, nf).sum(axis=0)])
    weight = np.array([FIELD_WEIGHTS[f] for f in FIELDS])
    bs = np.array([FIELD_B[f] if b is None else b for f in FIELDS])
    with np.errstate(divide="ignore", invalid="ignore"):
        cell = weight / (1 - bs + bs * lens.reshape(n, nf) / avg)
    norm: NDArray[np.float64] = cell.reshape(-1)[seg]
    return norm


def _sum_fields(
    pairs: NDArray[np.int64], weights: NDArray[np.float64]
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """(distinct pairs, their weights summed) for entries sorted by pair, then field.

    A pair's sum starts at its first field and adds the others one by one in FIELDS order,
    the order scores have always been summed in, so cached float32 data stay bit-identical;
    np.add.reduceat would add (w1 + w2) to w0 and round differently. Most pairs have one
    field, so only the others go through the loop.
    """
    import numpy as np

    start = np.empty(len(pairs), dtype=bool)
    start[:1] = True
    np.not_equal(pairs[1:], pairs[:-1], out=start[1:])
    first = np.flatnonzero(start)
    total = weights[first]
    later = np.flatnonzero(~start)
    group = np.cumsum(start)[later] - 1
    rank = later - first[group]  # 1 for a pair's second field, 2 for its third, ...
    for k in range(1, len(FIELDS)):
        at = rank == k  # one entry per pair, so a plain fancy += is exact
        total[group[at]] += weights[later[at]]
    return pairs[first], total
