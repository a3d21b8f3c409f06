"""fuse: docs and memories merged with code, for every caller that lists results.

Merging code with docs and memories: the two rankings score different things on different
scales, so neither score is compared with the other. Each list keeps its own order, and they
are interleaved by evidence: a result's score relative to its own list's best, times the
idf-weighted share of the query's terms it holds (its confidence), a code hit's discounted
(CODE_IN_LIST: a file holds more of any query's words than a section does). A docs question
keeps its docs on top, and a task that names the code's identifiers gets the code first.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ncx.code.rank import CodeHit
from ncx.code.search import CodeSearcher, best_per_file
from ncx.query.rank import Filters
from ncx.query.search import Searcher


def combined(
    searcher: Searcher,
    code: CodeSearcher,
    query: str,
    k: int,
    filters: Filters,
    *,
    explain: bool = False,
) -> list[dict[str, Any]]:
    """One query's results as JSON objects, for every caller that lists results (the CLI,
    the MCP server): docs and memories, code, or both interleaved, as `filters.kinds` asks
    (none: all three)."""
    kinds = filters.kinds
    want_code = not kinds or "code" in kinds
    want_docs = not kinds or bool(kinds - {"code"})
    docs_only = dataclasses.replace(filters, kinds=kinds - {"code"})
    hits = searcher.search(query, k=k, filters=docs_only) if want_docs else []
    code_hits = code.search(query, files=k, path_globs=filters.path_globs) if want_code else []
    if not want_docs:  # k results: each of the k files' best definition
        return [code.hit_json(h, explain=explain) for h in best_per_file(code_hits)]

    def doc_json(h: Any) -> dict[str, Any]:
        out = searcher.hit_json(h, explain=explain)
        if explain:  # the code a doc or memory names (ncx.code.links)
            out["links"] = [link.label() for link in code.links(out["text"])]
        return out

    return [
        code.hit_json(h, explain=explain) if isinstance(h, CodeHit) else doc_json(h)
        for h in merged(hits, code_hits, k)
    ]


def merged(hits: list[Any], code_hits: list[CodeHit], k: int) -> list[Any]:
    """The k best of a docs-and-memories ranking and a code ranking (each file's best
    definition), interleaved by evidence (see the module's note)."""
    return interleave(
        [(h.score, h.confidence, h) for h in hits],
        [(c.file_score, c.confidence, c) for c in best_per_file(code_hits)],
        k,
    )


# A code hit's evidence counts this much against a doc's when the two lists are merged. A
# file's confidence is the share of the query's terms anywhere in the file, a section's only in
# the section, so at 1.0 code crowded docs questions (fastapi's docs questions over its docs
# and its 1,103 Python files: MRR@10 0.949 with docs alone, 0.927 merged); at 0.6 the docs
# keep 0.948 and commit tasks still find a gold file at median rank 2 of the merged list
# (file recall@10 within it 0.897, 0.950 at 1.0; benchmarks/interleave_sweep.py).
CODE_IN_LIST = 0.6


def interleave(
    docs: list[tuple[float, float, Any]],
    code: list[tuple[float, float, Any]],
    k: int,
    code_weight: float = CODE_IN_LIST,
) -> list[Any]:
    """The k best of two ranked lists of (score, confidence, item), each list's order kept:
    merged by score over its own list's best, times confidence, code's times code_weight
    (see the module's note)."""

    def keyed(
        rows: list[tuple[float, float, Any]], side: int, weight: float
    ) -> list[tuple[float, int, int, Any]]:
        best = max((r[0] for r in rows), default=0.0) or 1.0
        out = []
        floor = float("inf")
        for i, (score, conf, item) in enumerate(rows):
            floor = min(floor, score / best * conf * weight)  # never ahead of what ranked above
            out.append((floor, side, i, item))
        return out

    merged = keyed(docs, 0, 1.0) + keyed(code, 1, code_weight)
    merged.sort(key=lambda r: (-r[0], r[1], r[2]))
    return [r[3] for r in merged[:k]]
