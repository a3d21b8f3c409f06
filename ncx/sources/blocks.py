"""blocks: pymdownx's generic blocks (`/// tip | Title` ... `///`) in a markdown view. Pure.

MkDocs Material sites (FastAPI, sqlmodel) write their admonitions, details and tabs this way.
The header becomes the bold lead a frame gives a directive (`**tip** Title`, as
ncx.query.quote.tidy renders one in a chunk made before this reader), its indented option
lines (`    type: warning`) go, and the closing `///` becomes a blank line; every view line
keeps the source line it came from, so citations are unchanged. Code fences are copied as
they are (a Rust doc comment is `/// text`, and a guide may quote a block).

Python-Markdown's admonitions (`!!! note "Title"`) and pymdownx.details' collapsible ones
(`??? tip`, `???+ tip`), whose body is the indented lines under the header, read the same way:
the bold lead, then the body without its 4-space indent (so a fence in it is code again, as in
the built page). Extra classes after the type (`inline end`) are layout; `""` is no title.
"""

from __future__ import annotations

import re

from ncx.sources.view import MAX_NESTING, Line, copy_fence

_OPEN = re.compile(r"^ {0,3}(/{3,})[ \t]*([\w-]+)[ \t]*(?:\|[ \t]*(.*?))?[ \t]*$")
_CLOSE = re.compile(r"^ {0,3}(/{3,})[ \t]*$")
_ANY = re.compile(r"^ {0,3}/{3,}[ \t]*[\w-]+[ \t]*(?:\|.*)?$", re.MULTILINE)
_OPTION = re.compile(r"^(?: {4}|\t)[\w-]+:")
_ADMONITION = re.compile(
    r"^([ \t]*)(?:!!!|\?\?\?\+?)[ \t]+([\w-]+)((?:[ \t]+[\w-]+)*)(?:[ \t]+\"(.*)\")?[ \t]*$"
)
_ANY_ADMONITION = re.compile(r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]+[\w-]+", re.MULTILINE)


def has_blocks(text: str) -> bool:
    return ("///" in text and _ANY.search(text) is not None) or (
        ("!!!" in text or "???" in text) and _ANY_ADMONITION.search(text) is not None
    )


def render_blocks(lines: list[Line], depth: int = 0) -> list[Line]:
    out: list[Line] = []
    opened: list[int] = []  # slash counts of the blocks open (nested ones use more)
    i, n = 0, len(lines)
    while i < n:
        # (indented too: a fence in a list item or a content tab quotes its `!!!` as code)
        after = copy_fence(lines, i, out, indented=True)
        if after is not None:
            i = after
            continue
        t, ln = lines[i]
        a = _ADMONITION.match(t) if "!!!" in t or "???" in t else None
        if a and depth < MAX_NESTING:  # (deeper ones stay as written: no recursion limit hit)
            i = _admonition(lines, i, a, out, depth)
            continue
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


def _admonition(lines: list[Line], i: int, a: re.Match[str], out: list[Line], depth: int) -> int:
    """Render the admonition whose header is lines[i] into `out`; the index after its body.
    Its body (lines indented past the header's, and blank lines between them) is rendered
    too, dedented, so admonitions and blocks nested in it are read as well."""
    indent, name, title = a.group(1), a.group(2), (a.group(4) or "").strip()
    out.append((f"{indent}**{name}**" + (f" {title}" if title else ""), lines[i][1]))
    body: list[Line] = []
    j, n = i + 1, len(lines)
    deeper = (indent + "    ", indent + "\t")
    while j < n:
        t, ln = lines[j]
        if t.strip() == "":
            body.append(("", ln))
        elif t.startswith(deeper):
            body.append((indent + t[len(indent) + (1 if t[len(indent)] == "\t" else 4) :], ln))
        else:
            break
        j += 1
    while body and body[-1][0] == "" and j < n:
        body.pop()  # blank lines before the next block are the page's, not the body's
        j -= 1
    out.extend(render_blocks(body, depth + 1))
    return j
