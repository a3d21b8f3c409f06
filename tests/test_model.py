"""ncx model: show, fetch (offline: a clear, bounded failure), switch and re-embed."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from conftest import commit_all, ncx, write

from ncx.embedder import bundled_model_dir, load_embedder

BUNDLED = bundled_model_dir()
needs_bundled = pytest.mark.skipif(
    not (BUNDLED / "model.safetensors").is_file(), reason="bundled model not built"
)


def test_show_and_switch(repo: Path, other_model: Path) -> None:
    write(repo, "docs/a.md", "# A\n\n" + "Install the package with pip on linux. " * 10 + "\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    info = json.loads(ncx("model", "--json").stdout)
    assert info["dim"] == 32 and info["available"] and len(info["sha256"]) == 64
    out = ncx("model", "use", str(other_model))
    assert "re-embedded 1 units" in out.stderr
    assert json.loads((repo / ".neocortex/manifest.json").read_text())["model"]["id"] == str(
        other_model
    )
    assert "nothing written" in ncx("sync", env={"NCX_EMBEDDING_MODEL": str(other_model)}).stderr
    bad = ncx("model", "use", str(repo / "missing"), ok=False)
    assert bad.returncode == 1 and "not available locally" in bad.stderr


def test_fetch_fails_fast_and_clearly_offline(repo: Path) -> None:
    # A closed local port stands in for "no network"; nothing leaves the machine.
    out = ncx(
        "model",
        "fetch",
        "minishlab/potion-base-8M",
        "--timeout",
        "20",
        env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "0"},
        ok=False,
    )
    assert out.returncode == 1
    assert "cannot fetch minishlab/potion-base-8M" in out.stderr and "hint:" in out.stderr


@needs_bundled
def test_bundled_model_embeds_offline_and_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise OSError("network disabled in tests")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    texts = ["How do I configure retries?", "token refresh uses an httpOnly cookie", ""]
    a = load_embedder("ncx-static-v2").embed(texts)
    b = load_embedder("ncx-static-v2").embed(texts)
    assert a.shape == (3, 256) and a.tobytes() == b.tobytes()
    assert abs(float((a[0] ** 2).sum()) - 1.0) < 1e-3


@needs_bundled
def test_init_uses_the_bundled_model_by_default(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NCX_EMBEDDING_MODEL")
    write(repo, "docs/a.md", "# A\n\nSome text.\n")
    commit_all(repo)
    ncx("init")
    manifest = json.loads((repo / ".neocortex/manifest.json").read_text())
    assert manifest["model"]["id"] == "ncx-static-v2" and manifest["model"]["dim"] == 256
    ncx("sync")
    ncx("check")


@needs_bundled
def test_a_tree_embedded_with_a_retired_bundled_model_is_told_how_to_move(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NCX_EMBEDDING_MODEL")
    write(repo, "docs/a.md", "# A\n\n" + "Install the package with pip on linux. " * 10 + "\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    path = repo / ".neocortex/manifest.json"
    manifest = json.loads(path.read_text())
    manifest["model"]["id"] = "ncx-static-v1"  # as an older ncx wrote it
    path.write_text(json.dumps(manifest))
    write(repo, "docs/a.md", "# A\n\n" + "Upgrade the package with pip on linux. " * 10 + "\n")
    out = ncx("sync", ok=False)  # the edit needs the model
    assert out.returncode == 1
    assert (
        "ncx-static-v1 (named in .neocortex/manifest.json) is the bundled model of an earlier"
        in out.stderr
    )
    assert "ncx model use ncx-static-v2" in out.stderr
    assert "not available here: run `ncx check`" in ncx("status").stdout
    check = ncx("check", ok=False)  # CI learns it too, before anyone queries the tree
    assert (
        check.returncode == 1
        and ".neocortex/manifest.json: ncx-static-v1" in check.stdout + check.stderr
    )
    # Named by the environment, the way out is different; a newer release's model means upgrade.
    env = ncx("retrieve", "pip", env={"NCX_EMBEDDING_MODEL": "ncx-static-v1"}, ok=False)
    assert (
        "(named in NCX_EMBEDDING_MODEL)" in env.stderr and "unset NCX_EMBEDDING_MODEL" in env.stderr
    )
    path.write_text(json.dumps({**manifest, "model": {**manifest["model"], "id": "ncx-static-v9"}}))
    newer = ncx("sync", ok=False)
    assert "bundled model of a newer ncx" in newer.stderr and "upgrade ncx" in newer.stderr
    path.write_text(json.dumps(manifest))
    ncx("model", "use", "ncx-static-v2")
    assert json.loads(path.read_text())["model"]["id"] == "ncx-static-v2"
    assert "nothing written" in ncx("sync").stderr


def test_adopting_a_model_checks_ncx_reader_against_model2vec(
    repo: Path, other_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """model2vec is the reference encoder: `ncx model use` refuses a model that ncx's own
    reader would encode differently, before re-embedding anything."""
    from ncx.embedder import StaticEmbedder
    from ncx.tree.model_ops import verify_against_reference

    verify_against_reference(other_model)  # a plain model2vec model agrees
    write(repo, "docs/a.md", "# A\n\n" + "Install the package with pip on linux. " * 10 + "\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    manifest = (repo / ".neocortex/manifest.json").read_text()
    real = StaticEmbedder.embed
    monkeypatch.setattr(
        StaticEmbedder, "embed", lambda self, texts: real(self, texts)[:, ::-1].copy()
    )
    out = ncx("model", "use", str(other_model), ok=False)
    assert out.returncode == 1 and "encode this model differently" in out.stderr
    assert (repo / ".neocortex/manifest.json").read_text() == manifest
