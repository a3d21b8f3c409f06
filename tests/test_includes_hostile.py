"""Doc includes against a hostile repository (docs/decisions.md §38): what a doc's includes
may add to its view is capped, notes included, and the gate reads nothing it should not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import NCX_CMD, commit_all, git, ncx, write

from ncx.sources.includes import MAX_SPLICED


def _chunk_bytes(repo: Path) -> int:
    return sum(p.stat().st_size for p in (repo / ".neocortex/chunks").rglob("*") if p.is_file())


def test_fan_out_of_nested_includes_stays_within_the_budget(repo: Path) -> None:
    # A 21-byte doc including a file of 50 includes of a file of 50 includes...: every
    # include past the depth or the budget became a note of its own, 8 MB of them.
    for k in range(5):
        write(repo, f"inc/e{k}.txt", f'--8<-- "inc/e{k + 1}.txt"\n' * 50)
    write(repo, "inc/e5.txt", "leaf words\n")
    write(repo, "docs/a.md", '# A\n\n--8<-- "inc/e0.txt"\n')
    commit_all(repo)
    ncx("init")
    ncx("sync")
    assert _chunk_bytes(repo) < 1.25 * MAX_SPLICED


def _view(repo: Path) -> str:
    return "\n".join(p.read_text() for p in sorted((repo / ".neocortex/chunks").rglob("*.md")))


def test_sync_of_an_included_file_moved_away_resyncs_its_docs_and_succeeds(repo: Path) -> None:
    write(repo, "src/inc.py", "BETA = 2\n")
    write(repo, "docs/a.md", "# A\n\nwords\n\n{* ./src/inc.py *}\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    assert "BETA" in _view(repo)
    git(repo, "mv", "src/inc.py", "src/inc2.py")
    # `src/inc.py` names no doc, but the docs that included it: not a typo to fail on.
    ncx("sync", "src/inc.py")
    assert "BETA" not in _view(repo)
    git(repo, "rm", "-q", "--cached", "src/inc2.py")
    ncx("sync", "src/inc2.py")
    ncx("check")


def test_a_working_tree_link_is_followed_only_to_a_tracked_file(repo: Path) -> None:
    for n in ("r1", "r2", "r3", "ok"):
        write(repo, f"inc/{n}.txt", f"plain {n}\n")
    doc = "".join(f'--8<-- "inc/{n}.txt"\n\n' for n in ("r1", "r2", "r3"))
    write(repo, "docs/a.md", "# A\n\nwords\n\n" + doc)
    commit_all(repo)
    ncx("init")
    ncx("sync")
    # Where git holds plain files, the working tree has links: to a loose (untracked, not
    # ignored) file, to a nested repository's .git/config, to another tracked file.
    write(repo, "loose.env", "TOKEN=untracked-secret\n")
    (repo / "nested").mkdir()
    git(repo / "nested", "init", "-q")
    git(repo / "nested", "config", "user.password", "nested-secret")
    for n, t in (("r1", "../loose.env"), ("r2", "../nested/.git/config"), ("r3", "ok.txt")):
        (repo / f"inc/{n}.txt").unlink()
        os.symlink(t, repo / f"inc/{n}.txt")
    write(repo, "docs/a.md", "# A\n\nwords changed\n\n" + doc)
    ncx("sync")
    view = _view(repo)
    assert "secret" not in view
    assert "is a symlink to loose.env, not a file git tracks" in view
    assert "[include not read: inc/r2.txt: is a symlink into .git/; refused" in view
    assert view.count("plain ok") == 1  # r3.txt, a link to the tracked ok.txt, is read


def test_line_ranges_that_repeat_quote_the_file_once(repo: Path) -> None:
    write(repo, "src/x.py", "".join(f"line_{i} = {i}\n" for i in range(1000)))  # 14 KB
    spec = ",".join(["1:1000"] * 300)
    write(repo, "docs/a.md", f"# A\n\nwords\n\n{{* ./src/x.py ln[{spec}] *}}\n")
    spec = ",".join(["1-1000"] * 300)
    write(
        repo, "docs/b.rst", f"B\n=\n\nwords\n\n.. literalinclude:: ../src/x.py\n   :lines: {spec}\n"
    )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    # Each doc quoted the file 300 times: 5.4 MB of chunks for a.md alone.
    assert _chunk_bytes(repo) < 100_000
    view = _view(repo)
    assert view.count("line_999 = 999") == 2  # the whole file, once in each doc


def test_a_doc_linked_to_a_nested_repositorys_git_config_is_refused(repo: Path) -> None:
    write(repo, "docs/a.md", "# A\n\nwords\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    (repo / "nested").mkdir()
    git(repo / "nested", "init", "-q")
    git(repo / "nested", "config", "user.password", "nested-secret")
    (repo / "docs/a.md").unlink()
    os.symlink("../nested/.git/config", repo / "docs/a.md")
    proc = ncx("sync", ok=False)
    assert "nested-secret" not in _view(repo)
    assert "symlink into .git/" in proc.stderr


def test_a_fifo_for_the_included_by_cache_does_not_hang_sync_of_a_path(repo: Path) -> None:
    write(repo, "src/inc.py", "X = 1\n")
    write(repo, "docs/a.md", "# A\n\nwords\n\n{* ./src/inc.py *}\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    cache = repo / ".neocortex/cache/included-by.json"
    cache.unlink()
    os.mkfifo(cache)
    write(repo, "src/inc.py", "X = 2\n")
    # A subprocess with a timeout: the bug is a hang (open() of a FIFO waits for a writer).
    proc = subprocess.run(
        [*NCX_CMD, "sync", "src/inc.py"], cwd=repo, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
