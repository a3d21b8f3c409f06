"""beside: a fresh clone's first frame builds its two indexes at once.

A first frame needs the search cache and the code index, and a fresh clone (or a deleted
cache) has neither. Built one after the other, the frame waits for both in turn (rich: 1.1 s
for 603 docs units, then 1.2 s for 190 source files); they read different files and write
different caches under different locks, so the code index is built in a forked child while
this process builds the search cache, and the frame loads what the child wrote. The bytes are
those of a build in this process (the same function, the same files): only the wait
changes (docs/decisions.md §69).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def code_index_beside(root: Path) -> Iterator[None]:
    """Inside: the code index is being built in a child process where a fresh clone needs
    both indexes; on leaving, it is built (the child waited for). Elsewhere (an index on
    disk, a cache to load, a tree that cannot be written, a process with threads, where
    forking is unsafe) nothing is started and the frame builds as before."""
    pid = _start(root) if _both_missing(root) else None
    try:
        yield
    finally:
        if pid is not None:
            from ncx.slow import slow

            with slow("building the code index (once a clone)"):  # (what is left of it)
                _wait(pid)


def _both_missing(root: Path) -> bool:
    from ncx.code.index import has_code_index
    from ncx.query import warm
    from ncx.query.fresh import has_cache

    return (
        sys.platform == "linux"  # (where a fork after numpy is the rule: ncx.parallel's workers)
        and threading.active_count() == 1  # (a fork copies only this thread: no lock left held)
        and (root / ".neocortex").is_dir()
        and warm.cache_writable(root)  # (else the child's index could not reach this process)
        and not has_code_index(root)
        and not has_cache(root)
    )


def _start(root: Path) -> int | None:
    try:
        pid = os.fork()
    except OSError:
        return None  # no process to be had: built here, in turn
    if pid:
        return pid
    status = 1
    try:  # the child: quiet (nothing of it reaches this command's output), then gone
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        from ncx.code.index import load_code_index

        load_code_index(root)  # (under the code index's lock: a query beside it waits)
        status = 0
    except BaseException:  # (the frame then builds it itself, and says why if it cannot)
        pass
    finally:
        os._exit(status)  # no atexit handler, no flush of buffers copied from the parent


def _wait(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):  # (a signal's EINTR is retried by Python)
        os.waitpid(pid, 0)
