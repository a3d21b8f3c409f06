"""Frames (`ncx assemble`) spend the budget on what the ranking found, measured by
benchmarks/frame_suite.py: as many short notes as fit, a document's further sections when
they rank, changelog entries as pointers only."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from conftest import _WORDS, commit_all, ncx, write

from ncx.tokens import count_tokens


def _frame(*args: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(ncx("assemble", *args, "--format", "json").stdout)
    return out


def _items(frame: dict[str, Any]) -> list[dict[str, Any]]:
    return [it for z in frame["zones"] for it in z["items"]]


def test_a_frame_over_short_notes_holds_as_many_as_fit(repo: Path) -> None:
    # 150 one-line notes that all match the task: a 4,000-token frame has room for about
    # 100 of them; a fixed candidate count (budget // 50 = 80) left the rest of it empty.
    words = [w for w in _WORDS if len(w) > 3]
    for i, (a, b, c) in enumerate(itertools.islice(itertools.combinations(words, 3), 150)):
        write(repo, f"notes/n{i:03}.md", f"The cache note says {a} {b} and {c}.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    frame = _frame("--task", "cache note", "--budget", "4000")
    assert len(_items(frame)) > 80
    assert frame["tokens"] >= 0.8 * 4000


def test_changelog_entries_are_pointers_one_per_log(repo: Path) -> None:
    def entry(*words: str) -> str:
        return f"The cache folder is shared and cleaned by the cache command ({' '.join(words)}). "

    releases = "".join(
        f"## 1.{i}.0 (2024-0{i}-01)\n\n### Fixes\n\n" + entry(w, "release") * 8 + "\n\n"
        for i, w in enumerate(("server", "client", "index", "search", "hook", "merge"), 1)
    )
    write(repo, "CHANGELOG.md", "# Changelog\n\n" + releases)
    # a guide that happens to be called history.md: its sections are not releases
    write(repo, "docs/history.md", "# History\n\n## Reading it\n\n" + entry("git", "log") * 8)
    write(repo, "docs/cache.md", "# Cache\n\n## Folder\n\n" + entry("path", "file") * 8)
    commit_all(repo)
    ncx("init")
    ncx("sync")
    items = _items(_frame("--task", "cache folder shared cleaned command", "--budget", "8000"))
    logs = [it for it in items if it["source_path"] == "CHANGELOG.md"]
    # one entry, quoted by its opening (~80 tokens) where the whole entry is ~200
    assert count_tokens(entry("server", "release") * 8) > 150
    assert len(logs) == 1 and logs[0]["tokens"] <= 90 and logs[0]["text"].endswith("[…]")
    guide = [it for it in items if it["source_path"] == "docs/history.md"]
    assert guide and not guide[0]["text"].endswith("[…]")
