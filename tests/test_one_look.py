"""One command, one look at the repository (ncx.repo.one_look): a question a command asks git
twice is answered once, a question whose answer moved (git's index) is asked again, and
nothing is remembered past the command."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import first_sync, git, ncx, write

from ncx import repo as ncx_repo
from ncx.code.store import code_listing


def _count_git(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every git process started from here on, by its arguments (`subprocess.run` and
    GitPython both start them through Popen)."""
    calls: list[list[str]] = []
    real = subprocess.Popen

    class Counted(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *a: Any, **kw: Any) -> None:
            argv = [str(x) for x in args] if isinstance(args, list | tuple) else [str(args)]
            if argv and Path(argv[0]).name == "git":
                calls.append(argv)
            super().__init__(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", Counted)
    return calls


def _asks(calls: list[list[str]], *words: str) -> int:
    return sum(all(w in c for w in words) for c in calls)


def test_a_sync_asks_for_the_top_and_the_code_once(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(repo, "docs/guide.md", "# Guide\n\nSee `src/app.py`.\n")
    write(repo, "src/app.py", "def run():\n    return 1\n")
    first_sync(repo)
    write(repo, "docs/guide.md", "# Guide\n\nSee `src/app.py` and run it.\n")
    calls = _count_git(monkeypatch)
    ncx("sync")
    assert _asks(calls, "rev-parse", "--show-toplevel") == 1, calls
    assert _asks(calls, "ls-files", "--debug") <= 1, calls
    assert len(calls) <= 12, calls  # 11 measured; 17 before one look a command


def test_outside_a_command_each_question_is_asked(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_git(monkeypatch)
    assert ncx_repo.find_root(repo) == ncx_repo.find_root(repo)
    assert _asks(calls, "rev-parse", "--show-toplevel") == 2  # a server's requests see moves


def test_within_a_look_the_code_listing_follows_the_index(repo: Path) -> None:
    write(repo, "a.py", "x = 1\n")
    git(repo, "add", "a.py")
    with ncx_repo.one_look():
        first = code_listing(repo)
        assert code_listing(repo) is first  # the index did not move: the same answer
        write(repo, "b.py", "y = 2\n")
        git(repo, "add", "b.py")  # git moved its index
        later = code_listing(repo)
    assert later is not first
    assert len(later.sources) == len(first.sources) + 1
