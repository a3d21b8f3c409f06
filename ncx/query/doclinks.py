"""doclinks: a bare reST/MyST `:doc:` or `:ref:` reference shown as its target's title.

A reader sees one file, so it keeps a bare `:doc:`/blueprints`` as `[blueprints](:/blueprints)`
(ncx.sources.roles). Here, where a chunk's text is read back, the link becomes the title of the
doc it names ("Modular Applications with Blueprints"), as the built site shows it; a target that
names no indexed doc keeps its words. The title is read from the target's own chunk file (its
first chunk's section trail), not from the cache: a quick index holds only some docs, and the
first frame of a fresh clone must read as every later one does.

A bare `:ref:` to a label of another file is kept as `[words](:#label)`: the first time a chunk
shown holds one, one `git grep` lists the label lines of the tree's docs (reST `.. _label:`,
MyST `(label)=`, any case, as Sphinx matches them), and only the file that holds a label
shown is read, by the readers' own `label_titles`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from ncx.layout import doc_chunk_file
from ncx.suffixes import BY_FORMAT, pathspecs

_LINK = re.compile(r"\[([^\]\n]*)\]\(:([^)\s]+)\)")
_SUFFIXES = ("", *(s for group in BY_FORMAT.values() for s in group))
_HEAD_BYTES = 4096  # a chunk file's first frontmatter is far shorter


def resolve(text: str, source_path: str, root: Path, memo: dict[str, Any]) -> str:
    """`text` with each `[words](:target)` as the target doc's title (else its words).
    `memo` keeps titles found (per index: the same tree answers the same)."""
    if "](:" not in text:
        return text

    def title(m: re.Match[str]) -> str:
        if m.group(2).startswith("#"):
            return _label_title(root, m.group(2)[1:], memo) or m.group(1)
        for path in candidates(source_path, m.group(2)):
            if path not in memo:
                memo[path] = _first_title(root / doc_chunk_file(path))
            if memo[path]:
                return memo[path] or m.group(1)
        return m.group(1)

    return _LINK.sub(title, text)


def _label_title(root: Path, label: str, memo: dict[str, Any]) -> str | None:
    """The title the tree's label `label` stands before (the first file holding it, in path
    order), or None."""
    key = "\0#" + " ".join(label.split()).lower()  # (no path holds a NUL: no doc title's key)
    if key not in memo:
        memo[key] = None
        from ncx.config import load_config
        from ncx.errors import NcxError
        from ncx.store import open_regular, source_text

        cap = load_config().max_doc_bytes  # (a doc sync refuses is not read whole here either)
        for path in _label_files(root, memo).get(key[2:], ()):
            try:
                with open_regular(root / path) as f:
                    if os.fstat(f.fileno()).st_size > cap:
                        continue
                    lines = source_text(f.read()).split("\n")
            except OSError:
                continue
            if path.lower().endswith(BY_FORMAT["rst"]):
                from ncx.sources.rst import label_titles
            else:
                from ncx.sources.myst import label_titles
            try:
                found = label_titles(lines).get(key[2:])
            except NcxError:
                continue
            if found:
                memo[key] = found
                break
    title: str | None = memo[key]
    return title


def _label_files(root: Path, memo: dict[str, Any]) -> dict[str, list[str]]:
    """{label (lower case): the docs that define it, in path order}: one `git grep` of the
    tracked reST and Markdown docs, the first time a frame shows a reference to another
    file's label."""
    found = memo.get("\0labels")
    if found is None:
        from ncx import repo
        from ncx.errors import NcxError
        from ncx.sources.myst import LABEL
        from ncx.sources.rst import TARGET

        # Fixed strings, each line then matched by the readers' own patterns (the lines
        # `label_titles` reads a title after): a regex grep was 2.2 s
        # of a 20,000-doc tree (157 MB), these 0.3 s.
        fixed = [".. _", "..  _", "..\t_", ")="]
        try:
            out = repo.git(
                root,
                *repo.GREP,
                "-z",
                "-I",
                "-F",
                *(a for f in fixed for a in ("-e", f)),
                "--",
                *pathspecs("rst", "markdown"),
                check=False,
            )
        except NcxError:
            out = b""
        sets: dict[str, set[str]] = {}
        for rec in out.decode("utf-8", "surrogateescape").split("\n"):
            path, _, line = rec.partition("\0")
            m = (TARGET.match(line) or LABEL.match(line)) if line else None
            if m and not path.startswith(".neocortex/"):
                label = " ".join(m.group(1).split()).lower()
                sets.setdefault(label, set()).add(path)  # (a set: one label in 20,000 files)
        memo["\0labels"] = found = {k: sorted(v) for k, v in sets.items()}
    return found


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
