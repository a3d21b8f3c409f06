"""includefiles: the path gate for files a doc includes, and which docs include a file.

A doc's include (ncx.sources.includes) names a path written by whoever wrote the doc, so
it is read only if it is a plain file git tracks, inside the repository: `..` is resolved
lexically before anything is looked up (ncx.sources.includes.candidates), `.git/` and
`.neocortex/` are refused by name, a path git holds as a link, a submodule or a conflict is
refused from the index, and in the working tree a link at any level is followed to where it
really points (ncx.paths.read_problem) and the file is opened without blocking (a FIFO or a
device is refused, never waited on). Over MAX_BYTES nothing is read. A refusal is a short
note in the doc's view, never an error that stops a sync.

The sync state records, for each doc, the files its includes asked for and the blob ids
found; `included-by.json` in the untracked cache inverts that, so a change to an included
file (in a sync limited to paths, or the pre-commit hook, given only that file) maps to the
docs that include it without reading any doc. A clone no sync has recorded (a teammate's
fresh clone, a deleted cache) has no such file: it is then found from the index itself
(`from_index`: git grep names the docs holding an include marker, only those are read) and
kept, so the map is always whole, and a sync limited to some docs updates their entries
only (`save_included_by`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from ncx import repo
from ncx.errors import NcxError
from ncx.layout import MANIFEST, NCX_DIR, is_inside_ncx
from ncx.paths import Links, ignored_targets, read_problem, rel_problem
from ncx.sources.includes import MAX_BYTES, Fetch, Got
from ncx.tree.touched import DOC_PATHSPECS, head_commit

INCLUDED_BY = "included-by.json"  # in .neocortex/cache/: {included file: [docs]}


NOT_TRACKED = "not a file git tracks"


def _refused(rel: str, blobs: Mapping[str, str | None]) -> str | None:
    """Why `rel` may not be included, from its name and the index alone."""
    bad = rel_problem(rel)
    if bad is not None:
        return bad
    low = rel.lower()
    if low == ".git" or low.startswith(".git/") or "/.git/" in low:
        return "inside .git/; refused"
    if is_inside_ncx(rel):
        return f"inside {NCX_DIR}/ (derived files); refused"
    if rel not in blobs:
        return NOT_TRACKED
    if blobs[rel] is None:
        return "not a plain tracked file (a link, a submodule or in conflict); refused"
    return None


def _text(rel: str, data: bytes, blob: str) -> Got:
    from ncx.store import decode_source

    if len(data) < 1024 and data.startswith(b"version https://git-lfs.github.com/spec/"):
        # (as sync says of a doc: three lines of oid and size are no knowledge)
        return Got(None, "a Git LFS pointer, not the file's content", blob)

    try:
        return Got(decode_source(data, path=rel), blob=blob)
    except NcxError as exc:
        return Got(None, exc.message, blob)


class _Memo:
    """A Fetch that reads each path once a run (a file many docs include)."""

    _done: dict[str, Got]

    def __call__(self, rel: str) -> Got:
        got = self._done.get(rel)
        if got is None:
            got = self._done[rel] = self._read(rel)
        return got

    def _read(self, rel: str) -> Got:
        raise NotImplementedError


class WorkTree(_Memo):
    """Fetch: included files from the working tree, tracked plain files only."""

    def __init__(self, root: Path, blobs: Mapping[str, str | None]):
        self._root, self._blobs, self._links = root, blobs, Links(root)
        self._done = {}

    def _read(self, rel: str) -> Got:
        why = _refused(rel, self._blobs)
        if why is not None:
            return Got(None, why, absent=why == NOT_TRACKED)
        from ncx.store import NotRegular, read_regular

        ignored = ignored_targets(self._root, [rel], self._links)
        bad = read_problem(self._root, rel, ignored, self._links)
        if bad is not None:
            return Got(None, bad)
        full = self._root / rel
        if self._links.has_link(rel):
            # A link in the working tree where git holds a plain file is followed only to
            # another plain file git tracks: not to a loose .env, nor to a nested repo's
            # .git/config (neither is git-ignored, so read_problem lets them by).
            try:
                target = full.resolve(strict=True).relative_to(self._root.resolve()).as_posix()
            except FileNotFoundError:
                return Got(None, "missing in the working tree", absent=True)
            except (OSError, RuntimeError, ValueError):
                return Got(None, "is a symlink that cannot be followed; refused")
            why = _refused(target, self._blobs)
            if why is not None:
                return Got(None, f"is a symlink to {target[:200]}, {why}")
        try:
            size = full.stat().st_size
            if size > MAX_BYTES:
                return Got(None, f"{size} bytes, over the {MAX_BYTES} an include may be")
            data = read_regular(full)
        except FileNotFoundError:
            return Got(None, "missing in the working tree", absent=True)
        except NotRegular:
            return Got(None, "not a regular file (a FIFO, socket or device); refused")
        except OSError as exc:
            return Got(None, f"cannot be read: {exc.strerror}")
        return _text(rel, data, repo.blob_id(data))


class Staged(_Memo):
    """Fetch: included files as the index (or commit `tree`) holds them: what the commit
    being judged includes, never the working tree."""

    def __init__(self, root: Path, blobs: Mapping[str, str | None] | None = None, tree: str = ""):
        self._root, self._tree = root, tree
        self._blobs = blobs
        self._done = {}

    def _index(self) -> Mapping[str, str | None]:
        if self._blobs is None:
            self._blobs = (
                _tree_blobs(self._root, self._tree)
                if self._tree
                else (repo.index_blobs(self._root))
            )
        return self._blobs

    def _read(self, rel: str) -> Got:
        blobs = self._index()
        why = _refused(rel, blobs)
        if why is not None:
            return Got(None, why, absent=why == NOT_TRACKED)
        oid = str(blobs[rel])
        size = repo.git(self._root, "cat-file", "-s", oid, check=False).strip()
        if not size.isdigit():
            return Got(None, "not in the object store")
        if int(size) > MAX_BYTES:
            return Got(None, f"{int(size)} bytes, over the {MAX_BYTES} an include may be")
        return _text(rel, repo.git(self._root, "cat-file", "blob", oid), oid)


def _tree_blobs(root: Path, tree: str) -> dict[str, str | None]:
    """{path: blob id} of a commit's plain files (links and submodules: None)."""
    out = repo.git(root, "ls-tree", "-r", "-z", "--full-tree", tree)
    found: dict[str, str | None] = {}
    for rec in out.decode("utf-8", "surrogateescape").split("\0"):
        head, _, path = rec.partition("\t")
        parts = head.split(" ")
        if len(parts) == 3:
            mode, kind, oid = parts
            found[path] = oid if kind == "blob" and mode in ("100644", "100755") else None
    return found


