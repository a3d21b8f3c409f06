"""layout: where things live under .neocortex/. Pure path arithmetic; no I/O beyond lookups."""

from __future__ import annotations

import functools
import hashlib
import unicodedata
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

NCX_DIR = ".neocortex"
MANIFEST = "manifest.json"
CHUNKS = "chunks"
MEMORIES = "memories"
CACHE = "cache"
FORMAT_VERSION = 2  # 2: one chunk file per doc (docs/decisions.md §17); 1: one per chunk


def ncx_dir(root: Path) -> Path:
    return root / NCX_DIR


def manifest_path(root: Path) -> Path:
    return root / NCX_DIR / MANIFEST


def chunks_dir(root: Path) -> Path:
    return root / NCX_DIR / CHUNKS


def memories_dir(root: Path) -> Path:
    return root / NCX_DIR / MEMORIES


# The committed launcher `ncx init --agent` writes (templates/ncx-launcher.sh): the agents'
# files start ncx through it, whatever each machine's install.
LAUNCHER = f"{NCX_DIR}/bin/ncx"


def ncx_command_name(root: Path) -> str:
    """How text an agent reads (frames, the wakeup, hook messages) names ncx in this tree:
    the launcher where it is installed (a bare `ncx` may not be on the agent's PATH)."""
    return LAUNCHER if (root / LAUNCHER).is_file() else "ncx"


def cache_dir(root: Path) -> Path:
    return root / NCX_DIR / CACHE


def doc_chunk_dir(source_path: str) -> str:
    """Repo-relative POSIX folder holding the chunks of one source doc.

    `docs/auth.md` -> `.neocortex/chunks/docs/auth`. A doc owns the *files* directly in
    its folder; sub-folders belong to other docs (`docs/auth/x.md`), so the two never clash.
    """
    p = PurePosixPath(source_path)
    stem = p.with_suffix("") if p.suffix.lower() in (".md", ".markdown") else p
    return f"{NCX_DIR}/{CHUNKS}/{stem.as_posix()}"


def doc_chunk_file(source_path: str) -> str:
    """Repo-relative POSIX path of the one file holding all chunks of a source doc.

    `docs/auth.md` -> `.neocortex/chunks/docs/auth.md`; `docs/auth/x.md`'s is
    `.neocortex/chunks/docs/auth/x.md`, so a doc's file and a folder never clash."""
    return doc_chunk_dir(source_path) + ".md"


def chunk_file_paths(sources: Iterable[str]) -> dict[str, str]:
    """{source path: repo-relative chunk file}, no two alike (see chunk_folders)."""
    return {src: folder + ".md" for src, folder in chunk_folders(sources).items()}


_DOC_SUFFIXES = (".md", ".markdown")
# A folder name ncx cannot use as it is: it would climb out (`..`), be its parent (`.`), or
# look like a unit file (`x.md`, `x.npy`: `a/x.md.md` next to `a.md`'s chunk `x.md`) or a
# temp file of an atomic write.
_UNIT_LIKE = (".md", ".npy", ".markdown")


@functools.lru_cache(maxsize=1 << 14)  # folder names recur across a tree's docs
def _safe_part(part: str) -> str:
    low = part.lower()
    if part in ("", ".", "..") or low.endswith(_UNIT_LIKE) or low.startswith(".tmp-"):
        return part.replace("%", "%25").replace(".", "%2E") or "%"
    return part


def chunk_folders(sources: Iterable[str]) -> dict[str, str]:
    """{source path: repo-relative chunk folder}, no two alike, none outside chunks/.

    An ordinary doc keeps the folder `doc_chunk_dir` gives (`docs/x.md` -> `chunks/docs/x`).
    Only the cases that would collide or escape change: a name part that is `.`, `..`,
    empty or unit-like is escaped (`..md` -> `chunks/%2E`), and when two sources still share a
    folder ignoring case (`guide.md`, `guide.markdown`, `Guide.MD`), the first by (not
    `.md`, path) keeps it (and likewise twins whose names differ only in Unicode
    normalization, `café` in NFC and in NFD) and the others get `~` and 6 hex digits of
    their path's hash: deterministic, and the same on a case-insensitive file system.
    """
    plain: dict[str, str] = {}
    # Each folder's escaped form once, not once per doc in it (100,000 docs: 0.5 s of a no-op).
    folders: dict[str, str] = {}
    for src in sources:
        top, _, name = src.rpartition("/")  # git's paths: no `.`, no empty part, no trailing /
        low = name.lower()
        for ext in _DOC_SUFFIXES:
            if low.endswith(ext):
                name = name[: -len(ext)]
                break
        if top:
            safe = folders.get(top)
            if safe is None:
                safe = folders[top] = "/".join(_safe_part(x) for x in top.split("/")) + "/"
            plain[src] = safe + _safe_part(name)
        else:
            plain[src] = _safe_part(name)
    first: dict[str, str] = {}
    groups: dict[str, list[str]] = {}  # only the folders two sources or more share
    for src, folder in plain.items():
        # Case and Unicode normalization both ignored: macOS file systems take `café` in NFC
        # and in NFD (two names to git) for one file, as they take `Guide` for `guide`.
        key = (
            folder.lower() if folder.isascii() else unicodedata.normalize("NFD", folder.casefold())
        )
        had = first.setdefault(key, src)
        if had != src:
            groups.setdefault(key, [had]).append(src)
    prefix = f"{NCX_DIR}/{CHUNKS}/"
    out = {src: prefix + folder for src, folder in plain.items()}
    for members in groups.values():
        members.sort(key=lambda s: (not s.endswith(".md"), s))
        for src in members[1:]:
            tag = hashlib.sha1(src.encode("utf-8", "surrogateescape")).hexdigest()[:6]
            out[src] = f"{prefix}{plain[src]}~{tag}"
    return out


def npy_for(md_path: Path) -> Path:
    """The embedding that pairs with a unit's markdown file (same stem)."""
    return md_path.with_suffix(".npy")


def is_inside_ncx(rel_path: str) -> bool:
    return rel_path == NCX_DIR or rel_path.startswith(NCX_DIR + "/")
