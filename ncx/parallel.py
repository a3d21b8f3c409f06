"""parallel: run a pure function over many jobs, in worker processes when it pays. No I/O of
its own; results come back in the order of the jobs, identical to a serial run.

Used where a whole-tree pass is per-file CPU work (a cold cache build, a first sync or a
full check): spread over the CPUs of a laptop it takes about half the time on 2 cores.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


@contextlib.contextmanager
def no_collector() -> Iterator[None]:
    """The cyclic garbage collector off for a whole-tree pass, back on after (a cycle left
    is collected then). A pass makes millions of small objects (terms, ast nodes, rows) freed
    by reference counting; the collections their allocations set off only walk them again
    and again as the records pile up: 7-13% of a code index build and 11% of a cold docs
    cache (docs/decisions.md §92). Forked workers inherit it off."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def workers() -> int:
    """How many worker processes a whole-tree pass uses: one per CPU, at most 8."""
    return min(os.cpu_count() or 1, 8)


def ordered_map(
    fn: Callable[[T], R],
    jobs: Sequence[T],
    *,
    at_least: int,
    each: Callable[[int], None] | None = None,
    chunksize: int | None = None,
) -> list[R]:
    """[fn(job) for job in jobs], in worker processes when there are `at_least` jobs and more
    than one CPU (below that, starting workers costs more than it saves). `each(i)` is called
    as result i arrives (progress). `fn` must be a picklable top-level function or partial.
    `chunksize`: jobs sent to a worker at a time (default: about 8 rounds per worker)."""
    results = []
    for i, got in enumerate(ordered_imap(fn, jobs, at_least=at_least, chunksize=chunksize)):
        if each is not None:
            each(i)
        results.append(got)
    return results


def ordered_imap(
    fn: Callable[[T], R], jobs: Sequence[T], *, at_least: int, chunksize: int | None = None
) -> Iterator[R]:
    """ordered_map's results one at a time, each as soon as it and those before it are done,
    so the caller can write them while the workers go on."""
    n = workers()
    done = 0
    if len(jobs) >= at_least and n >= 2:
        import concurrent.futures

        try:
            with concurrent.futures.ProcessPoolExecutor(
                max_workers=n, initializer=_die_with_parent, initargs=(os.getpid(),)
            ) as pool:
                size = chunksize or max(8, len(jobs) // (n * 8))
                for got in pool.map(fn, jobs, chunksize=size):
                    done += 1
                    yield got
                return
        except (OSError, concurrent.futures.process.BrokenProcessPool):
            pass  # no worker processes to be had (a sandbox, a frozen app): the rest, here
    for job in jobs[done:]:
        yield fn(job)


def _die_with_parent(parent: int) -> None:
    """In each worker: exit as soon as the process that started it is gone.

    Trigger: the parent ends without shutting the pool down (a hook's deadline calls
    os._exit, a kill -9). Why: forked workers hold copies of the parent's descriptors,
    the search cache's lock among them; left waiting for work that never comes, they held
    `cache/.lock` forever, every later build blocked, and `agent-hook warm` processes piled
    up. Outcome: a worker outlives its parent by half a second at most."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="ncx-parent-watch", daemon=True).start()
