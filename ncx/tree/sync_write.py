"""sync_write: every file sync writes or removes, through one writer (split from sync.py).

`_Out` is the one door: a dry run goes through it too and only records, so it reports the
same changes a real run makes. Here too the parts of a run that are only writing: a doc's
chunk file, the sweep of chunk files whose doc is gone, the memories whose text was edited
by hand (planned here, embedded by sync, written here).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ncx.errors import NcxError
from ncx.layout import chunks_dir, memories_dir
from ncx.memory.file import memory_embed_text, memory_hash
from ncx.paths import check_write
from ncx.store import (
    blob_vec,
    dump_frontmatter,
    has_markers,
    is_temp,
    lf,
    read_chunk_file,
    read_regular,
    read_unit,
    remove_unit,
    split_chunk_file,
    stale_temp,
    write_atomic,
)
from ncx.tree.chunkfile import chunk_file_bytes
from ncx.tree.compare import block_vectors
from ncx.tree.noop import NO_FILE, file_blob, file_stat, read_or_none


@dataclass
class SyncReport:
    written: list[str] = field(default_factory=list)  # repo-relative paths, sorted at the end
    removed: list[str] = field(default_factory=list)
    embedded: int = 0
    docs: int = 0
    chunks: int = 0
    memories: int = 0
    problems: list[NcxError] = field(default_factory=list)
    by_format: dict[str, int] = field(default_factory=dict)  # docs in scope per format
    chunks_by_format: dict[str, int] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why not indexed)
    # Chunk files whose vectors need no second look from `ncx check`: exactly (size, mtime)
    # as the last sync left them, or found right by this run (every vector read and usable);
    # each with how many chunks it holds, so `ncx status` splits only the others.
    intact: dict[str, int] = field(default_factory=dict)
    # Of those, the ones whose bytes are known (their blob id, noop.file_blob), so `ncx check`
    # knows the files it judged before without a stat of each.
    blobs: dict[str, str] = field(default_factory=dict)
    # The chunk files (.md) the sweep of a whole-tree run found under chunks/, repo-relative:
    # `ncx status` counts from them instead of walking 100,000 files again. None: not swept.
    chunk_files: list[str] | None = None
    # Credentials found in docs and sidecars, (file, line, kind): redacted from the chunks,
    # still in the files themselves. Said again by every sync until they are gone.
    secrets: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)


@dataclass
class _Pending:
    """A unit whose vector must be (re)computed before its files are written."""

    md_path: str  # absolute, as os functions take it (a Path per chunk costs on big trees)
    render: Callable[[str], bytes]  # the .md's bytes, given the `vec` id of its new .npy
    text: str


class _Out:
    """Every change sync makes goes through here, so a dry run reports the same changes.

    Paths are plain strings inside: on a 40,000-chunk tree, pathlib's parsing of a Path per
    file was seconds of a first sync."""

    def __init__(self, root: Path, report: SyncReport, dry: bool):
        self.root, self.report, self.dry = root, report, dry
        self._base = len(str(root)) + 1
        self._safe: set[str] = set()  # folders already checked to resolve inside .neocortex/
        self._made: set[str] = set()  # folders known to exist (no mkdir per write)

    def rel(self, path: str) -> str:
        return path[self._base :].replace(os.sep, "/")

    def _gate(self, path: str) -> None:
        # Every write and delete stays inside .neocortex/, links at any level included.
        parent = os.path.dirname(path)
        if parent not in self._safe:
            check_write(self.root, Path(path))
            self._safe.add(parent)

    def write(self, path: Path | str, data: bytes) -> None:
        path = os.fspath(path)
        self._gate(path)
        try:
            # A file that differs only by CRLF (a core.autocrlf=true checkout) is not rewritten:
            # git sees no change in it either.
            if lf(read_regular(path)) == data:  # (a FIFO in its place is replaced, not waited on)
                return
        except OSError:
            pass
        if not self.dry:
            # The bytes differ (or there are none): written without reading them again.
            parent = os.path.dirname(path)
            if parent not in self._made:
                os.makedirs(parent, exist_ok=True)
                self._made.add(parent)
            try:
                write_atomic(path, data, mkdir=False)
            except FileNotFoundError:  # pruned since (an emptied folder is removed): again
                write_atomic(path, data)
        self.report.written.append(self.rel(path))

    def remove_file(self, path: str) -> None:
        """Delete one file (a doc's chunk file, a leftover of the older format)."""
        self._gate(path)
        if not self.dry:
            for removed in remove_unit(Path(path), pair=False):
                self.report.removed.append(self.rel(str(removed)))
        elif os.path.exists(path):
            self.report.removed.append(self.rel(path))

    def remove(self, md_or_npy: Path | str) -> None:
        md = os.path.splitext(os.fspath(md_or_npy))[0] + ".md"
        self._gate(md)
        if self.dry:
            for p in (md, md[:-3] + ".npy"):
                if os.path.exists(p):
                    self.report.removed.append(self.rel(p))
            return
        for removed in remove_unit(Path(md)):
            self.report.removed.append(self.rel(str(removed)))


def _write_chunk_file(
    out: _Out, rel_file: str, blocks: list[bytes], entry: dict[str, Any], *, stale: bool = False
) -> None:
    """Write a doc's chunk file (remove it for a doc with no chunk any more) and record the
    file written in its state `entry`. `stale`: the file on disk holds another model's
    vectors (a re-embed), so one that cannot be replaced is removed."""
    path = str(out.root / rel_file)
    try:
        if blocks:
            data = chunk_file_bytes(blocks)
            out.write(path, data)
            entry["fblob"], entry["file"] = file_blob(data), file_stat(path)
        else:  # emptied
            out.remove_file(path)
            if not out.dry:  # none now: the next run takes the doc as unchanged
                entry["file"] = NO_FILE
    except OSError as exc:  # one doc the disk refuses does not stop the others
        # (Its entry keeps no file: the file on disk is not what was planned.)
        out.report.problems.append(_os_problem(out.root, rel_file, exc))
        if stale and blocks:
            # Left, it would pass for right under the manifest's new model (its blocks and
            # vector sizes match), and no later sync would embed it again: removed, the doc
            # is planned again by the next one.
            with contextlib.suppress(OSError):
                out.remove_file(path)


def _os_problem(root: Path, path: str, exc: OSError) -> NcxError:
    where = exc.filename if isinstance(exc.filename, str) else path
    try:
        where = Path(where).relative_to(root).as_posix()
    except ValueError:
        pass
    return NcxError(
        f"cannot be written: {exc.strerror or exc}; {path} skipped",
        path=where[:300],
        hint="check that .neocortex/chunks/ is a folder you can write to (`ncx check`)",
    )


def _remove_orphans(
    out: _Out,
    live: set[str],
    gone_files: set[str] | None,
    sources: Sequence[str],
    gone: set[str],
    docs_state: dict[str, Any],
    dim: int,
    *,
    want: frozenset[bytes] | set[bytes] = frozenset(),
    donated: dict[bytes, bytes] | None = None,
) -> None:
    """Remove the chunk files of docs that are no longer sources (deleted, renamed,
    excluded), and every file of the older one-file-per-chunk format.

    `live`: the chunk files of current sources; `gone_files`: for a run limited to some
    paths, the chunk files of those given paths that are no longer sources (None: the
    whole tree is swept). Before a chunk file goes, the vectors it holds for the text
    hashes in `want` are put in `donated`."""
    root = out.root
    base = chunks_dir(root)
    if not base.is_dir():
        return
    doomed: list[str] = []
    if gone_files is not None:
        # A limited run only cleans up after the paths it was given.
        doomed = [str(root / f) for f in sorted(gone_files) if (root / f).is_file()]
        for p in gone:
            docs_state.pop(p, None)
    else:
        top = len(str(root)) + 1
        found = out.report.chunk_files = []
        for dirpath, _dirs, names in os.walk(base):
            # (Each file's path built only when it goes: 100,000 joins were 0.2 s of a no-op.)
            rel_dir = dirpath[top:].replace(os.sep, "/") + "/"
            for name in names:
                if is_temp(name):
                    full = os.path.join(dirpath, name)
                    if not out.dry and stale_temp(Path(full)):
                        check_write(root, Path(full))  # a linked folder: never sweep outside
                        os.unlink(full)
                    continue
                if name.endswith(".md"):
                    found.append(rel_dir + name)
                    if found[-1] in live:
                        continue
                    doomed.append(os.path.join(dirpath, name))
                elif name.endswith(".npy"):
                    doomed.append(os.path.join(dirpath, name))
        current = set(sources)  # (`in` a list here was quadratic: 7 s of a 20,000-doc no-op)
        for p in list(docs_state):
            if p not in current:
                docs_state.pop(p)
    if want and donated is not None:
        for full in doomed:
            if full.endswith(".md"):
                with contextlib.suppress(NcxError):
                    blocks = split_chunk_file(read_chunk_file(full), path=full)
                    donated.update(block_vectors(blocks, dim, want))
    for full in sorted(doomed):
        out.remove_file(full)


def _plan_memories(out: _Out, *, force: bool) -> list[_Pending]:
    """Memories edited by hand get a new hash and vector; broken ones are reported, not dropped."""
    root, report = out.root, out.report
    folder = memories_dir(root)
    if not folder.is_dir():
        return []
    pending = []
    for md in sorted(folder.glob("*.md")):
        if is_temp(md.name):
            continue
        report.memories += 1
        try:
            meta, body = read_unit(md)
        except NcxError as exc:
            # Markers in the frontmatter (a merge of two sides' `vec:` lines) break its
            # YAML: said as what they are, not as a YAML error to fix (issue 36, f25b).
            report.problems.append(_marked(root, md) if _has_markers(md) else exc)
            continue
        if "\n<<<<<<< " in "\n" + body or "\n>>>>>>> " in "\n" + body:
            # Embedding both sides of a merge would serve a learning nobody wrote.
            report.problems.append(_marked(root, md))
            continue
        digest = memory_hash(body)
        vector = read_or_none(md.with_suffix(".npy"))
        have = None if vector is None else blob_vec(vector)
        recorded = meta.get("vec")
        if meta.get("hash") == digest and have is not None and not force:
            if recorded == have:
                continue
            if recorded is None:  # written before vec existed: keep its vector, record it
                out.write(md, dump_frontmatter({**meta, "vec": have}, body).encode())
                continue
        meta["hash"] = digest
        pending.append(
            _Pending(str(md), functools.partial(_memory_bytes, meta, body), memory_embed_text(body))
        )
    for npy in sorted(folder.glob("*.npy")):
        if is_temp(npy.name):
            if not out.dry and stale_temp(npy):  # a killed add's leftover, never a live one
                check_write(root, npy)  # a linked memories/: never sweep outside .neocortex/
                npy.unlink(missing_ok=True)
            continue
        if not npy.with_suffix(".md").exists():
            out.remove(npy)
    return pending


def _has_markers(md: Path) -> bool:
    data = read_or_none(md)
    return data is not None and has_markers(data)


def _marked(root: Path, md: Path) -> NcxError:
    return NcxError(
        "has merge-conflict markers: resolve them by hand; not re-embedded",
        path=md.relative_to(root).as_posix(),
        hint="keep one side's lines, then run `ncx sync` (`ncx sync --reembed` after a merge "
        "of two branches that switched models)",
    )


def _write_pending(out: _Out, pending: list[_Pending], vectors: Any) -> None:
    if not pending:
        return  # (no numpy import: a commit hook's run that writes nothing pays ~90 ms for it)
    import io

    import numpy as np

    # Vector first, then markdown: if the run dies in between, the markdown still carries
    # the old hash, so the next sync sees the mismatch and embeds again.
    for p, vec in zip(pending, vectors, strict=True):
        buf = io.BytesIO()
        np.save(buf, np.asarray(vec, dtype=np.float16), allow_pickle=False)
        data = buf.getvalue()
        try:
            out.write(p.md_path[:-3] + ".npy", data)
            out.write(p.md_path, p.render(blob_vec(data)))
        except OSError as exc:  # one unit the disk refuses does not stop the others
            out.report.problems.append(_os_problem(out.root, p.md_path, exc))


def _memory_bytes(meta: dict[str, Any], body: str, vec: str) -> bytes:
    return dump_frontmatter({**meta, "vec": vec}, body).encode()
