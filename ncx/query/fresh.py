"""fresh: whether the search cache fits this ncx and the tree as it is — its format and
ranking settings, and a signature of the tree from stat() alone (no listing, no parse), so
telling a stale cache from a current one costs a few hundred stats, not a load.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.layout import chunks_dir, manifest_path, memories_dir
from ncx.paths import UnsafePath, cache_file
from ncx.store import open_regular

if TYPE_CHECKING:
    pass


# 14: link targets not indexed; 13: a chunk's doc date (Unit.dated); 12: ß folded to "ss"
# in terms; 10: combining marks in terms; 9: terms of any script; 8: postings, rows +
# columns; 7: vectors (dim, n)
CACHE_VERSION = 14


_FILE = "index.npz"


def has_cache(root: Path) -> bool:
    """Whether a cache this ncx can use exists: a fresh clone has none, and one written by
    another version of ncx (or with other ranking settings) counts as none, since it cannot
    be served as it is (after an upgrade, a build as slow as a fresh clone's). An out-of-date
    one is brought up to date incrementally, which is cheap. Reads the small head member only."""
    try:
        path = cache_file(root, _FILE)
    except UnsafePath:
        return False  # (the build that follows names the link)
    return path.is_file() and _head_ok(root, check_tree=False)


def _json(z: Any, member: str) -> Any:
    return json.loads(bytes(z[member]).decode())


def lex_params() -> str:
    """The BM25F settings baked into the arrays: a cache built with others is rebuilt."""
    from ncx.query import lexical

    return json.dumps([lexical.FIELD_WEIGHTS, lexical.FIELD_B], sort_keys=True)


def cache_is_current(root: Path) -> bool:
    """Whether the cache exists and matches the tree (stat() only: no parse, no build)."""
    return _head_ok(root, check_tree=True)


def _head_ok(root: Path, *, check_tree: bool) -> bool:
    """Whether the cache file's head fits this ncx (and, `check_tree`, the tree as it is)."""
    import numpy as np

    try:
        z = np.load(open_regular(cache_file(root, _FILE), follow=False), allow_pickle=False)
        return _head_fits(root, _json(z, "head"), check_tree=check_tree)
    except Exception:  # missing, torn or foreign
        return False


def _head_fits(root: Path, head: dict[str, Any], *, check_tree: bool) -> bool:
    """This ncx's cache format and ranking settings, and (`check_tree`) the tree as it is.

    The head is a small member of its own: telling a stale cache from a current one does
    not decode the units (20 MB of JSON on a 40,000-unit tree)."""
    if head.get("version") != CACHE_VERSION or head.get("lex") != lex_params():
        return False
    return not check_tree or head.get("signature") == signature(root, head["sources"], head["dirs"])


def chunk_dirs(root: Path) -> list[str]:
    """Every folder under chunks/, repo-relative (listing them is the expensive part)."""
    out = []
    for dirpath, dirs, _names in os.walk(chunks_dir(root)):
        dirs.sort()
        out.append(Path(dirpath).relative_to(root).as_posix())
    return out


def signature(root: Path, sources: list[str], dirs: list[str]) -> str:
    """Cheap staleness check from stat() alone, no directory listing.

    ncx writes by rename, so any unit added, replaced or removed bumps its folder's mtime,
    and a new folder bumps its parent's; `dirs` are the folders seen at build time.
    """
    h = hashlib.sha1()
    h.update(_stat(manifest_path(root)))
    base = str(root)  # string joins: a Path per source was half of this on a large tree
    for d in dirs:
        h.update(d.encode() + _stat(os.path.join(base, d)))
    mem = memories_dir(root)
    if mem.is_dir():
        for name in sorted(os.listdir(mem)):
            h.update(name.encode() + _stat(mem / name))
    for s in sources:
        h.update(s.encode() + _stat(os.path.join(base, s)))
    return h.hexdigest()


def _stat(p: str | Path) -> bytes:
    try:
        st = os.stat(p)
    except OSError:
        return b"-"
    return f"{st.st_mtime_ns}:{st.st_size}".encode()


def _stat_str(p: str | Path) -> str:
    return _stat(p).decode()
