"""What three new users' 30 frames of uvicorn, chi and ky found (docs/decisions.md §106), each
on the real thing it broke: a doc line whose code span held braces, stored wrong."""

from __future__ import annotations

from pathlib import Path

from conftest import first_sync, ncx, write


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
