"""What a sync can know without reading a doc: the state file (what the last run found
right, in the untracked cache), the docs unchanged since (git's index, which answers for the
chunk files too), and the tracked files not indexed (skipped) with their reason.

Split from ncx.tree.sync: this is the whole of a no-op's work, and its cost on a 100,000-doc
tree is what issue 29 measures.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ncx import repo
from ncx.layout import NCX_DIR
from ncx.manifest import Manifest
from ncx.paths import UnsafePath, cache_file, read_cache
from ncx.sources import (
    FORMATS,
    READER_VERSION,
    UNREAD,
    Format,
    fixture_reason,
    format_of,
    is_excluded,
    log_reason,
    suffixes,
)
from ncx.store import NotRegular, lf, read_regular, write_if_changed
from ncx.tree.sidecar import SUFFIX as SIDECAR
from ncx.tree.sidecar import sidecar_path

_STATE = "sync-state.json"


@dataclass(frozen=True, slots=True)
class Listing:
    """The tracked files, sorted out in one pass: `sources`, the docs ncx indexes (what
    `ncx.sources.list_sources` lists), `formats`, each source's format name, and `skipped`,
    the tracked docs not indexed for their format, with the reason (a changelog, a format
    switched off in the manifest, one ncx does not read). Excluded paths are the user's own
    choice and not listed."""

    sources: list[str]
    formats: dict[str, str]
    skipped: list[tuple[str, str]]


def listing(manifest: Manifest, tracked: Sequence[str]) -> Listing:
    """`Listing` of `tracked`, each path looked at once and each suffix's decision made once.

    Why: on a 100,000-doc tree, listing the sources, then the skipped files, then each doc's
    format, a suffix parsed and a regex run per path each time, was 0.7 s of every no-op
    `sync`, `status` and `check` (issue 29)."""
    switched_off = set(manifest.skip_formats)
    wanted = set(suffixes(manifest.skip_formats))
    exclude, logs = manifest.exclude, not manifest.index_logs
    fixtures = not manifest.index_fixtures
    in_fixture: dict[str, str | None] = {}  # a folder -> why its docs are fixtures, or None
    inside = NCX_DIR + "/"
    # a name's suffix (lower case) -> (a source's suffix?, its format)
    memo: dict[str, tuple[bool, Format | None]] = {}
    sources: list[str] = []
    formats: dict[str, str] = {}
    skipped: list[tuple[str, str]] = []
    default = FORMATS[0].name
    for p in tracked:
        if p.startswith(inside) or p == NCX_DIR or (exclude and is_excluded(p, exclude)):
            continue
        dot = p.rfind(".")
        suffix = p[dot:].lower() if dot >= 0 else ""
        # A name's own suffix: not one a folder has, nor a dotfile's whole name (`.md`),
        # as format_of and pathlib take it.
        named = dot > p.rfind("/") + 1 and dot < len(p) - 1
        if named:
            got = memo.get(suffix)
            if got is None:
                got = memo[suffix] = (suffix in wanted, format_of(p))
            source, fmt = got
        else:
            source, fmt = suffix in wanted, None
        why = log_reason(p) if logs and (source or fmt is not None) else None
        if why is None and fixtures and (source or fmt is not None):
            # (per folder: a regex per doc was 0.24 s of a 100,000-doc no-op)
            folder = p[: p.rfind("/") + 1]
            if (why := in_fixture.get(folder, "")) == "":
                why = in_fixture[folder] = fixture_reason(p)
        if source and why is None:
            sources.append(p)
            formats[p] = fmt.name if fmt is not None else default
        if fmt is not None and why is not None:
            skipped.append((p, why))
        elif fmt is not None and fmt.name in switched_off:
            skipped.append((p, f"{fmt.label} is switched off (manifest sources.skip_formats)"))
        elif fmt is None and named and (why := UNREAD.get(suffix)):
            skipped.append((p, why))
    return Listing(sources, formats, skipped)


def submodules(root: Path) -> list[tuple[str, str]]:
    """Git submodules, said rather than passed over: their files are another repository's,
    not in this index, so the docs in them are not indexed (`ncx status` said "up to date"
    over them). One stat when the project has none."""
    if not (root / ".gitmodules").is_file():
        return []
    out = repo.git(
        root,
        "config",
        "-z",
        "-f",
        ".gitmodules",
        "--get-regexp",
        r"^submodule\..*\.path$",
        check=False,
    )
    paths = sorted(
        rec.split("\n", 1)[1]
        for rec in out.decode("utf-8", "surrogateescape").split("\0")
        if "\n" in rec
    )
    why = (
        "a git submodule: the docs in it are not indexed (they belong to another "
        "repository; run ncx in that repository's own clone)"
    )
    return [(p, why) for p in paths]


def signature(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def file_blob(data: bytes) -> str:
    """A chunk file's git blob id, its bytes read as LF (what `git add` stores of them in a
    core.autocrlf checkout too): the index says whether the work tree still holds it."""
    return repo.blob_id(lf(data))


# A doc that gives no chunk has no chunk file (an include fragment of one image, a page of
# frontmatter only): its state entry records NO_FILE for it, not None ("not known"), so a
# later run takes the doc as unchanged while there still is none. Recorded as None, such docs
# were read and chunked again by every sync, status, check and commit hook (19 docs of the
# 38,487-chunk tree: ~0.07 s of every run there, profiled; decisions.md §102).
NO_FILE: list[int] = []


def same_file(now: list[int] | None, recorded: list[int] | None) -> bool:
    """Whether a chunk file's stat now (file_stat) is the one a state entry recorded: the
    same stat, or (NO_FILE) no file then and none now. None recorded is never the same."""
    if recorded is None:
        return False
    return now == recorded if recorded else now is None


def file_stat(path: Path | str) -> list[int] | None:
    """[size, mtime_ns, inode] of a chunk file, None when there is none. (The inode: two
    chunk files of one size written within one tick of a coarse clock share the rest, and
    a doc can inherit its twin's chunk file path: `guide.markdown` once `guide.md` goes.)"""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def read_or_none(path: Path | str) -> bytes | None:
    """A file's bytes; None where there is no file to read (gone, or a FIFO or socket in
    its place: nothing of ncx's, so sync writes the file anew)."""
    try:
        return read_regular(path)
    except (FileNotFoundError, NotADirectoryError, NotRegular):
        return None


def state_key(manifest: Manifest) -> str:
    return json.dumps(
        [
            manifest.model.get("sha256"),
            manifest.chunk.max_tokens,
            manifest.chunk.min_tokens,
            manifest.chunk.overlap_tokens,
            READER_VERSION,
            _code_fingerprint(),
        ],
        sort_keys=True,
    )


@functools.cache
def _code_fingerprint() -> str:
    """A hash of this ncx's own source. A record says "this code made these bytes from that
    doc"; another ncx (an upgrade, a CI cache restored from an older run) may chunk
    differently, so its records are not taken. No version number to remember to bump: any
    change of the code drops the records once (~5 ms to read the package's .py files)."""
    top = Path(__file__).resolve().parents[1]
    h = hashlib.sha1()
    for path in sorted(top.rglob("*.py")):
        h.update(path.relative_to(top).as_posix().encode() + b"\0")
        with contextlib.suppress(OSError):
            h.update(path.read_bytes())
    return h.hexdigest()


def load_state(root: Path, manifest: Manifest) -> dict[str, Any]:
    fresh: dict[str, Any] = {"key": state_key(manifest), "docs": {}}
    try:
        state = json.loads(read_cache(root, _STATE))
    except (OSError, ValueError, UnsafePath):
        return fresh
    if not isinstance(state, dict) or state.get("key") != fresh["key"]:
        return fresh
    docs = state.get("docs")
    if not isinstance(docs, dict):
        return fresh
    # An entry of another shape (a hand edit of the untracked cache) is dropped, not
    # trusted and not a crash: its doc is compared in full.
    state["docs"] = {p: e for p, e in docs.items() if _entry_ok(e)}
    return state


_STR_OR_NONE = frozenset((str, type(None)))
_LIST_OR_NONE = frozenset((list, type(None)))


def _entry_ok(entry: Any) -> bool:
    # Exact types, as json gives them (100,000 entries: isinstance per field was 0.1 s).
    if type(entry) is not dict:
        return False
    get = entry.get
    return (
        type(get("sig")) is str
        and type(get("chunks")) is int
        and type(get("file")) in _LIST_OR_NONE
        and type(get("fblob")) in _STR_OR_NONE
        and type(get("blob")) in _STR_OR_NONE
        and type(get("scblob")) in _STR_OR_NONE
    )


def verified_blobs(
    path: str, data: bytes, sidecar: tuple[str, bytes] | None, blobs: dict[str, str | None]
) -> tuple[str | None, str | None]:
    """(the doc's blob id, its sidecar's) when the bytes read are the index's very blobs,
    else (None, None): only then may a later run take the doc as unchanged unread (a file
    edited between git's look and this read, a CRLF checkout, is read every time)."""
    blob = repo.blob_id(data)
    if blob != blobs.get(path):
        return None, None
    if sidecar is None:
        return blob, None
    sc_blob = repo.blob_id(sidecar[1])
    return (blob, sc_blob) if sc_blob == blobs.get(sidecar[0]) else (None, None)


def with_blobs(entry: dict[str, Any], found: tuple[str | None, str | None]) -> dict[str, Any]:
    blob, scblob = found
    out = {k: v for k, v in entry.items() if k not in ("blob", "scblob")}
    if blob is not None:
        out["blob"] = blob
        if scblob is not None:
            out["scblob"] = scblob
    return out


def unread_docs(
    root: Path,
    docs: Sequence[str],
    blobs: dict[str, str | None],
    modified: set[str],
    docs_state: dict[str, Any],
    files_of: dict[str, str],
) -> set[str]:
    """Docs known unchanged without reading them: the working tree holds the index's bytes
    for the doc (and its sidecar, if it has one), git's own stat check says so
    (`modified`), the state file recorded those very blob ids when it last read them, and
    the doc's chunk file holds what that run left: the index's blob of it, which git's stat
    check says the work tree holds, is the one recorded (`fblob`), or else the file has the
    recorded size, mtime and inode (a chunk file not yet `git add`ed), or, for a doc that
    gives no chunk, there is still no file (NO_FILE).

    Why: reading and hashing every doc made a no-op sync, status or check of a
    100,000-doc tree cost a minute; git keeps the stat of every file already, and answers
    for all of them at the cost of `git status`."""
    top = str(root) + os.sep
    out = set()
    # Whether any sidecar is tracked: most trees have none, and then no doc's is looked up.
    sidecars = any(p.endswith(SIDECAR) for p in blobs)
    for p in docs:
        prev = docs_state.get(p)
        if prev is None or not prev.get("sig") or p in modified:
            continue  # (no signature: a run found a problem in it, said by every run)
        blob = prev.get("blob")
        if blob is None or blobs.get(p) != blob:
            continue
        sc = sidecar_path(p) if sidecars else None
        sc_blob = blobs.get(sc) if sc is not None and sc in blobs else None
        if (sc is not None and sc in blobs) and (sc in modified or sc_blob is None):
            continue
        if prev.get("scblob") != sc_blob:
            continue
        if "inc" in prev and not _included_unchanged(prev, blobs, modified):
            continue
        rel = files_of[p]
        fblob = prev.get("fblob")
        if fblob is not None and blobs.get(rel) == fblob and rel not in modified:
            # The chunk file is tracked, and git's own stat check (`modified`) says the
            # work tree holds the index's bytes, which are those that run wrote or found
            # right: no stat of it here (100,000 of them were 0.3 s of every no-op).
            out.add(p)
            continue
        try:
            now = file_stat(top + rel if os.sep == "/" else os.path.join(top, rel))
        except OSError:
            continue
        if same_file(now, prev.get("file")):
            out.add(p)
    return out


def _included_unchanged(
    entry: dict[str, Any], blobs: dict[str, str | None], modified: set[str]
) -> bool:
    """Whether the files a doc includes are those its state entry recorded (imported only
    for docs with includes: a tree without any pays nothing for them)."""
    from ncx.tree import includefiles

    return includefiles.unchanged(entry, blobs, modified)


class Touched(dict[str, Any]):
    """The state's doc entries, knowing whether this run changed any (an unchanged state
    is not encoded again: 100,000 entries of JSON are most of what a no-op has left)."""

    touched = False

    def __setitem__(self, key: str, value: Any) -> None:
        self.touched = True
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.touched = True
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        self.touched = True
        return super().pop(key, *default)


def save_state(root: Path, manifest: Manifest, state: dict[str, Any], changed: bool) -> None:
    if not changed:
        return  # (the file on disk is this very state)
    state["key"] = state_key(manifest)
    try:
        data = json.dumps(state, sort_keys=True).encode()
        write_if_changed(cache_file(root, _STATE), data, follow=False)
    except (OSError, UnsafePath):
        pass  # the cache is an optimisation; a read-only tree still syncs correctly
