"""search: the code side of `ncx retrieve` and the frame, over the tree as it is now.

Merging code with docs and memories: the two rankings score different things on different
scales, so neither score is compared with the other. Each list keeps its own order, and they
are interleaved by evidence: a result's score relative to its own list's best, times the
idf-weighted share of the query's terms it holds (its confidence). A docs question on a tree
whose code does not hold its words keeps its docs on top, and a task that names the code's
identifiers gets the code first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ncx.code.index import CodeIndex, load_code_index
from ncx.code.rank import CodeHit, search_code


class CodeSearcher:
    """The tree's code index, loaded once and reused across queries in one process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._index: CodeIndex | None = None

    @property
    def index(self) -> CodeIndex:
        if self._index is None:
            self._index = load_code_index(self.root)
        return self._index

    def search(
        self, query: str, *, files: int = 10, path_globs: tuple[str, ...] = ()
    ) -> list[CodeHit]:
        return search_code(self.index, query, files=files, path_globs=path_globs)

    def hit_json(self, hit: CodeHit, *, explain: bool = False) -> dict[str, Any]:
        out = hit.as_json(describe(hit))
        if explain:
            out["why"] = hit.why
        return out


def describe(hit: CodeHit) -> str:
    """A code hit as text: its signature and docstring summary (the body is at path:lines)."""
    head = hit.signature or (f"module {hit.path}" if hit.kind == "module" else hit.qualname)
    return f"{head}\n{hit.doc}" if hit.doc else head


def interleave(
    docs: list[tuple[float, float, Any]], code: list[tuple[float, float, Any]], k: int
) -> list[Any]:
    """The k best of two ranked lists of (score, confidence, item), each list's order kept:
    merged by score over its own list's best, times confidence (see the module's note)."""

    def keyed(rows: list[tuple[float, float, Any]], side: int) -> list[tuple[float, int, int, Any]]:
        best = max((r[0] for r in rows), default=0.0) or 1.0
        out = []
        floor = float("inf")
        for i, (score, conf, item) in enumerate(rows):
            floor = min(floor, score / best * conf)  # never ahead of what ranked above it
            out.append((floor, side, i, item))
        return out

    merged = keyed(docs, 0) + keyed(code, 1)
    merged.sort(key=lambda r: (-r[0], r[1], r[2]))
    return [r[3] for r in merged[:k]]
