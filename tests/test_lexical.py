"""lexical: the vectorised BM25F index build against a plain per-unit reference."""

from __future__ import annotations

import unicodedata

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ncx.query.lexical import (
    _RAW_ASCII,
    FIELD_WEIGHTS,
    FIELDS,
    LexIndex,
    _raw,
    _sum_fields,
    build_index_from_terms,
    index_of,
    patched,
    postings,
    terms,
)

Units = list[dict[str, list[str]]]


def reference_index(field_terms: Units, b: float) -> LexIndex:
    """The definition, one unit at a time: a term's weight is its count times the field's
    normalised weight, summed over fields in FIELDS order; vocab in order of first use."""
    n = len(field_terms)
    avg = {f: (sum(len(u[f]) for u in field_terms) / n if n else 0.0) or 1.0 for f in FIELDS}
    vocab: dict[str, int] = {}
    cells: dict[tuple[int, int], float] = {}  # (column, unit) -> weight
    for i, unit in enumerate(field_terms):
        for f in FIELDS:
            toks = unit[f]
            for t in dict.fromkeys(toks):
                norm = FIELD_WEIGHTS[f] / (1 - b + b * len(toks) / avg[f])
                key = (vocab.setdefault(t, len(vocab)), i)
                cells[key] = cells.get(key, 0.0) + toks.count(t) * norm
    ordered = sorted(cells)
    df = np.bincount([c for c, _ in ordered], minlength=len(vocab)).astype(np.float64)
    return LexIndex(
        vocab=vocab,
        indptr=np.concatenate([[0], np.cumsum(df)]).astype(np.int64),
        indices=np.array([i for _, i in ordered], dtype=np.int32),
        data=np.array([cells[k] for k in ordered], dtype=np.float32),
        idf=np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32),
        n_units=n,
    )


def assert_same(got: LexIndex, want: LexIndex) -> None:
    assert list(got.vocab.items()) == list(want.vocab.items())  # insertion order too
    for name in ("indptr", "indices", "data", "idf"):
        g, w = getattr(got, name), getattr(want, name)
        assert g.dtype == w.dtype and g.tobytes() == w.tobytes(), name  # bit for bit
    assert got.n_units == want.n_units


def _unit(**fields: list[str]) -> dict[str, list[str]]:
    return {f: fields.get(f, []) for f in FIELDS}


HAND_MADE = [
    _unit(
        prose=["lex", "index", "lex"], code=["index", "cache_key"], title=["title"], path=["lex"]
    ),
    _unit(trail=["zeta", "alpha"], title=["title"]),
    _unit(
        prose=["alpha", "alpha", "alpha"],
        code=["alpha"],
        trail=["alpha", "zeta"],
        title=["alpha"],
        path=["alpha"],
    ),
    _unit(),
    _unit(code=["lex", "lex", "lex", "lex"], path=["index"]),
]


def test_build_index_matches_the_per_unit_definition() -> None:
    got = build_index_from_terms(HAND_MADE)
    assert_same(got, reference_index(HAND_MADE, b=0.8))
    # First use decides the column, across units and fields: not sorted, not by field.
    assert list(got.vocab) == ["lex", "index", "cache_key", "title", "zeta", "alpha"]
    alpha = got.vocab["alpha"]
    assert got.indices[got.indptr[alpha] : got.indptr[alpha + 1]].tolist() == [1, 2]


def test_build_index_edge_cases() -> None:
    assert_same(build_index_from_terms([]), reference_index([], b=0.8))
    assert_same(build_index_from_terms([_unit()]), reference_index([_unit()], b=0.8))
    with np.errstate(all="raise"):  # b = 1 with empty fields: nothing divides by zero
        got = build_index_from_terms(HAND_MADE, b=1.0)
    assert_same(got, reference_index(HAND_MADE, b=1.0))


def test_field_weights_are_summed_in_field_order() -> None:
    # Summation order rarely survives the cast to float32, so the index tests above cannot
    # see it; here it shows: 1 + e + e is 1 left to right, but 1 + (e + e) is not.
    e = 2.0**-53
    pairs = np.array([7, 7, 7, 9], dtype=np.int64)
    got_pairs, totals = _sum_fields(pairs, np.array([1.0, e, e, 0.25]))
    assert got_pairs.tolist() == [7, 9]
    assert totals.tolist() == [1.0, 0.25]  # not 1 + 2**-52


_TERMS = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"])


