"""One frame from the first query on: a clone's first `ncx assemble` builds the caches it
needs (the docs cache, the code index) and answers from them, so it is byte-identical to
every later frame, whether the cache is missing (a fresh clone), deleted, or stale after a
pull; concurrent first queries share one build; a read-only tree builds in memory and
answers the same bytes (docs/decisions.md §44)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import NCX_CMD, commit_all, git, ncx, read_only, write

from ncx.config import load_config
from ncx.query import cache, units
from ncx.query.search import Searcher

TOPICS = {
    "billing": "Invoices are issued monthly; a failed card payment retries three times.",
    "refunds": "A refund returns the payment to the original card within five days.",
    "search": "The catalogue search ranks products by text relevance and stock.",
    "shipping": "Parcels leave the warehouse daily; tracking numbers arrive by email.",
    "accounts": "An account is locked after five failed password attempts.",
}
TASK = "make refund_to_card return the payment to the original card"
# More source files than the retired quick answer read itself (150): its first frame had no
# code; the one frame has.
MODULES = 160


def _tree(repo: Path, modules: int = 0) -> None:
    for name, text in TOPICS.items():
        write(
            repo,
            f"docs/{name}.md",
            f"# {name.title()}\n\n{text}\n\n## Limits of {name}\n\nAt most ten {name} calls "
            "per minute per user; the retry_policy backs off exponentially.\n",
        )
    write(
        repo,
        "shop/refunds.py",
        '"""Refunds."""\n\n\ndef refund_to_card(payment, card):\n'
        '    """Return the payment to the original card."""\n    return card.credit(payment)\n',
    )
    for i in range(modules):
        write(repo, f"shop/parts/part_{i}.py", f"def part_{i}(x):\n    return x + {i}\n")


def _synced_clone(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`repo`'s docs synced and committed, then cloned fresh and entered (no cache)."""
    ncx("init")
    commit_all(repo)
    ncx("sync")
    commit_all(repo, "chunks")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    monkeypatch.chdir(clone)
    return clone


