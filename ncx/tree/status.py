"""status: a summary of the tree small enough for an agent's context (< 100 tokens)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ncx.config import Config
from ncx.embedder import tree_model_id, unavailable
from ncx.layout import chunks_dir, memories_dir
from ncx.manifest import load_manifest
from ncx.tree.sync import sync


def tree_status(root: Path, cfg: Config) -> dict[str, Any]:
    manifest = load_manifest(root)
    model_id, _ = tree_model_id(None, manifest.model)
    chunks = sum(
        1 for _d, _s, names in os.walk(chunks_dir(root)) for n in names if n.endswith(".md")
    )
    mem = memories_dir(root)
    memories = sum(1 for n in os.listdir(mem) if n.endswith(".md")) if mem.is_dir() else 0
    plan = sync(root, cfg, dry_run=True)
    stale = {p.rsplit("/", 1)[0] for p in plan.written + plan.removed}
    return {
        "docs": plan.docs,  # the dry run already listed the sources
        "formats": dict(sorted(plan.by_format.items())),
        "skipped": [{"path": p, "reason": why} for p, why in plan.skipped],
        "chunks": chunks,
        "memories": memories,
        "model": {
            "id": model_id,
            "dim": manifest.model.get("dim"),
            "available": unavailable(model_id, cache_root=cfg.model_cache) is None,
        },
        "stale": len(stale),
        "problems": len(plan.problems),
        "v2": (root / ".mlda").is_dir(),
    }
