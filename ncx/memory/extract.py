"""extract: propose atomic memories from free-form session notes, without a model.

Pure: notes text in, Proposals out; no I/O. The v3 proposal's formation triggers
(docs/decisions.md §13): explicit markers ("remember this", "lesson learned", TIL…),
error → resolution pairs, verified facts, and procedural patterns ("always run X before Y").
Proposals are suggestions for a human (or --auto-save for the high-confidence ones); saving
them is the caller's business.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ncx.store import text_lines
from ncx.words import STOPWORDS

__all__ = ["Confidence", "MemoryType", "Proposal", "Trigger", "propose_memories"]

MemoryType = Literal["factual", "experiential", "procedural"]
Confidence = Literal["high", "medium", "low"]
Trigger = Literal["explicit", "error_resolution", "verification", "pattern"]


@dataclass(frozen=True, slots=True)
class Proposal:
    """A memory worth proposing, with the 1-based line span of the notes it came from."""

    text: str
    context: str
    type: MemoryType
    confidence: Confidence
    trigger: Trigger
    keywords: tuple[str, ...]
    source_lines: tuple[int, int]


@dataclass(frozen=True, slots=True)
class _Line:
    number: int  # 1-based
    raw: str
    text: str  # without bullet, quote, heading, speaker and emphasis markup
    code: bool  # inside a ``` fence (tracebacks count as errors; nothing else is read there)
    heading: bool
    bullet: bool
    extra: int = 0  # wrapped continuation lines folded into this bullet's text
    folded: bool = False  # this line is such a continuation: read through its bullet

    @property
    def blank(self) -> bool:
        return not self.text and not self.folded


# --- Reading the notes ---------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(?:```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_STAMP = r"\[?\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp][Mm])?\]?"
_ROLES = r"user|assistant|human|ai|claude|agent|system|me|you|bot|model|codex|copilot"
# Chat transcripts: "User: …", "**Assistant:** …", "[10:32] alice: …", "<alice> …".
_SPEAKER = re.compile(
    rf"^(?:{_STAMP}\s*(?:<[\w.-]{{1,24}}>|[\w.-]{{1,24}}:)|(?:{_STAMP}\s*)?(?:{_ROLES})\s*:"
    rf"|(?:{_ROLES})\s*>)\s*",
    re.IGNORECASE,
)


def _clean(raw: str) -> str:
    text = _QUOTE.sub("", raw)
    text = _HEADING.sub("", text)
    text = _BULLET.sub("", text)
    text = text.replace("**", "").strip()  # not "__": it is part of __init__.py
    text = _SPEAKER.sub("", text)
    return _BULLET.sub("", text).strip()


def _read(notes: str) -> list[_Line]:
    lines: list[_Line] = []
    in_code = False
    for number, raw in enumerate(text_lines(notes), start=1):
        if _FENCE.match(raw):
            in_code = not in_code
            lines.append(_Line(number, raw, "", True, False, False))
            continue
        body = _QUOTE.sub("", raw)
        line = _Line(
            number,
            raw,
            raw.strip() if in_code else _clean(raw),
            in_code,
            not in_code and bool(_HEADING.match(body)),
            not in_code and bool(_BULLET.match(body)),
        )
        owner = _owner(lines)
        if owner is not None and _continues(lines[owner], lines[-1], line):
            # One statement wrapped over several lines is read whole, with the span of all.
            parent = lines[owner]
            lines[owner] = replace(
                parent, text=f"{parent.text} {line.text}", extra=parent.extra + 1
            )
            line = replace(line, text="", folded=True)
        lines.append(line)
    return lines


def _owner(lines: Sequence[_Line]) -> int | None:
    """The line that a continuation right after `lines` would join: the last unfolded one."""
    j = len(lines) - 1
    while j >= 0 and lines[j].folded:
        j -= 1
    return j if j >= 0 else None


_SENTENCE_DONE = (".", "!", "?", ":", ";", "`", ")", "]", "|")


def _continues(owner: _Line, last: _Line, line: _Line) -> bool:
    if not line.text or line.code or line.heading or line.bullet:
        return False
    if owner.blank or owner.code or owner.heading:
        return False
    if _SPEAKER.match(_QUOTE.sub("", line.raw).strip().replace("**", "")):
        return False  # each chat turn stands alone
    # A line that opens with a signal of its own ("Never …", "verified on CI", "fixed by …")
    # is a new statement, even indented under a bullet: folded in, its learning would hide
    # inside another memory's text.
    signals = (_VERIFIED, _RESOLUTION, _ERROR_WORDS, _EXCEPTION, *_EXPLICIT, *_PROCEDURAL)
    if any(p.match(line.text) for p in signals):
        return False
    if owner.bullet and line.raw[:1] in (" ", "\t"):
        return True  # an indented line under a bullet
    # Hard-wrapped prose: a long line cut mid-sentence and a next line that carries on in
    # lower case. Short unpunctuated lines are telegraphic notes ("tried again") and each one
    # counts, so the error → fix window can still see them apart.
    previous = last.raw.strip()
    return not (
        len(previous) < 60 or previous.endswith(_SENTENCE_DONE) or not line.text[:1].islower()
    )


def _line_above(lines: Sequence[_Line], i: int) -> int | None:
    """The statement right above line i (a wrapped one counts once), if it is prose."""
    j = i - 1
    while j >= 0 and lines[j].folded:
        j -= 1
    if j < 0 or lines[j].blank or lines[j].code or lines[j].heading:
        return None
    return j


# --- Words ---------------------------------------------------------------------------------

# Beyond the English stopwords: the filler of session notes ("remember", "fixed", "the root
# cause was ..."), which says a note is a learning but is never what it is about.
_NOTE_WORDS = frozenset(
    """
    done yes yeah ok okay thanks thank please vs still really actually thing things way need
    needs needed want sure lot remember note self lesson lessons learned learnt til important
    gotcha gotchas takeaway verified verify confirmed confirm works work working worked always
    never don't doesn't didn't isn't wasn't can't won't fixed fix fixes fixing solution resolved
    solved turned caused cause root problem issue error errors failed fails failing failure run
    runs running ran tried try trying instead since like much many every shouldn't us oh hi ah
    eh hmm
    """.split()
)
_STOPWORDS = STOPWORDS | _NOTE_WORDS
_WORD = re.compile(r"[A-Za-z_][\w+#.'-]*[\w+#]|[A-Za-z]")


def _keywords(text: str, limit: int = 6) -> tuple[str, ...]:
    counts: dict[str, int] = {}
    for match in _WORD.finditer(text):
        word = match[0].lower().strip("._-'")
        if len(word) < 2 or word in _STOPWORDS or word.replace(".", "").isdigit():
            continue
        counts[word] = counts.get(word, 0) + 1
    # dicts keep insertion order and sorted() is stable: ties go to the earlier word.
    ranked = sorted(counts, key=lambda w: -counts[w])
    return tuple(ranked[:limit])


def _content_words(text: str) -> int:
    return len(_keywords(text, limit=100))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s]


def _shorten(text: str, limit: int) -> str:
    """At most a few sentences and `limit` characters, cut at a word boundary."""
    text = " ".join(_sentences(text)[:3]).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:—-") + "…"


def _tidy(text: str) -> str:
    return text.strip().strip("—–-:;, ").strip()


# --- Patterns ------------------------------------------------------------------------------

_NEGATED = re.compile(r"\b(?:not|never|unable|cannot|can't|couldn't|didn't|haven't|yet)\s+\S*$")

_EXPLICIT = (
    re.compile(r"\bremember (?:this|that)\b[\s:,.!—–-]*(?P<rest>.*)", re.IGNORECASE),
    re.compile(r"\bremember\s*:\s*(?P<rest>.*)", re.IGNORECASE),
    re.compile(r"\bnotes? to self\b[\s:,.!—–-]*(?P<rest>.*)", re.IGNORECASE),
    # At the start or before a colon: "the lessons learned while porting X" is prose.
    re.compile(
        r"(?:^|(?<=[.!]\s))(?:lessons? learned|key takeaways?)\b[\s:,.!—–-]*(?P<rest>.*)|"
        r"\b(?:lessons? learned|key takeaways?)\s*[:—–]\s*(?P<rest2>.*)",
        re.IGNORECASE,
    ),
    # Upper-case TIL only: lower-case "til" is informal "until".
    re.compile(r"(?:^|(?<=[\s(]))(?:TIL\b|til:)[\s:,—–-]*(?:that\s+)?(?P<rest>.*)"),
    re.compile(r"\blearned\b(?:\s+[\w'-]+){0,4}?\s+that\s+(?P<rest>.*)", re.IGNORECASE),
    re.compile(r"\bimportant\s*:\s*(?P<rest>.*)", re.IGNORECASE),
    # "Gotcha: …" or "the gotcha is …", never the chat reply "Gotcha, thanks".
    re.compile(r"\bgotcha\b(?:\s*[:—–]|\s+-\s|\s+(?:is|was)\b)\s*(?P<rest>.*)", re.IGNORECASE),
)
# Section headings whose items are all explicit learnings.
_EXPLICIT_HEADING = re.compile(
    r"^(?:lessons? learned|learnings|gotchas?|til|things to remember|remember|"
    r"notes? to self|key takeaways?|takeaways)\b",
    re.IGNORECASE,
)

_ERROR_WORDS = re.compile(
    r"\b(?:errors?|exceptions?|traceback|failed|fails|failing|failure|crash(?:ed|es|ing)?|"
    r"segfault|panic(?:ked)?|broken|broke)\b",
    re.IGNORECASE,
)
_EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b")
_EXCEPTION_LINE = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b:\s*\S")
_NOT_AN_ERROR = re.compile(
    r"\b(?:no|0|zero|without|any)\s+(?:errors?|failures?|exceptions?|failed)\b|"
    r"\berror[- ]handling\b",
    re.IGNORECASE,
)
_FRAME = re.compile(r'^\s*(?:File "|at |\^+\s*$|\.\.\.|\|)')
_RESOLUTION = re.compile(
    r"\b(?:fixed(?![-\w])|fix(?:ed)? (?:it |this )?by|fixes it|fixed it|the fix (?:was|is)|"
    r"was the fix|fix\s*:|resolved|solved|solution|workaround|caused by|turned out|root cause|"
    r"the (?:problem|issue|cause|culprit|reason) (?:was|is)|was due to|because of)\b",
    re.IGNORECASE,
)
_SOLUTION_PREFIX = re.compile(
    r"^(?:(?:solution|resolution|workaround|fix|resolved|fixed)\s*[:—–-]\s*|"
    r"the (?:fix|solution) (?:was|is)\s*(?:to\s+)?:?\s*)",
    re.IGNORECASE,
)
_VERIFIED = re.compile(
    r"\b(?:verified|confirmed|works now|now works|working now|passes now|now passes|"
    r"tests? (?:now )?pass(?:es|ed)?|all green|no longer (?:fails|errors|crashes|happens))\b",
    re.IGNORECASE,
)
# A verification is reported by the writer ("Verified that…", "we confirmed…"), not a word
# in a description ("checked and verified by the compiler").
_VERIFICATION = re.compile(
    r"^(?:verified|confirmed)\b|\b(?:verified|confirmed)\s*(?:that\b|:)|"
    r"\b(?:i|we|i've|we've|have|has|just)\s+(?:verified|confirmed)\b|"
    r"\b(?:works|working|passes|passing) now\b|"
    r"\bnow (?:works|passes)\b|\btests? (?:now )?pass(?:es)? (?:after|once|with|when)\b",
    re.IGNORECASE,
)
_VERIFIED_FACT = re.compile(
    r"\b(?:verified|confirmed)(?:\s+(?:with|by|in|on)\s+[^,.:]{1,40}?|\s+again|\s+locally|"
    r"\s+manually)?\s*(?:that\s+|:\s*)(?P<rest>.+)",
    re.IGNORECASE,
)

_VERBS = (
    r"run|use|call|set|pass|add|install|export|invoke|execute|type|edit|enable|disable|delete|"
    r"remove|restart|clear|rebuild|bump|pin|check|commit|push|update|upgrade|activate|source|"
    r"start|stop|kill|reset|create|write|read|put|keep|prefer|wrap|mock|load|open|close"
)
_PROCEDURAL = (
    re.compile(r"^(?:always|never)\b(?!\s+mind\b)", re.IGNORECASE),
    re.compile(r"^(?:don't|do not|avoid|make sure|be sure to|ensure)\b", re.IGNORECASE),
    re.compile(
        rf"^(?:to|before|after|when|whenever)\s+[^,]{{3,80}},\s*(?:always\s+|first\s+|just\s+)?"
        rf"(?:{_VERBS}|make sure|you (?:need to|must|have to|should))\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:you|we) (?:must|should) (?:always|never)\b", re.IGNORECASE),
    re.compile(rf"[,;—–]\s*(?:always|never)\s+(?:{_VERBS})\b", re.IGNORECASE),
    re.compile(
        r"\bmust (?:be )?(?:run|called|set|installed|executed|done)\b.*\b(?:before|after|first)\b",
        re.IGNORECASE,
    ),
)
_IMPERATIVE = re.compile(rf"^(?:{_VERBS}|avoid|don't|do not|never|always)\b", re.IGNORECASE)


def _is_error(line: _Line) -> bool:
    text = _NOT_AN_ERROR.sub("", line.text)
    return bool(_ERROR_WORDS.search(text) or _EXCEPTION.search(text))


def _found(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match not negated by the few words before it ("not yet verified")."""
    for m in pattern.finditer(text):
        if not _NEGATED.search(text[: m.start()].rstrip()[-40:] + " "):
            return m
    return None


