"""doclinks: a bare reST/MyST `:doc:` reference shown as its target's title.

A reader sees one file, so it keeps a bare `:doc:`/blueprints`` as `[blueprints](:/blueprints)`
(ncx.sources.roles). Here, where a chunk's text is read back, the link becomes the title of the
doc it names ("Modular Applications with Blueprints"), as the built site shows it; a target that
names no indexed doc keeps its words. The title is read from the target's own chunk file (its
first chunk's section trail), not from the cache: a quick index holds only some docs, and the
first frame of a fresh clone must read as every later one does.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path, PurePosixPath

from ncx.layout import doc_chunk_file
from ncx.suffixes import BY_FORMAT

_LINK = re.compile(r"\[([^\]\n]*)\]\(:([^)\s]+)\)")
_SUFFIXES = ("", *(s for group in BY_FORMAT.values() for s in group))
_HEAD_BYTES = 4096  # a chunk file's first frontmatter is far shorter


def resolve(text: str, source_path: str, root: Path, memo: dict[str, str | None]) -> str:
    """`text` with each `[words](:target)` as the target doc's title (else its words).
    `memo` keeps titles found (per index: the same tree answers the same)."""
    if "](:" not in text:
        return text

    def title(m: re.Match[str]) -> str:
        for path in candidates(source_path, m.group(2)):
            if path not in memo:
                memo[path] = _first_title(root / doc_chunk_file(path))
            if memo[path]:
                return memo[path] or m.group(1)
        return m.group(1)

    return _LINK.sub(title, text)


def candidates(source_path: str, target: str) -> list[str]:
    """Source paths a `:doc:` target may name, from the doc that names it: relative to its
    folder, or (a leading `/`) to the Sphinx source folder, one of its ancestors (nearest
    first), each with every doc suffix."""
    here = PurePosixPath(source_path).parent
    if target.startswith("/"):
        bases = [here, *here.parents]
        target = target.lstrip("/")
    else:
        bases = [here]
    out: list[str] = []
    for base in bases:
        parts: list[str] = []
        for part in (*base.parts, *target.split("/")):
            if part == "..":
                if not parts:
                    break
                parts.pop()
            elif part not in ("", "."):
                parts.append(part)
        else:
            stem = "/".join(parts)
            if stem and not stem.startswith(".neocortex/"):
                out.extend(stem + s for s in _SUFFIXES)
    return out


def _first_title(chunk_file: Path) -> str | None:
    """The first heading of a doc's trail, from its chunk file's first frontmatter."""
    # As ncx reads its units: a link in a chunk file's place is not followed (it may point
    # anywhere), nor is anything but a regular file opened to wait on (a FIFO).
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        if os.path.islink(chunk_file):
            return None
        fd = os.open(chunk_file, flags)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            head = os.read(fd, _HEAD_BYTES).decode("utf-8", "replace")
        finally:
            os.close(fd)
    except OSError:
        return None
    lines = head.split("\n")
    try:
        i = lines.index("source_section:")
    except ValueError:
        return None
    item = lines[i + 1] if i + 1 < len(lines) else ""
    return _scalar(item[2:]) if item.startswith("- ") else None


def _scalar(raw: str) -> str | None:
    """A one-line YAML scalar as ncx writes a section title: plain, 'single' or "double"."""
    raw = raw.strip()
    if raw.startswith("'") and raw.endswith("'") and len(raw) >= 2:
        return raw[1:-1].replace("''", "'") or None
    if raw.startswith('"'):
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, str) and value else None
    return raw or None
