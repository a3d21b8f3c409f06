"""The scanner: every rule and view over a text, overlaps resolved, findings in reading order."""

from __future__ import annotations

import bisect
import itertools
import re

from ncx.secrets.decoded import _decoded_hits, _percent_hits
from ncx.secrets.named import (
    _NEWLINE,
    _assignment_hits,
    _Lines,
    _lower,
    _prose_hits,
    _url_hits,
)
from ncx.secrets.rules import _RULES, _rule_hits
from ncx.secrets.values import SecretFinding, _Hit
from ncx.secrets.views import (
    _joined_hits,
    _may_join,
    _normalised,
    _spliced_hits,
    _View,
)


def _in_original(text: str, hit: _Hit, view: _View, normalised: bool) -> _Hit:
    """`hit` with the offsets of the original text; a value that only showed once invisible
    or look-alike characters were undone says so (the reader sees no such value)."""
    start, end = view.origin(hit.start), view.origin(hit.end - 1) + 1
    reason = hit.reason
    if normalised and len(view.text) and text[start:end] != view.text[hit.start : hit.end]:
        reason += " It is disguised with invisible, look-alike or fullwidth characters."
    return _Hit(hit.kind, start, end, hit.rank, reason)


def _precedence(hit: _Hit) -> tuple[int, int]:
    return hit.rank, hit.start


def find_secrets(text: str) -> list[SecretFinding]:
    """Every credential-shaped value in `text`, in reading order.

    Where rules overlap (a GitHub token assigned to GITHUB_TOKEN) only the most specific
    finding is kept, so each value is reported once.
    """
    return _findings(text, _kept_hits(text))


def redact(text: str) -> tuple[str, list[SecretFinding]]:
    """`text` with every credential replaced by `[REDACTED <kind>]`, and the findings.

    Deterministic, and the lines stay where they were: a value that spans lines (a key
    block) keeps its line breaks after the label, so the lines cited for the rest of a doc
    still point at the doc. The label has no `: ` and no quote, so it stays a plain value in
    YAML frontmatter and inside a JSON string (a notebook)."""
    hits = _kept_hits(text)
    if not hits:
        return text, []
    out: list[str] = []
    done = 0
    for h in hits:
        start, end = max(h.start, done), _span_end(text, h)
        if end <= start:
            continue
        out.append(text[done:start])
        label = f"[REDACTED {h.kind.replace('_', ' ')}]"
        out.append(label + "\n" * text.count("\n", start, end))
        done = end
    out.append(text[done:])
    return "".join(out), _findings(text, hits)


_PEM_END = re.compile(r"-----END [A-Z0-9 ]*(?:PRIVATE KEY|KEY BLOCK)-----")
_KEY_BODY_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/=:, \t-]*\r?(?:\n|$)")


def _span_end(text: str, hit: _Hit) -> int:
    """Where a hit's value really ends: a key block runs on to its END line (the rule's match
    stops after the first line of the body), or, without one, over the body lines."""
    if hit.kind != "private_key":
        return hit.end
    end = _PEM_END.search(text, hit.end, hit.end + 20_000)
    # Never across a quote: a key in a notebook runs over several JSON strings, and taking
    # out the quotes between them would leave a file that no longer parses.
    if end is not None and '"' not in text[hit.end : end.start()]:
        return end.end()
    i = hit.end
    while i < len(text):
        m = _KEY_BODY_LINE.match(text, i)
        if m is None or m.end() == i:
            break
        i = m.end()
    return i


def _kept_hits(text: str) -> list[_Hit]:
    view = _normalised(text)
    low = _lower(view.text)
    lines = _Lines(view.text)
    # Spliced hits first: one that starts where a hit of the same rank does is the same value
    # read whole (both halves of `"..." + "..."`), and the sort below keeps the first of equals.
    found: list[tuple[_Hit, _View]] = list(_spliced_hits(view))
    found += [
        (h, view)
        for h in itertools.chain(
            _rule_hits(view.text, tuple(enumerate(_RULES))),
            _url_hits(view.text, lines),
            _assignment_hits(view.text, low, lines),
            _prose_hits(view.text, low, lines),
            _decoded_hits(view.text),
            _percent_hits(view.text),
        )
    ]
    if _may_join(view.text):
        found += _joined_hits(view)
    hits = sorted((_in_original(text, h, v, v is view) for h, v in found), key=_precedence)
    kept: list[_Hit] = []  # disjoint, sorted by start
    starts: list[int] = []
    for hit in hits:
        k = bisect.bisect_right(starts, hit.start)
        if (k and kept[k - 1].end > hit.start) or (k < len(kept) and kept[k].start < hit.end):
            continue
        kept.insert(k, hit)
        starts.insert(k, hit.start)
    return kept


def _findings(text: str, kept: list[_Hit]) -> list[SecretFinding]:
    if not kept:
        return []
    line_starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
    out: list[SecretFinding] = []
    for h in kept:
        line = bisect.bisect_right(line_starts, h.start)
        out.append(SecretFinding(h.kind, line, h.start - line_starts[line - 1] + 1, h.reason))
    return out