def _classify(text: str) -> MemoryType:
    if _IMPERATIVE.match(text) or any(p.search(text) for p in _PROCEDURAL):
        return "procedural"
    if _ERROR_WORDS.search(text) or _EXCEPTION.search(text) or _RESOLUTION.search(text):
        return "experiential"
    return "factual"


# --- Candidates ----------------------------------------------------------------------------

# Where two proposals claim the same lines, the earlier trigger in this order wins: what the
# writer marked on purpose beats what we infer.
_PRECEDENCE: dict[Trigger, int] = {
    "explicit": 0,
    "error_resolution": 1,
    "verification": 2,
    "pattern": 3,
}


@dataclass(frozen=True, slots=True)
class _Candidate:
    start: int  # 0-based indexes into the line list, inclusive
    end: int
    text: str
    type: MemoryType
    confidence: Confidence
    trigger: Trigger


def _prose(lines: Sequence[_Line]) -> Iterator[tuple[int, _Line]]:
    for i, line in enumerate(lines):
        if not line.code and not line.blank and not line.folded:
            yield i, line


def _items_after(lines: Sequence[_Line], i: int, *, section: bool) -> list[tuple[int, int]]:
    """Spans of the bullets or paragraphs that a bare marker ("Lessons learned:") introduces.

    After a heading the items run to the next heading; after a marker line, to the first blank
    line that follows an item.
    """
    items: list[list[int]] = []
    previous_blank = True
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if line.heading or line.code:
            break
        if line.blank:
            if items and not section:
                break
            previous_blank = True
            continue
        if line.bullet or previous_blank or not items:
            items.append([j, j])
        else:
            items[-1][1] = j
        previous_blank = False
    return [(a, b) for a, b in items]


