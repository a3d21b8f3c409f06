"""store: the only module that reads and writes markdown units and their arrays.

Frontmatter rules: fences are `---` alone on a line, a UTF-8 BOM is stripped, CRLF is
read as LF, YAML must be a mapping, keys keep their order. Every write is atomic
(temp file + os.replace) so an interrupted run never leaves a half-written unit.
"""

from __future__ import annotations

import codecs
import errno
import functools
import hashlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from ncx.errors import BadFrontmatter, BadSource, Unreadable

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


def _yaml() -> Any:
    import yaml

    return yaml


# Limits of what ncx parses. A unit (chunk or memory) is a few KB; 2 MB leaves room for a
# long hand-written memory while a file that size is still read and parsed in milliseconds.
MAX_UNIT_BYTES = 2_000_000
MAX_YAML_CHARS = 256_000
# YAML aliases expand: nine lines of `&a [*b, *b, ...]` make 10^9 nodes (a "billion laughs").
# ncx never writes an alias; a hand-written sidecar may share a few values. The whole
# document may expand to at most this many nodes, counted before anything is built.
MAX_YAML_NODES = 50_000
# A temp file of an atomic write older than this is left over from a killed process.
STALE_TEMP_S = 600
TEMP_PREFIX = ".tmp-"


def yaml_problem(yaml_text: str) -> str | None:
    """Why a YAML text must not be loaded (too big, alias bomb, recursive alias), or None.

    Walks the parser's events only (no objects are built), so a bomb costs its own size."""
    if len(yaml_text) > MAX_YAML_CHARS:
        return f"YAML is {len(yaml_text):,} characters, over the {MAX_YAML_CHARS:,} limit"
    if "&" not in yaml_text and "*" not in yaml_text:
        return None  # no anchor, no alias: nothing can expand (the common case, no 2nd pass)
    yaml = _yaml()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]  # [anchor, nodes so far] of each open collection
    try:
        for ev in yaml.parse(yaml_text, Loader=loader):
            if isinstance(ev, yaml.AliasEvent):
                if ev.anchor not in sizes:
                    return f"alias *{ev.anchor} refers to itself or to no anchor"
                stack[-1][1] += sizes[ev.anchor]
            elif isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                stack.append([ev.anchor, 1])
            elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                anchor, n = stack.pop()
                if anchor is not None:
                    sizes[anchor] = n
                stack[-1][1] += n
            elif isinstance(ev, yaml.ScalarEvent):
                if ev.anchor is not None:
                    sizes[ev.anchor] = 1
                stack[-1][1] += 1
            if stack[-1][1] > MAX_YAML_NODES or sum(x[1] for x in stack) > MAX_YAML_NODES:
                return f"YAML aliases expand to over {MAX_YAML_NODES:,} values (an alias bomb)"
    except yaml.YAMLError:
        return None  # the real parse reports it with its line
    return None


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Return (yaml_text or None, body, body_start_line) for a markdown text.

    body_start_line is the 1-based line of the source where `body` begins.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if not (text.startswith("---\n") or text == "---" or text.startswith("---\r\n")):
        return None, text, 1
    lines = text.split("\n")
    for i in range(1, len(lines)):
        stripped = lines[i].rstrip("\r")
        if stripped in ("---", "..."):
            yaml_text = "\n".join(line.rstrip("\r") for line in lines[1:i])
            body = "\n".join(lines[i + 1 :])
            return yaml_text, body, i + 2
    return None, text, 1  # an opening fence with no closing fence is just text


# The frontmatter ncx writes itself (chunk files: a dozen `key: scalar` lines and lists of
# scalars) is read without the YAML library: on a 10,916-chunk tree, YAML was 1.7 s of a 7 s
# cache build. Only an unambiguous subset is taken; anything else (quotes with escapes,
# flow or block collections, anchors, scalars YAML would read as bool/float/date, ...)
# returns None and goes through YAML, so the result is always the one YAML gives.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\Z")
_PLAIN_OK = re.compile(r"[A-Za-z0-9_/(][^\t]*\Z")  # no indicator character first
_PLAIN_ASCII = re.compile(r"[A-Za-z0-9_./(][\x20-\x7e]*\Z")  # what the fast writer emits
_YAML_BREAK = re.compile("[\x85\u2028\u2029]")  # line breaks to YAML besides \n and \r


@functools.cache
def _implicit() -> dict[str, list[Any]]:
    """YAML's own rules for plain scalars that are not strings (bool, float, date, ...)."""
    return dict(_yaml().resolver.Resolver.yaml_implicit_resolvers)


def _plain(value: str, chars: re.Pattern[str]) -> bool:
    """A plain (unquoted) YAML scalar that reads back as this very string: what the reader
    accepts (`chars`: _PLAIN_OK) and, stricter, what the writer emits (_PLAIN_ASCII)."""
    return bool(
        chars.match(value)
        and value == value.strip()
        and ": " not in value
        and " #" not in value
        and not value.endswith(":")
        and _plain_is_str(value)
    )


