"""zone: the frame's "Code to Open" items, from ranked code hits. Pure.

The zone is what an agent opens: the lead definition (the best file's best match) with its
doc comment and body, the lines a change most likely starts from; then the further
definitions of the lead's file that match the task, as signatures with a one-line doc; then
a further file only when its evidence is close to the lead's. Each item is fenced in its
language and cited path:lines. Before issue 37 the zone named up to ten files within a
quarter of the best score, one definition each, and 86% of its items were in files the task
does not touch (code-swe-dev: code precision 0.144); docs/decisions.md §40 has the sweep.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from ncx.code.langs import doc_block_gap, language_of
from ncx.code.rank import CodeHit
from ncx.code.text import shown_path
from ncx.tokens import count_tokens

# The lead: the best definition, quoted with its doc comment and body (what a change starts
# from); a body longer than BODY_TOKENS is quoted by its head and the lines that share the
# most of the task's words. Then TIES further definitions of the lead's file that match the
# task (signatures and a one-line doc), then a further file only when its evidence is close
# to the lead's: its score at least FILE_GAP of the lead file's and FILE_STEP of the file's
# before it (below). One shared word is not evidence: a further file must hold MIN_SHARED of
# the task's terms. Values chosen on every code-* set together (benchmarks/code_frames.py,
# docs/decisions.md §40).
MAX_FILES = 4
FILE_GAP = 0.3  # 0.35 until §52 moved the rankings (decisions.md §53)
MIN_SHARED = 2
# A further file could be held to FILE_COVER of the task's idf weight the lead's file holds
# (the readers' largest cause: a file sharing one common word). At 0.45 code precision rose on
# eight of nine code sets and frame recall fell on six (rich under 0.80): the further-file
# trade of §40 again, not kept (decisions.md §111). 0: off.
FILE_COVER = 0.0
TIES = 4
# ... and at least FILE_STEP of the score of the file before it (the first further file:
# the lead's, so it needs half the lead's score): where the evidence falls by half from one
# file to the next it has ended, and what follows shares the task's common words (over the
# nine code sets, 109 of 786 further files so cut, 9% of them in a gold file against 16% of
# all; decisions.md §98; 0: off).
FILE_STEP = 0.5
# A further match of the lead's file needs TIE_RATIO of the lead's score: two new users'
# readings found 2 of 20 such matches under a fifth worth reading, and at 0.2 the share of
# code items on a changed line rises on every commit set while the file-level gold share and
# precision fall a little (they count any item of a gold file; decisions.md §90; 0.25 and 0.5
# were measured on those alone in §66; 0: off)
TIE_RATIO = 0.2
BODY_TOKENS = 1200  # 800 until decisions.md §55
BODY_SHARE = 0.2  # a lead's quote takes at most this share of a small frame's budget
BRIEF = 1  # items after the lead quote their docstring's first sentence only
# ... or, a definition whole within this many tokens, its body (a 3-line method the change
# touches was a bare signature in 11 of a new user's 30 frames: decisions.md §58)
SHORT_WHOLE = 200
BRIEF_CHARS = 160
_FENCE = {
    "python": "python",
    "javascript": "js",
    "typescript": "ts",
    "tsx": "tsx",
    "go": "go",
    "rust": "rust",
    "java": "java",
}


# A further match of the lead's file must be about the task, not about one of its words: it
# holds ITEM_TERMS of the task's distinct terms in its own text (name, signature, doc, body)
# and they weigh ITEM_SHARE of the task's idf (or the lead's own share, where that is less:
# a long issue's lead holds under a tenth). In 30 hand-read frames 1 of 30 items holding
# one task term was worth reading, and 5 of 43 under a tenth of its idf; with the test the
# share of code items on a changed line rises on 7 of 8 commit sets, frame recall and first
# code unchanged on all (decisions.md §92, §93; the same test on further files cost frame
# recall: not kept). 0 and 0.0: off.
ITEM_TERMS = 2
ITEM_SHARE = 0.1


def pick(
    hits: Sequence[CodeHit],
    shared: Callable[[CodeHit], int] | None = None,
    own: Callable[[CodeHit], tuple[int, float]] | None = None,
) -> list[CodeHit]:
    """The hits the frame offers, in the order it quotes them: the lead, its file's further
    matches, then the further files whose evidence is close to the lead's. `shared(h)`: how
    many of the task's distinct terms h's file holds; `own(h)`: how many h holds itself and
    their idf-weighted share (None: not asked)."""
    return [h for h, _ in picked(hits, shared, own)]


def picked(
    hits: Sequence[CodeHit],
    shared: Callable[[CodeHit], int] | None = None,
    own: Callable[[CodeHit], tuple[int, float]] | None = None,
) -> list[tuple[CodeHit, str]]:
    """`pick`'s hits, each with why it is in (what `--explain` says)."""
    return [(h, why) for h, why, taken in judged(hits, shared, own) if taken]


