"""Secrets known by what they are given to: a secret-sounding name (`API_KEY = ...`), a
sentence about a password, a URL's userinfo.
"""

from __future__ import annotations

import bisect
import itertools
import re
import string
from collections.abc import Iterator

from ncx.secrets.rules import _RULES
from ncx.secrets.values import (
    _CODE_REF,
    _DEFAULT_PASSWORDS,
    _classes,
    _entropy,
    _Hit,
    _is_placeholder,
    _looks_like_password,
    _looks_random,
    _preview,
    _random_tail,
)

# --- Passwords in URLs ---------------------------------------------------------------------

_URL_USERINFO = re.compile(
    r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{1,20})://(?P<user>[^\s:/@'\"<>]{0,64})"
    r":(?P<pw>[^\s/@'\"<>]{1,128})@(?=[A-Za-z0-9\[])"
)

# --- Secret-named assignments --------------------------------------------------------------

_ASSIGNMENT = re.compile(
    r"(?P<name>(?:[A-Za-z][A-Za-z0-9]*[ ])?[A-Za-z_][A-Za-z0-9_.-]*)[\"'`*]*[ \t]*"
    r"(?P<op>:=|=>|=|:)(?!=)[ \t]*"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`|(?P<bare>[^\s\"'`,;]+))"
)
_SECRET_WORDS = frozenset({
    "token", "secret", "secrets", "password", "passwd", "pwd", "passphrase", "credential",
    "credentials", "apikey", "auth", "authorization", "privatekey", "accesskey", "secretkey",
    "pat",
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
    # "pass" only as the last word (pass=, DB_PASS): inside a name it is a pass of a
    # compiler or a linter (LintPassObject), not a password.
    if (
        any(w in _PASSWORD_WORDS for w in words)
        or joined.endswith(("password", "passwd"))
        or words[-1] == "pass"
    ):
        return "password"
    if (
        any(w in _SECRET_WORDS for w in words)
        or any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))
        or joined.endswith(_SECRET_SUFFIXES)
    ):
        return "secret"
    return None


def _looks_like_aws_secret(words: list[str], value: str) -> bool:
    # AWS secret keys: exactly 40 base64 characters. Words are not checked, for the same
    # reason as the key id (AWS's documented example ends in EXAMPLEKEY).
    return (
        ("aws" in words or ("secret", "access") in itertools.pairwise(words))
        and re.fullmatch(r"[A-Za-z0-9/+]{40}", value) is not None
        and _random_tail(value)
    )


_AWS_SECRET_REST = re.compile(r"[ \t]*\r?\n[ \t]*([A-Za-z0-9/+]+)(?![A-Za-z0-9/+=])")


def _aws_secret_rest(text: str, words: list[str], value: str, end: int) -> int | None:
    """Where an AWS secret key ends that was wrapped after `value` (the line's end): the
    next line's run completes it to 40 characters. None if it does not."""
    if not 12 <= len(value) < 40 or re.fullmatch(r"[A-Za-z0-9/+]+", value) is None:
        return None
    m = _AWS_SECRET_REST.match(text, end)
    if m is None or len(value) + len(m[1]) != 40:
        return None
    return m.end() if _looks_like_aws_secret(words, value + m[1]) else None


# Words a passphrase (correct horse battery staple) does not contain but a description of
# where a password lives does ("see the vault", "set in env").
_PROSE_WORDS = frozenset({
    "a", "an", "the", "in", "on", "of", "to", "for", "from", "and", "or", "not", "no", "is",
    "are", "be", "see", "set", "use", "via", "with", "your", "our", "my", "env", "environment",
    "variable", "vault", "secret", "secrets", "password", "value", "here", "there", "this",
    "that", "it", "none", "null", "empty", "same", "as", "at", "by", "if", "when", "only",
    "must", "should", "will", "can", "never", "always", "file", "all", "any", "user", "per",
})  # fmt: skip
_PASSPHRASE_WORD = re.compile(r"[A-Za-z]{3,}")


def _passphrase_end(text: str, start: int) -> int | None:
    """Where a passphrase of 3 to 8 plain words starting at `start` ends, if it is one."""
    line_end = text.find("\n", start)
    line = text[start : len(text) if line_end < 0 else line_end].split("#", 1)[0].rstrip()
    words = line.split()
    if not 3 <= len(words) <= 8:
        return None
    if any(not _PASSPHRASE_WORD.fullmatch(w) or w.lower() in _PROSE_WORDS for w in words):
        return None
    if _is_placeholder(line):
        return None
    return start + len(line)


_NEWLINE = re.compile("\n")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# Every name _secret_name accepts contains one of these (lowercased).
_NAME_ANCHORS = ("token", "secret", "pass", "pwd", "credential", "auth", "key", "_pat")


_NAME_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")


