"""ncx status on format 2: chunks are the blocks of each doc's one chunk file, a stale doc
counts once whatever its number of chunks, and a tree of format 1 still reads right."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, git, ncx, write

from ncx.layout import doc_chunk_file
from ncx.store import split_chunk_file


def doc(*sections: str) -> str:
    return "# Guide\n\n" + "".join(
        f"## {s}\n\n" + f"How to {s.lower()} the login service with retries. " * 25 + "\n\n"
        for s in sections
    )


STATE = ".neocortex/cache/sync-state.json"


def status() -> dict[str, Any]:
    return dict(json.loads(ncx("status", "--json").stdout))


def blocks(root: Path, src: str) -> list[bytes]:
    path = root / doc_chunk_file(src)
    return split_chunk_file(path.read_bytes(), path=path)


def synced_two_docs(repo: Path, *, commit: bool = True) -> None:
    """docs/guide.md and docs/ops.md, initialised and synced (and committed)."""
    write(repo, "docs/guide.md", doc("Install", "Usage"))
    write(repo, "docs/ops.md", doc("Backup", "Restore"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    if commit:
        commit_all(repo, "ncx")


def clone_of(repo: Path, tmp_path: Path, *, state: bool = False, autocrlf: bool = False) -> Path:
    """A fresh clone of `repo` (given `repo`'s sync state file when `state`)."""
    clone = tmp_path / "clone"
    crlf = ["-c", "core.autocrlf=true"] if autocrlf else []
    git(tmp_path, "clone", "-q", *crlf, str(repo), str(clone))
    if state:
        (clone / STATE).parent.mkdir(parents=True)
        shutil.copy(repo / STATE, clone / STATE)
    return clone


def chunking_recorded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The docs sync chunks from now on (appended as it chunks them)."""
    import ncx.tree.compare as compare_mod

    chunked: list[str] = []
    real = compare_mod.chunk_blocks
    monkeypatch.setattr(
        compare_mod, "chunk_blocks", lambda d, s: chunked.append(d.path) or real(d, s)
    )
    return chunked


def test_status_counts_blocks_and_stale_docs(repo: Path) -> None:
    write(repo, "docs/guide.md", doc("Install", "Usage", "Deploy"))
    write(repo, "docs/ops.md", doc("Backup", "Restore"))
    write(repo, "README.md", "# Project\n\nShort readme.\n")
    commit_all(repo)
    ncx("init")
    sync = json.loads(ncx("sync", "--json").stdout)
    commit_all(repo, "ncx")
    per_doc = {s: len(blocks(repo, s)) for s in ("docs/guide.md", "docs/ops.md", "README.md")}
    assert per_doc["docs/guide.md"] >= 3 and per_doc["docs/ops.md"] >= 2
    st = status()
    # three files on disk, one per doc: the count is their blocks, as sync made them
    assert st["chunks"] == sum(per_doc.values()) == sync["chunks"]
    assert st["stale"] == 0 and st["docs"] == 3
    # without sync's state (a fresh clone) the dry run compares every file: the same count
    (repo / STATE).unlink()
    assert status()["chunks"] == st["chunks"]
    # two sections of one doc edited: one stale doc, not two stale chunks
    write(repo, "docs/guide.md", doc("Install", "Usage", "Deploy").replace("retries", "backoff"))
    assert status()["stale"] == 1
    write(repo, "docs/ops.md", doc("Backup"))
    assert status()["stale"] == 2
    # a damaged chunk file counts none of its blocks (`ncx check` names it); the rest count
    git(repo, "checkout", "-q", "--", "docs")
    (repo / doc_chunk_file("docs/ops.md")).write_text("---\nid: [broken\n---\ntext\n")
    assert status()["chunks"] == per_doc["docs/guide.md"] + per_doc["README.md"]


def test_status_of_a_format_1_tree(repo: Path) -> None:
    """A tree ncx wrote before format 2 (a folder of `<slug>.md` + `<slug>.npy` per doc,
    manifest format 1): each .md is one chunk, and every doc is stale once (the next sync
    moves it), not once per file it removes."""
    write(repo, "docs/guide.md", doc("Install", "Usage", "Deploy"))
    write(repo, "docs/ops.md", doc("Backup", "Restore"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    count = 0
    for src in ("docs/guide.md", "docs/ops.md"):
        folder = repo / doc_chunk_file(src)[: -len(".md")]
        folder.mkdir()
        for i, block in enumerate(blocks(repo, src)):
            (folder / f"c{i}.md").write_bytes(block)
            (folder / f"c{i}.npy").write_bytes(b"\x93NUMPY")
            count += 1
        (repo / doc_chunk_file(src)).unlink()
    manifest = repo / ".neocortex/manifest.json"
    manifest.write_text(manifest.read_text().replace('"format": 2', '"format": 1'))
    assert '"format": 1' in manifest.read_text()
    commit_all(repo, "a format-1 tree")
    st = status()
    assert st["chunks"] == count >= 5
    assert st["stale"] == 2


def test_a_clone_nobody_synced_is_chunked_once_not_on_every_status(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A teammate's fresh clone: the first `ncx status` or `ncx check` chunks every doc to
    # compare; what it found right is recorded (sync's state), so the next one chunks
    # nothing. A stale doc is never recorded as right.
    synced_two_docs(repo)
    clone = clone_of(repo, tmp_path)
    monkeypatch.chdir(clone)
    chunked = chunking_recorded(monkeypatch)
    write(clone, "docs/ops.md", doc("Backup"))  # edited, not synced: stale
    assert status()["stale"] == 1
    assert sorted(chunked) == ["docs/guide.md", "docs/ops.md"]
    chunked.clear()
    assert status()["stale"] == 1 and chunked == ["docs/ops.md"]
    for _ in range(2):  # named run after run
        got = ncx("check", ok=False)
        assert got.returncode == 1 and ".neocortex/chunks/docs/ops.md" in got.stdout + got.stderr
    # A chunk file edited by hand after the record changes its stat: compared again.
    chunk = clone / doc_chunk_file("docs/guide.md")
    chunk.write_bytes(chunk.read_bytes().replace(b"retries", b"retriez", 1))
    chunked.clear()
    assert status()["stale"] == 2 and sorted(chunked) == ["docs/guide.md", "docs/ops.md"]
    assert git(clone, "status", "--short") == " M .neocortex/chunks/docs/guide.md\n M docs/ops.md\n"


def test_a_clone_given_the_state_file_chunks_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The state records each chunk file's bytes (hashed), not only its stat: a fresh clone
    # given another clone's state file (a CI cache) verifies by hashing the files and
    # chunks nothing; a file whose bytes differ is compared in full.
    synced_two_docs(repo)
    clone = clone_of(repo, tmp_path, state=True)
    monkeypatch.chdir(clone)
    chunked = chunking_recorded(monkeypatch)
    ncx("check")
    assert status()["stale"] == 0 and chunked == []
    chunk = clone / doc_chunk_file("docs/ops.md")
    chunk.write_bytes(chunk.read_bytes().replace(b"retries", b"retriez", 1))
    assert status()["stale"] == 1 and chunked == ["docs/ops.md"]


def test_a_chunk_file_the_disk_refused_is_not_recorded_as_written(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ncx.tree.sync as sync_mod

    synced_two_docs(repo, commit=False)
    write(repo, "docs/ops.md", doc("Backup"))
    real = sync_mod._Out.write

    def refuse(self: Any, path: Any, data: bytes) -> None:
        if str(path).endswith("ops.md"):
            raise OSError(28, "No space left on device")
        real(self, path, data)

    monkeypatch.setattr(sync_mod._Out, "write", refuse)
    assert ncx("sync", ok=False).returncode == 1
    monkeypatch.setattr(sync_mod._Out, "write", real)
    assert status()["stale"] == 1  # not taken for the file the failed run meant to write


def test_a_broken_sidecar_is_named_by_every_check_not_only_the_first(repo: Path) -> None:
    # The doc is chunked without its sidecar's metadata and its chunk file is right for
    # that, but the sidecar's error is a finding of each run: the state (what a sync or a
    # dry run found right) must not make the next `ncx check` say "tree OK".
    write(repo, "docs/guide.md", doc("Install", "Usage"))
    write(repo, "docs/guide.meta.yaml", "id: DOC-X-001\ntitle: [unclosed\n")
    commit_all(repo)
    ncx("init")
    assert ncx("sync", ok=False).returncode == 1
    commit_all(repo, "ncx")
    for _ in range(2):  # after the sync's record, and after the dry run's own
        got = ncx("check", ok=False)
        assert got.returncode == 1 and "docs/guide.meta.yaml" in got.stdout
    assert "docs/guide.meta.yaml" in ncx("sync", ok=False).stderr


def test_a_chunk_file_changed_while_a_run_embeds_is_not_recorded_as_the_one_it_read(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run reads each chunk file early (chunking), then embeds, then records. A checkout of
    # a branch whose chunk file for an unchanged doc is stale, landing in between, must not
    # be recorded as the right file the run read: the stat is taken before the read.
    import ncx.tree.sync as sync_mod

    synced_two_docs(repo)
    chunk = repo / doc_chunk_file("docs/guide.md")
    stale = chunk.read_bytes().replace(b"retries", b"retriez", 1)
    write(repo, "docs/ops.md", doc("Backup"))  # something to embed: the run is a long one
    real = sync_mod._plan_memories

    def meanwhile(*args: Any, **kwargs: Any) -> Any:
        chunk.write_bytes(stale)  # the checkout, while the run goes on
        return real(*args, **kwargs)

    monkeypatch.setattr(sync_mod, "_plan_memories", meanwhile)
    state = repo / STATE
    for run in (("sync",), ("status", "--json")):
        state.unlink()  # as in a fresh clone: every chunk file is read
        ncx(*run)
        monkeypatch.setattr(sync_mod, "_plan_memories", real)
        got = ncx("check", ok=False)
        assert got.returncode == 1 and doc_chunk_file("docs/guide.md") in got.stdout
        ncx("sync")
        monkeypatch.setattr(sync_mod, "_plan_memories", meanwhile)


def test_a_doc_that_inherits_a_chunk_file_path_never_takes_the_old_owner_s_file(
    repo: Path,
) -> None:
    # `guide.md` owns chunks/guide.md, `guide.markdown` gets chunks/guide~<hash>.md. Once
    # `guide.md` is removed, `guide.markdown` owns chunks/guide.md, which still holds
    # guide.md's chunks. With chunk files of one size written within one tick of a coarse
    # file-system clock, the stat its record names must not vouch for that other file.
    import os

    def body(pad: int) -> str:
        return "# Guide\n\n## Install\n\nHow to install the service " + "." * pad + "\n"

    write(repo, "guide.md", body(40))
    pad = 40
    commit_all(repo)
    ncx("init")
    for _ in range(3):  # guide.markdown's text shortened until both files have one size
        write(repo, "guide.markdown", body(pad))
        commit_all(repo, "pad")
        ncx("sync")
        files = sorted((repo / ".neocortex/chunks").glob("guide*.md"))
        sizes = [f.stat().st_size for f in files]
        pad -= sizes[1] - sizes[0]
    assert len(files) == 2 and sizes[0] == sizes[1]
    for f in files:
        os.utime(f, ns=(files[0].stat().st_atime_ns, files[0].stat().st_mtime_ns))
    status()  # records both as found right, with those stats
    git(repo, "rm", "-q", "guide.md")
    ncx("sync")
    assert b"source_path: guide.markdown" in (repo / ".neocortex/chunks/guide.md").read_bytes()
    ncx("check")


def test_records_of_another_ncx_or_of_another_shape_are_not_taken(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A record says "this code made these bytes from that doc": another ncx (an upgrade, a
    # CI cache restored from an older run) may chunk differently, so its records go; an
    # entry damaged by hand is dropped, not trusted and not a crash.
    import ncx.tree.noop as noop_mod

    synced_two_docs(repo, commit=False)
    chunked = chunking_recorded(monkeypatch)
    assert status()["stale"] == 0 and chunked == []
    noop_mod._code_fingerprint.cache_clear()
    monkeypatch.setattr(noop_mod, "_code_fingerprint", lambda: "another ncx")
    assert status()["stale"] == 0 and sorted(chunked) == ["docs/guide.md", "docs/ops.md"]
    state_path = repo / STATE
    state = json.loads(state_path.read_text())
    state["docs"]["docs/ops.md"]["chunks"] = "many"
    state["docs"]["docs/guide.md"] = ["not", "an", "entry"]
    state_path.write_text(json.dumps(state))
    chunked.clear()
    assert status()["stale"] == 0 and sorted(chunked) == ["docs/guide.md", "docs/ops.md"]


def test_an_autocrlf_clone_takes_the_records_of_an_lf_clone(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Git for Windows' default checks docs out with CRLF; ncx reads CRLF as LF, so the
    # doc's record (its signature) is the LF clone's and a CI cache's state file serves it.
    synced_two_docs(repo)
    clone = clone_of(repo, tmp_path, state=True, autocrlf=True)
    assert b"\r\n" in (clone / "docs/guide.md").read_bytes()
    monkeypatch.chdir(clone)
    chunked = chunking_recorded(monkeypatch)
    ncx("check")
    assert status()["stale"] == 0 and chunked == []
