"""mdx: MDX (markdown with JSX, as Docusaurus sites write it) -> markdown view. Pure.

`import`/`export` lines, JSX wrapper tags and `{/* comments */}` are dropped; the markdown
between them is kept, and a wrapper's `label`/`title` (a tab's name) becomes a bold line.
Code fences pass through untouched.
"""

from __future__ import annotations

import re

from ncx.sources.view import Line, View, build, copy_fence, numbered

_IMPORT = re.compile(r"^(import\s.*(\sfrom\s|['\"];?\s*$)|import\s*\{|export\s)")
_TAG_LINE = re.compile(r"^\s*(<[A-Za-z][\w.:-]*(\s[^<>]*)?/?>|</[A-Za-z][\w.:-]*\s*>)\s*$")
_TAG_OPEN = re.compile(r"^\s*<[A-Z][\w.]*(\s[^<>]*)?$")  # a tag whose attributes run on
_COMMENT = re.compile(r"\{/\*.*?\*/\}")
_LABEL = re.compile(r"\b(?:label|title)=(?:\"([^\"]*)\"|'([^']*)'|\{[\"']([^\"']*)[\"']\})")


def read_mdx(text: str) -> View:
    return build(render_mdx(numbered(text)))


def render_mdx(lines: list[Line]) -> list[Line]:
    out: list[Line] = []
    n = len(lines)
    i = 0
    while i < n:
        t, ln = lines[i]
        after = copy_fence(lines, i, out)
        if after is not None:
            i = after
            continue
        if _IMPORT.match(t):
            # A multi-line import or export runs to the next blank line.
            while i < n and lines[i][0].strip():
                i += 1
            continue
        if _TAG_OPEN.match(t):
            j = i
            tag = t
            while j + 1 < n and ">" not in lines[j][0]:
                j += 1
                tag += " " + lines[j][0].strip()
            out.extend(_label(tag, ln))
            i = j + 1
            continue
        if _TAG_LINE.match(t):
            out.extend(_label(t, ln))
            i += 1
            continue
        if "{/*" in t:
            t = _COMMENT.sub("", t)
            if not t.strip():
                i += 1
                continue
        out.append((t, ln))
        i += 1
    return out


def _label(tag: str, ln: int) -> list[Line]:
    m = _LABEL.search(tag)
    if m and not tag.lstrip().startswith("</"):
        name = next(g for g in m.groups() if g is not None)
        return [("", ln), (f"**{name}**", ln), ("", ln)] if name.strip() else []
    return [("", ln)]
