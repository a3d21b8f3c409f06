"""secrets: find credential-shaped values in text before it becomes a memory.

Pure: text in, findings out; no I/O. Judges the shape of a value (known token prefixes,
key blocks, random-looking strings assigned to secret-sounding names), never a word alone,
so prose such as "rotate the API token weekly" passes.

The text is read through three views, each mapped back to the original offsets:
- normalised: NFKC (fullwidth forms), format characters (zero-width spaces, soft hyphens)
  dropped, and Cyrillic/Greek look-alikes mapped to Latin inside words that also hold
  ASCII letters or digits, so a disguised key reads as the key;
- joined: a token-like run at the end of a line glued to the run starting the next line,
  looked at only for known-prefix shapes that cross the join (a key broken by wrapping);
- decoded: base64 runs that decode to printable text, looked at for known shapes only.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
import math
import re
import string
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import NamedTuple

__all__ = ["SecretFinding", "find_secrets", "redact"]


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


# --- Rules with a recognisable shape -------------------------------------------------------


class _Rule(NamedTuple):
    kind: str
    pattern: re.Pattern[str]
    label: str
    shown: int  # characters of the value safe to show
    valid: Callable[[re.Match[str]], bool]
    # A known prefix or fixed frame: specific enough to look for in joined lines and in
    # decoded base64, where the generic rules would be noise.
    prefixed: bool = True
    # Characters that may not come right before the match (a leading look-behind in the
    # written pattern, checked here instead so that the regex engine can jump straight to
    # the literal prefix: a look-behind first makes it try every position).
    left: re.Pattern[str] | None = None


_LEADING_LOOKBEHIND = re.compile(r"\(\?<!(\[[^\]]*\])\)")


def _rule(
    kind: str,
    pattern: re.Pattern[str],
    label: str,
    shown: int,
    valid: Callable[[re.Match[str]], bool],
    *,
    prefixed: bool = True,
) -> _Rule:
    lead = _LEADING_LOOKBEHIND.match(pattern.pattern)
    if lead is None:
        return _Rule(kind, pattern, label, shown, valid, prefixed)
    rest = re.compile(pattern.pattern[lead.end() :], pattern.flags)
    return _Rule(kind, rest, label, shown, valid, prefixed, re.compile(lead[1]))


def _value(m: re.Match[str]) -> str:
    """The credential itself: the named group "v" where a rule has one, else the match."""
    return m["v"] if "v" in m.re.groupindex else m[0]


def _tail(skip: int) -> Callable[[re.Match[str]], bool]:
    """Validator: the value after its `skip`-character prefix is random, not filler."""
    return lambda m: _random_tail(_value(m)[skip:])


def _tail_digit(skip: int) -> Callable[[re.Match[str]], bool]:
    return lambda m: _random_tail(_value(m)[skip:]) and _has_digit(_value(m)[skip:])


# Passwords that tutorials and compose files use on purpose; flagging them trains users to
# ignore the guard.
_DEFAULT_PASSWORDS = frozenset({"pass", "password", "passwd", "pw", "pwd", "secret", "x"})

# Separators between a key header and its body: spaces, real newlines, or the literal "\n"
# of a key pasted inside a JSON string (GCP service-account files).
_PEM_SEP = r"(?:[ \t]|\\r|\\n|\r|\n)"
# Any case (a key pasted through a tool that lowered it is still a key), and the SSH2
# (RFC 4716 / ssh.com) armour, which has four dashes and spaces.
_PEM_BEGIN = (
    r"(?:-----(?i:BEGIN (?P<what>(?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?)-----"
    r"|---- (?i:BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY) ----)"
)
# Near a Twilio-shaped id: something saying what it is.
_TWILIO_CONTEXT = re.compile(r"(?i)twilio|\bsid\b|secret|token|api[ _-]?key|auth")
_BASIC_DEFAULTS = frozenset({"pass", "password", "passwd", "pw", "pwd", "secret", "x", ""})


def _twilio(m: re.Match[str]) -> bool:
    # An API key sid (SK...) is half of a credential pair and only ever pasted with it; an
    # account sid (AC...) is an id docs quote, so it needs something saying what it is.
    if not _random_tail(m[0][2:]):
        return False
    if m[0].startswith("SK") and _has_digit(m[0][2:]) and re.search("[a-f]", m[0][2:]):
        return True
    around = m.string[max(0, m.start() - 120) : m.end() + 40]
    return _TWILIO_CONTEXT.search(around) is not None


def _basic_credentials(m: re.Match[str]) -> bool:
    decoded = _b64decode(m["v"], min_len=4)
    if decoded is None or ":" not in decoded:
        return False
    user, pw = decoded.split(":", 1)
    return pw.lower() not in _BASIC_DEFAULTS and pw != user and not _is_placeholder(pw)


def _netrc_password(m: re.Match[str]) -> bool:
    pw = m["v"]
    if pw.lower() in _DEFAULT_PASSWORDS or _is_placeholder(pw) or _CODE_REF.search(pw):
        return False
    return _looks_like_password(pw) or _looks_random(pw, min_len=16)


_BARE_KEY = "a private key body"
_BARE_KEY_STARTS = ("MII", "MHcCAQEEI", "b3BlbnNzaC1rZXktdjE")


def _cli_value_ok(pw: str) -> bool:
    if pw.lower() in _DEFAULT_PASSWORDS or pw.startswith("$") or _is_placeholder(pw):
        return False
    return _looks_like_password(pw)


_RULES: tuple[_Rule, ...] = (
    _rule(
        "private_key",
        re.compile(
            _PEM_BEGIN
            # A bare header is prose about keys; a key has a base64 body, on the next line,
            # on the same line (a key squeezed onto one line) or after "\n" in JSON. PEM may
            # carry Proc-Type/DEK-Info headers, PGP armour a Version line, first.
            # (each header runs to its line end: no way to split spaces between it and
            # the next separator, which would make a header-and-spaces line quadratic).
            + rf"(?:{_PEM_SEP}*[A-Za-z][A-Za-z-]*:[^\n\\]*(?=\\[rn]|\r|\n))*{_PEM_SEP}+"
            r"(?P<body>[A-Za-z0-9+/=]{20,})"
        ),
        "a private key",
        0,
        lambda m: _classes(m["body"]) >= 2,
        prefixed=False,
    ),
    _rule(
        "private_key",
        re.compile(
            r"PuTTY-User-Key-File-\d:[^\n]*\n(?:[^\n]*\n){0,6}?Private-Lines:[ \t]*\d+"
            r"[ \t]*\r?\n(?P<body>[A-Za-z0-9+/=]{20,})"
        ),
        "a PuTTY private key",
        0,
        lambda m: _classes(m["body"]) >= 2,
        prefixed=False,
    ),
    _rule(
        "aws_access_key_id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        "an AWS access key id",
        4,
        _tail(4),
    ),
    _rule(
        "github_token",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        "a GitHub token",
        4,
        lambda m: _random_tail(m[0].split("_", 1)[1] if m[0].startswith("gh") else m[0][11:]),
    ),
    _rule(
        "gitlab_token",
        re.compile(r"(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|oas)-[A-Za-z0-9_-]{20,}"),
        "a GitLab token",
        6,
        lambda m: _random_tail(m[0].split("-", 1)[1]),
    ),
    _rule(
        "slack_webhook",
        re.compile(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/"
            r"B?[A-Z0-9]{6,}/[A-Za-z0-9]{16,}"
        ),
        "a Slack webhook URL",
        len("https://hooks.slack.com/"),
        lambda m: _random_tail(m[0].rsplit("/", 1)[1]),
    ),
    _rule(
        "slack_token",
        re.compile(r"(?<![A-Za-z0-9])(?:xox[abprse]|xapp)-[A-Za-z0-9-]{10,}"),
        "a Slack token",
        5,
        # Real Slack tokens carry long numeric workspace/user ids; "xoxb-your-token" does not.
        lambda m: re.search(r"\d{6,}", m[0]) is not None and not _is_placeholder(m[0][5:]),
    ),
    _rule(
        "discord_webhook",
        re.compile(
            r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{15,20}/"
            r"[A-Za-z0-9_-]{50,80}"
        ),
        "a Discord webhook URL",
        len("https://discord.com/"),
        lambda m: _random_tail(m[0].rsplit("/", 1)[1]),
    ),
    _rule(
        "stripe_key",
        re.compile(r"(?<![A-Za-z0-9])[rs]k_live_[A-Za-z0-9]{20,}"),
        "a Stripe live key",
        8,
        _tail(8),
    ),
    _rule(
        "google_api_key",
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        "a Google API key",
        4,
        _tail(4),
    ),
    _rule(
        "google_oauth_secret",
        re.compile(r"(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])"),
        "a Google OAuth client secret",
        7,
        _tail(7),
    ),
    _rule(
        "anthropic_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9]+-[A-Za-z0-9_-]{20,}"),
        "an Anthropic API key",
        7,
        _tail(7),
    ),
    _rule(
        "openai_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        "an OpenAI-style API key",
        3,
        # Needs a digit: "sk-this-is-not-a-real-key" is prose-shaped, real keys are not.
        _tail_digit(3),
    ),
    _rule(
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        "a JSON Web Token",
        3,
        lambda m: _random_tail(m[0].split(".")[1]),
    ),
    _rule(
        "sendgrid_key",
        re.compile(
            r"(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}(?![A-Za-z0-9_-])"
        ),
        "a SendGrid API key",
        3,
        lambda m: _random_tail(m[0].rsplit(".", 1)[1]),
    ),
    _rule(
        "npm_token",
        re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])"),
        "an npm access token",
        4,
        _tail_digit(4),
    ),
    _rule(
        "pypi_token",
        re.compile(r"(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,}"),
        "a PyPI API token",
        5,
        _tail(8),
    ),
    _rule(
        "huggingface_token",
        re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,40}(?![A-Za-z0-9_])"),
        "a Hugging Face token",
        3,
        lambda m: _random_tail(m[0][3:]) and _classes(m[0][3:]) >= 2,
    ),
    _rule(
        "databricks_token",
        re.compile(r"(?<![A-Za-z0-9_])dapi[0-9a-f]{32}(?:-\d)?(?![A-Za-z0-9_])"),
        "a Databricks token",
        4,
        _tail_digit(4),
    ),
    _rule(
        "shopify_token",
        re.compile(r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9_])"),
        "a Shopify access token",
        6,
        _tail_digit(6),
    ),
    _rule(
        "square_token",
        re.compile(
            r"(?<![A-Za-z0-9_-])(?:sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|EAAA[A-Za-z0-9_-]{60})"
            r"(?![A-Za-z0-9_-])"
        ),
        "a Square access token",
        4,
        _tail(7),
    ),
    _rule(
        "mailgun_key",
        re.compile(r"(?<![A-Za-z0-9_-])key-[0-9a-z]{32}(?![A-Za-z0-9_-])"),
        "a Mailgun API key",
        4,
        _tail_digit(4),
    ),
    _rule(
        "digitalocean_token",
        re.compile(r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])"),
        "a DigitalOcean token",
        7,
        _tail_digit(7),
    ),
    _rule(
        "atlassian_token",
        re.compile(r"(?<![A-Za-z0-9_-])AT(?:ATT|CTT)[A-Za-z0-9_=-]{50,}"),
        "an Atlassian API token",
        5,
        _tail(5),
    ),
    _rule(
        "telegram_bot_token",
        re.compile(r"(?<![0-9A-Za-z])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
        "a Telegram bot token",
        0,
        lambda m: _random_tail(m[0].split(":", 1)[1]),
    ),
    _rule(
        "twilio_key",
        re.compile(r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9])"),
        "a Twilio key or account id",
        2,
        _twilio,
    ),
    _rule(
        "vault_token",
        re.compile(r"(?<![A-Za-z0-9_.-])hv[sb]\.[A-Za-z0-9_-]{24,}"),
        "a HashiCorp Vault token",
        4,
        _tail_digit(4),
    ),
    _rule(
        "age_secret_key",
        re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
        "an age secret key",
        15,
        _tail(15),
    ),
    _rule(
        "private_key",
        re.compile(
            # A key's base64 body pasted without its header: the DER of an RSA, PKCS#8 or
            # EC private key, or the openssh-key-v1 magic, each fixed by its format.
            r"(?<![A-Za-z0-9+/])(?P<v>(?:MII[A-Za-z0-9+/]{3}(?:IBAAKC|IBADANBgkqhkiG9w0BAQEFAASC)"
            r"|MHcCAQEEI|MIG[A-Za-z0-9+/]AgEAMB[A-Za-z0-9+/]GByqGSM49|b3BlbnNzaC1rZXktdjE)"
            r"[A-Za-z0-9+/=]{24,})"
        ),
        _BARE_KEY,
        0,
        lambda m: _classes(m["v"]) >= 3,
    ),
    _rule(
        "webhook_secret",
        re.compile(r"(?<![A-Za-z0-9_])whsec_[A-Za-z0-9+/=]{24,}"),
        "a webhook signing secret",
        6,
        _tail_digit(6),
    ),
    _rule(
        "postman_key",
        re.compile(r"(?<![A-Za-z0-9_-])PMAK-[0-9a-f]{24}-[0-9a-f]{34}(?![A-Za-z0-9_-])"),
        "a Postman API key",
        5,
        _tail(5),
    ),
    _rule(
        "newrelic_key",
        re.compile(r"(?<![A-Za-z0-9_-])NR(?:AK|AA|II|JS)-[A-Z0-9]{27}(?![A-Za-z0-9_-])"),
        "a New Relic key",
        5,
        _tail_digit(5),
    ),
    _rule(
        "linear_key",
        re.compile(r"(?<![A-Za-z0-9_])lin_(?:api|oauth)_[A-Za-z0-9]{32,}"),
        "a Linear API key",
        8,
        lambda m: _random_tail(m[0].rsplit("_", 1)[1]),
    ),
    *(
        _rule(
            "notion_token",
            re.compile(pattern),
            "a Notion integration token",
            4,
            lambda m: _random_tail(m[0].split("_", 1)[1]) and _has_digit(m[0]),
        )
        for pattern in (
            r"(?<![A-Za-z0-9_])ntn_[A-Za-z0-9]{40,}(?![A-Za-z0-9_])",
            r"(?<![A-Za-z0-9_])secret_[A-Za-z0-9]{43}(?![A-Za-z0-9_])",
        )
    ),
    _rule(
        "doppler_token",
        re.compile(
            r"(?<![A-Za-z0-9_.])dp\.(?:st|ct|pt|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,}"
        ),
        "a Doppler token",
        6,
        lambda m: _random_tail(m[0].rsplit(".", 1)[1]),
    ),
    _rule(
        "google_oauth_token",
        re.compile(r"(?<![A-Za-z0-9_.-])ya29\.[A-Za-z0-9_-]{30,}"),
        "a Google OAuth access token",
        5,
        _tail_digit(5),
    ),
    _rule(
        "mailchimp_key",
        re.compile(r"(?<![A-Za-z0-9_-])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9_-])"),
        "a Mailchimp API key",
        0,
        lambda m: _random_tail(m[0][:32]) and re.search("[a-f]", m[0][:32]) is not None,
    ),
    _rule(
        "azure_sas",
        re.compile(
            r"[?&]sv=[0-9-]{8,12}&[^\s\"'<>]*?\bsig=(?P<v>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})"
        ),
        "an Azure shared access signature",
        0,
        lambda m: _random_tail(m["v"]),
        prefixed=False,
    ),
    _rule(
        "azure_function_key",
        re.compile(
            r"(?:\.azurewebsites\.net/[^\s\"'<>?]*\?(?:[^\s\"'<>]*&)?code=|x-functions-key:[ \t]*)"
            r"(?P<v>[A-Za-z0-9_-]{30,}(?:==|%3D%3D)?)"
        ),
        "an Azure Functions key",
        0,
        lambda m: _random_tail(m["v"]) and _has_digit(m["v"]),
        prefixed=False,
    ),
    # The password glued to -p (mysql), after sshpass -p or redis-cli -a, and after -p or
    # --password in a docker login: command lines pasted into notes. One rule per tool, each
    # starting with its name, so the regex engine jumps to it instead of trying every place.
    *(
        _rule(
            "cli_password",
            re.compile(pattern),
            "a password on a command line",
            0,
            lambda m: _cli_value_ok(m["v"]),
            prefixed=False,
        )
        for pattern in (
            r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?[ \t]-p"
            r"(?P<v>[^\s'\"-][^\s'\"]{3,})",
            r"(?<![\w-])sshpass[ \t]+-p[ \t]*['\"]?(?P<v>[^\s'\"]+)",
            r"(?<![\w-])redis-cli\b[^\n]*?[ \t]-a[ \t]+['\"]?(?P<v>[^\s'\"]+)",
            r"(?<![\w-])docker[ \t]+login\b[^\n]*?[ \t](?:-p|--password)[ \t]+['\"]?"
            r"(?P<v>[^\s'\"]+)",
        )
    ),
    _rule(
        "django_secret_key",
        re.compile(r"(?<![A-Za-z0-9_])SECRET_KEY[ \t]*=[ \t]*['\"](?P<v>[^'\"\n]{30,})['\"]"),
        "a Django SECRET_KEY",
        0,
        lambda m: (
            (
                m["v"].startswith("django-insecure-")
                or (
                    _entropy(m["v"]) >= 4.0
                    and _classes(m["v"]) >= 3
                    and not _is_placeholder(m["v"])
                )
            )
            and not re.search(r"environ|getenv|config\(|settings\.", m["v"])
        ),
        prefixed=False,
    ),
    _rule(
        "azure_storage_key",
        re.compile(
            r"(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*"
            r"(?P<v>[A-Za-z0-9+/]{20,}={0,2})"
        ),
        "an Azure storage or service-bus key",
        0,
        lambda m: _random_tail(m["v"]) and _classes(m["v"]) >= 3,
        prefixed=False,
    ),
    _rule(
        "netrc_password",
        re.compile(
            r"(?<![\w-])(?:machine[ \t]+(?:localhost|[\w-]+(?:\.[\w-]+)+)|default)\s+"
            r"(?:login[ \t]+\S+\s+)?(?:account[ \t]+\S+\s+)?password[ \t]+(?P<v>\S+)"
        ),
        "a .netrc password",
        0,
        _netrc_password,
        prefixed=False,
    ),
    _rule(
        "cli_password",
        re.compile(
            r"(?<![\w-])(?:-u|--user)(?:[ \t]+|=)[\"']?(?P<user>[^\s:\"'@]{1,64}):"
            r"(?P<v>[^\s\"']{1,128})"
        ),
        "a password on a command line (user:password)",
        0,
        lambda m: (
            m["v"] != m["user"]
            and m["v"].lower() not in _DEFAULT_PASSWORDS
            and _looks_like_password(m["v"])
        ),
        prefixed=False,
    ),
    _rule(
        "basic_auth",
        re.compile(
            r"(?<![A-Za-z0-9])[Bb]asic[ \t]+(?P<v>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])"
        ),
        "HTTP Basic credentials",
        0,
        _basic_credentials,
        prefixed=False,
    ),
    _rule(
        "bearer_token",
        re.compile(r"[Bb]earer (?P<v>[A-Za-z0-9._~+/-]{20,}=*)"),
        "a bearer token",
        0,
        lambda m: _looks_random(m["v"], min_len=20),
        prefixed=False,
    ),
)
_PREFIXED = tuple((rank, r) for rank, r in enumerate(_RULES) if r.prefixed)
# Inside decoded base64 a key header alone is enough: nobody base64-encodes prose about keys.
_PEM_HEADER = re.compile(_PEM_BEGIN)
_PEM_RANK = 0
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
        if _looks_like_aws_secret(words, value):
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


def _rule_reason(rule: _Rule, m: re.Match[str]) -> str:
    if rule.kind == "private_key":
        header = (
            f"-----BEGIN {m['what'] or ''}PRIVATE KEY-----"
            if "what" in m.re.groupindex
            else "PuTTY-User-Key-File"
        )
        if rule.label == _BARE_KEY:
            return (
                "A base64 key body without its header (the start of a DER or OpenSSH private "
                "key) looks like a private key; never store keys in memories."
            )
        return (
            f'A "{header}" block with a key body looks like {rule.label}; never store keys in '
            "memories."
        )
    value = _value(m)
    return (
        f'This looks like {rule.label} ("{_preview(value, rule.shown)}", {len(value)} '
        "characters); remove it or replace it with a placeholder."
    )


# Literal text every match of a kind's rules contains (any one of them): a rule whose needles
# are all absent is not run. `in` is a C scan; a pattern that starts with a class or an
# alternation makes the regex engine try every position of the text, and docs are scanned
# at every sync that re-reads them (a 9 MB doc set: 1.8 s of rules without this).
_NEEDLES: dict[str, tuple[str, ...]] = {
    "private_key": (
        "-----",
        "---- ",
        "PuTTY-User-Key-File-",
        "MII",
        "MHcCAQEEI",
        "b3BlbnNzaC1rZXktdjE",
    ),
    "aws_access_key_id": ("AKIA", "ASIA"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab_token": ("glpat-", "gldt-", "glrt-", "glptt-", "gloas-"),
    "slack_webhook": ("https://hooks.slack.com/",),
    "slack_token": ("xox", "xapp-"),
    "discord_webhook": ("discord",),
    "stripe_key": ("k_live_",),
    "google_api_key": ("AIza",),
    "google_oauth_secret": ("GOCSPX-",),
    "anthropic_key": ("sk-ant-",),
    "openai_key": ("sk-",),
    "jwt": ("eyJ",),
    "sendgrid_key": ("SG.",),
    "npm_token": ("npm_",),
    "pypi_token": ("pypi-AgE",),
    "huggingface_token": ("hf_",),
    "databricks_token": ("dapi",),
    "shopify_token": ("shp",),
    "square_token": ("sq0", "EAAA"),
    "mailgun_key": ("key-",),
    "digitalocean_token": ("_v1_",),
    "atlassian_token": ("ATATT", "ATCTT"),
    "telegram_bot_token": (":AA",),
    "vault_token": ("hvs.", "hvb."),
    "age_secret_key": ("AGE-SECRET-KEY-1",),
    "azure_storage_key": ("AccountKey", "SharedAccessKey"),
    "netrc_password": ("password",),
    "cli_password": ("-u", "mysql", "mariadb", "sshpass", "redis-cli", "docker"),
    "basic_auth": ("asic",),
    "bearer_token": ("earer",),
    "webhook_secret": ("whsec_",),
    "postman_key": ("PMAK-",),
    "newrelic_key": ("NRAK-", "NRAA-", "NRII-", "NRJS-"),
    "linear_key": ("lin_api_", "lin_oauth_"),
    "notion_token": ("ntn_", "secret_"),
    "doppler_token": ("dp.",),
    "google_oauth_token": ("ya29.",),
    "mailchimp_key": ("-us",),
    "azure_sas": ("sig=",),
    "azure_function_key": ("azurewebsites.net/", "x-functions-key:"),
    "django_secret_key": ("SECRET_KEY",),
}


# The kinds whose patterns start with a class, an alternation or a look-around (the engine
# tries every position) and whose needles are cheaper than that. A pattern with a literal
# start is searched for as fast as `in` finds its needle (measured per rule on the rfcs docs:
# telegram 0.10 s of regex against 0.007 s of needles; github 0.005 against 0.029).
_GATED = frozenset({
    "slack_webhook", "stripe_key", "anthropic_key", "square_token", "telegram_bot_token",
    "age_secret_key", "mailchimp_key", "azure_sas",
    "azure_function_key", "azure_storage_key", "netrc_password",
    "basic_auth", "bearer_token",
})  # fmt: skip


def _rule_hits(text: str, rules: Iterable[tuple[int, _Rule]]) -> Iterator[_Hit]:
    for rank, rule in rules:
        if rule.kind in _GATED and not any(n in text for n in _NEEDLES[rule.kind]):
            continue
        if rule.label == _BARE_KEY and not any(n in text for n in _BARE_KEY_STARTS):
            continue
        for m in rule.pattern.finditer(text):
            start = m.start()
            if rule.left is not None and start and rule.left.match(text, start - 1):
                continue
            if not rule.valid(m):
                continue
            group = "v" if "v" in rule.pattern.groupindex else 0
            yield _Hit(rule.kind, m.start(group), m.end(group), rank, _rule_reason(rule, m))


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
# word joiner, bidi marks, BOM, tags), plus invisible fillers and variation selectors.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e0fff]"
)
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


_B64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")


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
    sha or a uuid gives bytes, not text)."""
    if not _HEX_RUN.fullmatch(value):
        return None
    try:
        text = bytes.fromhex(value).decode("utf-8")
    except ValueError:
        return None
    return text if text.isprintable() else None


