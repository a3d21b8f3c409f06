"""myst: markdown with MyST syntax -> plain markdown view. Pure, stdlib only.

`(label)=` target lines are dropped; ```` ```{directive} ```` and `:::{directive}` fences
become their content (code directives fenced code, admonitions a bold label, `eval-rst`
read as reST, toctree dropped); `{ref}`text <target>`` roles read as `text`. Plain
markdown passes through untouched, and so does everything inside ordinary code fences.
"""

from __future__ import annotations

import functools
import re

from ncx.sources.directives import directive
from ncx.sources.roles import render_myst_inline
from ncx.sources.view import (
    MAX_NESTING,
    Line,
    View,
    as_text,
    build,
    closes,
    copy_fence,
    dedent,
    numbered,
)

_DIRECTIVE = re.compile(r"^(\s{0,3})(`{3,}|:{3,})\{([A-Za-z][\w:+.-]*)\}\s*(.*)$")
_ANY_DIRECTIVE = re.compile(r"^\s{0,3}(?:`{3,}|:{3,})\{", re.MULTILINE)
# A label line, `(label)=` (ncx.query.doclinks lists a tree's with it too).
LABEL = re.compile(r"^\s{0,3}\(([^()\s]+)\)=\s*$")
# The first visible character of every line the loop below rewrites, drops or fences
# (_DIRECTIVE, a code fence, LABEL); a line without one and without a role ("}`") is copied.
_LEADS = frozenset("`:~(")


def is_myst(text: str) -> bool:
    """Cheap test: does the text use any MyST syntax this reader rewrites?"""
    return ")=" in text or "}`" in text or _ANY_DIRECTIVE.search(text) is not None


_ATX = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
# A code fence, not a ```{directive} (whose content is text).
_CODE_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})(?![`~{])")


def read_myst(text: str, lines: list[Line] | None = None) -> View:
    """`lines`: the text's lines with its includes spliced in (ncx.sources.includes)."""
    if lines is not None:
        joined = "\n".join(t for t, _ in lines)
        if not is_myst(joined):
            return View(joined, tuple(n for _, n in lines))
        return build(render_myst(lines))
    if not is_myst(text):
        return View(text)
    lines = numbered(text)
    return build(render_myst(lines, titles=label_titles([t for t, _ in lines])))


def label_titles(lines: list[str]) -> dict[str, str]:
    """The file's `(label)=` targets (lower case) that stand before a heading -> its text:
    a bare `{ref}`label`` reads as it (labels of other files keep their words)."""
    out: dict[str, str] = {}
    pending: list[str] = []
    fence = ""  # the code fence open, if any: a label quoted in it is code, not a label
    opened: list[str] = []  # the directive fences open (their content is text)
    for t in lines:
        if fence:
            fence = "" if closes(t, fence) else fence
            continue
        if "``" in t or "~~" in t or "::" in t:
            d = _DIRECTIVE.match(t)
            if d or (opened and closes(t, opened[-1])):
                if d:
                    opened.append(d.group(2))
                else:
                    opened.pop()
                pending = []
                continue
            f = _CODE_FENCE.match(t)
            if f:
                fence, pending = f.group(1), []
                continue
        m = LABEL.match(t)
        if m:
            pending.append(m.group(1).lower())
            continue
        if not t.strip():
            continue
        h = _ATX.match(t)
        if h and h.group(1):
            for label in pending:
                out.setdefault(label, render_myst_inline(h.group(1)))
        pending = []
    return out


def render_myst(
    lines: list[Line], depth: int = 0, titles: dict[str, str] | None = None
) -> list[Line]:
    """The view lines of MyST `lines`; `depth`: how many directives they sit inside;
    `titles`: the file's labels and the headings they stand before (label_titles)."""
    if depth > MAX_NESTING:
        return as_text(lines)
    out: list[Line] = []
    n = len(lines)
    i = 0
    while i < n:
        t, ln = lines[i]
        if t.lstrip()[:1] not in _LEADS and "}`" not in t:
            out.append(lines[i])  # most lines: three regexes and the role pass skipped
            i += 1
            continue
        d = _DIRECTIVE.match(t)
        if d:
            fence = d.group(2)
            j = i + 1
            while j < n and not closes(lines[j][0], fence):
                j += 1
            body = lines[i + 1 : j]
            end_ln = lines[j][1] if j < n else (body[-1][1] if body else ln)
            if d.group(3).lower() == "eval-rst":
                from ncx.sources.rst import _Reader

                out.extend(_Reader(depth + 1).block(dedent(body)))
            else:
                out.extend(
                    directive(
                        d.group(3),
                        d.group(4).strip(),
                        body,
                        ln,
                        functools.partial(render_myst, depth=depth + 1, titles=titles),
                        functools.partial(render_myst_inline, titles=titles),
                    )
                )
            if out and out[-1][0]:
                out.append(("", end_ln))
            i = j + 1
            continue
        after = copy_fence(lines, i, out)  # an ordinary code fence: copied as is
        if after is not None:
            i = after
            continue
        if LABEL.match(t):
            i += 1
            continue
        out.append((render_myst_inline(t, titles), ln))
        i += 1
    return out
