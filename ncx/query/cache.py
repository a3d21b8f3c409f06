"""cache: the derived, untracked search cache under .neocortex/cache/, loaded for a query —
vectors, BM25F arrays, unit metadata and each chunk's current line range in its source.

Rebuilt (ncx.query.build) when its signature (ncx.query.fresh) says the tree changed,
under a lock, written to a temp file and renamed into place, so two ncx processes never see
a half-written cache and concurrent first queries share one build. A missing or corrupt
cache is rebuilt. The unit model is ncx.query.units; its names are re-exported here for the
read side's callers.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.errors import NcxError
from ncx.layout import cache_dir
from ncx.paths import UnsafePath, cache_file, cache_folder
from ncx.query.build import _build, _Previous
from ncx.query.fresh import (
    _FILE,
    CACHE_VERSION,
    _head_fits,
    _json,
    cache_is_current,
    chunk_dirs,
    has_cache,
    lex_params,
    signature,
)
from ncx.query.lexical import FIELDS, LexIndex, Postings
from ncx.query.units import COLUMNS, Index, Unit, Units, unit_body
from ncx.slow import slow
from ncx.store import open_lock, open_regular

__all__ = [
    "CACHE_VERSION",
    "COLUMNS",
    "Index",
    "Unit",
    "Units",
    "building",
    "cache_is_current",
    "chunk_dirs",
    "has_cache",
    "lex_params",
    "load_index",
    "signature",
    "unit_body",
]

if TYPE_CHECKING:
    pass


def load_index(root: Path, *, rebuild: bool = False, stale_ok: bool = False) -> Index:
    """The current cache, rebuilt first if stale, missing or corrupt (with `stale_ok`, an
    out-of-date cache is returned as it is; only a missing or corrupt one is rebuilt)."""
    path = cache_file(root, _FILE)
    if path.is_dir() and not path.is_symlink():  # (a link in its place: read as none, replaced)
        raise NcxError(
            "is not the cache file ncx writes (a folder)",
            path=path,
            hint="delete it (the cache is derived and rebuilt on the next query)",
        )
    if not rebuild:
        idx = _try_load(root, path, check=not stale_ok)
        if idx is not None:
            return idx
    if not cache_dir(root).parent.is_dir():
        # No tree here (a hook in a repository without ncx): fail before the lock below
        # creates .neocortex/cache/, an untracked folder in someone else's repository.
        from ncx.manifest import load_manifest

        load_manifest(root)
    with _lock(cache_folder(root)) as writable:
        if not rebuild and writable:  # another process may have rebuilt it while we waited
            idx = _try_load(root, path)
            if idx is not None:
                return idx
        prev = None if rebuild else _previous(path)
        # A fresh clone's first query pays for this (no quick answer: docs/decisions.md §44).
        what = "updating the search cache" if prev else "building the search cache (once a clone)"
        with slow(what):
            members, idx = _build(root, prev)
        if writable:
            _save(path, members)
    return idx


def _save(path: Path, members: dict[str, Any]) -> None:
    """Write the cache file (atomically); a disk that refuses it costs the next query a
    build, never this one its answer."""
    import numpy as np

    # A new name, made exclusively: a link committed at a predictable temp name is never
    # opened through (it could truncate the file it points to).
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        with open(tmp, "xb") as f:
            np.savez(f, **members)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


@contextlib.contextmanager
def _lock(folder: Path) -> Iterator[bool]:
    """Hold the cache's build lock; yields whether the cache folder can be written. A
    read-only .neocortex/ or cache/ (a CI checkout, a mounted volume) yields False and
    takes no lock: the cache is built in memory for this process and not saved."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        f = open_lock(folder / ".lock")  # (a link in its place is replaced, never followed)
    except OSError:
        yield False
        return
    with f:
        try:
            import fcntl

            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                # Another query (or a hook's warm) is building: wait for it and load what it
                # wrote (load_index), rather than build the same cache twice.
                with slow("waiting for the search cache another ncx process is building"):
                    fcntl.flock(f, fcntl.LOCK_EX)
        except ImportError:  # Windows: no flock; the atomic rename still protects readers
            pass
        yield True


