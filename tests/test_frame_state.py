"""The frame's Current State (issue 37): the recent commits that touched the files the frame
points to, not the repository's last commits; the same at a commit (`--at`)."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_all, first_sync, git, ncx, write

from ncx.query.state import Commit, git_state, state_lines

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
    commit_all(root, "auth: spend one retry of the budget less")
    for i in range(4):  # the repository's last commits: elsewhere
        write(root, "ui.py", f"def paint(canvas):\n    return canvas * {i}\n")
        commit_all(root, f"ui: repaint {i}")
    write(
        root, "auth.py", 'def refresh_token(budget):\n    """Refresh, retrying."""\n    return 0\n'
    )
    commit_all(root, "auth: no retries left in the budget")


def test_current_state_names_the_commits_that_touched_the_frames_code(repo: Path) -> None:
    _history(repo)
    md = ncx("assemble", "--task", TASK).stdout
    state = md[md.index("## Current State") : md.index("## Instructions")]
    assert "recent commits to `auth.py`:" in state
    assert "auth: spend one retry of the budget less" in state
    assert "ui: repaint" not in state  # history that does not bear on the task stays out
    assert state.index("no retries") < state.index("spend one retry")  # newest first
    # the same frame at a commit: its own history, nothing later
    at = ncx("assemble", "--task", TASK, "--at", "HEAD~1").stdout
    assert "auth: spend one retry" in at and "no retries" not in at


def test_the_lines_ncx_init_wrote_are_not_the_trees_change(repo: Path) -> None:
    """A clone where `ncx init` ran and nothing is committed yet: its `.gitattributes` block is
    ncx's own, as `.neocortex/` is; a new user's 15 frames each said "changed files:
    `.gitattributes`". A line of the user's own in the file is their change."""
    write(repo, "app.py", "def run():\n    return 1\n")
    write(repo, ".gitattributes", "*.png binary\n")
    commit_all(repo, "app")
    ncx("init")
    assert "+# >>> ncx >>>" in git(repo, "diff", "--", ".gitattributes")  # modified by init
    assert not any("changed files" in ln for ln in git_state(repo).head)
    write(repo, ".gitattributes", (repo / ".gitattributes").read_text() + "*.jpg binary\n")
    assert "- changed files: `.gitattributes`" in git_state(repo).head
    git(repo, "rm", "-q", "--cached", ".gitattributes")
    git(repo, "commit", "-qm", "no attributes")
    write(repo, ".gitattributes", "")
    ncx("init")  # a file init made whole: untracked
    assert not any("changed files" in ln for ln in git_state(repo).head)
    git(repo, "add", ".gitattributes")  # staged, not committed: still only ncx's lines
    assert not any("changed files" in ln for ln in git_state(repo).head)
    write(repo, "new.py", "x = 1\n")
    assert "- changed files: `new.py`" in git_state(repo).head


def test_only_commits_to_the_frames_files_and_only_in_the_window(repo: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ncx.query import state

    write(repo, "auth.py", "x = 1\n")
    commit_all(repo, "auth: start")
    for i in range(3):
        write(repo, "ui.py", f"y = {i}\n")
        commit_all(repo, f"ui:\trepaint  {i}")
    st = git_state(repo)
    sha = git(repo, "log", "-1", "--format=%h", "--", "auth.py").strip()
    assert st.lines(["auth.py"]) == [
        *st.head,
        "- recent commits to `auth.py`:",
        f"  - {sha} auth: start",
    ]
    assert st.lines(["nothing.py"]) == st.lines([]) == list(st.head)
    assert [c.subject for c in st.touching(["ui.py"])] == [f"ui: repaint {i}" for i in (2, 1, 0)]
    monkeypatch.setattr(state, "WINDOW", 2)  # auth.py's commit is 3 back: out of the window
    state._touching.cache_clear()
    assert git_state(repo).lines(["auth.py"]) == list(st.head)
    state._touching.cache_clear()


def test_commits_touching_different_files_name_each_file() -> None:
    commits = (
        Commit("aaa", "both", frozenset({"a.py", "b.py"})),
        Commit("bbb", "only b", frozenset({"b.py"})),
        Commit("ccc", "x" * 200, frozenset({"a.py"})),
    )
    lines = state_lines(["- branch `main` at `abc`"], commits, ["a.py", "b.py"])
    assert lines[1] == "- recent commits to these files:"
    assert lines[2] == "  - aaa both (`a.py`, `b.py`)"
    assert lines[3] == "  - bbb only b (`b.py`)"
    assert lines[4].endswith("… (`a.py`)") and len(lines[4]) < 110  # a subject is cut
    assert state_lines(["h"], (), ["a.py"]) == ["h"]


def test_a_merge_counts_for_the_files_it_brought_in(repo: Path) -> None:
    write(repo, "a.py", "x = 1\n")
    commit_all(repo, "start")
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, "b.py", "y = 2\n")
    commit_all(repo, "side adds b")
    git(repo, "checkout", "-q", "main")
    write(repo, "a.py", "x = 3\n")
    commit_all(repo, "main edit")
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "side")
    st = git_state(repo)
    (merge,) = st.touching(["b.py"])  # the side branch's own commit is not on the line
    assert merge.subject.startswith("Merge branch 'side'") and merge.files == {"b.py"}
    assert [c.subject for c in st.touching(["a.py"])] == ["main edit", "start"]
    assert git_state(repo / "nowhere").touching(["a.py"]) == ()  # not a repository