def judged(
    hits: Sequence[CodeHit],
    shared: Callable[[CodeHit], int] | None = None,
    own: Callable[[CodeHit], tuple[int, float]] | None = None,
) -> list[tuple[CodeHit, str, bool]]:
    """The hits `picked` weighs, in the order it weighs them: (hit, why it is in or out, in);
    of a further file refused, its first hit only. The first ones out are what `--explain`
    names as the next below the rules."""
    if not hits:
        return []
    hits = _method_first(_named_first(hits))
    lead = hits[0]
    top = lead.file_score or 1.0
    floor = TIE_RATIO * lead.score  # (>= 0: a tie scores above 0 at the least)

    # ... but no more of it than the lead holds: a long issue's hundreds of terms put a
    # tenth of their weight out of any one definition's reach, the lead's too (§93)
    asked = min(ITEM_SHARE, own(lead)[1]) if own is not None else ITEM_SHARE

    def tie_out(h: CodeHit) -> str:
        """Why a further match of the lead's file is out ("": it is not)."""
        if h.score <= floor:
            return f"a further match in the lead's file under {TIE_RATIO:.0%} of its score"
        if not _says(h) or _module_again(h):
            return "its file's module item, which says nothing the lead does not"
        if own is not None:
            n, share = own(h)
            if n < ITEM_TERMS or share < asked:
                return (
                    f"a further match in the lead's file holding {n} of the task's terms, "
                    f"{share:.0%} of their weight (it needs {ITEM_TERMS} terms and "
                    f"{asked:.0%})"
                )
        return ""

    out = [(lead, "the best match: quoted with its body", True)]
    ties = 0
    for h in hits[1:]:
        if h.path != lead.path:
            continue
        why = tie_out(h)
        if not why and ties >= TIES:
            why = f"a further match in the lead's file past the {TIES} a frame lists"
        if why:
            out.append((h, why, False))
            continue
        ties += 1
        ratio = h.score / (lead.score or 1.0)
        if _long_class(h) and inside(lead, h):  # (_method_first moved its method first)
            why = "the class holding the lead: a long class is opened at its best method"
        else:
            why = f"a further match in the lead's file, {ratio:.0%} of its score"
        out.append((h, why, True))
    files = [lead.path]
    last = top  # the score of the last file in
    refused: set[str] = set()  # (a file's later hits are refused as its first was: said once)
    for h in hits:
        if h.path in files:
            continue
        share = f"{h.file_score / top:.0%} of the lead file's score"
        if len(files) > 1:
            share += f", {h.file_score / last:.0%} of the file before it"
        held = shared(h) if shared is not None else None
        if len(files) >= MAX_FILES:
            why = f"a further file past the {MAX_FILES} a frame opens ({share})"
        elif h.file_score < FILE_GAP * top:
            why = f"a further file at {share}: under the {FILE_GAP:.0%} of the lead's it needs"
        elif h.file_score < FILE_STEP * last:
            why = f"a further file at {share}: under the {FILE_STEP:.0%} of the one before it needs"
        elif held is not None and held < MIN_SHARED:
            why = f"a further file holding {held} of the task's terms ({MIN_SHARED} needed)"
        elif FILE_COVER and h.confidence < FILE_COVER * lead.confidence:
            why = (
                f"a further file holding {h.confidence / (lead.confidence or 1):.0%} of the "
                f"task's weight the lead's file holds ({FILE_COVER:.0%} needed)"
            )
        else:
            files.append(h.path)
            terms = f", {held} of the task's terms" if held is not None else ""
            out.append((h, f"a further file: {share}{terms}", True))
            last = h.file_score
            continue
        if h.path not in refused:
            refused.add(h.path)
            out.append((h, why, False))
    return out


