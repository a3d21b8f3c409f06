"""retriever: rank chunks and memories for a query. Pure over a loaded Index.

BM25F is the backbone; the static-embedding cosine is fused by weighted score fusion
(normalised scores, small dense weight: equal-weight rank fusion hurt, docs/decisions.md §8).
The best candidates get bonuses for a heading that matches the query and for the query's
word pairs standing side by side in their text (§18). A query with no term BM25F indexes
(stopwords only, or words no unit holds) is matched against the units' headings word for word
(§23).
Documents are ranked by their best chunk plus shares of their second and third best, then
each contributes its best chunks, the later ones lifted toward their document's score
(docs/decisions.md §7, §26). Recency and usefulness come from
memory frontmatter only, so the same tree and query always give the same ranking.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any

from ncx.config import RankWeights
from ncx.query.cache import Index, Unit, Units
from ncx.query.lexical import WEAK_BELOW, terms

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

LEX_POOL = 300  # chunks considered for page aggregation (2k when more are asked for)
HEADING_POOL = 100  # best fused candidates checked for a heading match
PROXIMITY_POOL = 10  # best fused candidates whose text is read for the query's word pairs
TERMS_MEMO_MAX = 20_000  # units whose terms a long-lived process keeps (~1 KB each)
BODIES_MEMO_MAX = 256  # recent units' text (a query's candidates, then its results)
# Cosine credit of the units past DENSE_POOL when more results are asked for: under this,
# and the pool's own units are lifted above it, so the newcomers follow them.
_BEYOND = 0.01
DENSE_POOL = 100  # best cosine matches considered, and the min-max window for the cosine
DUPLICATE_COS = 0.98
HIDDEN_STATUSES = frozenset({"superseded", "deprecated", "proposed"})
_WORD = re.compile(r"\w+")  # a word of any script, for queries BM25F has no term of


@dataclass(frozen=True)
class Filters:
    kinds: frozenset[str] = frozenset()  # empty: all
    domains: frozenset[str] = frozenset()
    path_globs: tuple[str, ...] = ()
    include_hidden: bool = False  # superseded / deprecated / proposed memories


@dataclass(frozen=True)
class Hit:
    unit: int
    id: str
    kind: str
    source_path: str
    start_line: int | None
    end_line: int | None
    section: tuple[str, ...]
    doc_id: str | None
    score: float
    tokens: int
    why: dict[str, float] = field(default_factory=dict)
    cell: str | None = None  # notebook cell(s) the chunk comes from
    dated: str | None = None  # its doc's frontmatter date, as written
    # idf-weighted share of the query's terms found in this unit (terms the tree never
    # uses count as missing); below WEAK_BELOW the unit is weak evidence for the query.
    confidence: float = 1.0

    @property
    def weak(self) -> bool:
        return self.confidence < WEAK_BELOW

    def as_json(self, text: str) -> dict[str, Any]:
        from ncx.query.quote import shown_trail

        return {
            "id": self.id,
            "kind": self.kind,
            "source_path": self.source_path,
            "path": self.source_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "section": " > ".join(shown_trail(self.section)),
            "doc_id": self.doc_id,
            "score": round(self.score, 6),
            "tokens": self.tokens,
            "confidence": round(self.confidence, 3),
            "weak": self.weak,
            "text": text,
            **({"cell": self.cell} if self.cell else {}),
            **({"dated": self.dated} if self.dated else {}),
        }


def retrieve(
    index: Index,
    query: str,
    query_vec: NDArray[np.float32] | None,
    *,
    k: int = 10,
    weights: RankWeights = RankWeights(),
    filters: Filters = Filters(),
    per_doc: int = 0,
    demote: Callable[[list[int]], dict[int, float]] | None = None,
) -> list[Hit]:
    """The k best units for `query`; at most `per_doc` from one source document (0: no cap).

    `demote`, given the candidate memories' unit numbers, returns a score factor for some of
    them (a stale memory's, ncx.memory.cites): applied before the final order.

    Documents are ranked by their best chunk plus shares of the second and third best; a
    document's later chunks compete at their own fused score, moved `doc_lift` of the way to
    their document's score, times doc_decay per rank within the document, so a section that
    is not its document's best can still be returned, sooner when its document is strong.
    """
    import numpy as np

    n = len(index.units)
    if n == 0 or k <= 0:
        return []
    mask = _mask(index, filters)
    q_terms = terms(query)
    longness = _longness(len(set(q_terms)))
    k1 = weights.k1_short + longness * (weights.k1 - weights.k1_short)
    second = weights.second_short + longness * (weights.second_chunk - weights.second_short)
    lex = index.lex.score(q_terms, k1=k1)
    if not any(t in index.lex.vocab for t in q_terms):
        # Nothing for BM25F to score: a query of stopwords only ("Why should we not do
        # this?"), or of words no unit holds. Its words meet the headings instead; dense
        # alone left such headings out of the first few hundred (§23).
        lex = _heading_words(index, query)
    lex[~mask] = 0.0
    dense = np.zeros(n, dtype=np.float32)
    use_dense = query_vec is not None and weights.dense > 0 and bool(np.any(query_vec))
    if use_dense:
        dense = index.cosines(query_vec)
        dense[~mask] = -1.0

    cand = set(_top(lex, max(LEX_POOL, 2 * k), positive=True).tolist())
    dense_n = np.zeros(n, dtype=np.float32)
    if use_dense:
        top_d = _top(dense, DENSE_POOL, positive=True)
        cand.update(top_d.tolist())
        if len(top_d):
            hi, lo = float(dense[top_d[0]]), float(dense[top_d[-1]])
            width = hi - lo if hi > lo else 1.0
            dense_n = np.clip((dense - lo) / width, 0.0, 1.0)
        if k > DENSE_POOL and len(top_d):
            # Asked for more than the dense pool holds (a frame of a large budget over short
            # notes): the next nearest units join too, just above nothing and in the order of
            # their cosine, so a frame that has room reaches them before units with no
            # evidence at all. Below DENSE_POOL results nothing changes.
            more = _top(dense, k, positive=True)
            more = more[dense[more] < lo]
            if len(more):
                floor = float(dense[more[-1]])
                reach = lo - floor if lo > floor else 1.0
                # The pool's own units keep their order, lifted just above the newcomers.
                dense_n[top_d] = _BEYOND + (1.0 - _BEYOND) * dense_n[top_d]
                dense_n[more] = _BEYOND * (dense[more] - floor) / reach
                cand.update(more.tolist())
    if not cand:
        return []
    ids = np.fromiter(sorted(cand), dtype=np.int64)
    lex_max = float(lex[ids].max()) or 1.0
    w = weights.dense if use_dense else 0.0
    fused = (1 - w) * lex[ids] / lex_max + w * dense_n[ids]
    heading = weights.heading
    if heading > 0:
        # Only the strongest candidates can use the boost; it costs a term set per unit.
        top = np.argsort(-fused, kind="stable")[:HEADING_POOL]
        fused[top] += heading * _heading_cover(index, ids[top], q_terms)
    if weights.proximity > 0:
        # Reads the candidates' text: only the few that can still reach the top.
        top = np.argsort(-fused, kind="stable")[:PROXIMITY_POOL]
        fused[top] += weights.proximity * _proximity(index, ids[top], q_terms)
    prior = _priors(index, ids, weights)
    fused = fused + prior
    if demote is not None:
        kinds = index.column("kind")
        at = {int(u): j for j, u in enumerate(ids.tolist()) if kinds[int(u)] == "memory"}
        for u, factor in demote(sorted(at)).items():
            j = at[u]  # down by the factor's share of its size, whatever its sign
            fused[j] -= abs(float(fused[j])) * (1.0 - factor)

    # Rank documents: best chunk + a share of the second best + a smaller one of the third.
    order = np.lexsort((ids, -fused))  # score desc, then unit order: deterministic ties
    best: dict[int, list[int]] = {}
    for j in order.tolist():
        g = int(index.group[ids[j]])
        best.setdefault(g, []).append(j)
    shares = (1.0, second, second * weights.third_share)
    page_score = {
        g: sum(w * float(fused[j]) for w, j in zip(shares, js, strict=False))
        for g, js in best.items()
    }
    # Every candidate's delivered score: the page score for a document's best chunk; for
    # the others their own score moved doc_lift of the way to the page score (a section of
    # the page the query is about shares its evidence), decayed by rank within the document.
    scored: list[tuple[float, int, int, int]] = []  # (-score, doc order, rank in doc, j)
    pages = sorted(best, key=lambda g: (-page_score[g], g))
    lift = weights.doc_lift
    for p, g in enumerate(pages):
        for r, j in enumerate(best[g]):
            if r == 0:
                scored.append((-page_score[g], p, 0, j))
            elif weights.doc_decay > 0:
                own = float(fused[j])
                own += lift * (page_score[g] - own)
                scored.append((-own * weights.doc_decay**r, p, r, j))
    scored.sort()

    hits: list[Hit] = []
    # The chosen results' vectors, float32 rows filled in place: stacking a list of them
    # again for every candidate was O(k^2) (4 of the 22 s of 40 `ncx eval` questions).
    chosen = np.empty((min(k, len(scored)), index.vectors.shape[1]), dtype=np.float32)
    taken: dict[int, list[tuple[Any, Any]]] = {}
    for neg, _p, _r, j in scored:
        u = int(ids[j])
        g = int(index.group[u])
        spans = taken.setdefault(g, [])
        if per_doc and len(spans) >= per_doc:
            continue
        unit = index.units[u]
        span = (unit.start_line, unit.end_line)
        if span[0] is not None and any(_overlaps(span, t) for t in spans):
            continue
        vec = index.vectors[u]
        if _near_duplicate(vec, chosen[: len(hits)]):
            continue
        spans.append(span if span[0] is not None else (-1, -1))
        chosen[len(hits)] = vec
        hits.append(_hit(index, u, -neg, lex[u] / lex_max, float(dense_n[u]), float(prior[j])))
        if len(hits) >= k:
            break
    conf = _coverage(index, q_terms, [h.unit for h in hits])
    return [replace(h, confidence=c) for h, c in zip(hits, conf, strict=True)]


def _longness(n_terms: int) -> float:
    """0 for a query of up to 3 distinct terms (a heading, a name), 1 from 8 (a question).

    Short queries name a section: little saturation, no page bonus. Long questions are
    about a topic: tf saturates slowly and a page with two good chunks is the better page.
    """
    return min(1.0, max(0.0, (n_terms - 3) / 5))


def _heading_cover(index: Index, ids: NDArray[np.int64], q_terms: list[str]) -> NDArray[np.float32]:
    """For each candidate, how well its own heading and the query match: idf-weighted
    common terms over the larger of the two (1 only when they have the same terms).

    Known-item questions name a section by its heading; the trail field alone cannot tell
    the section from its children, which carry the same heading in their trails.
    """
    import numpy as np

    lx = index.lex
    q_cols = np.array(sorted({lx.vocab[t] for t in q_terms if t in lx.vocab}), dtype=np.int64)
    if not len(q_cols):
        return np.zeros(len(ids), dtype=np.float32)
    memo: dict[int, NDArray[np.int64]] = index.memo.setdefault("heading_cols", {})
    cols: list[NDArray[np.int64]] = []
    for u in ids.tolist():
        got = memo.get(u)
        if got is None:
            sec = index.units[u].section or ()
            found = {lx.vocab[t] for t in terms(str(sec[-1])) if t in lx.vocab} if sec else set()
            got = memo[u] = np.array(sorted(found), dtype=np.int64)
        cols.append(got)
    lens = np.fromiter(map(len, cols), dtype=np.int64, count=len(cols))
    if not lens.sum():
        return np.zeros(len(ids), dtype=np.float32)
    flat = np.concatenate(cols)
    owner = np.repeat(np.arange(len(ids)), lens)
    w = lx.idf[flat].astype(np.float64)
    total = np.bincount(owner, weights=w, minlength=len(ids))
    common = np.bincount(owner, weights=w * np.isin(flat, q_cols), minlength=len(ids))
    q_total = float(lx.idf[q_cols].sum())
    out: NDArray[np.float32] = (common / np.maximum(np.maximum(total, q_total), 1e-9)).astype(
        np.float32
    )
    return out


def _heading_words(index: Index, query: str) -> NDArray[np.float32]:
    """For each unit, the query's words (any script, stopwords kept) shared with its own
    heading, over the larger of the two word sets: 1 only for the same words."""
    import numpy as np

    q = frozenset(_WORD.findall(query.lower()))
    out = np.zeros(len(index.units), dtype=np.float32)
    if not q:
        return out
    memo: dict[int, frozenset[str]] = index.memo.setdefault("heading_words", {})
    for u in _may_share_words(index.units, q):
        words = memo.get(u)
        if words is None:
            sec = index.units[u].section or ()
            words = memo[u] = frozenset(_WORD.findall(str(sec[-1]).lower())) if sec else frozenset()
        if words:
            common = len(q & words)
            if common:
                out[u] = common / max(len(q), len(words))
    return out


def _may_share_words(units: Sequence[Unit], q: frozenset[str]) -> Iterator[int]:
    """The units whose last heading may hold one of the words `q`: each unit already
    decoded (or not a cache row at all), and each undecoded row whose `section` text (its
    JSON) has one of the words as a word, or any escape or text beyond ASCII. Decoding all
    40,000 rows of a large tree for a query of stopwords was 0.4 s; their text is read
    without decoding them, and only the rows that may match are decoded."""
    if not isinstance(units, Units):
        yield from range(len(units))
        return
    # A heading word is a maximal run of word characters of the lowered heading: in the
    # JSON of an ASCII heading without escapes it stands as it is, between non-word ones.
    alt = "|".join(re.escape(w) for w in sorted(q))
    pattern = re.compile(f"(?<!\\w)(?:{alt})(?!\\w)")
    for u in range(len(units)):
        sec = units.unread_section(u)
        if sec is None or not sec.isascii() or "\\" in sec or pattern.search(sec.lower()):
            yield u


def _proximity(index: Index, ids: NDArray[np.int64], q_terms: list[str]) -> NDArray[np.float32]:
    """For each candidate, the idf-weighted share of the query's word pairs (neighbours in
    the query, or one word apart) that stand side by side, in either order, in its text.

    BM25F scores each word on its own: "placement group" and a text that has "group" in
    one paragraph and "placement" in another score alike. A pair found together is the
    phrase, or close to it (docs/decisions.md §18).
    """
    import numpy as np

    out = np.zeros(len(ids), dtype=np.float32)
    lx = index.lex
    q = [t for t in q_terms if t in lx.vocab]  # query order, repeats kept
    weight: dict[tuple[str, str], float] = {}
    for gap in (1, 2):
        for a, b in zip(q, q[gap:], strict=False):
            if a != b:
                weight[(a, b) if a < b else (b, a)] = float(
                    lx.idf[lx.vocab[a]] + lx.idf[lx.vocab[b]]
                )
    if not weight:
        return out
    total = sum(weight.values())
    # Only a unit holding both words of some pair can score: the others are not read.
    has = {t: _contains(lx, lx.vocab[t], ids) for t in set(q)}
    maybe = np.zeros(len(ids), dtype=bool)
    for a, b in weight:
        maybe |= has[a] & has[b]
    memo: dict[int, tuple[str, ...]] = index.memo.setdefault("unit_terms", {})
    for j in np.flatnonzero(maybe).tolist():
        u = int(ids[j])
        seq = memo.get(u)
        if seq is None:
            if len(memo) >= TERMS_MEMO_MAX:
                memo.clear()
            seq = memo[u] = tuple(terms(unit_body(index, u)))
        found: set[tuple[str, str]] = set()
        prev = None  # the previous term, while it is one of the query's
        for t in seq:
            if t in has:
                if prev is not None and prev != t:
                    found.add((prev, t) if prev < t else (t, prev))
                prev = t
            else:
                prev = None
        # summed in a fixed order: a set's order follows the hash seed, and float sums
        # in another order differ in the last bit (frame JSON must be the same bytes)
        out[j] = sum(weight.get(p, 0.0) for p in sorted(found)) / total
    return out


def _contains(lx: Any, col: int, ids: NDArray[Any]) -> NDArray[np.bool_]:
    """Which of the units hold the term of column col (its postings are sorted by unit:
    the index is built in (term, unit) order)."""
    import numpy as np

    seg = lx.indices[int(lx.indptr[col]) : int(lx.indptr[col + 1])]
    pos = np.minimum(np.searchsorted(seg, ids), len(seg) - 1)
    found: NDArray[np.bool_] = seg[pos] == ids
    return found


def unit_body(index: Index, u: int) -> str:
    """The unit's body, kept for the next call: proximity reads the best candidates' text
    and a caller printing the results reads most of them again."""
    memo: dict[int, str] = index.memo.setdefault("bodies", {})
    body = memo.get(u)
    if body is None:
        if len(memo) >= BODIES_MEMO_MAX:
            memo.clear()
        body = memo[u] = index.body(u)
    return body


def _coverage(index: Index, q_terms: list[str], units: list[int]) -> list[float]:
    """For each unit, the idf-weighted share of the query's distinct terms it contains;
    terms no unit has count as missing, with the idf such a term would have."""
    import numpy as np

    lx = index.lex
    qset = set(q_terms)
    if not qset or not units:
        return [0.0] * len(units)
    unknown = float(np.log(1 + (lx.n_units + 0.5) / 0.5))
    us = np.asarray(units, dtype=np.int32)
    total = 0.0
    got = np.zeros(len(units), dtype=np.float64)
    shared = np.zeros(len(units), dtype=np.int32)  # how many of the query's terms each holds
    unseen = False
    for t in sorted(qset):  # a fixed order: float sums are order-sensitive
        col = lx.vocab.get(t)
        if col is None:
            total += unknown
            unseen = True
            continue
        w = float(lx.idf[col])
        total += w
        has = _contains(lx, col, us)
        got += w * has
        shared += has.astype(np.int32)
    if total <= 0:
        return [0.0] * len(units)
    conf = got / total
    if unseen and len(qset) >= 2:
        # Trigger: the question names something no unit of the tree uses, and a unit shares
        # one word of it. Why: in a small tree any word is rare, so that one word's idf
        # ("values" in 1 of 4 units) outweighed the unseen subject's and hid the weak
        # evidence. Outcome: one shared word is weak evidence for such a question.
        conf = np.where(shared <= 1, np.minimum(conf, WEAK_BELOW / 2), conf)
    return [float(c) for c in conf]


def _hit(index: Index, u: int, score: float, lex: float, dense: float, prior: float) -> Hit:
    unit = index.units[u]
    return Hit(
        unit=u,
        id=unit.id,
        kind=unit.kind,
        source_path=unit.source_path,
        start_line=unit.start_line,
        end_line=unit.end_line,
        section=tuple(unit.section or ()),
        doc_id=unit.doc_id,
        score=score,
        tokens=int(unit.tokens or 0),
        why={"bm25f": round(float(lex), 4), "dense": round(dense, 4), "prior": round(prior, 4)},
        cell=unit.cell,
        dated=unit.dated,
    )


def _top(scores: NDArray[np.float32], n: int, *, positive: bool) -> NDArray[np.int64]:
    """Indices of the n highest scores, best first (ties by index); >0 only if positive."""
    import numpy as np

    if len(scores) > n:
        part = np.argpartition(-scores, n)[:n]
    else:
        part = np.arange(len(scores))
    part = part[np.lexsort((part, -scores[part]))]
    if positive:
        part = part[scores[part] > 0]
    return part.astype(np.int64)


def _mask(index: Index, f: Filters) -> NDArray[np.bool_]:
    import numpy as np

    cached: NDArray[np.bool_] | None = index.memo.get(("mask", f))
    if cached is not None:
        return np.array(cached, dtype=bool)

    # From the index's columns: every unit is looked at, and decoding each was most of a
    # warm query on a large tree (cache.Units). One pass per filter that is set (a call per
    # unit and filter was 15 ms a mask on 40,000 units).
    keep = np.ones(len(index.units), dtype=bool)
    if not f.include_hidden:
        keep &= np.fromiter(
            (s not in HIDDEN_STATUSES for s in index.column("status")), bool, len(keep)
        )
    if f.kinds:
        keep &= np.fromiter((k in f.kinds for k in index.column("kind")), bool, len(keep))
    if f.domains:
        domains = index.column("domain")
        keep &= np.fromiter((str(d or "").lower() in f.domains for d in domains), bool, len(keep))
    if f.path_globs:
        paths = index.column("source_path")
        keep &= np.fromiter(
            (any(fnmatch.fnmatchcase(p, g) for g in f.path_globs) for p in paths), bool, len(keep)
        )
    index.memo[("mask", f)] = keep
    return np.array(keep, dtype=bool)


def _priors(index: Index, ids: NDArray[np.int64], w: RankWeights) -> NDArray[np.float32]:
    """Recency and usefulness from memory frontmatter, relative to the newest memory."""
    import numpy as np

    prior = np.zeros(len(ids), dtype=np.float32)
    if w.recency == 0 and w.usefulness == 0:
        return prior
    memories = index.memo.get("memory_units")
    if memories is None:
        memories = index.memo["memory_units"] = np.array(
            [k == "memory" for k in index.column("kind")], dtype=bool
        )
    if not memories[ids].any():
        return prior
    dates = [
        _date(index.units[u].updated) if index.units[u].kind == "memory" else None
        for u in ids.tolist()
    ]
    known = [d for d in dates if d is not None]
    newest = max(known) if known else None
    for j, u in enumerate(ids.tolist()):
        unit = index.units[u]
        if unit.kind != "memory":
            continue
        d = dates[j]
        if newest is not None and d is not None:
            age = (newest - d).days
            prior[j] += w.recency * (0.5 ** (age / 180))  # half-life: six months
        useful = unit.usefulness
        if useful is not None:
            prior[j] += w.usefulness * (float(useful) - 0.5)
    return prior


def _date(raw: Any) -> date | None:
    try:
        return date.fromisoformat(str(raw)[:10])
    except (TypeError, ValueError):
        return None


def _overlaps(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    """Whether the two line ranges share more than half of the shorter one: windows of a
    long section overlap by a few lines on purpose and are still different results."""
    shared = min(a[1], b[1]) - max(a[0], b[0]) + 1
    return bool(shared > 0 and 2 * shared > min(a[1] - a[0], b[1] - b[0]) + 1)


def _near_duplicate(vec: Any, chosen: Any) -> bool:
    import numpy as np

    if not len(chosen) or not np.any(vec):
        return False
    sims = np.asarray(chosen, dtype=np.float32) @ np.asarray(vec, dtype=np.float32)
    return bool(sims.max() >= DUPLICATE_COS)
