"""warm: build the search cache and the code index in a detached process, off the user's
time, at the moments git and the agents give (docs/design.md "Warming").

Stdlib only at import: the agent hooks call `warm_in_background`, and must not pay for
importing the cache's dependencies to start it (`worth_warming` imports them when asked).
"""

from __future__ import annotations

from pathlib import Path


def cache_writable(root: Path | None = None) -> bool:
    """Whether a build here could save the search cache: `.neocortex/cache/` (or, while it
    does not exist, `.neocortex/`) can be written. False in a read-only tree (a CI checkout,
    a read-only mount), where every query answers without writing a cache."""
    import os

    base = (root if root is not None else Path.cwd()) / ".neocortex"
    cache = base / "cache"
    if cache.is_dir():
        return os.access(cache, os.W_OK)
    # (No .neocortex/ here: a hook run below the repository's root; the build finds it.)
    return not base.is_dir() or os.access(base, os.W_OK)


def warm_in_background(root: Path | None = None) -> bool:
    """Start `ncx agent-hook warm` (build the search cache) detached from this process.
    False, and nothing started, where it could not be saved (`cache_writable`): no caller
    may then say a cache is on its way."""
    import subprocess
    import sys

    if not cache_writable(root):
        return False
    try:
        subprocess.Popen(
            [sys.executable, "-m", "ncx", "agent-hook", "warm"],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives this command; never holds the terminal
        )
    except OSError:
        return False
    return True


# Committed units from which a fresh clone's first search-cache build is worth starting in
# the background: below it the first query builds the cache in about a second.
WARM_FROM_UNITS = 2_000


def worth_warming(root: Path) -> bool:
    """Whether a detached build would find work worth a process: the search cache or the
    code index is out of date (a pull, a branch switch, a sync that wrote chunks), or
    missing on a tree large enough for its first build to be felt (a fresh clone). Reads
    the cache's head, the code index's meta and git's listing; builds nothing. False in a
    tree that is not set up (`ncx init`) or cannot be written."""
    if not (root / ".neocortex").is_dir() or not cache_writable(root):
        return False
    from ncx.code.index import code_index_wants_build
    from ncx.query import cache

    try:
        if cache.has_cache(root):
            if not cache.cache_is_current(root):
                return True
        elif cache.committed_units(root) >= WARM_FROM_UNITS:
            return True
        return code_index_wants_build(root)
    except Exception:  # a tree git cannot list, a damaged file: the build says what is wrong
        return True


def warm_if_worth_it(root: Path) -> bool:
    """Start the detached build where it would find work (`worth_warming`); True if one
    was started."""
    return worth_warming(root) and warm_in_background(root)
