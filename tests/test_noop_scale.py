"""The no-op at scale (issue 29): what the cheaper no-op must still notice, and two things
seen while measuring it (a read-only tree's cache message, Git LFS pointers in the count)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import commit_all, git, ncx, write

SEC = " ".join(["The service reads its settings from the config file at start."] * 6)
LFS = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 12345\n"
)


def _init(repo: Path) -> None:
    write(repo, "docs/guide.md", "# Guide\n\n" + SEC + "\n\n## Install\n\n" + SEC + "\n")
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(repo, "ncx")


def test_lfs_pointers_are_counted_as_skipped_not_as_docs(repo: Path) -> None:
    # A pointer's three lines are no knowledge: not indexed, and not one of the "N docs"
    # either (sync and status said 3 docs for 1 doc and 2 pointers).
    write(repo, "docs/guide.md", "# Guide\n\n" + SEC + "\n")
    write(repo, "docs/big.md", LFS)
    write(repo, "docs/nb.ipynb", LFS)
    commit_all(repo)
    ncx("init", "-q")
    for run in range(2):  # the first sync, then a no-op on the committed tree
        if run:
            commit_all(repo, "ncx")
        proc = ncx("sync")
        assert "(1 docs," in proc.stderr, proc.stderr
        assert "skipped docs/big.md: a Git LFS pointer" in proc.stderr
        report = json.loads(ncx("sync", "--json").stdout)
        assert report["docs"] == 1 and report["formats"] == {"markdown": {"docs": 1, "chunks": 1}}
        status = json.loads(ncx("status", "--json").stdout)
        assert status["docs"] == 1 and status["formats"] == {"markdown": 1}
        assert {s["path"] for s in status["skipped"]} == {"docs/big.md", "docs/nb.ipynb"}


def test_a_committed_hand_edit_of_a_chunk_file_is_still_noticed(repo: Path) -> None:
    # The no-op takes a chunk file as the one sync left when git's index holds the blob the
    # state recorded and git's stat check passes. An edit committed since changes the
    # index's blob, so the file is looked at again, though git itself sees nothing to do.
    _init(repo)
    chunk = repo / ".neocortex/chunks/docs/guide.md"
    right = chunk.read_bytes()
    chunk.write_bytes(right.replace(b"The service reads", b"The daemon reads", 1))
    commit_all(repo, "a hand edit")
    assert git(repo, "status", "--porcelain") == ""
    assert json.loads(ncx("status", "--json").stdout)["stale"] == 1
    proc = ncx("check", ok=False)
    assert proc.returncode != 0 and ".neocortex/chunks/docs/guide.md" in proc.stdout + proc.stderr
    ncx("sync", "-q")
    assert chunk.read_bytes() == right
    assert json.loads(ncx("status", "--json").stdout)["stale"] == 0


def test_code_is_listed_at_any_depth_and_in_any_case(repo: Path) -> None:
    # (The code listing's pathspecs lost git's glob magic, which cost 0.3 s of every no-op
    # sync of a 100,000-doc tree: `*.py` without it matches across folders too.)
    write(repo, "docs/guide.md", "# Guide\n\n" + SEC + "\n")
    write(repo, "top.py", "def top_level():\n    return 1\n")
    write(repo, "src/Deep/er/App.PY", "def deep_one():\n    return 2\n")
    write(repo, "src/x.py/readme.md", "# Not code\n\nA folder named like a module.\n")
    commit_all(repo)
    ncx("init", "-q")
    proc = ncx("sync")
    assert "code: 2 source files" in proc.stderr, proc.stderr
    hits = ncx("retrieve", "deep_one", "--kind", "code", "--json").stdout
    assert "src/Deep/er/App.PY" in hits


def test_a_doc_that_gives_no_chunk_is_not_chunked_again_by_every_run(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A doc of frontmatter only (or an include fragment that is one image) gives no chunk and
    # has no chunk file. Its state said "no file known", so every sync, status, check and
    # commit hook read and chunked it again (19 such docs on the large tree; decisions.md
    # §102). Now the state says
    # "none", and a run takes the doc as unchanged while there still is none.
    from ncx.tree import compare

    write(repo, "docs/empty.md", "---\ntitle: Nothing here yet\n---\n")
    _init(repo)
    assert not (repo / ".neocortex/chunks/docs/empty.md").exists()
    chunked: list[str] = []
    real = compare._chunk_doc

    def spy(settings: object, top: str, force: bool, job: compare.Job) -> object:
        chunked.append(job[0])
        return real(settings, top, force, job)  # type: ignore[arg-type]

    monkeypatch.setattr(compare, "_chunk_doc", spy)
    for args in (("sync",), ("status",), ("check",), ("hook", "check")):
        ncx(*args)
        assert chunked == [], (args, chunked)
    # ... but an edit of it, or a chunk file put in its place, is still seen.
    write(repo, "docs/empty.md", "---\ntitle: Nothing here yet\n---\n\n# Now\n\n" + SEC + "\n")
    ncx("sync", "-q")
    assert chunked == ["docs/empty.md"]
    assert (repo / ".neocortex/chunks/docs/empty.md").is_file()
    write(repo, "docs/empty.md", "---\ntitle: Nothing here yet\n---\n")
    ncx("sync", "-q")
    assert not (repo / ".neocortex/chunks/docs/empty.md").exists()
    chunked.clear()
    ncx("sync", "-q")
    assert chunked == []
    write(repo, ".neocortex/chunks/docs/empty.md", "---\nid: x\n---\n\nstray\n")
    ncx("sync", "-q")
    assert chunked == ["docs/empty.md"]
