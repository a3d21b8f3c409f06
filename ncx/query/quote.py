"""quote: how the frame quotes a chunk: without the markup that carries nothing for a reader
(HTML comments, MyST targets, toctrees, directive fences), its headings under the frame's own,
cut at whole paragraphs, or at its best lines (a window of the lines sharing the most of the
task's terms). Pure: text in, text out. Used by ncx.query.assembler (the frame's packing),
ncx.query.context (an item's passage) and ncx.query.zone (a code lead's window).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ncx.sources.roles import render_rst_inline
from ncx.sources.view import closes, fence_opened
from ncx.tokens import count_tokens

_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)
# A comment a quote cut open (a window ending inside a PR template's guidance): the rest of
# the quote is inside it, and left in, it hid every zone after it from a markdown reader.
_OPEN_COMMENT = re.compile(r"<!--.*\Z", re.DOTALL)
_MYST_LABEL = re.compile(r"^\([\w.:-]+\)=[ \t]*$")
_DIRECTIVE = re.compile(r"^ {0,3}(:{3,})\{([\w-]+)\}[ \t]*(.*)$")
_DIRECTIVE_END = re.compile(r"^ {0,3}:{3,}[ \t]*$")
_HEADING = re.compile(r"^(#{1,6})[ \t]")
# pymdownx blocks: `/// tip | Title` ... `///` (an admonition, details, tab): read as the
# directives are, the name as a bold lead and the title kept with the body.
_BLOCK = re.compile(r"^ {0,3}/{3,}[ \t]*([\w-]+)[ \t]*(?:\|[ \t]*(.*?))?[ \t]*$")
_BLOCK_END = re.compile(r"^ {0,3}/{3,}[ \t]*$")
# A list item that is only a link into the docs themselves (not out to the web: a list of
# references is content; a list of the docs' own pages and anchors is navigation).
_LINK_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+\[[^\]]+\]\((?!https?:)[^)]*\)\s*$")
_QUOTED_MIN_LEVEL = 4  # the frame's zones are ##, its items ###: quoted headings go below


_BADGE = re.compile(r"\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)|!\[[^\]]*\]\([^)]*\)")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
# A quote that carries nothing: a bare default, a version note (reST/MkDocs field lines).
_NOTHING = re.compile(
    r"^\W*(default(s| value)?|new in( version)?|changed in( version)?|added in( version)?|"
    r"deprecated since( version)?|version ?added|version ?changed)\W*[:\s]\W*[\w.`'\"-]*\W*$",
    re.I,
)


_LABEL_ONLY = re.compile(r"^\s*\*\*[^*\n]+\*\*:?\s*$")


def ends_in_comment(text: str) -> bool:
    """Whether `text` ends inside an HTML comment (one opened and not closed): a window cut
    after it starts inside one."""
    return text.rfind("<!--") > text.rfind("-->")


def plain_heading(text: str) -> str:
    """A heading's words: badges and HTML are markup for a web page."""
    return " ".join(_TAG.sub("", _BADGE.sub("", text)).split())


def shown_trail(section: Sequence[str]) -> list[str]:
    """A heading trail as frames and `retrieve` show it: each heading plain, and a heading
    that is only markup (a README's `<img>` title) no part of it."""
    return [h for h in map(plain_heading, section) if h]


def says_nothing(text: str) -> bool:
    """A quote with nothing for the reader: a bare default or version note, or no words."""
    body = " ".join(ln for ln in text.split("\n") if ln.strip() and not _HEADING.match(ln))
    return not re.search(r"\w", body) or bool(_NOTHING.match(body.strip()))


def tidy(text: str, section: Sequence[str] = ()) -> str:
    """A chunk as the frame quotes it: without what carries nothing for the reader.

    HTML comments (template boilerplate; one left open, to the end), MyST `(label)=`
    targets, toctree blocks and directive fences go; a directive's name stays as a bold
    lead (`**note**`). Headings are
    demoted below the frame's own (#### at least), so a quoted `## Setup` can never be
    taken for a zone; leading headings that the citation's section trail already names
    go. Fenced code is left exactly as it is.
    """
    text = _OPEN_COMMENT.sub("", _COMMENT.sub("", text))
    lines = text.lstrip("\n").split("\n")
    named = {" ".join(t.split()) for t in section}
    while lines and _HEADING.match(lines[0]) and " ".join(lines[0].lstrip("#").split()) in named:
        lines.pop(0)
        while lines and not lines[0].strip():
            lines.pop(0)
    text = "\n".join(lines)
    out: list[str] = []
    fence: str | None = None
    skipping = False  # inside a ```{toctree} block
    heads: set[int] = set()  # lines of `out` that are a block's title
    for line in text.split("\n"):
        stripped = line.lstrip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
                if skipping:
                    skipping = False
                    continue
            if not skipping:
                out.append(line)
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            skipping = stripped[3:].strip().startswith("{toctree}")
            if not skipping:
                out.append(line)
            continue
        if _MYST_LABEL.match(line) or _DIRECTIVE_END.match(line) or _BLOCK_END.match(line):
            continue
        b = _BLOCK.match(line)
        if b:
            out.append(f"**{b.group(1)}**" + (f" {b.group(2)}" if b.group(2) else ""))
            heads.add(len(out) - 1)
            continue
        d = _DIRECTIVE.match(line)
        if d:
            name, arg = d.group(2), d.group(3).strip()
            if name not in ("tab-set", "grid", "toctree"):
                out.append(f"**{name}**" + (f" {arg}" if arg else ""))
                heads.add(len(out) - 1)
            continue
        h = _HEADING.match(line)
        if h:
            level = min(6, max(_QUOTED_MIN_LEVEL, len(h.group(1)) + 3))
            # badges and HTML in a heading are markup for a web page, not words
            line = "#" * level + " " + plain_heading(line[len(h.group(1)) :])
            heads.add(len(out))  # (a title too, if the quote ends on it)
        if ":`" in line:  # reST roles in markdown (Sphinx sites mix them): as a reader reads
            line = render_rst_inline(line)
        out.append(line)
    # A label the quote cut from what it labels (a heading, a block's title, a bold lead
    # such as **Windows** over its code): nothing for the reader.
    while out and (not out[-1].strip() or len(out) - 1 in heads or _LABEL_ONLY.match(out[-1])):
        out.pop()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _worth(new: frozenset[str] | set[str], weights: Mapping[str, float] | None) -> float:
    return float(len(new)) if weights is None else sum(weights.get(t, 0.0) for t in new)


