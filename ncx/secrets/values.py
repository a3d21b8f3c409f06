"""How a value looks: random or filler, a placeholder, a name in code, a password, encoded text.

The judgements every rule of the secrets scanner shares; pure functions of one string.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One credential-shaped value: where it starts (1-based line and column) and why."""

    kind: str
    line: int
    column: int
    reason: str


@dataclass(frozen=True, slots=True)
class _Hit:
    kind: str
    start: int
    end: int
    rank: int  # lower wins when two hits overlap: a named token beats the generic rule
    reason: str


# Values that stand in for a secret rather than being one: templates, env references,
# masks and the usual filler words. Checked on the lowercased value.
_PLACEHOLDER_WORDS = (
    "example", "changeme", "change_me", "change-me", "your", "placeholder", "dummy",
    "redacted", "sample", "xxxx", "todo", "fixme", "insert", "replace", "secret_here",
    "token_here", "key_here", "notreal", "not_real", "not-real",
)  # fmt: skip
_TEMPLATE = re.compile(
    r"^\$|\$\{|\{\{|\}\}|%\(|%s\b|^<.*>$|^\[.*\]$|^\{.*\}$|^\{[A-Za-z_][\w.]*\}|\*\*\*|\.\.\.|…"
)
# Values that name where the secret lives instead of holding it: code, env lookups,
# constants (GITHUB_TOKEN), dotted attributes, snake_case or camelCase identifiers.
_CODE_REF = re.compile(
    r"environ|getenv|process\.env|ENV\[|secrets\.|vault|keyring|[()\[\]]"
    r"|^[A-Z_]+$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"
    r"|^[a-z]+(?:_[a-z]+)+$|^[a-z]+(?:[A-Z][a-z]+)+$"
    r"|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"
)
_PATH_LIKE = re.compile(r"^[~./]|://|^[\w.-]+(/[\w.-]+)+\.[A-Za-z]{1,5}$|^[A-Za-z]:\\")


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def _is_placeholder(value: str, *, words: bool = True) -> bool:
    low = value.lower()
    if _TEMPLATE.search(value) or len(set(value)) <= 2:
        return True
    # Known-prefix tokens keep their words check off: AWS's own documented example key id
    # ends in EXAMPLE and is still exactly the shape a leaked key has.
    return words and any(w in low for w in _PLACEHOLDER_WORDS)


def _random_tail(tail: str) -> bool:
    """A token body that is not filler like ghp_xxxxxxxx… or sk-aaaa…"""
    return not _is_placeholder(tail, words=False) and _entropy(tail) >= 3.0


def _preview(value: str, shown: int) -> str:
    return f"{value[:shown]}…"


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


# Passwords that tutorials and compose files use on purpose, and the metasyntactic words
# docs write for one (`ftp://foo:bar@ftp.example.org/` in marshmallow's URL validator):
# flagging them trains users to ignore the guard.
_DEFAULT_PASSWORDS = frozenset(
    {"pass", "password", "passwd", "pw", "pwd", "secret", "x", "foo", "bar", "baz", "qux", "foobar"}
)


def _looks_random(value: str, *, min_len: int) -> bool:
    if len(value) < min_len or any(c.isspace() for c in value):
        return False
    if _is_placeholder(value) or _CODE_REF.search(value) or _PATH_LIKE.search(value):
        return False
    if value.isdigit() or _entropy(value) < 3.0:
        return False
    if _words_and_a_number(value):
        return False
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    # Random strings of this length almost always mix letters and digits; identifiers and
    # words rarely do. Long base64 without digits still counts if it mixes three classes.
    return (has_letter and has_digit) or (len(value) >= 32 and _classes(value) >= 3)


_SEPARATORS = re.compile(r"[-_.]")


def _words_and_a_number(value: str) -> bool:
    """Lowercase words joined by `-`, `_` or `.`, numbered (`refreshed-token-123`, a test's
    fixture in ky): written by a person, where a generated token mixes its letters and digits
    inside its runs. (Passwords are judged apart: a chosen one may be words and a number.)"""
    if not value.islower():  # (also: no letters at all, so no words)
        return False
    parts = _SEPARATORS.split(value)
    words = [p for p in parts if p.isalpha() and len(p) >= 3]
    rest = [p for p in parts if not (p.isalpha() and len(p) >= 3)]
    return len(words) >= 2 and all((p.isdigit() and len(p) <= 4) or not p for p in rest)


def _looks_like_password(value: str) -> bool:
    if len(value) < 6 or any(c.isspace() for c in value):
        return False
    if _is_placeholder(value) or _CODE_REF.search(value) or _PATH_LIKE.search(value):
        return False
    # A chosen password mixes classes (hunter2, Tr0ub4dor&3); a lone word or number is a
    # description or a setting (hidden, required, 3600).
    return _classes(value) >= 2 and not value.isalpha() and _entropy(value) >= 2.0


def _b64decode(value: str, *, min_len: int = 24) -> str | None:
    """`value` decoded as base64 (standard or URL-safe) if that gives printable text."""
    body = value.rstrip("=")
    urlsafe = "-" in body or "_" in body
    if len(body) < min_len or len(body) % 4 == 1 or (urlsafe and ("+" in body or "/" in body)):
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(padded, altchars=b"-_" if urlsafe else None, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\r\n\t" for c in text)
    return text if text and printable >= 0.9 * len(text) else None


_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}){12,}")


def _hexdecode(value: str) -> str | None:
    """`value` decoded as hex if it is an even run of hex digits giving printable text (a
    sha or a uuid gives bytes, not text). A C-style 0x before the digits is allowed."""
    if value[:2] in ("0x", "0X"):
        value = value[2:]
    if not _HEX_RUN.fullmatch(value):
        return None
    try:
        text = bytes.fromhex(value).decode("utf-8")
    except ValueError:
        return None
    return text if text.isprintable() else None
