"""rst: reStructuredText -> markdown view, line by line. Pure, stdlib only.

Sections come from underline/overline titles (levels by first appearance of each
adornment style, as docutils does); prose is kept with roles rendered readably;
`code-block`/`::` literal blocks become fenced code; admonitions become a bold label and
their text; toctree, comments, label targets and substitution definitions are dropped.

Why not docutils (measured on raydocs-native: Ray's doc/source, 350 files, 2.1 MB of reST):
this reader takes 0.4-0.6 s for all of them, docutils 0.23's parser 8.6-8.9 s; both find the same
section titles in 343 of the 350 files (the 7 others: titles inside Sphinx-only directives,
whose content docutils drops). Without Sphinx, docutils knows none of Sphinx's directives and
roles: 1,401 unknown-directive and 3,660 unknown-role errors on that tree, each replacing the
content with an error node, which is worse text for an index; with Sphinx it would be a heavy
dependency that needs the project's conf.py. Broken markup never raises here: a line this
reader does not understand is kept as text.
"""

from __future__ import annotations

import re

from ncx.sources.directives import directive
from ncx.sources.roles import render_rst_inline
from ncx.sources.view import MAX_NESTING, Line, View, as_text, build, fenced, numbered

_ADORN = re.compile(r"^([!-/:-@\[-`{-~])\1+\s*$")
_DIRECTIVE = re.compile(r"^\.\.\s+([A-Za-z][\w:+.-]*)::(?:\s+(.*))?$")
_ATX_LIKE = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_PAGE_FIELD = re.compile(r"^:(orphan|nosearch|nocomments|tocdepth|html_theme[\w.-]*):")


# A label target line, `.. _label:` (ncx.query.doclinks lists a tree's with it too).
TARGET = re.compile(r"^\.\.\s+_([^:`\s][^:`]*):\s*$")


def read_rst(text: str, lines: list[Line] | None = None) -> View:
    """`lines`: the text's lines with its includes spliced in (ncx.sources.includes)."""
    lines = numbered(text) if lines is None else lines
    titles = label_titles([t for t, _ in lines]) if ".. _" in text else {}
    return build(_Reader(titles=titles).block(lines))


def label_titles(lines: list[str]) -> dict[str, str]:
    """The file's `.. _label:` targets (lower case, as Sphinx compares them) that stand
    before a section title -> that title, rendered: a bare `:ref:`label`` reads as it.
    Labels of other files are not known to a reader of one file (they keep their words).
    One pass: a run of targets is read once, whatever its length."""
    out: dict[str, str] = {}
    n = len(lines)
    i = 0
    while i < n:
        m = TARGET.match(lines[i]) if lines[i].startswith("..") else None
        if m is None:
            i += 1
            continue
        labels = []
        j = i  # the run of targets (and blank lines) up to what they stand before
        while j < n and (not lines[j].strip() or TARGET.match(lines[j])):
            t = TARGET.match(lines[j])
            if t:
                labels.append(" ".join(t.group(1).split()).lower())
            j += 1
        if j < n:
            s, nxt = lines[j].strip(), lines[j + 1].strip() if j + 1 < n else ""
            title = None
            if _is_adornment(s) and j + 2 < n and nxt and not _is_adornment(nxt):
                title = nxt  # overlined
            elif not lines[j][:1].isspace() and not _is_adornment(s):
                title = s if _is_adornment(nxt, min(3, len(s))) else None  # underlined
            if title:
                for label in labels:
                    out.setdefault(label, render_rst_inline(title))
        i = j
    return out


_SPAN_LINES = 4  # a role or link broken over more lines than this is left line by line
_LITERAL = re.compile(r"``.*?``")


def _open_backticks(t: str) -> int:
    """Single backticks of a line, inline literals (``x``) aside."""
    return _LITERAL.sub("", t).count("`") if "`" in t else 0


def _indent(t: str) -> int:
    return len(t) - len(t.lstrip())


def _is_adornment(s: str, at_least: int = 3) -> bool:
    return len(s) >= at_least and _ADORN.match(s) is not None


