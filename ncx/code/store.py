"""store: which files are code, and their CodeFile records, kept in cache/ by git blob id.

The listing is git's own: `git ls-files -s` gives every tracked file's blob id from the index
in one call (a fresh clone: HEAD's), and `git diff-files` the few a work tree has changed,
which are hashed here the way git would. A record depends only on a blob's bytes, so it is
found again after a branch switch, a rebase or in another worktree of the same clone, and a
change costs the files it touched (docs/decisions.md §29).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ncx import repo
from ncx.code.langs import MAX_CODE_BYTES, language_of
from ncx.code.model import CodeFile
from ncx.layout import cache_dir

RECORDS_VERSION = 1  # bump when a reader's output changes: every record is read again
RECORDS_FILE = "code/records.json"
PARALLEL_AT = 64  # files to parse before worker processes pay for their start


@dataclass(frozen=True)
class Source:
    path: str
    blob: str  # git's blob id of the content read (the work tree's, where it differs)
    language: str


def listing(root: Path) -> list[Source]:
    """The tracked source files, sorted by path, with the blob id of their current content."""
    out = repo.git(root, "ls-files", "-s", "-z")
    blobs: dict[str, str] = {}
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, raw = rec.partition(b"\t")
        mode, blob, stage = meta.split(b" ")
        path = raw.decode("utf-8", "surrogateescape")
        if mode not in (b"100644", b"100755") or stage != b"0" or language_of(path) is None:
            continue  # symlinks, submodules, conflicted entries
        blobs[path] = blob.decode()
    if blobs:
        changed = repo.git(root, "diff-files", "--name-only", "-z").split(b"\0")
        for raw in changed:
            path = raw.decode("utf-8", "surrogateescape")
            if path in blobs:
                data = _read(root / path)
                if data is None:
                    del blobs[path]
                else:
                    blobs[path] = git_blob_id(data)
    return [Source(p, b, language_of(p) or "") for p, b in sorted(blobs.items())]


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def records(root: Path, sources: list[Source]) -> dict[str, CodeFile]:
    """blob id -> CodeFile for every source; the ones not kept yet are read and parsed
    (in worker processes when there are many) and the store is written back."""
    path = cache_dir(root) / RECORDS_FILE
    kept = _load(path)
    missing = [s for s in {s.blob: s for s in sources}.values() if s.blob not in kept]
    if missing:
        from ncx.parallel import ordered_map

        jobs = [(str(root / s.path), s.language) for s in missing]
        parsed = ordered_map(_parse_job, jobs, at_least=PARALLEL_AT)
        fresh = {s.blob: rec for s, rec in zip(missing, parsed, strict=True)}
        current = {s.blob for s in sources}
        # keep what a branch switch would want back, up to the size of this tree again
        old = [b for b in kept if b not in current][: len(current)]
        kept = {**{b: kept[b] for b in old}, **{b: kept[b] for b in current if b in kept}}
        kept.update(fresh)
        _save(path, kept)
    return kept


def _parse_job(job: tuple[str, str]) -> CodeFile:
    file, language = job
    data = _read(Path(file))
    if data is None:
        return CodeFile(language, 0, (), (), error="not a readable regular file")
    if len(data) > MAX_CODE_BYTES:
        return CodeFile(language, data.count(b"\n"), (), (), error="larger than 1 MB")
    from ncx.code.read import read_code

    return read_code(language, data)


def _read(path: Path) -> bytes | None:
    import os
    import stat

    try:
        st = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block, a symlink may leave the repo
            return None
        return path.read_bytes()
    except OSError:
        return None


def _load(path: Path) -> dict[str, CodeFile]:
    try:
        obj = json.loads(path.read_bytes())
        if obj.get("version") != RECORDS_VERSION:
            return {}
        return {b: CodeFile.from_json(r) for b, r in obj["files"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # derived: a missing or broken store is read again from the files


def _save(path: Path, kept: dict[str, CodeFile]) -> None:
    from ncx.store import write_atomic

    body = {"version": RECORDS_VERSION, "files": {b: kept[b].to_json() for b in sorted(kept)}}
    try:
        write_atomic(path, json.dumps(body, separators=(",", ":")).encode())
    except OSError:
        pass  # a read-only cache: answer from memory, keep nothing