def anchor_line(terms: Sequence[frozenset[str]], weights: Mapping[str, float] | None = None) -> int:
    """The line sharing the most of the task's terms (`best_lines`' `terms` and `weights`),
    the first of equals: the line `best_lines` grows its window from."""
    return max(range(len(terms)), key=lambda k: (_worth(terms[k], weights), -k))


def best_lines(
    lines: Sequence[str],
    terms: Sequence[frozenset[str]],
    max_tokens: int,
    weights: Mapping[str, float] | None = None,
) -> tuple[int, int]:
    """The window [i, j) of lines that quotes the most of the task's terms within max_tokens:
    grown from the line sharing the most terms, toward the side that adds terms (then down:
    an answer follows its lead-in). `terms[k]` are line k's terms that the task has;
    `weights`, what each term is worth (None: one each)."""
    if not lines:
        return 0, 0

    def worth(new: frozenset[str] | set[str]) -> float:
        return _worth(new, weights)

    anchor = anchor_line(terms, weights)
    i, j = anchor, anchor + 1
    used = count_tokens(lines[anchor]) + 1
    seen = set(terms[anchor])
    up, down = i > 0, j < len(lines)  # sides still growing
    while up or down:
        gain_up = worth(terms[i - 1] - seen) if up else -1.0
        gain_down = worth(terms[j] - seen) if down else -1.0
        k = j if gain_down >= gain_up else i - 1
        t = count_tokens(lines[k]) + 1
        if used + t > max_tokens:
            # that side's next line does not fit: the other side may still grow
            if k == j:
                down = False
            else:
                up = False
            continue
        used += t
        seen |= terms[k]
        if k == j:
            j += 1
            down = j < len(lines)
        else:
            i -= 1
            up = i > 0
    return i, j


def is_link_list(text: str) -> bool:
    """A table of contents: most of its lines are list items that are only a link."""
    lines = [ln for ln in text.split("\n") if ln.strip() and not _HEADING.match(ln)]
    links = sum(1 for ln in lines if _LINK_ITEM.match(ln))
    return links >= 3 and links >= 0.7 * len(lines)


def trim_to_paragraphs(text: str, max_tokens: int) -> str:
    """The longest prefix of whole paragraphs within max_tokens; fences are never cut."""
    blocks: list[str] = []
    cur: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if fence is None and stripped.startswith(("```", "~~~")):
            # the whole run: a code item's ```` fence holds a docstring's own ``` example
            fence = fence_opened(stripped)
        elif fence is not None and closes(stripped, fence):
            fence = None
        cur.append(line)
        if fence is None and not line.strip():
            blocks.append("\n".join(cur))
            cur = []
    if cur:
        blocks.append("\n".join(cur))
    out = ""
    for b in blocks:
        candidate = out + b if not out else out + "\n" + b
        if count_tokens(candidate) + 2 > max_tokens:
            break
        out = candidate
    out = out.rstrip()
    return out + "\n[…]" if out and out != text.rstrip() else out


def lead(text: str, max_tokens: int) -> str:
    """The opening of a text within max_tokens: whole paragraphs if any fit, else the first
    prose paragraph cut at a word (code is never cut)."""
    whole = trim_to_paragraphs(text, max_tokens)
    if whole:
        return whole
    for para in text.split("\n\n"):
        p = para.strip()
        if p and not p.startswith(("```", "~~~", "#")):
            cut = cut_words(" ".join(p.split()), max(0, max_tokens - 2))
            return cut + " […]" if cut else ""
    return ""


def cut_words(text: str, max_tokens: int) -> str:
    """The longest whitespace-bounded prefix of text within max_tokens."""
    words = text.split(" ")
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(" ".join(words[:mid])) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])
