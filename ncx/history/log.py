"""log: each file's commit subjects, from `git log`, kept under .neocortex/cache/.

A task worded like the commits that touched a file points at that file (swe-dev R@5 0.848 ->
0.879 with each task's history before its parent; docs/decisions.md §46). Read at sync from
the last HISTORY_COMMITS non-merge commits, cached with the commit they end at, and kept
current by reading only the commits since (`git log CACHED..HEAD`): O(new commits). A
rewritten history (the cached commit no longer an ancestor) is read again; a shallow clone
gives what it has; a repository without commits has no history. A query only loads the cache,
never runs git.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

HISTORY_FILE = "history.json"
HISTORY_COMMITS = 2000
# A commit touching more files than this (a rename, a format pass, a release) says nothing
# of any one of them.
MAX_FILES = 20
K1 = 1.2
B = 0.75


@dataclass
class History:
    head: str
    commits: list[tuple[str, list[str]]]  # (subject, files), newest first
    _post: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)
    _len: dict[str, int] = field(default_factory=dict, repr=False)

    def _build(self) -> None:
        from ncx.query.lexical import terms

        for subject, files in self.commits:
            if len(files) > MAX_FILES:
                continue
            ts = terms(subject)
            for f in files:
                self._len[f] = self._len.get(f, 0) + len(ts)
                for t in ts:
                    row = self._post.setdefault(t, {})
                    row[f] = row.get(f, 0) + 1

    def scores(self, query_terms: list[str]) -> dict[str, float]:
        """BM25 of the query over each file's commit subjects."""
        try:
            return self._scores(query_terms)
        except (TypeError, ValueError, AttributeError, KeyError, ZeroDivisionError):
            return {}  # a cache edited by hand: rebuilt at the next sync

    def _scores(self, query_terms: list[str]) -> dict[str, float]:
        if not self._len:
            self._build()
        n = len(self._len)
        if not n:
            return {}
        avg = sum(self._len.values()) / n or 1.0
        out: dict[str, float] = {}
        for t in dict.fromkeys(query_terms):
            row = self._post.get(t)
            if not row:
                continue
            idf = math.log(1 + (n - len(row) + 0.5) / (len(row) + 0.5))
            for f, tf in row.items():
                norm = K1 * (1 - B + B * self._len[f] / avg)
                out[f] = out.get(f, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
        return out


def _read_log(root: Path, rev_range: list[str], limit: int) -> list[tuple[str, list[str]]]:
    from ncx import repo

    out = repo.git(
        root,
        "-c",
        "core.quotePath=false",
        "log",
        "--no-merges",
        "--no-renames",
        f"-n{limit}",
        "--name-only",
        "--format=%x00%s",
        *rev_range,
        "--",
        check=False,
    ).decode("utf-8", "replace")
    commits = []
    for chunk in out.split("\x00")[1:]:
        lines = chunk.split("\n")
        commits.append((lines[0], [x for x in lines[1:] if x.strip()]))
    return commits


def update_history(root: Path, limit: int = HISTORY_COMMITS) -> History:
    """The cached history brought to HEAD (reading only the commits since), saved."""
    from ncx import repo
    from ncx.errors import NcxError
    from ncx.paths import cache_file
    from ncx.store import write_atomic

    head = repo.git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).decode().strip()
    old = load_history(root)
    if old is not None and old.head == head:
        return old
    if not head:
        h = History("", [])
    elif old is not None and old.head and _is_ancestor(root, old.head, head):
        new = _read_log(root, [f"{old.head}..{head}"], limit)
        h = History(head, (new + old.commits)[:limit])
    else:
        h = History(head, _read_log(root, [head], limit))
    h._build()  # the postings are saved too: a query loads them rather than stemming 2,000 subjects
    obj = {"head": h.head, "commits": h.commits, "post": h._post, "len": h._len}
    data = json.dumps(obj, separators=(",", ":"))
    try:
        write_atomic(cache_file(root, HISTORY_FILE), data.encode())
    except (OSError, NcxError):
        pass  # a read-only cache (or a link in its place): read again by the next sync
    return h


def _is_ancestor(root: Path, old: str, head: str) -> bool:
    import subprocess

    got = subprocess.run(
        ["git", "-C", str(root), "merge-base", "--is-ancestor", old, head], capture_output=True
    )
    return got.returncode == 0


def load_history(root: Path) -> History | None:
    """The cached history, or None when there is none (or it cannot be read)."""
    from ncx.paths import read_cache

    try:
        obj = json.loads(read_cache(root, HISTORY_FILE))
        h = History(str(obj["head"]), [(str(s), [str(f) for f in fs]) for s, fs in obj["commits"]])
        post, lens = obj.get("post"), obj.get("len")
        if isinstance(post, dict) and isinstance(lens, dict):
            h._post, h._len = post, lens  # a damaged value makes scores() answer nothing
        return h
    except (OSError, ValueError, KeyError, TypeError):
        return None
