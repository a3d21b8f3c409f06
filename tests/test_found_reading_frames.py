"""What three new users' 30 frames of uvicorn, chi and ky found (docs/decisions.md §106), each
on the real thing it broke: a doc line whose code span held braces, stored wrong."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_all, first_sync, git, json_lines, ncx, write


def test_braces_inside_a_code_span_are_code_not_a_role(repo: Path) -> None:
    """chi's README: "named params (ie. `/users/{userID}`) and wildcards (ie. `/admin/*`)".
    `{userID}` followed by the span's closing backtick read as a MyST role, and the chunk
    (and every frame quoting it) said "(ie. `/users/) and wildcards (ie. /admin/*`)"."""
    line = "chi supports named params (ie. `/users/{userID}`) and wildcards (ie. `/admin/*`)."
    write(repo, "README.md", f"# Demo\n\n## Routing\n\n{line}\n\nSee {{func}}`chi.Router` too.\n")
    first_sync(repo)
    chunk = (repo / ".neocortex/chunks/README.md").read_text()
    assert line in chunk
    assert "See `chi.Router` too." in chunk  # a role outside code is still read as one
    frame = ncx("assemble", "--task", "named params and wildcards in routes").stdout
    assert line in frame


def test_a_title_that_is_only_a_picture_is_no_part_of_a_listed_trail(repo: Path) -> None:
    """chi's README title is an `<img>` tag: `retrieve` listed every section of it as
    `<img alt="chi" src="https://cdn.rawgit.com/..." width="220" /> > Router interface`. It
    shows the trail as frames do (the picture is markup, not a heading's words)."""
    write(
        repo,
        "README.md",
        '# <img alt="chi" src="https://cdn.example.com/chi.svg" width="220" />\n\n'
        "## Router interface\n\n"
        + "Each routing method accepts a URL pattern and a chain of handlers. " * 40
        + "\n\n## Middlewares\n\n"
        + "Core middlewares log requests, recover from panics and compress replies. " * 40
        + "\n",
    )
    first_sync(repo)
    listed = ncx("retrieve", "routing method URL pattern").stdout
    assert listed.startswith(" 1. ") and "[chunk] Router interface\n" in listed
    assert "<img" not in listed.splitlines()[0]
    (hit,) = json_lines("retrieve", "routing method URL pattern", "--json", "--k", "1")
    assert hit["section"] == "Router interface"


def test_the_remembered_task_is_cut_at_a_word() -> None:
    """ky's long issue titles ended the frame with "Remember the task: ... without retryin...",
    which a reader took for a typo in their own words."""
    from ncx.query.assembler import _first_line

    task = "Retry POST requests on 503 " + "when the server asks for it " * 6 + "without retrying"
    got = _first_line(task)
    assert got.endswith("...") and len(got) <= 200
    assert task.startswith(got[:-3]) and task[len(got) - 3] == " "  # cut where a word ends
    assert _first_line("short task\nsecond line") == "short task"


def test_init_in_a_linked_worktree_names_the_config_it_writes(repo: Path) -> None:
    """In a `git worktree`, `ncx init` said "wrote .git/config", but `.git` is a file there:
    the driver goes into the repository's own config, which every worktree reads. It names
    that file."""
    write(repo, "README.md", "# Demo\n\nText.\n")
    commit_all(repo)
    wt = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "HEAD")
    out = ncx("init", cwd=wt).stdout.splitlines()
    shared = next(line for line in out if line.endswith("/config"))
    assert Path(shared.removeprefix("wrote ")).resolve() == (repo / ".git/config").resolve()
    assert "wrote .git/config" not in out
