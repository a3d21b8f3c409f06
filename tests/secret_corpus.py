"""Credential shapes and ordinary prose for ncx.secrets: shared by the tests and
benchmarks/secret_shapes.py.

Every fake credential is assembled from pieces, or drawn from a seeded generator at import
time, so that secret scanners run on this repository do not flag this file itself.
"""

from __future__ import annotations

import base64
import random
import string
import textwrap

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_NUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"


def rand(seed: str, n: int, chars: str = ALNUM) -> str:
    """`n` random-looking characters, the same on every run (seeded by `seed`)."""
    rng = random.Random(seed)
    return "".join(rng.choice(chars) for _ in range(n))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --- values the original tests use (never real credentials) ------------------------------

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
END = "-----END "
RSA_BODY = "MIIEowIBAAKCAQEA7bq2x9Lk3Jd8QwErTy6UiOp1AsDfGh"
RSA_KEY = BEGIN + "RSA PRIVATE KEY-----\n" + RSA_BODY + "\n" + END + "RSA PRIVATE KEY-----"
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
    ("config = {password: " + "Tr0ub4dor&3}", "assigned_password", 1, 21),
    ("Authorization: Bearer " + "a1B2c3D4e5F6g7H8i9J0k1L2", "bearer_token", 1, 23),
]

FALSE_POSITIVES = [
    "Rotate the API token weekly.",
    # a test's fixture value: words and a number, not a generated token (ky's test/hooks.ts)
    "response.json({error: {code: 'TOKEN_REFRESH', newToken: 'refreshed-token-123'}});",
    "The password field must be hidden in the settings form.",
    # a URL validator's comment: metasyntactic userinfo (marshmallow's validate.py)
    "# e.g. 'ftp://foo:bar@ftp.example.org/'",
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
    # sqlmodel's docs (docs_src/tutorial/fastapi/update): a variable, closed by the brace
    'extra_data = {"hashed_password": hashed_password}',
    "login(password=new_password)",
    "creds = [api_token]",
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

# --- one entry per credential shape -------------------------------------------------------

ZWSP, ZWNJ, ZWJ, WJ, BOM, SHY = "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"
CYR_A, CYR_O, CYR_E, GREEK_O = "\u0410", "\u043e", "\u0435", "\u039f"

PEM_EC = (
    BEGIN
    + "EC PRIVATE KEY-----\n"
    + "MHcCAQEEI"
    + rand("ec", 40, B64)
    + "\n"
    + END
    + "EC PRIVATE KEY-----"
)
PEM_DSA = (
    BEGIN
    + "DSA PRIVATE KEY-----\n"
    + "MIIBuwIBAAKBgQ"
    + rand("dsa", 40, B64)
    + "\n"
    + END
    + "DSA PRIVATE KEY-----"
)
PEM_ENCRYPTED = (
    BEGIN + "ENCRYPTED PRIVATE KEY-----\n" + "MIIFHDBOBgkqhkiG9w0BBQ0w" + rand("enc", 40, B64) + "\n"
    + END + "ENCRYPTED PRIVATE KEY-----"
)  # fmt: skip
PEM_PGP = (
    BEGIN + "PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + "lQOYBF" + rand("pgp", 50, B64)
    + "\n" + END + "PGP PRIVATE KEY BLOCK-----"
)  # fmt: skip
PEM_ONE_LINE = BEGIN + "RSA PRIVATE KEY----- " + RSA_BODY + " " + END + "RSA PRIVATE KEY-----"
GCP_JSON = (
    '{\n  "type": "service_account",\n  "private_key_id": "' + rand("gcpid", 40, HEX) + '",\n'
    '  "private_key": "' + BEGIN + "PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
    + rand("gcp", 60, B64) + "\\n" + END + 'PRIVATE KEY-----\\n",\n'
    '  "client_email": "bot@proj.iam.gserviceaccount.com"\n}'
)  # fmt: skip
PUTTY = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
    "AAAAC3NzaC1lZDI1NTE5AAAAI" + rand("putpub", 40, B64) + "\nPrivate-Lines: 1\n"
    + "AAAAI" + rand("putpriv", 40, B64) + "\nPrivate-MAC: " + rand("mac", 64, HEX)
)  # fmt: skip

