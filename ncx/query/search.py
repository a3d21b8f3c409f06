"""search: the query side wired together — load the cache and the model, embed, retrieve.

A thin composition layer used by the retrieve, assemble and wakeup commands and the MCP
server; the ranking itself is the pure retriever.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.config import Config
from ncx.embedder import Embedder, load_tree_model, tree_model_id
from ncx.errors import NcxError
from ncx.layout import manifest_path
from ncx.manifest import load_manifest, older_format
from ncx.memory.cites import DEMOTE, StaleCite
from ncx.memory.stale import Staleness
from ncx.query.cache import Index, Unit, load_index
from ncx.query.rank import Filters, Hit, retrieve, unit_body

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


# A query is words to match, not a document: past a few pages more words only blur the
# ranking, and each costs memory (a 10 MB query took 2.2 GB, 8.2 GB through MCP). Longer
# ones are searched with their first MAX_QUERY_CHARS characters, and the caller says so.
MAX_QUERY_CHARS = 8_000


def clip_query(query: str) -> tuple[str, str | None]:
    """(the query as searched, a notice for the user when it was cut, else None)."""
    if len(query) <= MAX_QUERY_CHARS:
        return query, None
    head = query[:MAX_QUERY_CHARS]
    space = head.rfind(" ")
    if space > MAX_QUERY_CHARS // 2:
        head = head[:space]
    return head, (
        f"the query is {len(query):,} characters; searched with its first {len(head):,} "
        f"(at most {MAX_QUERY_CHARS:,})"
    )


@dataclass
class Searcher:
    """A loaded cache plus (lazily) the tree's model, reused across queries in one process."""

    root: Path
    cfg: Config
    index: Index
    _model: Embedder | None = None
    _model_id: str = ""
    _model_origin: str = ""
    _dim: int = 0
    _last: tuple[str, Any] | None = None  # the last query and its vector (a frame asks twice)
    _stale: Staleness | None = None  # the memories' stale citations, this query

    @classmethod
    def open(cls, root: Path, cfg: Config) -> Searcher:
        """The tree's searcher: its cache loaded, or built first when it is missing or out
        of date (a fresh clone's first query builds it and answers from it: the same frame
        as every later query, docs/decisions.md §44)."""
        manifest = load_manifest(root)
        if (older := older_format(manifest)) is not None:
            # Its chunk files are not read as chunks: say so, rather than answer from none.
            raise NcxError(older, path=manifest_path(root), hint="then ask again")
        s = cls(root, cfg, load_index(root, stale_ok=cfg.stale_cache_ok))
        s._model_id, s._model_origin = tree_model_id(cfg.model, manifest.model)
        s._dim = int(manifest.model.get("dim", 0))
        return s

    def embed_query(self, query: str) -> NDArray[np.float32] | None:
        if self.cfg.weights.dense <= 0 or not self.index.units:
            return None
        if self._model is None:
            # dimension only: hashing 15 MB of weights per query would cost more than the query
            self._model = load_tree_model(
                self.root,
                load_manifest(self.root).model,
                self.cfg.model,
                self.cfg.model_cache,
                check_sha=False,
            )
        if self._last is None or self._last[0] != query:
            self._last = (query, self._model.embed([query])[0])
        vec: NDArray[np.float32] = self._last[1]
        return vec

    def search(
        self, query: str, *, k: int, filters: Filters = Filters(), per_doc: int = 0
    ) -> list[Hit]:
        query = clip_query(query)[0]  # (every caller's safety; the CLI and MCP say it)
        self._stale = None  # the files may have changed since the last query
        hits = retrieve(
            self.index,
            query,
            self.embed_query(query),
            k=k,
            weights=self.cfg.weights,
            filters=filters,
            per_doc=per_doc,
            demote=self._demote,
        )
        return hits

    def stale(self, u: int) -> list[StaleCite]:
        """The stale citations of memory unit u: what sync stored (ncx.memory.stale), worked
        out again only for a memory whose files changed since."""
        if self._stale is None:
            self._stale = Staleness(self.root)
        return self._stale.of(self.index.units[u].file)

    def _demote(self, units: list[int]) -> dict[int, float]:
        return {u: DEMOTE for u in units if self.stale(u)}

    def text(self, hit: Hit) -> str:
        """A hit's text as shown (retrieve, frames): bare `:doc:` references as titles."""
        return self.index.shown(hit.unit, unit_body(self.index, hit.unit))

    def hit_json(self, hit: Hit, *, explain: bool = False) -> dict[str, Any]:
        out = hit.as_json(self.text(hit))
        if explain:
            out["why"] = hit.why
        return out


def neighbours(root: Path, vec: NDArray[np.float32], floor: float) -> list[tuple[Unit, float]]:
    """The units of the cache whose cosine to `vec` is at least `floor`, best first: what a
    new memory is compared with (ncx.memory.ops.Neighbours; the cache is loaded afresh, so a
    memory added a moment ago counts). Only those are decoded: every unit of a 40,000-chunk
    tree was most of a memory add."""
    import numpy as np

    index = load_index(root)
    if not index.units:
        return []
    sims = index.cosines(vec)
    near = np.flatnonzero(sims >= floor)
    order = near[np.lexsort((near, -sims[near]))]
    return [(index.units[int(i)], float(sims[int(i)])) for i in order]
