"""store: which tracked files are the project's code, the blob id of their current content,
and reading them.

The listing is git's own: `git ls-files -s --debug` gives every tracked file's blob id and
the size git last saw in the work tree from the index in one call (a fresh clone: HEAD's),
and `git diff-files` the few a work tree has changed, which are hashed here the way git
would, after a stat says they are under the code size limit. A record depends only on a
blob's bytes, so it is found again after a branch switch, a rebase or in another worktree of
the same clone, and a change costs the files it touched (docs/decisions.md §29). A file a
sparse checkout leaves out of the work tree is read from its blob: the frame of a sparse
clone is a full clone's.

Tracked code that is not the project's own (vendored, built, generated, minified, excluded
by the manifest, over the size limit) is left out with its reason, which `ncx status` and
`ncx sync` name (ncx.code.scope holds the rules).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from ncx import repo
from ncx.code.langs import LANGUAGES, MAX_CODE_BYTES, language_of
from ncx.code.model import CodeFile
from ncx.code.scope import EXCLUDED, KEPT, TOO_LARGE, content_reason, linguist_marks, path_reason


@dataclass(frozen=True)
class Source:
    path: str
    blob: str  # git's blob id of the content read (the work tree's, where it differs)
    language: str
    on_disk: bool = True  # False: outside a sparse checkout, read from the blob


@dataclass(frozen=True)
class CodeListing:
    sources: list[Source]  # the project's code, sorted by path
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (path, reason), sorted


# git filters by suffix itself (in C): a docs tree of 100,000 files lists only its code.
# Not `glob` magic (`**/*.py`): without it `*` matches `/` too, so `*.py` is the same set
# at any depth, and git matches it 4-5 times faster (0.34 s -> 0.07 s on 100,000 files).
PATHSPECS = tuple(f":(icase)*{suffix}" for suffix in LANGUAGES)
# .gitattributes files ride along in the same call: whether any names linguist decides if
# git is asked for attributes at all (ncx.code.scope.linguist_marks)
_ATTR_SPEC = ":(icase)*.gitattributes"
AT_LISTING = "code/at-listing"  # a commit's own list, in a folder `--at REV` materialised
# One `ls-files -s --debug -z` record: "mode blob stage\tpath\0" and the index's stat data.
_RECORD = re.compile(
    rb"(\d+) ([0-9a-f]+) (\d)\t([^\0]*)\0"
    rb"(?:  ctime:[^\n]*\n  mtime:[^\n]*\n  dev:[^\n]*\n  uid:[^\n]*\n"
    rb"  size: (\d+)\tflags: ([0-9a-f]+)\n)?"
)
_SKIP_WORKTREE = 0x40000000  # the index entry's flag for a path outside a sparse checkout


def listing(root: Path) -> list[Source]:
    """The project's source files, sorted by path, with the blob id of their content."""
    return code_listing(root).sources


def at_blobs(root: Path) -> dict[str, str | None] | None:
    """{path: blob id} of the commit a `--at` folder holds (ncx.eval.at writes its listing),
    as repo.index_blobs gives a work tree's (None: not a plain file); None where `root` is
    no such folder. git asked there answers for the repository around it, whose index holds
    none of the commit's files: a doc's includes were then never read, and its chunks lost
    their line ranges (`retrieve --at`: `start_line: null` where a checkout cites 265)."""
    from ncx.paths import read_cache

    try:
        fixed = read_cache(root, AT_LISTING)
    except OSError:
        return None
    if fixed is None:
        return None
    out: dict[str, str | None] = {}
    for m in _RECORD.finditer(fixed):
        mode, blob, path = m.group(1), m.group(2), m.group(4).decode("utf-8", "surrogateescape")
        plain = mode in (b"100644", b"100755")
        out[path] = blob.decode() if plain and path not in out else None
    return out


def code_listing(root: Path) -> CodeListing:
    """The project's source files and the tracked ones left out, each with its reason."""
    from ncx.paths import read_cache

    try:
        fixed = read_cache(root, AT_LISTING)  # (a link in its place is no listing)
    except OSError:
        fixed = None
    if fixed is not None:  # a commit's files (ncx.eval.at): its blobs, no work tree to ask
        return _sources(fixed, root, work_tree=False)

    def ask() -> CodeListing:
        out = repo.git(root, "ls-files", "-s", "--debug", "-z", "--", *PATHSPECS, _ATTR_SPEC)
        return _sources(out, root, work_tree=True)

    # a sync lists the code for its index, its status and its warming: once, while the
    # index file stays as it was (ncx.repo.one_look)
    stamp = repo.index_stamp(root)
    return ask() if stamp is None else repo.looked(("code", str(root), stamp), ask)


_LIMIT_DIGITS = len(str(MAX_CODE_BYTES))  # a size with fewer digits is under the limit


