"""warm: build the search cache in a detached process, off the user's time.

Stdlib only: the agent hooks and `ncx hook post-merge` call it, and must not pay for
importing the cache's dependencies to start it.
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
