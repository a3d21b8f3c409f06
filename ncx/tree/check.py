"""check: verify a .neocortex tree without writing anything but sync's state in the untracked
cache (what it found right: an accelerator, stat-checked by the next run).

Each problem is one line: the file, what is wrong, and the fix. Used by `ncx check`
and by the `ncx-check` pre-commit hook in CI.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ncx.config import Config
from ncx.errors import NcxError
from ncx.layout import MANIFEST, MEMORIES, NCX_DIR, chunks_dir, memories_dir
from ncx.manifest import load_manifest, older_format
from ncx.store import (
    decode_source,
    has_markers,
    npy_headers,
    open_regular,
    parse_frontmatter,
    read_chunk_file,
    read_regular,
    read_unit,
    split_chunk_file,
)
from ncx.tree.sync import sync


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    message: str
    syncable: bool = False  # a plain `ncx sync` makes it right (a stale unit)
    doc: str | None = None  # the doc a stale chunk file follows, where one is found

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def check_tree(root: Path, cfg: Config) -> list[Problem]:
    """Every problem of the working tree's .neocortex/: the full check, for CI.

    Chunk files are judged by comparing their bytes with what `ncx sync` would write (its
    dry run); only a file that differs is parsed, to say why, and the vectors of the others
    are checked, except in a chunk file that is as the last sync left it (stat-checked).
    Memories are parsed (schema, secrets), and their .npy read for header and values.
    """
    manifest = load_manifest(root)
    dim = int(manifest.model.get("dim", 0))
    problems = [*_model_problems(cfg, manifest.model), *tracked_cache_problems(root)]
    if (older := older_format(manifest)) is not None:
        return [*problems, Problem(f"{NCX_DIR}/{MANIFEST}", older)]
    report = sync(root, cfg, dry_run=True)
    stale = sorted({_unit_of(p) for p in report.written + report.removed})
    stale_set = set(stale)
    base = len(str(root)) + 1
    chunk_files = _walk(chunks_dir(root))[0]
    # Plain strings, not Paths, in these per-file loops: on a 40,000-chunk tree pathlib's
    # parsing was a second of a full check.
    for md_s in chunk_files:
        rel = md_s[base:].replace(os.sep, "/")
        if rel in stale_set or rel in report.intact:
            # A stale file is named below. An intact one is the very file (size, mtime)
            # that sync last wrote or verified, or one the dry run just found right (its
            # vectors were read there): reading them again is not needed.
            continue
        try:
            data = read_chunk_file(md_s)
            blocks = split_chunk_file(data, path=md_s)
        except NcxError as exc:
            problems.append(Problem(rel, f"{exc.message}; {exc.hint or 'run `ncx sync`'}"))
            continue
        problems.extend(chunk_secret_problems(rel, data))
        problems.extend(
            Problem(rel, f"{why}; run `ncx sync`") for why in _vector_problems(blocks, dim)
        )
    problems.extend(
        _foreign_problems(root, cfg, manifest.model, dim, chunk_files, known=report.blobs)
    )
    mds, npys = _walk(memories_dir(root))
    for md_s in mds:
        rel = md_s[base:].replace(os.sep, "/")
        md = Path(md_s)
        try:
            meta, _ = read_unit(md)
        except NcxError as exc:
            if has_markers(read_regular(md)):
                # (a merge of two sides' `vec:` lines: markers, not a YAML error to fix)
                problems.append(Problem(rel, _MARKED))
            else:
                problems.append(Problem(rel, f"{exc.message}; {exc.hint or 'fix or delete it'}"))
            continue
        problems.extend(_memory_problems(md, rel, meta))
        problems.extend(_retrieval_problems(root, md, rel, "memory", dim))
        npy = md_s[:-3] + ".npy"
        if npy not in npys:
            problems.append(Problem(rel, "has no .npy vector beside it; run `ncx sync`"))
        elif bad := npy_problem(npy, dim):
            problems.append(Problem(rel[:-3] + ".npy", bad))
    md_set = set(mds)
    for npy in sorted(npys):
        if npy[:-4] + ".md" not in md_set and not os.path.exists(npy[:-4] + ".md"):
            problems.append(
                Problem(npy[base:].replace(os.sep, "/"), "vector without a .md; run `ncx sync`")
            )
    for err in report.problems:
        problems.append(Problem(err.path or "?", f"{err.message}; {err.hint or ''}".rstrip("; ")))
    for path in stale:
        why = _why_stale(root, path, dim)
        problems.append(Problem(path, why, why == _STALE, _doc_of(root, path)))
        if not path.startswith(f"{NCX_DIR}/{MEMORIES}/"):
            with contextlib.suppress(OSError):
                problems.extend(chunk_secret_problems(path, read_regular(root / path)))
    return problems


def _doc_of(root: Path, rel: str) -> str | None:
    """The doc in the working tree whose chunk file `rel` is, when exactly one is (so a
    fix can name it); None for a memory or a chunk file no doc owns."""
    from ncx.layout import doc_chunk_file
    from ncx.tree.staged import docs_of_chunk_file

    found = [
        d for d in docs_of_chunk_file(rel) if os.path.isfile(root / d) and doc_chunk_file(d) == rel
    ]
    return found[0] if len(found) == 1 else None


def tracked_cache_problems(root: Path) -> list[Problem]:
    """Files git tracks under `.neocortex/cache/` (forced in with `git add -f`): the cache is
    derived and untracked, and what is committed there is checked out in every clone, a link
    included (ncx refuses to write through one: ncx.paths.cache_folder)."""
    from ncx import repo

    cache = f"{NCX_DIR}/cache"
    tracked = repo.tracked_files(root, [f":(literal){cache}"])
    fix = f"run `git rm -r --cached {cache}` and commit (ncx rebuilds the cache itself)"
    out = [
        Problem(p, f"is tracked by git, but {cache}/ is ncx's untracked cache; {fix}")
        for p in tracked[:10]
    ]
    if len(tracked) > 10:
        out.append(Problem(f"{cache}/", f"{len(tracked) - 10} more tracked files; {fix}"))
    return out


def chunk_secret_problems(rel: str, data: bytes) -> list[Problem]:
    """A credential in a chunk file: committed, and served to agents. `ncx sync` writes none
    (a doc's are redacted), so one here came from an older ncx or a hand edit. (Files as
    the last sync left them are not read: they hold what sync wrote.)"""
    from ncx.secrets import find_secrets

    return [
        Problem(
            f"{rel}:{f.line}:{f.column}",
            f"{f.reason} A chunk file is committed and served to agents: run `ncx sync` "
            "(it redacts credentials), remove it from the doc and rotate the credential.",
        )
        for f in find_secrets(data.decode("utf-8", "replace"))
    ]


def _vector_problems(blocks: list[bytes], dim: int) -> list[str]:
    """What is wrong with the vectors of a chunk file's blocks: each must carry `dim` finite
    float16 values (`ncx sync` embeds such a block again)."""
    import numpy as np

    from ncx.store import decode_vec, inline_vec

    out = []
    for i, block in enumerate(blocks):
        b64 = inline_vec(block)
        vec = None if b64 is None else decode_vec(b64, dim)
        if vec is None:
            out.append(f"chunk {i + 1} has no vector of {dim} values")
        elif not np.isfinite(vec).all():
            out.append(f"chunk {i + 1} holds NaN or infinite values")
    return out


def _why_stale(root: Path, rel: str, dim: int) -> str:
    """Why a unit differs from what sync would write: markers, broken YAML, or just stale."""
    fix = "run `ncx sync`"
    try:
        data = read_regular(root / rel)
    except OSError:
        return _STALE
    if has_markers(data) and rel.startswith(f"{NCX_DIR}/{MEMORIES}/"):
        return _MARKED
    if has_markers(data):
        return f"has merge-conflict markers; {fix}"
    if rel.endswith(".npy"):  # a memory's is named by its .md (_unit_of)
        return f"is a vector of the older one-file-per-chunk format; {fix} (it removes it)"
    if not rel.startswith(f"{NCX_DIR}/{MEMORIES}/"):
        try:
            found = _vector_problems(split_chunk_file(data, path=rel), dim)
        except NcxError as exc:
            return f"{exc.message}; {exc.hint or fix}"
        if found:
            return "; ".join(found) + f"; {fix}"
        return _STALE
    try:
        read_unit(root / rel)
    except NcxError as exc:
        return f"{exc.message}; {exc.hint or 'fix or delete it'}"
    return _STALE


_STALE = "stale: differs from what `ncx sync` would write; run `ncx sync`"
_MARKED = (
    "has merge-conflict markers: resolve them by hand, then `ncx sync` (`ncx sync --reembed` "
    "after a merge of two branches that switched models)"
)


def _foreign_problems(
    root: Path,
    cfg: Config,
    model: dict[str, Any],
    dim: int,
    files: list[str],
    *,
    known: dict[str, str],
) -> list[Problem]:
    """Chunk files whose vectors another model made (ncx.tree.attribution), each sampled.
    `known`: chunk files whose bytes sync vouched for ({file: its blob id}): each is judged
    by that id, the others by their stat."""
    from ncx.embedder import load_tree_model
    from ncx.tree.attribution import foreign_files, foreign_message

    if not files:
        return []
    # Files sampled right before and unchanged since (same stat, same manifest model) are
    # not read again: sampling every chunk file was most of a no-op check (100,000 files:
    # 13 s of 22 s under a profiler). A merge that brings another model's vectors changes
    # the files it brings, or the manifest's model.
    key = json.dumps(model, sort_keys=True)
    judged = _judged(root, key)
    stats: dict[str, list[int] | str] = {}
    base = len(str(root)) + 1
    todo = []
    for f in files:
        rel = f[base:].replace(os.sep, "/")
        ident: list[int] | str | None = known.get(rel)
        if ident is None:
            # (A file sync vouched for by its blob id needs no stat: 100,000 of them were
            # 0.5 s of a no-op check.)
            try:
                st = os.stat(f)
            except OSError:
                continue  # named by the loop over chunk files
            ident = [st.st_size, st.st_mtime_ns, st.st_ino]
        stats[rel] = ident
        if judged.get(rel) != ident:
            todo.append((rel, f))
    if not todo:
        return []
    try:
        embedder = load_tree_model(root, model, None, cfg.model_cache, check_sha=False)
    except NcxError:
        return []  # the model does not load here: _model_problems says so
    data = {}
    for rel, f in todo:
        try:
            data[rel] = read_chunk_file(f)
        except (OSError, NcxError):
            continue  # named by the loop over chunk files
    foreign = foreign_files(data, embedder, dim)
    bad = {rel for rel, _doc in foreign}
    kept = {rel: st for rel, st in judged.items() if rel in stats}
    kept.update({rel: stats[rel] for rel in data if rel not in bad})
    _save_judged(root, key, kept)
    return [Problem(rel, foreign_message(doc)) for rel, doc in foreign]


_JUDGED = "attribution.json"  # in cache/: chunk files sampled as the manifest model's


def _judged(root: Path, key: str) -> dict[str, list[int] | str]:
    from ncx.paths import UnsafePath, read_cache

    try:
        got = json.loads(read_cache(root, _JUDGED))
    except (OSError, ValueError, UnsafePath):
        return {}
    if not isinstance(got, dict) or got.get("model") != key:
        return {}
    files = got.get("files")
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(v, list | str)}


def _save_judged(root: Path, key: str, files: dict[str, list[int] | str]) -> None:
    from ncx.paths import UnsafePath, cache_file
    from ncx.store import write_if_changed

    data = json.dumps({"model": key, "files": files}, sort_keys=True).encode()
    with contextlib.suppress(OSError, UnsafePath):  # an accelerator: a read-only tree judges all
        path = cache_file(root, _JUDGED)
        if path.parent.parent.is_dir():
            path.parent.mkdir(exist_ok=True)
            write_if_changed(path, data, follow=False)


def _model_problems(cfg: Config, model: dict[str, Any]) -> list[Problem]:
    """The tree's model must be loadable here, or nobody can query the tree."""
    from ncx.embedder import tree_model_id, unavailable

    model_id, origin = tree_model_id(None, model)
    err = unavailable(model_id, cache_root=cfg.model_cache, named_in=origin)
    return [Problem(origin, f"{err.message}; {err.hint}")] if err else []