# A module item without a doc is its file's name and nothing else: the file is named by
# its best definition instead, when the search found one (a frame listed `module
# src/paging.rs` as an item to read; decisions.md §66). False: listed as found.
EMPTY_MODULES_OUT = True


# A module item after its file's lead: the file is open already, and the module's one-line
# summary repeats what its definitions show (a new user's execa frames listed
# `lib/methods/command.js:1-43` after four of that file's definitions; decisions.md §87).
# False: listed as found.
MODULE_TIES_OUT = True


def _module_again(h: CodeHit) -> bool:
    return MODULE_TIES_OUT and h.kind == "module"


def _says(h: CodeHit) -> bool:
    """Whether h's item shows more than its file's name."""
    return not EMPTY_MODULES_OUT or h.kind != "module" or bool(h.doc.strip())


def _named_first(hits: Sequence[CodeHit]) -> Sequence[CodeHit]:
    """Each file's first hit that says something moved to its file's first place, so an
    empty module item never stands for its file (it is dropped where another hit of its
    file is found; kept where it is the file's only hit)."""
    if not EMPTY_MODULES_OUT:
        return hits
    out = list(hits)
    for i, h in enumerate(hits):
        if _says(h):
            continue
        later = range(i + 1, len(hits))
        alt = next((j for j in later if hits[j].path == h.path and _says(hits[j])), None)
        if alt is not None:
            out[i] = hits[alt]
            out[alt] = h
    return out


# A class of CLASS_LEAD_LINES lines or more does not lead: its best method among the hits
# does, and the class follows it. Quoted as a lead, such a class is its head and a window of
# a few of its hundreds of lines (a 472-line class led a new user's zod frames with 135 lines
# quoted); its method is what an agent opens (decisions.md §65; 0: off).
CLASS_LEAD_LINES = 200


def _method_first(hits: Sequence[CodeHit]) -> Sequence[CodeHit]:
    """The hits with a long class lead's best method among them moved to the front."""
    lead = hits[0]
    if not _long_class(lead):
        return hits
    inner = next(
        (i for i, h in enumerate(hits[1:], start=1) if h.score > 0 and inside(h, lead)), None
    )
    if inner is None:
        return hits
    return [hits[inner], lead, *hits[1:inner], *hits[inner + 1 :]]


def _long_class(h: CodeHit) -> bool:
    """A class of CLASS_LEAD_LINES lines or more: opened at its best method."""
    return bool(CLASS_LEAD_LINES) and h.kind == "class" and h.end - h.start + 1 >= CLASS_LEAD_LINES


def inside(h: CodeHit, outer: CodeHit) -> bool:
    """h lies within outer's lines in outer's file (a method of a class, a nested def)."""
    return h.path == outer.path and outer.start <= h.start and h.end <= outer.end


def nested(a: CodeHit, b: CodeHit) -> bool:
    """One of a and b lies within the other (a class and its method, either way round)."""
    return inside(a, b) or inside(b, a)


