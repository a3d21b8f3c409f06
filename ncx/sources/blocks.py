"""blocks: pymdownx's generic blocks (`/// tip | Title` ... `///`) in a markdown view. Pure.

MkDocs Material sites (FastAPI, sqlmodel) write their admonitions, details and tabs this way.
The header becomes the bold lead a frame gives a directive (`**tip** Title`, as
ncx.query.assembler.tidy renders one in a chunk made before this reader), its indented option
lines (`    type: warning`) go, and the closing `///` becomes a blank line; every view line
keeps the source line it came from, so citations are unchanged. Code fences are copied as
they are (a Rust doc comment is `/// text`, and a guide may quote a block).
"""

from __future__ import annotations

import re

from ncx.sources.view import Line, copy_fence

_OPEN = re.compile(r"^ {0,3}(/{3,})[ \t]*([\w-]+)[ \t]*(?:\|[ \t]*(.*?))?[ \t]*$")
_CLOSE = re.compile(r"^ {0,3}(/{3,})[ \t]*$")
_ANY = re.compile(r"^ {0,3}/{3,}[ \t]*[\w-]+[ \t]*(?:\|.*)?$", re.MULTILINE)
_OPTION = re.compile(r"^(?: {4}|\t)[\w-]+:")


def has_blocks(text: str) -> bool:
    return "///" in text and _ANY.search(text) is not None


def render_blocks(lines: list[Line]) -> list[Line]:
    out: list[Line] = []
    opened: list[int] = []  # slash counts of the blocks open (nested ones use more)
    i, n = 0, len(lines)
    while i < n:
        after = copy_fence(lines, i, out)
        if after is not None:
            i = after
            continue
        t, ln = lines[i]
        m = _OPEN.match(t) if "///" in t else None
        if m:
            name, title = m.group(2), (m.group(3) or "").strip()
            out.append((f"**{name}**" + (f" {title}" if title else ""), ln))
            opened.append(len(m.group(1)))
            i += 1
            while i < n and _OPTION.match(lines[i][0]):
                i += 1  # the block's YAML options: settings for the page, not text
            continue
        c = _CLOSE.match(t) if opened and "///" in t else None
        if c and len(c.group(1)) in opened:
            del opened[opened.index(len(c.group(1))) :]
            out.append(("", ln))
            i += 1
            continue
        out.append(lines[i])
        i += 1
    return out
