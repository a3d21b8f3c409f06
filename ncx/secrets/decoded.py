"""The decoded view: known shapes inside base64, hex and percent-encoded runs, each reported
over the whole encoded run (the reader sees the run, not what it decodes to).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from urllib.parse import unquote

from ncx.secrets.named import _url_hits
from ncx.secrets.rules import _PEM_HEADER, _PEM_RANK, _PREFIXED, _RULES, _rule_hits
from ncx.secrets.values import _b64decode, _hexdecode, _Hit

_B64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")
# Hex written byte by byte: `\x67\x68` (a bytes literal, a log), or pairs split by one
# separator used throughout (`67 68 70`, `67:68:70`, xxd and openssl dumps). Twelve bytes
# at least, as for a bare hex run. (Each starts with a literal or is gated by one.)
_HEX_ESCAPES = re.compile(r"(?:\\x[0-9a-fA-F]{2}){12,}")
_HEX_PAIRS = re.compile(
    r"[0-9a-fA-F]{2}(?P<sep>[ :])[0-9a-fA-F]{2}(?:(?P=sep)[0-9a-fA-F]{2}){10,}(?![0-9A-Za-z:])"
)
_PAIR_LEFT = frozenset(string.ascii_letters + string.digits + ":")
# Gate for _HEX_PAIRS, whose class start makes the engine try every position (a third of a
# scan of the rfcs docs): the text's bytes mapped to h (a hex digit), s (a separator) and x,
# then one C search for twelve pairs.
_HEX_SHAPE = bytes(
    ord("h") if chr(b) in string.hexdigits else ord("s") if chr(b) in " :" else ord("x")
    for b in range(256)
)
_TWELVE_PAIRS = b"hhs" * 11 + b"hh"


def _hex_pair_runs(text: str) -> Iterator[re.Match[str]]:
    if _TWELVE_PAIRS not in text.encode("utf-8", "replace").translate(_HEX_SHAPE):
        return
    for m in _HEX_PAIRS.finditer(text):
        if not m.start() or text[m.start() - 1] not in _PAIR_LEFT:  # a run, not a run's tail
            yield m


def _best_inside(decoded: str, depth: int) -> _Hit | None:
    """The most specific known shape in a decoded text (one more level of base64 inside
    is decoded too), or None."""
    inner = list(_rule_hits(decoded, _PREFIXED))
    inner += [
        _Hit("private_key", h.start(), h.end(), _PEM_RANK, "a private key")
        for h in _PEM_HEADER.finditer(decoded)
    ]
    inner += list(_url_hits(decoded))
    if depth < 1:
        inner += list(_decoded_hits(decoded, depth + 1))
    return min(inner, key=lambda h: (h.rank, h.start)) if inner else None


def _encoded_hit(best: _Hit, start: int, end: int, encoding: str) -> _Hit:
    what = next((r.label for r in _RULES if r.kind == best.kind), "a credential")
    if best.kind == "url_password":
        what = "a URL with a password"
    reason = (
        f"This {encoding} value ({end - start} characters) decodes to {what}; remove it or "
        "replace it with a placeholder."
    )
    return _Hit(best.kind, start, end, best.rank, reason)


def _decoded_hits(text: str, depth: int = 0) -> Iterator[_Hit]:
    """Known shapes inside base64 and hex runs, each reported over the whole run."""
    for m in _B64.finditer(text):
        decoded, encoding = _b64decode(m[0]), "base64"
        if decoded is None:
            decoded, encoding = _hexdecode(m[0]), "hex"
        if decoded is not None and (best := _best_inside(decoded, depth)) is not None:
            yield _encoded_hit(best, m.start(), m.end(), encoding)
    if "\\x" in text:
        for m in _HEX_ESCAPES.finditer(text):
            decoded = _hexdecode(m[0].replace("\\x", ""))
            if decoded is not None and (best := _best_inside(decoded, depth)) is not None:
                yield _encoded_hit(best, m.start(), m.end(), "hex")
    for m in _hex_pair_runs(text):
        decoded = _hexdecode(m[0].replace(m["sep"], ""))
        if decoded is not None and (best := _best_inside(decoded, depth)) is not None:
            yield _encoded_hit(best, m.start(), m.end(), "hex")


# A run of URL characters holding a %XX escape: a token percent-encoded into a query string
# or a config value, whole or only where a character needed it (`ghp%5F...`).
# (Found from its first escape, a literal `%` the engine jumps to; the run before it is
# taken by hand.)
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2}[A-Za-z0-9._~+/=-]*)+")
_URL_CHARS = frozenset(string.ascii_letters + string.digits + "._~+/=-")
# A run with one escape is decoded only from this length on (shorter than every known
# shape), so "50%20off" is never looked at.
_MIN_PERCENT_RUN = 16
# Encoded again (`%255F`: a value put into a URL that was put into a URL): decoded that
# many more times.
_PERCENT_LEVELS = 3


def _percent_hits(text: str) -> Iterator[_Hit]:
    """Known shapes inside percent-encoded runs, each reported over the whole run."""
    if "%" not in text:
        return
    for m in _PERCENT_RUN.finditer(text):
        start = m.start()
        while start > 0 and text[start - 1] in _URL_CHARS:
            start -= 1
        run = text[start : m.end()]
        if len(run) < _MIN_PERCENT_RUN and m[0].count("%") < 2:
            continue
        decoded = run
        for _ in range(_PERCENT_LEVELS):
            decoded, before = unquote(decoded), decoded
            if decoded == before:
                break
            inner = list(_rule_hits(decoded, _PREFIXED)) + list(_url_hits(decoded))
            if inner:
                best = min(inner, key=lambda h: (h.rank, h.start))
                yield _encoded_hit(best, start, m.end(), "percent-encoded")
                break