def item_text(
    hit: CodeHit,
    lines: Sequence[str] | None,  # the file's (ncx.code.read.source_text's, split at "\n")
    *,
    body_tokens: int = 0,
    brief: bool = False,
    task_terms: Callable[[str], frozenset[str]] | None = None,
    short: int = 0,
    weights: Mapping[str, float] | None = None,
) -> str:
    """A code item as the frame quotes it: the definition's head, fenced, and its docstring
    summary (`brief`: its first sentence); or, given `body_tokens` and the file's lines, the
    lead's quote (lead_lines) within that many tokens; or, given `short` and the lines, the
    definition whole when it fits in that many tokens."""
    lang = _FENCE.get(language_of(hit.path) or "", "")
    doc = _first_sentence(hit.doc) if brief else hit.doc
    if hit.kind == "module":
        head = f"module {shown_path(hit.path)}"
        return f"{head}: {doc}" if doc else head
    if short and lines is not None and not body_tokens:
        whole = lead_lines(hit, lines, short)  # whole, or its head and `...`
        if whole and not any(ln.strip() == "..." for ln in whole):
            return fenced(lang, whole)
    if body_tokens and lines is not None:
        body = lead_lines(hit, lines, body_tokens, task_terms, weights)
        if body:
            return fenced(lang, body)
    telling = telling_lines(hit, lines, task_terms) if lines is not None and task_terms else []
    text = fenced(lang, [_head_line(hit, lines), *telling])
    # the doc above the code it describes: a line after the fence read as stray text
    return f"{doc}\n\n{text}" if doc else text


def fenced(lang: str, lines: Sequence[str]) -> str:
    """Code lines as a fenced block whose fence is a backtick longer than any run of them the
    lines hold: CommonMark ends a block only at a fence at least as long, so a docstring's own
    ```pycon example stays inside the quote. (Quotes holding ``` fell back to a bare signature:
    the lead of 7 of a new user's 10 humanize frames; decisions.md §104.)"""
    text = "\n".join(lines)
    ticks = "`" * max(3, 1 + max(map(len, _TICKS.findall(text)), default=0))
    return f"{ticks}{lang}\n{text}\n{ticks}"


def fenced_lines(text: str) -> list[str] | None:
    """The code lines of an item's text (what `fenced` fenced: its last block, after any doc
    shown above it), or None for an item with no code block (a module's line)."""
    lines = text.split("\n")
    close = lines[-1]
    if len(lines) < 2 or len(close) < 3 or close.strip("`"):
        return None
    for i in range(len(lines) - 2, -1, -1):
        if lines[i].startswith(close) and not lines[i][len(close) :].startswith("`"):
            return lines[i + 1 : -1]
    return None


_TICKS = re.compile("`+")


def _head_line(hit: CodeHit, lines: Sequence[str] | None) -> str:
    """What a listed definition is shown by: its signature, or, where the signature was cut
    short and the definition opens a block (a TypeScript object type, an interface of fifty
    fields flattened to one truncated line), that opening line as written."""
    if not hit.signature.endswith("…") or lines is None or not 0 < hit.start <= len(lines):
        return hit.signature
    first = lines[hit.start - 1].strip()
    return first if first.endswith("{") else hit.signature


# A definition listed by its signature also shows up to TELLING_LINES of its body's lines
# that hold TELLING_TERMS or more of the task's terms (the call the task names, the value it
# changes): the line a change edits is often one such line of a definition after the lead
# (decisions.md §64). 0: signatures only.
TELLING_LINES = 1
TELLING_TERMS = 2


