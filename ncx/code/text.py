"""text: the small text rules every code reader shares (one home for each)."""

from __future__ import annotations

import re

from ncx.errors import escaped

MAX_DOC = 300  # characters of a docstring or leading comment kept: its first paragraph
MAX_TEXT = 600  # characters of a definition's string literals and comments kept
MAX_SIGNATURE = 240
# Definitions nested deeper than this open no symbol of their own: what they hold is credited
# to the deepest one that does. Each symbol's name holds every enclosing one's, so 10,000
# nested functions (a generated parser, a fuzzing fixture) cost quadratic time and memory;
# the docs readers keep directives past 24 levels as text for the same reason.
MAX_DEPTH = 24

_SPACE = re.compile(r"\s+")
# A string literal that names an option, a setting or a key (`"--collect-only"`,
# `"ignore-paths"`, `"autodoc_typehints"`): a task quotes these, so a definition's literals of
# this shape stay searchable past MAX_TEXT (a `pytest_addoption` holds dozens of them after
# its help texts). Bounded by MAX_KEYS.
MAX_KEYS = 1200
_KEY = re.compile(r"--?[A-Za-z][\w-]*|[A-Za-z]\w*(?:[-_.][A-Za-z0-9]+)+")


def collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def words_of(parts: list[str]) -> str:
    """A definition's text from its literals and comments: collapsed, capped at MAX_TEXT, and
    the option- and setting-like literals the cap cut off after it (up to MAX_KEYS)."""
    text = collapse(" ".join(parts))
    if len(text) <= MAX_TEXT:
        return text
    kept = text[:MAX_TEXT]
    held = set(kept.split())
    keys = []
    for p in parts:
        k = p.strip().strip("\"'`")
        if len(k) <= 60 and k not in held and _KEY.fullmatch(k):
            held.add(k)
            keys.append(k)
    return f"{kept} {' '.join(keys)[:MAX_KEYS]}".rstrip() if keys else kept


def one_line(head: str) -> str:
    """A definition's head on one line, as one would write it there: `def field(*, a=1, b=2)`
    for a head written one parameter a line (`def field( *, a=1, b=2, )` before); past
    MAX_SIGNATURE cut after a whole parameter (`…, eq=None, …`, not `order=No…`)."""
    s = _CLOSE.sub(r"\1", _OPEN.sub(r"\1", collapse(head)))
    if len(s) <= MAX_SIGNATURE:
        return s
    cut = s.rfind(", ", 0, MAX_SIGNATURE - 2)
    return s[: cut + 2] + "…" if cut > MAX_SIGNATURE // 2 else s[: MAX_SIGNATURE - 1] + "…"


_OPEN = re.compile(r"([(\[]) ")  # `( *` of a head written a parameter a line
_CLOSE = re.compile(r",? ([)\]])")  # its `, )`


def first_paragraph(doc: str) -> str:
    """A docstring's summary: up to its first blank line."""
    para = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    return collapse(para)


# The line breaks of every language ncx reads (Python's tokenizer, javac, tsc, go, rustc):
# "\r\n", "\r" and "\n". Not str.splitlines(), which also breaks at form feed, U+2028 and the
# other Unicode separators: after one of those every later line number would be off.
def as_lf(text: str) -> str:
    """`text` with its line breaks made "\\n" (so `text.split("\\n")` are its lines)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def shown_path(path: str) -> str:
    """A repository path as a frame shows it: a character that is not printable (a line
    break, a control or format character) or a backtick written as an escape, so a file's
    name can never start a line of markdown or close the code span that cites it."""
    return escaped(path, also="`")