class _Reader:
    def __init__(self, depth: int = 0, titles: dict[str, str] | None = None) -> None:
        self.styles: list[tuple[str, bool]] = []  # adornment styles in order of appearance
        self.depth = depth  # how many directives the lines being read sit inside
        self.titles = titles or {}  # this file's labels -> their titles (label_titles)

    def inline(self, line: str) -> str:
        return render_rst_inline(line, self.titles, links=True)

    def nested(self, lines: list[Line]) -> list[Line]:
        """The content of a directive or footnote, read one level deeper."""
        if self.depth >= MAX_NESTING:
            return as_text(lines)
        self.depth += 1
        try:
            return self.block(lines)
        finally:
            self.depth -= 1

    def heading(self, title: str, style: tuple[str, bool], at: int) -> list[Line]:
        if style not in self.styles:
            self.styles.append(style)
        level = min(self.styles.index(style) + 1, 6)
        return [("#" * level + " " + self.inline(title.strip()), at)]

    def block(self, lines: list[Line]) -> list[Line]:
        out: list[Line] = []
        n = len(lines)
        i = 0
        prev_blank = True
        while i < n:
            t, ln = lines[i]
            s = t.strip()
            if not s:
                out.append(("", ln))
                prev_blank = True
                i += 1
                continue
            ind = _indent(t)
            if s == ".." or s.startswith(".. "):
                j = i + 1
                while j < n and (not lines[j][0].strip() or _indent(lines[j][0]) > ind):
                    j += 1
                out.extend(self.explicit(s, lines[i + 1 : j], ln))
                i = j
                prev_blank = True
                continue
            nxt = lines[i + 1][0].strip() if i + 1 < n else ""
            # Overlined title: adornment, text, the same adornment.
            if (
                ind == 0
                and _is_adornment(s)
                and i + 2 < n
                and nxt
                and not _is_adornment(nxt)
                and lines[i + 2][0].strip()[:1] == s[0]
                and _is_adornment(lines[i + 2][0].strip())
            ):
                out.extend(self.heading(nxt, (s[0], True), lines[i + 1][1]))
                out.append(("", lines[i + 2][1]))
                i += 3
                prev_blank = True
                continue
            # Underlined title: text, then an adornment at least about as long.
            if (
                ind == 0
                and prev_blank
                and not _is_adornment(s)
                and _is_adornment(nxt, min(3, len(s)))
                and len(nxt) >= min(len(s), 3)
            ):
                out.extend(self.heading(s, (nxt[0], False), ln))
                out.append(("", lines[i + 1][1]))
                i += 2
                prev_blank = True
                continue
            if _is_adornment(s, 4) and prev_blank:  # a transition: no text
                out.append(("", ln))
                i += 1
                continue
            if i < 3 and _PAGE_FIELD.match(s):  # page metadata such as :orphan:
                i += 1
                continue
            if s.endswith("::"):
                j = i + 1
                while j < n and not lines[j][0].strip():
                    j += 1
                if j < n and _indent(lines[j][0]) > ind:
                    k = j
                    while k < n and (not lines[k][0].strip() or _indent(lines[k][0]) > ind):
                        k += 1
                    lead = t.rstrip()[:-2].rstrip()
                    if lead.strip():
                        keep = lead + (":" if not t.rstrip()[:-2].endswith(" ") else "")
                        out.append((self.inline(keep), ln))
                    out.extend(fenced("", lines[j:k], ln))
                    i = k
                    prev_blank = True
                    continue
            span = self.split_span(lines, i, ind)
            if span:  # a role or link that breaks over lines: rendered on their joined text
                out.extend(span)
                i += len(span)
                prev_blank = False
                continue
            if _ATX_LIKE.match(t):  # prose that markdown would take for a heading
                t = t.replace("#", "\\#", 1)
            out.append((self.inline(t.rstrip()), ln))
            prev_blank = False
            i += 1
        return out

    def split_span(self, lines: list[Line], i: int, ind: int) -> list[Line]:
        """If lines[i] opens a role or hyperlink that closes on one of the next few lines of
        its paragraph (`` `PyPI`` / ``<https://pypi.org/>`_``), those lines rendered together,
        each kept on its own line; else []."""
        if _open_backticks(lines[i][0]) % 2 == 0:
            return []
        group = [lines[i]]
        for j in range(i + 1, min(i + _SPAN_LINES, len(lines))):
            t = lines[j][0]
            s = t.strip()
            if not s or _indent(t) != ind or _is_adornment(s) or s.startswith(".. "):
                return []
            group.append(lines[j])
            if sum(_open_backticks(g) for g, _ in group) % 2 == 0:
                text = self.inline("\n".join(g.rstrip() for g, _ in group)).split("\n")
                if len(text) != len(group):
                    return []
                return [(x, n) for x, (_, n) in zip(text, group, strict=True)]
        return []

    def explicit(self, s: str, body: list[Line], at: int) -> list[Line]:
        """`.. ` markup: a directive, or a target/substitution/comment (dropped)."""
        m = _DIRECTIVE.match(s)
        if m:
            return directive(
                m.group(1), (m.group(2) or "").strip(), body, at, self.nested, self.inline
            )
        rest = s[2:].strip()
        if rest.startswith("[") and "]" in rest:  # footnote or citation: its text stays
            first = rest[rest.index("]") + 1 :].strip()
            return [("", at), (self.inline(first), at), *self.nested(body), ("", at)]
        return []  # `.. _label:` targets, `.. |sub| ...` definitions and comments