def _sources(out: bytes, root: Path, *, work_tree: bool) -> CodeListing:
    blobs: dict[str, str] = {}
    langs: dict[str, str] = {}
    large: set[str] = set()  # over the limit by the index's size (no stat, no read)
    sparse: set[str] = set()  # outside a sparse checkout: not in the work tree
    attr_files: list[str] = []
    for m in _RECORD.finditer(out):
        mode, blob, stage, raw, size, flags = m.groups()
        path = raw.decode("utf-8", "surrogateescape")
        lang = language_of(path)
        if lang is None:
            if path == ".gitattributes" or path.endswith("/.gitattributes"):
                attr_files.append(path)
            continue
        if mode not in (b"100644", b"100755") or stage != b"0":
            continue  # symlinks, submodules, conflicted entries
        if path.startswith("/") or ".." in path.split("/") or path.startswith(".git/"):
            continue  # git never lists such a path; a forged list must not lead outside
        blobs[path] = blob.decode()
        langs[path] = lang
        # The index's size is the work tree's where diff-files finds no change (a stat
        # match includes the size). A sparse path's is what git last saw checked out, or 0:
        # its blob's own size is asked before it is read (read_blobs).
        if size is not None and len(size) >= _LIMIT_DIGITS and int(size) > MAX_CODE_BYTES:
            large.add(path)
        if work_tree and flags is not None and flags != b"0":
            if int(flags, 16) & _SKIP_WORKTREE:
                sparse.add(path)
    left: dict[str, str] = {}
    excludes = _excludes(root)
    for path in blobs:
        why = path_reason(path, excludes)
        if why:
            left[path] = why
    marks = linguist_marks(root, [p for p in blobs if left.get(p) != EXCLUDED], attr_files)
    for path, why in marks.items():
        if why == KEPT:  # unmarked: the project's, whatever its folder
            left.pop(path, None)
        else:
            left[path] = why
    for path in left:
        del blobs[path]
    if blobs and work_tree:
        changed = repo.git(root, "diff-files", "--name-only", "-z", "--", *PATHSPECS).split(b"\0")
        for raw in changed:
            path = raw.decode("utf-8", "surrogateescape")
            if path not in blobs or path in sparse:
                continue
            large.discard(path)
            size = _size(root / path)
            data = None
            if size is not None and size > MAX_CODE_BYTES:
                left[path] = TOO_LARGE  # neither read nor hashed
            elif size is not None:
                data = _read(root / path)
            if data is None:
                del blobs[path]  # deleted, a link, a FIFO, too large: not code to read
            else:
                blobs[path] = git_blob_id(data)
    for path in large:
        if path in blobs:
            left[path] = TOO_LARGE
            del blobs[path]
    return CodeListing(
        [Source(p, b, langs[p], p not in sparse) for p, b in sorted(blobs.items())],
        sorted(left.items()),
    )


def _excludes(root: Path) -> tuple[str, ...]:
    """The manifest's `sources.exclude` globs (none before `ncx init`)."""
    from ncx.errors import NcxError
    from ncx.manifest import load_manifest

    try:
        return load_manifest(root).exclude
    except NcxError:
        return ()


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def parse_sources(root: Path, sources: list[Source]) -> dict[str, CodeFile]:
    """blob id -> CodeFile for a few sources, parsed here (a patch: the store is not read)."""
    from_git = read_blobs(root, [s.blob for s in sources if not s.on_disk])
    out = {}
    for s in sources:
        if s.on_disk:
            out[s.blob] = _parse_job((str(root / s.path), s.language))
        else:
            out[s.blob] = _parse_data(from_git.get(s.blob), s.language)
    return out


def _parse_job(job: tuple[str, str]) -> CodeFile:
    file, language = job
    try:
        data = _read(Path(file), limit=MAX_CODE_BYTES)
    except _TooLarge:
        return CodeFile(language, 0, (), (), error=TOO_LARGE)  # never read
    return _parse_data(data, language)


def _parse_data(data: bytes | None, language: str) -> CodeFile:
    if data is None:
        return CodeFile(language, 0, (), (), error="not a readable regular file")
    if len(data) > MAX_CODE_BYTES:  # grown since its size was asked
        return CodeFile(language, 0, (), (), error=TOO_LARGE)
    why = content_reason(data, language)
    if why:
        return CodeFile(language, data.count(b"\n"), (), (), error=why)
    from ncx.code.read import read_code

    return read_code(language, data)


def read_blobs(root: Path, blobs: list[str]) -> dict[str, bytes]:
    """Blob id -> bytes, in one `git cat-file --batch`, for blobs under the code size limit
    (their sizes asked first: a large one never crosses the pipe)."""
    wanted = list(dict.fromkeys(blobs))
    if not wanted:
        return {}
    req = "".join(f"{b}\n" for b in wanted).encode()
    small = []
    sizes = repo.git(root, "cat-file", "--batch-check", input=req).split(b"\n")
    for b, line in zip(wanted, sizes, strict=False):
        parts = line.split()
        if len(parts) == 3 and parts[1] == b"blob" and int(parts[2]) <= MAX_CODE_BYTES:
            small.append(b)
    return repo.cat_file_batch(root, small)


def source_bytes(root: Path, path: str) -> bytes | None:
    """A tracked source's bytes as the code index read them: the work tree's, or for a path
    outside a sparse checkout its blob in the index."""
    data = _read(root / path)
    if data is not None or (root / path).exists() or (root / path).is_symlink():
        return data
    for s in listing(root):
        if s.path == path and not s.on_disk:
            return read_blobs(root, [s.blob]).get(s.blob)
    return None


def _size(path: Path) -> int | None:
    """The size of a regular file (not followed through a link); None for anything else."""
    import os
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


class _TooLarge(Exception):
    pass


def _read(path: Path, limit: int | None = None) -> bytes | None:
    """A source file's bytes; None for a link (it may point out of the repository) or for
    anything not a regular file, checked on the open descriptor (ncx.store.open_regular: a
    FIFO swapped in after a stat would block). Over `limit` bytes: _TooLarge, from the open
    descriptor's size, before a byte is read."""
    import os

    from ncx.store import open_regular

    try:
        if os.path.islink(path):
            return None
        with open_regular(path) as f:
            if limit is not None and os.fstat(f.fileno()).st_size > limit:
                raise _TooLarge(path)
            return f.read() if limit is None else f.read(limit + 1)
    except OSError:
        return None
