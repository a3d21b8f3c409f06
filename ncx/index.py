"""index: the derived, untracked cache under .neocortex/cache/ — vectors, BM25F arrays,
unit metadata and each chunk's current line range in its source.

Rebuilt when a cheap signature changes (mtimes of chunk folders, memory files, sources
and the manifest), under a lock, written to a temp file and renamed into place, so two
ncx processes never see a half-written cache. A missing or corrupt cache is rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.docs import embed_text_for
from ncx.errors import NcxError
from ncx.layout import cache_dir, chunks_dir, manifest_path, memories_dir
from ncx.lexical import LexIndex, build_index, path_words, split_code
from ncx.memories import body_sections
from ncx.store import read_unit, split_frontmatter

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

CACHE_VERSION = 2
_FILE = "index.npz"


@dataclass(frozen=True)
class Index:
    units: list[dict[str, Any]]  # metadata per unit, in the order of the arrays
    vectors: NDArray[np.float32]  # (n, dim), unit rows (zero rows for units with no vector)
    lex: LexIndex
    group: NDArray[np.int32]  # units of the same source doc share a group; memories are alone
    root: Path
    memo: dict[Any, Any] = field(default_factory=dict)  # per-process derived values (masks)

    def body(self, i: int) -> str:
        """The unit's markdown body, read from its file (only top results need it)."""
        try:
            text = (self.root / self.units[i]["file"]).read_bytes().decode("utf-8", "replace")
        except OSError:
            return ""
        # No YAML parse on the query path: only the text after the frontmatter is wanted.
        return split_frontmatter(text.replace("\r\n", "\n"))[1].strip()


def load_index(root: Path, *, rebuild: bool = False) -> Index:
    """The current cache, rebuilt first if stale, missing or corrupt."""
    path = cache_dir(root) / _FILE
    if not rebuild:
        idx = _try_load(root, path)
        if idx is not None:
            return idx
    with _lock(cache_dir(root)):
        if not rebuild:  # another process may have rebuilt it while we waited
            idx = _try_load(root, path)
            if idx is not None:
                return idx
        data = _build(root)
        buf = io.BytesIO()
        import numpy as np

        np.savez(buf, **data)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(buf.getvalue())
        os.replace(tmp, path)
    idx = _try_load(root, path, check=False)
    assert idx is not None
    return idx


