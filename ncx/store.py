"""store: the only module that reads and writes markdown units and their arrays.

A UTF-8 BOM is stripped, CRLF is read as LF; the frontmatter itself (fences, YAML, key
order) is ncx.frontmatter's. Every write is atomic (temp file + os.replace) so an
interrupted run never leaves a half-written unit.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

from ncx.errors import BadFrontmatter, BadSource, Unreadable

# The YAML block's rules are ncx.frontmatter's; its names stay importable from here, where
# every reader and writer of units has always found them.
from ncx.frontmatter import (
    MAX_YAML_CHARS as MAX_YAML_CHARS,
)
from ncx.frontmatter import (
    MAX_YAML_NODES as MAX_YAML_NODES,
)
from ncx.frontmatter import (
    _dumper as _dumper,
)
from ncx.frontmatter import (
    _yaml as _yaml,
)
from ncx.frontmatter import (
    dump_frontmatter as dump_frontmatter,
)
from ncx.frontmatter import (
    dump_simple_frontmatter as dump_simple_frontmatter,
)
from ncx.frontmatter import (
    parse_frontmatter as parse_frontmatter,
)
from ncx.frontmatter import (
    parse_simple_frontmatter as parse_simple_frontmatter,
)
from ncx.frontmatter import (
    split_frontmatter as split_frontmatter,
)
from ncx.frontmatter import (
    yaml_problem as yaml_problem,
)

# The regular-file openers live apart so the commit hooks' fast path can use them without
# this module's imports; every other caller finds them here.
from ncx.regular import NotRegular as NotRegular
from ncx.regular import open_lock as open_lock
from ncx.regular import open_regular as open_regular
from ncx.regular import read_regular as read_regular

# `vec: <id>` in a unit's frontmatter names the exact bytes of its .npy: the first 16 hex of
# their git blob id, so a staged or committed vector is checked from `git ls-files -s` alone,
# and a .md taken from one side of a conflict with the other side's .npy is caught without
# the model. Written as the last frontmatter line.
_VEC_LINE = re.compile(rb"^vec: '?([0-9a-f]{16})'?\r?$", re.MULTILINE)
_HASH_LINE = re.compile(rb"^hash: '?([0-9a-f]+)'?\r?$", re.MULTILINE)
# A chunk's vector, inside its block of the doc's chunk file: float16, little-endian, base64.
VEC_PREFIX = "f16:"
_INLINE_VEC = re.compile(rb"^vec: f16:([A-Za-z0-9+/=]*)\r?$", re.MULTILINE)
_LINES_LINE = re.compile(rb"^lines: (\d{1,9})$", re.MULTILINE)
_MARKER = re.compile(rb"^(?:<{7}|>{7}) ", re.MULTILINE)


# Limits of what ncx parses. A unit (chunk or memory) is a few KB; 2 MB leaves room for a
# long hand-written memory while a file that size is still read and parsed in milliseconds.
MAX_UNIT_BYTES = 2_000_000
# A temp file of an atomic write older than this is left over from a killed process.
STALE_TEMP_S = 600
TEMP_PREFIX = ".tmp-"


# Text files that say their encoding with a byte-order mark (Windows editors save UTF-16 so):
# decoded as what they say, not refused as binary for the NULs UTF-16 puts in every ASCII char.
# UTF-32's marks first: UTF-32 LE's begins with UTF-16 LE's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _bom_codec(data: bytes) -> str | None:
    return next((codec for bom, codec in _BOMS if data.startswith(bom)), None)


def _newlines(text: str) -> str:
    """CRLF and a lone CR (classic Mac) both as LF: every reader and every citation counts
    lines the same way."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_source(data: bytes, *, path: Path | str) -> str:
    """Bytes of a markdown source -> text, or BadSource naming the file and the fix."""
    exclude = "exclude it (`ncx init --exclude PATH`)"
    codec = _bom_codec(data)
    if codec is not None:
        try:
            text = data.decode(codec)  # (the codec takes the mark off)
        except UnicodeDecodeError:
            raise Unreadable(
                f"starts with a {codec.upper()} byte-order mark but is not valid {codec.upper()}",
                path=path,
                hint=f"re-save it as UTF-8 (e.g. `iconv -f {codec} -t utf-8`), or {exclude}",
            ) from None
        if "\x00" in text:
            raise Unreadable("holds NUL characters, not text", path=path, hint=f"{exclude}")
        return _newlines(text)
    if b"\x00" in data:  # anywhere, not just the first 8 KB: a NUL poisons every consumer
        raise Unreadable(
            "looks binary (NUL bytes), not markdown",
            path=path,
            hint=f"if it is text in another encoding, re-save it as UTF-8; else {exclude}",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise Unreadable(
            f"is not UTF-8 (bad byte at line {line})",
            path=path,
            hint="re-save it as UTF-8 (e.g. `iconv -f cp1252 -t utf-8`)",
        ) from None
    return _newlines(text)


def decode_text(data: bytes) -> str:
    """Text a user hands ncx (a task file): UTF-8, or UTF-16 or UTF-32 with a byte-order mark
    (as a source is read), the mark dropped and line ends as LF; UnicodeDecodeError else."""
    return _newlines(data.decode(_bom_codec(data) or "utf-8"))


def source_text(data: bytes) -> str:
    """A source's text as decode_source reads it, bad bytes replaced rather than refused:
    the query side maps chunks back to the file's lines and must count them as sync did."""
    codec = _bom_codec(data)
    return _newlines(data.decode(codec or "utf-8", "replace"))


def read_unit(path: Path) -> tuple[dict[str, Any], str]:
    """Read one .neocortex unit (chunk or memory): (metadata, body).

    ncx writes units as regular files; a symlink in their place (to a file outside the
    repository, or to a secret) is refused, and so is a file over MAX_UNIT_BYTES, before
    its bytes are read."""
    try:
        if path.is_symlink():
            raise BadSource(
                "is a symlink; ncx units are regular files, and a link may point anywhere",
                path=path,
                hint="delete it and run `ncx sync`",
            )
        size = path.stat().st_size
        if size > MAX_UNIT_BYTES:
            raise BadSource(
                f"is {size / 1e6:.1f} MB, over the {MAX_UNIT_BYTES / 1e6:.0f} MB limit for a unit",
                path=path,
                hint="shorten it (a memory is one learning), or delete it",
            )
        data = read_regular(path)
    except OSError as exc:
        raise BadSource(f"cannot be read: {exc.strerror}", path=path) from None
    text = decode_source(data, path=path)
    meta, body, _ = parse_frontmatter(text, path=path)
    return meta, body


@functools.cache
def _umask() -> int:
    # Read once per process (setting it back at once): os.umask has no read-only form.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path | str, mode: int) -> int:
    """The permission bits a replaced file keeps (a user's 0644 CLAUDE.md stays 0644), or
    `mode` less the umask for a new one, as `open()` would give it."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return mode & ~_umask()


def write_atomic(path: Path | str, data: bytes, *, mkdir: bool = True, mode: int = 0o666) -> None:
    """Write `data` to `path` via a temp file in the same folder and os.replace.

    `mkdir=False`: the caller made the folder (sync, writing 80,000 files, makes each once).
    The file gets the mode a plain write would give it (`mode` less the umask), or keeps the
    mode of the file it replaces; mkstemp's 0600 would hide committed files from the
    other users of a shared checkout, and git would record nothing else anyway."""
    folder = os.path.dirname(path) or "."
    if mkdir:
        os.makedirs(folder, exist_ok=True)
    # The pid in the name lets a sweep tell a live process's temp file from a dead one's.
    fd, tmp = tempfile.mkstemp(
        dir=folder, prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=os.path.splitext(path)[1]
    )
    try:
        with os.fdopen(fd, "wb") as f:
            if os.name != "nt":
                os.fchmod(f.fileno(), _mode_for(path, mode))
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def is_temp(name: str) -> bool:
    return name.startswith(TEMP_PREFIX)


def stale_temp(path: Path) -> bool:
    """A temp file of write_atomic whose writer is gone (dead pid, or older than STALE_TEMP_S).
    Sweeps remove only these, never a live process's file about to be renamed into place."""
    name = path.name
    if not is_temp(name):
        return False
    try:
        age = time.time() - path.stat().st_mtime
    except OSError:
        return False
    if age > STALE_TEMP_S:
        return True
    pid_text = name[len(TEMP_PREFIX) :].split("-", 1)[0]
    if not pid_text.isdigit() or os.name == "nt":
        # An older ncx's temp name, or Windows (where os.kill(pid, 0) is not a probe):
        # wait for the file to age out.
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False
    return False


def write_if_changed(path: Path, data: bytes, *, mode: int = 0o666, follow: bool = True) -> bool:
    """Atomically write `data` unless the file already holds exactly these bytes (`follow=False`:
    a link in its place is replaced, its target never read)."""
    try:
        if read_regular(path, follow=follow) == data:  # (a FIFO is replaced, not waited on)
            return False
    except OSError:
        pass
    if mode == 0o666:
        write_atomic(path, data)
    else:
        write_atomic(path, data, mode=mode)
    return True


def remove_unit(md_path: Path, *, pair: bool = True) -> list[Path]:
    """Delete a unit's .md and .npy (`pair=False`: only the file given); return what was
    removed. Prunes empty folders."""
    removed = []
    for p in (md_path, md_path.with_suffix(".npy")) if pair else (md_path,):
        try:
            p.unlink()
            removed.append(p)
        except FileNotFoundError:
            pass
    parent = md_path.parent
    try:
        while parent.name not in ("chunks", "memories") and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    except OSError:
        pass
    return removed


@functools.cache
def npy_headers(dim: int) -> dict[bytes, tuple[str, int]]:
    """{header bytes: (dtype, file size)} of the .npy files numpy writes for a 1-D float16 or
    float32 vector of `dim`: a file that starts with one of them is checked without parsing
    its header (ast.literal_eval of 40,000 headers was a second of a full check; np.load's
    parsing cost the cache build more than the read). `ncx check` and the cache both use it."""
    import io

    import numpy as np

    out = {}
    for descr in ("<f2", "<f4"):
        buf = io.BytesIO()
        np.save(buf, np.zeros(dim, dtype=descr), allow_pickle=False)
        body = dim * np.dtype(descr).itemsize
        data = buf.getvalue()
        out[data[: len(data) - body]] = (descr, len(data))
    return out


def blob_vec(npy: bytes) -> str:
    """The `vec` id of a .npy's bytes: its git blob id (SHA-1), first 16 hex."""
    return hashlib.sha1(b"blob %d\0" % len(npy) + npy).hexdigest()[:16]


def _head(md: bytes) -> bytes:
    """The frontmatter block of a unit's bytes (fences included), or b"" without one."""
    if not md.startswith(b"---"):
        return b""
    end = md.find(b"\n---", 3)
    return md[: end + 1] if end >= 0 else b""


def vec_of(md: bytes) -> str | None:
    """The `vec` id a unit's .md records, by a strict line match (no YAML parse)."""
    m = _VEC_LINE.search(_head(md))
    return m.group(1).decode() if m else None


def hash_of(md: bytes) -> str | None:
    """The text `hash` a unit's .md records, by a strict line match (no YAML parse)."""
    m = _HASH_LINE.search(_head(md))
    return m.group(1).decode() if m else None


def with_vec(md: bytes, vec: str) -> bytes:
    """`md` (written by dump_frontmatter, no `vec` line) with `vec: <vec>` as its last key."""
    return _with_last_line(md, _vec_line(vec))


def _with_last_line(md: bytes, line: bytes) -> bytes:
    """`md` (frontmatter first) with `line` as the last line of its frontmatter."""
    end = md.index(b"\n---\n", 3) + 1
    return md[:end] + line + md[end:]


@functools.lru_cache(maxsize=4096)
def _vec_line(vec: str) -> bytes:
    # Rendered as dump_frontmatter writes the key (quoted exactly when YAML would read a
    # number): by its simple writer when it can, else by the YAML dumper. Each vec is new,
    # so the cache rarely hits; yaml.dump for each of 40,000 chunks was 2 s of a first sync.
    line = dump_simple_frontmatter({"vec": vec})
    if line is None:
        line = _yaml().dump({"vec": vec}, Dumper=_dumper(), default_flow_style=False, width=10_000)
    return line.encode()


def without_vec(md: bytes) -> bytes:
    """`md` with its `vec` line taken out: what a person wrote, without the derived id."""
    m = _VEC_LINE.search(_head(md))
    return md if m is None else md[: m.start()] + md[m.end() + 1 :]


def has_markers(md: bytes) -> bool:
    """Merge-conflict markers (`<<<<<<< ` / `>>>>>>> ` at a line start) anywhere in a unit."""
    return _MARKER.search(md) is not None


def lf(data: bytes) -> bytes:
    """Bytes with CRLF read as LF: a checkout with core.autocrlf=true is not a change."""
    return data.replace(b"\r\n", b"\n") if b"\r" in data else data


# --- chunk files: one per doc, its chunks' blocks one after another (docs/formats.md) ---
#
# A block is a chunk as it always was (YAML frontmatter, a blank line, the section's text)
# whose frontmatter also says how many lines follow it (`lines`) and carries the vector
# (`vec: f16:<base64>`). The count makes the split exact whatever the text holds (a `---`
# line, a quoted frontmatter); blocks depend only on their own section (invariant 2).


def text_lines(text: str) -> list[str]:
    """`text`'s lines as git and editors number them: cut at newlines only (str.splitlines
    also cuts at U+2028, U+0085, a vertical tab, a form feed and U+001C-U+001E, and numbers
    every line after one wrong), a carriage return before the newline dropped, and no empty
    line after a final newline."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def body_lines(body: str) -> int:
    """The `lines` of a block: the lines dump_frontmatter writes after the closing fence."""
    body = body if body.endswith("\n") else body + "\n"
    return 1 + body.lstrip("\n").count("\n")


# A doc's chunk file holds every chunk of a doc of up to 4 MB (Config.max_doc_bytes), with
# metadata and a vector each: a few times the doc at most.
MAX_CHUNK_FILE_BYTES = 64_000_000


def read_chunk_file(path: Path | str) -> bytes:
    """The bytes of a doc's chunk file; BadSource for a symlink (it may point anywhere) or
    one over MAX_CHUNK_FILE_BYTES, before its bytes are read."""
    try:
        if os.path.islink(path):
            raise BadSource(
                "is a symlink; ncx chunk files are regular files, and a link may point anywhere",
                path=path,
                hint="delete it and run `ncx sync`",
            )
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_CHUNK_FILE_BYTES:
                raise BadSource(
                    f"is {size / 1e6:.0f} MB, over the {MAX_CHUNK_FILE_BYTES / 1e6:.0f} MB "
                    "limit for a chunk file",
                    path=path,
                    hint="delete it and run `ncx sync`",
                )
            return f.read()
    except OSError as exc:
        raise BadSource(f"cannot be read: {exc.strerror}", path=path) from None


def split_chunk_file(data: bytes, *, path: Path | str) -> list[bytes]:
    """The blocks of a doc's chunk file, in order; BadFrontmatter naming `path` if it is not
    one (a hand edit, conflict markers, a file of the older one-file-per-chunk format)."""
    data = lf(data)
    blocks: list[bytes] = []
    pos, size = 0, len(data)
    while pos < size:
        end = data.find(b"\n---\n", pos + 3) if data.startswith(b"---\n", pos) else -1
        m = _LINES_LINE.search(data, pos, end + 1) if end >= 0 else None
        if m is None:
            raise BadFrontmatter(
                f"not a chunk file: no block starts at byte {pos}",
                path=path,
                hint="chunk files are written by `ncx sync`; run it to rewrite this one",
            )
        cut = end + 5
        for _ in range(int(m.group(1))):
            cut = data.find(b"\n", cut) + 1
            if cut == 0:
                raise BadFrontmatter(
                    f"not a chunk file: the block at byte {pos} ends early",
                    path=path,
                    hint="chunk files are written by `ncx sync`; run it to rewrite this one",
                )
        blocks.append(data[pos:cut])
        pos = cut
    return blocks


def vec_b64(vec: Any) -> bytes:
    """A vector as a chunk block keeps it: its float16 little-endian bytes, base64."""
    import base64

    import numpy as np

    return base64.b64encode(np.asarray(vec, dtype="<f2").tobytes())


def inline_vec(block: bytes) -> bytes | None:
    """The base64 of a block's vector (its `vec: f16:` line), or None without one."""
    m = _INLINE_VEC.search(_head(block))
    return m.group(1) if m else None


def decode_vec(b64: bytes, dim: int) -> Any:
    """A block's vector as float16[dim], or None when the base64 does not hold one."""
    import base64
    import binascii

    import numpy as np

    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 2 * dim:
        return None
    return np.frombuffer(raw, dtype="<f2")


def usable_vec(b64: bytes, dim: int) -> Any:
    """A block's vector as float16[dim] when retrieval can use it, else None: the base64
    holds another size, or NaN/inf values (they would poison every score they touch)."""
    import numpy as np

    vec = decode_vec(b64, dim)
    return vec if vec is not None and np.isfinite(vec).all() else None


def with_inline_vec(block: bytes, b64: bytes) -> bytes:
    """`block` (no `vec` line) with its vector's base64 (vec_b64) as its last key."""
    return _with_last_line(block, b"vec: " + VEC_PREFIX.encode() + b64 + b"\n")


def is_written(data: bytes, bare: list[bytes], dim: int) -> bool:
    """Whether a chunk file's bytes are these blocks (as rendered, no `vec` line) each with
    a vector retrieval can use as its last key: byte for byte what sync would write. No
    split, no regex: each block's length on disk is known from its bare bytes.

    Blocks of one text hash (identical sections) must carry one vector: sync keeps vectors
    by text hash, so it would rewrite a file where a hand edit gave them two."""
    data = lf(data)
    prefix = b"vec: " + VEC_PREFIX.encode()
    line = len(prefix) + 4 * ((2 * dim + 2) // 3) + 1  # the vec line: base64 of 2*dim bytes
    pos = 0
    seen: dict[bytes, bytes] = {}  # text hash line -> its vec line
    for b in bare:
        end = b.find(b"\n---\n", 3) + 1
        if end == 0 or data[pos : pos + end] != b[:end]:
            return False
        at = pos + end
        if data[at + line : at + line + len(b) - end] != b[end:]:
            return False
        if data[at : at + len(prefix)] != prefix or data[at + line - 1 : at + line] != b"\n":
            return False
        vec = data[at + len(prefix) : at + line - 1]
        if usable_vec(vec, dim) is None:
            return False
        h = b.find(b"\nhash: ", 0, end)
        if h >= 0 and seen.setdefault(b[h : b.find(b"\n", h + 1)], vec) != vec:
            return False
        pos = at + line + len(b) - end
    return pos == len(data) and bool(bare)


def without_inline_vec(block: bytes) -> bytes:
    m = _INLINE_VEC.search(_head(block))
    return block if m is None else block[: m.start()] + block[m.end() + 1 :]
