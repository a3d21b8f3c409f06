"""sync: bring .neocortex/ in line with the sources and memories, incrementally.

sources (git-tracked markdown) -> docs.chunk_files -> embedder -> store (.md + .npy).
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ncx import repo
from ncx.config import Config
from ncx.embedder import Embedder, check_tree_model, load_tree_model, model_mismatch
from ncx.errors import BadSource, NcxError
from ncx.layout import (
    cache_dir,
    chunk_folders,
    chunks_dir,
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
)
from ncx.store import (
    blob_vec,
    dump_frontmatter,
    has_markers,
    hash_of,
    is_temp,
    lf,
    read_unit,
    remove_unit,
    stale_temp,
    vec_of,
    with_vec,
    write_atomic,
    write_if_changed,
)
from ncx.tree.chunkfile import ChunkFile, chunk_files, load_doc
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
    # Chunk folders whose files are exactly (name, size, mtime) as the last sync left them,
    # after writing or verifying them: `ncx check` need not re-read their vectors.
    intact: set[str] = field(default_factory=set)

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)


@dataclass
class _Pending:
    """A unit whose vector must be (re)computed before its files are written."""

    md_path: str  # absolute, as os functions take it (a Path per chunk costs on big trees)
    render: Callable[[str], bytes]  # the .md's bytes, given the `vec` id of its new .npy
    text: str


def skipped_sources(manifest: Manifest, tracked: Sequence[str]) -> list[tuple[str, str]]:
    """Tracked docs not indexed for their format, with the reason: a format switched off
    in the manifest, or one ncx does not read. Excluded paths are the user's own choice and
    not listed."""
    out = []
    for p in tracked:
        if is_inside_ncx(p) or is_excluded(p, manifest.exclude):
            continue
        fmt = format_of(p)
        if fmt is not None and fmt.name in manifest.skip_formats:
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
    written or removed (units needing a vector count as written) and touches nothing.
    """
    manifest = load_manifest(root)
    report = SyncReport()
    out = _Out(root, report, dry_run)
    manifest = _apply_settings(root, manifest, cfg, out)
    model = _ModelSlot(root, manifest, cfg, embedder, reembed)

    tracked = repo.tracked_files(root)
    sources = []
    for p in list_sources(root, manifest, tracked=tracked):
        bad = rel_problem(p)
        if bad is None:
            sources.append(p)
        else:  # one odd name is reported; the rest of the tree keeps syncing
            report.problems.append(BadSource(f"{bad}; skipped", path=p[:200]))
    folders = chunk_folders(sources)
    if paths:
        wanted = {_norm(root, p) for p in paths}
        in_scope = [
            p
            for p in sources
            if p in wanted or any(w == "." or p.startswith(w.rstrip("/") + "/") for w in wanted)
        ]
        gone_scope = {w for w in wanted if w not in set(sources) and rel_problem(w) is None}
    else:
        in_scope, gone_scope = sources, set()
    report.docs = len(in_scope)
    for p in in_scope:
        name = _format_name(p)
        report.by_format[name] = report.by_format.get(name, 0) + 1
    report.skipped = skipped_sources(manifest, tracked)
    if not staged:
        # Never silent: a doc written but not yet `git add`ed is not a source (the commit
        # would not hold it); say so, rather than "up to date".
        report.skipped += [
            (p, "not tracked by git yet: `git add` it to index it")
            for p in list_sources(root, manifest, tracked=repo.untracked_files(root))
        ]

    state = _load_state(root, manifest) if not reembed else {}
    docs_state: dict[str, Any] = state.setdefault("docs", {})
    contents = _read_contents(root, in_scope, staged, cfg, report)
    sidecars = _read_sidecars(root, in_scope, set(tracked), staged)
    pending: list[_Pending] = []
    all_chunks = 0
    # Which docs need chunking (the state file's word is checked against the chunk folder),
    # then chunk them all (in worker processes when there are many), then plan the writes.
    jobs: list[tuple[str, bytes, Any, str]] = []
    sigs: dict[str, str] = {}
    for path in in_scope:
        data = contents.get(path)
        if data is None:
            continue
        sidecar = sidecars.get(path)
        # A doc's sidecar is part of its identity: editing it rewrites the chunks' metadata.
        sig = _signature(data if sidecar is None else data + b"\0" + sidecar[1])
        prev: dict[str, Any] = docs_state.get(path) or {}
        # Trigger: the doc's bytes are those of the last run, and its chunk folder holds
        # the very files that run left (same names, sizes and mtimes). Why: a state file
        # is an accelerator, never the judge: a checkout, a merge or a hand edit of a
        # chunk file changes its stat, so the doc is re-planned from the files themselves.
        try:
            intact = (
                bool(prev)
                and prev.get("sig") == sig
                and _files_intact(root / folders[path], prev.get("files"))
            )
        except OSError as exc:
            report.problems.append(_os_problem(root, path, exc))
            continue
        if intact:
            report.intact.add(folders[path])
            n_chunks = sum(1 for n in prev["files"] if n.endswith(".md"))
            all_chunks += n_chunks
            _count(report.chunks_by_format, path, n_chunks)
            continue
        meta = None
        if sidecar is not None:
            meta, errors = read_doc_meta(*sidecar)
            report.problems.extend(errors)
        sigs[path] = sig
        jobs.append((path, data, meta, folders[path]))
    chunked = _chunk_docs(root, jobs, manifest.chunk, reembed, progress)
    for (path, _data, _meta, rel_folder), compared in zip(jobs, chunked, strict=True):
        if isinstance(compared, NcxError):
            report.problems.append(compared)
            continue
        if isinstance(compared, OSError):
            report.problems.append(_os_problem(root, path, compared))
            continue
        try:
            planned = _plan_doc(out, root / rel_folder, compared)
        except NcxError as exc:
            report.problems.append(exc)
            continue
        except OSError as exc:  # a chunk folder that is a file, a name the disk refuses, ...
            report.problems.append(_os_problem(root, path, exc))
            continue
        all_chunks += len(compared.names)
        _count(report.chunks_by_format, path, len(compared.names))
        pending.extend(planned)
        docs_state[path] = {"sig": sigs[path], "names": sorted(compared.names)}

    gone_folders = chunk_folders([*sources, *gone_scope])
    _remove_orphans(
        out,
        {folders[p] for p in sources},
        {gone_folders[p] for p in gone_scope if format_of(p) is not None} if paths else None,
        sources,
        gone_scope,
        docs_state,
    )
    pending.extend(_plan_memories(out, force=reembed))
    report.chunks = all_chunks

    if dry_run:
        # The vectors are computed (nothing is written) so the list is exactly what the real
        # run writes: a re-embedded unit whose vector comes out the same keeps its .npy and
        # `vec`. Without a usable model, every such unit is listed with both of its files.
        try:
            vectors: Any = model.get().embed([u.text for u in pending]) if pending else []
            _write_pending(out, pending, vectors)
        except NcxError:
            for u in pending:
                report.written.append(out.rel(u.md_path))
                report.written.append(out.rel(u.md_path[:-3] + ".npy"))
        report.written = sorted(set(report.written))
        report.removed = sorted(set(report.removed))
        return report
    if pending:
        embedder = model.get()  # loaded (or refused) before saying what it will do
        if progress:
            progress(f"embedding {len(pending)} units")
        vectors = embedder.embed([p.text for p in pending])
        _write_pending(out, pending, vectors)
        report.embedded = len(pending)
    if reembed or model.switched:
        manifest = replace(manifest, model=model.get().info.as_manifest())
        out.write(manifest_path(root), manifest.to_json().encode())
    _stamp(root, docs_state, folders)
    _save_state(root, manifest, state)
    report.written.sort()
    report.removed.sort()
    return report


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


