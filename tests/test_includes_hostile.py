"""Doc includes against a hostile repository (docs/decisions.md §38): what a doc's includes
may add to its view is capped, notes included, and the gate reads nothing it should not."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_all, git, ncx, write

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