# A run of URL characters holding at least two %XX escapes: a token percent-encoded into a
# query string or a config value.
# (Found from its first escape, a literal `%` the engine jumps to; the run before it is
# taken by hand.)
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2}[A-Za-z0-9._~+/=-]*){2,}")
_URL_CHARS = frozenset(string.ascii_letters + string.digits + "._~+/=-")


def _percent_hits(text: str) -> Iterator[_Hit]:
    """Known shapes inside percent-encoded runs, each reported over the whole run."""
    if "%" not in text:
        return
    from urllib.parse import unquote

    for m in _PERCENT_RUN.finditer(text):
        start = m.start()
        while start > 0 and text[start - 1] in _URL_CHARS:
            start -= 1
        run = text[start : m.end()]
        decoded = unquote(run)
        inner = list(_rule_hits(decoded, _PREFIXED)) + list(_url_hits(decoded))
        if not inner:
            continue
        best = min(inner, key=lambda h: (h.rank, h.start))
        what = next((r.label for r in _RULES if r.kind == best.kind), "a credential")
        reason = (
            f"This percent-encoded value ({len(run)} characters) decodes to {what}; remove "
            "it or replace it with a placeholder."
        )
        yield _Hit(best.kind, start, m.end(), best.rank, reason)


# Where a value is glued back together: a shell line continuation, or two quoted strings
# joined by `+` (JavaScript, Java, Python), the halves on one line or two. Each pattern
# starts with a literal (the regex engine jumps to it); the quote before a `+` is checked by
# hand.
_CONTINUATION = re.compile(r"\\\r?\n[ \t]*")
_CONCAT = re.compile(r"\+[ \t]*(?:\\?\r?\n[ \t]*)?([\"'])")
# (Every splice holds one of these; `+` alone is in most docs.)
_SPLICE_NEEDLES = ("\\\n", "\\\r\n", '"+', '" +', "'+", "' +")


