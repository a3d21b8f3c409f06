"""locks: one writer at a time for read-modify-write updates of .neocortex/ files.

`memory evolve --useful` reads a memory, changes a number and writes it back; two at once
lose one update, and `memory add` checks for a near-duplicate before it writes, so two
racing adds of the same learning would both pass the check. Both run under `exclusive`,
and so does a sync's pass over memories (it rewrites their hash lines and sweeps vectors
without a markdown file, which is what an add in progress looks like for a moment).

POSIX: `flock` on a file under .neocortex/cache/ (untracked; released by the kernel when
the process dies, so a killed run never leaves a lock behind). Windows: `msvcrt.locking`
on the same file, which also dies with the process. Where the lock file cannot be created
(a read-only tree), no lock is taken: atomic renames still keep every file whole, only
concurrent updates may be lost.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ncx.paths import cache_folder

# Re-entrant within one thread (reject -> remove, sync -> ...); other threads of the same
# process (the MCP server's) open their own file description and wait like processes do.
_local = threading.local()


def _held() -> set[str]:
    held: set[str] | None = getattr(_local, "held", None)
    if held is None:
        held = _local.held = set()
    return held


@contextlib.contextmanager
def exclusive(root: Path, name: str = "memories") -> Iterator[None]:
    """Hold the repo-wide lock `name` (blocking) for the duration of the block."""
    folder = cache_folder(root)  # a linked cache/ is refused: the lock file is opened there
    key = str(folder.resolve() / name)
    if key in _held() or not folder.parent.is_dir():
        yield  # held already, or no .neocortex/ yet: the command fails on that, not on a lock
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        from ncx.store import open_lock

        f = open_lock(folder / f"{name}.lock")  # (a link in its place: replaced, not followed)
    except OSError:
        yield  # a read-only or odd tree: work unlocked rather than refuse to work
        return
    try:
        _acquire(f)
        _held().add(key)
        try:
            yield
        finally:
            _held().discard(key)
    finally:
        f.close()  # closing releases the lock


def _acquire(f: IO[bytes]) -> None:
    if sys.platform != "win32":
        import fcntl

        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        return
    import msvcrt

    fd = f.fileno()
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
            return
        except OSError:  # LK_LOCK gives up after ~10 s; keep waiting
            continue
