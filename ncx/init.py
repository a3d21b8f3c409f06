"""init: create or complete the .neocortex/ skeleton. Idempotent: re-running writes nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ncx.config import Config
from ncx.embedder import BUNDLED_MODEL, load_embedder
from ncx.errors import NotInitialized
from ncx.layout import chunks_dir, manifest_path, memories_dir, ncx_dir
from ncx.manifest import Manifest, load_manifest
from ncx.store import write_if_changed

GITIGNORE = "# derived, rebuilt on demand (ncx)\ncache/\n"


@dataclass
class InitResult:
    written: list[str] = field(default_factory=list)


def init_tree(root: Path, cfg: Config, *, model: str | None, exclude: list[str]) -> InitResult:
    result = InitResult()

    def put(path: Path, data: bytes) -> None:
        if write_if_changed(path, data):
            result.written.append(path.relative_to(root).as_posix())

    try:
        manifest = load_manifest(root)
        if exclude:
            merged = tuple(sorted(set(manifest.exclude) | set(exclude)))
            manifest = Manifest(
                manifest.model, manifest.chunk, merged, manifest.format, manifest.extra
            )
    except NotInitialized:
        model_id = model or cfg.model or BUNDLED_MODEL
        info = load_embedder(model_id, cache_root=cfg.model_cache).info
        manifest = Manifest(model=info.as_manifest(), exclude=tuple(sorted(set(exclude))))
        if cfg.chunk is not None:
            manifest = manifest.with_chunk(cfg.chunk)
    ncx_dir(root).mkdir(exist_ok=True)
    chunks_dir(root).mkdir(exist_ok=True)
    memories_dir(root).mkdir(exist_ok=True)
    put(manifest_path(root), manifest.to_json().encode())
    put(ncx_dir(root) / ".gitignore", GITIGNORE.encode())
    for keep in (chunks_dir(root) / ".gitkeep", memories_dir(root) / ".gitkeep"):
        if not keep.exists():
            put(keep, b"")
    return result