def _plain_is_str(raw: str) -> bool:
    return not any(rx.match(raw) for _tag, rx in _implicit().get(raw[0], ()))


@functools.lru_cache(maxsize=1 << 16)  # keywords and headings recur across thousands of files
def _simple_scalar(raw: str) -> tuple[bool, Any]:
    """(understood, value) of one scalar in the simple subset (values are immutable)."""
    if _YAML_BREAK.search(raw):
        # A line break to YAML though not to this line split: YAML writes a value holding
        # U+2028 or U+2029 quoted over two lines ('A\u2028  B' is "A\u2028B"). YAML reads it.
        return False, None
    if raw == "null" or raw == "~":
        return True, None
    if _INT.match(raw):
        return True, int(raw)
    if len(raw) >= 2 and raw[0] == "'" and raw[-1] == "'":
        inner = raw[1:-1]
        if "'" in inner.replace("''", ""):
            return False, None
        return True, inner.replace("''", "'")
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        inner = raw[1:-1]
        return ("\\" not in inner and '"' not in inner), inner
    if _plain(raw, _PLAIN_OK):
        return True, raw
    return False, None


def parse_simple_frontmatter(yaml_text: str) -> dict[str, Any] | None:
    """The mapping of a frontmatter in ncx's own simple subset, or None (use YAML)."""
    meta: dict[str, Any] = {}
    bare: list[str] = []  # `key:` lines: a list follows, or YAML's null if nothing does
    current: list[Any] | None = None
    for line in yaml_text.split("\n"):
        if line.startswith("- "):
            if current is None:
                return None
            ok, value = _simple_scalar(line[2:])
            if not ok:
                return None
            current.append(value)
            continue
        key, sep, rest = line.partition(":")
        if not sep or not _KEY.match(key) or key in meta:
            return None
        if rest == "":
            current = meta[key] = []
            bare.append(key)
            continue
        if rest[0] != " ":
            return None
        current = None
        rest = rest[1:]
        if rest == "[]":
            meta[key] = []
            continue
        ok, value = _simple_scalar(rest)
        if not ok:
            return None
        meta[key] = value
    for key in bare:
        if not meta[key]:
            meta[key] = None
    return meta


def parse_frontmatter(text: str, *, path: Path | str) -> tuple[dict[str, Any], str, int]:
    """Parse a markdown text into (metadata, body, body_start_line); raise BadFrontmatter."""
    yaml_text, body, start = split_frontmatter(text)
    if yaml_text is None:
        return {}, body, start
    simple = parse_simple_frontmatter(yaml_text)
    if simple is not None:
        return simple, body, start
    yaml = _yaml()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    bomb = yaml_problem(yaml_text)
    if bomb is not None:
        raise BadFrontmatter(
            f"frontmatter refused: {bomb}",
            path=path,
            hint="write plain `key: value` lines (no &anchors / *aliases); ncx never writes them",
        )
    try:
        meta = yaml.load(yaml_text, Loader=loader)
    except RecursionError:
        raise BadFrontmatter(
            "frontmatter nests too deep", path=path, hint="flatten the YAML"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # A mark past the last YAML line (an unclosed bracket) points at that last line.
        last = yaml_text.count("\n") + 2
        line = f" (line {min(mark.line + 2, last)})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise BadFrontmatter(
            f"frontmatter does not parse{line}: {problem}",
            path=path,
            hint="fix the YAML between the --- lines",
        ) from None
    except Exception as exc:  # (PyYAML's constructors raise what they meet)
        # A value its type refuses: a timestamp no calendar has (`date: 2023-02-30`, a
        # ValueError), `!!bool maybe` (KeyError), `!!timestamp x` (AttributeError).
        why = str(exc) if isinstance(exc, ValueError) else "a value its YAML tag cannot hold"
        raise BadFrontmatter(
            f"frontmatter does not parse: {why}",
            path=path,
            hint="fix the YAML between the --- lines (a date must exist: YYYY-MM-DD)",
        ) from None
    if meta is None:
        return {}, body, start
    if not isinstance(meta, dict):
        raise BadFrontmatter(
            f"frontmatter must be a mapping, found {type(meta).__name__}",
            path=path,
            hint="write `key: value` lines between the --- fences",
        )
    return meta, body, start


@functools.cache
def _dumper() -> Any:
    yaml = _yaml()
    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class NoAliasDumper(base):  # type: ignore[misc, valid-type]
        # Never `&id001` / `*id001`: one date object used for created and updated is
        # written twice, as a person would, not as a YAML alias.
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return NoAliasDumper


