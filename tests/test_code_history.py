"""The repository's commits as evidence for code (issue 38 item 3; docs/decisions.md §46)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_all, git, ncx, write

from ncx.history.log import HISTORY_FILE, load_history, update_history


def test_history_is_cached_and_read_by_new_commits_only(repo: Path) -> None:
    assert update_history(repo).commits == []  # no commit yet: no history, no error
    write(repo, ".gitignore", ".neocortex/cache/\n")
    write(repo, "pkg/a.py", "x = 1\n")
    commit_all(repo, "skip the header when the body is empty")
    h = update_history(repo)
    assert h.commits == [("skip the header when the body is empty", [".gitignore", "pkg/a.py"])]
    # the cache is what the next update starts from: a marker put in it survives a new commit
    cache = repo / ".neocortex" / "cache" / HISTORY_FILE
    obj = json.loads(cache.read_text())
    obj["commits"].append(["marker", ["pkg/old.py"]])
    cache.write_text(json.dumps(obj))
    write(repo, "pkg/b.py", "y = 2\n")
    commit_all(repo, "retry on reset")
    h = update_history(repo)
    assert [s for s, _ in h.commits] == [
        "retry on reset",
        "skip the header when the body is empty",
        "marker",
    ]
    assert load_history(repo) is not None and load_history(repo).head == h.head  # type: ignore[union-attr]
    # a rewritten history is read again
    git(repo, "commit", "-q", "--amend", "--no-verify", "-m", "retry on a reset")
    assert [s for s, _ in update_history(repo).commits] == [
        "retry on a reset",
        "skip the header when the body is empty",
    ]


def test_a_task_worded_like_past_commits_lifts_their_file(repo: Path) -> None:
    body = "def handle(request):\n    '''Handle the request.'''\n    return request\n"
    write(repo, "pkg/alpha.py", body)
    write(repo, "pkg/beta.py", body.replace("handle", "process"))
    commit_all(repo, "start")
    for i in range(3):
        write(repo, "pkg/beta.py", body.replace("handle", "process") + f"# {i}\n")
        commit_all(repo, f"skipped markers are evaluated lazily ({i})")
    write(repo, "pkg/alpha.py", body + "# z\n")
    commit_all(repo, "tidy")
    ncx("init")
    ncx("sync")
    # an issue (history weighs for long tasks only): its words meet beta's commit subjects
    issue = (
        "request markers evaluated lazily\nWhen I run the suite with many markers the run is "
        "slow, and I would like it to be faster. This happens on every machine I tried, with "
        "every version since last year, and the change seems small to me."
    )
    out = ncx("retrieve", "--kind", "code", "--json", "--k", "2", issue)
    rows = [json.loads(x) for x in out.stdout.splitlines()]
    assert rows[0]["source_path"] == "pkg/beta.py", rows
