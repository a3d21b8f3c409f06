"""store: which tracked files are code, the blob id of their current content, and reading them.

The listing is git's own: `git ls-files -s` gives every tracked file's blob id from the index
in one call (a fresh clone: HEAD's), and `git diff-files` the few a work tree has changed,
which are hashed here the way git would. A record depends only on a blob's bytes, so it is
found again after a branch switch, a rebase or in another worktree of the same clone, and a
change costs the files it touched (docs/decisions.md §29).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ncx import repo
from ncx.code.langs import LANGUAGES, MAX_CODE_BYTES, language_of
from ncx.code.model import CodeFile


@dataclass(frozen=True)
class Source:
    path: str
    blob: str  # git's blob id of the content read (the work tree's, where it differs)
    language: str


# git filters by suffix itself (in C): a docs tree of 100,000 files lists only its code.
# Not `glob` magic (`**/*.py`): without it `*` matches `/` too, so `*.py` is the same set
# at any depth, and git matches it 4-5 times faster (0.34 s -> 0.07 s on 100,000 files).
PATHSPECS = tuple(f":(icase)*{suffix}" for suffix in LANGUAGES)
AT_LISTING = "code/at-listing"  # a commit's own list, in a folder `--at REV` materialised


def listing(root: Path) -> list[Source]:
    """The tracked source files, sorted by path, with the blob id of their current content."""
    from ncx.paths import read_cache

    try:
        fixed = read_cache(root, AT_LISTING)  # (a link in its place is no listing)
    except OSError:
        fixed = None
    if fixed is not None:  # a commit's files (ncx.eval.at): its blobs, no work tree to ask
        return _sources(fixed, root, work_tree=False)
    return _sources(repo.git(root, "ls-files", "-s", "-z", "--", *PATHSPECS), root, work_tree=True)


def _sources(out: bytes, root: Path, *, work_tree: bool) -> list[Source]:
    blobs: dict[str, str] = {}
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, raw = rec.partition(b"\t")
        mode, blob, stage = meta.split(b" ")
        path = raw.decode("utf-8", "surrogateescape")
        if mode not in (b"100644", b"100755") or stage != b"0" or language_of(path) is None:
            continue  # symlinks, submodules, conflicted entries
        if path.startswith("/") or ".." in path.split("/") or path.startswith(".git/"):
            continue  # git never lists such a path; a forged list must not lead outside
        blobs[path] = blob.decode()
    if blobs and work_tree:
        changed = repo.git(root, "diff-files", "--name-only", "-z", "--", *PATHSPECS).split(b"\0")
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


def parse_sources(root: Path, sources: list[Source]) -> dict[str, CodeFile]:
    """blob id -> CodeFile for a few sources, parsed here (a patch: the store is not read)."""
    return {s.blob: _parse_job((str(root / s.path), s.language)) for s in sources}


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
    """A source file's bytes; None for a link (it may point out of the repository) or for
    anything not a regular file, checked on the open descriptor (ncx.store.read_regular: a
    FIFO swapped in after a stat would block)."""
    import os

    from ncx.store import read_regular

    try:
        return None if os.path.islink(path) else read_regular(path)
    except OSError:
        return None