def gather(path: str, data: bytes, fetch: Fetch) -> dict[str, Got]:
    """Every file the includes of doc `path` (these bytes) ask the gate for, with what it
    gave; {} for a doc with no include (most: one substring scan)."""
    from ncx.sources import format_of, read_view
    from ncx.sources.includes import MARKERS, may_include
    from ncx.store import decode_source

    fmt = format_of(path)
    if fmt is None or fmt.name not in ("markdown", "rst"):
        return {}
    if not any(m in data for m in MARKERS):
        return {}  # (most docs: no decoding twice on a first sync)
    try:
        text = decode_source(data, path=path)
    except NcxError:
        return {}  # said by the chunking of the doc itself
    if not may_include(text):
        return {}
    seen: dict[str, Got] = {}

    def record(rel: str) -> Got:
        got = seen[rel] = fetch(rel)
        return got

    try:
        read_view(path, text, record)
    except NcxError:
        pass
    return seen


def replay(found: Mapping[str, Got]) -> Fetch:
    """A Fetch that answers from what `gather` found (in a worker process: no gate, no git)."""

    def fetch(rel: str) -> Got:
        return found.get(rel) or Got(None, "not read")

    return fetch


def recorded(found: Mapping[str, Got]) -> dict[str, str | None]:
    """What the sync state keeps of a doc's includes: {file asked for: blob id or None}."""
    return {p: (g.blob if g.text is not None else None) for p, g in sorted(found.items())}


def unchanged(
    entry: Mapping[str, Any], blobs: Mapping[str, str | None], modified: set[str]
) -> bool:
    """Whether every file a doc's state entry says it included is still the one recorded,
    from the index's blob ids and git's stat check alone (no file read)."""
    inc = entry.get("inc")
    if not inc:
        return True
    if not isinstance(inc, dict):
        return False
    return all(p not in modified and blobs.get(p) == b for p, b in inc.items())


def same_now(entry: Mapping[str, Any], fetch: Fetch) -> bool:
    """Whether every file a doc's state entry says it included gives the gate the same
    bytes now (they are read: for docs whose own bytes are read anyway)."""
    inc = entry.get("inc")
    if not inc:
        return True
    if not isinstance(inc, dict):
        return False
    for p, b in inc.items():
        got = fetch(p)
        if (got.blob if got.text is not None else None) != b:
            return False
    return True


def included_by(docs_state: Mapping[str, Any]) -> dict[str, list[str]]:
    """{included file: [docs that include it]}, from the state's doc entries."""
    out: dict[str, list[str]] = {}
    for doc, entry in docs_state.items():
        inc = entry.get("inc") if isinstance(entry, dict) else None
        if isinstance(inc, dict):
            for p in inc:
                out.setdefault(p, []).append(doc)
    return {p: sorted(d) for p, d in sorted(out.items())}


def save_included_by(
    root: Path, docs_state: Mapping[str, Any], *, whole: bool = True, gone: Iterable[str] = ()
) -> None:
    """Record which docs include which file. `whole`: `docs_state` holds every doc (a sync
    of the whole tree); else only the docs it names are brought up to date, on top of the
    map as it stands (found from the index when there is none yet), and the docs `gone`
    (given to the sync, no longer sources: deleted, renamed) leave it."""
    found = included_by(docs_state)
    if not whole:
        found = _updated(load_included_by(root), {*docs_state, *gone}, found)
    _write_map(Path(root), found, head_commit(str(root)))


