"""links: the code a doc chunk or a memory names, found in the code index. Pure.

A text links to a file when it writes the file's path, and to a definition when it writes the
definition's name as code (`Session.send`, `read_parquet()`) or as an identifier no prose word
looks like (snake_case, camelCase, dotted). A name defined in more than MAX_DEFINERS places
names none of them. `ncx retrieve --explain` shows a hit's links; a frame lifts the
definitions its best sections link to (the docs lend the code their words), and they are what
a staleness check of knowledge against code starts from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ncx.code.index import CodeIndex
from ncx.code.rank import IDENTIFIER

MAX_DEFINERS = 3
_BACKTICKED = re.compile(r"`([^`\n]{2,120})`")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_IDENT = IDENTIFIER
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]{1,5})(?::\d+(?:-\d+)?)?(?![\w/])")


@dataclass(frozen=True)
class Link:
    path: str
    qualname: str  # "" for a link to the file
    start: int
    end: int
    unit: int

    def label(self) -> str:
        return f"{self.path}:{self.start}-{self.end} {self.qualname}".rstrip()


def links(idx: CodeIndex, text: str) -> list[Link]:
    """The files and definitions `text` names, in the order it names them."""
    if idx.empty:
        return []
    out: dict[int, Link] = {}
    files = {p: i for i, p in enumerate(idx.files)}
    for m in _PATH.finditer(text):
        f = files.get(m.group(1).lstrip("./"))
        if f is not None:
            u = int(idx.file_unit(f))
            out.setdefault(u, Link(idx.files[f], "", int(idx.start[u]), int(idx.end[u]), u))
    quoted = [m.group(1).strip().removesuffix("()") for m in _BACKTICKED.finditer(text)]
    dotted = [q for q in quoted if _DOTTED.fullmatch(q)]
    wanted = [*dotted, *(n for n in _IDENT.findall(text) if n not in dotted)]
    for name in dict.fromkeys(wanted):
        units = idx.defining(name.rsplit(".", 1)[-1])
        if "." in name:  # `Session.send`: the definitions whose qualified name ends so
            tail = "." + name.lower()
            units = [u for u in units if ("." + idx.unit(u).qualname.lower()).endswith(tail)]
        if 0 < len(units) <= MAX_DEFINERS:
            for u in units:
                cu = idx.unit(u)
                out.setdefault(u, Link(cu.path, cu.qualname, cu.start, cu.end, u))
    return list(out.values())