SLACK_WEBHOOK = (
    "https://hooks.slack.com/services/" + "T0" + rand("swt", 7, UPPER_NUM) + "/B0"
    + rand("swb", 8, UPPER_NUM) + "/" + rand("sws", 24)
)  # fmt: skip
DISCORD_WEBHOOK = (
    "https://discord.com/api/webhooks/" + "11223344" + "5566778899" + "/" + rand("dw", 68, ALNUM + "_-")
)  # fmt: skip
SENDGRID = "SG" + "." + rand("sg1", 22, ALNUM + "_-") + "." + rand("sg2", 43, ALNUM + "_-")
NPM = "npm" + "_" + rand("npm", 36)
PYPI = "pypi" + "-AgEIcHlwaS5vcmc" + rand("pypi", 70, ALNUM + "_-")
AZURE_KEY = rand("az", 86, B64) + "=="
SERVICE_BUS_KEY = rand("sb", 43, B64) + "="
BASIC = b64("deploy:" + "Zq8" + "wLm2pX")
TWILIO_SK = "SK" + rand("twsk", 32, HEX)
TWILIO_AC = "AC" + rand("twac", 32, HEX)
HF = "hf" + "_" + rand("hf", 34, string.ascii_letters)
DATABRICKS = "dapi" + rand("dapi", 32, HEX)
SHOPIFY = "shpat" + "_" + rand("shop", 32, HEX)
SQUARE = "EAAA" + rand("sq", 60, ALNUM + "_-")
SQUARE_OAUTH = "sq0" + "csp-" + rand("sqc", 43, ALNUM + "_-")
MAILGUN = "key" + "-" + rand("mg", 32, HEX + "ghijklmnopqrstuvwxyz")
DIGITALOCEAN = "dop" + "_v1_" + rand("do", 64, HEX)
ATLASSIAN = (
    "ATATT" + "3xFfGF0" + rand("atl", 180, ALNUM + "_-") + "=" + rand("atlc", 8, HEX.upper())
)
TELEGRAM = "6123" + "456789" + ":AA" + rand("tg", 33, ALNUM + "_-")
GOOGLE_OAUTH = "GOCSPX" + "-" + rand("gocspx", 28, ALNUM + "_-")
VAULT = "hvs" + "." + rand("vault", 90, ALNUM + "_-")
AGE = "AGE-SECRET-KEY-" + "1" + rand("age", 58, UPPER_NUM)
SLACK_APP = (
    "xapp"
    + "-1-A0"
    + rand("xa1", 9, UPPER_NUM)
    + "-4"
    + rand("xa2", 12, string.digits)
    + "-"
    + rand("xa3", 64, HEX)
)
GH2 = "ghp_" + rand("gh2", 36)
SPLIT_AT = 17