def _updated(
    was: Mapping[str, list[str]], known: Collection[str], now: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    """`was` with the entries of the docs in `known` replaced by theirs (`now`: none for a
    doc that is gone)."""
    out: dict[str, set[str]] = {}
    for p, docs in was.items():
        kept = {d for d in docs if d not in known}
        if kept:
            out[p] = kept
    for p, docs in now.items():
        out.setdefault(p, set()).update(docs)
    return {p: sorted(d) for p, d in sorted(out.items())}


# The map file: {"by": {included file: [docs]}, "head": the commit it was made at}. Written
# even when empty: no file means "not known yet", `"by": {}` means "none".
MAP_KEYS = ("by", "head")


def _write_map(root: Path, found: Mapping[str, list[str]], head: str) -> None:
    if not os.path.isfile(os.path.join(root, NCX_DIR, MANIFEST)):
        return  # no tree here (the hooks run before `ncx init`): nothing is written
    from ncx.paths import UnsafePath, cache_file
    from ncx.store import write_if_changed

    data = json.dumps({"by": found, "head": head}, sort_keys=True).encode()
    try:
        write_if_changed(cache_file(root, INCLUDED_BY), data, follow=False)
    except (OSError, UnsafePath, NcxError):
        pass  # the cache is an accelerator: a sync without it still reads every changed doc


def _read_map(root: Path | str) -> tuple[str, dict[str, list[str]]] | None:
    """(the commit it was made at, the recorded map), or None when there is none to trust
    (no file, or not one this ncx wrote)."""
    from ncx.paths import UnsafePath, read_cache

    try:  # (a FIFO here must not hang `ncx sync PATH`, nor a link lead elsewhere)
        found = json.loads(read_cache(Path(root), INCLUDED_BY))
    except (OSError, ValueError, UnsafePath):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("by"), dict):
        return None
    by = found["by"]
    return str(found.get("head") or ""), {
        str(p): [str(d) for d in docs] for p, docs in by.items() if isinstance(docs, list)
    }


def load_included_by(root: Path | str) -> dict[str, list[str]]:
    """{included file: [docs that include it]}, as the docs stand at HEAD and since: the map
    as recorded, with the docs a checkout, pull or rebase changed since it was made read
    again from the index (`git diff` of the two commits: O(change)); or, with none recorded
    (a fresh clone's first hook run), found from the index (one git grep, the marked docs
    read). Recorded again when it changed."""
    root = Path(root)
    got, now = _read_map(root), head_commit(str(root))
    if got is not None and got[0] == now:
        return got[1]
    changed = _docs_between(root, got[0], now) if got is not None else None
    if got is not None and changed is not None:
        found = _updated(got[1], changed, _gathered(root, sorted(changed)))
    else:
        found = from_index(root)
    _write_map(root, found, now)
    return found


def _docs_between(root: Path, old: str, new: str) -> set[str] | None:
    """The Markdown and reST docs that differ between commits `old` and `new` (either side
    of a rename); None when git cannot say (a commit rebased away, no commit yet)."""
    if not old or not new:
        return None
    try:
        out = repo.git(
            root, "diff", "--name-only", "-z", "--no-renames", old, new, "--", *DOC_PATHSPECS
        )
    except NcxError:
        return None
    return {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}


def from_index(root: Path) -> dict[str, list[str]]:
    """{included file: [docs]} from the docs as the index holds them: `git grep` (C) names
    the docs whose text holds an include marker, and only those are read (`_gathered`).
    Costs one grep of the docs and the reading of the few that include anything."""
    from ncx.sources.includes import MARKER_TEXTS

    args = [*repo.GREP, "--cached", "-l", "-z", "-I", "-F"]
    for m in MARKER_TEXTS:
        args += ["-e", m]
    try:
        out = repo.git(root, *args, "--", *DOC_PATHSPECS, check=False)  # (exit 1: no match)
    except NcxError:
        return {}
    return _gathered(root, sorted(out.decode("utf-8", "surrogateescape").split("\0")))


def _gathered(root: Path, docs: Iterable[str]) -> dict[str, list[str]]:
    """{included file: [docs]} of `docs` as the index holds them, read through the gate
    (Staged), nested includes followed as a sync follows them. A doc the index does not
    hold (deleted) includes nothing."""
    from ncx.config import load_config

    wanted = [
        p
        for p in docs
        # (rel_problem: as sync skips them; a newline in a name would shift every later
        # answer of the one-line-a-path `git cat-file --batch`)
        if p and not is_inside_ncx(p) and rel_problem(p) is None
    ]
    if not wanted:
        return {}
    cap = load_config().max_doc_bytes
    sizes = repo.staged_sizes(root, wanted)
    data = repo.read_staged(root, [p for p in wanted if sizes.get(p, cap + 1) <= cap])
    gate = Staged(root)
    state = {doc: {"inc": recorded(gather(doc, b, gate))} for doc, b in data.items()}
    return included_by(state)


def docs_including(root: Path | str, paths: Iterable[str]) -> set[str]:
    """The docs that include any of `paths` (load_included_by)."""
    wanted = set(paths)
    if not wanted:
        return set()
    return {d for p, docs in load_included_by(root).items() if p in wanted for d in docs}
