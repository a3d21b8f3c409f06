"""sync: bring .neocortex/ in line with the sources and memories, incrementally.

sources (git-tracked docs) -> chunkfile.chunk_blocks -> embedder -> one chunk file per doc
(its chunks' blocks, vectors inline); memories -> embedder -> .md + .npy each.
Only chunks whose text changed are re-embedded (content hash); files whose bytes would
not change are not touched, so a second run writes nothing. Per-document problems are
collected and the rest of the run continues; a broken doc keeps its existing chunks.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ncx import repo
from ncx.config import Config
from ncx.embedder import Embedder, StaticEmbedder, check_tree_model, load_tree_model, model_mismatch
from ncx.errors import BadSource, NcxError, Unreadable
from ncx.layout import (
    FORMAT_VERSION,
    chunk_file_paths,
    chunks_dir,
    doc_chunk_dir,
    manifest_path,
)
from ncx.locks import exclusive
from ncx.manifest import Manifest, load_manifest
from ncx.paths import lexical_rel, rel_problem
from ncx.sources import format_of, list_sources
from ncx.store import (
    lf,
    with_inline_vec,
)
from ncx.tree import compare
from ncx.tree.compare import (
    Compared,
    Job,
    chunk_docs,
    filled,
    is_lfs_pointer,
    read_contents,
    read_sidecars,
)
from ncx.tree.noop import (
    NO_FILE,
    Touched,
    file_blob,
    file_stat,
    listing,
    load_state,
    read_or_none,
    same_file,
    save_state,
    signature,
    submodules,
    unread_docs,
    verified_blobs,
    with_blobs,
)
from ncx.tree.sidecar import read_doc_meta
from ncx.tree.sync_write import (
    SyncReport as SyncReport,  # (the report's home is sync_write; callers import it here)
)
from ncx.tree.sync_write import (
    _os_problem,
    _Out,
    _plan_memories,
    _remove_orphans,
    _write_chunk_file,
    _write_pending,
)

Progress = Callable[[str], None]
# What a file whose name ncx refuses needs, so every later run stops naming it.
_EXCLUDE = "rename it, or exclude it (`ncx init --exclude PATH`)"


def secret_warnings(report: SyncReport) -> list[str]:
    """One line per credential found in a doc or sidecar: where it is, and what to do."""
    out = []
    for path, line, kind in sorted(set(report.secrets)):
        what = kind.replace("_", " ")
        article = "an" if what[:1].lower() in "aeiou" else "a"
        out.append(
            f"ncx: warning: {path}:{line}: holds what looks like {article} {what}; its chunks "
            f"carry [REDACTED {what}] instead: remove it from the file and rotate the credential"
        )
    return out


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
    with a `memory add` or `evolve` in another process. Then the memories' stale citations
    are stored for the read side (ncx.memory.stale)."""
    with contextlib.nullcontext() if dry_run else exclusive(root):
        report = _sync(
            root,
            cfg,
            paths=paths,
            staged=staged,
            reembed=reembed,
            dry_run=dry_run,
            embedder=embedder,
            progress=progress,
        )
        if not dry_run:
            # the memories' staleness, worked out here so that a frame reads it (stale.py)
            from ncx.memory.stale import refresh

            refresh(root)
        return report


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
    # git's stat check of the work tree and its untracked files, while Python lists.
    modified = None if staged or reembed else repo.modified_files_later(root)
    untracked = None if staged else repo.untracked_files_later(root)

    # The index's blob id of every tracked file: a doc the working tree holds as the index
    # does (git's own stat check, `modified_files`), with the blob id the state recorded
    # for it, is known unchanged without reading it (see `unread_docs`).
    blobs = repo.index_blobs(root)
    tracked = sorted(blobs)
    listed = listing(manifest, tracked)
    sources = []
    odd: list[str] = []  # the sources whose names ncx refuses
    for p in listed.sources:
        if rel_problem(p) is None:
            sources.append(p)
        else:
            odd.append(p)
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
            # (A file docs included, since moved or untracked, names the docs it was in.)
            if _names_nothing(root, w, in_scope, tracked) and not (
                via and _inc().docs_including(root, [w])
            ):
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
    # One odd name is reported, and the rest of the tree keeps syncing; by a run that names
    # paths, only where it is one of them (`ncx sync docs/guide.md` failed for another doc).
    for p in odd:
        if (
            not paths
            or p in wanted
            or any(w == "." or p.startswith(w.rstrip("/") + "/") for w in wanted)
        ):
            why = rel_problem(p)
            report.problems.append(BadSource(f"{why}; skipped", path=p[:200], hint=_EXCLUDE))
    report.docs = len(in_scope)
    names = listed.formats
    for p in in_scope:
        report.by_format[names[p]] = report.by_format.get(names[p], 0) + 1
    report.skipped = listed.skipped + submodules(root)
    if untracked is not None:
        # Never silent: a doc written but not yet `git add`ed is not a source (the commit
        # would not hold it); say so, rather than "up to date".
        report.skipped += [
            (p, "not tracked by git yet: `git add` it to index it")
            for p in list_sources(root, manifest, tracked=untracked())
        ]

    state = load_state(root, manifest) if not reembed else {}
    docs_state = state["docs"] = Touched(state.get("docs") or {})
    if folders := [w for w in gone_scope if format_of(w) is None]:
        # A folder given (`ncx sync docs/`): the docs it held that are sources no more
        # (deleted, moved away) go as a doc named by its path does. (From the state: a
        # clone that never synced them has them swept by a sync of the whole tree.)
        current = set(sources)
        gone_scope |= {
            p
            for p in docs_state
            if p not in current
            and any(w == "." or p.startswith(w.rstrip("/") + "/") for w in folders)
        }
    differ = None if modified is None else modified()  # (waited for: no git left behind)
    unread = (
        set()
        if differ is None or not docs_state
        else unread_docs(root, in_scope, blobs, differ, docs_state, files_of)
    )
    to_read = [p for p in in_scope if p not in unread] if unread else in_scope
    contents = read_contents(root, to_read, staged, cfg, report.problems)
    for p in [p for p, data in contents.items() if is_lfs_pointer(data)]:
        # A Git LFS pointer (the content was not fetched, or is fetched only on demand): its
        # three lines of oid and size are no knowledge. Not indexed, not counted as a doc,
        # and said so.
        del contents[p]
        report.docs -= 1
        report.by_format[names[p]] -= 1
        if not report.by_format[names[p]]:
            del report.by_format[names[p]]
        report.skipped.append(
            (p, "a Git LFS pointer, not the file's content: `git lfs pull` to index it")
        )
    sidecars = read_sidecars(root, to_read, blobs, staged)  # (blobs: the tracked paths)
    all_chunks = 0
    # Which docs need chunking (the state file's word is checked against the chunk file),
    # then chunk them all (in worker processes when there are many), then plan the writes.
    jobs: list[Job] = []
    sigs: dict[str, str] = {}
    # Files the docs include, read through the gate (tracked, inside the repository).
    gate = _Gate(root, blobs, staged)
    incs: dict[str, dict[str, Any]] = {}
    verified: dict[str, tuple[str | None, str | None]] = {}  # doc -> (blob, sidecar blob)
    vouched, known, per_format = report.intact, report.blobs, report.chunks_by_format
    for path in in_scope:
        if path in unread:  # (the whole of a no-op: 100,000 times, so locals only)
            entry = docs_state[path]
            if found := entry.get("secrets"):
                report.secrets.extend((str(f), int(n), str(k)) for f, n, k in found)
            n = int(entry.get("chunks", 0))
            rel_file = files_of[path]
            vouched[rel_file] = n
            if (fblob := entry.get("fblob")) is not None:
                known[rel_file] = fblob
            all_chunks += n
            name = names[path]
            per_format[name] = per_format.get(name, 0) + n
            continue
        data = contents.get(path)
        if data is None:
            continue
        sidecar = sidecars.get(path)
        if not staged:
            verified[path] = verified_blobs(path, data, sidecar, blobs)
        # A doc's sidecar is part of its identity: editing it rewrites the chunks' metadata.
        # CRLF is read as LF (store.decode_source), so a core.autocrlf clone's doc has the
        # LF clone's signature and can take a record made there (a CI cache).
        sig = signature(lf(data) if sidecar is None else lf(data) + b"\0" + sidecar[1])
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
                now = file_stat(root / files_of[path])
                intact = same_file(now, prev["file"]) or (
                    now is not None
                    and prev.get("fblob") is not None
                    and file_blob(read_or_none(root / files_of[path]) or b"") == prev["fblob"]
                )
                if intact and not same_file(now, prev["file"]):
                    docs_state[path] = prev = {**prev, "file": now}
                if intact and path in verified:
                    docs_state[path] = with_blobs(prev, verified[path])
        except OSError as exc:
            report.problems.append(_os_problem(root, path, exc))
            continue
        if intact:
            report.secrets.extend((str(f), int(n), str(k)) for f, n, k in prev.get("secrets", ()))
            report.intact[files_of[path]] = int(prev.get("chunks", 0))
            if (fblob := prev.get("fblob")) is not None:
                report.blobs[files_of[path]] = fblob
            all_chunks += int(prev.get("chunks", 0))
            _count(report.chunks_by_format, names[path], int(prev.get("chunks", 0)))
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
    if not dry_run and len(jobs) >= compare.PARALLEL_DOCS and (reembed or _no_chunk_file(root)):
        loaded = model.get()
        if isinstance(loaded, StaticEmbedder):  # (a model handed in may not load elsewhere)
            spec = loaded.worker_spec()
    chunked = chunk_docs(root, jobs, (manifest.chunk, dim), reembed, progress, spec)
    planned: list[tuple[str, Compared]] = []
    written_by: dict[str, str] = {}  # a planned chunk file -> its doc
    for (path, _data, _meta, rel_file, _incl), compared in zip(jobs, chunked, strict=True):
        if isinstance(compared, Unreadable) and not paths and not staged:
            # Bytes that are not text (sphinx's deliberately undecodable test doc): a run of
            # the whole tree lists it as not indexed and passes; the run that changed it
            # (the commit hook, `ncx sync` naming it) fails on it (decisions.md §43).
            hint = f"; {compared.hint}" if compared.hint else ""
            report.skipped.append((path, f"{compared.message}: not indexed{hint}"))
            continue
        if isinstance(compared, NcxError):
            report.problems.append(compared)
            continue
        if isinstance(compared, OSError):
            report.problems.append(_os_problem(root, path, compared))
            continue
        all_chunks += compared.chunks
        report.embedded += compared.embedded
        _count(report.chunks_by_format, names[path], compared.chunks)
        docs_state[path] = {
            "sig": sigs[path],
            "chunks": compared.chunks,
            # A file found right: its stat from before it was read (a checkout landing while
            # this run embeds must not be recorded as the file it read). A planned one's is
            # set once it is written; until then None, which no run takes as intact.
            "file": _found_file(compared) if compared.blocks is None else None,
            **({"fblob": compared.blob} if compared.blocks is None and compared.blob else {}),
            **({"secrets": [list(x) for x in compared.secrets]} if compared.secrets else {}),
            **({"inc": _inc().recorded(incs[path])} if incs.get(path) else {}),
        }
        report.secrets.extend(compared.secrets)
        if path in verified and sigs[path]:
            docs_state[path] = with_blobs(docs_state[path], verified[path])
        if compared.blocks is not None and spec is not None:
            # Embedded where it was chunked: written now, while the workers go on.
            _write_chunk_file(
                out,
                rel_file,
                filled(compared, []),
                docs_state[path],
                stale=reembed or model.switched,
            )
        elif compared.blocks is not None:
            planned.append((rel_file, compared))
            written_by[rel_file] = path
        else:
            report.intact[rel_file] = compared.chunks
            if compared.blob is not None:
                report.blobs[rel_file] = compared.blob

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
            save_state(root, manifest, state, docs_state.touched)
            if docs_state.touched:
                _inc().save_included_by(root, docs_state, whole=not paths, gone=gone_scope)
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
        blocks = filled(compared, vectors[at : at + len(compared.missing)])
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
        _inc().save_included_by(root, docs_state, whole=not paths, gone=gone_scope)
    save_state(root, manifest, state, docs_state.touched or report.changed)
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


def _found_file(compared: Compared) -> list[int] | None:
    """What a doc's state records of the chunk file a run found right (nothing to write):
    its stat, or NO_FILE where the doc gives no chunk and there is none."""
    if compared.file is None and compared.chunks == 0:
        return NO_FILE
    return compared.file


def _no_chunk_file(root: Path) -> bool:
    """Whether the tree has no chunk file yet (`ncx init` leaves only a .gitkeep): a first
    sync."""
    try:
        with os.scandir(chunks_dir(root)) as entries:
            return all(e.name == ".gitkeep" for e in entries)
    except FileNotFoundError:
        return True


def _apply_settings(root: Path, manifest: Manifest, cfg: Config, out: _Out) -> Manifest:
    """A chunk setting given in the environment becomes the tree's setting (and rechunks)."""
    if cfg.chunk is not None and cfg.chunk != manifest.chunk:
        manifest = manifest.with_chunk(cfg.chunk)
        out.write(manifest_path(root), manifest.to_json().encode())
    return manifest


def _count(counts: dict[str, int], name: str, n: int) -> None:
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
