"""secrets: find credential-shaped values in text before it becomes a memory.

Pure: text in, findings out; no I/O. Judges the shape of a value (known token prefixes,
key blocks, random-looking strings assigned to secret-sounding names), never a word alone,
so prose such as "rotate the API token weekly" passes.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["SecretFinding", "find_secrets"]


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
_TEMPLATE = re.compile(r"^\$|\$\{|\{\{|\}\}|%\(|%s\b|^<.*>$|^\[.*\]$|^\{.*\}$|\*\*\*|\.\.\.|…")
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


# --- Rules with a recognisable shape -------------------------------------------------------

_Rule = tuple[str, "re.Pattern[str]", str, int, Callable[[str], bool]]

_RULES: tuple[_Rule, ...] = (
    # (kind, pattern, label, characters of the match safe to show, validator on the match)
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:(?:RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY(?: BLOCK)?-----"
            # A bare header is prose about keys; a key has a base64 body (PEM may carry
            # Proc-Type/DEK-Info headers first).
            r"[ \t]*\r?\n(?:[A-Za-z-]+:[^\n]*\n|[ \t]*\r?\n)*[ \t]*[A-Za-z0-9+/=]{20,}"
        ),
        "a private key",
        0,
        lambda m: True,
    ),
    (
        "aws_access_key_id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        "an AWS access key id",
        4,
        lambda m: _random_tail(m[4:]),
    ),
    (
        "github_token",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        "a GitHub token",
        4,
        lambda m: _random_tail(m.split("_", 1)[1] if m.startswith("gh") else m[11:]),
    ),
    (
        "gitlab_token",
        re.compile(r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}"),
        "a GitLab personal access token",
        6,
        lambda m: _random_tail(m[6:]),
    ),
    (
        "slack_token",
        re.compile(r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}"),
        "a Slack token",
        5,
        # Real Slack tokens carry long numeric workspace/user ids; "xoxb-your-token" does not.
        lambda m: re.search(r"\d{6,}", m) is not None and not _is_placeholder(m[5:]),
    ),
    (
        "stripe_key",
        re.compile(r"(?<![A-Za-z0-9])[rs]k_live_[A-Za-z0-9]{20,}"),
        "a Stripe live key",
        8,
        lambda m: _random_tail(m[8:]),
    ),
    (
        "google_api_key",
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        "a Google API key",
        4,
        lambda m: _random_tail(m[4:]),
    ),
    (
        "anthropic_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9]+-[A-Za-z0-9_-]{20,}"),
        "an Anthropic API key",
        7,
        lambda m: _random_tail(m[7:]),
    ),
    (
        "openai_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        "an OpenAI-style API key",
        3,
        # Needs a digit: "sk-this-is-not-a-real-key" is prose-shaped, real keys are not.
        lambda m: _random_tail(m[3:]) and any(c.isdigit() for c in m),
    ),
    (
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        "a JSON Web Token",
        3,
        lambda m: _random_tail(m.split(".")[1]),
    ),
    (
        "bearer_token",
        re.compile(r"(?<=[Bb]earer )[A-Za-z0-9._~+/-]{20,}=*"),
        "a bearer token",
        0,
        lambda m: _looks_random(m, min_len=20),
    ),
)

# --- Passwords in URLs ---------------------------------------------------------------------

_URL_USERINFO = re.compile(
    r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{1,20})://(?P<user>[^\s:/@'\"<>]{1,64})"
    r":(?P<pw>[^\s/@'\"<>]{1,128})@(?=[A-Za-z0-9\[])"
)
# Passwords that tutorials and compose files use on purpose; flagging them trains users to
# ignore the guard.
_DEFAULT_PASSWORDS = frozenset({"pass", "password", "passwd", "pw", "pwd", "secret", "x"})

# --- Secret-named assignments --------------------------------------------------------------

_ASSIGNMENT = re.compile(
    r"(?P<name>(?:[A-Za-z][A-Za-z0-9]*[ ])?[A-Za-z_][A-Za-z0-9_.-]*)[\"'`*]*[ \t]*"
    r"(?::=|=>|=|:)(?!=)[ \t]*"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`|(?P<bare>[^\s\"'`,;]+))"
)
_SECRET_WORDS = frozenset({
    "token", "secret", "secrets", "password", "passwd", "pwd", "passphrase", "credential",
    "credentials", "apikey", "auth", "authorization", "privatekey", "accesskey", "secretkey",
})  # fmt: skip
_SECRET_PAIRS = frozenset({
    ("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"),
    ("signing", "key"), ("encryption", "key"), ("client", "secret"), ("master", "key"),
})  # fmt: skip
_SECRET_SUFFIXES = ("token", "secret", "password", "passwd", "apikey", "privatekey", "secretkey")
_PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "passphrase"})
# A last word that makes the name describe the secret instead of holding it:
# TOKEN_URL, password_file, secret_name, token_count, PASSWORD_HASH.
_NEUTRAL_LAST = frozenset({
    "hash", "digest", "sha", "url", "uri", "endpoint", "host", "file", "path", "dir", "name",
    "id", "ids", "type", "kind", "count", "length", "len", "size", "limit", "ttl", "expiry",
    "expires", "expiration", "field", "header", "format", "env", "var", "prefix", "version",
    "policy", "scope", "scopes", "mode", "method", "provider", "required", "enabled",
})  # fmt: skip


def _name_words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _secret_name(words: list[str]) -> str | None:
    """'password' for password-like names, 'secret' for other secret names, else None."""
    if not words or words[-1] in _NEUTRAL_LAST:
        return None
    joined = "".join(words)
    if any(w in _PASSWORD_WORDS for w in words) or joined.endswith(("password", "passwd")):
        return "password"
    if (
        any(w in _SECRET_WORDS for w in words)
        or any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))
        or joined.endswith(_SECRET_SUFFIXES)
    ):
        return "secret"
    return None


def _looks_random(value: str, *, min_len: int) -> bool:
    if len(value) < min_len or any(c.isspace() for c in value):
        return False
    if _is_placeholder(value) or _CODE_REF.search(value) or _PATH_LIKE.search(value):
        return False
    if value.isdigit() or _entropy(value) < 3.0:
        return False
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    # Random strings of this length almost always mix letters and digits; identifiers and
    # words rarely do. Long base64 without digits still counts if it mixes three classes.
    return (has_letter and has_digit) or (len(value) >= 32 and _classes(value) >= 3)


def _looks_like_password(value: str) -> bool:
    if len(value) < 6 or any(c.isspace() for c in value):
        return False
    if _is_placeholder(value) or _CODE_REF.search(value) or _PATH_LIKE.search(value):
        return False
    # A chosen password mixes classes (hunter2, Tr0ub4dor&3); a lone word or number is a
    # description or a setting (hidden, required, 3600).
    return _classes(value) >= 2 and not value.isalpha() and _entropy(value) >= 2.0


def _looks_like_aws_secret(words: list[str], value: str) -> bool:
    # AWS secret keys: exactly 40 base64 characters. Words are not checked, for the same
    # reason as the key id (AWS's documented example ends in EXAMPLEKEY).
    return (
        ("aws" in words or ("secret", "access") in itertools.pairwise(words))
        and re.fullmatch(r"[A-Za-z0-9/+]{40}", value) is not None
        and _random_tail(value)
    )


def _assignment_hits(text: str) -> Iterator[_Hit]:
    for m in _ASSIGNMENT.finditer(text):
        name = m["name"].strip()
        words = _name_words(name)
        flavour = _secret_name(words)
        if flavour is None:
            continue
        group = next(g for g in ("dq", "sq", "bq", "bare") if m[g] is not None)
        value = m[group]
        if _looks_like_aws_secret(words, value):
            kind, what = "aws_secret_access_key", "an AWS secret access key"
        elif flavour == "password" and _looks_like_password(value):
            kind, what = "assigned_password", "a password"
        elif flavour == "secret" and _looks_random(value, min_len=16):
            kind, what = "assigned_secret", "a secret"
        else:
            continue
        # Show less of short values: a few characters of an 8-character password is a hint.
        shown = min(4, len(value) // 4)
        reason = (
            f'The value assigned to "{name}" ("{_preview(value, shown)}", {len(value)} '
            f"characters) looks like {what}; replace it with a placeholder or the name of an "
            "environment variable."
        )
        yield _Hit(kind, m.start(group), m.end(group), len(_RULES) + 1, reason)


def _url_hits(text: str) -> Iterator[_Hit]:
    for m in _URL_USERINFO.finditer(text):
        pw, user = m["pw"], m["user"]
        if pw.lower() in _DEFAULT_PASSWORDS or pw == user or _is_placeholder(pw):
            continue
        if pw.startswith("%") or _CODE_REF.search(pw):
            continue  # %(password)s templates, stand-ins like PASSWORD or personal_access_token
        reason = (
            f'The URL "{m["scheme"]}://{user}:…@…" contains a password '
            f"({len(pw)} characters); keep credentials out of URLs in memories."
        )
        yield _Hit("url_password", m.start("pw"), m.end("pw"), len(_RULES), reason)


def _rule_hits(text: str) -> Iterator[_Hit]:
    for rank, (kind, pattern, label, shown, valid) in enumerate(_RULES):
        for m in pattern.finditer(text):
            value = m[0]
            if not valid(value):
                continue
            if kind == "private_key":
                header = value.split("-----")[1]
                reason = (
                    f'A "-----{header}-----" block with a key body looks like {label}; '
                    "never store keys in memories."
                )
            else:
                reason = (
                    f'This looks like {label} ("{_preview(value, shown)}", {len(value)} '
                    "characters); remove it or replace it with a placeholder."
                )
            yield _Hit(kind, m.start(), m.end(), rank, reason)


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def find_secrets(text: str) -> list[SecretFinding]:
    """Every credential-shaped value in `text`, in reading order.

    Where rules overlap (a GitHub token assigned to GITHUB_TOKEN) only the most specific
    finding is kept, so each value is reported once.
    """
    hits = sorted(
        [*_rule_hits(text), *_url_hits(text), *_assignment_hits(text)],
        key=lambda h: (h.rank, h.start),
    )
    kept: list[_Hit] = []
    for hit in hits:
        if all(hit.end <= k.start or hit.start >= k.end for k in kept):
            kept.append(hit)
    kept.sort(key=lambda h: h.start)
    return [SecretFinding(h.kind, *_position(text, h.start), h.reason) for h in kept]
