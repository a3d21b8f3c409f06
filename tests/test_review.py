"""ncx review: the knowledge diff of a branch, on real git history."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_all, git, ncx, write

MEM = """---
id: {id}
type: experiential
domain: AUTH
confidence: {conf}
status: {status}
superseded_by: {by}
---

## Learning

{text}

## Context

Found while fixing login.
"""


def mem(root: Path, mid: str, text: str, conf: str = "medium", status: str = "active", by: str = "null") -> None:
    write(root, f".neocortex/memories/{mid}.md", MEM.format(id=mid, text=text, conf=conf, status=status, by=by))


def test_review_report(repo: Path) -> None:
    write(repo, "docs/a.md", "# A\n\n" + "Alpha text about the login flow. " * 20 + "\n\n## B\n\n" + "Beta text. " * 30 + "\n")
    commit_all(repo)
    ncx("init")
    mem(repo, "MEM-2026-01-01-aaaaaa", "Old way: retry forever.")
    mem(repo, "MEM-2026-01-01-bbbbbb", "Gone soon.")
    ncx("sync")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    mem(repo, "MEM-2026-01-01-aaaaaa", "Old way: retry forever.", status="superseded", by="MEM-2026-01-02-cccccc")
    mem(repo, "MEM-2026-01-02-cccccc", "Retry at most 3 times with backoff.", conf="high")
    (repo / ".neocortex/memories/MEM-2026-01-01-bbbbbb.md").unlink()
    write(repo, "docs/a.md", "# A\n\n" + "Alpha text about the login flow. " * 20 + "\n\n## B\n\n" + "Beta changed. " * 30 + "\n")
    ncx("sync")
    commit_all(repo, "feature")
    md = ncx("review", "main..feature").stdout
    assert "**added** `MEM-2026-01-02-cccccc`" in md and "Retry at most 3 times" in md
    assert "**superseded** `MEM-2026-01-01-aaaaaa`" in md and "status active → superseded" in md
    assert "**removed** `MEM-2026-01-01-bbbbbb`" in md and "Gone soon." in md
    assert "| `docs/a.md` |" in md and "A > B" in md
    data = json.loads(ncx("review", "main..feature", "--format", "json").stdout)
    assert {m["change"] for m in data["memories"]} == {"added", "superseded", "removed"}
    assert data["problems"] == []
    assert ncx("review").stdout == md  # default range: merge base with main
    # a broken tree fails only when asked to
    (repo / ".neocortex/chunks/docs/a/a--b.npy").unlink()
    assert ncx("review", "main..feature").returncode == 0
    assert ncx("review", "main..feature", "--fail-on-problems", ok=False).returncode == 1
    assert ncx("review", "nope..HEAD", ok=False).returncode == 2


def test_init_writes_gitattributes_block_once(repo: Path) -> None:
    write(repo, ".gitattributes", "*.png binary\n")
    ncx("init")
    ncx("init")
    text = (repo / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n") and text.count("# >>> ncx >>>") == 1
    assert ".neocortex/chunks/** linguist-generated=true" in text
