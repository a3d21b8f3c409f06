"""view: a source file seen as markdown, with a map back to the file's own lines. Pure.

Every reader produces one. Chunk files hold the view's text (so frames read the same
whatever the source format); citations go through `lines` to the file as stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

Line = tuple[str, int]  # (view text, 1-based line of the source it comes from)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


_FENCE_OPEN = re.compile(r"^\s{0,3}(`{3,}|~{3,})")  # a code fence as MyST and MDX open one
_FENCE_ANY = re.compile(r"^[ \t]*(`{3,}|~{3,})")  # ... or indented (a list item, a content tab)


_OPENS = re.compile(r"(`{3,})[^`]*|(~{3,}).*")  # CommonMark: a backtick fence's info holds none


def fence_opened(line: str) -> str | None:
    """The fence a line opens, stripped of its indent (3+ backticks whose info string holds
    no backtick, or 3+ tildes), or None: "```cf login --sso```" on one line is inline code,
    not a block that runs to the end of the text."""
    m = _OPENS.fullmatch(line.strip())
    return None if m is None else m.group(1) or m.group(2)


def closes(line: str, fence: str) -> bool:
    """Whether `line` closes a code fence opened by `fence` (same character, as long)."""
    s = line.strip()
    return len(s) >= len(fence) and s == fence[0] * len(s)


def copy_fence(lines: list[Line], i: int, out: list[Line], *, indented: bool = False) -> int | None:
    """If lines[i] opens a code fence, copy it as is through its closing line into `out` and
    return the index after it; None if it does not open one. `indented`: a fence indented
    any depth counts too (in a list item or a content tab)."""
    f = (_FENCE_ANY if indented else _FENCE_OPEN).match(lines[i][0])
    if f is None:
        return None
    fence = f.group(1)
    out.append(lines[i])
    i += 1
    while i < len(lines):
        out.append(lines[i])
        i += 1
        if closes(lines[i - 1][0], fence):
            break
    return i


@dataclass(frozen=True, slots=True)
class View:
    text: str
    lines: tuple[int, ...] | None = None  # source line of each view line; None: the same line
    cells: tuple[int, ...] | None = None  # notebook cell (1-based) of each view line

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """View lines start..end (1-based, inclusive) as source lines."""
        if self.lines is None or not self.lines:
            return start, end
        last = len(self.lines)
        a = self.lines[min(max(start, 1), last) - 1]
        b = self.lines[min(max(end, 1), last) - 1]
        return a, max(a, b)

    def cell_span(self, start: int, end: int) -> str | None:
        """`7` or `7-9`: the notebook cells view lines start..end come from."""
        if self.cells is None or not self.cells:
            return None
        last = len(self.cells)
        a = self.cells[min(max(start, 1), last) - 1]
        b = self.cells[min(max(end, 1), last) - 1]
        return str(a) if a == b else f"{a}-{b}"


def build(lines: Iterable[Line], cells: Iterable[int] | None = None) -> View:
    """The view of these lines; runs of blank lines outside code fences (left where markup
    was dropped) become one."""
    pairs = list(lines)
    owners = None if cells is None else list(cells)
    keep: list[int] = []
    fence = ""
    for i, (t, _) in enumerate(pairs):
        m = _FENCE.match(t)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
        elif m:
            fence = m.group(1)
        elif not t.strip() and (not keep or not pairs[keep[-1]][0].strip()):
            continue  # a blank after a blank (or at the start)
        keep.append(i)
    if not keep:
        return View("")
    return View(
        text="\n".join(pairs[i][0] for i in keep),
        lines=tuple(pairs[i][1] for i in keep),
        cells=None if owners is None else tuple(owners[i] for i in keep),
    )


def numbered(text: str, first: int = 1) -> list[Line]:
    return [(t, first + i) for i, t in enumerate(text.split("\n"))]


def dedent(lines: list[Line]) -> list[Line]:
    """Remove the common indent of the non-blank lines."""
    widths = [len(t) - len(t.lstrip()) for t, _ in lines if t.strip()]
    cut = min(widths) if widths else 0
    return [(t[cut:] if t.strip() else "", n) for t, n in lines]


# Directives nest by recursion (a directive's content is read by the reader that read it).
# Past this depth the content is kept as its plain text: no real doc nests so deep, and a
# doc nested 500 deep must neither exhaust Python's stack nor cost depth x lines.
MAX_NESTING = 24


def as_text(lines: list[Line]) -> list[Line]:
    """Content nested past MAX_NESTING: its lines as they are, less their common indent (so
    markdown does not read them as an indented code block)."""
    return dedent(lines)


def trim_blank(lines: list[Line]) -> list[Line]:
    a, b = 0, len(lines)
    while a < b and not lines[a][0].strip():
        a += 1
    while b > a and not lines[b - 1][0].strip():
        b -= 1
    return lines[a:b]


def fenced(lang: str, body: list[Line], at: int) -> list[Line]:
    """A fenced code block around `body`; fence lines cite the body's first/last line."""
    body = trim_blank(dedent(body))
    if not body:
        return []
    longest = max((len(t) - len(t.lstrip("`")) for t, _ in body), default=0)
    fence = "`" * max(3, longest + 1)
    return [
        ("", at),
        (fence + lang, body[0][1]),
        *body,
        (fence, body[-1][1]),
        ("", body[-1][1]),
    ]
