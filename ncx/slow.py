"""slow: one line on stderr when a step the user waits for takes more than a second.

A fresh clone's first query builds the search cache and the code index before it answers
(docs/decisions.md §44): a few seconds on a large tree, and a silent terminal for that long
reads as a hang. The steps say what they are doing through `slow(...)`; only the commands
that answer a user at a terminal (`ncx assemble`, `retrieve`, `wakeup`) route the lines to
stderr (`say_to`), so the agent hooks and the MCP server, whose stderr is someone else's,
stay quiet. Stdlib only, and nothing is printed by a step that ends within the second.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator

_sink: list[Callable[[str], None]] = []  # where the lines go while a command runs

# Seconds a step runs before it is announced; NCX_PROGRESS_AFTER sets it (0: at once, which
# the tests use to see which process built and which waited).
AFTER = 1.0


def _after() -> float:
    try:
        return max(0.0, float(os.environ.get("NCX_PROGRESS_AFTER", AFTER)))
    except ValueError:
        return AFTER


@contextlib.contextmanager
def say_to(sink: Callable[[str], None]) -> Iterator[None]:
    """Route the steps' lines to `sink` for the duration (one command's run)."""
    _sink.append(sink)
    try:
        yield
    finally:
        _sink.pop()


@contextlib.contextmanager
def slow(what: str) -> Iterator[None]:
    """Say `ncx: WHAT ...` once the step has run `AFTER` seconds, and how long it took when
    it ends; nothing when no command routes the lines, or the step is quicker."""
    if not _sink:
        yield
        return
    sink = _sink[-1]
    said = threading.Event()

    def announce() -> None:
        said.set()
        sink(f"ncx: {what} ...")

    start = time.monotonic()
    after = _after()
    timer = threading.Timer(after, announce)
    timer.daemon = True
    if after <= 0:
        announce()
    else:
        timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if said.is_set():
            sink(f"ncx: {what}: done in {time.monotonic() - start:.1f} s")
