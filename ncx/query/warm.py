"""warm: build the search cache in a detached process, off the user's time.

Stdlib only: the agent hooks and `ncx hook post-merge` call it, and must not pay for
importing the cache's dependencies to start it.
"""

from __future__ import annotations

from pathlib import Path


def warm_in_background(root: Path | None = None) -> bool:
    """Start `ncx agent-hook warm` (build the search cache) detached from this process."""
    import subprocess
    import sys

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
