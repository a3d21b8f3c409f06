"""The credential shapes with a recognisable form, as data: one `_Rule` per shape (its
pattern, what it is called, how much of it is safe to show, what makes a match real), the
literal needles that let a rule be skipped, and the loop that runs them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from ncx.secrets.values import (
    _CODE_REF,
    _DEFAULT_PASSWORDS,
    _b64decode,
    _classes,
    _entropy,
    _has_digit,
    _Hit,
    _is_placeholder,
    _looks_like_password,
    _looks_random,
    _preview,
    _random_tail,
)

# --- Rules with a recognisable shape -------------------------------------------------------


class _Lazy:
    """A rule's pattern, compiled when a text first needs it. The ~150 patterns took 40-50
    ms to compile at import, in every process that reads a doc (both commit hooks, each
    frame), and most texts hold none of most rules' needles (`_rule_hits`)."""

    __slots__ = ("_compiled", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    @property
    def ready(self) -> bool:
        return self._compiled is not None

    def get(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled


class _Rule(NamedTuple):
    kind: str
    pattern: _Lazy
    label: str
    shown: int  # characters of the value safe to show
    valid: Callable[[re.Match[str]], bool]
    # A known prefix or fixed frame: specific enough to look for in joined lines and in
    # decoded base64, where the generic rules would be noise.
    prefixed: bool = True
    # Characters that may not come right before the match (a leading look-behind in the
    # written pattern, checked here instead so that the regex engine can jump straight to
    # the literal prefix: a look-behind first makes it try every position).
    left: _Lazy | None = None


_LEADING_LOOKBEHIND = re.compile(r"\(\?<!(\[[^\]]*\])\)")


def _rule(
    kind: str,
    pattern: _Lazy,
    label: str,
    shown: int,
    valid: Callable[[re.Match[str]], bool],
    *,
    prefixed: bool = True,
) -> _Rule:
    lead = _LEADING_LOOKBEHIND.match(pattern.source)
    if lead is None:
        return _Rule(kind, pattern, label, shown, valid, prefixed)
    rest = _Lazy(pattern.source[lead.end() :])
    return _Rule(kind, rest, label, shown, valid, prefixed, _Lazy(lead[1]))


def _value(m: re.Match[str]) -> str:
    """The credential itself: the named group "v" where a rule has one, else the match."""
    return m["v"] if "v" in m.re.groupindex else m[0]


def _tail(skip: int) -> Callable[[re.Match[str]], bool]:
    """Validator: the value after its `skip`-character prefix is random, not filler."""
    return lambda m: _random_tail(_value(m)[skip:])


def _tail_digit(skip: int) -> Callable[[re.Match[str]], bool]:
    return lambda m: _random_tail(_value(m)[skip:]) and _has_digit(_value(m)[skip:])


# Separators between a key header and its body: spaces, real newlines, or the literal "\n"
# of a key pasted inside a JSON string (GCP service-account files), escaped once more when
# that JSON was itself put in a string ("\\n").
_PEM_SEP = r"(?:[ \t]|\\{1,2}[rn]|\r|\n)"
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
        _Lazy(
            _PEM_BEGIN
            # A bare header is prose about keys; a key has a base64 body, on the next line,
            # on the same line (a key squeezed onto one line) or after "\n" in JSON. PEM may
            # carry Proc-Type/DEK-Info headers, PGP armour a Version line, first.
            # (each header runs to its line end: no way to split spaces between it and
            # the next separator, which would make a header-and-spaces line quadratic).
            + rf"(?:{_PEM_SEP}*[A-Za-z][A-Za-z-]*:[^\n\\]*(?=\\{{1,2}}[rn]|\r|\n))*{_PEM_SEP}+"
            r"(?P<body>[A-Za-z0-9+/=]{20,})"
        ),
        "a private key",
        0,
        lambda m: _classes(m["body"]) >= 2,
        prefixed=False,
    ),
    _rule(
        "private_key",
        _Lazy(
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
        _Lazy(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        "an AWS access key id",
        4,
        _tail(4),
    ),
    _rule(
        "github_token",
        _Lazy(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        "a GitHub token",
        4,
        lambda m: _random_tail(m[0].split("_", 1)[1] if m[0].startswith("gh") else m[0][11:]),
    ),
    _rule(
        "gitlab_token",
        _Lazy(r"(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|oas)-[A-Za-z0-9_-]{20,}"),
        "a GitLab token",
        6,
        lambda m: _random_tail(m[0].split("-", 1)[1]),
    ),
    _rule(
        "slack_webhook",
        _Lazy(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/"
            r"B?[A-Z0-9]{6,}/[A-Za-z0-9]{16,}"
        ),
        "a Slack webhook URL",
        len("https://hooks.slack.com/"),
        lambda m: _random_tail(m[0].rsplit("/", 1)[1]),
    ),
    _rule(
        "slack_token",
        _Lazy(r"(?<![A-Za-z0-9])(?:xox[abprse]|xapp)-[A-Za-z0-9-]{10,}"),
        "a Slack token",
        5,
        # Real Slack tokens carry long numeric workspace/user ids; "xoxb-your-token" does not.
        lambda m: re.search(r"\d{6,}", m[0]) is not None and not _is_placeholder(m[0][5:]),
    ),
    _rule(
        "discord_webhook",
        _Lazy(
            r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{15,20}/"
            r"[A-Za-z0-9_-]{50,80}"
        ),
        "a Discord webhook URL",
        len("https://discord.com/"),
        lambda m: _random_tail(m[0].rsplit("/", 1)[1]),
    ),
    _rule(
        "stripe_key",
        _Lazy(r"(?<![A-Za-z0-9])[rs]k_live_[A-Za-z0-9]{20,}"),
        "a Stripe live key",
        8,
        _tail(8),
    ),
    _rule(
        "google_api_key",
        _Lazy(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        "a Google API key",
        4,
        _tail(4),
    ),
    _rule(
        "google_oauth_secret",
        _Lazy(r"(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])"),
        "a Google OAuth client secret",
        7,
        _tail(7),
    ),
    _rule(
        "anthropic_key",
        _Lazy(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9]+-[A-Za-z0-9_-]{20,}"),
        "an Anthropic API key",
        7,
        _tail(7),
    ),
    _rule(
        "openai_key",
        _Lazy(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        "an OpenAI-style API key",
        3,
        # Needs a digit: "sk-this-is-not-a-real-key" is prose-shaped, real keys are not.
        _tail_digit(3),
    ),
    _rule(
        "jwt",
        # Each part base64url, as the spec writes it, or with its "=" padding and the
        # standard alphabet's + and /, as some libraries and hand-made tokens have it.
        _Lazy(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_+/-]{8,}={0,2}\.[A-Za-z0-9_+/-]{8,}={0,2}"
            r"\.[A-Za-z0-9_+/-]{8,}={0,2}"
        ),
        "a JSON Web Token",
        3,
        lambda m: _random_tail(m[0].split(".")[1].rstrip("=")),
    ),
    _rule(
        "sendgrid_key",
        _Lazy(r"(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}(?![A-Za-z0-9_-])"),
        "a SendGrid API key",
        3,
        lambda m: _random_tail(m[0].rsplit(".", 1)[1]),
    ),
    _rule(
        "npm_token",
        _Lazy(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])"),
        "an npm access token",
        4,
        _tail_digit(4),
    ),
    _rule(
        "pypi_token",
        _Lazy(r"(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,}"),
        "a PyPI API token",
        5,
        _tail(8),
    ),
    _rule(
        "huggingface_token",
        _Lazy(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,40}(?![A-Za-z0-9_])"),
        "a Hugging Face token",
        3,
        lambda m: _random_tail(m[0][3:]) and _classes(m[0][3:]) >= 2,
    ),
    _rule(
        "databricks_token",
        _Lazy(r"(?<![A-Za-z0-9_])dapi[0-9a-f]{32}(?:-\d)?(?![A-Za-z0-9_])"),
        "a Databricks token",
        4,
        _tail_digit(4),
    ),
    _rule(
        "shopify_token",
        _Lazy(r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9_])"),
        "a Shopify access token",
        6,
        _tail_digit(6),
    ),
    _rule(
        "square_token",
        _Lazy(
            r"(?<![A-Za-z0-9_-])(?:sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|EAAA[A-Za-z0-9_-]{60})"
            r"(?![A-Za-z0-9_-])"
        ),
        "a Square access token",
        4,
        _tail(7),
    ),
    _rule(
        "mailgun_key",
        _Lazy(r"(?<![A-Za-z0-9_-])key-[0-9a-z]{32}(?![A-Za-z0-9_-])"),
        "a Mailgun API key",
        4,
        _tail_digit(4),
    ),
    _rule(
        "digitalocean_token",
        _Lazy(r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])"),
        "a DigitalOcean token",
        7,
        _tail_digit(7),
    ),
    _rule(
        "atlassian_token",
        _Lazy(r"(?<![A-Za-z0-9_-])AT(?:ATT|CTT)[A-Za-z0-9_=-]{50,}"),
        "an Atlassian API token",
        5,
        _tail(5),
    ),
    _rule(
        "telegram_bot_token",
        _Lazy(r"(?<![0-9A-Za-z])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
        "a Telegram bot token",
        0,
        lambda m: _random_tail(m[0].split(":", 1)[1]),
    ),
    _rule(
        "twilio_key",
        _Lazy(r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9])"),
        "a Twilio key or account id",
        2,
        _twilio,
    ),
    _rule(
        "vault_token",
        _Lazy(r"(?<![A-Za-z0-9_.-])hv[sb]\.[A-Za-z0-9_-]{24,}"),
        "a HashiCorp Vault token",
        4,
        _tail_digit(4),
    ),
    _rule(
        "age_secret_key",
        _Lazy(r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
        "an age secret key",
        15,
        _tail(15),
    ),
    _rule(
        "private_key",
        _Lazy(
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
        _Lazy(r"(?<![A-Za-z0-9_])whsec_[A-Za-z0-9+/=]{24,}"),
        "a webhook signing secret",
        6,
        _tail_digit(6),
    ),
    _rule(
        "postman_key",
        _Lazy(r"(?<![A-Za-z0-9_-])PMAK-[0-9a-f]{24}-[0-9a-f]{34}(?![A-Za-z0-9_-])"),
        "a Postman API key",
        5,
        _tail(5),
    ),
    _rule(
        "newrelic_key",
        _Lazy(r"(?<![A-Za-z0-9_-])NR(?:AK|AA|II|JS)-[A-Z0-9]{27}(?![A-Za-z0-9_-])"),
        "a New Relic key",
        5,
        _tail_digit(5),
    ),
    _rule(
        "linear_key",
        _Lazy(r"(?<![A-Za-z0-9_])lin_(?:api|oauth)_[A-Za-z0-9]{32,}"),
        "a Linear API key",
        8,
        lambda m: _random_tail(m[0].rsplit("_", 1)[1]),
    ),
    *(
        _rule(
            "notion_token",
            _Lazy(pattern),
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
        _Lazy(
            r"(?<![A-Za-z0-9_.])dp\.(?:st|ct|pt|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,}"
        ),
        "a Doppler token",
        6,
        lambda m: _random_tail(m[0].rsplit(".", 1)[1]),
    ),
    _rule(
        "google_oauth_token",
        _Lazy(r"(?<![A-Za-z0-9_.-])ya29\.[A-Za-z0-9_-]{30,}"),
        "a Google OAuth access token",
        5,
        _tail_digit(5),
    ),
    _rule(
        "mailchimp_key",
        _Lazy(r"(?<![A-Za-z0-9_-])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9_-])"),
        "a Mailchimp API key",
        0,
        lambda m: _random_tail(m[0][:32]) and re.search("[a-f]", m[0][:32]) is not None,
    ),
    _rule(
        "azure_sas",
        _Lazy(r"[?&]sv=[0-9-]{8,12}&[^\s\"'<>]*?\bsig=(?P<v>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})"),
        "an Azure shared access signature",
        0,
        lambda m: _random_tail(m["v"]),
        prefixed=False,
    ),
    _rule(
        "azure_function_key",
        _Lazy(
            r"(?:\.azurewebsites\.net/[^\s\"'<>?]*\?(?:[^\s\"'<>]*&)?code=|x-functions-key:[ \t]*)"
            r"(?P<v>[A-Za-z0-9_-]{30,}(?:==|%3D%3D)?)"
        ),
        "an Azure Functions key",
        0,
        lambda m: _random_tail(m["v"]) and _has_digit(m["v"]),
        prefixed=False,
    ),
    # The password glued to -p (mysql), after sshpass -p or redis-cli -a, after -p or
    # --password in a docker login, and after -P to SQL Server's sqlcmd, bcp and osql (or
    # -Password to Invoke-Sqlcmd): command lines pasted into notes. One rule per tool, each
    # starting with its name, so the regex engine jumps to it instead of trying every place.
    *(
        _rule(
            "cli_password",
            _Lazy(pattern),
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
            # SQL Server's tools: -P is the password (-p is something else to each of them).
            *(
                rf"(?<![\w-]){tool}\b[^\n]*?[ \t]-P[ \t]*['\"]?(?P<v>[^\s'\"]+)"
                for tool in ("sqlcmd", "bcp", "osql", "isql")
            ),
            *(
                rf"(?<![\w-]){cmdlet}\b[^\n]*?[ \t]-(?i:password)[ \t]+['\"]?(?P<v>[^\s'\"]+)"
                for cmdlet in ("Invoke-Sqlcmd", "invoke-sqlcmd")
            ),
        )
    ),
    _rule(
        "django_secret_key",
        _Lazy(r"(?<![A-Za-z0-9_])SECRET_KEY[ \t]*=[ \t]*['\"](?P<v>[^'\"\n]{30,})['\"]"),
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
        _Lazy(
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
        _Lazy(
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
        _Lazy(
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
        _Lazy(r"(?<![A-Za-z0-9])[Bb]asic[ \t]+(?P<v>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])"),
        "HTTP Basic credentials",
        0,
        _basic_credentials,
        prefixed=False,
    ),
    _rule(
        "bearer_token",
        _Lazy(r"[Bb]earer (?P<v>[A-Za-z0-9._~+/-]{20,}=*)"),
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
    "cli_password": (
        "-u",
        "mysql",
        "mariadb",
        "sshpass",
        "redis-cli",
        "docker",
        "sqlcmd",
        "Sqlcmd",
        "bcp",
        "osql",
        "isql",
    ),
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
        # A gated kind's needles are looked for in every text; any other kind's only until
        # a text holds one, so that a pattern is compiled when it can first match.
        needles = _NEEDLES.get(rule.kind)
        if (
            needles is not None
            and (rule.kind in _GATED or not rule.pattern.ready)
            and not any(n in text for n in needles)
        ):
            continue
        if rule.label == _BARE_KEY and not any(n in text for n in _BARE_KEY_STARTS):
            continue
        pattern = rule.pattern.get()
        left = None if rule.left is None else rule.left.get()
        for m in pattern.finditer(text):
            start = m.start()
            if left is not None and start and left.match(text, start - 1):
                continue
            if not rule.valid(m):
                continue
            group = "v" if "v" in pattern.groupindex else 0
            yield _Hit(rule.kind, m.start(group), m.end(group), rank, _rule_reason(rule, m))
