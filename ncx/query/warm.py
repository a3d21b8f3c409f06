"""warm: build the search cache and the code index in a detached process, off the user's
time, at the moments git and the agents give (docs/design.md "Warming").

Stdlib only: the agent hooks call `warm_in_background`, and must not pay for importing the
cache's dependencies to start it. Whether a build would find work is ncx.query.warming's
(it reads the cache and the code index: apart, so nothing here joins their imports).
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