def _memory_problems(md: Path, rel: str, meta: dict[str, Any]) -> list[Problem]:
    """Schema problems, and credentials a hand edit put in (with their line in the file)."""
    from ncx.memory.file import memory_problems
    from ncx.secrets import find_secrets

    text = decode_source(read_regular(md), path=rel)
    _, body, _ = parse_frontmatter(text, path=rel)
    out = [Problem(rel, msg) for msg in memory_problems(meta, body, md.stem)]
    out.extend(
        Problem(
            f"{rel}:{f.line}:{f.column}",
            f"{f.reason} Secrets never belong in memories: remove it and rotate the credential.",
        )
        for f in find_secrets(text)
    )
    return out


_CONFLICT = re.compile(r"^(?:<{7}|>{7})(?: |$)", re.MULTILINE)


def _retrieval_problems(root: Path, md: Path, rel: str, kind: str, dim: int) -> list[Problem]:
    """What retrieval would skip or serve wrongly: merge-conflict markers, field types."""
    from ncx.query.build import _unit_fields

    out = []
    meta, body = read_unit(md)
    if _CONFLICT.search(body):
        out.append(
            Problem(rel, "holds merge-conflict markers (<<<<<<< / >>>>>>>); resolve the merge")
        )
    try:
        _unit_fields(rel, kind, meta, body, None)
    except (ValueError, TypeError, OverflowError) as exc:
        out.append(
            Problem(rel, f"retrieval skips it: a frontmatter value has the wrong type ({exc})")
        )
    return out