def _joined(lines: Sequence[_Line], start: int, end: int) -> str:
    return " ".join(line.text for line in lines[start : end + 1] if line.text)


def _explicit(lines: Sequence[_Line]) -> Iterator[_Candidate]:
    for i, line in _prose(lines):
        if line.heading:
            if _EXPLICIT_HEADING.match(line.text):
                for a, b in _items_after(lines, i, section=True):
                    yield _explicit_candidate(a, b, _joined(lines, a, b))
            continue
        if line.text.endswith("?"):
            continue
        match = next((m for p in _EXPLICIT if (m := p.search(line.text))), None)
        if match is None:
            continue
        groups = match.groupdict()
        rest = _tidy(groups.get("rest") or groups.get("rest2") or "")
        before = _tidy(line.text[: match.start()])
        if rest:
            yield _explicit_candidate(i, i, rest)
        elif before:  # "The API returns 204, not 200 — remember this."
            yield _explicit_candidate(i, i, before)
        elif items := _items_after(lines, i, section=False):
            for a, b in items:
                yield _explicit_candidate(a, b, _joined(lines, a, b))
        elif (above := _line_above(lines, i)) is not None:
            # "Remember this!" on its own line points back at the line above.
            yield _explicit_candidate(above, i, lines[above].text)


def _explicit_candidate(start: int, end: int, text: str) -> _Candidate:
    text = _shorten(text, 400)
    return _Candidate(start, end, text, _classify(text), "high", "explicit")