@settings(max_examples=150, deadline=None)
@given(
    units=st.lists(
        st.fixed_dictionaries({f: st.lists(_TERMS, max_size=12) for f in FIELDS}), max_size=12
    ),
    b=st.sampled_from([0.0, 0.3, 0.8, 1.0]),
)
def test_build_index_equals_the_reference_bit_for_bit(units: Units, b: float) -> None:
    assert_same(build_index_from_terms(units, b), reference_index(units, b))


def by_term(lex: LexIndex) -> dict[str, tuple[bytes, bytes, bytes]]:
    """An index as {term: (its units, their weights, its idf)}: what every score reads,
    whatever column each term has."""
    out = {}
    for t, col in lex.vocab.items():
        a, b = lex.indptr[col], lex.indptr[col + 1]
        out[t] = (lex.indices[a:b].tobytes(), lex.data[a:b].tobytes(), lex.idf[col].tobytes())
    return out


@settings(max_examples=200, deadline=None)
@given(
    old=st.lists(
        st.fixed_dictionaries({f: st.lists(_TERMS, max_size=8) for f in FIELDS}), max_size=10
    ),
    new=st.lists(
        st.fixed_dictionaries(
            {f: st.lists(st.sampled_from(["a", "b", "x", "y", "z"]), max_size=8) for f in FIELDS}
        ),
        max_size=6,
    ),
    data=st.data(),
)
def test_a_patched_index_equals_a_fresh_build_bit_for_bit(
    old: Units, new: Units, data: st.DataObject
) -> None:
    # Some old units stay (in their order, or shuffled), the others go; new ones land at
    # random places among them.
    kept = data.draw(st.lists(st.booleans(), min_size=len(old), max_size=len(old)))
    stay = [i for i, k in enumerate(kept) if k]
    if data.draw(st.booleans()):
        stay = data.draw(st.permutations(stay))
    order: list[tuple[str, int]] = [("old", i) for i in stay]
    for j in range(len(new)):
        order.insert(data.draw(st.integers(0, len(order))), ("new", j))
    rows = np.full(len(old), -1, dtype=np.int64)
    added = []
    for row, (what, i) in enumerate(order):
        if what == "old":
            rows[i] = row
        else:
            added.append((row, new[i]))
    final = [old[i] if what == "old" else new[i] for what, i in order]

    got = patched(postings(old), rows, added)
    assert set(got.vocab) == {t for u in final for f in FIELDS for t in u[f]}
    assert by_term(index_of(got)) == by_term(build_index_from_terms(final))
    assert index_of(got).n_units == len(final)


def test_words_of_any_script_are_terms() -> None:
    assert terms("Модерация, разногласия и конфликты") == ["модерация", "разногласия", "конфликты"]
    assert terms("naïve café in Zürich") == ["naïv", "café", "zürich"]  # not "na", "ve", "caf"
    assert terms("e\u0301te\u0301") == terms("\u00e9t\u00e9") == ["été"]  # decomposed or not
    assert terms("a ﬁle of ｆｕｌｌ width") == terms("a file of full width")  # NFKC
    # No spaces between words: pairs of characters, as the query's pairs meet them.
    assert terms("日本語") == ["日本", "本語"] and terms("中") == ["中"]
    assert terms("使用FastAPI框架") == ["使用", "fastapi", "fast", "api", "框架"]


def test_words_with_combining_marks_are_whole_terms() -> None:
    # Vowel signs and viramas (Devanagari, Tamil), points (Hebrew, Arabic) are marks, not \\w:
    # the words fell into letters, and single letters are dropped.
    assert terms("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert terms("தமிழ் மொழி") == ["தமிழ்", "மொழி"]
    assert terms("עִבְרִית") == [unicodedata.normalize("NFKC", "עִבְרִית")]
    assert terms("العَرَبِيَّة") == [unicodedata.normalize("NFKC", "العَرَبِيَّة")]


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_text_is_split_as_it_always_was(text: str) -> None:
    # terms() takes the ASCII pattern for ASCII text: it must give the same tokens.
    assert _raw().findall(text) == _RAW_ASCII.findall(text)


def test_the_written_mark_spans_are_what_unicodedata_lists() -> None:
    # The table saves listing 130,000 code points per process; on its own Unicode version it
    # must be exactly unicodedata's (on another, mark_spans lists them: the same by definition).
    from ncx.query.marks import _SPANS, UNIDATA_VERSION, listed, mark_spans

    assert mark_spans() == listed()
    if unicodedata.unidata_version == UNIDATA_VERSION:
        assert listed() == _SPANS