@dataclass(frozen=True, slots=True)
class _Compared:
    """A doc's chunk files set against the files on disk (worked out in a worker process:
    only what must change travels back, not the 40,000 chunks of a synced tree)."""

    names: list[str]  # the chunk .md names, in chunk order
    pending: list[tuple[str, bytes, str]]  # (.md path, bytes without `vec`, text to embed)
    rewrites: list[tuple[str, bytes]]  # (.md path, bytes): metadata changed, vector kept


def _chunk_docs(
    root: Path,
    jobs: list[tuple[str, bytes, Any, str]],
    settings: Any,
    force: bool,
    progress: Callable[[str], None] | None,
) -> list[_Compared | NcxError | OSError]:
    """Chunk files of each (path, bytes, sidecar meta, folder), compared with the files on
    disk, in order; a doc that cannot be read yields its NcxError. Chunking and comparing
    are per doc and only read files, and they are most of a first sync or a full check, so
    a large tree spreads them over the CPUs."""
    from ncx.parallel import ordered_map

    def each(i: int) -> None:
        if progress and i and i % 200 == 0:
            progress(f"chunked {i}/{len(jobs)} docs")

    step = functools.partial(_chunk_doc, settings, str(root) + os.sep, force)
    return ordered_map(step, jobs, at_least=_PARALLEL_DOCS, each=each)


def _chunk_doc(
    settings: Any, top: str, force: bool, job: tuple[str, bytes, Any, str]
) -> _Compared | NcxError | OSError:
    path, data, meta, folder = job
    try:
        files = chunk_files(load_doc(path, data, meta), settings, folder=folder)
    except NcxError as exc:
        return exc
    try:
        return _compare(top, files, force)
    except OSError as exc:  # a chunk folder that is a file, ...
        return exc


