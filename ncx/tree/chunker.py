"""chunker: split one markdown body into heading-aligned Chunks. Pure; no file I/O.

Every chunk's text is a verbatim slice of the body, so line ranges for citations can
always be recomputed from the source. Headings inside fenced code are not headings.
Short sections are merged with their neighbours, never dropped; long ones are windowed
at paragraph, then sentence, boundaries, and a fenced code block is never cut unless it
alone exceeds the hard cap.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from ncx.config import ChunkSettings
from ncx.tokens import count_tokens

__all__ = ["Chunk", "ChunkSettings", "chunk_markdown"]


@dataclass(frozen=True, slots=True)
class Chunk:
    name: str  # file stem inside the doc's chunk folder; derives from the heading trail
    trail: tuple[str, ...]  # heading trail, outermost first
    text: str  # verbatim slice of the body
    start_line: int  # 1-based, inclusive, in the body's own numbering (+ first_line - 1)
    end_line: int
    tokens: int


@dataclass(frozen=True, slots=True)
class _Section:
    trail: tuple[str, ...]
    start: int  # char offsets into the body
    end: int
    tokens: int


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"^ {0,3}(?:[-*+>|]|\d+[.)]|<)|^\s*$|^ {4}")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[`*_])")
_SLUG_DROP = re.compile(r"[^a-z0-9]+")
# What _FENCE, _ATX and _SETEXT lines start with. Searched in "\n" + body, where a match's
# start is its line's offset in the body: a literal first character is found by a fast scan,
# `^` with re.M is tried at every character (3x slower).
_LEAD_LINE = re.compile(r"\n *[`~#=<-]")
# HTML blocks (CommonMark 4.6): a heading line inside one is HTML text, not a section. Raw
# blocks (script, pre, style, textarea) and comments run to their closing mark, blank lines
# included; block-level tags, and any tag alone on a line after a blank line, run to the
# next blank line.
_HTML_RAW = re.compile(r" {0,3}<(script|pre|style|textarea)(?:[\s>]|$)", re.IGNORECASE)
_HTML_BLOCK = re.compile(
    r" {0,3}</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|"
    r"colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|"
    r"frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|"
    r"noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|"
    r"thead|title|tr|track|ul)(?:\s|/?>|$)",
    re.IGNORECASE,
)
_HTML_TAG_LINE = re.compile(r" {0,3}</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>\s*$")
_BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|$)")

# A single fenced block is kept whole up to this many times the max chunk size.
_CODE_CAP = 4


def chunk_markdown(
    body: str,
    *,
    settings: ChunkSettings = ChunkSettings(),
    first_line: int = 1,
    title: str | None = None,
) -> list[Chunk]:
    """Split a markdown body (frontmatter already removed) into chunks.

    `first_line` is the source line where the body starts, so reported lines match
    the file. `title` (e.g. from frontmatter) heads the trail of text before the
    first heading.
    """
    if not body.strip():
        return []
    lines = body.split("\n")
    line_starts = _line_starts(lines)
    sections = _sections(body, lines, line_starts, title)
    groups = _merge_small(sections, settings)
    chunks: list[Chunk] = []
    used: dict[str, int] = {}
    for group in groups:
        # A merged group is named for its largest section (a heading-only parent
        # merged into its first child is named for the child, whose trail holds both).
        lead = max(group, key=lambda sec: sec.tokens)
        base = _unique(_slug_trail(lead.trail), used)
        start, end = group[0].start, group[-1].end
        # Counts add up: sections, blocks and pieces all split at whitespace, which the
        # estimate ignores, so a span's count is the sum of its parts' (the text is scanned
        # once, not once per level).
        whole = _group_tokens(group)
        spans = (
            _windows(body, start, end, settings)
            if whole > settings.max_tokens
            else [(start, end, whole)]
        )
        for i, (s, e, tokens) in enumerate(spans):
            text = body[s:e].strip("\n").rstrip()
            if not text.strip():
                continue
            s += len(body[s:e]) - len(body[s:e].lstrip("\n"))
            name = base if i == 0 else f"{base}~{i + 1}"
            chunks.append(
                Chunk(
                    name=name,
                    trail=lead.trail,
                    text=text,
                    start_line=bisect_right(line_starts, s) + first_line - 1,
                    end_line=bisect_right(line_starts, s + len(text) - 1) + first_line - 1,
                    tokens=tokens,
                )
            )
    return chunks


def _line_starts(lines: list[str]) -> list[int]:
    # The offset of each line: 0, then the running sum of (length + 1), summed in C from the
    # lines _sections splits anyway (a find per line in Python took twice as long); the
    # total after the last line is dropped.
    return list(accumulate(map((1).__add__, map(len, lines)), initial=0))[:-1]


def _sections(
    body: str, lines: list[str], line_starts: list[int], title: str | None
) -> list[_Section]:
    """Find headings outside fences; return one section per heading (plus any preamble)."""
    heads: list[tuple[int, int, str]] = []  # (line index, level, text)
    fence: str | None = None
    html_end = -1  # body offset where the HTML block being read ends
    # Only a line whose first visible character opens a fence, an ATX heading or a setext
    # underline can matter: one regex scan finds those, and the other lines (most) are
    # never looked at in Python (a test per line took twice as long).
    for found in _LEAD_LINE.finditer("\n" + body):
        i = bisect_right(line_starts, found.start()) - 1
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None:
            if (
                m
                and m.group(1)[0] == fence[0]
                and len(m.group(1)) >= len(fence)
                and not line.strip()[len(m.group(1)) :].strip()
            ):
                fence = None
            continue
        if found.start() < html_end:
            continue  # inside an HTML block
        if line.lstrip(" ")[:1] == "<":
            html_end = _html_block_end(body, lines, i, line_starts[i])
            continue
        if m:
            fence = m.group(1)
            continue
        atx = _ATX.match(line)
        if atx:
            heads.append((i, len(atx.group(1)), (atx.group(2) or "").strip()))
            continue
        if i > 0 and _SETEXT.match(line) and not _NOT_PARAGRAPH.match(lines[i - 1]):
            if not heads or heads[-1][0] != i - 1:
                level = 1 if line.strip()[0] == "=" else 2
                heads.append((i - 1, level, lines[i - 1].strip()))

    sections: list[_Section] = []
    base_trail: tuple[str, ...] = (title,) if title else ()
    first = heads[0][0] if heads else len(lines)
    if first > 0:
        start, end = 0, line_starts[first] if first < len(line_starts) else len(body)
        if body[start:end].strip():
            sections.append(_Section(base_trail, start, end, count_tokens(body[start:end])))
    # A frontmatter title heads every trail unless the doc has its own level-1 heading.
    stack: list[tuple[int, str]] = [(0, title)] if title and all(h[1] > 1 for h in heads) else []
    for n, (i, level, text) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, _short_heading(text) or "section"))
        start = line_starts[i]
        nxt = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        end = line_starts[nxt] if nxt < len(line_starts) else len(body)
        trail = tuple(t for _, t in stack)
        sections.append(_Section(trail, start, end, count_tokens(body[start:end])))
    return sections


# A heading is repeated into every chunk of its section (its trail: the chunk's frontmatter
# and its embedded text); one of 200,000 characters made 22.7 MB of chunk files. The trail
# keeps its first words; the heading line itself stays whole in the section's text.
MAX_HEADING_CHARS = 200


def _short_heading(text: str) -> str:
    if len(text) <= MAX_HEADING_CHARS:
        return text
    cut = text[: MAX_HEADING_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > MAX_HEADING_CHARS // 2 else cut).rstrip() + "…"


def _html_block_end(body: str, lines: list[str], i: int, at: int) -> int:
    """The body offset where an HTML block opened by line `i` (at offset `at`) ends; -1
    when the line opens none."""
    line = lines[i]
    raw = _HTML_RAW.match(line)
    if raw or line.lstrip(" ").startswith("<!--"):
        if raw:
            hit = re.compile(f"</{raw.group(1)}>", re.IGNORECASE).search(body, at)
            found = hit.start() if hit else -1
        else:
            found = body.find("-->", at)
        if found < 0:
            return len(body)
        nl = body.find("\n", found)
        return len(body) if nl < 0 else nl
    if _HTML_BLOCK.match(line) or (
        _HTML_TAG_LINE.match(line) and (i == 0 or not lines[i - 1].strip())
    ):
        blank = _BLANK_LINE.search(body, at)
        return len(body) if blank is None else blank.start() + 1
    return -1


def _merge_small(sections: Sequence[_Section], settings: ChunkSettings) -> list[list[_Section]]:
    """Group consecutive sections so that no group is under min_tokens when avoidable.

    A short section joins the sections after it (a heading-only parent joins its first
    child) while the group stays within max_tokens; a short tail joins the group before
    it on the same condition. Nothing is ever dropped.
    """
    groups: list[list[_Section]] = []
    pending: list[_Section] = []
    for sec in sections:
        if pending and _group_tokens(pending) + sec.tokens > settings.max_tokens:
            groups.append(pending)  # short, but merging would only make an oversized chunk
            pending = []
        pending.append(sec)
        if _group_tokens(pending) >= settings.min_tokens:
            groups.append(pending)
            pending = []
    if pending:
        if groups and _group_tokens(groups[-1]) + _group_tokens(pending) <= settings.max_tokens:
            groups[-1].extend(pending)
        else:
            groups.append(pending)
    return groups


def _group_tokens(group: Sequence[_Section]) -> int:
    return sum(s.tokens for s in group)


def _blocks(body: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """Paragraph-level spans (start, end, is_code) between blank lines; fences are atomic."""
    blocks: list[tuple[int, int, bool]] = []
    pos = start
    cur: int | None = None
    fence: str | None = None
    fence_start = 0
    while pos < end:
        nl = body.find("\n", pos, end)
        line_end = end if nl == -1 else nl + 1
        line = body[pos:line_end].rstrip("\n")
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                blocks.append((fence_start, line_end, True))
                fence = None
        elif m:
            if cur is not None:
                blocks.append((cur, pos, False))
                cur = None
            fence, fence_start = m.group(1), pos
        elif not line.strip():
            if cur is not None:
                blocks.append((cur, pos, False))
                cur = None
        elif cur is None:
            cur = pos
        pos = line_end
    if fence is not None:
        blocks.append((fence_start, end, True))  # unclosed fence runs to the end
    elif cur is not None:
        blocks.append((cur, end, False))
    return blocks


def _pieces(
    body: str, start: int, end: int, settings: ChunkSettings
) -> list[tuple[int, int, int, bool]]:
    """Spans no larger than max_tokens where possible: (start, end, tokens, is_code)."""
    out: list[tuple[int, int, int, bool]] = []
    for b_start, b_end, is_code in _blocks(body, start, end):
        text = body[b_start:b_end]
        n = count_tokens(text)
        if n <= settings.max_tokens or (is_code and n <= settings.max_tokens * _CODE_CAP):
            out.append((b_start, b_end, n, is_code))
            continue
        # Too big: prose splits at sentences, code and lists at lines.
        cuts = _line_cuts(text) if is_code or "\n" in text.strip() else _sentence_cuts(text)
        cap = settings.max_tokens * (_CODE_CAP if is_code else 1)
        prev = 0
        for cut in [*cuts, len(text)]:
            if cut > prev:
                piece = text[prev:cut]
                tokens = count_tokens(piece)
                if tokens > cap:
                    # One sentence or line bigger than any frame (a 2 MB line, minified
                    # code): cut it by size so no chunk exceeds the cap.
                    for a, z, t in _hard_cuts(piece, tokens, cap):
                        out.append((b_start + prev + a, b_start + prev + z, t, is_code))
                else:
                    out.append((b_start + prev, b_start + cut, tokens, is_code))
                prev = cut
    return out


def _hard_cuts(text: str, tokens: int, cap: int) -> list[tuple[int, int, int]]:
    """Spans of `text` of at most `cap` tokens each, cut at the last space before the size
    limit where there is one, else mid-word. Linear: each span is counted about twice."""
    out: list[tuple[int, int, int]] = []
    pos, left = 0, tokens
    while pos < len(text):
        rest = len(text) - pos
        if left <= cap:
            out.append((pos, len(text), count_tokens(text[pos:])))
            break
        step = max(1, int(rest * cap / max(left, 1) * 0.9))
        while True:
            cut = min(len(text), pos + step)
            space = text.rfind(" ", pos + step // 2, cut)
            if space > pos and cut < len(text):
                cut = space + 1
            n = count_tokens(text[pos:cut])
            if n <= cap or step == 1:
                break
            step = max(1, step // 2)
        out.append((pos, cut, n))
        left = max(0, left - n)
        pos = cut
    return out


def _sentence_cuts(text: str) -> list[int]:
    return [m.end() for m in _SENTENCE_END.finditer(text)]


def _line_cuts(text: str) -> list[int]:
    return [m.end() for m in re.finditer(r"\n", text)][:-1]


def _windows(
    body: str, start: int, end: int, settings: ChunkSettings
) -> list[tuple[int, int, int]]:
    """Pack pieces greedily into windows of at most max_tokens, overlapping by prose pieces:
    (start, end, tokens)."""
    pieces = _pieces(body, start, end, settings)
    windows: list[tuple[int, int, int]] = []
    i = 0
    while i < len(pieces):
        total = 0
        j = i
        while j < len(pieces) and (j == i or total + pieces[j][2] <= settings.max_tokens):
            total += pieces[j][2]
            j += 1
        windows.append((pieces[i][0], pieces[j - 1][1], total))
        if j >= len(pieces):
            break
        # Overlap: restart at trailing prose pieces of this window worth <= overlap tokens.
        back, k = 0, j
        while (
            k - 1 > i
            and not pieces[k - 1][3]
            and back + pieces[k - 1][2] <= settings.overlap_tokens
        ):
            back += pieces[k - 1][2]
            k -= 1
        i = k
    return windows


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _SLUG_DROP.sub("-", ascii_text.lower()).strip("-")[:40].strip("-")
    return slug or "s" + hashlib.sha1(text.encode()).hexdigest()[:6]


def _slug_trail(trail: tuple[str, ...]) -> str:
    if not trail:
        return "_intro"
    name = "--".join(_slug(t) for t in trail)
    if len(name) > 120:
        name = name[:100].rstrip("-") + "-" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return name


def _unique(name: str, used: dict[str, int]) -> str:
    n = used.get(name, 0) + 1
    used[name] = n
    return name if n == 1 else f"{name}-{n}"