def test_a_long_lived_process_sees_the_commits_made_since(repo: Path) -> None:
    """The MCP server answers many frames: what it remembers is per commit, not per `HEAD`."""
    write(repo, "auth.py", "x = 1\n")
    commit_all(repo, "auth: one")
    assert "auth: one" in git_state(repo).lines(["auth.py"])[-1]
    write(repo, "auth.py", "x = 2\n")
    commit_all(repo, "auth: two")
    assert "auth: two" in git_state(repo).lines(["auth.py"])[-2]


def test_a_credential_in_a_commit_subject_is_redacted_in_the_frame(repo: Path) -> None:
    """Commit subjects reach the agent like any quoted text: a token pasted into one is
    redacted (hostile sweep: credentials reached agents unredacted through Current State)."""
    from secret_corpus import GITHUB_CLASSIC

    _history(repo)
    write(repo, "auth.py", 'def refresh_token(budget):\n    """Refresh."""\n    return -1\n')
    commit_all(repo, f"auth: use token {GITHUB_CLASSIC} for the retry budget")
    md = ncx("assemble", "--task", TASK).stdout
    state = md[md.index("## Current State") : md.index("## Instructions")]
    assert GITHUB_CLASSIC not in md and GITHUB_CLASSIC[:12] not in md
    assert "auth: use token [REDACTED" in state


def test_only_commits_worded_like_the_task_are_shown(repo: Path) -> None:
    # a new user's 30 frames: 3 of 90 commit lines bore on the task ("Merge pull request
    # #2256 from …", "docs: fix markup" in the file the frame opens)
    write(repo, "auth.py", "x = 0\n")
    commit_all(repo, "auth: refresh the token before its budget runs out")
    for subject in ("fix typo", "docs: fix markup", "Use the ruff linter"):
        write(repo, "auth.py", f"x = {len(subject)}\n")
        commit_all(repo, subject)
    st = git_state(repo)
    terms = frozenset({"token", "budget"})
    assert [c.subject for c in st.touching(["auth.py"], terms)] == [
        "auth: refresh the token before its budget runs out"
    ]
    # one shared word is not enough, and words that only say a change is one are none
    assert st.touching(["auth.py"], frozenset({"fix", "markup"})) == ()
    assert [c.subject for c in st.touching(["auth.py"], frozenset({"ruff", "linter"}))] == [
        "Use the ruff linter"
    ]
    assert st.lines(["auth.py"], frozenset({"unrelated"})) == list(st.head)
    assert len(st.touching(["auth.py"])) == 3  # without a task: the newest, as before


def test_a_merged_pull_request_is_named_by_its_title(repo: Path) -> None:
    write(repo, "a.py", "x = 1\n")
    commit_all(repo, "start")
    git(repo, "checkout", "-q", "-b", "fish")
    write(repo, "a.py", "x = 2\n")
    commit_all(repo, "escape single quotes")
    git(repo, "checkout", "-q", "main")
    git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge pull request #2256 from someone/fish",
        "-m",
        "Escape single quotes in fish completions",
        "fish",
    )
    (merge, _start) = git_state(repo).touching(["a.py"])
    assert merge.subject == "Escape single quotes in fish completions (#2256)"


def test_a_detached_checkout_says_so(repo: Path) -> None:
    """CI checks out a commit, not a branch: git then names HEAD, which is no branch."""
    write(repo, "a.py", "x = 1\n")
    commit_all(repo, "one")
    assert git_state(repo).head[0].startswith("- branch `")
    sha = git(repo, "rev-parse", "--short", "HEAD").strip()
    git(repo, "checkout", "-q", "--detach")
    assert git_state(repo).head[0] == f"- detached HEAD at `{sha}`"
    assert git_state(repo, "HEAD").head[0] == f"- detached HEAD at `{sha}`"


def test_a_state_that_only_says_where_head_is_is_the_frames_first_line(repo: Path) -> None:
    """decisions.md §96: a new user's 30 frames held 23 Current State zones that said only
    "detached HEAD at …"; where the state is only that, the frame's first line says it and the
    zone is left out. Work in progress brings the zone back, with HEAD in it."""
    import json

    write(repo, "auth.py", 'def refresh_token(budget):\n    """Refresh."""\n    return budget\n')
    first_sync(repo)
    md = ncx("assemble", "--task", TASK).stdout
    top = md.splitlines()[0]
    assert "## Current State" not in md and top.startswith("<!-- ncx frame "), md
    assert " · branch `" in top and top.endswith(" -->"), top
    frame = json.loads(ncx("assemble", "--task", TASK, "--json").stdout)
    state = next(z for z in frame["zones"] if z["name"] == "state")
    assert state["text"].startswith("- branch `")  # tools read it where they always did
    assert state["text"].removeprefix("- ") in top
    write(repo, "notes.py", "x = 1\n")  # work in progress: the zone, HEAD first
    md = ncx("assemble", "--task", TASK).stdout
    zone = md[md.index("## Current State") : md.index("## Instructions")]
    assert "- branch `" in zone and "- changed files: `notes.py`" in zone
    assert " · " not in md.splitlines()[0]
    git(repo, "add", "notes.py")
    git(repo, "commit", "-qm", "notes")
    git(repo, "checkout", "-qb", "fix-->x")  # a name that would end the first line's comment
    md = ncx("assemble", "--task", TASK).stdout
    assert md.splitlines()[0].count("-->") == 1 and "- branch `fix-->x`" in md
