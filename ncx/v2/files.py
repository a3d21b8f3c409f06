"""Reading a v2 tree's files: the `_Reader` every read goes through (it collects the
problems met), the walk over the tree, byte decoding, and the small coercions of YAML values.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
import re
from pathlib import Path
from typing import Any, Literal

import yaml

from ncx.v2.values import (
    _PLACEHOLDER_DOMAINS,
    _PRUNED_DIRS,
    _PS_ARTIFACT_RE,
    _TEMPLATE_RE,
    BOM,
    DOC_ID_RE,
    MLDA,
    Level,
    Problem,
)

# ---------------------------------------------------------------- public helpers


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode as the v2 scripts wrote: UTF-8 (a BOM stripped), else cp1252; newlines become LF.

    Returns (text, encoding) with encoding "utf-8", "utf-8-sig" or "cp1252". cp1252 leaves five
    byte values undefined; those become U+FFFD rather than failing.
    """
    try:
        text = data.decode("utf-8-sig")
        encoding = "utf-8-sig" if data.startswith(BOM) else "utf-8"
    except UnicodeDecodeError:
        # Windows PowerShell 5.1 Set-Content writes the ANSI code page (v2-format §2, §12).
        text = data.decode("cp1252", errors="replace")
        encoding = "cp1252"
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding


def classify_id(value: str) -> Literal["valid", "placeholder", "invalid"]:
    """Tell a real DOC-ID from a template placeholder (DOC-{DOMAIN}-{NNN}, DOC-DS-xxx) or junk."""
    if DOC_ID_RE.match(value):
        return "placeholder" if value.split("-")[1] in _PLACEHOLDER_DOMAINS else "valid"
    if value.upper().startswith("DOC-") or "{" in value:
        return "placeholder"
    return "invalid"


def escapes_repo(path: str) -> bool:
    """True for a v2 path that is absolute or climbs out of the repository root."""
    p = path.replace("\\", "/")
    if p.startswith("/") or re.match(r"^[A-Za-z]:", p):
        return True
    norm = posixpath.normpath(p)
    return norm == ".." or norm.startswith("../")


# ---------------------------------------------------------------- reading files


