"""status: a summary of the tree small enough for an agent's context (< 100 tokens)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ncx.config import Config
from ncx.embedder import tree_model_id, unavailable
from ncx.layout import chunks_dir, memories_dir
from ncx.manifest import load_manifest
from ncx.tree.sync import sync


@dataclass(frozen=True, slots=True)
class ModelStatus:
    id: str
    dim: int | None
    available: bool  # loadable on this machine


@dataclass(frozen=True, slots=True)
class TreeStatus:
    docs: int
    formats: dict[str, int]  # docs per source format
    skipped: tuple[tuple[str, str], ...]  # (path, why) of tracked files not indexed
    chunks: int
    memories: int
    model: ModelStatus
    stale: int  # docs whose chunk files are out of date
    problems: int
    v2: bool  # a .mlda/ tree is still present

    def to_json(self) -> dict[str, Any]:
        """The `ncx status --json` and MCP `status` shape."""
        out = asdict(self)
        out["skipped"] = [{"path": p, "reason": why} for p, why in self.skipped]
        return out


def tree_status(root: Path, cfg: Config) -> TreeStatus:
    manifest = load_manifest(root)
    model_id, _ = tree_model_id(None, manifest.model)
    chunks = sum(
        1 for _d, _s, names in os.walk(chunks_dir(root)) for n in names if n.endswith(".md")
    )
    mem = memories_dir(root)
    memories = sum(1 for n in os.listdir(mem) if n.endswith(".md")) if mem.is_dir() else 0
    plan = sync(root, cfg, dry_run=True)
    stale = {p.rsplit("/", 1)[0] for p in plan.written + plan.removed}
    dim = manifest.model.get("dim")
    return TreeStatus(
        docs=plan.docs,  # the dry run already listed the sources
        formats=dict(sorted(plan.by_format.items())),
        skipped=tuple((p, why) for p, why in plan.skipped),
        chunks=chunks,
        memories=memories,
        model=ModelStatus(
            id=model_id,
            dim=int(dim) if isinstance(dim, int) else None,
            available=unavailable(model_id, cache_root=cfg.model_cache) is None,
        ),
        stale=len(stale),
        problems=len(plan.problems),
        v2=(root / ".mlda").is_dir(),
    )
