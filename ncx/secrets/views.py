"""Views of a text that show what it hides: normalised (invisible, look-alike and fullwidth
characters undone), joined (wrapped lines) and spliced (continuations, concatenations),
each mapped back to the original offsets. (The decoded view is `decoded`.)
"""

from __future__ import annotations

import bisect
import itertools
import re
import string
import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import replace

from ncx.secrets.decoded import _decoded_hits
from ncx.secrets.named import _assignment_hits, _Lines, _lower
from ncx.secrets.rules import _NEEDLES, _PREFIXED, _rule_hits
from ncx.secrets.values import _Hit, _random_tail

# --- Views: normalised, joined, decoded ----------------------------------------------------


class _View:
    """A rewritten text and the way back from its offsets to the original's."""

    __slots__ = ("_origins", "_starts", "text")

    def __init__(self, text: str, starts: list[int], origins: list[int]) -> None:
        self.text = text
        self._starts = starts  # view offset where each segment begins
        self._origins = origins  # original offset of that segment's first character

    def origin(self, i: int) -> int:
        k = bisect.bisect_right(self._starts, i) - 1
        return self._origins[k] + (i - self._starts[k])


class _Builder:
    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.starts: list[int] = []
        self.origins: list[int] = []
        self.pos = 0

    def add(self, s: str, origin: int) -> None:
        """Append `s`, whose characters came from `origin` onwards in the source."""
        if not s:
            return
        if not self.starts or self.origins[-1] + (self.pos - self.starts[-1]) != origin:
            self.starts.append(self.pos)
            self.origins.append(origin)
        self.pieces.append(s)
        self.pos += len(s)

    def view(self, to_source: _View | None = None) -> _View:
        origins = self.origins or [0]
        if to_source is not None:
            origins = [to_source.origin(o) for o in origins]
        return _View("".join(self.pieces), self.starts or [0], origins)


# Look-alikes of Latin letters, mapped only inside words that also hold ASCII letters or
# digits (a disguised token), never in Russian or Greek prose.
_CONFUSABLES = {
    ord(k): v
    for k, v in {
        "а": "a", "в": "B", "е": "e", "к": "k", "м": "M", "н": "H", "о": "o", "р": "p", "с": "c",
        "т": "T", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "һ": "h", "ԛ": "q",
        "ԝ": "w", "ӏ": "l", "ү": "y", "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H",
        "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S",
        "Ԛ": "Q", "Ԝ": "W", "Ү": "Y", "Ζ": "Z", "Α": "A", "Β": "B", "Ε": "E", "Η": "H", "Ι": "I",
        "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o",
        "α": "a", "ι": "i", "κ": "k", "ν": "v", "ρ": "p", "υ": "u", "χ": "x", "ı": "i", "ɡ": "g",
    }.items()
}  # fmt: skip
# Characters dropped: Unicode's format category (soft hyphen, zero-width space/joiners,
# word joiner, bidi marks, BOM, tags), plus invisible fillers (Hangul fillers, the blank
# Braille pattern) and variation selectors.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e0fff]"
)
# The format controls of rarer scripts (Kaithi, Egyptian, shorthand, musical beams), apart:
# each range in a class costs every character a comparison, and only a text holding a
# character beyond U+FFFF can hold one.
_INVISIBLE_ASTRAL = re.compile(
    "[\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a]"
)


def _has_astral(text: str) -> bool:
    """Whether `text` may hold a character beyond U+FFFF. CPython stores a str at the width
    its widest character needs, so only a 4-byte-wide one can (O(1), where max() reads it all);
    a short text may say yes without one, which costs one regex scan."""
    return sys.getsizeof(text) >= 4 * len(text)


