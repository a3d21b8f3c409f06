"""status: a summary of the tree small enough for an agent's context (< 100 tokens)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ncx.config import Config
from ncx.embedder import tree_model_id, unavailable
from ncx.errors import NcxError
from ncx.layout import CHUNKS, FORMAT_VERSION, NCX_DIR, chunks_dir, memories_dir
from ncx.manifest import load_manifest
from ncx.store import read_chunk_file, split_chunk_file
from ncx.tree.sync import sync


@dataclass(frozen=True, slots=True)
class ModelStatus:
    id: str
    dim: int | None
    available: bool  # loadable on this machine


@dataclass(frozen=True, slots=True)
class TreeStatus:
    docs: int
    formats: dict[str, int]  # docs per source format
    skipped: tuple[tuple[str, str], ...]  # (path, why) of tracked files not indexed
    chunks: int
    memories: int
    model: ModelStatus
    stale: int  # docs whose chunk files are out of date
    problems: int
    v2: bool  # a .mlda/ tree is still present
    code: CodeStatus

    def to_json(self) -> dict[str, Any]:
        """The `ncx status --json` and MCP `status` shape."""
        out = asdict(self)
        out["skipped"] = [{"path": p, "reason": why} for p, why in self.skipped]
        out["code"] = self.code.to_json()
        return out


@dataclass(frozen=True, slots=True)
class CodeStatus:
    files: int  # source files indexed as the project's code
    built: bool  # the code index of this tree is saved (cache/, not committed)
    left_out: tuple[tuple[str, str], ...]  # (path, reason) of tracked sources not indexed
    stale: bool = False  # an index is saved, of the tree before an edit: the next query redoes it

    def to_json(self) -> dict[str, Any]:
        from ncx.code.scope import by_reason

        return {
            "files": self.files,
            "built": self.built,
            "stale": self.stale,
            "left_out": [{"path": p, "reason": why} for p, why in self.left_out],
            "left_out_by_reason": by_reason(list(self.left_out)),
        }


def tree_status(root: Path, cfg: Config) -> TreeStatus:
    manifest = load_manifest(root)
    model_id, _ = tree_model_id(None, manifest.model)
    mem = memories_dir(root)
    memories = sum(1 for n in os.listdir(mem) if n.endswith(".md")) if mem.is_dir() else 0
    plan = sync(root, cfg, dry_run=True)
    # Files the dry run vouches for count as it counted them; the rest (stale, damaged,
    # orphaned) are split on disk.
    chunks = count_chunks(root, manifest.format, known=plan.intact, files=plan.chunk_files)
    stale = _stale_keys(plan.written, plan.removed, manifest.format)
    dim = manifest.model.get("dim")
    return TreeStatus(
        docs=plan.docs,  # the dry run already listed the sources
        formats=dict(sorted(plan.by_format.items())),
        skipped=tuple((p, why) for p, why in plan.skipped),
        chunks=chunks,
        memories=memories,
        model=ModelStatus(
            id=model_id,
            dim=int(dim) if isinstance(dim, int) else None,
            available=unavailable(model_id, cache_root=cfg.model_cache) is None,
        ),
        stale=len(stale),
        problems=len(plan.problems),
        v2=(root / ".mlda").is_dir(),
        code=code_status(root),
    )


def code_status(root: Path) -> CodeStatus:
    from ncx.code.index import code_scope

    got = code_scope(root)
    return CodeStatus(got.files, got.built, tuple(got.left_out), got.stale)


def count_chunks(
    root: Path,
    tree_format: int = FORMAT_VERSION,
    *,
    known: Mapping[str, int] | None = None,
    files: list[str] | None = None,
) -> int:
    """The chunks on disk: the blocks of every doc's chunk file under .neocortex/chunks/.

    Exact (each file is split as the cache reads it), and cheap: one read per doc, the
    split a handful of `find`s per block. A file that does not split (a hand edit, a
    symlink) counts none: `ncx check` names it. In a tree of format 1 (not yet moved by
    `ncx sync`) each .md there is one chunk. `known`: repo-relative chunk files
    whose count is already known (sync's dry run vouched for them); they are not read.
    `files`: the repo-relative .md files under chunks/, when a sweep just listed them (no
    walk here then)."""
    count = 0
    known = known or {}
    if files is not None and tree_format >= FORMAT_VERSION:
        for rel in files:
            if rel in known:
                count += known[rel]
                continue
            path = os.path.join(root, rel)
            try:
                count += len(split_chunk_file(read_chunk_file(path), path=path))
            except NcxError:
                continue
        return count
    top = len(str(root)) + 1  # (a slice, not os.path.relpath: 100,000 files)
    for dirpath, _dirs, names in os.walk(chunks_dir(root)):
        for name in names:
            if not name.endswith(".md"):
                continue
            if tree_format < FORMAT_VERSION:
                count += 1
                continue
            path = os.path.join(dirpath, name)
            rel = path[top:].replace(os.sep, "/")
            if rel in known:
                count += known[rel]
                continue
            try:
                count += len(split_chunk_file(read_chunk_file(path), path=path))
            except NcxError:
                continue
    return count


_CHUNKS_PREFIX = f"{NCX_DIR}/{CHUNKS}/"


def _stale_keys(written: list[str], removed: list[str], tree_format: int) -> set[str]:
    """What sync would write or remove, as the docs' chunk files (and folders of memories)
    it makes stale. A tree of format 1 (a folder of files per doc) is moved by the next
    sync: the old files it removes count as their doc's new chunk file `<folder>.md`, not
    once each."""
    keys = set()
    old_tree = tree_format < FORMAT_VERSION
    for path, gone in [*((p, False) for p in written), *((p, True) for p in removed)]:
        old_unit = path.endswith(".npy") or (old_tree and gone)
        if not path.startswith(_CHUNKS_PREFIX):
            keys.add(path.rsplit("/", 1)[0])
        elif old_unit:
            keys.add(path.rsplit("/", 1)[0] + ".md")
        else:
            keys.add(path)
    return keys
