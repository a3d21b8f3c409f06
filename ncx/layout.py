"""layout: where things live under .neocortex/. Pure path arithmetic; no I/O beyond lookups."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

NCX_DIR = ".neocortex"
MANIFEST = "manifest.json"
CHUNKS = "chunks"
MEMORIES = "memories"
CACHE = "cache"
FORMAT_VERSION = 1


def ncx_dir(root: Path) -> Path:
    return root / NCX_DIR


def manifest_path(root: Path) -> Path:
    return root / NCX_DIR / MANIFEST


def chunks_dir(root: Path) -> Path:
    return root / NCX_DIR / CHUNKS


def memories_dir(root: Path) -> Path:
    return root / NCX_DIR / MEMORIES


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


def npy_for(md_path: Path) -> Path:
    """The embedding that pairs with a unit's markdown file (same stem)."""
    return md_path.with_suffix(".npy")


def is_inside_ncx(rel_path: str) -> bool:
    return rel_path == NCX_DIR or rel_path.startswith(NCX_DIR + "/")