def telling_lines(
    hit: CodeHit, lines: Sequence[str], task_terms: Callable[[str], frozenset[str]]
) -> list[str]:
    """The lines of hit's body (below its signature) that hold the most of the task's terms,
    at least TELLING_TERMS, up to TELLING_LINES of them in file order, indented as in the file
    relative to the definition, with `...` for the lines left out; [] when none holds
    enough. Redacted as every quote is (ncx.code.guard)."""
    if TELLING_LINES <= 0 or hit.end <= hit.start:
        return []
    from ncx.code.guard import redact_body

    end = min(hit.end, len(lines))
    first = hit.start - 1
    while first < end - 1 and not lines[first].rstrip().endswith((":", "{")):
        first += 1  # past the decorators and the head, to the body
    first = _past_docstring(lines, first + 1, end) - 1
    body = range(first + 1, end)
    scored = [(len(task_terms(lines[k])), k) for k in body if lines[k].strip()]
    best = sorted((c for c in scored if c[0] >= TELLING_TERMS), key=lambda c: (-c[0], c[1]))
    chosen = sorted(k for _, k in best[:TELLING_LINES])
    if not chosen:  # (also when the file now ends before the definition did)
        return []
    base = lines[hit.start - 1]
    indent = len(base) - len(base.lstrip())
    out: list[str] = []
    at = first
    for k in chosen:
        ln = redact_body(lines[k])
        if k > at + 1:
            out.append(" " * (len(ln) - len(ln.lstrip()) - indent) + "...")
        out.append(ln[indent:] if not ln[:indent].strip() else ln.strip())
        at = k
    if at < hit.end - 1:
        out.append(" " * max(0, len(out[-1]) - len(out[-1].lstrip())) + "...")
    return out


_QUOTES = ('"""', "'''")


def _past_docstring(lines: Sequence[str], k: int, end: int) -> int:
    """The first line at or after k that is not in a Python docstring opening there (shown
    as the item's doc already)."""
    if k >= end:
        return k
    head = lines[k].lstrip().lstrip("rRbBuU")
    quote = next((q for q in _QUOTES if head.startswith(q)), None)
    if quote is None:
        return k
    if head.count(quote) >= 2:
        return k + 1  # one line
    k += 1
    while k < end and quote not in lines[k]:
        k += 1
    return k + 1


def body_tokens(budget: int) -> int:
    """How long a quote the lead gets: BODY_TOKENS, less in a small frame, where the
    same tokens name more files."""
    return min(BODY_TOKENS, int(budget * BODY_SHARE))


# The lead file's next match is quoted too, by its own window of SECOND_SHARE of the lead's
# tokens (300 at the default budget): within the lead's file it is where a change is when the
# lead is not (the second definition of the gold lead file met the changed lines in 24 of
# 187 commit tasks, the first in 126), and listed by its signature and one line a reader
# passes it by (decisions.md §101; 0: off).
SECOND_SHARE = 0.25


def quote_tokens(budget: int, chosen: Sequence[CodeHit]) -> list[int]:
    """The tokens each of the zone's chosen hits may be quoted in (0: listed by its head):
    the lead its body_tokens, a further match of the lead's file right after it, apart from
    the lead's lines, a share."""
    out = [body_tokens(budget)] if chosen else []
    if len(chosen) > 1 and SECOND_SHARE > 0:
        lead, second = chosen[0], chosen[1]
        # (not the class around the lead, nor a definition inside it: its window would quote
        # the lead's lines again)
        if second.path == lead.path and not nested(lead, second):
            out.append(int(out[0] * SECOND_SHARE))
    return out


# A long lead's quote: in a language that writes its docs above the definition the head ends
# with the signature's `{` (a 600-line Rust struct's head ran on for a third of the quote, its
# first fields, before the window the task's words chose); the window goes where the task's
# rare words are, each term weighed by its idf in the code index (a word on every other line
# of the definition says nothing of where to look; decisions.md §84). False: as before.
HEAD_AT_BRACE = True
WINDOW_IDF = True

_DOC_LINE = ("//", "/*", "*", "#[", "@", "#!")
DOC_ABOVE = 12  # lines of line comments and attributes quoted above a definition, at most
DOC_BLOCK = 40  # ... of a `/** ... */` block (commander.js's configureOutput: 22 lines)