def _unit_of(path: str) -> str:
    """A memory's .npy is named by its .md; every other path by itself."""
    memory = path.startswith(f"{NCX_DIR}/{MEMORIES}/")
    return path[:-4] + ".md" if memory and path.endswith(".npy") else path


def _walk(folder: Path) -> tuple[list[str], set[str]]:
    """The .md files (sorted) and the .npy files under `folder`, in one walk, as paths."""
    mds: list[str] = []
    npys: set[str] = set()
    for dirpath, dirs, names in os.walk(folder):
        dirs.sort()
        for n in sorted(names):
            if n.endswith(".md"):
                mds.append(os.path.join(dirpath, n))
            elif n.endswith(".npy"):
                npys.add(os.path.join(dirpath, n))
    return mds, npys


def npy_problem(npy: Path | str, dim: int) -> str | None:
    """Check a .npy: 1-D float16/float32 of the model's dim, whole, finite values only."""
    try:
        with open_regular(npy) as f:
            # Enough for any header and a float32 vector, and one byte more to see a tail.
            data = f.read(max(256, max(n for _, n in npy_headers(dim).values()) + 1))
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    for header, (descr, size) in npy_headers(dim).items():
        if data.startswith(header):
            if len(data) != size:
                return "is truncated or has trailing bytes; delete it and run `ncx sync`"
            return _finite_problem(data, descr, len(header), dim)
    return _npy_header_problem(Path(npy), data[:256], dim)


