"""Warming: the moments git and the agents give (a sync, a branch switch or a pull, a
session's start) start a detached build of the search cache and the code index where one
would find work, so the first query after them answers from both (docs/design.md
"Warming")."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import commit_all, first_sync, git, ncx, write

import ncx.query.warm as warm
from ncx.code.index import code_index_wants_build, load_code_index
from ncx.query.warming import worth_warming

pytestmark = pytest.mark.warm


def _tree(root: Path) -> None:
    write(root, "docs/guide.md", "# Guide\n\n## Timeouts\n\nEvery request needs a timeout.\n")
    write(root, "pkg/client.py", "def send(request, timeout):\n    return request\n")
    first_sync(root)
    commit_all(root, "ncx")


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Path | None]:
    """The detached builds the commands start (recorded, not started)."""
    calls: list[Path | None] = []

    def record(root: Path | None = None) -> bool:
        calls.append(root)
        return True

    monkeypatch.setattr(warm, "warm_in_background", record)
    return calls


def test_worth_warming_follows_the_cache_and_the_code_index(
    repo: Path, started: list[Path | None]
) -> None:
    _tree(repo)
    ncx("retrieve", "timeout")  # builds the search cache; the sync built the code index
    assert not worth_warming(repo)  # both current: a build would find nothing
    write(repo, "pkg/client.py", "def send(request, timeout, retries):\n    return request\n")
    assert code_index_wants_build(repo) and worth_warming(repo)
    load_code_index(repo)
    assert not worth_warming(repo)
    write(repo, "docs/guide.md", "# Guide\n\n## Retries\n\nThree retries, then give up.\n")
    started.clear()
    ncx("sync", "docs/guide.md")  # wrote chunks: the cache is stale, a build is started
    assert started == [repo] and worth_warming(repo)


def test_a_small_fresh_tree_starts_no_build(repo: Path, started: list[Path | None]) -> None:
    _tree(repo)  # no search cache yet, and too small for its first build to be felt
    assert not worth_warming(repo) and started == []
    assert not worth_warming(repo / "pkg")  # not the repository's root: nothing


def test_a_large_fresh_tree_warms_its_first_build(
    repo: Path, monkeypatch: pytest.MonkeyPatch, started: list[Path | None]
) -> None:
    from ncx.query import warming

    _tree(repo)  # committed chunk files, no search cache: a fresh clone's
    monkeypatch.setattr(warming, "WARM_FROM_FILES", 1)
    assert warming._unit_files(repo) >= 1 and worth_warming(repo)


def test_a_branch_switch_and_a_session_start_warm_a_stale_code_index(
    repo: Path, started: list[Path | None]
) -> None:
    _tree(repo)
    git(repo, "checkout", "-q", "-b", "other")
    write(repo, "pkg/server.py", "def serve(port):\n    return port\n")
    commit_all(repo, "server")
    env = {"PRE_COMMIT_CHECKOUT_TYPE": "1", "PRE_COMMIT_FROM_REF": "main"}
    ncx("hook", "post-merge", env=env)
    assert started == [repo]  # the code index does not hold pkg/server.py yet
    started.clear()
    out = ncx("agent-hook", "session-start", input=json.dumps({"cwd": str(repo)}))
    assert out.stdout.startswith("<!-- ncx wakeup -->") and started == [repo]
    load_code_index(repo)
    started.clear()
    ncx("agent-hook", "session-start", input=json.dumps({"cwd": str(repo)}))
    assert started == []  # nothing stale: no process started


@pytest.mark.e2e
def test_after_a_checkout_the_detached_build_brings_the_code_index_up_to_date(
    repo: Path,
) -> None:
    _tree(repo)
    git(repo, "checkout", "-q", "-b", "other")
    write(repo, "pkg/server.py", "def serve(port):\n    return port\n")
    commit_all(repo, "server")
    assert code_index_wants_build(repo)
    env = {"PRE_COMMIT_CHECKOUT_TYPE": "1", "PRE_COMMIT_FROM_REF": "main"}
    ncx("hook", "post-merge", env=env)  # starts the real detached `ncx agent-hook warm`
    deadline = time.monotonic() + 60
    while code_index_wants_build(repo) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not code_index_wants_build(repo)