class _Reader:
    """Owns the repository root and the problems met so far; every file read goes through it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = root.resolve()
        self.problems: list[Problem] = []
        self.encodings: dict[str, str] = {}
        self.crlf: set[str] = set()
        self.given: dict[str, bytes] = {}  # contents supplied by the caller (parse_sidecar)

    def report(
        self, path: str, message: str, *, line: int | None = None, level: Level = "warning"
    ) -> None:
        self.problems.append(Problem(path, line, message, level))

    def inside(self, rel: str) -> bool:
        """rel stays in the repository, symlinks included."""
        if escapes_repo(rel):
            return False
        try:
            real = (self.root / rel).resolve()
        except (OSError, RuntimeError):
            return False
        return real == self.real_root or self.real_root in real.parents

    def read_text(self, rel: str, *, level: Level = "error") -> str | None:
        if rel not in self.given and not self.inside(rel):
            self.report(rel, "refused: the path leaves the repository", level="error")
            return None
        try:
            data = self.given[rel] if rel in self.given else (self.root / rel).read_bytes()
        except OSError as exc:
            self.report(rel, f"cannot be read: {exc.strerror or exc}", level=level)
            return None
        text, encoding = decode_bytes(data)
        self.encodings[rel] = encoding
        if b"\r" in data:
            self.crlf.add(rel)
        if encoding == "cp1252":
            self.report(rel, "not valid UTF-8; decoded as cp1252 (Windows ANSI)")
        return text

    def load_yaml(self, rel: str, *, level: Level) -> tuple[object, Any] | None:
        """(cleaned data, composed node) or None when unreadable; a parse error names its line."""
        text = self.read_text(rel, level=level)
        if text is None:
            return None
        try:
            # compose builds only the node tree (no objects), for line numbers of entries.
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            self.report(
                rel,
                f"YAML does not parse ({what}); file skipped",
                line=None if mark is None else mark.line + 1,
                level=level,
            )
            return None
        return self._clean(rel, text, data, (), {}), node

    def _clean(
        self, rel: str, text: str, value: object, where: tuple[str, ...], memo: dict[int, object]
    ) -> object:
        """Dates to ISO strings, keys to str, PowerShell artifacts to None (reported).

        YAML anchors make shared, even cyclic, containers: memo cleans each one once."""
        if id(value) in memo:
            return memo[id(value)]
        if isinstance(value, dt.datetime | dt.date):
            return value.isoformat()
        if isinstance(value, str):
            found = _PS_ARTIFACT_RE.search(value)
            if found is None:
                return value
            whole = found.group(0) == value.strip()
            self.report(
                rel,
                f"PowerShell artifact in {'.'.join(where) or 'value'}: {found.group(0)!r}"
                + ("; value dropped" if whole else ""),
                line=_line_of(text, found.group(0)),
                level="note" if whole else "warning",
            )
            return None if whole else value
        if isinstance(value, dict):
            out: dict[str, object] = {}
            memo[id(value)] = out
            for k, v in value.items():
                key = k.isoformat() if isinstance(k, dt.date) else str(k)
                out[key] = self._clean(rel, text, v, (*where, key), memo)
            return out
        if isinstance(value, list):
            items: list[object] = []
            memo[id(value)] = items
            items.extend(
                self._clean(rel, text, v, (*where, f"[{i}]"), memo) for i, v in enumerate(value)
            )
            return items
        return value


def _line_of(text: str, needle: str) -> int | None:
    for n, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return n
    return None


def _item_lines(node: Any, key: str) -> list[int | None]:
    """1-based line of each item of the sequence under mapping key `key` of a composed node."""
    if not isinstance(node, yaml.MappingNode):
        return []
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            if isinstance(v, yaml.SequenceNode):
                return [item.start_mark.line + 1 for item in v.value]
            if isinstance(v, yaml.MappingNode):
                return [item.start_mark.line + 1 for item, _ in v.value]
    return []


def _walk(r: _Reader) -> list[str]:
    """Repo-relative paths of the files worth looking at, sorted; links out of the repo refused."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(r.root):
        rel_dir = Path(dirpath).relative_to(r.root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        keep = []
        for d in sorted(dirnames):
            # Only .mlda among hidden folders holds v2 data; .git, .neocortex, .venv never do.
            hidden = d.startswith(".") and not (rel_dir == "" and d == MLDA)
            if hidden or d in _PRUNED_DIRS:
                continue
            if (Path(dirpath) / d).is_symlink():
                r.report(posixpath.join(rel_dir, d), "symlinked folder not followed", level="note")
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            rel = posixpath.join(rel_dir, f)
            if (Path(dirpath) / f).is_symlink() and not r.inside(rel):
                r.report(rel, "refused: symlink leaves the repository", level="error")
                continue
            found.append(rel)
    return sorted(found)


# ---------------------------------------------------------------- small coercions


def _text(value: object) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    s = str(value).strip()
    return s or None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _map(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    """A list. None (a key with only comments under it, v2-format §0.2) is empty; a scalar,
    one item."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


def _strings(value: object) -> tuple[str, ...]:
    return tuple(s for s in (_text(v) for v in _list(value)) if s is not None)


def _show(value: object) -> str:
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(sorted(str(v) for v in value)) or "(none)"
    return "(none)" if value is None else str(value)


def _is_template(value: str) -> bool:
    return bool(_TEMPLATE_RE.search(value))


def _ids(r: _Reader, rel: str, value: object, where: str) -> tuple[str, ...]:
    """DOC-IDs in a list (or one value), placeholders dropped with a note."""
    out: list[str] = []
    for item in _list(value):
        s = _text(item)
        if s is None:
            if item is not None:
                r.report(rel, f"{where}: {item!r} is not a DOC-ID; ignored")
            continue
        if classify_id(s) == "placeholder":
            r.report(rel, f"{where}: placeholder ID {s} ignored", level="note")
            continue
        if classify_id(s) == "invalid":
            r.report(rel, f"{where}: {s!r} is not a DOC-ID; kept as written")
        out.append(s)
    return tuple(out)
