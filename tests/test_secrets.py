"""Tests for ncx.secrets: credential-shaped values are found, look-alikes are not.

Every fake credential is assembled from pieces so that secret scanners run on this
repository do not flag the test file itself.
"""

from __future__ import annotations

import pytest

from ncx.secrets import SecretFinding, find_secrets

# Fake but correctly shaped values (never real credentials).
GITHUB_CLASSIC = "ghp_" + "R4nd0mL00k1ngT0kenV4lue" + "1234567890123"
GITHUB_OAUTH = "gho_" + "Zq81LmN0pQ4rS7tU2vW5x" + "Y8zA1bC4dE7fGh2"
GITHUB_SERVER = "ghs_" + "k9J8h7G6f5D4s3A2p1O0i" + "U9y8T7r6E5w4Qa1"
GITHUB_FINE = "github_pat_" + "11AB3CD5EF7_" + "x9Yz8Wv7Ut6Sr5Qp4On3Ml2Kj1Ih0Gf9Ed8Cb7Aa6"
GITLAB = "glpat-" + "aB3dE5fG7hI9jK1lM3nO"
SLACK = "xoxb-" + "123456789012-1234567890123-" + "aB3dE5fG7hI9jK1lM3nO5pQ7"
STRIPE = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
OPENAI = "sk-" + "proj-" + "Abc123Def456Ghi789Jkl012Mno345"
ANTHROPIC = "sk-" + "ant-api03-" + "Abc123Def456Ghi789Jkl012Mno345Pqr678"
JWT = (
    "eyJ" + "hbGciOiJIUzI1NiJ9"
    + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0"
    + "." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)  # fmt: skip
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SESSION_ID = "ASIA" + "Y34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
HEX32 = "9f8e7d6c5b4a3928" + "1706f5e4d3c2b1a0"
RANDOM31 = "q8W2x9Z1v4B7n3M6" + "k5J0h2G8f1D4s7A"
PG_PASSWORD = "S3cr3t" + "-Pa55"
BEGIN = "-----BEGIN "
RSA_KEY = (
    BEGIN + "RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA7bq2x9Lk3Jd8QwErTy6UiOp1AsDfGh\n"
    "-----END RSA PRIVATE KEY-----"
)
OPENSSH_KEY = (
    BEGIN + "OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

# (text, kind, line, column): the column is where the credential value starts.
TRUE_POSITIVES = [
    (f"export GITHUB_TOKEN={GITHUB_CLASSIC}", "github_token", 1, 21),
    (f"oauth app token {GITHUB_OAUTH} expired", "github_token", 1, 17),
    (f"- installation token: {GITHUB_SERVER}", "github_token", 1, 23),
    (f"fine-grained PAT `{GITHUB_FINE}`", "github_token", 1, 19),
    (f"GITLAB_TOKEN: {GITLAB}", "gitlab_token", 1, 15),
    (f"slack bot uses {SLACK} for alerts", "slack_token", 1, 16),
    (f"STRIPE_KEY={STRIPE}", "stripe_key", 1, 12),
    (f'const maps = "{GOOGLE}";', "google_api_key", 1, 15),
    (f"OPENAI_API_KEY={OPENAI}", "openai_key", 1, 16),
    (f"client = Anthropic(api_key='{ANTHROPIC}')", "anthropic_key", 1, 29),
    (f"curl -H 'Authorization: Bearer {JWT}'", "jwt", 1, 32),
    (f"aws key id {AWS_ID} in the ci logs", "aws_access_key_id", 1, 12),
    (f"notes\n\nsession creds: {AWS_SESSION_ID}", "aws_access_key_id", 3, 16),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key", 1, 25),
    (f'{{"SecretAccessKey": "{AWS_SECRET}"}}', "aws_secret_access_key", 1, 22),
    (f"intro line\n{RSA_KEY}", "private_key", 2, 1),
    (f"the deploy key was:\n\n    {OPENSSH_KEY}", "private_key", 3, 5),
    (f"DATABASE_URL=postgres://app:{PG_PASSWORD}@db.internal:5432/app", "url_password", 1, 29),
    ("clone https://bot:" + "gh4x7Kq2Lm" + "@git.example.org/repo.git", "url_password", 1, 19),
    (f"API_TOKEN={HEX32}", "assigned_secret", 1, 11),
    (f'{{"client_secret": "{RANDOM31}"}}', "assigned_secret", 1, 20),
    (f"The API key: {HEX32}", "assigned_secret", 1, 14),
    (f"settings:\n  auth_token: '{RANDOM31}'", "assigned_secret", 2, 16),
    (f"apiKey = `{RANDOM31}`", "assigned_secret", 1, 11),
    ('db:\n  password: "' + "Tr0ub4dor&3" + '"', "assigned_password", 2, 14),
    ("DB_PASSWORD=" + "hunter22", "assigned_password", 1, 13),
    ("**Password**: " + "s3cr3t!pass", "assigned_password", 1, 15),
    ("--password=" + "Zx9!kL2#mQ", "assigned_password", 1, 12),
    ("Authorization: Bearer " + "a1B2c3D4e5F6g7H8i9J0k1L2", "bearer_token", 1, 23),
]


@pytest.mark.parametrize(("text", "kind", "line", "column"), TRUE_POSITIVES)
def test_true_positives(text: str, kind: str, line: int, column: int) -> None:
    findings = find_secrets(text)
    assert [(f.kind, f.line, f.column) for f in findings] == [(kind, line, column)]


@pytest.mark.parametrize(("text", "kind", "line", "column"), TRUE_POSITIVES)
def test_reason_is_a_sentence_that_does_not_echo_the_value(
    text: str, kind: str, line: int, column: int
) -> None:
    (finding,) = find_secrets(text)
    offset = sum(len(x) + 1 for x in text.split("\n")[: line - 1]) + column - 1
    value_start = text[offset : offset + 12]
    assert value_start not in finding.reason or kind == "private_key"
    assert finding.reason[0].isupper() and finding.reason.endswith(".")
    if kind != "private_key":
        assert "…" in finding.reason


FALSE_POSITIVES = [
    "Rotate the API token weekly.",
    "The password field must be hidden in the settings form.",
    "set token: true",
    'api_key: "<your-token>"',
    "GITHUB_TOKEN=${GITHUB_TOKEN}",
    "password: $SECRET",
    "token = os.environ['API_TOKEN']",
    "secret: ***",
    "password: xxx",
    "token: " + "x" * 40,
    "api_key = 'example-" + "api-key-1234567890'",
    "password: changeme",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "postgres://user:password@localhost/db",
    "postgres://postgres:postgres@localhost:5432/test",
    "postgres://${DB_USER}:${DB_PASS}@db/app",
    "redis://:<password>@cache:6379",
    "https://username:personal_access_token@github.com/org/repo",
    "max_tokens: 4096",
    "token_url: https://auth.example.com/oauth/token",
    "private_key_path: ~/.ssh/id_ed25519",
    "private_key: ./keys/deploy.pem",
    BEGIN + "RSA PRIVATE KEY----- headers mean a key was pasted; never commit one.",
    "ghp_" + "x" * 36,
    "xoxb-your-bot-token-here",
    "password = get_password()",
    "def login(user: str, password: str) -> Session:",
    "password: Optional[str] = None",
    "secret_key = settings.SECRET_KEY",
    "token = user_supplied_token",
    "auth: required",
    "session_token_ttl: 3600",
    "PASSWORD_HASH: 5f4dcc3b5aa765d61d8327deb882cf99",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the tokenizer",
    "tokenizer: bert-base-uncased-2024",
    "AKIA is the prefix of long-lived AWS access key ids; ASIA marks temporary ones.",
    "The token is stored in the OS keychain; run `ncx auth login` to refresh it.",
    "password: ********",
    "Set API_KEY=<your-key> in .env before running the server.",
    "We use scikit-learn (sk-learn) for the baseline.",
    "if token == expected_token:",
    "api_key: None",
    "Set the secret in the CI settings, never in the repo.",
]


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_false_positives_are_not_flagged(text: str) -> None:
    assert find_secrets(text) == []


def test_tables_are_big_enough() -> None:
    assert len(TRUE_POSITIVES) >= 15
    assert len(FALSE_POSITIVES) >= 15
    assert len({kind for _, kind, _, _ in TRUE_POSITIVES}) >= 13


def test_a_token_assigned_to_a_secret_name_is_reported_once_as_the_specific_kind() -> None:
    assert [f.kind for f in find_secrets(f"GITHUB_TOKEN={GITHUB_CLASSIC}")] == ["github_token"]


def test_several_findings_come_back_in_reading_order() -> None:
    text = (
        "# Deploy notes\n"
        f"stripe: {STRIPE}\n"
        "Rotate the API token weekly.\n"
        f"keys {AWS_ID} and {GOOGLE}\n"
    )
    found = [(f.kind, f.line, f.column) for f in find_secrets(text)]
    assert found == [
        ("stripe_key", 2, 9),
        ("aws_access_key_id", 4, 6),
        ("google_api_key", 4, 31),
    ]


def test_finding_is_a_frozen_value() -> None:
    finding = SecretFinding("jwt", 1, 1, "A sentence.")
    with pytest.raises(AttributeError):
        finding.line = 2  # type: ignore[misc]


def test_empty_and_plain_text() -> None:
    assert find_secrets("") == []
    assert find_secrets("A memory about caching:\nthe cache key includes the model id.\n") == []
