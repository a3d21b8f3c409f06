"""Reading docs and chunking them against the chunk files on disk, for ncx.tree.sync.

A doc is read from the working tree (or the index, for a staged sync), chunked, and its
chunk file compared with the one on disk: only what must change travels back from the
worker processes that do this on big trees.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ncx import repo
from ncx.config import Config
from ncx.errors import BadSource, NcxError
from ncx.paths import Links, ignored_targets, read_problem
from ncx.store import (
    NotRegular,
    has_markers,
    hash_of,
    inline_vec,
    is_written,
    lf,
    read_regular,
    split_chunk_file,
    usable_vec,
    vec_b64,
    with_inline_vec,
)
from ncx.tree.chunkfile import ChunkBlock, chunk_blocks, chunk_file_bytes, load_doc
from ncx.tree.noop import file_blob, file_stat, read_or_none
from ncx.tree.sidecar import sidecar_path

PARALLEL_DOCS = 200  # docs to chunk; below this, starting worker processes costs more
# A doc to chunk: (path, bytes, sidecar meta, chunk file, what its includes read).
Job = tuple[str, bytes, Any, str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Compared:
    """A doc's chunk file set against the one on disk (worked out in a worker process:
    only what must change travels back, not the 40,000 chunks of a synced tree)."""

    chunks: int
    # None: the file on disk is already right. Else each block with its vector, or None
    # where the vector must be computed (`missing`: (index, text hash, text to embed);
    # `bare`: the block without its `vec` line, by index).
    blocks: list[bytes | None] | None
    missing: list[tuple[int, bytes, str]]
    bare: dict[int, bytes]
    blob: str | None = None  # the file on disk's blob id (as LF), when it is right (file_blob)
    file: list[int] | None = None  # its stat, taken before it was read (file_stat)
    embedded: int = 0  # vectors computed where it was chunked (_chunk_and_embed)
    secrets: tuple[tuple[str, int, str], ...] = ()  # credentials redacted (file, line, kind)


def chunk_docs(
    root: Path,
    jobs: list[Job],
    settings: Any,
    force: bool,
    progress: Callable[[str], None] | None,
    model: tuple[str, str, str] | None = None,
) -> Iterator[Compared | NcxError | OSError]:
    """Chunk file of each (path, bytes, sidecar meta, chunk file), compared with the file on
    disk, in order; a doc that cannot be read yields its NcxError. Chunking and comparing
    are per doc and only read files, and they are most of a first sync or a full check, so
    a large tree spreads them over the CPUs; each result comes as soon as it is done.
    `model` (StaticEmbedder.worker_spec): the blocks that need a vector get it there too,
    docs taken in batches (an embed call of a few texts costs more per text)."""
    from ncx.parallel import ordered_imap, workers

    step = functools.partial(_chunk_doc, settings, str(root) + os.sep, force)  # (chunker, dim)
    if model is None:
        for i, got in enumerate(ordered_imap(step, jobs, at_least=PARALLEL_DOCS)):
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
    step: Callable[[Job], Compared | NcxError | OSError],
    model: tuple[str, str, str],
    batch: list[Job],
) -> list[Compared | NcxError | OSError]:
    """`step` (_chunk_doc) for each job, then every block left without a vector embedded, in
    one call for the batch."""
    from ncx.embedder import embed_share

    done = [step(job) for job in batch]
    texts = [t for c in done if isinstance(c, Compared) for _i, _h, t in c.missing]
    vectors: Any = embed_share(model, texts) if texts else []
    at = 0
    for k, c in enumerate(done):
        if isinstance(c, Compared) and c.missing:
            blocks: list[bytes | None] = [*filled(c, vectors[at : at + len(c.missing)])]
            at += len(c.missing)
            done[k] = replace(c, blocks=blocks, missing=[], bare={}, embedded=len(c.missing))
    return done


def filled(compared: Compared, vectors: Any) -> list[bytes]:
    """The blocks of a planned chunk file, each missing vector taken from `vectors` in turn."""
    fresh = {
        i: with_inline_vec(compared.bare[i], vec_b64(vec))
        for (i, _digest, _text), vec in zip(compared.missing, vectors, strict=True)
    }
    return [fresh[i] if b is None else b for i, b in enumerate(compared.blocks or [])]


def _chunk_doc(
    settings: tuple[Any, int], top: str, force: bool, job: Job
) -> Compared | NcxError | OSError:
    path, data, meta, rel_file, included = job
    chunker, dim = settings
    try:
        from ncx.tree import includefiles

        doc = load_doc(path, data, meta, includefiles.replay(included))
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
        st = file_stat(path)
        old = read_or_none(path)
    except OSError as exc:  # a chunk file that is a folder, ...
        return exc
    compared = _compare(old, blocks, force, dim, _format_1_vectors(path[:-3], blocks, force, dim))
    return replace(compared, file=st, secrets=doc.secrets)


def block_vectors(
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
        md = read_or_none(os.path.join(folder, b.name + ".md"))
        npy = read_or_none(os.path.join(folder, b.name + ".npy"))
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
) -> Compared:
    """Which blocks keep the vector the file on disk (or `have`: text hash -> base64
    vector) has for their text, which need one."""
    if old is not None and not force:
        # Most files of a full check or a first sync in a clone are right: each block on
        # disk is the block rendered here plus its vector, which takes no text hash, no
        # regex and no re-rendering of the file to see.
        if is_written(old, [b.data for b in blocks], dim):
            return Compared(len(blocks), None, [], {}, file_blob(old))
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
            have.update(block_vectors(split_chunk_file(old, path=""), dim))
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
            if old is None:
                return Compared(len(blocks), None, [], {})
            return Compared(len(blocks), None, [], {}, file_blob(old))
    return Compared(len(blocks), out, missing, bare)


def read_contents(
    root: Path, paths: Sequence[str], staged: bool, cfg: Config, problems: list[NcxError]
) -> dict[str, bytes]:
    if staged:
        small = []
        for p, size in repo.staged_sizes(root, paths).items():
            if size > cfg.max_doc_bytes:  # refused from its size alone, never read
                problems.append(_too_big(p, size, cfg))
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
            hint = (
                "put the file itself in the link's place, or exclude it (`ncx init --exclude PATH`)"
            )
            problems.append(BadSource(bad, path=p, hint=hint))
            continue
        try:
            size = full.stat().st_size
            if size > cfg.max_doc_bytes:
                problems.append(_too_big(p, size, cfg))
                continue
            out[p] = read_regular(full)
        except FileNotFoundError:
            continue  # tracked but deleted in the working tree: nothing to chunk
        except NotRegular:
            problems.append(
                BadSource(
                    "is not a regular file (a FIFO, socket or device); skipped",
                    path=p,
                    hint=f"put the doc back (`git checkout -- {p}`) or `git rm --cached {p}`",
                )
            )
        except OSError as exc:
            problems.append(
                BadSource(f"cannot be read: {exc.strerror}", path=p, hint="check its permissions")
            )
    return out


def read_sidecars(
    root: Path, paths: Sequence[str], tracked: Container[str], staged: bool
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