_SPLICE_MARGIN = 400


def _splices(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each splice in `text`, in order."""
    found = [m.span() for m in _CONTINUATION.finditer(text)]
    for m in _CONCAT.finditer(text):
        j = m.start()
        while j > 0 and text[j - 1] in " \t":
            j -= 1
        if j > 0 and text[j - 1] == m[1]:
            found.append((j - 1, m.end()))
    found.sort()
    out: list[tuple[int, int]] = []
    for a, b in found:
        if out and a < out[-1][1]:
            continue
        out.append((a, b))
    return out


def _spliced_hits(view: _View) -> Iterator[tuple[_Hit, _View]]:
    """Known-prefix shapes that only exist once continuations and concatenations are taken
    out; only hits that span one are kept (the others were found where they are)."""
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
    for hit in _rule_hits(spliced.text, _PREFIXED):
        k = bisect.bisect_right(cuts, hit.start)
        if k < len(cuts) and cuts[k] < hit.end:
            note = "Joined across a line continuation or a string concatenation, this"
            yield replace(hit, reason=hit.reason.replace("This", note, 1)), spliced


def _decoded_hits(text: str, depth: int = 0) -> Iterator[_Hit]:
    """Known shapes inside base64 runs, each reported over the whole run."""
    for m in _B64.finditer(text):
        decoded = _b64decode(m[0])
        if decoded is None:
            decoded = _hexdecode(m[0])
        if decoded is None:
            continue
        inner = list(_rule_hits(decoded, _PREFIXED))
        inner += [
            _Hit("private_key", h.start(), h.end(), _PEM_RANK, "a private key")
            for h in _PEM_HEADER.finditer(decoded)
        ]
        inner += list(_url_hits(decoded))
        if depth < 1:
            inner += list(_decoded_hits(decoded, depth + 1))
        if not inner:
            continue
        best = min(inner, key=lambda h: (h.rank, h.start))
        what = next((r.label for r in _RULES if r.kind == best.kind), "a credential")
        if best.kind == "url_password":
            what = "a URL with a password"
        reason = (
            f"This base64 value ({len(m[0])} characters) decodes to {what}; remove it or "
            "replace it with a placeholder."
        )
        yield _Hit(best.kind, m.start(), m.end(), best.rank, reason)


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
    found: list[tuple[_Hit, _View]] = [
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
    found += _spliced_hits(view)
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
