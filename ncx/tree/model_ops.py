"""model_ops: which model a tree uses, fetching a hub model on purpose, switching a tree.

Fetching is the only network access ncx ever makes, and only when asked: it runs in a
worker thread with a deadline, because the hub client can wait forever on a silent
endpoint (docs/decisions.md §3). Everything else loads models by local path.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from ncx.config import Config
from ncx.embedder import (
    BUNDLED_MODEL,
    bundled_model_dir,
    fetched_dir_name,
    load_embedder,
    resolve_model_dir,
)
from ncx.errors import ModelUnavailable, NcxError
from ncx.manifest import load_manifest


def model_info(root: Path, cfg: Config) -> dict[str, Any]:
    manifest = load_manifest(root)
    m = dict(manifest.model)
    try:
        folder = resolve_model_dir(str(m.get("id", "")), cache_root=cfg.model_cache)
        m["folder"] = str(folder)
        m["available"] = True
        m["source"] = "bundled" if folder == bundled_model_dir() else "local"
    except ModelUnavailable as exc:
        m["available"] = False
        m["problem"] = exc.message
    if cfg.model and cfg.model != m.get("id"):
        m["override"] = cfg.model  # NCX_EMBEDDING_MODEL differs from the tree's model
    return m


def fetch_model(hub_id: str, cfg: Config, *, timeout: float = 120.0) -> Path:
    """Download a model2vec model from the hub into the model cache, within `timeout`."""
    if "/" not in hub_id or Path(hub_id).expanduser().exists():
        raise NcxError(
            f"{hub_id!r} is not a hub id (owner/name)",
            hint="local folders need no fetch; use them directly",
        )
    dest = cfg.model_cache / fetched_dir_name(hub_id)
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", str(int(timeout)))
            os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", str(int(timeout)))
            from huggingface_hub import snapshot_download

            result["path"] = snapshot_download(
                hub_id,
                local_dir=str(dest),
                allow_patterns=["*.json", "*.safetensors", "*.md", "LICENSE*"],
            )
        except Exception as exc:  # the hub client raises many unrelated types
            result["error"] = exc

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise NcxError(
            f"fetching {hub_id} took longer than {timeout:.0f} s",
            hint="check your network or proxy, or download the folder yourself and use its path",
        )
    if "error" in result:
        err = result["error"]
        raise NcxError(
            f"cannot fetch {hub_id}: {type(err).__name__}: {str(err).splitlines()[0][:200]}",
            hint="are you online? A local model2vec folder works without network",
        )
    if not (dest / "model.safetensors").is_file():
        raise NcxError(f"{hub_id} has no model.safetensors; is it a model2vec model?")
    verify_against_reference(dest)  # prove it loads, and encodes as model2vec does
    return dest


# Texts that exercise plain words, casing, punctuation, code and a long tail of sub-words.
_PROBES = (
    "How do I rotate the signing key?",
    "def retry(request, timeout=30): return http.get(url)",
    "Never commit secrets; use the vault. Ünïcödé and CamelCaseIdentifiers_too",
    "install",
)


def verify_against_reference(folder: Path) -> None:
    """Encode probe texts with model2vec's own StaticModel and with ncx's reader; refuse the
    model when they differ.

    ncx reads model folders itself (a third of the cold cost, embedder.py); model2vec is the
    reference for what a model means. A model whose config asks for something the reader does
    not reproduce would otherwise give silently wrong vectors. Write side only: this runs when
    a model is fetched or adopted, never on a query.
    """
    import numpy as np
    from model2vec import StaticModel

    ours = load_embedder(str(folder)).embed(list(_PROBES))
    try:
        ref_model = StaticModel.from_pretrained(str(folder))
        ref = np.asarray(ref_model.encode(list(_PROBES)), dtype=np.float32)
    except Exception as exc:  # model2vec raises many unrelated types
        raise ModelUnavailable(f"model2vec cannot load this model: {exc}", path=folder) from None
    if ref.shape != ours.shape or not np.allclose(ours, ref, atol=2e-3):
        worst = float(np.abs(ours - ref).max()) if ref.shape == ours.shape else float("inf")
        raise ModelUnavailable(
            f"ncx's reader and model2vec encode this model differently (max diff {worst:.4f})",
            path=folder,
            hint="use a plain model2vec static model (no custom tokenizer settings), "
            "or report the model at ncx's issue tracker",
        )


def switch_model(root: Path, cfg: Config, model_id: str) -> Any:
    """Re-embed the whole tree with another model and record it in the manifest."""
    from ncx.tree.sync import sync

    # fail before touching anything
    verify_against_reference(resolve_model_dir(model_id, cache_root=cfg.model_cache))
    return sync(root, replace(cfg, model=model_id), reembed=True)


def default_model_id() -> str:
    return BUNDLED_MODEL