# Compatibility forms that NFKC folds to ASCII: fullwidth forms, letterlike symbols,
# super- and subscripts, enclosed and mathematical alphanumerics, Latin ligatures.
_COMPAT = re.compile(
    "[\u00b2\u00b3\u00b9\u017f\u2070-\u209f\u2100-\u214f\u2460-\u24ff\ufb00-\ufb06"
    "\uff01-\uff5e\U0001d400-\U0001d7ff\U0001f130-\U0001f189]"
)
_LOOKALIKE = re.compile("[" + "".join(chr(c) for c in _CONFUSABLES) + "]")
# A word holding a Latin letter or digit, plain or as a compatibility form.
_LATIN_WORD = re.compile(
    r"(?<!\S)\S*[A-Za-z0-9\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\U0001d400-\U0001d7ff]\S*"
)


_NON_SPACE = re.compile(r"\S*")


def _words_around(text: str, offsets: Iterator[int]) -> Iterator[tuple[int, int]]:
    """The whitespace-delimited word around each offset (sorted), each word once."""
    done = 0
    for i in offsets:
        if i < done:
            continue
        start = i
        while start > done and not text[start - 1].isspace():
            start -= 1
        end = _NON_SPACE.match(text, i)
        assert end is not None  # "*" always matches
        done = end.end()
        yield start, done


# An invisible character written as an HTML entity or a \\u escape (a token pasted from a
# web page or a JSON file): as invisible as the character itself.
_INVISIBLE_ESCAPE = re.compile(
    r"&#(?:8203|820[4-7]|8288|173|65279|x200[bBcCdDeEfF]|x2060|xAD|xad|xFEFF|xfeff);"
    r"|&(?:ZeroWidthSpace|zwnj|zwj|shy|NoBreak);"
    r"|\\u(?:200[bBcCdD]|2060|00[aA][dD]|[fF][eE][fF][fF])"
)


def _normalised(text: str) -> _View:
    """`text` with disguises undone; touches only the characters that need it, so prose in
    other scripts costs a few regex scans."""
    spans: dict[int, int] = {}  # escapes dropped whole: start -> end
    if "&" in text or "\\u" in text:
        spans = {m.start(): m.end() for m in _INVISIBLE_ESCAPE.finditer(text)}
    if text.isascii() and not spans:
        return _View(text, [0], [0])
    edits: dict[int, str] = {}
    for m in _INVISIBLE.finditer(text):
        edits[m.start()] = ""
    if _has_astral(text):
        for m in _INVISIBLE_ASTRAL.finditer(text):
            edits[m.start()] = ""
    for m in _COMPAT.finditer(text):
        edits[m.start()] = unicodedata.normalize("NFKC", m[0])
    lookalikes = _LOOKALIKE.findall(text, 0, len(text))
    # Many look-alikes: prose in Cyrillic or Greek, where few words hold Latin letters. A
    # few: an English text quoting one, where looking at the words around them is cheaper.
    if len(lookalikes) > 100:
        words: Iterator[tuple[int, int]] = (
            w.span() for w in _LATIN_WORD.finditer(text) if not w[0].isascii()
        )
    else:
        words = _words_around(text, (m.start() for m in _LOOKALIKE.finditer(text)))
    for ws, we in words:
        word = text[ws:we]
        if _LATIN_WORD.search(word):
            for c in _LOOKALIKE.finditer(text, ws, we):
                edits[c.start()] = c[0].translate(_CONFUSABLES)
    if not edits and not spans:
        return _View(text, [0], [0])
    out = _Builder()
    done = 0
    for i in sorted(edits.keys() | spans.keys()):
        if i < done:
            continue
        out.add(text[done:i], done)
        if i in spans:
            done = spans[i]
            continue
        for ch in edits[i]:  # an expansion (a ligature) keeps every character at `i`
            out.add(ch, i)
        done = i + 1
    out.add(text[done:], done)
    return out.view()


# A line break between two token-like characters: where a wrapped key would be cut.
_RUN = frozenset(string.ascii_letters + string.digits + "_+/=.-")
_HEAD = re.compile(r"[A-Za-z0-9_+/=.-]*")
_TAIL = re.compile(r"[A-Za-z0-9_+/=.-]+")
_BREAK = re.compile(r"(?<=[A-Za-z0-9_+/=.-])[ \t]*\r?\n[ \t]*(?=[A-Za-z0-9_+/=.-])")
# Shorter than every known-prefix shape: two words of wrapped prose never get looked at.
_MIN_JOINED = 15