def doc_above(lines: Sequence[str], start: int, *, gap: bool = False) -> int:
    """Where the comments and attributes right above line index `start` begin, or `start`
    when there are none or too many of them. A block comment is taken whole or not at all:
    its inner lines need not start with `*` (ky's JSDoc, a Markdown example inside it), and
    its closing `*/` alone would read as stray code. `gap`: a `/**` block one blank line
    above is the definition's doc too (ncx.code.langs.doc_block_gap)."""
    end = start  # where the doc ends: the definition, or the blank line above it
    if gap and start >= 2 and not lines[start - 1].strip():
        end = start - 1
    above, block = end, False
    while above > 0:
        s = lines[above - 1].strip()
        if s.endswith("*/") and not s.startswith("/*"):
            k = above - 2  # the block's last line: back to the line that opens it
            floor = max(0, end - DOC_BLOCK)
            while k >= floor and not lines[k].lstrip().startswith("/*"):
                k -= 1
            if k < floor:
                return start  # too long to quote (or never opened): none of it
            above, block = k, True
        elif s.startswith(_DOC_LINE):
            above -= 1
        else:
            break
    if end < start and (above == end or not lines[above].lstrip().startswith("/**")):
        return start  # across the blank line, only a `/**` block is the definition's doc
    return above if end - above <= (DOC_BLOCK if block else DOC_ABOVE) else start


# A run of line comments over DOC_ABOVE lines is quoted by its head: its first lines (the
# summary, where such docs start) and a line saying the rest is left out; runs longer than
# this are not looked through (a file that is one comment). 0: such docs are left out.
DOC_CUT = 200
DOC_HEAD = 4  # the lines of such a doc quoted: its summary, as a listed item's doc shows


def quoted_doc(lines: Sequence[str], start: int, lang: str | None) -> tuple[int, list[str]]:
    """(the line index a definition's doc above it starts at, what a quote shows of it): the
    doc whole where doc_above takes it; else, for a run of `//` or `///` comments longer than
    DOC_ABOVE (walkdir's 47-line doc of `filter_entry`, its example inside), its first
    DOC_HEAD lines and its marker with `...`; (start, []) for none."""
    top = doc_above(lines, start, gap=doc_block_gap(lang))
    if top < start or not DOC_CUT:
        return top, list(lines[top:start])
    k = start
    while k > 0 and start - k < DOC_CUT and lines[k - 1].lstrip().startswith(("//", "#[", "@")):
        k -= 1
    first = lines[k].strip() if k < start else ""
    if (
        start - k <= DOC_ABOVE
        or (k > 0 and lines[k - 1].lstrip().startswith("//"))  # (the cap met mid-run)
        or not first.startswith("//")
        or first.startswith("//!")  # (a module's inner doc, not this definition's)
    ):
        return start, []
    indent = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
    return k, [*lines[k : k + DOC_HEAD], f"{indent}{first.split(' ', 1)[0]} ..."]