def building(root: Path) -> bool:
    """Whether another process holds the cache's lock now (a build under way)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        lock = cache_file(root, ".lock")
        fd = os.open(
            lock, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        )
    except (OSError, UnsafePath):
        return False  # no lock file: nobody has built here yet
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # (closing releases a lock taken here)
    return False


def _try_load(root: Path, path: Path, *, check: bool = True) -> Index | None:
    import numpy as np

    try:
        z = np.load(open_regular(path, follow=False), allow_pickle=False)  # (nor a FIFO)
        if not _head_fits(root, _json(z, "head"), check_tree=check):
            return None  # the units are not even decoded
        units = _stored_units(z)
        vectors, group = _stored_vectors(z, len(units)), z["group"]
        if len(group) != len(units):
            return None  # damaged or foreign: rebuilt, not indexed out of bounds at query time
        lex = LexIndex(
            vocab={t: i for i, t in enumerate(_stored_vocab(z))},
            indptr=z["indptr"],
            indices=z["indices"],
            data=z["data"],
            idf=z["idf"],
            n_units=len(units),
        )
        return Index(units, vectors.astype(np.float32).T, lex, group, root)
    except (OSError, ValueError, KeyError, EOFError):
        return None  # missing or corrupt: rebuilt by the caller
    except Exception:  # zipfile.BadZipFile and friends from a torn file
        return None


def _stored_units(z: Any) -> Units:
    """The `units` member: one JSON row per line (JSON text never holds a raw newline), so
    rows are split apart without decoding them, and a build keeps the rows of the units it
    reuses as they are; `columns` beside it."""
    text = bytes(z["units"]).decode()
    rows = list[str | Unit](text.split("\n")) if text else []
    columns = _json(z, "columns")
    if sorted(columns) != sorted(COLUMNS) or any(len(c) != len(rows) for c in columns.values()):
        raise ValueError("the cache's columns do not match its units")
    return Units(rows, columns)


def _stored_vocab(z: Any) -> list[str]:
    """The `vocab` member: term id -> term, one per line."""
    return bytes(z["vocab"]).decode().split("\n") if len(z["vocab"]) else []


def _stored_vectors(z: Any, n: int) -> Any:
    """The `vectors` member, (dim, n) as stored; ValueError when it does not fit the n units
    (a damaged or foreign file: rebuilt, not indexed out of bounds)."""
    vectors = z["vectors"]
    if vectors.ndim != 2 or vectors.shape[1] != n:
        raise ValueError("the cache's vectors do not match its units")
    return vectors


def _previous(path: Path) -> _Previous | None:
    import numpy as np

    try:
        z = np.load(open_regular(path, follow=False), allow_pickle=False)
        head = _json(z, "head")
        if head.get("version") != CACHE_VERSION:
            return None
        units = _stored_units(z)
        p = Postings(_stored_vocab(z), z["p_ptr"], z["p_seg"], z["p_count"], z["p_lens"])
        stats, vectors = _json(z, "stats"), _stored_vectors(z, len(units))
        if not _consistent(p, len(units)) or not isinstance(stats, dict):
            return None
        return _Previous(head.get("model"), units, stats, vectors, p)
    except Exception:  # missing, torn or foreign: build from scratch
        return None


def _consistent(p: Postings, n: int) -> bool:
    """Postings a patch can index without going out of bounds (a foreign or damaged file is
    not patched: the cache is built afresh)."""
    return (
        p.lens.shape == (n, len(FIELDS))
        and len(p.ptr) == len(p.vocab) + 1
        and int(p.ptr[0]) == 0
        and int(p.ptr[-1]) == len(p.seg) == len(p.count)
        and (len(p.seg) == 0 or (int(p.seg.min()) >= 0 and int(p.seg.max()) < n << 3))
    )