_PREFIXED_NEEDLES = tuple(
    sorted({n for _, r in _PREFIXED for n in _NEEDLES.get(r.kind, ())}, key=len)
)
_TWILIO_SQUASHED = re.compile(r"(?:SK|AC)[0-9a-f]{8}")
# A whole line of a token run, and a run starting the next: base64 (or hex) wrapped at a
# fixed width. (Anchored at line starts: a run searched for at every position cost more
# than the join it saves.)
_WRAPPED_RUNS = re.compile(
    r"^[ \t]*[A-Za-z0-9+/=_-]{12,}[ \t]*\r?\n[ \t]*[A-Za-z0-9+/=_-]{12}", re.MULTILINE
)


def _may_join(text: str) -> bool:
    """Whether joining lines can make a shape the lines alone do not hold: a known prefix
    appears once line breaks are taken out, or lines look like wrapped base64. (Walking
    every line break of a long doc in Python was a quarter of a scan.)"""
    if "\n" not in text:
        return False
    squashed = "".join(text.split())  # every space gone: more joins than a wrap makes
    return (
        any(n in squashed for n in _PREFIXED_NEEDLES)
        or _TWILIO_SQUASHED.search(squashed) is not None
        or _WRAPPED_RUNS.search(text) is not None
    )


def _joined_hits(view: _View) -> Iterator[tuple[_Hit, _View]]:
    """Known-prefix shapes that only exist once line breaks inside token runs are removed.

    Scans a compact text of the runs around each such break (the end of one line glued to
    the start of the next, whole lines in between), one chain per line of that text.
    """
    text = view.text
    out = _Builder()
    joins: list[int] = []
    chain_end = -1
    for b in _BREAK.finditer(text):
        cut, after = b.start(), b.end()
        head = _HEAD.match(text, after)
        assert head is not None  # "*" always matches
        if cut != chain_end:  # not a whole line of the chain before: a new chain
            need = _MIN_JOINED - (head.end() - after)
            if need > 0 and (need > cut or not _TAIL.fullmatch(text, cut - need, cut)):
                continue
            tail = cut
            while tail > 0 and text[tail - 1] in _RUN:
                tail -= 1
            out.add("\n", cut)
            out.add(text[tail:cut], tail)
        joins.append(out.pos)
        out.add(text[after : head.end()], after)
        chain_end = head.end()
    if not joins:
        return
    joined = out.view(view)
    # Base64 wrapped at a fixed width (Kubernetes manifests, mail) is decoded here too.
    for hit in itertools.chain(_rule_hits(joined.text, _PREFIXED), _decoded_hits(joined.text)):
        # Only what a join made: a hit within one line was found on that line.
        k = bisect.bisect_right(joins, hit.start)
        if k < len(joins) and joins[k] < hit.end and _random_tail(joined.text[hit.start : hit.end]):
            note = "Joined across a line break, this"
            yield replace(hit, reason=hit.reason.replace("This", note, 1)), joined


# Where a value is glued back together: a shell line continuation, two quoted strings joined
# by `+` (JavaScript, Java, Python) or simply written side by side (Python, C: the implicit
# concatenation of adjacent literals), the halves on one line or two; and the open
# parenthesis of `NAME = (` before a quoted value, so that the value reads as assigned. Each
# pattern starts with a literal (the regex engine jumps to it); the quote before a `+` or a
# gap and the `=` or `:` before a parenthesis are checked by hand.
_CONTINUATION = re.compile(r"\\\r?\n[ \t]*")
_CONCAT = re.compile(r"\+[ \t]*(?:\\?\r?\n[ \t]*)?([\"'])")
_ADJACENT = (  # one per quote: a literal start is five times faster than a class
    re.compile(r"\"(?:[ \t]+|[ \t]*\r?\n[ \t]*)(?=\")"),
    re.compile(r"'(?:[ \t]+|[ \t]*\r?\n[ \t]*)(?=')"),
)
_OPEN_PAREN = re.compile(r"\([ \t]*(?:\r?\n[ \t]*)?(?=[\"'])")
# (Every splice holds one of these; `+` alone is in most docs.)
# (An open parenthesis counts only next to another splice: it needs no needle.)
_SPLICE_NEEDLES = ("\\\n", "\\\r\n", '"+', '" +', "'+", "' +", '" "', "' '", '"\n', "'\n")


