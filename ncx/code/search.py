"""search: the code side of `ncx retrieve` and the frame, over the tree as it is now.

The code index loaded once per process and asked: definitions for a query, the names a
text links to, each hit as text. How code hits are merged with docs and memories is the read
side's (ncx.query.fuse): this module imports nothing of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.code.index import CodeIndex, load_code_index
from ncx.code.rank import CodeHit, search_code

if TYPE_CHECKING:
    from ncx.code.links import Link
    from ncx.history.log import History


# Source files a command that is not a query (`memory add`, ncx.memory.cites) reads itself
# when the tree has no code index yet: about a second of parsing on 2 cores.
QUICK_CODE_FILES = 150


class CodeSearcher:
    """The tree's code index, loaded once and reused across queries in one process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._index: CodeIndex | None = None
        self._history: History | None = None
        self._history_read = False
        self.on_read: Callable[[int], None] | None = None  # progress of a first build

    @property
    def index(self) -> CodeIndex:
        if self._index is None:
            self._index = load_code_index(self.root, on_read=self.on_read)
        return self._index

    @property
    def history(self) -> History | None:
        """The commits' evidence as `ncx sync` cached it (a query never runs git for it)."""
        if not self._history_read:
            from ncx.history.log import load_history

            self._history, self._history_read = load_history(self.root), True
        return self._history

    def search(
        self,
        query: str,
        *,
        files: int = 10,
        path_globs: tuple[str, ...] = (),
        linked: tuple[int, ...] = (),
        per_file: int = 3,
    ) -> list[CodeHit]:
        return search_code(
            self.index,
            query,
            files=files,
            per_file=per_file,
            path_globs=path_globs,
            linked=linked,
            history=self.history,
        )

    def held_terms(self, query: str, paths: list[str]) -> dict[str, int]:
        from ncx.code.rank import held_terms

        return held_terms(self.index, query, paths)

    def own_terms(self, query: str, hits: Iterable[CodeHit]) -> dict[int, tuple[int, float]]:
        """Each hit's own share of the query's terms, by its unit (`rank.own_terms`)."""
        from ncx.code.rank import own_terms

        return own_terms(self.index, query, [h.unit for h in hits])

    def term_weights(self, terms: Iterable[str]) -> dict[str, float]:
        """Each term's idf in the code index (0 for one it does not hold): how much a line
        holding it says about the task."""
        lx = self.index.lex
        out = {}
        for t in terms:
            i = lx.term_id(t)
            out[t] = 0.0 if i is None else float(lx.idf[i])
        return out

    def links(self, text: str) -> list[Link]:
        from ncx.code.links import links

        return links(self.index, text)

    def hit_json(self, hit: CodeHit, *, explain: bool = False) -> dict[str, Any]:
        out = hit.as_json(describe(hit))
        if explain:
            out["why"] = hit.why
        return out


def describe(hit: CodeHit) -> str:
    """A code hit as text: its signature and docstring summary (the body is at path:lines)."""
    from ncx.code.text import shown_path

    module = f"module {shown_path(hit.path)}"
    head = hit.signature or (module if hit.kind == "module" else hit.qualname)
    return f"{head}\n{hit.doc}" if hit.doc else head


def best_per_file(hits: list[CodeHit]) -> list[CodeHit]:
    """Each file's best definition, in file rank order."""
    seen: set[str] = set()
    out = []
    for h in hits:
        if h.path not in seen:
            seen.add(h.path)
            out.append(h)
    return out