@contextlib.contextmanager
def _lock(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as f:
        try:
            import fcntl

            fcntl.flock(f, fcntl.LOCK_EX)
        except ImportError:  # Windows: no flock; the atomic rename still protects readers
            pass
        yield


def _try_load(root: Path, path: Path, *, check: bool = True) -> Index | None:
    import numpy as np

    try:
        z = np.load(path, allow_pickle=False)
        meta = json.loads(bytes(z["meta"]).decode())
        if meta.get("version") != CACHE_VERSION:
            return None
        if check and meta.get("signature") != signature(root, meta["sources"], meta["dirs"]):
            return None
        vocab_terms = bytes(z["vocab"]).decode().split("\n") if len(z["vocab"]) else []
        lex = LexIndex(
            vocab={t: i for i, t in enumerate(vocab_terms)},
            indptr=z["indptr"],
            indices=z["indices"],
            data=z["data"],
            idf=z["idf"],
            n_units=len(meta["units"]),
        )
        return Index(meta["units"], z["vectors"].astype(np.float32), lex, z["group"], root)
    except (OSError, ValueError, KeyError, EOFError):
        return None  # missing or corrupt: rebuilt by the caller
    except Exception:  # zipfile.BadZipFile and friends from a torn file
        return None


def chunk_dirs(root: Path) -> list[str]:
    """Every folder under chunks/, repo-relative (listing them is the expensive part)."""
    out = []
    for dirpath, dirs, _names in os.walk(chunks_dir(root)):
        dirs.sort()
        out.append(Path(dirpath).relative_to(root).as_posix())
    return out


def signature(root: Path, sources: list[str], dirs: list[str]) -> str:
    """Cheap staleness check from stat() alone, no directory listing.

    ncx writes by rename, so any unit added, replaced or removed bumps its folder's mtime,
    and a new folder bumps its parent's; `dirs` are the folders seen at build time.
    """
    h = hashlib.sha1()
    h.update(_stat(manifest_path(root)))
    for d in dirs:
        h.update(d.encode() + _stat(root / d))
    mem = memories_dir(root)
    if mem.is_dir():
        for name in sorted(os.listdir(mem)):
            h.update(name.encode() + _stat(mem / name))
    for s in sources:
        h.update(s.encode() + _stat(root / s))
    return h.hexdigest()


def _stat(p: Path) -> bytes:
    try:
        st = p.stat()
    except OSError:
        return b"-"
    return f"{st.st_mtime_ns}:{st.st_size}".encode()


def _read_vector(npy: Path) -> bytes | None:
    try:
        return npy.read_bytes()
    except OSError:
        return None


def _build(root: Path) -> dict[str, Any]:
    import numpy as np

    from ncx.manifest import load_manifest

    manifest = load_manifest(root)
    dim = int(manifest.model.get("dim", 0))
    units: list[dict[str, Any]] = []
    fields: list[dict[str, str]] = []
    vec_rows: list[Any] = []
    group: list[int] = []
    groups: dict[str, int] = {}
    titles: dict[str, str] = {}

    files: list[tuple[Path, str]] = []
    for dirpath, dirs, names in os.walk(chunks_dir(root)):
        dirs.sort()
        files.extend((Path(dirpath) / n, "chunk") for n in sorted(names) if n.endswith(".md"))
    mem = memories_dir(root)
    if mem.is_dir():
        files.extend((p, "memory") for p in sorted(mem.glob("*.md")))

    for md, kind in files:
        try:
            meta, body = read_unit(md)
        except NcxError:
            continue  # `ncx check` reports it; retrieval works with the rest
        rel = md.relative_to(root).as_posix()
        vec = _vector(md.with_suffix(".npy"), dim)
        trail = [str(t) for t in meta.get("source_section") or []]
        unit: dict[str, Any] = {
            "id": str(meta.get("id") or rel),
            "kind": kind,
            "file": rel,
            "tokens": int(meta.get("tokens") or 0),
            "domain": meta.get("domain"),
            "_body": body,
        }
        if kind == "chunk":
            src = str(meta.get("source_path") or "")
            unit.update(source_path=src, section=trail, doc_id=meta.get("source_doc"))
            if trail and src not in titles:
                titles[src] = trail[0]
            prose, code = split_code(body)
            fields.append(
                {"prose": prose, "code": code, "trail": " ".join(trail), "path": path_words(src)}
            )
            key = "doc:" + src
        else:
            sections = body_sections(body)
            learning = sections.get("learning", body)
            unit.update(
                source_path=rel,
                section=[],
                status=str(meta.get("status") or "active"),
                type=meta.get("type"),
                confidence=meta.get("confidence"),
                updated=str(meta.get("updated") or meta.get("created") or ""),
                usefulness=_float(meta.get("usefulness")),
                keywords=[str(k) for k in meta.get("keywords") or []],
            )
            if not unit["tokens"]:
                from ncx.tokens import count_tokens

                unit["tokens"] = count_tokens(learning)
            text = embed_text_for([], learning + "\n\n" + sections.get("context", ""))
            fields.append(
                {"prose": text, "code": "", "trail": " ".join(unit["keywords"]), "path": ""}
            )
            key = "mem:" + rel
        group.append(groups.setdefault(key, len(groups)))
        units.append(unit)
        vec_rows.append(vec)

    for unit, f in zip(units, fields, strict=True):
        if unit["kind"] == "chunk":
            f["title"] = titles.get(unit["source_path"], "")
    sources = sorted({u["source_path"] for u in units if u["kind"] == "chunk"})
    _attach_lines(root, units)
    for u in units:
        del u["_body"]
    lex = build_index(fields)
    vectors = np.zeros((len(units), dim), dtype=np.float16)
    for i, v in enumerate(vec_rows):
        if v is not None:
            vectors[i] = v
    vocab = "\n".join(sorted(lex.vocab, key=lex.vocab.__getitem__))
    dirs = chunk_dirs(root)
    meta_out = {
        "version": CACHE_VERSION,
        "units": units,
        "sources": sources,
        "dirs": dirs,
        "signature": signature(root, sources, dirs),
    }
    return {
        "meta": np.frombuffer(json.dumps(meta_out).encode(), dtype=np.uint8),
        "vocab": np.frombuffer(vocab.encode(), dtype=np.uint8),
        "indptr": lex.indptr,
        "indices": lex.indices,
        "data": lex.data,
        "idf": lex.idf,
        "vectors": vectors,
        "group": np.asarray(group, dtype=np.int32),
    }


def _float(v: Any) -> float | None:
    try:
        return None if v is None else float(v)
    except (TypeError, ValueError):
        return None


def _vector(npy: Path, dim: int) -> Any:
    """A unit's vector, or None. ncx writes a fixed .npy v1 header, so read it directly
    (np.load's header parsing costs more than the read for 10k tiny files)."""
    import numpy as np

    try:
        data = npy.read_bytes()
    except OSError:
        return None
    if data[:8] == b"\x93NUMPY\x01\x00":
        end = 10 + int.from_bytes(data[8:10], "little")
        header = data[10:end]
        fits = len(data) - end == 2 * dim
        if fits and b"'descr': '<f2'" in header and f"'shape': ({dim},)".encode() in header:
            return np.frombuffer(data, dtype="<f2", offset=end)
    try:
        v = np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError):
        return None
    return v if v.shape == (dim,) else None


def _attach_lines(root: Path, units: list[dict[str, Any]]) -> None:
    """Each chunk's current line range in its source, found by its verbatim text.

    Chunk files hold no line numbers (they would churn on every edit above them); a chunk
    whose text is no longer in the source (edited, not yet synced) gets no range.
    """
    by_source: dict[str, list[dict[str, Any]]] = {}
    for u in units:
        if u["kind"] == "chunk":
            by_source.setdefault(u["source_path"], []).append(u)
        else:
            u["start_line"] = u["end_line"] = None
    for src, group in by_source.items():
        try:
            text = (root / src).read_bytes().decode("utf-8", "replace").lstrip("\ufeff")
            text = text.replace("\r\n", "\n")
        except OSError:
            text = ""
        for u in group:
            body = u["_body"].strip("\n") if text else ""
            pos = text.find(body) if body else -1
            if pos < 0:
                u["start_line"] = u["end_line"] = None
                continue
            u["start_line"] = text.count("\n", 0, pos) + 1
            u["end_line"] = u["start_line"] + body.count("\n")
