"""text: the small text rules every code reader shares (one home for each)."""

from __future__ import annotations

import re

MAX_DOC = 300  # characters of a docstring or leading comment kept: its first paragraph
MAX_TEXT = 600  # characters of a definition's string literals and comments kept
MAX_SIGNATURE = 240

_SPACE = re.compile(r"\s+")


def collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def one_line(head: str) -> str:
    s = collapse(head)
    return s if len(s) <= MAX_SIGNATURE else s[: MAX_SIGNATURE - 1] + "…"


def first_paragraph(doc: str) -> str:
    """A docstring's summary: up to its first blank line."""
    para = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    return collapse(para)