def _compare(top: str, files: list[ChunkFile], force: bool) -> _Compared:
    """Which chunk files need a new vector, which only new metadata, which are right."""
    names, pending, rewrites = [], [], []
    for f in files:
        md = top + f.rel_path if os.sep == "/" else os.path.join(top, f.rel_path)
        names.append(f.rel_path.rpartition("/")[2])
        old = _read(md)
        npy = _read(md[:-3] + ".npy")
        if old is None or npy is None or force or has_markers(old):
            # A chunk with conflict markers gets a fresh vector: which side's .npy git kept
            # is not worth guessing.
            pending.append((md, f.data, f.embed_text))
            continue
        old, have = lf(old), blob_vec(npy)
        recorded = vec_of(old)
        if recorded == have and old == with_vec(f.data, have):
            continue
        # The .md's vec names another .npy (one side of a conflict each): embed again.
        # No vec at all is a tree from before vec existed: its vector is kept, once.
        if hash_of(old) == f.hash and recorded in (have, None):
            rewrites.append((md, with_vec(f.data, have)))  # metadata changed, text did not
            continue
        pending.append((md, f.data, f.embed_text))
    return _Compared(names, pending, rewrites)


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
            out[p] = full.read_bytes()
        except FileNotFoundError:
            continue  # tracked but deleted in the working tree: nothing to chunk
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
            out[p] = (sc, (root / sc).read_bytes())
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


def _signature(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _stats(folder: Path) -> dict[str, list[int]]:
    """{file name: [size, mtime_ns]} of the chunk files directly in a doc's folder."""
    out: dict[str, list[int]] = {}
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return out
    for e in entries:
        if e.name.endswith((".md", ".npy")) and e.is_file():
            st = e.stat()
            out[e.name] = [st.st_size, st.st_mtime_ns]
    return out


def _files_intact(folder: Path, files: Any) -> bool:
    return isinstance(files, dict) and _stats(folder) == files


def _stamp(root: Path, docs_state: dict[str, Any], folders: dict[str, str]) -> None:
    """Record the stat of each planned doc's files as this run left them."""
    for path, entry in docs_state.items():
        names = entry.pop("names", None)
        if names is None or path not in folders:
            continue
        files = _stats(root / folders[path])
        want = {n for name in names for n in (name, name[:-3] + ".npy")}
        # Only a complete, exact set is worth remembering; anything else is re-planned.
        entry["files"] = files if set(files) == want else None


def _plan_doc(out: _Out, folder: Path, compared: _Compared) -> list[_Pending]:
    """Write what needs no new vector; return what needs embedding; remove stale chunks."""
    root = out.root
    for md, data in compared.rewrites:
        out.write(md, data)
    pending = [
        _Pending(md, functools.partial(with_vec, data), text) for md, data, text in compared.pending
    ]
    keep = set(compared.names)
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        names = []
    for name in names:
        if is_temp(name):
            # Another process's atomic write in progress: only a dead one's is swept.
            if not out.dry and stale_temp(folder / name):
                check_write(root, folder / name)  # a linked folder: never sweep outside
                (folder / name).unlink(missing_ok=True)
            continue
        if (name.endswith(".md") and name not in keep) or (
            name.endswith(".npy") and name[:-4] + ".md" not in keep
        ):
            out.remove(folder / name)
    return pending


def _read(path: Path | str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _remove_orphans(
    out: _Out,
    live: set[str],
    gone_folders: set[str] | None,
    sources: Sequence[str],
    gone: set[str],
    docs_state: dict[str, Any],
) -> None:
    """Remove chunks of docs that are no longer sources (deleted, renamed, excluded).

    `live`: the chunk folders of current sources; `gone_folders`: for a run limited to some
    paths, the folders of those given paths that are no longer sources (None: whole tree)."""
    root = out.root
    base = chunks_dir(root)
    if not base.is_dir():
        return
    if gone_folders is not None:
        # A limited run only cleans up after the paths it was given.
        folders = {root / f for f in gone_folders}
        for p in gone:
            docs_state.pop(p, None)
    else:
        folders = set()
        for dirpath, _dirs, names in os.walk(base):
            rel = Path(dirpath).relative_to(root).as_posix()
            if rel not in live and any(n.endswith((".md", ".npy")) for n in names):
                folders.add(Path(dirpath))
        for p in list(docs_state):
            if p not in sources:
                docs_state.pop(p)
    for folder in sorted(folders):
        if not folder.is_dir():
            continue
        for name in sorted(os.listdir(folder)):
            if is_temp(name):
                continue  # swept by _plan_doc when stale; never another process's live file
            if name.endswith((".md", ".npy")) and (folder / name).is_file():
                out.remove(folder / name)


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
        ],
        sort_keys=True,
    )


def _load_state(root: Path, manifest: Manifest) -> dict[str, Any]:
    try:
        state = json.loads((cache_dir(root) / _STATE).read_text())
    except (OSError, ValueError):
        return {"key": _state_key(manifest), "docs": {}}
    if not isinstance(state, dict) or state.get("key") != _state_key(manifest):
        return {"key": _state_key(manifest), "docs": {}}
    return state


def _save_state(root: Path, manifest: Manifest, state: dict[str, Any]) -> None:
    state["key"] = _state_key(manifest)
    try:
        write_if_changed(cache_folder(root) / _STATE, json.dumps(state, sort_keys=True).encode())
    except (OSError, UnsafePath):
        pass  # the cache is an optimisation; a read-only tree still syncs correctly
