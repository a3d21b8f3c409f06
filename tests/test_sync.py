"""init / sync / status / check through the installed `ncx` entry point, in real git repos."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import commit_all, git, ncx, run_script, write

SEC = " ".join(["The service reads its settings from the config file at start and on reload."] * 6)


def doc(*sections: str) -> str:
    return "# Guide\n\n" + SEC + "\n\n" + "".join(f"## {s}\n\n{SEC} {s}.\n\n" for s in sections)


def snapshot(root: Path) -> dict[str, bytes]:
    base = root / ".neocortex"
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file() and "cache" not in p.parts
    }


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def blocks(data: bytes) -> dict[str, bytes]:
    """{chunk id: its block} of a doc's chunk file."""
    from ncx.store import split_chunk_file

    out = {}
    for b in split_chunk_file(data, path="x"):
        head = b.split(b"\n", 2)[1].decode()
        out[head.removeprefix("id: ")] = b
    return out


GUIDE = ".neocortex/chunks/docs/guide.md"


@pytest.fixture
def synced(repo: Path) -> Path:
    write(repo, "docs/guide.md", doc("Install", "Usage", "Deploy"))
    write(repo, "README.md", "# Project\n\nShort readme.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    return repo


def test_init_sync_second_sync_writes_nothing(repo: Path) -> None:
    write(repo, "docs/guide.md", doc("Install", "Usage"))
    write(repo, "ignored/notes.md", "# Private\n\nnot for ncx\n")
    write(repo, ".gitignore", "ignored/\n")
    commit_all(repo)
    out = ncx("init")
    assert "wrote .neocortex/manifest.json" in out.stdout
    assert json.loads((repo / ".neocortex/manifest.json").read_text())["model"]["dim"] == 32
    first = ncx("sync")
    assert first.stdout == f"wrote {GUIDE}\n"  # one file per doc, vectors inside
    assert "docs/guide.md#guide--install" in blocks((repo / GUIDE).read_bytes())
    assert not list((repo / ".neocortex/chunks").rglob("*.npy"))
    assert not (repo / ".neocortex/chunks/ignored.md").exists()  # ignored files never
    commit_all(repo, "ncx")
    second = ncx("sync")
    assert second.stdout == "" and "nothing written" in second.stderr
    assert git(repo, "status", "--porcelain") == ""
    ncx("init")  # re-running init changes nothing
    ncx("status")
    ncx("check")
    assert git(repo, "status", "--porcelain") == ""


def test_edit_one_section_rewrites_only_its_files(synced: Path) -> None:
    before = snapshot(synced)
    write(
        synced,
        "docs/guide.md",
        doc("Install", "Usage", "Deploy").replace(f"{SEC} Usage.", f"{SEC} Usage fix bug."),
    )
    ncx("sync")
    after = snapshot(synced)
    assert changed(before, after) == {GUIDE}
    old, new = blocks(before[GUIDE]), blocks(after[GUIDE])
    assert list(old) == list(new)
    assert {k for k in old if old[k] != new[k]} == {"docs/guide.md#guide--usage"}
    # and the file's diff is that block's lines only
    diff = git(synced, "diff", "--unified=0", "--", GUIDE).splitlines()
    gone = {ln[1:] for ln in diff if ln.startswith("-") and not ln.startswith("---")}
    added = {ln[1:] for ln in diff if ln.startswith("+") and not ln.startswith("+++")}
    key = "docs/guide.md#guide--usage"
    assert gone <= set(old[key].decode().splitlines())
    assert added <= set(new[key].decode().splitlines())
    assert any("Usage fix bug." in ln for ln in added)


def test_insert_section_changes_no_other_chunk(synced: Path) -> None:
    before = snapshot(synced)
    write(synced, "docs/guide.md", doc("Install", "Security", "Usage", "Deploy"))
    ncx("sync")
    after = snapshot(synced)
    assert changed(before, after) == {GUIDE}
    old, new = blocks(before[GUIDE]), blocks(after[GUIDE])
    assert set(new) - set(old) == {"docs/guide.md#guide--security"}
    assert all(new[k] == old[k] for k in old)


def test_delete_and_rename_docs(synced: Path) -> None:
    git(synced, "mv", "docs/guide.md", "docs/manual.md")
    ncx("sync")
    manual = synced / ".neocortex/chunks/docs/manual.md"
    assert "docs/manual.md#guide--usage" in blocks(manual.read_bytes())
    assert not (synced / GUIDE).exists()
    assert "source_path: docs/manual.md" in manual.read_text()
    git(synced, "rm", "-qf", "docs/manual.md")
    out = ncx("sync")
    assert "removed .neocortex/chunks/docs/manual.md" in out.stdout
    assert not (synced / ".neocortex/chunks/docs").exists()


def test_sync_paths_limits_the_run(synced: Path) -> None:
    write(synced, "docs/guide.md", doc("Install"))
    write(
        synced, "README.md", "# Project\n\nChanged readme that is now a bit longer than before.\n"
    )
    out = ncx("sync", "README.md")
    assert "README" in out.stdout and "guide" not in out.stdout
    out = ncx("sync", "docs")
    assert f"wrote {GUIDE}" in out.stdout
    assert "docs/guide.md#guide--usage" not in blocks((synced / GUIDE).read_bytes())


def test_bad_docs_are_reported_and_nothing_is_damaged(synced: Path) -> None:
    before = snapshot(synced)
    (synced / "docs/guide.md").write_bytes(b"---\ntitle: [oops\n---\n# Guide\n")
    (synced / "docs/latin.md").write_bytes(b"# Caf\xe9\n")
    (synced / "docs/image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with (synced / "docs/huge.md").open("wb") as f:
        f.write(b"# Huge\n\n" + b"word " * 10_000_000)  # 50 MB
    write(synced, "docs/good.md", doc("Fine"))
    git(synced, "add", "-A")
    out = ncx("sync", ok=False)
    assert out.returncode == 1
    err = out.stderr
    assert "docs/guide.md: frontmatter does not parse (line 2)" in err
    # Undecodable bytes are listed as not indexed by a run of the whole tree (decisions §43)
    assert "skipped docs/latin.md: is not UTF-8 (bad byte at line 1): not indexed" in err
    assert "skipped docs/image.md: looks binary" in err
    assert "docs/huge.md: is 50.0 MB, over the 4.0 MB limit" in err
    assert err.count("hint:") >= 2
    after = snapshot(synced)
    # the broken guide keeps its chunks; the good doc is synced anyway
    assert after[GUIDE] == before[GUIDE]
    assert ".neocortex/chunks/docs/good.md" in after


def test_not_a_repo_and_not_initialised(tmp_path: Path) -> None:
    out = ncx("sync", cwd=tmp_path, ok=False)
    assert (
        out.returncode == 1
        and "not inside a git repository" in out.stderr
        and "git init" in out.stderr
    )
    git(tmp_path, "init", "-q")
    out = ncx("status", cwd=tmp_path, ok=False)
    assert out.returncode == 1 and "no .neocortex/" in out.stderr and "ncx init" in out.stderr


def test_exclude_patterns(repo: Path) -> None:
    write(repo, "docs/a.md", doc("A"))
    write(repo, "vendor/lib/b.md", doc("B"))
    commit_all(repo)
    ncx("init", "--exclude", "vendor/**")
    ncx("sync")
    assert (repo / ".neocortex/chunks/docs/a.md").is_file()
    assert not (repo / ".neocortex/chunks/vendor").exists()


def test_model_mismatch_is_refused_then_reembed(synced: Path, other_model: Path) -> None:
    write(synced, "docs/guide.md", doc("Install", "Usage", "Deploy", "More"))
    env = {"NCX_EMBEDDING_MODEL": str(other_model)}
    out = ncx("sync", env=env, ok=False)
    assert out.returncode == 1
    assert "embedded by" in out.stderr and "ncx sync --reembed" in out.stderr
    ncx("sync", "--reembed", env=env)
    manifest = json.loads((synced / ".neocortex/manifest.json").read_text())
    assert manifest["model"]["id"] == str(other_model)
    assert "nothing written" in ncx("sync", env=env).stderr


def test_chunk_size_env_is_recorded_and_rechunks(synced: Path) -> None:
    out = ncx("sync", env={"NCX_CHUNK_SIZE": "60", "NCX_CHUNK_OVERLAP": "10"})
    assert "manifest.json" in out.stdout
    assert (
        json.loads((synced / ".neocortex/manifest.json").read_text())["chunker"]["max_tokens"] == 60
    )
    assert f"wrote {GUIDE}" in out.stdout
    assert "docs/guide.md#guide--usage~2" in blocks((synced / GUIDE).read_bytes())


def test_status_and_check_report_stale_and_broken(synced: Path) -> None:
    st = json.loads(ncx("status", "--json").stdout)
    assert st["docs"] == 2 and st["stale"] == 0 and st["chunks"] >= 3
    line = ncx("status").stdout
    assert len(line.split()) < 60 and "up to date" in line
    write(synced, "docs/guide.md", doc("Install"))
    assert json.loads(ncx("status", "--json").stdout)["stale"] == 1
    (synced / ".neocortex/chunks/README.md").write_text("---\nid: [broken\n---\ntext\n")
    (synced / ".neocortex/chunks/docs/orphan.npy").write_bytes(b"junk")
    before = snapshot(synced)
    out = ncx("check", ok=False)
    assert out.returncode == 1
    assert "chunks/README.md: not a chunk file" in out.stdout
    assert "orphan.npy: is a vector of the older one-file-per-chunk format" in out.stdout
    assert f"{GUIDE}: stale" in out.stdout
    assert snapshot(synced) == before  # check never writes


def test_hand_edited_memory_is_reembedded(synced: Path) -> None:
    mem = synced / ".neocortex/memories/MEM-2026-01-01-abc123.md"
    write(
        synced,
        mem.relative_to(synced).as_posix(),
        "---\nid: MEM-2026-01-01-abc123\ntype: factual\n---\n\n## Learning\n\nUse retries.\n",
    )
    out = ncx("sync")
    assert "MEM-2026-01-01-abc123.npy" in out.stdout
    assert "hash:" in mem.read_text()
    commit_all(synced, "mem")
    mem.write_text(mem.read_text().replace("Use retries.", "Use retries with backoff."))
    out = ncx("sync")
    assert "MEM-2026-01-01-abc123.npy" in out.stdout
    assert "nothing written" in ncx("sync").stderr


def test_staged_mode_follows_the_index(synced: Path) -> None:
    write(synced, "docs/guide.md", doc("Install", "Usage", "Deploy", "Staged"))
    git(synced, "add", "docs/guide.md")
    write(synced, "docs/guide.md", doc("Install", "Usage", "Deploy", "Staged", "Unstaged"))
    out = ncx("sync", "--staged")
    assert out.stdout == f"wrote {GUIDE}\n"
    ids = list(blocks((synced / GUIDE).read_bytes()))
    assert "docs/guide.md#guide--staged" in ids and "docs/guide.md#guide--unstaged" not in ids


def test_atomic_write_leaves_old_file_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ncx.store import write_atomic

    target = tmp_path / "unit.md"
    target.write_bytes(b"old")

    def boom(*_a: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["unit.md"]


def test_docs_chunked_in_worker_processes_give_the_same_bytes(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ncx.tree import compare as compare_mod

    for i in range(8):
        write(
            repo, f"docs/d{i}.md", f"# Doc {i}\n\nIntro {i}.\n\n## Part\n\nThe part of doc {i}.\n"
        )
    write(repo, "docs/bad.md", "---\nkey: [unclosed\n---\n# Bad\n")
    commit_all(repo)
    ncx("init")
    ncx("sync", ok=False)  # bad.md is reported, the rest is written
    serial = {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in (repo / ".neocortex/chunks").rglob("*")
        if p.is_file() and p.name != ".gitkeep"
    }
    shutil.rmtree(repo / ".neocortex/chunks")
    shutil.rmtree(repo / ".neocortex/cache", ignore_errors=True)
    monkeypatch.setattr(compare_mod, "PARALLEL_DOCS", 1)
    # A first sync: the workers that chunk embed too, and chunk files are written as they come.
    out = ncx("sync", "--json", ok=False)
    assert "bad.md" in out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["embedded"] == report["chunks"] == 8
    pooled = {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in (repo / ".neocortex/chunks").rglob("*")
        if p.is_file()
    }
    assert pooled == serial and len(serial) >= 8


def test_a_doc_not_yet_tracked_is_named_not_silently_left_out(repo: Path) -> None:
    write(repo, "docs/a.md", "# A\n\nTracked.\n")
    commit_all(repo)
    ncx("init")
    write(repo, "docs/new.md", "# New\n\nWritten, not yet added.\n")
    out = ncx("sync")
    assert "docs/new.md" in out.stderr and "git add" in out.stderr
    status = json.loads(ncx("status", "--json").stdout)
    assert {
        "path": "docs/new.md",
        "reason": "not tracked by git yet: `git add` it to index it",
    } in status["skipped"]


def _branches(root: Path, ours: str, theirs: str) -> subprocess.CompletedProcess[str]:
    git(root, "checkout", "-q", "-b", "feature")
    write(
        root, "docs/guide.md", doc("Install", "Usage", "Deploy").replace(f"{SEC} Deploy.", theirs)
    )
    ncx("sync")
    commit_all(root, "feature")
    git(root, "checkout", "-q", "main")
    write(root, "docs/guide.md", doc("Install", "Usage", "Deploy").replace(f"{SEC} Usage.", ours))
    ncx("sync")
    commit_all(root, "main")
    return subprocess.run(
        ["git", "merge", "--no-edit", "feature"], cwd=root, capture_output=True, text=True
    )


def test_chunk_files_merge_by_section_and_never_with_markers(synced: Path, tmp_path: Path) -> None:
    """`ncx init` sets up git's merge driver for chunk files in its clone: edits of
    different sections merge cleanly (into the bytes sync writes); a clone without it, or
    edits of one block on both sides, keep one side and never get conflict markers."""
    assert "merge=ncx-chunks" in (synced / ".git/info/attributes").read_text()
    merged = _branches(synced, f"{SEC} Usage fixed.", f"{SEC} Deploy fixed.")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "nothing written" in ncx("sync").stderr  # the merge is what sync gives
    # The same section on both sides: the doc conflicts; its chunk file keeps this branch's
    # version, no markers, and is not left unmerged (it is derived: issue 31).
    git(synced, "checkout", "-q", "-b", "other", "HEAD~2")
    write(synced, "docs/guide.md", doc("Install", "Usage", "Deploy").replace("Usage.", "Use A."))
    ncx("sync")
    commit_all(synced, "other")
    ours = (synced / GUIDE).read_bytes()
    clash = subprocess.run(
        ["git", "merge", "--no-edit", "main"], cwd=synced, capture_output=True, text=True
    )
    assert clash.returncode != 0 and f"Merge conflict in {GUIDE}" not in clash.stdout
    assert f"ncx: {GUIDE}: both sides changed the same section" in clash.stderr
    assert (synced / GUIDE).read_bytes() == ours
    git(synced, "merge", "--abort")
    # A clone where `ncx init` never ran: the committed merge=binary, no markers either.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(synced), str(clone))
    git(clone, "checkout", "-q", "other")
    assert (
        "<<<<<<<"
        not in subprocess.run(
            ["git", "merge", "--no-edit", "origin/main"], cwd=clone, capture_output=True, text=True
        ).stdout
        + (clone / GUIDE).read_text()
    )


def test_a_doc_with_no_chunk_has_no_chunk_file(synced: Path) -> None:
    write(synced, "docs/guide.md", "")
    git(synced, "add", "docs/guide.md")
    out = ncx("sync")
    assert f"removed {GUIDE}" in out.stdout and not (synced / GUIDE).exists()
    ncx("check")
    commit_all(synced, "emptied")
    assert "nothing written" in ncx("sync").stderr
    env = {"GIT_INDEX_FILE": ".git/index"}
    write(synced, "docs/guide.md", doc("Back"))
    git(synced, "add", "docs/guide.md")
    assert ncx("hook", "sync", env=env, ok=False).returncode == 1  # writes the file again
    git(synced, "add", ".neocortex")
    assert ncx("hook", "check", env=env).returncode == 0


def test_a_renamed_doc_keeps_its_vectors(synced: Path) -> None:
    """Moving a doc moves its chunk file: the blocks whose text is the same take the
    vectors of the removed file (a path or a limited run alike), nothing is embedded."""
    before = blocks((synced / GUIDE).read_bytes())
    git(synced, "mv", "docs/guide.md", "docs/manual.md")
    out = json.loads(ncx("sync", "--json").stdout)
    assert out["embedded"] == 0
    after = blocks((synced / ".neocortex/chunks/docs/manual.md").read_bytes())

    def vec(b: bytes) -> bytes:
        return next(ln for ln in b.splitlines() if ln.startswith(b"vec: "))

    assert [vec(b) for b in after.values()] == [vec(b) for b in before.values()]
    commit_all(synced, "moved")
    git(synced, "mv", "docs/manual.md", "docs/guide.md")
    # As the hooks run it: the paths the commit changes, the removed one included.
    limited = json.loads(ncx("sync", "docs/manual.md", "docs/guide.md", "--json").stdout)
    assert limited["embedded"] == 0 and f"{GUIDE}" in limited["written"]


def test_a_large_sync_under_spawn_writes_what_a_serial_one_does(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Enough docs for worker processes, started by spawning as on macOS and Windows (nothing
    inherited from the parent): the chunk files are the very bytes a one-process sync writes."""

    from ncx import parallel

    for i in range(210):
        write(
            repo, f"docs/d{i:03}.md", f"# Topic {i}\n\nRun the backup at {i} am.\n\n## Usage\n\nx\n"
        )
    commit_all(repo)
    ncx("init")
    twin = tmp_path / "twin"
    shutil.copytree(repo, twin)
    monkeypatch.setattr(parallel, "workers", lambda: 1)
    ncx("sync")
    run_script(
        tmp_path / "spawn_sync.py",
        "import concurrent.futures, multiprocessing, sys\n"
        "def strict(fn, jobs, *, at_least, chunksize=None):\n"
        "    # ordered_imap without its quiet fallback: a job that cannot reach a worker fails\n"
        "    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:\n"
        "        yield from pool.map(fn, jobs, chunksize=chunksize or 8)\n"
        "if __name__ == '__main__':\n"
        "    multiprocessing.set_start_method('spawn', force=True)\n"
        "    import ncx.parallel\n"
        "    ncx.parallel.ordered_imap = strict\n"
        "    from ncx.cli.main import main\n"
        "    sys.argv = ['ncx', 'sync', '-q']\n"
        "    main()\n",
        cwd=twin,
    )

    def files(root: Path) -> dict[str, bytes]:
        top = root / ".neocortex/chunks"
        return {p.relative_to(top).as_posix(): p.read_bytes() for p in top.rglob("*.md")}

    assert len(files(repo)) == 210 and files(twin) == files(repo)


def test_two_blocks_of_one_text_hash_with_different_vectors_are_rewritten(repo: Path) -> None:
    """Vectors are kept by text hash, so two identical sections share one vector. A chunk
    file where a hand edit gave one of them another vector is not what sync writes: check
    names it (its fast path must agree with the full comparison) and sync makes them equal."""
    write(repo, "docs/guide.md", doc("Install", "Usage", "Usage"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")

    def vec(b: bytes) -> bytes:
        return next(ln for ln in b.splitlines() if ln.startswith(b"vec: "))

    data = (repo / GUIDE).read_bytes()
    found = blocks(data)
    one, two = found["docs/guide.md#guide--usage"], found["docs/guide.md#guide--usage-2"]
    assert vec(one) == vec(two)
    other = vec(found["docs/guide.md#guide--install"])
    (repo / GUIDE).write_bytes(data.replace(two, two.replace(vec(two), other)))
    out = ncx("check", ok=False)
    assert out.returncode == 1 and f"{GUIDE}: stale" in out.stdout
    assert f"wrote {GUIDE}" in ncx("sync").stdout
    found = blocks((repo / GUIDE).read_bytes())
    assert vec(found["docs/guide.md#guide--usage"]) == vec(found["docs/guide.md#guide--usage-2"])
    ncx("check")
    assert "nothing written" in ncx("sync").stderr


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85"])
def test_a_heading_with_a_unicode_line_break_round_trips(repo: Path, sep: str) -> None:
    """U+2028, U+2029 and U+0085 are line breaks to YAML, not to markdown: YAML writes
    such a heading in the trail quoted over two lines (U+0085 escaped), and the cache
    reads it back as it was (the fast reader read the second line's indent into it)."""
    write(repo, "docs/guide.md", doc("Install", f"Use{sep}it", "Deploy"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    ncx("check")
    commit_all(repo, "ncx")
    assert "nothing written" in ncx("sync").stderr
    ncx("check")
    assert git(repo, "status", "--porcelain") == ""
    from ncx.query.cache import load_index

    assert [u.section for u in load_index(repo).units if u.id.endswith("#guide--useit")] == [
        ["Guide", f"Use{sep}it"]
    ]


@pytest.mark.parametrize("pooled", [False, True])
def test_a_reembed_that_cannot_replace_a_chunk_file_leaves_no_old_vectors(
    repo: Path, other_model: Path, monkeypatch: pytest.MonkeyPatch, pooled: bool
) -> None:
    """A re-embed records the new model in the manifest. A chunk file the disk refused to
    replace still holds the old model's vectors, of the same size: left there, every later
    sync took it for right and its doc was never embedded by the new model."""
    from ncx.tree import compare as compare_mod
    from ncx.tree import sync_write as writer  # every file sync writes goes through it

    for i in range(6):
        write(
            repo, f"docs/d{i}.md", f"# Doc {i}\n\nIntro {i}.\n\n## Part\n\nThe part of doc {i}.\n"
        )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    old = (repo / ".neocortex/chunks/docs/d3.md").read_bytes()
    monkeypatch.setenv("NCX_EMBEDDING_MODEL", str(other_model))
    if pooled:
        monkeypatch.setattr(compare_mod, "PARALLEL_DOCS", 1)
    real = writer.write_atomic

    def refuse(path: str, data: bytes, **kw: bool) -> None:
        if path.endswith("d3.md"):
            raise OSError(28, "No space left on device")
        real(path, data, **kw)

    monkeypatch.setattr(writer, "write_atomic", refuse)
    out = ncx("sync", "--reembed", "--json", ok=False)
    assert "docs/d3.md" in out.stdout + out.stderr
    monkeypatch.setattr(writer, "write_atomic", real)
    again = json.loads(ncx("sync", "--json").stdout)
    assert again["written"] == [".neocortex/chunks/docs/d3.md"] and again["embedded"] == 1
    new = (repo / ".neocortex/chunks/docs/d3.md").read_bytes()
    assert new != old and blocks(new).keys() == blocks(old).keys()
    assert json.loads(ncx("sync", "--json").stdout)["written"] == []


# --- Issue 36 item 10: test fixtures are not the project's docs; undecodable bytes ------


def test_docs_in_test_fixture_folders_are_skipped_with_the_reason(repo: Path) -> None:
    write(repo, "docs/guide.md", "# Guide\n\nHow the deploy works.\n")
    write(repo, "tests/README.md", "# Tests\n\nHow to run the tests.\n")  # not a fixture
    fixtures = [
        "tests/roots/test-warnings/index.rst",
        "tests/fixtures/sample.md",
        "testdata/page.md",
        "pkg/test/fixtures/other.md",
        "src/__snapshots__/out.md",
    ]
    for f in fixtures:
        write(repo, f, "# Fixture\n\nA test's input.\n")
    commit_all(repo)
    ncx("init")
    out = ncx("sync")
    for f in fixtures:
        assert f"skipped {f}: inside a test fixture folder" in out.stderr, out.stderr
    assert "(2 docs" in out.stderr, out.stderr
    status = json.loads(ncx("status", "--json").stdout)
    assert {s["path"] for s in status["skipped"]} >= set(fixtures)
    assert status["docs"] == 2
    ncx("check")
    manifest = repo / ".neocortex/manifest.json"
    data = json.loads(manifest.read_text())
    data.setdefault("sources", {})["index_fixtures"] = True
    manifest.write_text(json.dumps(data))
    assert "(7 docs" in ncx("sync").stderr


# sphinx's tests/roots/test-warnings/undecodable.rst, in kind: bytes that are not UTF-8
UNDECODABLE = b"Undecodable\n===========\n\n\x82 should be undecodable\n"


def test_an_undecodable_doc_is_skipped_by_a_full_sync_and_fails_a_run_naming_it(
    repo: Path,
) -> None:
    """Issue 36 item 10: `ncx sync` exited 1 on every run of sphinx, though nothing the user
    touched was wrong. A run of the whole tree lists it and passes; a run naming it fails."""
    write(repo, "docs/guide.md", "# Guide\n\nHow the deploy works.\n")
    (repo / "docs/undecodable.rst").write_bytes(UNDECODABLE)
    commit_all(repo)
    ncx("init")
    out = ncx("sync")  # exit 0
    assert "skipped docs/undecodable.rst: is not UTF-8 (bad byte at line 4): not indexed" in (
        out.stderr
    )
    commit_all(repo, "ncx")
    assert ncx("sync").returncode == 0
    ncx("check")
    status = json.loads(ncx("status", "--json").stdout)
    assert "docs/undecodable.rst" in {s["path"] for s in status["skipped"]}
    named = ncx("sync", "docs/undecodable.rst", ok=False)
    assert named.returncode == 1 and "docs/undecodable.rst: is not UTF-8" in named.stderr


def test_the_fixture_rule_names_fixture_folders_and_nothing_else() -> None:
    from ncx.sources import fixture_reason

    fixtures = ["tests/roots/test-warnings/undecodable.rst", "Tests/Roots/x.md", "a/Fixtures/b.md"]
    fixtures += ["test/fixture/c.md", "pkg/testdata/p.md", "src/__snapshots__/o.md"]
    docs = ["docs/roots/x.md", "tests/README.md", "fixtures.md", "docs/testing.md", "README.md"]
    assert [p for p in fixtures if fixture_reason(p) is None] == []
    assert [p for p in docs if fixture_reason(p) is not None] == []


def test_a_value_with_a_colon_inside_is_read_as_written(synced: Path) -> None:
    # an agent's skill file in zod: strict YAML refuses the `: ` inside the description, and
    # every sync of the tree exited 1 for it
    write(
        synced,
        ".claude/skills/advisory/SKILL.md",
        "---\nname: advisory\nallowed-tools: Read, Grep\n"
        "description: Triage an advisory. The workflow differs: the report is private.\n"
        "---\n\n# Triaging an advisory\n\nLand the fix before any comment is drafted.\n",
    )
    git(synced, "add", "-A")
    out = ncx("sync")
    assert "does not parse" not in out.stderr
    hit = ncx("retrieve", "--json", "land the fix before any comment on an advisory").stdout
    assert ".claude/skills/advisory/SKILL.md" in hit.splitlines()[0]
