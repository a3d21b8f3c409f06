"""sync: bring .neocortex/ in line with the sources and memories, incrementally.

sources (git-tracked docs) -> chunkfile.chunk_blocks -> embedder -> one chunk file per doc
(its chunks' blocks, vectors inline); memories -> embedder -> .md + .npy each.
Only chunks whose text changed are re-embedded (content hash); files whose bytes would
not change are not touched, so a second run writes nothing. Per-document problems are
collected and the rest of the run continues; a broken doc keeps its existing chunks.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ncx import repo
from ncx.config import Config
from ncx.embedder import (
    Embedder,
    StaticEmbedder,
    check_tree_model,
    load_tree_model,
    model_mismatch,
)
from ncx.errors import BadSource, NcxError
from ncx.layout import (
    FORMAT_VERSION,
    cache_dir,
    chunk_file_paths,
    chunks_dir,
    doc_chunk_dir,
    is_inside_ncx,
    manifest_path,
    memories_dir,
)
from ncx.locks import exclusive
from ncx.manifest import Manifest, load_manifest
from ncx.memory.file import memory_embed_text, memory_hash
from ncx.paths import (
    Links,
    UnsafePath,
    cache_folder,
    check_write,
    ignored_targets,
    lexical_rel,
    read_problem,
    rel_problem,
)
from ncx.sources import (
    FORMATS,
    READER_VERSION,
    UNREAD,
    format_of,
    is_excluded,
    list_sources,
    log_reason,
)
from ncx.store import (
    NotRegular,
    blob_vec,
    dump_frontmatter,
    has_markers,
    hash_of,
    inline_vec,
    is_temp,
    is_written,
    lf,
    read_chunk_file,
    read_regular,
    read_unit,
    remove_unit,
    split_chunk_file,
    stale_temp,
    usable_vec,
    vec_b64,
    with_inline_vec,
    write_atomic,
    write_if_changed,
)
from ncx.tree.chunkfile import ChunkBlock, chunk_blocks, chunk_file_bytes, load_doc
from ncx.tree.sidecar import read_doc_meta, sidecar_path

_STATE = "sync-state.json"

Progress = Callable[[str], None]


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


def secret_warnings(report: SyncReport) -> list[str]:
    """One line per credential found in a doc or sidecar: where it is, and what to do."""
    return [
        f"ncx: warning: {path}:{line}: holds what looks like a {kind.replace('_', ' ')}; "
        f"its chunks carry [REDACTED {kind.replace('_', ' ')}] instead: remove it from the "
        "file and rotate the credential"
        for path, line, kind in sorted(set(report.secrets))
    ]


def skipped_sources(manifest: Manifest, tracked: Sequence[str]) -> list[tuple[str, str]]:
    """Tracked docs not indexed for their format, with the reason: a format switched off
    in the manifest, or one ncx does not read. Excluded paths are the user's own choice and
    not listed."""
    out = []
    for p in tracked:
        if is_inside_ncx(p) or is_excluded(p, manifest.exclude):
            continue
        fmt = format_of(p)
        if fmt is not None and not manifest.index_logs and (why := log_reason(p)):
            out.append((p, why))
        elif fmt is not None and fmt.name in manifest.skip_formats:
            out.append((p, f"{fmt.label} is switched off (manifest sources.skip_formats)"))
        elif fmt is None and (why := UNREAD.get(Path(p).suffix.lower())):
            out.append((p, why))
    return out


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
            with open(path, "rb") as f:
                if lf(f.read()) == data:
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


def _submodules(root: Path) -> list[tuple[str, str]]:
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


def sync(
    root: Path,
    cfg: Config,
    *,
    paths: Sequence[str] = (),
    staged: bool = False,
    reembed: bool = False,
    dry_run: bool = False,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> SyncReport:
    """`_sync` under the memory lock (ncx.locks) unless it is a dry run: a sync rewrites
    memories' hash lines and sweeps vectors without markdown, which must not interleave
    with a `memory add` or `evolve` in another process."""
    with contextlib.nullcontext() if dry_run else exclusive(root):
        return _sync(
            root,
            cfg,
            paths=paths,
            staged=staged,
            reembed=reembed,
            dry_run=dry_run,
            embedder=embedder,
            progress=progress,
        )


def _sync(
    root: Path,
    cfg: Config,
    *,
    paths: Sequence[str] = (),
    staged: bool = False,
    reembed: bool = False,
    dry_run: bool = False,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> SyncReport:
    """Chunk and embed changed docs, drop chunks of removed docs, re-embed edited memories.

    `paths` limits the run to those docs (a path no longer tracked has its chunks removed).
    `staged` reads doc content from the git index instead of the working tree, so a
    pre-commit hook follows what is being committed. `reembed` re-embeds every unit with
    the configured model and records it in the manifest. `dry_run` reports what would be
    written or removed (units needing a vector count as written) and touches nothing but
    the state file in the untracked cache (what it found right, an accelerator).
    """
    manifest = load_manifest(root)
    report = SyncReport()
    out = _Out(root, report, dry_run)
    manifest = _apply_settings(root, manifest, cfg, out)
    model = _ModelSlot(root, manifest, cfg, embedder, reembed)

    # The index's blob id of every tracked file: a doc the working tree holds as the index
    # does (git's own stat check, `modified_files`), with the blob id the state recorded
    # for it, is known unchanged without reading it (see `_unread`).
    blobs = repo.index_blobs(root)
    tracked = sorted(blobs)
    sources = []
    for p in list_sources(root, manifest, tracked=tracked):
        bad = rel_problem(p)
        if bad is None:
            sources.append(p)
        else:  # one odd name is reported; the rest of the tree keeps syncing
            report.problems.append(BadSource(f"{bad}; skipped", path=p[:200]))
    files_of = chunk_file_paths(sources)
    if manifest.format < FORMAT_VERSION:
        # A tree of the one-file-per-chunk format moves as a whole: every doc is rewritten
        # into its chunk file (vectors kept) and the old files are removed.
        paths = ()
    if paths:
        wanted = {_norm(root, p) for p in paths}
        via = _inc().docs_including(root, wanted)  # docs that include a named file
        in_scope = [
            p
            for p in sources
            if p in wanted
            or p in via
            or any(w == "." or p.startswith(w.rstrip("/") + "/") for w in wanted)
        ]
        gone_scope = {w for w in wanted if w not in set(sources) and rel_problem(w) is None}
        for w in sorted(wanted):
            if _names_nothing(root, w, in_scope, tracked):
                # A typo (`docs/nosuch.rst`) is not "up to date": said, and the run fails.
                report.problems.append(
                    BadSource(
                        "no such doc: not a file here, not tracked, and no chunks of it",
                        path=w,
                        hint="check the path (relative to the current folder), or run `ncx sync` "
                        "without paths",
                    )
                )
    else:
        in_scope, gone_scope = sources, set()
    report.docs = len(in_scope)
    names = {p: _format_name(p) for p in in_scope}  # (once per doc: 100,000 on big trees)
    for name in names.values():
        report.by_format[name] = report.by_format.get(name, 0) + 1
    report.skipped = skipped_sources(manifest, tracked) + _submodules(root)
    if not staged:
        # Never silent: a doc written but not yet `git add`ed is not a source (the commit
        # would not hold it); say so, rather than "up to date".
        report.skipped += [
            (p, "not tracked by git yet: `git add` it to index it")
            for p in list_sources(root, manifest, tracked=repo.untracked_files(root))
        ]

    state = _load_state(root, manifest) if not reembed else {}
    docs_state = state["docs"] = _Touched(state.get("docs") or {})
    unread = (
        set()
        if staged or reembed or not docs_state
        else _unread(root, in_scope, blobs, repo.modified_files(root), docs_state, files_of)
    )
    to_read = [p for p in in_scope if p not in unread] if unread else in_scope
    contents = _read_contents(root, to_read, staged, cfg, report)
    for p in [p for p, data in contents.items() if is_lfs_pointer(data)]:
        # A Git LFS pointer (the content was not fetched, or is fetched only on demand): its
        # three lines of oid and size are no knowledge. Not indexed, and said so.
        del contents[p]
        report.skipped.append(
            (p, "a Git LFS pointer, not the file's content: `git lfs pull` to index it")
        )
    sidecars = _read_sidecars(root, to_read, set(tracked), staged)
    all_chunks = 0
    # Which docs need chunking (the state file's word is checked against the chunk file),
    # then chunk them all (in worker processes when there are many), then plan the writes.
    jobs: list[_Job] = []
    sigs: dict[str, str] = {}
    # Files the docs include, read through the gate (tracked, inside the repository).
    gate = _Gate(root, blobs, staged)
    incs: dict[str, dict[str, Any]] = {}
    verified: dict[str, tuple[str | None, str | None]] = {}  # doc -> (blob, sidecar blob)
    for path in in_scope:
        if path in unread:
            found = docs_state[path].get("secrets", ())
            report.secrets.extend((str(f), int(n), str(k)) for f, n, k in found)
            n = int(docs_state[path].get("chunks", 0))
            report.intact[files_of[path]] = n
            all_chunks += n
            report.chunks_by_format[names[path]] = report.chunks_by_format.get(names[path], 0) + n
            continue
        data = contents.get(path)
        if data is None:
            continue
        sidecar = sidecars.get(path)
        if not staged:
            verified[path] = _verified_blobs(path, data, sidecar, blobs)
        # A doc's sidecar is part of its identity: editing it rewrites the chunks' metadata.
        # CRLF is read as LF (store.decode_source), so a core.autocrlf clone's doc has the
        # LF clone's signature and can take a record made there (a CI cache).
        sig = _signature(lf(data) if sidecar is None else lf(data) + b"\0" + sidecar[1])
        prev: dict[str, Any] = docs_state.get(path) or {}
        # Trigger: the doc's bytes are those of the last run, and its chunk file is the
        # very file that run left (same size and mtime). Why: a state file is an
        # accelerator, never the judge: a checkout, a merge or a hand edit of a chunk file
        # changes its stat, so the doc is re-planned from the files themselves.
        # A file of another stat but the same bytes (a fresh clone given a CI cache's state
        # file, a checkout of another branch and back) is as good: its bytes are hashed.
        try:
            intact = False
            if (
                prev
                and prev.get("sig") == sig
                and prev.get("file") is not None
                and ("inc" not in prev or _inc().same_now(prev, gate.fetch()))
            ):
                now = _stat(root / files_of[path])
                intact = now == prev["file"] or (
                    now is not None
                    and prev.get("digest") is not None
                    and _file_digest(_read(root / files_of[path]) or b"") == prev["digest"]
                )
                if intact and now != prev["file"]:
                    docs_state[path] = prev = {**prev, "file": now}
                if intact and path in verified:
                    docs_state[path] = _with_blobs(prev, verified[path])
        except OSError as exc:
            report.problems.append(_os_problem(root, path, exc))
            continue
        if intact:
            report.secrets.extend((str(f), int(n), str(k)) for f, n, k in prev.get("secrets", ()))
            report.intact[files_of[path]] = int(prev.get("chunks", 0))
            all_chunks += int(prev.get("chunks", 0))
            _count(report.chunks_by_format, path, int(prev.get("chunks", 0)))
            continue
        meta = None
        if sidecar is not None:
            meta, errors = read_doc_meta(*sidecar)
            report.problems.extend(errors)
            if errors:
                # Never recorded as right (no signature matches ""): its sidecar's error
                # is said by every run, not only by the first one after it was written.
                sig = ""
        sigs[path] = sig
        incs[path] = _inc().gather(path, data, gate.fetch())
        jobs.append((path, data, meta, files_of[path], incs[path]))
    dim = int(manifest.model.get("dim", 0))
    # A first sync (no chunk file yet) or a re-embed: no removed chunk file can lend a vector
    # (below), so the worker that chunks a doc embeds its new texts too. One pass over the
    # CPUs instead of two, and no text travels to a second pool and back.
    spec = None
    if not dry_run and len(jobs) >= _PARALLEL_DOCS and (reembed or _no_chunk_file(root)):
        loaded = model.get()
        if isinstance(loaded, StaticEmbedder):  # (a model handed in may not load elsewhere)
            spec = loaded.worker_spec()
    chunked = _chunk_docs(root, jobs, (manifest.chunk, dim), reembed, progress, spec)
    planned: list[tuple[str, _Compared]] = []
    written_by: dict[str, str] = {}  # a planned chunk file -> its doc
    for (path, _data, _meta, rel_file, _incl), compared in zip(jobs, chunked, strict=True):
        if isinstance(compared, NcxError):
            report.problems.append(compared)
            continue
        if isinstance(compared, OSError):
            report.problems.append(_os_problem(root, path, compared))
            continue
        all_chunks += compared.chunks
        report.embedded += compared.embedded
        _count(report.chunks_by_format, path, compared.chunks)
        docs_state[path] = {
            "sig": sigs[path],
            "chunks": compared.chunks,
            # A file found right: its stat from before it was read (a checkout landing while
            # this run embeds must not be recorded as the file it read). A planned one's is
            # set once it is written; until then None, which no run takes as intact.
            "file": compared.file if compared.blocks is None else None,
            "digest": compared.digest,
            **({"secrets": [list(x) for x in compared.secrets]} if compared.secrets else {}),
            **({"inc": _inc().recorded(incs[path])} if incs.get(path) else {}),
        }
        report.secrets.extend(compared.secrets)
        if path in verified and sigs[path]:
            docs_state[path] = _with_blobs(docs_state[path], verified[path])
        if compared.blocks is not None and spec is not None:
            # Embedded where it was chunked: written now, while the workers go on.
            _write_chunk_file(
                out,
                rel_file,
                _filled(compared, []),
                docs_state[path],
                stale=reembed or model.switched,
            )
        elif compared.blocks is not None:
            planned.append((rel_file, compared))
            written_by[rel_file] = path
        else:
            report.intact[rel_file] = compared.chunks

    live_files = {files_of[p] for p in sources}
    # A renamed or moved doc takes the vectors its removed chunk file has for its text.
    donated: dict[bytes, bytes] = {}
    _remove_orphans(
        out,
        live_files,
        # A removed doc's file, unless a live doc owns that very path (a case twin).
        {
            f
            for p, f in chunk_file_paths([*sources, *gone_scope]).items()
            if p in gone_scope and f not in live_files
        }
        if paths
        else None,
        sources,
        gone_scope,
        docs_state,
        dim,
        want=set() if reembed else {h for _f, c in planned for _i, h, _t in c.missing},
        donated=donated,
    )
    if donated:
        for _f, c in planned:
            still = []
            for i, digest, text in c.missing:
                vec = donated.get(digest)
                if vec is None:
                    still.append((i, digest, text))
                elif c.blocks is not None:
                    c.blocks[i] = with_inline_vec(c.bare[i], vec)
            c.missing[:] = still
    pending = _plan_memories(out, force=reembed)
    report.chunks = all_chunks
    texts = [t for _f, c in planned for _i, _h, t in c.missing] + [u.text for u in pending]

    if dry_run:
        # A chunk file with a block to embed is written (its hash line changes). For a
        # memory, the vector is computed (nothing is written) so the list is exactly what
        # the real run writes: one re-embedded to the same vector keeps its .npy and `vec`.
        for rel_file, _c in planned:
            out.report.written.append(rel_file)
        try:
            vectors: Any = model.get().embed([u.text for u in pending]) if pending else []
            _write_pending(out, pending, vectors)
        except NcxError:
            for u in pending:
                report.written.append(out.rel(u.md_path))
                report.written.append(out.rel(u.md_path[:-3] + ".npy"))
        report.written = sorted(set(report.written))
        report.removed = sorted(set(report.removed))
        if not staged and not reembed:
            # What the dry run found right is recorded as a real run records it (the state
            # is an accelerator, stat-checked next time): without it, each `ncx status` or
            # `ncx check` in a clone nobody synced chunked every doc again (~9 s on 40,000
            # chunks). A stale doc's entry has no file: its file is not what sync would write.
            _save_state(root, manifest, state, docs_state.touched)
            if docs_state.touched:
                _inc().save_included_by(root, docs_state)
        return report
    vectors = []
    if texts:
        embedder = model.get()  # loaded (or refused) before saying what it will do
        if progress:
            progress(f"embedding {len(texts)} units")
        vectors = list(embedder.embed(texts))
        report.embedded += len(texts)
    at = 0
    for rel_file, compared in planned:
        blocks = _filled(compared, vectors[at : at + len(compared.missing)])
        at += len(compared.missing)
        _write_chunk_file(
            out, rel_file, blocks, docs_state[written_by[rel_file]], stale=reembed or model.switched
        )
    _write_pending(out, pending, vectors[at:])
    if reembed or model.switched:
        manifest = replace(manifest, model=model.get().info.as_manifest())
        out.write(manifest_path(root), manifest.to_json().encode())
    if manifest.format < FORMAT_VERSION:
        manifest = replace(manifest, format=FORMAT_VERSION)
        out.write(manifest_path(root), manifest.to_json().encode())
    if docs_state.touched:
        _inc().save_included_by(root, docs_state)
    _save_state(root, manifest, state, docs_state.touched or report.changed)
    report.written.sort()
    report.removed.sort()
    return report


def _inc() -> Any:
    """ncx.tree.includefiles (the files docs include), imported where a doc is read or has
    includes: a no-op of a tree without any reads no doc and pays nothing for it."""
    from ncx.tree import includefiles

    return includefiles


class _Gate:
    """The gate for included files, made for the first doc read (the working tree's or,
    for the pre-commit hook, the index's files)."""

    def __init__(self, root: Path, blobs: dict[str, str | None], staged: bool):
        self._args, self._fetch = (root, blobs, staged), None

    def fetch(self) -> Any:
        if self._fetch is None:
            root, blobs, staged = self._args
            made = _inc().Staged(root, blobs) if staged else _inc().WorkTree(root, blobs)
            self._fetch = made
        return self._fetch


class _ModelSlot:
    """Loads the model only when something needs embedding, and checks it against the tree."""

    def __init__(
        self, root: Path, manifest: Manifest, cfg: Config, given: Embedder | None, reembed: bool
    ):
        self._root, self._manifest, self._cfg, self._reembed = root, manifest, cfg, reembed
        self._model = given
        self.switched = False

    def get(self) -> Embedder:
        if self._model is None:
            self._model = load_tree_model(
                self._root,
                self._manifest.model,
                self._cfg.model,
                self._cfg.model_cache,
                allow_mismatch=self._reembed,
            )
        if model_mismatch(self._model.info, self._manifest.model) is not None:
            if not self._reembed:  # a model handed in by the caller
                check_tree_model(self._root, self._model.info, self._manifest.model)
            self.switched = True
        return self._model


_PARALLEL_DOCS = 200  # docs to chunk; below this, starting worker processes costs more
# A doc to chunk: (path, bytes, sidecar meta, chunk file, what its includes read).
_Job = tuple[str, bytes, Any, str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class _Compared:
    """A doc's chunk file set against the one on disk (worked out in a worker process:
    only what must change travels back, not the 40,000 chunks of a synced tree)."""

    chunks: int
    # None: the file on disk is already right. Else each block with its vector, or None
    # where the vector must be computed (`missing`: (index, text hash, text to embed);
    # `bare`: the block without its `vec` line, by index).
    blocks: list[bytes | None] | None
    missing: list[tuple[int, bytes, str]]
    bare: dict[int, bytes]
    digest: str | None = None  # of the file on disk, when it is right (_file_digest)
    file: list[int] | None = None  # its stat, taken before it was read (_stat)
    embedded: int = 0  # vectors computed where it was chunked (_chunk_and_embed)
    secrets: tuple[tuple[str, int, str], ...] = ()  # credentials redacted (file, line, kind)


def _chunk_docs(
    root: Path,
    jobs: list[_Job],
    settings: Any,
    force: bool,
    progress: Callable[[str], None] | None,
    model: tuple[str, str, str] | None = None,
) -> Iterator[_Compared | NcxError | OSError]:
    """Chunk file of each (path, bytes, sidecar meta, chunk file), compared with the file on
    disk, in order; a doc that cannot be read yields its NcxError. Chunking and comparing
    are per doc and only read files, and they are most of a first sync or a full check, so
    a large tree spreads them over the CPUs; each result comes as soon as it is done.
    `model` (StaticEmbedder.worker_spec): the blocks that need a vector get it there too,
    docs taken in batches (an embed call of a few texts costs more per text)."""
    from ncx.parallel import ordered_imap, workers

    step = functools.partial(_chunk_doc, settings, str(root) + os.sep, force)  # (chunker, dim)
    if model is None:
        for i, got in enumerate(ordered_imap(step, jobs, at_least=_PARALLEL_DOCS)):
            if progress and i and i % 200 == 0:
                progress(f"chunked {i}/{len(jobs)} docs")
            yield got
        return
    # Small batches, about 16 per worker: batches differ in cost, and the last one to finish
    # is what everything waits for.
    size = max(8, len(jobs) // (workers() * 16))
    batches = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    work = functools.partial(_chunk_and_embed, step, model)
    done = 0
    for batch in ordered_imap(work, batches, at_least=2, chunksize=1):
        yield from batch
        done += len(batch)
        if progress and done < len(jobs):
            progress(f"chunked and embedded {done}/{len(jobs)} docs")


def _chunk_and_embed(
    step: Callable[[_Job], _Compared | NcxError | OSError],
    model: tuple[str, str, str],
    batch: list[_Job],
) -> list[_Compared | NcxError | OSError]:
    """`step` (_chunk_doc) for each job, then every block left without a vector embedded, in
    one call for the batch."""
    from ncx.embedder import embed_share

    done = [step(job) for job in batch]
    texts = [t for c in done if isinstance(c, _Compared) for _i, _h, t in c.missing]
    vectors: Any = embed_share(model, texts) if texts else []
    at = 0
    for k, c in enumerate(done):
        if isinstance(c, _Compared) and c.missing:
            blocks: list[bytes | None] = [*_filled(c, vectors[at : at + len(c.missing)])]
            at += len(c.missing)
            done[k] = replace(c, blocks=blocks, missing=[], bare={}, embedded=len(c.missing))
    return done


def _no_chunk_file(root: Path) -> bool:
    """Whether the tree has no chunk file yet (`ncx init` leaves only a .gitkeep): a first
    sync."""
    try:
        with os.scandir(chunks_dir(root)) as entries:
            return all(e.name == ".gitkeep" for e in entries)
    except FileNotFoundError:
        return True


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
            entry["digest"], entry["file"] = _file_digest(data), _stat(path)
        else:  # emptied
            out.remove_file(path)
    except OSError as exc:  # one doc the disk refuses does not stop the others
        # (Its entry keeps no file: the file on disk is not what was planned.)
        out.report.problems.append(_os_problem(out.root, rel_file, exc))
        if stale and blocks:
            # Left, it would pass for right under the manifest's new model (its blocks and
            # vector sizes match), and no later sync would embed it again: removed, the doc
            # is planned again by the next one.
            with contextlib.suppress(OSError):
                out.remove_file(path)


def _filled(compared: _Compared, vectors: Any) -> list[bytes]:
    """The blocks of a planned chunk file, each missing vector taken from `vectors` in turn."""
    fresh = {
        i: with_inline_vec(compared.bare[i], vec_b64(vec))
        for (i, _digest, _text), vec in zip(compared.missing, vectors, strict=True)
    }
    return [fresh[i] if b is None else b for i, b in enumerate(compared.blocks or [])]


def _chunk_doc(
    settings: tuple[Any, int], top: str, force: bool, job: _Job
) -> _Compared | NcxError | OSError:
    path, data, meta, rel_file, included = job
    chunker, dim = settings
    try:
        doc = load_doc(path, data, meta, _inc().replay(included))
        blocks = chunk_blocks(doc, chunker)
    except NcxError as exc:
        return exc
    except RecursionError:  # (the readers stop nesting; this is the net under any other)
        return BadSource(
            "is nested too deeply to read; skipped, its chunks are kept as they were",
            path=path,
            hint="flatten its nesting, or exclude it (`ncx init --exclude PATH`)",
        )
    path = top + rel_file if os.sep == "/" else os.path.join(top, rel_file)
    try:
        st = _stat(path)
        old = _read(path)
    except OSError as exc:  # a chunk file that is a folder, ...
        return exc
    compared = _compare(old, blocks, force, dim, _format_1_vectors(path[:-3], blocks, force, dim))
    return replace(compared, file=st, secrets=doc.secrets)


def _block_vectors(
    blocks: list[bytes], dim: int, want: frozenset[bytes] | set[bytes] | None = None
) -> dict[bytes, bytes]:
    """{text hash: base64 vector} of the blocks of a chunk file (only the hashes in `want`,
    when given) whose vector retrieval can use: one of the wrong size, or with NaN/inf, is
    embedded again."""
    out: dict[bytes, bytes] = {}
    for block in blocks:
        digest, vec = hash_of(block), inline_vec(block)
        if digest is None or vec is None or (want is not None and digest.encode() not in want):
            continue
        if usable_vec(vec, dim) is not None:
            out[digest.encode()] = vec
    return out


def _format_1_vectors(
    folder: str, blocks: list[ChunkBlock], force: bool, dim: int
) -> dict[bytes, bytes]:
    """{text hash: base64 vector} from the older format's `<folder>/<chunk>.md` + `.npy`
    pairs of this doc, so that moving a tree to one chunk file per doc embeds nothing."""
    if force or not os.path.isdir(folder):
        return {}
    import io

    import numpy as np

    out: dict[bytes, bytes] = {}
    for b in blocks:
        md = _read(os.path.join(folder, b.name + ".md"))
        npy = _read(os.path.join(folder, b.name + ".npy"))
        if md is None or npy is None or hash_of(md) != b.hash:
            continue
        try:
            vec = np.load(io.BytesIO(npy), allow_pickle=False)
        except (OSError, ValueError, EOFError):
            continue  # a damaged vector: embedded again
        if vec.shape != (dim,) or vec.dtype.kind != "f":
            continue
        b64 = vec_b64(vec)
        if usable_vec(b64, dim) is not None:  # finite as stored (else embedded again)
            out[b.hash.encode()] = b64
    return out


def _compare(
    old: bytes | None, blocks: list[ChunkBlock], force: bool, dim: int, have: dict[bytes, bytes]
) -> _Compared:
    """Which blocks keep the vector the file on disk (or `have`: text hash -> base64
    vector) has for their text, which need one."""
    if old is not None and not force:
        # Most files of a full check or a first sync in a clone are right: each block on
        # disk is the block rendered here plus its vector, which takes no text hash, no
        # regex and no re-rendering of the file to see.
        if is_written(old, [b.data for b in blocks], dim):
            return _Compared(len(blocks), None, [], {}, _file_digest(old))
    # (Markers the doc itself quotes are text like any other: looked for only when the file
    # has some, which is rare.)
    if (
        old is not None
        and not force
        and (not has_markers(old) or any(has_markers(b.data) for b in blocks))
    ):
        # A file with conflict markers gets fresh vectors: which side's is right is not
        # worth guessing. A damaged file or one of the older format gives none.
        with contextlib.suppress(NcxError):
            have.update(_block_vectors(split_chunk_file(old, path=""), dim))
    out: list[bytes | None] = []
    missing: list[tuple[int, bytes, str]] = []
    bare: dict[int, bytes] = {}
    for i, b in enumerate(blocks):
        digest = b.hash.encode()
        vec = have.get(digest)
        if vec is None:
            out.append(None)
            missing.append((i, digest, b.embed_text))
            bare[i] = b.data
        else:
            out.append(with_inline_vec(b.data, vec))
    if not missing:
        full = [b for b in out if b is not None]  # all of them: none is missing
        if old is None if not full else old is not None and lf(old) == chunk_file_bytes(full):
            # Right as it is (no chunk: no file).
            return _Compared(len(blocks), None, [], {}, None if old is None else _file_digest(old))
    return _Compared(len(blocks), out, missing, bare)


def _apply_settings(root: Path, manifest: Manifest, cfg: Config, out: _Out) -> Manifest:
    """A chunk setting given in the environment becomes the tree's setting (and rechunks)."""
    if cfg.chunk is not None and cfg.chunk != manifest.chunk:
        manifest = manifest.with_chunk(cfg.chunk)
        out.write(manifest_path(root), manifest.to_json().encode())
    return manifest


def _format_name(path: str) -> str:
    fmt = format_of(path)
    return fmt.name if fmt else FORMATS[0].name


def _count(counts: dict[str, int], path: str, n: int) -> None:
    name = _format_name(path)
    counts[name] = counts.get(name, 0) + n


def _names_nothing(root: Path, rel: str, in_scope: Sequence[str], tracked: Sequence[str]) -> bool:
    """A path given to sync that names no doc, no file, nothing git tracks, and no chunks."""
    if rel in ("", ".") or any(p == rel or p.startswith(rel + "/") for p in in_scope):
        return False
    if os.path.lexists(root / rel):
        return False
    if any(t == rel or t.startswith(rel + "/") for t in tracked):
        return False
    chunks = root / doc_chunk_dir(rel)
    return not (os.path.lexists(f"{chunks}.md") or os.path.isdir(chunks))


def _norm(root: Path, p: str) -> str:
    """A user-given path (relative to the cwd, or absolute) as a normalised repo-relative
    POSIX path; UnsafePath for one outside the repository (never taken as a removed doc)."""
    return lexical_rel(root, p)


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


def _read_contents(
    root: Path, paths: Sequence[str], staged: bool, cfg: Config, report: SyncReport
) -> dict[str, bytes]:
    if staged:
        small = []
        for p, size in repo.staged_sizes(root, paths).items():
            if size > cfg.max_doc_bytes:  # refused from its size alone, never read
                report.problems.append(_too_big(p, size, cfg))
            else:
                small.append(p)
        return repo.read_staged(root, small)
    out = {}
    links = Links(root)
    ignored = ignored_targets(root, paths, links)
    for p in paths:
        full = root / p
        # A tracked link (or linked folder) to a file outside the repo, into .git/ or to an
        # ignored file: never copy that text into committed chunks.
        bad = read_problem(root, p, ignored, links)
        if bad is not None:
            report.problems.append(BadSource(bad, path=p))
            continue
        try:
            size = full.stat().st_size
            if size > cfg.max_doc_bytes:
                report.problems.append(_too_big(p, size, cfg))
                continue
            out[p] = read_regular(full)
        except FileNotFoundError:
            continue  # tracked but deleted in the working tree: nothing to chunk
        except NotRegular:
            report.problems.append(
                BadSource(
                    "is not a regular file (a FIFO, socket or device); skipped",
                    path=p,
                    hint=f"put the doc back (`git checkout -- {p}`) or `git rm --cached {p}`",
                )
            )
        except OSError as exc:
            report.problems.append(
                BadSource(f"cannot be read: {exc.strerror}", path=p, hint="check its permissions")
            )
    return out


def _read_sidecars(
    root: Path, paths: Sequence[str], tracked: set[str], staged: bool
) -> dict[str, tuple[str, bytes]]:
    """{doc: (sidecar path, bytes)} for docs with a tracked `<name>.meta.yaml` beside them."""
    wanted = {}
    for p in paths:
        sc = sidecar_path(p)
        if sc is not None and sc in tracked:
            wanted[p] = sc
    if not wanted:
        return {}
    if staged:
        sizes = repo.staged_sizes(root, sorted(wanted.values()))
        data = repo.read_staged(root, [sc for sc, n in sizes.items() if n <= _MAX_SIDECAR])
        return {p: (sc, data[sc]) for p, sc in wanted.items() if sc in data}
    out = {}
    ignored = ignored_targets(root, wanted.values())
    for p, sc in wanted.items():
        try:
            if read_problem(root, sc, ignored) is not None:
                continue  # a linked sidecar is not followed; the doc is chunked without it
            if (root / sc).stat().st_size > _MAX_SIDECAR:
                continue
            out[p] = (sc, read_regular(root / sc))
        except OSError:
            continue  # deleted in the working tree: the doc is chunked without it
    return out


_MAX_SIDECAR = 256_000  # a sidecar is a few lines of YAML


def _too_big(path: str, size: int, cfg: Config) -> BadSource:
    fix = "exclude it (`ncx init --exclude PATH`) or raise NCX_MAX_DOC_BYTES"
    if path.lower().endswith(".ipynb"):
        # Outputs (images, logs) make a notebook big; ncx drops them anyway.
        fix = f"clear its outputs (`jupyter nbconvert --clear-output --inplace {path}`), " + fix
    return BadSource(
        f"is {size / 1e6:.1f} MB, over the {cfg.max_doc_bytes / 1e6:.1f} MB limit for a doc",
        path=path,
        hint=fix,
    )


_LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def is_lfs_pointer(data: bytes) -> bool:
    """Whether a file is a Git LFS pointer (the spec caps a pointer at 1024 bytes)."""
    return len(data) < 1024 and data.startswith(_LFS_POINTER)


def _signature(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _file_digest(data: bytes) -> str:
    """A chunk file's bytes as the state records them (CRLF read as LF, as everywhere)."""
    return _signature(lf(data))


def _stat(path: Path | str) -> list[int] | None:
    """[size, mtime_ns, inode] of a chunk file, None when there is none. (The inode: two
    chunk files of one size written within one tick of a coarse clock share the rest, and
    a doc can inherit its twin's chunk file path: `guide.markdown` once `guide.md` goes.)"""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _read(path: Path | str) -> bytes | None:
    try:
        return read_regular(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


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
        for dirpath, _dirs, names in os.walk(base):
            for name in names:
                if is_temp(name):
                    full = os.path.join(dirpath, name)
                    if not out.dry and stale_temp(Path(full)):
                        check_write(root, Path(full))  # a linked folder: never sweep outside
                        os.unlink(full)
                    continue
                full = os.path.join(dirpath, name)
                rel = full[top:].replace(os.sep, "/")
                if name.endswith(".npy") or (name.endswith(".md") and rel not in live):
                    doomed.append(full)
        current = set(sources)  # (`in` a list here was quadratic: 7 s of a 20,000-doc no-op)
        for p in list(docs_state):
            if p not in current:
                docs_state.pop(p)
    if want and donated is not None:
        for full in doomed:
            if full.endswith(".md"):
                with contextlib.suppress(NcxError):
                    blocks = split_chunk_file(read_chunk_file(full), path=full)
                    donated.update(_block_vectors(blocks, dim, want))
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
            report.problems.append(exc)
            continue
        if "\n<<<<<<< " in "\n" + body or "\n>>>>>>> " in "\n" + body:
            # Embedding both sides of a merge would serve a learning nobody wrote.
            report.problems.append(
                NcxError(
                    "holds merge-conflict markers; not re-embedded",
                    path=md.relative_to(root).as_posix(),
                    hint="resolve the merge in the file, then run `ncx sync`",
                )
            )
            continue
        digest = memory_hash(body)
        vector = _read(md.with_suffix(".npy"))
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


def _write_pending(out: _Out, pending: list[_Pending], vectors: Any) -> None:
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


def _state_key(manifest: Manifest) -> str:
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


def _load_state(root: Path, manifest: Manifest) -> dict[str, Any]:
    fresh: dict[str, Any] = {"key": _state_key(manifest), "docs": {}}
    try:
        state = json.loads((cache_dir(root) / _STATE).read_text())
    except (OSError, ValueError):
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


def _entry_ok(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("sig"), str)
        and type(entry.get("chunks")) is int
        and (entry.get("file") is None or isinstance(entry.get("file"), list))
        and (entry.get("digest") is None or isinstance(entry.get("digest"), str))
        and (entry.get("blob") is None or isinstance(entry.get("blob"), str))
        and (entry.get("scblob") is None or isinstance(entry.get("scblob"), str))
    )


def _verified_blobs(
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


def _with_blobs(entry: dict[str, Any], found: tuple[str | None, str | None]) -> dict[str, Any]:
    blob, scblob = found
    out = {k: v for k, v in entry.items() if k not in ("blob", "scblob")}
    if blob is not None:
        out["blob"] = blob
        if scblob is not None:
            out["scblob"] = scblob
    return out


def _unread(
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
    the doc's chunk file is the very file that run left (size, mtime, inode).

    Why: reading and hashing every doc made a no-op sync, status or check of a
    100,000-doc tree cost a minute; git keeps the stat of every file already, and answers
    for all of them at the cost of `git status`."""
    top = str(root) + os.sep
    out = set()
    for p in docs:
        prev = docs_state.get(p)
        if prev is None or not prev.get("sig") or p in modified:
            continue  # (no signature: a run found a problem in it, said by every run)
        blob = prev.get("blob")
        if blob is None or blobs.get(p) != blob:
            continue
        sc = sidecar_path(p)
        sc_blob = blobs.get(sc) if sc is not None and sc in blobs else None
        if (sc is not None and sc in blobs) and (sc in modified or sc_blob is None):
            continue
        if prev.get("scblob") != sc_blob:
            continue
        rel = files_of[p]
        try:
            now = _stat(top + rel if os.sep == "/" else os.path.join(top, rel))
        except OSError:
            continue
        if (
            now is not None
            and now == prev.get("file")
            and ("inc" not in prev or _inc().unchanged(prev, blobs, modified))
        ):
            out.add(p)
    return out


class _Touched(dict[str, Any]):
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


def _save_state(root: Path, manifest: Manifest, state: dict[str, Any], changed: bool) -> None:
    if not changed:
        return  # (the file on disk is this very state)
    state["key"] = _state_key(manifest)
    try:
        write_if_changed(cache_folder(root) / _STATE, json.dumps(state, sort_keys=True).encode())
    except (OSError, UnsafePath):
        pass  # the cache is an optimisation; a read-only tree still syncs correctly