def _npy_header_problem(npy: Path, head: bytes, dim: int) -> str | None:
    """npy_problem for a header other than numpy's own for the model's vectors."""
    if not head.startswith(b"\x93NUMPY") or len(head) < 10:
        return "is not a .npy array; run `ncx sync` to rebuild it"
    major = head[6]
    size_len = 2 if major == 1 else 4
    hlen = int.from_bytes(head[8 : 8 + size_len], "little")
    try:
        header = ast.literal_eval(head[8 + size_len : 8 + size_len + hlen].decode("latin1"))
        shape, descr = tuple(header["shape"]), str(header["descr"])
    except (ValueError, SyntaxError, KeyError, TypeError):
        return "has a damaged .npy header; run `ncx sync --reembed`"
    if descr not in ("<f2", "<f4"):
        return f"has dtype {descr}, expected float16; run `ncx sync --reembed`"
    if shape != (dim,):
        return f"has shape {shape}, but the model has dim {dim}; run `ncx sync --reembed`"
    try:
        data = read_regular(npy)
    except OSError:
        return "is truncated or has trailing bytes; delete it and run `ncx sync`"
    return _finite_problem(data, descr, 8 + size_len + hlen, dim)


def _finite_problem(data: bytes, descr: str, offset: int, dim: int) -> str | None:
    import numpy as np

    try:
        vec = np.frombuffer(data, dtype=descr, offset=offset)
    except ValueError:
        vec = None
    if vec is None or vec.shape != (dim,):
        return "is truncated or has trailing bytes; delete it and run `ncx sync`"
    if not np.isfinite(vec).all():
        return "holds NaN or infinite values; delete it and run `ncx sync`"
    return None
