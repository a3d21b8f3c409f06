"""The frame's Current State (issue 37): the recent commits that touched the files the frame
points to, not the repository's last commits; the same at a commit (`--at`)."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_all, first_sync, git, ncx, write

from ncx.query.state import Commit, GitState, git_state

TASK = "the retry budget in refresh_token is spent too early"


def _history(root: Path) -> None:
    write(
        root,
        "auth.py",
        'def refresh_token(budget):\n    """Refresh, retrying."""\n    return budget\n',
    )
    write(root, "ui.py", "def paint(canvas):\n    return canvas\n")
    write(root, "docs/guide.md", "# Guide\n\nHow the pieces fit.\n")
    first_sync(root)
    write(
        root,
        "auth.py",
        'def refresh_token(budget):\n    """Refresh, retrying."""\n    return budget - 1\n',
    )
    commit_all(root, "auth: spend one retry less")
    for i in range(4):  # the repository's last commits: elsewhere
        write(root, "ui.py", f"def paint(canvas):\n    return canvas * {i}\n")
        commit_all(root, f"ui: repaint {i}")
    write(
        root, "auth.py", 'def refresh_token(budget):\n    """Refresh, retrying."""\n    return 0\n'
    )
    commit_all(root, "auth: no retries")


def test_current_state_names_the_commits_that_touched_the_frames_code(repo: Path) -> None:
    _history(repo)
    md = ncx("assemble", "--task", TASK).stdout
    state = md[md.index("## Current State") : md.index("## Instructions")]
    assert "recent commits to `auth.py`:" in state
    assert "auth: spend one retry less" in state
    assert "ui: repaint" not in state  # history that does not bear on the task stays out
    assert state.index("no retries") < state.index("spend one retry less")  # newest first
    # the same frame at a commit: its own history, nothing later
    at = ncx("assemble", "--task", TASK, "--at", "HEAD~1").stdout
    assert "auth: spend one retry less" in at and "no retries" not in at


def test_no_commit_to_the_frames_files_shows_no_history(repo: Path) -> None:
    state = GitState(
        ("- branch `main` at `abc`",), (Commit("1234567", "ui: repaint", frozenset({"ui.py"})),)
    )
    assert state.lines(["auth.py"]) == ["- branch `main` at `abc`"]


def test_commits_touching_different_files_name_each_file() -> None:
    commits = (
        Commit("aaa", "both", frozenset({"a.py", "b.py", "c.md"})),
        Commit("bbb", "only b", frozenset({"b.py"})),
        Commit("ccc", "x" * 200, frozenset({"a.py"})),
        Commit("ddd", "fourth", frozenset({"a.py"})),
    )
    lines = GitState((), commits).lines(["a.py", "b.py"])
    assert lines[0] == "- recent commits to these files:"
    assert lines[1] == "  - aaa both (`a.py`, `b.py`)"
    assert lines[2] == "  - bbb only b (`b.py`)"
    assert lines[3].endswith("… (`a.py`)") and len(lines[3]) < 110  # a subject is cut
    assert len(lines) == 4  # three commits at most


def test_git_state_reads_merges_files_and_odd_subjects(repo: Path) -> None:
    write(repo, "a.py", "x = 1\n")
    commit_all(repo, "start")
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, "b.py", "y = 2\n")
    commit_all(repo, "side:\tadds  b")
    git(repo, "checkout", "-q", "main")
    write(repo, "a.py", "x = 3\n")
    commit_all(repo, "main edit")
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "side")
    st = git_state(repo)
    subjects = [c.subject for c in st.commits]
    assert subjects[1:] == ["main edit", "start"]  # first-parent line only
    assert st.commits[0].files == {"b.py"}  # what the merge brought in
    assert "side: adds b" not in subjects  # the side branch's own commit is not on the line
    assert git_state(repo / "nowhere").commits == ()  # not a repository: no history