def _error_resolutions(lines: Sequence[_Line], window: int = 6) -> Iterator[_Candidate]:
    i = 0
    while i < len(lines):
        if lines[i].blank or lines[i].heading or not _is_error(lines[i]):
            i += 1
            continue
        # One line can carry both halves: "the ImportError was caused by a stale .pyc".
        if not lines[i].code and _found(_RESOLUTION, lines[i].text):
            end = _verified_through(lines, i)
            text = _shorten(lines[i].text, 400)
            yield _Candidate(
                i, end, text, "experiential", _verified(lines, i, end), "error_resolution"
            )
            i = end + 1
            continue
        block_end, fix = _find_fix(lines, i, window)
        if fix is None:
            i = block_end + 1
            continue
        symptom = _symptom(lines[i : block_end + 1])
        solution = _SOLUTION_PREFIX.sub("", lines[fix].text) or lines[fix].text
        end = _verified_through(lines, fix)
        text = f"{_shorten(symptom, 160)} → {_shorten(solution, 240)}"
        yield _Candidate(
            i, end, text, "experiential", _verified(lines, fix, end), "error_resolution"
        )
        i = end + 1


def _find_fix(lines: Sequence[_Line], start: int, window: int) -> tuple[int, int | None]:
    """The last line of the error block that starts at `start`, and the resolving line."""
    block_end, seen = start, 0
    for j in range(start + 1, len(lines)):
        line = lines[j]
        if line.heading:
            break
        if line.blank or line.folded:
            continue
        if line.code or _FRAME.match(line.raw):
            block_end = j  # traceback frames and fenced output belong to the error
            continue
        if _found(_RESOLUTION, line.text):
            return block_end, j
        if _is_error(line):
            block_end, seen = j, 0  # "still fails with …": same problem, window restarts
            continue
        seen += 1
        if seen >= window:
            break
    return block_end, None


