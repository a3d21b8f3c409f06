"""retriever: rank chunks and memories for a query. Pure over a loaded Index.

BM25F is the backbone; the static-embedding cosine is fused by weighted score fusion
(normalised scores, small dense weight: equal-weight rank fusion hurt, docs/decisions.md §8).
Documents are ranked by their best chunk plus a share of their second best, then each
contributes its best chunks (docs/decisions.md §7). Recency and usefulness come from
memory frontmatter only, so the same tree and query always give the same ranking.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from ncx.config import RankWeights
from ncx.query.cache import Index
from ncx.query.lexical import terms

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

LEX_POOL = 300  # chunks considered for page aggregation
DENSE_POOL = 100  # best cosine matches considered, and the min-max window for the cosine
DUPLICATE_COS = 0.98
HIDDEN_STATUSES = frozenset({"superseded", "deprecated", "proposed"})


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

    def as_json(self, text: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "source_path": self.source_path,
            "path": self.source_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "section": " > ".join(self.section),
            "doc_id": self.doc_id,
            "score": round(self.score, 6),
            "tokens": self.tokens,
            "text": text,
            **({"cell": self.cell} if self.cell else {}),
        }


def retrieve(
    index: Index,
    query: str,
    query_vec: NDArray[np.float32] | None,
    *,
    k: int = 10,
    weights: RankWeights = RankWeights(),
    filters: Filters = Filters(),
    per_doc: int = 1,
) -> list[Hit]:
    """The k best units for `query`, at most `per_doc` from one source document."""
    import numpy as np

    n = len(index.units)
    if n == 0 or k <= 0:
        return []
    mask = _mask(index, filters)
    lex = index.lex.score(terms(query))
    lex[~mask] = 0.0
    dense = np.zeros(n, dtype=np.float32)
    use_dense = query_vec is not None and weights.dense > 0 and bool(np.any(query_vec))
    if use_dense:
        dense = index.cosines(query_vec)
        dense[~mask] = -1.0

    cand = set(_top(lex, LEX_POOL, positive=True).tolist())
    dense_n = np.zeros(n, dtype=np.float32)
    if use_dense:
        top_d = _top(dense, DENSE_POOL, positive=True)
        cand.update(top_d.tolist())
        if len(top_d):
            hi, lo = float(dense[top_d[0]]), float(dense[top_d[-1]])
            width = hi - lo if hi > lo else 1.0
            dense_n = np.clip((dense - lo) / width, 0.0, 1.0)
    if not cand:
        return []
    ids = np.fromiter(sorted(cand), dtype=np.int64)
    lex_max = float(lex[ids].max()) or 1.0
    w = weights.dense if use_dense else 0.0
    fused = (1 - w) * lex[ids] / lex_max + w * dense_n[ids]
    prior = _priors(index, ids, weights)
    fused = fused + prior

    # Rank documents: best chunk + a share of the second best.
    order = np.lexsort((ids, -fused))  # score desc, then unit order: deterministic ties
    best: dict[int, list[int]] = {}
    for j in order.tolist():
        g = int(index.group[ids[j]])
        best.setdefault(g, []).append(j)
    page_score = {
        g: float(fused[js[0]])
        + (weights.second_chunk * float(fused[js[1]]) if len(js) > 1 else 0.0)
        for g, js in best.items()
    }
    pages = sorted(best, key=lambda g: (-page_score[g], g))

    hits: list[Hit] = []
    chosen_vecs: list[Any] = []
    for g in pages:
        taken: list[tuple[Any, Any]] = []
        for j in best[g]:
            if len(taken) >= per_doc:
                break
            u = int(ids[j])
            unit = index.units[u]
            span = (unit.get("start_line"), unit.get("end_line"))
            if span[0] is not None and any(_overlaps(span, t) for t in taken):
                continue
            vec = index.vectors[u]
            if _near_duplicate(vec, chosen_vecs):
                continue
            taken.append(span if span[0] is not None else (-1, -1))
            chosen_vecs.append(vec)
            score = page_score[g] if len(taken) == 1 else float(fused[j])
            hits.append(_hit(index, u, score, lex[u] / lex_max, float(dense_n[u]), float(prior[j])))
            if len(hits) >= k:
                return hits
    return hits


def _hit(index: Index, u: int, score: float, lex: float, dense: float, prior: float) -> Hit:
    unit = index.units[u]
    return Hit(
        unit=u,
        id=unit["id"],
        kind=unit["kind"],
        source_path=unit["source_path"],
        start_line=unit.get("start_line"),
        end_line=unit.get("end_line"),
        section=tuple(unit.get("section") or ()),
        doc_id=unit.get("doc_id"),
        score=score,
        tokens=int(unit.get("tokens") or 0),
        why={"bm25f": round(lex, 4), "dense": round(dense, 4), "prior": round(prior, 4)},
        cell=unit.get("cell"),
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

    def ok(u: dict[str, Any]) -> bool:
        if not f.include_hidden and u.get("status") in HIDDEN_STATUSES:
            return False
        if f.kinds and u["kind"] not in f.kinds:
            return False
        if f.domains and str(u.get("domain") or "").lower() not in f.domains:
            return False
        return not f.path_globs or any(
            fnmatch.fnmatchcase(u["source_path"], g) for g in f.path_globs
        )

    keep = np.fromiter((ok(u) for u in index.units), dtype=bool, count=len(index.units))
    index.memo[("mask", f)] = keep
    return np.array(keep, dtype=bool)


def _priors(index: Index, ids: NDArray[np.int64], w: RankWeights) -> NDArray[np.float32]:
    """Recency and usefulness from memory frontmatter, relative to the newest memory."""
    import numpy as np

    prior = np.zeros(len(ids), dtype=np.float32)
    if w.recency == 0 and w.usefulness == 0:
        return prior
    dates = [
        _date(index.units[u].get("updated")) if index.units[u]["kind"] == "memory" else None
        for u in ids.tolist()
    ]
    known = [d for d in dates if d is not None]
    newest = max(known) if known else None
    for j, u in enumerate(ids.tolist()):
        unit = index.units[u]
        if unit["kind"] != "memory":
            continue
        d = dates[j]
        if newest is not None and d is not None:
            age = (newest - d).days
            prior[j] += w.recency * (0.5 ** (age / 180))  # half-life: six months
        useful = unit.get("usefulness")
        if useful is not None:
            prior[j] += w.usefulness * (float(useful) - 0.5)
    return prior


def _date(raw: Any) -> date | None:
    try:
        return date.fromisoformat(str(raw)[:10])
    except (TypeError, ValueError):
        return None


def _overlaps(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    return bool(a[0] <= b[1] and b[0] <= a[1])


def _near_duplicate(vec: Any, chosen: Sequence[Any]) -> bool:
    import numpy as np

    if not chosen or not np.any(vec):
        return False
    sims = np.asarray(chosen, dtype=np.float32) @ np.asarray(vec, dtype=np.float32)
    return bool(sims.max() >= DUPLICATE_COS)
