"""handover: the sync hook's verdict on the index, kept for the check hook of the same commit.

pre-commit runs ncx-sync and ncx-check as two processes on one index, and both judge it with
`staged.verify`: on a one-doc commit of a 38k-chunk tree that is ~90 ms, and the modules it
imports (the chunker, the secrets rules) as much again: half of what the check hook costs. The
sync hook writes the working tree, never the index, so what it found in the index is what the
check hook would find, as long as nothing verify reads has moved. The key is all of that: the
index's bytes, the working tree's manifest (sync may rewrite it), the settings, the scope (it
comes from the included-by map, which sync may rewrite) and the pre-commit process both hooks
are children of (so a verdict is never carried from one run, or one ncx, to another). A verdict
whose key differs is judged again; one is read at most once.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from ncx.config import Config
from ncx.errors import NcxError
from ncx.layout import MANIFEST, NCX_DIR
from ncx.tree.staged import Finding, Scope

FILE = "verdict.json"


def key(root: Path, cfg: Config, scope: Scope | None) -> str | None:
    """What the index's verdict depends on, hashed; None outside `git commit` (no
    GIT_INDEX_FILE: nothing to hand over) or when the index cannot be read."""
    index = os.environ.get("GIT_INDEX_FILE")
    if not index:
        return None
    h = hashlib.sha256()
    try:
        with open(os.path.join(root, index), "rb") as f:  # (an absolute name stays itself)
            h.update(f.read())
    except OSError:
        return None
    try:
        with open(os.path.join(root, NCX_DIR, MANIFEST), "rb") as f:
            h.update(f.read())
    except OSError:
        h.update(b"\0no manifest")
    parts = [str(os.getppid()), os.path.abspath(os.path.join(root, index)), repr(cfg)]
    if scope is None:
        parts.append("everything")
    else:  # sorted: a frozenset's order changes with every process's string hashes
        for group in (scope.docs, scope.memories, scope.changed_docs, scope.leftovers):
            parts.append("\0".join(sorted(group)))
        parts.append(str(scope.everything))
    h.update("\n".join(parts).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def leave(root: Path, k: str | None, findings: Sequence[Finding]) -> None:
    """Keep the sync hook's findings for the check hook (best effort: a cache that cannot be
    written costs the check hook its own verify, nothing else)."""
    if k is None:
        return
    from ncx.paths import cache_file
    from ncx.store import write_atomic

    rows = [[f.path, f.message, f.doc, f.syncable, f.reembed] for f in findings]
    data = json.dumps({"key": k, "findings": rows}, ensure_ascii=False).encode(
        "utf-8", "surrogateescape"
    )
    try:
        write_atomic(cache_file(root, FILE), data)
    except (OSError, NcxError):
        pass


def take(root: Path, k: str | None) -> list[Finding] | None:
    """The findings the sync hook left under this key, or None (none left, another key, or
    unreadable). The file is removed either way: a verdict serves one check."""
    if k is None:
        return None
    from ncx.paths import cache_file
    from ncx.regular import read_regular  # (not ncx.store: its imports cost a hook ~25 ms)

    try:
        path = cache_file(root, FILE)
        raw = read_regular(path, follow=False)
    except (OSError, NcxError):
        return None
    try:
        os.unlink(path)
    except OSError:
        pass
    try:
        got = json.loads(raw.decode("utf-8", "surrogateescape"))
        if got.get("key") != k:
            return None
        return [
            Finding(str(p), str(m), None if d is None else str(d), bool(s), reembed=bool(r))
            for p, m, d, s, r in got["findings"]
        ]
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