def _symptom(block: Sequence[_Line]) -> str:
    errors = [line for line in block if not line.blank and _is_error(line)]
    if not errors:
        return block[0].text
    prose = next((line.text for line in errors if not line.code), None)
    exception = next((line.text for line in errors if _EXCEPTION_LINE.search(line.text)), None)
    if prose and exception and exception not in prose and len(prose) < 100:
        return f"{_tidy(prose)}: {exception}"
    return prose or exception or errors[0].text


def _verified_through(lines: Sequence[_Line], fix: int, lookahead: int = 3) -> int:
    """The line that confirms the fix (it joins the proposal's span), else the fix itself.

    Looks only within the fix's paragraph: a "verified" after a blank line is about something
    else.
    """
    if _found(_VERIFIED, lines[fix].text):
        return fix
    seen = 0
    for j in range(fix + 1, len(lines)):
        line = lines[j]
        if line.folded:
            continue
        if line.blank or line.heading or line.code or _is_error(line):
            break
        if _found(_VERIFIED, line.text):
            return j
        seen += 1
        if seen >= lookahead:
            break
    return fix


def _verified(lines: Sequence[_Line], fix: int, end: int) -> Confidence:
    return "high" if end > fix or _found(_VERIFIED, lines[fix].text) else "medium"


def _verifications(lines: Sequence[_Line]) -> Iterator[_Candidate]:
    for i, line in _prose(lines):
        if line.heading:
            continue
        for sentence in _sentences(line.text):
            if sentence.endswith("?") or not _found(_VERIFICATION, sentence):
                continue
            fact = _VERIFIED_FACT.search(sentence)
            text = _tidy(fact["rest"]) if fact else sentence
            start = i
            confidence: Confidence = "medium"
            if _content_words(text) < 3:
                # "Works now." says nothing alone; with the line above it may say what worked.
                above = _line_above(lines, i)
                if above is None:
                    continue
                start, confidence = above, "low"
                text = f"{_tidy(lines[above].text).rstrip('.')} — {text}"
            yield _Candidate(start, i, _shorten(text, 400), "factual", confidence, "verification")
            break