# (shape, text, kind, line): each text holds exactly one credential, reported once, on `line`.
SHAPES = [
    # shapes the first version already knew
    ("GitHub classic token", f"export GITHUB_TOKEN={GITHUB_CLASSIC}", "github_token", 1),
    ("GitHub OAuth token", f"oauth app token {GITHUB_OAUTH} expired", "github_token", 1),
    ("GitHub fine-grained PAT", f"fine-grained PAT `{GITHUB_FINE}`", "github_token", 1),
    ("GitLab PAT", f"GITLAB_TOKEN: {GITLAB}", "gitlab_token", 1),
    ("Slack bot token", f"slack bot uses {SLACK} for alerts", "slack_token", 1),
    ("Stripe live key", f"STRIPE_KEY={STRIPE}", "stripe_key", 1),
    ("Google API key", f'const maps = "{GOOGLE}";', "google_api_key", 1),
    ("OpenAI project key", f"OPENAI_API_KEY={OPENAI}", "openai_key", 1),
    ("Anthropic key", f"client = Anthropic(api_key='{ANTHROPIC}')", "anthropic_key", 1),
    ("JWT", f"curl -H 'Authorization: Bearer {JWT}'", "jwt", 1),
    ("AWS access key id", f"aws key id {AWS_ID} in the ci logs", "aws_access_key_id", 1),
    ("AWS session key id", f"session creds: {AWS_SESSION_ID}", "aws_access_key_id", 1),
    ("AWS secret key", f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key", 1),
    ("RSA private key (PEM)", f"intro line\n{RSA_KEY}", "private_key", 2),
    ("OpenSSH private key", f"the deploy key was:\n\n    {OPENSSH_KEY}", "private_key", 3),
    ("EC private key", PEM_EC, "private_key", 1),
    ("DSA private key", PEM_DSA, "private_key", 1),
    ("encrypted PKCS#8 key", PEM_ENCRYPTED, "private_key", 1),
    ("PGP private key block", PEM_PGP, "private_key", 1),
    (
        "password in a postgres URL",
        f"DATABASE_URL=postgres://app:{PG_PASSWORD}@db:5432/app",
        "url_password",
        1,
    ),
    (
        "password in an https URL",
        "clone https://bot:" + "gh4x7Kq2Lm" + "@git.example.org/r.git",
        "url_password",
        1,
    ),
    ("hex token assigned", f"API_TOKEN={HEX32}", "assigned_secret", 1),
    ("client secret in JSON", f'{{"client_secret": "{RANDOM31}"}}', "assigned_secret", 1),
    ("password in YAML", 'db:\n  password: "' + "Tr0ub4dor&3" + '"', "assigned_password", 2),
    ("password in .env", "DB_PASSWORD=" + "hunter22", "assigned_password", 1),
    ("password on a command line", "--password=" + "Zx9!kL2#mQ", "assigned_password", 1),
    ("bearer token", "Authorization: Bearer " + "a1B2c3D4e5F6g7H8i9J0k1L2", "bearer_token", 1),
    # shapes the review found missed
    ("Slack webhook URL", f"alerts post to {SLACK_WEBHOOK}", "slack_webhook", 1),
    ("SendGrid key", f"SENDGRID={SENDGRID}", "sendgrid_key", 1),
    ("npm token", f"//registry.npmjs.org/:_authToken={NPM}", "npm_token", 1),
    ("PyPI token", f"[pypi]\n  username = __token__\n  password = {PYPI}", "pypi_token", 3),
    (
        "Azure storage connection string",
        "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey="
        + AZURE_KEY
        + ";EndpointSuffix=core.windows.net",
        "azure_storage_key",
        1,
    ),
    (
        "Azure service bus key",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey="
        + SERVICE_BUS_KEY,
        "azure_storage_key",
        1,
    ),
    (
        ".netrc line",
        "machine api.heroku.com login ops@corp.io password " + "Zq8wLm2pX4",
        "netrc_password",
        1,
    ),
    (
        ".netrc block",
        "machine git.corp.io\n  login deploy\n  password " + "hunter2-Blue9",
        "netrc_password",
        3,
    ),
    (
        "user:password on a command line",
        "curl -u ci-bot:" + "Zq8wLm2pX4" + " https://api.corp.io",
        "cli_password",
        1,
    ),
    ("HTTP Basic header", f"curl -H 'Authorization: Basic {BASIC}' https://api", "basic_auth", 1),
    (
        "passphrase in .env",
        "DB_PASSWORD=" + "correct horse " + "battery staple",
        "assigned_password",
        1,
    ),
    (
        "quoted passphrase",
        'password: "' + "purple monkey " + 'dishwasher lamp"',
        "assigned_password",
        1,
    ),
    (
        "password in a sentence",
        "For staging, the admin password is " + "hunter2-Blue" + ".",
        "assigned_password",
        1,
    ),
    (
        "password for a host in prose",
        "The password for prod-db is " + "Tr0ub4dor&3x" + ", rotate soon",
        "assigned_password",
        1,
    ),
    (
        "password in a German sentence",
        "Das Passwort ist " + "Zq8wLm2pX4" + " seit gestern",
        "assigned_password",
        1,
    ),
    ("password in Russian", "пароль: " + "hunter2-Blue", "assigned_password", 1),
    (
        "base64 wrapped at 20 columns",
        "data: |\n" + "\n".join(textwrap.wrap(b64("config: token=" + GH2 + " and more"), 20)),
        "github_token",
        2,
    ),
    (
        "password changed to",
        "I changed the root password to " + "Zx9kL2mQ7" + " yesterday",
        "assigned_password",
        1,
    ),
    ("PEM key on one line", f"key: {PEM_ONE_LINE}", "private_key", 1),
    ("GCP service-account JSON", GCP_JSON, "private_key", 4),
    ("PuTTY private key", PUTTY, "private_key", 1),
    ("base64 of a GitHub token", f"data:\n  token: {b64(GH2)}", "github_token", 2),
    (
        "base64 of a PEM header",
        "tls.key: " + b64(BEGIN + "RSA PRIVATE KEY-----\n"),
        "private_key",
        1,
    ),
    (
        "base64 of a database URL",
        "DATABASE_URL: " + b64("postgres://app:" + "Zq8wLm2pX" + "@db:5432/app"),
        "url_password",
        1,
    ),
    (
        "token split over two lines",
        f"token was {GH2[:SPLIT_AT]}\n{GH2[SPLIT_AT:]} until today",
        "github_token",
        1,
    ),
    (
        "AWS key id split and indented",
        f"key id: {AWS_ID[:9]}\n    {AWS_ID[9:]}",
        "aws_access_key_id",
        1,
    ),
    (
        "zero-width space in a token",
        f"token {GH2[:10]}{ZWSP}{GH2[10:20]}{ZWJ}{GH2[20:]}",
        "github_token",
        1,
    ),
    (
        "soft hyphen and word joiner in a key",
        f"aws {AWS_ID[:8]}{SHY}{AWS_ID[8:14]}{WJ}{AWS_ID[14:]} leaked",
        "aws_access_key_id",
        1,
    ),
    (
        "BOM and ZWNJ in a Stripe key",
        f"{BOM}stripe {STRIPE[:12]}{ZWNJ}{STRIPE[12:]}",
        "stripe_key",
        1,
    ),
    ("Cyrillic A in an AWS key id", f"id {CYR_A}{AWS_SESSION_ID[1:]}", "aws_access_key_id", 1),
    (
        "Cyrillic o/e in a GitHub token",
        "ghp_" + GH2[4:9] + CYR_O + GH2[10:20] + CYR_E + GH2[21:],
        "github_token",
        1,
    ),
    ("Greek Omicron in a Google key", GOOGLE[:10] + GREEK_O + GOOGLE[11:], "google_api_key", 1),
    (
        "fullwidth Stripe key",
        "key " + "".join(chr(ord(c) + 0xFEE0) for c in STRIPE),
        "stripe_key",
        1,
    ),
    # common extras
    ("Twilio API key sid", f"TWILIO_API_KEY={TWILIO_SK}", "twilio_key", 1),
    ("Twilio account sid", f"twilio account {TWILIO_AC}", "twilio_key", 1),
    ("Hugging Face token", f"huggingface-cli login --token {HF}", "huggingface_token", 1),
    ("Databricks token", f"databricks host set, token {DATABRICKS}", "databricks_token", 1),
    ("Shopify access token", f"shop admin {SHOPIFY}", "shopify_token", 1),
    ("Square access token", f"square prod {SQUARE}", "square_token", 1),
    ("Square OAuth secret", f"square app {SQUARE_OAUTH}", "square_token", 1),
    ("Mailgun key", f"mailgun {MAILGUN}", "mailgun_key", 1),
    ("DigitalOcean token", f"doctl auth init -t {DIGITALOCEAN}", "digitalocean_token", 1),
    ("Atlassian API token", f"jira {ATLASSIAN}", "atlassian_token", 1),
    ("Discord webhook URL", f"notify {DISCORD_WEBHOOK}", "discord_webhook", 1),
    ("Telegram bot token", f"bot {TELEGRAM}", "telegram_bot_token", 1),
    ("Google OAuth client secret", f"oauth {GOOGLE_OAUTH}", "google_oauth_secret", 1),
    ("Vault token", f"VAULT_ADDR set; {VAULT}", "vault_token", 1),
    ("age secret key", f"# created: today\n{AGE}", "age_secret_key", 2),
    ("Slack app-level token", f"socket mode {SLACK_APP}", "slack_token", 1),
]

# Ordinary technical prose: nothing here may be flagged.
BENIGN = [
    "Merged in 3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345 after review.",
    "The release tarball has sha256 12ff182c9e4a7b3d2f81c6e05a94d7b3c8e1f2a4b5c6d7e8f901234567890abc.",
    "Pinned the image to python@sha256:4f0b8d1c9e2a7b3d5f6e8c1a9b0d2e4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8.",
    "Request 550e8400-e29b-41d4-a716-446655440000 timed out after 30s.",
    "Use ${DB_PASSWORD} in compose files and $TOKEN in shell scripts.",
    "In workflows write {{ secrets.DEPLOY_KEY }} instead of the key.",
    "password: <your-password>",
    "Rotate the API token weekly and revoke old ones.",
    "The password must be at least 12 characters.",
    "Set DB_PASSWORD in the environment before running migrations.",
    "The admin password is stored in the team vault.",
    "The password is bcrypt-hashed before it reaches the database.",
    "The password is SHA-256 hashed with a per-user salt.",
    "The password is sha256 hashed, never stored in clear.",
    "Reset your password at https://accounts.example.com/reset.",
    "The welcome banner is "
    + b64("Hello from the staging cluster, have a nice day!")
    + " in base64.",
    "test_refresh_token_rotation_is_idempotent passes on CI again.",
    "See https://docs.python.org/3/library/secrets.html#secrets.token_urlsafe for tokens.",
    "Upgraded from 1.24.3 to 2.0.0-rc.1+build.5; release 3.11.7 follows.",
    "Config lives in /etc/ncx/config.toml and ~/.config/ncx/settings.yaml.",
    "npm_config_cache points at a shared folder on CI.",
    "Brand colours are #1a2b3c, #ff8800 and rgb(12, 34, 56).",
    "The token bucket allows 100 requests per minute per client.",
    "Authorization: Bearer <token>",
    "Authorization: Basic authentication is disabled on the public API.",
    "Use HTTP Basic auth only over TLS.",
    "The machine learning login page has a password reset link.",
    "machine example.com login anonymous password guest",
    "The private key lives in ~/.ssh/id_ed25519; never paste it into notes.",
    "A PEM file starts with " + BEGIN + "PRIVATE KEY----- and ends with an END line.",
    "AccountKey is read from the AZURE_STORAGE_KEY environment variable.",
    "Slack webhooks look like https://hooks.slack.com/services/... and belong in the vault.",
    "The sk-learn wrapper and the hf_hub_download helper both cache to disk.",
    "Keys such as ghp_... or AKIA... must never be committed.",
    "Long line that ends with a commit hash 9fceb02d0ae598e95dc970b7\n4767f19372d61af8 on the next line.",
    "We renamed the module to\ntokenizer_fast_path_v2 last sprint.",
    "The function key_rotation_scheduler_v2 runs nightly at 02:00 UTC.",
    "Base64 of 'hello world' is aGVsbG8gd29ybGQ= as every tutorial shows.",
    "Сервер перезапускается каждую ночь; пароль хранится в хранилище.",
    "全角のテキスト：ＡＰＩトークンは環境変数に置く。",
    "The file is UTF\u20118 encoded and uses zero\u200bwidth spaces in one test.",
    "DB_PASSWORD=   # left empty on purpose, set by the deploy job",
    "password: required for all users",
    "PASSWORD_MIN_LENGTH=12",
    "export AWS_PROFILE=prod-readonly",
    "The Telegram bot answers on port 8443 with a 200 OK.",
    "Twilio account settings are managed in the console.",
    "Read the key-value store docs: key-value-store-architecture-overview-2024.",
    "GET /api/v1/users/42/sessions?limit=50&offset=100 returns JSON.",
    "The password is AES256-encrypted at rest and hashed with argon2id.",
    "Passwords: rotate every 90 days; the old password was revoked.",
    "DB_PASSWORD=see the vault entry",
    "password: 'must be rotated quarterly'",
    "Authorization: Basic " + b64("user:" + "password"),
    "machine github.com login x-access-token password $GITHUB_TOKEN",
    "We use scikit-learn (sk-\nlearn) 1.4 for the long-running-integration-\ntest-suite.",
    "Sha256 digest e3b0c44298fc1c149afbf4c8996fb924\n27ae41e4649b934ca495991b7852b855 wraps.",
    "docker run -u 1000:1000 and git push -u origin main",
    "hf_hub_download(repo_id='org/model') and npm_package_version are set by the tools.",
    "Twilio account ids are AC followed by 32 hex characters.",
    "Das Passwort muss mindestens 12 Zeichen haben; пароль хранится в хранилище.",
    "La contraseña es segura y el mot de passe est stocké dans le coffre.",
    "Café menu — prices in € … see （notes）; ﬁle names may use ligatures.",
    "Docker image ghcr.io/org/app:v1.2.3 was built from main.",
]

# --- issue 29: shapes the second hostile-input sweep found missed ---------------------------

ADO = rand("ado", 52, "abcdefghijklmnopqrstuvwxyz234567")
FN_KEY = rand("fnk", 54) + "=="
SAS_SIG = rand("sas", 43, ALNUM) + "%3D"
RSA_DER = "MIIEowIBAAKCAQEA" + rand("rsab", 48, B64)
OSSH_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
SSH2_KEY = (
    '---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "rsa-key-2026"\n'
    + "P2/56wAAAi4AAAA3aWYtbW9kbntzaWdue3JzYS1wa2NzMS1zaGExfSxlbmNyeXB0e3JzYS1wa2NzMXYyLW9hZXB9fQ==\n"
    + "---- END SSH2 ENCRYPTED PRIVATE KEY ----"
)
DJANGO = "django-insecure-" + "k9#m2$x)v!q8@w7z(3e%r5t^y1u&i0o*p"
PW = "Zq8wLm2pX4"


def pct(text: str) -> str:
    return "".join(f"%{b:02X}" for b in text.encode())


SHAPES_29 = [
    ("hex of a GitHub token", "token (hex): " + GH2.encode().hex(), "github_token", 1),
    ("hex of an AWS key id", "id bytes " + AWS_SESSION_ID.encode().hex() + " in the dump", "aws_access_key_id", 1),
    ("percent-encoded GitHub token", f"see https://ci.example.com/hook/{pct(GH2)} for the build", "github_token", 1),
    ("percent-encoded Slack webhook", "callback=" + SLACK_WEBHOOK.replace(":", "%3A").replace("/", "%2F"), "slack_webhook", 1),
    ("token split by a shell continuation", f'export GH="{GH2[:18]}\\\n  {GH2[18:]}"', "github_token", 1),
    ("token split by JS string concatenation", f'const t = "{GH2[:18]}" + "{GH2[18:]}";', "github_token", 1),
    ("key split by a concatenation over two lines", f'k = ("{STRIPE[:12]}" +\n     "{STRIPE[12:]}")', "stripe_key", 1),
    ("SSH2 encrypted private key", SSH2_KEY, "private_key", 1),
    ("lower-case PEM key", RSA_KEY.lower(), "private_key", 1),
    ("RSA key body without a header", "key:\n" + RSA_DER + "\n" + rand("rsab2", 64, B64), "private_key", 2),
    ("OpenSSH key body without a header", OSSH_BODY + "\nQyNTUxOQAAACD" + rand("ossh", 40, B64), "private_key", 1),
    ("Stripe webhook secret", "STRIPE_WEBHOOK=" + "whsec_" + rand("whsec", 32), "webhook_secret", 1),
    ("Postman API key", "postman " + "PMAK-" + rand("pmak1", 24, HEX) + "-" + rand("pmak2", 34, HEX), "postman_key", 1),
    ("New Relic user key", "newrelic " + "NRAK-" + rand("nrak", 27, UPPER_NUM), "newrelic_key", 1),
    ("Linear API key", "linear " + "lin_api_" + rand("lin", 40), "linear_key", 1),
    ("Notion integration token", "notion " + "ntn_" + rand("ntn", 46), "notion_token", 1),
    ("Doppler service token", "doppler " + "dp.st." + "prd." + rand("dp", 40), "doppler_token", 1),
    ("Google OAuth access token", "access token " + "ya29." + rand("ya29", 60, ALNUM + "_-"), "google_oauth_token", 1),
    ("Mailchimp API key", "mailchimp " + rand("mc", 32, HEX) + "-us" + "14", "mailchimp_key", 1),
    (
        "Azure SAS URL",
        "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&sp=r&se=2026-01-01T00:00:00Z&sig="
        + SAS_SIG,
        "azure_sas",
        1,
    ),
    ("Azure DevOps PAT", "AZURE_DEVOPS_EXT_PAT=" + ADO, "assigned_secret", 1),
    ("Azure Functions key in a URL", "https://fn-app.azurewebsites.net/api/Hook?code=" + FN_KEY, "azure_function_key", 1),
    ("Azure Functions key header", "x-functions-key: " + FN_KEY, "azure_function_key", 1),
    ("Twilio API key sid alone", "creds = ('" + TWILIO_SK + "', region)", "twilio_key", 1),
    ("mysql -p password", "mysql -u root -p" + "Xk29mQ7vL2" + " app_db", "cli_password", 1),
    ("sshpass -p password", "sshpass -p '" + PW + "' ssh deploy@10.0.0.5", "cli_password", 1),
    ("docker login -p password", "docker login -u ci -p " + PW + "! registry.example.com", "cli_password", 1),
    ("docker login --password", "docker login --username ci --password " + PW + "! ghcr.io", "cli_password", 1),
    ("redis-cli -a password", "redis-cli -h cache -a " + PW + " ping", "cli_password", 1),
    ("redis URL with an empty user", "REDIS_URL=redis://:" + PW + "@cache:6379/0", "url_password", 1),
    ("user= pass= in prose", "login with user=admin pass=" + PW, "assigned_password", 1),
    ("Django SECRET_KEY", "SECRET_KEY = '" + DJANGO + "'", "django_secret_key", 1),
    ("all-lowercase run-together passphrase", "DB_PASSWORD=" + "correcthorse" + "batterystaple", "assigned_password", 1),
    ("zero-width space as an HTML entity in a token", f"token {GH2[:10]}&#8203;{GH2[10:]}", "github_token", 1),
    ("zero-width space as a JSON escape in a token", f'["{GH2[:10]}\\u200b{GH2[10:]}"]', "github_token", 1),
]  # fmt: skip
SHAPES += SHAPES_29

# Ordinary technical lines near the new shapes: none may be flagged.
BENIGN_29 = [
    "Run mysql -u root -p and type the password when asked.",
    "mysqldump --single-transaction -h db app > app.sql",
    'Use sshpass -p "$SSH_PASS" only in throwaway containers.',
    "docker login -u ci --password-stdin < token.txt keeps it out of ps.",
    "docker login -p $REGISTRY_PASSWORD registry.example.com",
    'redis-cli -a "$REDIS_PASSWORD" ping',
    "REDIS_URL=redis://localhost:6379/0",
    "redis://:${REDIS_PASSWORD}@cache:6379",
    "user=admin pass=${ADMIN_PASS}",
    "pass: true",
    "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']",
    "SECRET_KEY = env('SECRET_KEY')",
    "SECRET_KEY = 'change-me-in-production-please-really'",
    "The file starts with " + BEGIN + "CERTIFICATE----- and holds a public certificate.",
    BEGIN
    + "PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
    + END
    + "PUBLIC KEY-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@host",
    "---- BEGIN SSH2 PUBLIC KEY ----",
    "Commit 6768705f is the one that fixed the hex parser.",
    "sha256 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 of hello",
    "The UUID 123e4567-e89b-12d3-a456-426614174000 names the tenant.",
    "URL-encode spaces as %20 and slashes as %2F, e.g. a%20b%2Fc.",
    "https://example.com/search?q=rust%20async%20traits&page=2",
    "Mailchimp data centers are named us1 to us21.",
    "Azure SAS tokens have sv=, se=, sp= and sig= query parameters; never commit one.",
    "https://myapp.azurewebsites.net/api/HttpTrigger?name=world",
    "x-functions-key: <your-function-key>",
    "AZURE_DEVOPS_EXT_PAT=$(cat ~/.ado-pat)",
    "Set AZURE_DEVOPS_EXT_PAT in the pipeline's secret variables.",
    "file_path = os.path.join(base, 'data')",
    "compat_path=/usr/lib/compat",
    "Twilio API keys start with SK; keep the secret half in the vault.",
    "whsec_ prefixes mark Stripe webhook signing secrets.",
    "Linear API keys start with lin_api_ and Notion tokens with ntn_.",
    "Google access tokens start with ya29. and expire after an hour.",
    "Doppler service tokens look like dp.st.<env>.<token>.",
    "PMAK- keys come from the API keys page of Postman.",
    'echo "line one" \\\n  "line two" > notes.txt',
    'const url = "https://" + host + "/api";',
    'greeting = "hello " + "world"',
    "password_reset_token_ttl=3600",
    "The &#8203; entity is a zero-width space; strip it from pasted code.",
    "Escape it as \\u200b in JSON strings.",
    "DB_PASSWORD=placeholdervalue",
]
BENIGN += BENIGN_29

# --- issue 36: shapes the third hostile-input sweep found missed in memories ----------------

AWS_SECRET2 = rand("aws2", 40, ALNUM + "/+")
RSA_ESCAPED = (
    BEGIN + "RSA PRIVATE KEY-----\\\\n" + RSA_BODY + "\\\\n" + END + "RSA PRIVATE KEY-----"
)
SQL_PW = "Xk9#mQ2vL7pz"
JWT_PADDED = ".".join(part + "=" * (-len(part) % 4) for part in JWT.split("."))


def hex_escaped(text: str) -> str:
    return "".join(f"\\x{b:02x}" for b in text.encode())


SHAPES_36 = [
    ("braille blank inside a token", f"token {GH2[:10]}\u2800{GH2[10:]}", "github_token", 1),
    ("musical format character inside a token", f"{GH2[:4]}\U0001d173{GH2[4:]}", "github_token", 1),
    ("hieroglyph joiner inside a token", f"ci: {GH2[:20]}\U00013430{GH2[20:]}", "github_token", 1),
    ("0x hex of a GitHub token", "blob 0x" + GH2.encode().hex(), "github_token", 1),
    ("escaped hex of a GitHub token", f'tok = b"{hex_escaped(GH2)}"', "github_token", 1),
    ("spaced hex of a GitHub token", "dump: " + " ".join(f"{b:02x}" for b in GH2.encode()), "github_token", 1),
    ("colon hex of an AWS key id", "id " + ":".join(f"{b:02X}" for b in AWS_SESSION_ID.encode()), "aws_access_key_id", 1),
    ("one percent escape in a token", "token " + GH2[:3] + "%5F" + GH2[4:], "github_token", 1),
    ("double percent-encoded token", "callback?t=" + pct(GH2).replace("%", "%25"), "github_token", 1),
    ("AWS secret split by a concatenation", f'aws_secret_access_key = "{AWS_SECRET2[:20]}" + "{AWS_SECRET2[20:]}"', "aws_secret_access_key", 1),
    ("AWS secret split over two string lines", f'AWS_SECRET_ACCESS_KEY = (\n    "{AWS_SECRET2[:22]}"\n    "{AWS_SECRET2[22:]}"\n)', "aws_secret_access_key", 2),
    ("AWS secret split over two lines", f"aws_secret_access_key = {AWS_SECRET2[:25]}\n  {AWS_SECRET2[25:]}", "aws_secret_access_key", 1),
    ("AWS secret split by a shell continuation", f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET2[:19]}\\\n{AWS_SECRET2[19:]}", "aws_secret_access_key", 1),
    ("padded JWT", f"Authorization: {JWT_PADDED}", "jwt", 1),
    ("double-escaped PEM key", f'{{"key": "{RSA_ESCAPED}"}}', "private_key", 1),
    ("sqlcmd -P password", f"sqlcmd -S db.internal -U sa -P {SQL_PW} -d orders", "cli_password", 1),
    ("sqlcmd -P quoted password", f"sqlcmd -S tcp:db,1433 -U sa -P '{SQL_PW}' -Q \"select 1\"", "cli_password", 1),
    ("bcp -P password", f"bcp dbo.t out t.dat -S srv -U sa -P{SQL_PW}", "cli_password", 1),
    ("Invoke-Sqlcmd -Password", f'Invoke-Sqlcmd -ServerInstance db -Username sa -Password "{SQL_PW}"', "cli_password", 1),
]  # fmt: skip
SHAPES += SHAPES_36

# Ordinary technical lines near the new shapes: none may be flagged.
BENIGN_36 = [
    "sqlcmd -S . -U sa -P $SA_PASSWORD -Q 'select 1'",
    "sqlcmd -S localhost -U sa -P password",
    "Run sqlcmd -S db -E to log in with Windows authentication.",
    "sqlcmd -P is the password flag; prefer SQLCMDPASSWORD or -E.",
    'Invoke-Sqlcmd -ServerInstance db -Username sa -Password "$env:SA_PASSWORD"',
    "bcp dbo.t out t.dat -S srv -T -c",
    "The header 0x48656c6c6f20776f726c642c206869 is hello world in hex.",
    'b"\\x48\\x65\\x6c\\x6c\\x6f\\x20\\x77\\x6f\\x72\\x6c\\x64\\x21" is bytes of hello world!',
    "48 65 6c 6c 6f 20 77 6f 72 6c 64 20 61 67 61 69 6e",
    "aa:bb:cc:dd:ee:ff:00:11:22:33:44:55 is not a MAC address.",
    "100%25 of requests carry %2520 where a%20b was meant.",
    'greeting = ("hello "\n    "world")',
    'AWS_REGION = "eu-west-1"\nAWS_PROFILE = "deploy"',
    'aws_secret_access_key = os.environ["AWS_SECRET_ACCESS_KEY"] + ""',
    "A JWT has three base64url parts; padding '=' is stripped, as in eyJhbGciOi.",
    "Store keys as " + BEGIN + "PRIVATE KEY-----\\\\n...\\\\n" + END + "PRIVATE KEY----- in JSON.",
    "The musical symbol \U0001d173 begins a beam.",
    "\u2800\u2800\u2800 braille blanks pad the banner.",
]
BENIGN += BENIGN_36