_SPLICE_MARGIN = 400
_SPLICED_NOTE = "It was joined across a line continuation or a string concatenation."


def _splices(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each splice in `text`, in order."""
    found = [m.span() for m in _CONTINUATION.finditer(text)]
    for m in _CONCAT.finditer(text):
        j = m.start()
        while j > 0 and text[j - 1] in " \t":
            j -= 1
        if j > 0 and text[j - 1] == m[1]:
            found.append((j - 1, m.end()))
    for m in itertools.chain.from_iterable(p.finditer(text) for p in _ADJACENT):
        # Two literals side by side: the quote that closes one and the one that opens the
        # next go, with the gap. (A quote is closing when the one before it on the line
        # opened a string: an odd count.)
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text.count(m[0][0], line_start, m.start()) % 2 == 1:
            found.append((m.start(), m.end() + 1))
    # An open parenthesis alone joins nothing; it counts only before another splice.
    glued = sorted(a for a, _ in found)
    for m in _OPEN_PAREN.finditer(text):
        j = m.start()
        while j > 0 and text[j - 1] in " \t":
            j -= 1
        k = bisect.bisect_left(glued, m.end())
        near = k < len(glued) and glued[k] - m.end() < _SPLICE_MARGIN
        if near and j > 0 and text[j - 1] in "=:":
            found.append((j, m.end()))
    found.sort()
    out: list[tuple[int, int]] = []
    for a, b in found:
        if out and a < out[-1][1]:
            continue
        out.append((a, b))
    return out


def _spliced_hits(view: _View) -> Iterator[tuple[_Hit, _View]]:
    """Known-prefix shapes and secret-named values that only exist once continuations and
    concatenations are taken out; only hits that span one are kept (the others were found
    where they are)."""
    text = view.text
    if not any(n in text for n in _SPLICE_NEEDLES):
        return
    spans = _splices(text)
    if not spans:
        return
    # Only the text around the splices is scanned (a token is far shorter than the margin),
    # each stretch on its own line: scanning the whole text again cost as much as the rules.
    out = _Builder()
    cuts: list[int] = []
    done = -1
    for a, b in spans:
        if done < 0 or a - done > 2 * _SPLICE_MARGIN:
            if done >= 0:
                out.add(text[done : min(len(text), done + _SPLICE_MARGIN)], done)
            start = max(0, a - _SPLICE_MARGIN)
            out.add("\n", start)
            out.add(text[start:a], start)
        else:
            out.add(text[done:a], done)
        cuts.append(out.pos)
        done = b
    out.add(text[done : min(len(text), done + _SPLICE_MARGIN)], done)
    spliced = out.view(view)
    low = _lower(spliced.text)
    lines = _Lines(spliced.text)
    for hit in itertools.chain(
        _rule_hits(spliced.text, _PREFIXED), _assignment_hits(spliced.text, low, lines)
    ):
        k = bisect.bisect_right(cuts, hit.start)
        if k < len(cuts) and cuts[k] < hit.end:
            if hit.reason.startswith("This"):
                note = "Joined across a line continuation or a string concatenation, this"
                reason = hit.reason.replace("This", note, 1)
            else:  # a value given to a secret name: its sentence starts with the name
                reason = f"{hit.reason} {_SPLICED_NOTE}"
            yield replace(hit, reason=reason), spliced
