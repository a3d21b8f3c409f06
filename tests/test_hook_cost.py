"""What a code-only commit's hooks cost: they decide from git alone, in as few git calls as
the included-by map allows (each hook runs them on every commit)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, first_sync, git, write

import ncx.tree.touched as touched


def _synced_doc_and_code(repo: Path) -> None:
    """A doc naming a source file, synced (which records the included-by map at this HEAD)
    and committed with its .neocortex/."""
    write(repo, "docs/guide.md", "# Guide\n\nSee `src/app.py`.\n")
    write(repo, "src/app.py", "x = 1\n")
    first_sync(repo)
    commit_all(repo, "ncx")


def test_a_code_only_commit_is_judged_in_two_git_calls(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _synced_doc_and_code(repo)
    write(repo, "src/app.py", "x = 2\n")
    commit_all(repo, "code")  # HEAD moved past the map's commit, as after every commit
    write(repo, "src/app.py", "x = 3\n")
    git(repo, "add", "src/app.py")
    calls: list[list[str]] = []
    real = subprocess.run

    def counted(args: list[str], **kw: Any) -> Any:
        calls.append(list(args))
        return real(args, **kw)

    monkeypatch.setattr(touched.subprocess, "run", counted)
    assert not touched.index_concerns_ncx()  # nothing for either hook to judge
    # the staged diff, and one diff of the docs since the map was made (no `rev-parse`)
    assert [c[:2] for c in calls] == [["git", "diff"], ["git", "diff"]]
    write(repo, "docs/new.md", '# New\n\n--8<-- "src/app.py"\n')
    commit_all(repo, "a doc that includes it, committed without the hooks")
    git(repo, "add", "src/app.py")
    write(repo, "src/app.py", "x = 4\n")
    git(repo, "add", "src/app.py")
    assert touched.index_concerns_ncx()  # docs moved since the map: the full path decides


def test_the_code_only_path_imports_only_what_it_needs(repo: Path) -> None:
    """Each hook starts a Python process on every commit: the code-only decision imports
    neither ncx.store (its imports cost a hook ~25 ms) nor typing, nor numpy."""
    import os
    import sys

    _synced_doc_and_code(repo)
    write(repo, "src/app.py", "x = 2\n")
    git(repo, "add", "src/app.py")
    probe = (
        "import sys; import ncx.tree.touched as t; assert not t.index_concerns_ncx(); "
        "print(' '.join(sorted(m for m in sys.modules if m in "
        "('ncx.store', 'typing', 'numpy', 'ncx.tree.staged'))))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "index")},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