def _patterns(lines: Sequence[_Line]) -> Iterator[_Candidate]:
    for i, line in _prose(lines):
        if line.heading:
            continue
        found = [
            s
            for s in _sentences(line.text)
            if not s.endswith("?") and any(p.search(s) for p in _PROCEDURAL)
        ]
        if found:
            text = _shorten(" ".join(found), 400)
            confidence: Confidence = "medium" if _content_words(text) >= 3 else "low"
            yield _Candidate(i, i, text, "procedural", confidence, "pattern")


# --- Assembly ------------------------------------------------------------------------------


def _context(
    lines: Sequence[_Line],
    start: int,
    end: int,
    text: str,
    limit: int = 300,
    taken: frozenset[int] = frozenset(),
) -> str:
    """The section heading and the neighbouring lines of the same paragraph, short.

    Lines in `taken` are other proposals' own: a learning is never another one's context
    (saved there, it would make its own proposal look already known)."""
    heading = next((lines[j].text for j in range(start - 1, -1, -1) if lines[j].heading), None)
    before: list[str] = []
    for j in range(start - 1, max(-1, start - 3), -1):
        if lines[j].blank or lines[j].heading or j in taken:
            break
        before.insert(0, lines[j].text)
    # Inside the span, only what the proposal's text left out (tracebacks, failed attempts).
    inside = [
        line.text
        for line in lines[start + 1 : end + 1]
        if not line.blank
        and not _FRAME.match(line.raw)
        and line.text not in text
        and not any(p.search(line.text) for p in _EXPLICIT)
    ]
    nxt = end + 1
    after = [] if nxt >= len(lines) or lines[nxt].heading or nxt in taken else [lines[nxt].text]
    parts = [p for p in ([heading] if heading else []) + before + inside + after if p]
    joined = "\n".join(dict.fromkeys(parts))
    return joined if len(joined) <= limit else joined[: limit - 1].rstrip() + "…"


def _normal(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def propose_memories(notes: str) -> list[Proposal]:
    """Proposals found in `notes`, in the order they appear.

    Each line belongs to at most one proposal: where heuristics overlap, explicit markers win,
    then error → resolution pairs, then verifications, then procedural patterns. The same
    learning written twice is proposed once (the first time).
    """
    lines = _read(notes)
    candidates = [
        *_explicit(lines),
        *_error_resolutions(lines),
        *_verifications(lines),
        *_patterns(lines),
    ]
    # A span that ends on a wrapped bullet ends on its last continuation line.
    candidates = [replace(c, end=c.end + lines[c.end].extra) for c in candidates]
    candidates.sort(key=lambda c: (_PRECEDENCE[c.trigger], c.start, c.end))
    kept: list[_Candidate] = []
    seen: set[str] = set()
    for c in candidates:
        key = _normal(c.text)
        # No content word left ("TIL x", "Works now — ok"): nothing to remember.
        if not _keywords(c.text) or key in seen:
            continue
        if any(c.start <= k.end and k.start <= c.end for k in kept):
            continue
        kept.append(c)
        seen.add(key)
    kept.sort(key=lambda c: (c.start, c.end))
    spans = [frozenset(range(c.start, c.end + 1)) for c in kept]
    everyone = frozenset().union(*spans)
    return [
        Proposal(
            text=c.text,
            context=_context(lines, c.start, c.end, c.text, taken=everyone - span),
            type=c.type,
            confidence=c.confidence,
            trigger=c.trigger,
            keywords=_keywords(c.text),
            source_lines=(lines[c.start].number, lines[c.end].number),
        )
        for c, span in zip(kept, spans, strict=True)
    ]