# The writing half of the fast path: a chunk file's frontmatter is rendered without the YAML
# library when every value is one YAML itself would write plain (so the bytes are the ones
# yaml.dump gives, which a property test checks); anything else goes through YAML. Rendering
# 40,000 chunk files through yaml.dump was ~8 s of a first sync or a full check.


def _simple_scalar_text(value: Any) -> str | None:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _str_text(value)
    return None


@functools.lru_cache(maxsize=1 << 16)  # keywords, paths and headings recur across chunks
def _plain_ascii(value: str) -> bool:
    return _plain(value, _PLAIN_ASCII)


# One line of printable ASCII (a heading "Step 1: Install", a keyword "true", a hash of
# digits) is written by YAML plain or single-quoted, quotes doubled, by the rules of its
# emitter (analyze_scalar / choose_scalar_style, for a block mapping value or list item):
# a quarter of a large tree's chunk headings are quoted, each one a yaml.dump before.
# Longer ones are left to YAML, which folds lines past its width.
_ONE_LINE = re.compile(r"[\x20-\x7e]{1,1000}\Z")
_BLOCK_INDICATOR = re.compile(r"---|\.\.\.|[#,\[\]{}&*!|>'\"%@`]|[-?:](?: |\Z)|.*(?::(?: |\Z)| #)")


@functools.lru_cache(maxsize=1 << 16)
def _str_text(value: str) -> str | None:
    if _plain_ascii(value):
        return value
    if not _ONE_LINE.match(value):
        return None
    if value == value.strip() and _plain_is_str(value) and not _BLOCK_INDICATOR.match(value):
        return value
    return "'" + value.replace("'", "''") + "'"


@functools.lru_cache(maxsize=256)
def _plain_key(key: str) -> bool:
    return bool(_KEY.match(key)) and _plain_ascii(key)


def dump_simple_frontmatter(meta: Mapping[str, Any]) -> str | None:
    """The YAML block yaml.dump writes for `meta`, or None when it is not simple enough."""
    # Called once per chunk of a tree (40,000 times): the common values (strings, and lists
    # of strings) go straight to the cached _str_text, the rest through _simple_scalar_text.
    out: list[str] = []
    for key, value in meta.items():
        if not (isinstance(key, str) and _plain_key(key)):
            return None
        if isinstance(value, list):
            if not value:
                out.append(f"{key}: []")
                continue
            if set(map(type, value)) == {str}:
                # Keywords and heading trails: mapped in C onto the cached renderings.
                texts: list[str | None] = list(map(_str_text, value))
            else:
                texts = list(map(_simple_scalar_text, value))
            if None in texts:
                return None
            out.append(f"{key}:\n- " + "\n- ".join(texts))  # type: ignore[arg-type]
            continue
        text = _str_text(value) if type(value) is str else _simple_scalar_text(value)
        if text is None:
            return None
        out.append(f"{key}: {text}")
    return "\n".join(out) + "\n" if out else None


def dump_frontmatter(meta: Mapping[str, Any], body: str) -> str:
    """Render metadata + body as markdown with a YAML block; same input, same bytes."""
    head = dump_simple_frontmatter(meta)
    if head is None:
        head = _yaml().dump(
            dict(meta),
            Dumper=_dumper(),
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=10_000,
        )
    body = body if body.endswith("\n") else body + "\n"
    return f"---\n{head}---\n\n{body.lstrip(chr(10))}"


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


def source_text(data: bytes) -> str:
    """A source's text as decode_source reads it, bad bytes replaced rather than refused:
    the query side maps chunks back to the file's lines and must count them as sync did."""
    codec = _bom_codec(data)
    return _newlines(data.decode(codec or "utf-8", "replace"))


class NotRegular(OSError):
    """A path that is a FIFO, socket, device or folder where a file was expected."""


def open_regular(path: Path | str, *, follow: bool = True) -> BinaryIO:
    """A regular file opened for reading; NotRegular for anything else. Opened without
    blocking and checked on the open descriptor: a tracked doc, or a unit file under
    .neocortex/, replaced by a FIFO (between a stat and the open, too) must never hang
    sync, check or retrieve waiting for a writer. `follow=False`: a symlink in its place is
    an OSError (ELOOP), not its target (files ncx writes itself, such as the cache's)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file (a FIFO, socket?)", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, *, follow: bool = True) -> bytes:
    """The bytes of a regular file (open_regular)."""
    with open_regular(path, follow=follow) as f:
        return f.read()


def open_lock(path: Path | str) -> BinaryIO:
    """A lock file (to flock) opened for writing, made when missing and never truncated. A
    symlink in its place (a committed `.neocortex/cache/.lock -> ~/.bashrc`) is removed and
    a real file made: opening it through the link made its target (or truncated it)."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        os.unlink(path)
        fd = os.open(path, flags, 0o666)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file (a FIFO, socket?)", str(path))
        return os.fdopen(fd, "r+b")
    except BaseException:
        os.close(fd)
        raise


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
