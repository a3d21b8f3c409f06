"""status: a summary of the tree small enough for an agent's context (< 100 tokens)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ncx.config import Config
from ncx.layout import chunks_dir, memories_dir
from ncx.manifest import load_manifest
from ncx.sync import sync


def tree_status(root: Path, cfg: Config) -> dict[str, Any]:
    manifest = load_manifest(root)
    chunks = sum(
        1 for _d, _s, names in os.walk(chunks_dir(root)) for n in names if n.endswith(".md")
    )
    mem = memories_dir(root)
    memories = sum(1 for n in os.listdir(mem) if n.endswith(".md")) if mem.is_dir() else 0
    plan = sync(root, cfg, dry_run=True)
    stale = {p.rsplit("/", 1)[0] for p in plan.written + plan.removed}
    return {
        "docs": plan.docs,  # the dry run already listed the sources
        "chunks": chunks,
        "memories": memories,
        "model": {
            "id": manifest.model.get("id"),
            "dim": manifest.model.get("dim"),
            "available": _available(str(manifest.model.get("id", "")), cfg),
        },
        "stale": len(stale),
        "problems": len(plan.problems),
        "v2": (root / ".mlda").is_dir(),
    }


def _available(model_id: str, cfg: Config) -> bool:
    """Whether this machine can load the tree's model (a stat; `ncx check` says why not)."""
    from ncx.embedder import resolve_model_dir
    from ncx.errors import ModelUnavailable

    try:
        resolve_model_dir(model_id, cache_root=cfg.model_cache)
    except ModelUnavailable:
        return False
    return True