def _anchors(low: str, anchors: tuple[str, ...]) -> Iterator[int]:
    """Offsets of each anchor in `low` (the text, lowercased), anchor by anchor."""
    for anchor in anchors:
        i = low.find(anchor)
        while i >= 0:
            yield i
            i = low.find(anchor, i + 1)


def _lower(text: str) -> str:
    """Lowercased with offsets kept (str.lower lengthens a few letters, such as "İ")."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_OPERATOR = re.compile(r"[\"'`*]*[ \t]*(?::=|=>|=|:)(?!=)")


def _assignment_matches(text: str, low: str, lines: _Lines) -> Iterator[re.Match[str]]:
    """_ASSIGNMENT's matches whose name holds a name anchor, in reading order.

    Tries the regex only where an identifier holding an anchor is followed by an operator,
    from the start of that identifier or of the word before it ("API key:"): trying every
    position of a 100 KB text costs more than everything else together.
    """
    done = 0
    for i in sorted(set(_anchors(low, _NAME_ANCHORS))):
        if i < done:
            continue
        j = i
        while j < len(text) and text[j] in _NAME_CHARS:
            j += 1
        if _OPERATOR.match(text, j) is None:
            continue
        line_start = lines.start(i)
        s = i
        while s > line_start and text[s - 1] in _NAME_CHARS:
            s -= 1
        if s >= line_start + 2 and text[s - 1] == " " and text[s - 2] in _NAME_CHARS:
            s -= 1
            while s > line_start and text[s - 1] in _NAME_CHARS:
                s -= 1
        # Leftmost first, as a scan of the whole text would find it.
        for start in range(max(s, done), i + 1):
            m = _ASSIGNMENT.match(text, start, lines.end(i))
            if m is not None:
                done = m.end()
                yield m
                break


class _Lines:
    """Line bounds by offset, found once: searching for them anew from every anchor of a
    text with few line ends is quadratic."""

    def __init__(self, text: str) -> None:
        self.ends = [m.start() for m in _NEWLINE.finditer(text)]
        self.size = len(text)

    def start(self, i: int) -> int:
        k = bisect.bisect_left(self.ends, i)
        return self.ends[k - 1] + 1 if k else 0

    def end(self, i: int) -> int:
        k = bisect.bisect_left(self.ends, i)
        return self.ends[k] if k < len(self.ends) else self.size


def _assignment_hits(text: str, low: str, lines: _Lines) -> Iterator[_Hit]:
    for m in _assignment_matches(text, low, lines):
        name = m["name"].strip()
        words = _name_words(name)
        flavour = _secret_name(words)
        if flavour is None:
            continue
        group = next(g for g in ("dq", "sq", "bq", "bare") if m[g] is not None)
        value, end = m[group], m.end(group)
        if group == "bare" and value.endswith("}"):
            # Code: in `{"password": hashed_password}` the brace closes the mapping, and the
            # value is a variable's name (_CODE_REF), not a password.
            value = value.rstrip("}")
            end = m.start(group) + len(value)
        if group == "bare" and (amp := _QUERY_NEXT.search(value)) is not None:
            # A URL's query: `authSource=admin&connectTimeoutMS=300000` is two values, and
            # `&` ends the first (zod's connection-string tests read as one 29-character secret).
            value = value[: amp.start()]
            end = m.start(group) + len(value)
        if _looks_like_aws_secret(words, value):
            kind, what = "aws_secret_access_key", "an AWS secret access key"
        elif group == "bare" and (rest := _aws_secret_rest(text, words, value, end)) is not None:
            value, end = value + text[rest - (40 - len(value)) : rest], rest
            kind, what = "aws_secret_access_key", "an AWS secret access key"
        elif flavour == "password" and _looks_like_password(value):
            kind, what = "assigned_password", "a password"
        elif flavour == "secret" and _looks_random(value, min_len=16):
            kind, what = "assigned_secret", "a secret"
        elif flavour == "password" and (phrase := _passphrase(text, m, group)) is not None:
            value, end = text[m.start(group) : phrase], phrase
            kind, what = "assigned_password", "a passphrase"
        elif flavour == "password" and _env_passphrase(m, group, value):
            kind, what = "assigned_password", "a passphrase"
        else:
            continue
        # Show less of short values: a few characters of an 8-character password is a hint.
        shown = min(4, len(value) // 4)
        reason = (
            f'The value assigned to "{name}" ("{_preview(value, shown)}", {len(value)} '
            f"characters) looks like {what}; replace it with a placeholder or the name of an "
            "environment variable."
        )
        yield _Hit(kind, m.start(group), end, len(_RULES) + 1, reason)


_QUERY_NEXT = re.compile(r"&[A-Za-z_][\w.-]*=")


def _env_passphrase(m: re.Match[str], group: str, value: str) -> bool:
    """DB_PASSWORD=correcthorsebatterystaple: words run together, all lower case, in an env
    file (NAME=value, no spaces). A description there would have spaces or be short."""
    env_style = m["op"] == "=" and m.start("op") == m.end("name") and m.end("op") == m.start(group)
    return (
        env_style
        and group == "bare"
        and len(value) >= 16
        and value.isalpha()
        and value.islower()
        and value.isascii()
        and not _is_placeholder(value)
        and _entropy(value) >= 3.0
    )


def _passphrase(text: str, m: re.Match[str], group: str) -> int | None:
    """End of a passphrase given to a password name: quoted, or NAME=words to the line end."""
    if group != "bare":
        end = _passphrase_end(m[group], 0)
        return m.start(group) + end if end == len(m[group]) else None
    # Bare words run on only in env-file style (DB_PASSWORD=correct horse ...), never in
    # YAML or prose ("password: required for all users").
    env_style = m["op"] == "=" and m.start("op") == m.end("name") and m.end("op") == m.start(group)
    return _passphrase_end(text, m.start(group)) if env_style else None


# --- Passwords in sentences ----------------------------------------------------------------

_PROSE_PASSWORD = re.compile(
    r"(?i)(?<![\w$.-])(?:password|passwd|passphrase|pwd|passwort|kennwort|contraseña|senha"
    r"|mot de passe|пароль)s?(?![\w(-])"
    r"(?:[ \t]+(?:for|of|on)[ \t]+(?:the[ \t]+)?[\w.@-]+)?"
    r"(?:[\"'`*]*[ \t]*[:=][ \t]*"
    r"|[ \t]+(?:is|was|remains|equals|ist|lautet|est|es|é)[ \t]+(?:now[ \t]+|still[ \t]+)?"
    r"|[ \t]+(?:(?:is|was)[ \t]+)?(?:set|changed)?[ \t]*to[ \t]+)"
    r"[\"'`]?(?P<v>[^\s\"'`]+)"
)
_PROSE_ANCHORS = ("pass", "pwd", "kennwort", "contraseña", "senha", "mot de passe", "пароль")
# Tokens that mix letters and digits and still name something: algorithms, encodings.
_TECH_TERMS = frozenset({
    "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "argon2", "argon2id", "argon2i",
    "pbkdf2", "base64", "base32", "utf8", "utf16", "aes128", "aes256", "hs256", "rs256",
    "es256", "x509", "pkcs1", "pkcs8", "pkcs12", "ed25519", "oauth2", "http2", "ipv4", "ipv6",
    "sha3", "blake2b", "blake3", "scrypt", "bcrypt", "2fa", "mfa", "totp", "v1", "v2", "v3",
})  # fmt: skip
_HEADER_CASE = re.compile(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)+")


def _looks_like_prose_password(value: str) -> bool:
    if not _looks_like_password(value) or _HEADER_CASE.fullmatch(value):
        return False
    runs = re.findall(r"[A-Za-z0-9]+", value)
    # "bcrypt-hashed", "base64-encoded": a description of the password, not one.
    if any(r.isalpha() and len(r) >= 5 and r.lower().endswith(("ed", "ing")) for r in runs):
        return False
    mixed = [r for r in runs if not r.isalpha() and not r.isdigit()]
    if mixed and all(r.lower() in _TECH_TERMS for r in mixed):
        mixed = []
    symbol_inside = any(not c.isalnum() for c in value[1:-1])
    lower_upper = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return bool(mixed) or (symbol_inside and lower_upper and _classes(value) >= 3)


def _prose_hits(text: str, low: str, lines: _Lines) -> Iterator[_Hit]:
    found = (_PROSE_PASSWORD.match(text, i, lines.end(i)) for i in _anchors(low, _PROSE_ANCHORS))
    for m in found:
        if m is None:
            continue
        value = m["v"].rstrip(".,;:!?)]}>*")
        if not _looks_like_prose_password(value):
            continue
        shown = min(4, len(value) // 4)
        reason = (
            f'The password given in this sentence ("{_preview(value, shown)}", {len(value)} '
            "characters) looks like a real password; replace it with a placeholder or say "
            "where it is stored."
        )
        yield _Hit(
            "assigned_password", m.start("v"), m.start("v") + len(value), len(_RULES) + 2, reason
        )


def _url_matches(text: str, lines: _Lines) -> Iterator[re.Match[str]]:
    # The scheme ends at "://"; it is at most 21 characters long.
    i = text.find("://")
    while i >= 0:
        end = lines.end(i)
        if text.find("@", i, end) >= 0:
            for start in range(max(lines.start(i), i - 21), i):
                m = _URL_USERINFO.match(text, start, end)
                if m is not None:
                    yield m
                    break
        i = text.find("://", i + 1)


def _url_hits(text: str, lines: _Lines | None = None) -> Iterator[_Hit]:
    for m in _url_matches(text, lines or _Lines(text)):
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
