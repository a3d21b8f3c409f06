"""roles: Sphinx/MyST inline roles rendered as readable markdown. Pure.

`:ref:`text <target>`` and `{ref}`text <target>`` read as `text` (a bare one as the title its
label stands before: in the file, here; in another file, where chunks are read, by
ncx.query.doclinks); code-like roles
(`:func:`x``, `:class:`~a.B``) as `` `x` `` / `` `B` ``; a reST link `` `text <url>`_ `` as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

_RST_ROLE = re.compile(r":((?:[A-Za-z][\w+.-]*:)?[A-Za-z][\w+.-]*):`([^`]*)`")
_MYST_ROLE = re.compile(r"\{([A-Za-z][\w:+.-]*)\}`([^`]*)`")
_RST_LINK = re.compile(r"(?<!`)`([^`<]*?)\s*<[^`>]*>`__?|(?<!`)`([^`]+)`__?(?![\w`])")
_TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.DOTALL)
_CODE_ROLES = frozenset(
    """func meth class mod attr obj data exc const enum type member var macro
    code literal command file program envvar option kbd samp regexp makevar mailheader
    mimetype newsgroup manpage""".split()
)


# A bare `:doc:` target kept for the query side, which knows every doc's title (a reader of
# one file does not): `[words](:target)`, read back by ncx.query.doclinks (a leading `:`, no
# scheme word: nothing for the index to count as a word of the chunk). A bare `:ref:` to a
# label of another file is kept the same way, as `[words](:#label)`.
_DOC_TARGET = re.compile(r"[\w./~+-]+")
_REF_TARGET = re.compile(r"[\w.:+-]+")
_LINK = re.compile(r"\[([^\]\n]*)\]\(:[^)\s]+\)")


def without_link_targets(text: str) -> str:
    """`text` with each `[words](:target)` as its words: what is embedded and indexed, as
    the reader gave it before it kept targets. A target is an address for the query side,
    not words of the chunk: counted, a label's words weighed twice and moved rankings
    (raydocs: one section question lost its frame)."""
    return _LINK.sub(r"\1", text) if "](:" in text else text


def _role(
    name: str, content: str, titles: Mapping[str, str] | None = None, links: bool = False
) -> str:
    short = name.rsplit(":", 1)[-1]
    code = short in _CODE_ROLES or name.startswith(("py:", "c:", "cpp:", "js:"))
    m = _TITLED.match(content)
    if m and m.group(1):
        text = m.group(1)
    else:
        text = m.group(2) if m else content
        if code and text.startswith("~"):
            text = text[1:].rsplit(".", 1)[-1]
        text = text.lstrip("!~")
        if short == "ref" and titles and text.lower() in titles:
            # a label of this file: the title it stands before, what Sphinx shows
            return titles[text.lower()]
        if short in ("ref", "doc") and text:
            # a bare label or path: its last part as words (`app-factories` -> app factories),
            # what a reader would call it, not an anchor to look up
            target = text
            text = text.rstrip("/").rsplit("/", 1)[-1].replace("-", " ").replace("_", " ")
            if links and short == "doc" and text and _DOC_TARGET.fullmatch(target):
                return f"[{text}](:{target})"
            if links and short == "ref" and text and _REF_TARGET.fullmatch(target):
                return f"[{text}](:#{target})"
    if not text:
        return ""
    return f"`{text}`" if code else text


def _code_spans(line: str) -> list[tuple[int, int]]:
    """The code spans of a line, (start, end) offsets, as CommonMark finds them: a run of
    backticks opens one that the next run of the same length closes; an unclosed run, or
    one a backslash escapes, is literal. (An RST ``literal`` is a run of two.)"""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(line) if not _escaped(line, m.start())]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        a, b = runs[i]
        j = next((k for k in range(i + 1, len(runs)) if runs[k][1] - runs[k][0] == b - a), None)
        if j is None:
            i += 1
            continue
        spans.append((a, runs[j][1]))
        i = j + 1
    return spans


def _escaped(line: str, at: int) -> bool:
    """An odd number of backslashes stands right before `at`."""
    k = at
    while k > 0 and line[k - 1] == "\\":
        k -= 1
    return (at - k) % 2 == 1


_TICKS = re.compile(r"`+")


def _roles_outside_code(
    pattern: re.Pattern[str], line: str, render: Callable[[re.Match[str]], str]
) -> str:
    """`pattern`'s matches in `line` rendered, but for one that starts inside a code span:
    a role's marker is markup only outside code (chi's README wrote `` `/users/{userID}` and
    `/admin/*` ``, and `{userID}` followed by a backtick read as a MyST role: the chunk said
    `` `/users/ and /admin/*` ``). A match that starts inside a span is looked for again
    from the span's end, so a role after it is still found."""
    m = pattern.search(line)
    if m is None:
        return line
    spans = _code_spans(line)
    out: list[str] = []
    pos = 0
    while m is not None:
        inside = next(((a, b) for a, b in spans if a < m.start() < b), None)
        if inside is not None:
            out.append(line[pos : inside[1]])
            pos = inside[1]
        else:
            out.append(line[pos : m.start()])
            out.append(render(m))
            pos = m.end()
        m = pattern.search(line, pos)
    out.append(line[pos:])
    return "".join(out)


def render_rst_inline(
    line: str, titles: Mapping[str, str] | None = None, *, links: bool = False
) -> str:
    """`line` with its roles and links as a reader reads them; `titles` maps the labels of
    the file (lower case) to the titles they stand before, for a bare `:ref:`label``. With
    `links` (the readers), a bare `:doc:` becomes `[words](:target)` for the query side
    to show as the target's title."""
    if "`" not in line:
        return line
    line = _roles_outside_code(
        _RST_ROLE, line, lambda m: _lines_kept(m, _role(m.group(1), m.group(2), titles, links))
    )
    return _RST_LINK.sub(lambda m: _lines_kept(m, m.group(1) or m.group(2) or ""), line)


def _lines_kept(m: re.Match[str], text: str) -> str:
    """A role or link's rendering, as many lines as it spanned (a reader renders a role that
    breaks over lines on their joined text, then maps each line back to its own)."""
    missing = m.group(0).count("\n") - text.count("\n")
    return text + "\n" * missing if missing > 0 else text


def render_myst_inline(line: str, titles: Mapping[str, str] | None = None) -> str:
    if "}`" not in line:
        return line
    return _roles_outside_code(
        _MYST_ROLE, line, lambda m: _role(m.group(1), m.group(2), titles, links=True)
    )