@pytest.fixture
def cloned(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed, synced tree of docs and code, cloned fresh: no cache, as a teammate
    gets it."""
    _tree(repo)
    return _synced_clone(repo, tmp_path, monkeypatch)


@pytest.fixture
def big_clone(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`cloned` with more source files than the retired quick answer read itself."""
    _tree(repo, MODULES)
    return _synced_clone(repo, tmp_path, monkeypatch)


def _frame(*extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return ncx("assemble", "--task", TASK, "--budget", "3000", *extra, env=env)


def test_a_fresh_clones_first_frame_is_the_warm_frame(cloned: Path) -> None:
    _first_is_warm(cloned)


@pytest.mark.e2e
def test_a_fresh_clone_of_many_source_files_frames_its_code_at_once(big_clone: Path) -> None:
    # 160 source files: the retired quick answer left the code out of this first frame.
    _first_is_warm(big_clone)


def _first_is_warm(cloned: Path) -> None:
    assert not cache.has_cache(cloned) and not (cloned / ".neocortex/cache/code").exists()
    first = _frame().stdout
    assert "docs/refunds.md" in first  # docs ...
    assert "## Code to Open" in first and "shop/refunds.py" in first  # ... and code
    assert "Quick search" not in first and "background" not in first
    assert cache.has_cache(cloned)
    assert _frame().stdout == first
    assert git(cloned, "status", "--short") == ""


def test_a_deleted_cache_gives_the_same_frame(cloned: Path) -> None:
    warm = _frame().stdout
    shutil.rmtree(cloned / ".neocortex/cache")
    assert _frame().stdout == warm


def test_a_stale_cache_after_a_pull_gives_the_frame_of_the_new_tree(
    repo: Path, cloned: Path, tmp_path: Path
) -> None:
    before = _frame().stdout
    write(
        repo,
        "docs/refunds.md",
        "# Refunds\n\nA refund returns the payment to the original card within two days; "
        "a gift card refund becomes store credit.\n",
    )
    write(
        repo,
        "shop/credit.py",
        'def store_credit(payment):\n    """A gift card\'s refund as store credit."""\n'
        "    return payment\n",
    )
    commit_all(repo, "docs")
    ncx("sync", cwd=repo)
    commit_all(repo, "chunks")
    git(cloned, "pull", "-q", "--ff-only")
    assert not cache.cache_is_current(cloned)  # stale: the pull moved docs and code
    first = _frame().stdout
    assert first != before and "two days" in first
    assert _frame().stdout == first  # the warm frame of the new tree
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(repo), str(fresh))
    # The updated cache holds what one built from nothing holds: the same knowledge.
    again = ncx("assemble", "--task", TASK, "--budget", "3000", cwd=fresh).stdout
    assert _zones(again) == _zones(first)


def _zones(frame: str) -> str:
    """A frame without its id line and Current State zone (git state differs by clone)."""
    body = frame.split("\n", 1)[1]
    head, _, tail = body.partition("## Current State")
    return head + tail.partition("\n## ")[2]


def test_a_slow_build_says_so_on_stderr_and_a_warm_query_says_nothing(cloned: Path) -> None:
    first = _frame(env={"NCX_PROGRESS_AFTER": "0"})
    assert "ncx: building the search cache (once a clone) ..." in first.stderr
    assert "ncx: building the code index (once a clone) ..." in first.stderr
    assert "building the search cache (once a clone): done in" in first.stderr
    warm = _frame(env={"NCX_PROGRESS_AFTER": "0"})
    assert "building" not in warm.stderr and warm.stdout == first.stdout
    shutil.rmtree(cloned / ".neocortex/cache")
    quick = _frame()  # a build within the second: no line
    assert "building" not in quick.stderr and quick.stdout == first.stdout


def test_a_read_only_tree_builds_in_memory_and_answers_the_same_bytes(cloned: Path) -> None:
    with read_only(cloned / ".neocortex"):
        got = [_frame(), _frame()]
        assert not (cloned / ".neocortex/cache").exists()
    assert got[0].stdout == got[1].stdout
    assert "without writing a search cache" in got[0].stderr
    assert _frame().stdout == got[0].stdout  # and the writable tree's frame


@pytest.mark.e2e
def test_two_concurrent_first_queries_share_one_build(cloned: Path) -> None:
    """Both wait on the cache lock (held here until both are waiting), one builds, the
    other loads what it wrote: the same frame, one build."""
    import fcntl

    folder = cloned / ".neocortex/cache"
    folder.mkdir()
    env = {"NCX_PROGRESS_AFTER": "0"}
    procs, errs = [], []
    with open(folder / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        for i in range(2):
            err = cloned.parent / f"err{i}"
            errs.append(err)
            procs.append(
                subprocess.Popen(
                    [*NCX_CMD, "assemble", "--task", TASK, "--budget", "3000"],
                    cwd=cloned,
                    stdout=subprocess.PIPE,
                    stderr=err.open("w"),
                    text=True,
                    env={**os.environ, **env},
                )
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(
            e.exists() and "waiting for the search cache" in e.read_text() for e in errs
        ):
            time.sleep(0.05)
    outs = [p.communicate(timeout=120)[0] for p in procs]
    stderr = [e.read_text() for e in errs]
    assert all(p.returncode == 0 for p in procs), stderr
    assert all("waiting for the search cache" in e for e in stderr), stderr
    assert sum(e.count("ncx: building the search cache (once a clone) ...") for e in stderr) == 1
    assert outs[0] == outs[1] and "## Code to Open" in outs[0]
    assert _frame().stdout == outs[0]


def test_the_mcp_servers_first_call_answers_from_the_whole_cache(cloned: Path) -> None:
    from ncx.agents.mcp_server import _Tree

    tree = _Tree(cloned, load_config())
    s = tree.searcher("how are refund payments returned to the card")
    assert cache.has_cache(cloned)
    assert len(s.index.units) == len(cache.load_index(cloned).units)
    hits = s.search("how are refund payments returned to the card", k=3)
    assert hits and hits[0].source_path == "docs/refunds.md"


def test_a_cache_another_ncx_wrote_is_rebuilt_for_the_same_frame(cloned: Path) -> None:
    """After an upgrade the old cache cannot be patched, only rebuilt whole: the first
    query rebuilds it and answers as a warm query does."""
    import numpy as np

    warm = _frame().stdout
    path = cloned / ".neocortex/cache/index.npz"
    members = dict(np.load(path))
    head = json.loads(bytes(members["head"]).decode())
    members["head"] = np.frombuffer(json.dumps({**head, "version": 1}).encode(), dtype=np.uint8)
    np.savez(path, **members)
    assert not cache.has_cache(cloned)
    assert _frame().stdout == warm
    assert cache.has_cache(cloned)


@pytest.mark.warm  # the hook's real detached build
def test_post_merge_brings_an_existing_cache_up_to_date(cloned: Path) -> None:
    ncx("retrieve", "card refund")  # builds the cache
    assert cache.cache_is_current(cloned)
    git(cloned, "checkout", "-q", "-b", "feature")
    write(cloned, "docs/gifts.md", "# Gifts\n\nGift cards never expire and can be topped up.\n")
    commit_all(cloned, "doc")
    ncx("sync")
    commit_all(cloned, "chunks")
    git(cloned, "checkout", "-q", "-")
    ncx("retrieve", "card refund")  # the cache matches this branch again
    assert cache.cache_is_current(cloned)
    git(cloned, "merge", "-q", "--no-edit", "feature")
    assert not cache.cache_is_current(cloned)
    ncx("hook", "post-merge")
    deadline = time.monotonic() + 60
    while not cache.cache_is_current(cloned) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cache.cache_is_current(cloned)


def test_a_chunks_body_is_read_at_its_offset_or_found_again(cloned: Path) -> None:
    """The cache records each block's bytes in its doc's chunk file; a body is read there,
    and when the file moved under it (an offset that no longer starts that block), the file
    is split again and the block taken by its place."""
    index = cache.load_index(cloned)
    i = next(n for n, u in enumerate(index.units) if u.kind == "chunk")
    unit = index.units[i]
    assert unit.at >= 0 and unit.size > 0
    body = index.body(i)
    assert body and body in (cloned / unit.file).read_text()
    moved = dataclasses.replace(unit, at=unit.at + 1)
    assert cache.unit_body(cloned, moved).strip() == body


def test_a_stale_offset_never_serves_a_neighbours_text() -> None:
    """`docs/ops.md#ops` is not `docs/ops.md#ops--deploy`: a block read at an old offset is
    taken only when its id line names exactly this unit (plain or YAML-quoted)."""
    assert units._names(b"---\nid: docs/ops.md#ops\n", "docs/ops.md#ops")
    assert not units._names(b"---\nid: docs/ops.md#ops--deploy\n", "docs/ops.md#ops")
    assert units._names(b"---\nid: 'docs/a: b.md#it''s'\n", "docs/a: b.md#it's")


def test_a_searcher_on_a_clone_answers_a_query_in_chinese(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, text in TOPICS.items():
        write(repo, f"docs/{name}.md", f"# {name.title()}\n\n{text}\n")
    write(
        repo, "docs/tokyo.md", "# 東京\n\n東京都の設定を変更する方法。設定ファイルを編集します。\n"
    )
    clone = _synced_clone(repo, tmp_path, monkeypatch)
    hits = Searcher.open(clone, load_config()).search("東京都の設定を変更する", k=3)
    assert hits and hits[0].source_path == "docs/tokyo.md"


_BESIDE = """
import sys
from pathlib import Path
from ncx.config import load_config
from ncx.query import beside
from ncx.query.search import Searcher
root = Path(sys.argv[1])
index = root / ".neocortex/cache/code/index.npz"
print("wanted", beside._both_missing(root))
with beside.code_index_beside(root):
    Searcher.open(root, load_config())  # the search cache, built here
print("code index", index.is_file())
print("again", beside._both_missing(root))
"""


def test_a_fresh_clone_builds_its_code_index_beside_its_search_cache(big_clone: Path) -> None:
    """A fresh clone needs both indexes: the code index is built in a child process while
    this one builds the search cache (decisions.md §69), so leaving the block finds it built
    though nothing here asked for code; the index is the one a build in this process
    writes, byte for byte, and the frame the warm frame."""
    script = big_clone.parent / "beside.py"
    script.write_text(_BESIDE)
    cmd = [sys.executable, str(script), str(big_clone)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:3] == ["wanted True", "code index True", "again False"], out
    index = big_clone / ".neocortex/cache/code/index.npz"
    beside_bytes = index.read_bytes()
    first = _frame().stdout
    assert "shop/refunds.py" in first
    shutil.rmtree(big_clone / ".neocortex/cache")
    assert _frame().stdout == first  # (built in turn, in this process)
    assert index.read_bytes() == beside_bytes