def lead_lines(
    hit: CodeHit,
    lines: Sequence[str],
    max_tokens: int,
    task_terms: Callable[[str], frozenset[str]] | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[str]:
    """The lead definition as quoted: the doc comment and attributes right above it (the
    readers keep them apart from the body for languages that write docs before the
    definition), then its body whole when it fits in max_tokens, else its head (signature
    and the start of its docstring) and the window of lines sharing the most of the task's
    terms (`task_terms(line)`, each worth its `weights` value), with `...` where lines are
    left out. [] when nothing fits."""
    start, end = hit.start - 1, min(hit.end, len(lines))
    lang = language_of(hit.path)
    doc = quoted_doc(lines, start, lang)[1]
    body = list(lines[start:end])
    from ncx.code.guard import redact_body

    # read from the file as it is now: the credentials the index left out, left out here
    # (the whole quote redacted before a window is cut, so no secret is split past the guard)
    shown = redact_body("\n".join([*doc, *body])).split("\n")
    if len(shown) == len(doc) + len(body):
        doc, body = shown[: len(doc)], shown[len(doc) :]
    else:
        doc, body = [], shown
    if not any(ln.strip() for ln in body):
        return []
    whole = [*doc, *body]
    if count_tokens("\n".join(whole)) <= max_tokens:
        return whole
    braces = HEAD_AT_BRACE and lang != "python"

    def head_of(doc: list[str]) -> list[str]:
        head: list[str] = []
        for ln in [*doc, *body]:
            if count_tokens("\n".join([*head, ln])) > max_tokens // 3:
                break
            head.append(ln)
            if len(head) <= len(doc):
                continue
            if braces and ln.rstrip().endswith("{"):
                break  # the signature's end: the doc is above it, not in the body
            if ln.rstrip().endswith((":", "{", '"""')) and len(head) > 2:
                break
        return head

    head = head_of(doc)
    if len(head) < len(doc):
        # The doc above is longer than the head's room: quoted from its first line, it left
        # an opened `/**` over the body (got's `RetryOptions`), so the quote goes without it.
        doc, head = [], head_of([])
    rest = body[max(0, len(head) - len(doc)) :]
    room = max_tokens - count_tokens("\n".join(head)) - 4
    if not rest or room <= 0 or task_terms is None:
        return [*head, _ellipsis(head)] if head else []
    terms = [task_terms(ln) for ln in rest]
    from ncx.query.quote import anchor_line, best_lines

    worth = weights if WINDOW_IDF else None
    i, j = best_lines(rest, terms, room, worth)
    i, j = _whole_statements(rest, i, j, room, anchor_line(terms, worth))
    window = rest[i:j]
    out = [*head]
    if i > 0:
        out.append(_ellipsis(window or head))
    out += window
    if j < len(rest):
        out.append(_ellipsis(window or head))
    return out


# A window never opens inside a bracket or a block: where the nearest line above it that is
# indented less opens a list, a call, a literal or a block (`if err != nil {`, `for x in y:`),
# the window starts on that line, up to STATEMENT_BACK lines higher, and gives up lines at its
# end to stay in its room, never the line it was chosen for: where it cannot, it stays
# (marshmallow's `URL` quote opened on `r"localhost",`, the middle of a list; a Go quote on the
# body of an `if` whose condition it left out: new users' frames; decisions.md §93). 0: off.
STATEMENT_BACK = 12
_OPENS = ("(", "[", "{", ":")


def _whole_statements(
    lines: Sequence[str], i: int, j: int, room: int, keep: int | None = None
) -> tuple[int, int]:
    """The window [i, j) moved to start on the line that opens the bracket or block its first
    line stands in (by indentation), when that line is near enough and the window, giving up
    lines at its end but never line `keep` (the one it was chosen for), still fits `room`."""
    if not STATEMENT_BACK or i == 0 or not lines[i].strip():
        return i, j
    indent = len(lines[i]) - len(lines[i].lstrip())
    k = i - 1
    while k >= max(0, i - STATEMENT_BACK):
        ln = lines[k]
        if ln.strip() and len(ln) - len(ln.lstrip()) < indent:
            break
        k -= 1
    else:
        return i, j
    if not lines[k].rstrip().endswith(_OPENS):
        return i, j
    end, used = j, sum(count_tokens(ln) + 1 for ln in lines[k:j])
    last = max(i, keep if keep is not None else i) + 1  # the window ends after this, at least
    while end > last and used > room:
        end -= 1
        used -= count_tokens(lines[end]) + 1
    return (k, end) if used <= room else (i, j)


def _ellipsis(near: Sequence[str]) -> str:
    """`...` indented as the lines it stands among."""
    ref = next((ln for ln in near if ln.strip()), "")
    return ref[: len(ref) - len(ref.lstrip())] + "..."


# A sentence's end: a full stop and a space, not the stop of "e.g.", "i.e.", "etc.", "vs." or
# "cf." (marshmallow's `String` summary was cut at "(e.g.": a new user's frame).
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)\. ", re.IGNORECASE)


def _first_sentence(doc: str) -> str:
    m = _SENTENCE_END.search(doc)
    s = doc if m is None else doc[: m.start() + 1]
    return s if len(s) <= BRIEF_CHARS else s[: BRIEF_CHARS - 1] + "…"
