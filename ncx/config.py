"""config: the one place that reads NCX_* environment variables.

cli.py builds a Config once (flags > environment > defaults) and passes it down;
core modules never read os.environ.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ncx.errors import UsageError

DEFAULT_TOKEN_BUDGET = 15_000  # a frame's budget unless --budget or NCX_TOKEN_BUDGET says


@dataclass(frozen=True, slots=True)
class ChunkSettings:
    """How the chunker cuts (ncx.tree.chunker; recorded in the manifest). Here, not in the
    chunker: a commit that touches no doc loads the config, never the chunker's patterns."""

    max_tokens: int = 500
    min_tokens: int = 50
    overlap_tokens: int = 50


@dataclass(frozen=True, slots=True)
class RankWeights:
    """Weights of the ranking signals (see retriever.py); env NCX_W_*."""

    dense: float = 0.2
    recency: float = 0.05
    usefulness: float = 0.05
    second_chunk: float = 0.6  # for long queries; second_short for short ones
    second_short: float = 0.15
    # A document's later chunks compete with other documents at fused score x decay^rank
    # (rank within the document: 1, 2, ...); 0 returns one chunk per document.
    doc_decay: float = 0.95
    # A document's third chunk adds this share of the second's weight to its page score.
    third_share: float = 0.15
    # A document's later chunks move this share of the way from their own score to their
    # document's page score (before the decay): a section of the page the query is about
    # carries some of the page's evidence (docs/decisions.md §26).
    doc_lift: float = 0.2
    # Weight of the match between the query and a chunk's own heading (rank._heading_cover).
    heading: float = 0.45
    # Weight of the query's word pairs found side by side in a unit (rank._proximity).
    proximity: float = 0.2
    # BM25 saturation for long queries and for short ones (<= 3 terms), linear in between.
    # Picked on the whole dev suite (benchmarks/suite.py), not on one set.
    k1: float = 2.5
    k1_short: float = 1.2


@dataclass(frozen=True, slots=True)
class Config:
    chunk: ChunkSettings | None = None  # None: whatever the manifest says
    model: str | None = None  # NCX_EMBEDDING_MODEL: local folder or hub id
    max_doc_bytes: int = 4_000_000
    token_budget: int = DEFAULT_TOKEN_BUDGET
    weights: RankWeights = field(default_factory=RankWeights)
    model_cache: Path = field(default_factory=lambda: Path.home() / ".cache" / "ncx" / "models")
    # Answer from a cache that is out of date rather than rebuild it first (agent hooks: a
    # prompt after a pull gets context at once; the rebuild runs in the background).
    stale_cache_ok: bool = False


def _int(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise UsageError(
            f"{name}={raw!r} is not a whole number", hint=f"unset {name} or give e.g. {name}=500"
        ) from None
    if value < 0:
        raise UsageError(f"{name}={raw!r} must not be negative")
    return value


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not a number", hint=f"unset {name}") from None
    if not math.isfinite(value):
        # float() takes "inf" and "nan"; a weight of either turns every score into NaN.
        raise UsageError(
            f"{name}={raw!r} is not a finite number", hint=f"unset {name} or give e.g. {name}=0.2"
        )
    return value


def positive_setting(raw: str, name: str, *, maximum: float) -> float:
    """A setting given as text that must be a finite number in (0, maximum]: a hook's
    NCX_HOOK_TIMEOUT (seconds) or NCX_HOOK_BUDGET (tokens). UsageError naming `name` else
    (`inf` parses as a float, and a deadline or budget of inf fails deep inside)."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= maximum):
        raise UsageError(
            f"{name}={raw!r} is not a positive number of at most {maximum:g}",
            hint=f"unset {name} or give a number in (0, {maximum:g}]",
        )
    return value


def command_name(env: Mapping[str, str] | None = None) -> str:
    """How ncx names itself in its hints: the committed launcher when it started this
    process (it sets NCX_LAUNCHER), where a bare `ncx` may not be on PATH."""
    from ncx.layout import LAUNCHER

    env = os.environ if env is None else env
    return LAUNCHER if env.get("NCX_LAUNCHER") == LAUNCHER else "ncx"


def load_config(env: Mapping[str, str] | None = None) -> Config:
    env = os.environ if env is None else env
    size = _int(env, "NCX_CHUNK_SIZE")
    overlap = _int(env, "NCX_CHUNK_OVERLAP")
    minimum = _int(env, "NCX_CHUNK_MIN")
    chunk = None
    if size is not None or overlap is not None or minimum is not None:
        d = ChunkSettings()
        chunk = ChunkSettings(
            max_tokens=size if size is not None else d.max_tokens,
            min_tokens=minimum if minimum is not None else d.min_tokens,
            overlap_tokens=overlap if overlap is not None else d.overlap_tokens,
        )
        if chunk.max_tokens < 20 or chunk.overlap_tokens >= chunk.max_tokens:
            raise UsageError(
                f"chunk size {chunk.max_tokens} with overlap {chunk.overlap_tokens} makes no sense",
                hint="NCX_CHUNK_SIZE must be >= 20 and larger than NCX_CHUNK_OVERLAP",
            )
    w = RankWeights()
    cache = env.get("NCX_MODEL_CACHE")
    return Config(
        chunk=chunk,
        model=env.get("NCX_EMBEDDING_MODEL") or None,
        max_doc_bytes=_int(env, "NCX_MAX_DOC_BYTES") or 4_000_000,
        token_budget=_int(env, "NCX_TOKEN_BUDGET") or DEFAULT_TOKEN_BUDGET,
        weights=RankWeights(
            dense=_float(env, "NCX_W_DENSE", w.dense),
            recency=_float(env, "NCX_W_RECENCY", w.recency),
            usefulness=_float(env, "NCX_W_USEFULNESS", w.usefulness),
            second_chunk=_float(env, "NCX_W_SECOND_CHUNK", w.second_chunk),
            second_short=_float(env, "NCX_W_SECOND_SHORT", w.second_short),
            doc_decay=_float(env, "NCX_W_DOC_DECAY", w.doc_decay),
            third_share=_float(env, "NCX_W_THIRD_SHARE", w.third_share),
            doc_lift=_float(env, "NCX_W_DOC_LIFT", w.doc_lift),
            heading=_float(env, "NCX_W_HEADING", w.heading),
            proximity=_float(env, "NCX_W_PROXIMITY", w.proximity),
            k1=_float(env, "NCX_K1", w.k1),
            k1_short=_float(env, "NCX_K1_SHORT", w.k1_short),
        ),
        model_cache=Path(cache) if cache else Path.home() / ".cache" / "ncx" / "models",
    )
