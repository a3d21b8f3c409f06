"""docmeta: which values of a doc's frontmatter are searchable, and as what words. Pure.

A doc's frontmatter says what the doc is (author, date, tags, a speaker, a description);
a reader asks for it in those words ("what did Ada write", "notes from 8 May 2023"). The
cache indexes these values as the BM25F field `meta` (docs/decisions.md §19):

- values that are words: strings, dates, and lists of those. Booleans, empty values and
  nested mappings (build settings such as `jupytext:` or a CI trigger) say nothing a reader
  asks about and are left out, and so is a value with no word of two letters: a number
  alone (`weight: 10`, `sidebar_position: 3`, `session: 1`) or a code (`D1:3`) orders or
  labels pages, and its digits would match any number in a question;
- a string longer than MAX_VALUE_CHARS is content (a prompt, a template), not a property;
- the keys ncx reads as the doc's identity (`id`, `doc_id`, `doc-id`) are left out: a
  DOC-ID is a label, and its parts ("DOC", "API", "001") would match unrelated questions;
- `title` is left out when it heads the doc's heading trail (no H1 of its own: ncx's
  chunker puts it there), where the `title` and `trail` fields index it already;
- keys that tell a static site generator how to render the page (LAYOUT_KEYS: `layout`,
  `hide: [navigation]`, `permalink` ...) are left out: their words ("navigation", "post")
  are not what the page is about;
- keys themselves are not indexed (a question names the value, "by Ada", not "author:").

Dates: an ISO date (a YAML date, or a string starting YYYY-MM-DD) is also written the way
people say it, day, month name and year ("2023-05-08" adds "8 May 2023"), so a question
"on May 8, 2023" matches it; the ISO text stays as well. Free-form date strings ("1:56 pm
on 8 May, 2023") are words already and are indexed as they are.

A doc's date (`doc_date`: the first of DATE_KEYS, as written) is also shown with every quote
of the doc (ncx.query.assembler.Item.citation): a note's text says "recently", its
frontmatter says when, and a "when" question needs both.

The cache stores the terms these rules give: changing a rule means a new
ncx.query.cache.CACHE_VERSION.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

MAX_VALUE_CHARS = 300
IDENTITY_KEYS = frozenset({"id", "doc_id", "doc-id"})
LAYOUT_KEYS = frozenset(
    {"layout", "template", "hide", "permalink", "redirect_from", "redirect_to", "nav_exclude"}
)
# What a sidecar lends every chunk of its doc (ncx.tree.chunkfile.DocMeta) that a reader
# may ask for: recorded in each chunk block, read from there.
SIDECAR_KEYS = ("title", "status", "tags", "summary")
# The keys that date a doc, most telling first: when it was written, then when it changed
# (Jekyll and Hugo `date`, Hugo `lastmod`, Docusaurus-style `last_updated`).
DATE_KEYS = ("date", "created", "published", "updated", "last_updated", "lastmod", "modified")
MAX_DATE_CHARS = 60  # a longer value is prose, not a date to show
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?![0-9])")
_WORDY = re.compile(r"[A-Za-z]{2}")
_MONTHS = (
    "January February March April May June July August September October November December"
).split()


def meta_text(meta: Mapping[str, Any], heads: Collection[str] = ()) -> str:
    """The searchable words of a frontmatter mapping, one value a line, in key order.

    heads: the first heading of the doc's chunks' trails (its title when it has no H1)."""
    skip = (
        IDENTITY_KEYS | LAYOUT_KEYS | ({"title"} if _scalar(meta.get("title")) in heads else set())
    )
    return "\n".join(
        line for key, value in meta.items() if str(key) not in skip for line in _values(value)
    )


def doc_date(meta: Mapping[str, Any]) -> str | None:
    """The doc's date as its frontmatter writes it (a YAML date in ISO form), or None.
    Keys in any case (`Date:`, as some wikis write them)."""
    lower = {str(k).lower(): v for k, v in reversed(list(meta.items()))}  # (the first wins)
    for key in DATE_KEYS:
        value = lower.get(key)
        if isinstance(value, (str, dt.date)):
            text = (value.isoformat() if isinstance(value, dt.date) else value).strip()
            if 0 < len(text) <= MAX_DATE_CHARS and "\n" not in text:
                return text
    return None


def _values(value: Any) -> Iterator[str]:
    if isinstance(value, (list, tuple)):
        for item in value:
            if not isinstance(item, (list, tuple)):
                yield from _values(item)
        return
    text = _scalar(value)
    if text:
        yield text


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float, dt.date)):
        return None  # None, a mapping, anything YAML builds that is not a word
    text = (value.isoformat() if isinstance(value, dt.date) else str(value)).strip()
    if len(text) > MAX_VALUE_CHARS:
        return None
    text = spoken_dates(text)
    return text if _WORDY.search(text) else None


def spoken_dates(text: str) -> str:
    """`text`, followed by the ISO date it starts with (if any) as day, month name, year."""
    m = _ISO.match(text)
    if m is None:
        return text
    year, month, day = (int(g) for g in m.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return text
    return f"{text} {day} {_MONTHS[month - 1]} {year}"
