"""regular: open a file only if it is a regular file, without ever blocking on a FIFO.

Apart from ncx.store (which re-exports these) because the commit hooks' fast path, on every
code-only commit, opens one cache file this way: this module imports nothing but the standard
library's os-level modules (ncx.store's own imports cost a hook process ~25 ms).
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False  # (typing's import alone is ~10 ms of a hook's start)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import BinaryIO, Literal


class NotRegular(OSError):
    """A path that is a FIFO, socket, device or folder where a file was expected."""


def open_regular(path: Path | str, *, follow: bool = True) -> BinaryIO:
    """A regular file opened for reading; NotRegular for anything else. Opened without
    blocking and checked on the open descriptor: a tracked doc, or a unit file under
    .neocortex/, replaced by a FIFO (between a stat and the open, too) must never hang
    sync, check or retrieve waiting for a writer. `follow=False`: a symlink in its place is
    an OSError (ELOOP), not its target (files ncx writes itself, such as the cache's)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    return _regular(os.open(path, flags), path, "rb")


def _regular(fd: int, path: Path | str, mode: Literal["rb", "r+b"]) -> BinaryIO:
    """The open file `fd` as a file object, if it is a regular file (else NotRegular); the
    descriptor is closed on any failure."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file (a FIFO, socket?)", str(path))
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, *, follow: bool = True) -> bytes:
    """The bytes of a regular file (open_regular)."""
    with open_regular(path, follow=follow) as f:
        return f.read()


def open_lock(path: Path | str) -> BinaryIO:
    """A lock file (to flock) opened for writing, made when missing and never truncated. A
    symlink in its place (a committed `.neocortex/cache/.lock -> ~/.bashrc`) is removed and
    a real file made: opening it through the link made its target (or truncated it)."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        os.unlink(path)
        fd = os.open(path, flags, 0o666)
    return _regular(fd, path, "r+b")
