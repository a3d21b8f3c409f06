"""Credentials in source code never reach an agent or the code cache (ncx.code.guard).

One repository holds a credential in each of the 13 places a hostile sweep found them
leaking from (a default argument, a docstring, a comment above a definition, function
bodies in every language ncx reads, a module constant); every way code text reaches an
agent is asked about each, through the real CLI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import commit_all, git, mcp_session, ncx, write
from secret_corpus import (
    AWS_ID,
    AWS_SECRET,
    GITHUB_CLASSIC,
    GITLAB,
    JWT,
    PG_PASSWORD,
    RSA_BODY,
    RSA_KEY,
    SLACK,
    STRIPE,
    rand,
)

from ncx.code.guard import scan, suspect_lines
from ncx.code.read import read_code

HOOK = "https://hooks.slack.com/services/" + "T0A1B2C3D/B0E1F2G3H/" + rand("hook", 24)


class Case(NamedTuple):
    id: str
    path: str
    source: str
    task: str  # what a task says: finds the definition holding the credential
    secrets: tuple[str, ...]  # what must never be shown
    line: int  # where `ncx sync` must say it is


CASES = [
    Case(
        "python-default-arg",
        "client.py",
        f'def connect_api(token="{GITHUB_CLASSIC}"):\n    """Connect to the API."""\n'
        "    return token\n",
        "change connect_api",
        (GITHUB_CLASSIC,),
        1,
    ),
    Case(
        "python-docstring",
        "storage.py",
        'def upload_bucket(name):\n    """Upload to the bucket with\n'
        f"    aws_access_key_id = {AWS_ID} and aws_secret_access_key = {AWS_SECRET}\n"
        '    """\n    return name\n',
        "fix upload_bucket",
        (AWS_ID, AWS_SECRET),
        3,
    ),
    Case(
        "python-comment-above",
        "billing.py",
        f"# charges with {STRIPE}\ndef charge_card(amount):\n    return amount\n",
        "fix charge_card",
        (STRIPE,),
        1,
    ),
    Case(
        "python-body-webhook",
        "alerts.py",
        f'def notify_channel(text):\n    url = "{HOOK}"\n    return post(url, text)\n',
        "change notify_channel",
        (HOOK.rsplit("/", 1)[1],),
        2,
    ),
    Case(
        "python-body-pem",
        "signing.py",
        f'def load_signer():\n    key = """{RSA_KEY}"""\n    return key\n',
        "fix load_signer",
        (RSA_BODY,),
        2,
    ),
    Case(
        "python-body-postgres",
        "database.py",
        "def open_database():\n"
        f'    return connect("postgres://admin:{PG_PASSWORD}@db.internal:5432/app")\n',
        "change open_database",
        (PG_PASSWORD,),
        2,
    ),
    Case(
        "ts-body",
        "web/chat.ts",
        "export function sendChat(text: string): void {\n"
        f'  const bot = "{SLACK}";\n  post(bot, text);\n}}\n',
        "change sendChat",
        (SLACK,),
        2,
    ),
    Case(
        "ts-default-param",
        "web/repo.ts",
        f'export function fetchRepos(token: string = "{GITHUB_CLASSIC[:-4]}abcd") {{\n'
        "  return get(token);\n}\n",
        "fix fetchRepos",
        (GITHUB_CLASSIC[:-4] + "abcd",),
        1,
    ),
    Case(
        "js-jsdoc-jwt",
        "web/session.js",
        f"/**\n * Opens a session with {JWT}\n */\nfunction openSession() {{\n  return 1;\n}}\n",
        "fix openSession",
        (JWT.rsplit(".", 1)[1],),
        2,
    ),
    Case(
        "go-body",
        "cmd/deploy.go",
        f'package main\n\nfunc deployRelease() string {{\n\tkey := "{GITLAB}"\n\treturn key\n}}\n',
        "change deployRelease",
        (GITLAB,),
        4,
    ),
    Case(
        "rust-body",
        "src/fetch.rs",
        f'fn fetch_index() -> String {{\n    let t = "{STRIPE[:-4]}wxyz";\n    t.to_string()\n}}\n',
        "fix fetch_index",
        (STRIPE[:-4] + "wxyz",),
        2,
    ),
    Case(
        "java-body",
        "src/Mailer.java",
        "class Mailer {\n    String sendMail() {\n"
        f'        return "{SLACK[:-4]}wxyz";\n    }}\n}}\n',
        "change sendMail",
        (SLACK[:-4] + "wxyz",),
        3,
    ),
    Case(
        "python-module-constant",
        "settings.py",
        f'"""Settings of the service."""\n\nAPI_TOKEN = "{GITHUB_CLASSIC[:-4]}wxyz"\n',
        "change settings API_TOKEN",
        (GITHUB_CLASSIC[:-4] + "wxyz",),
        3,
    ),
]


class Synced(NamedTuple):
    root: Path
    sync_err: str
    sync_json: dict[str, object]


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory, tiny_model: Path) -> Iterator[Synced]:
    """One repository holding every case, synced once (each test only asks it)."""
    root = tmp_path_factory.mktemp("secrets") / "proj"
    root.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
            mp.setenv(var, "ncx test")
        for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
            mp.setenv(var, "test@ncx.invalid")
        mp.setenv("NCX_EMBEDDING_MODEL", str(tiny_model))
        mp.setenv("HOME", str(root.parent / "home"))
        git(root, "-c", "init.defaultBranch=main", "init", "-q")
        write(root, "README.md", "# Service\n\nThe service talks to many things.\n")
        for c in CASES:
            write(root, c.path, c.source)
        commit_all(root)
        ncx("init", cwd=root)
        err = ncx("sync", cwd=root).stderr
        out = json.loads(ncx("sync", "--json", cwd=root).stdout)
        yield Synced(root, err, out)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_no_retrieve_or_frame_shows_a_credential(synced: Synced, case: Case) -> None:
    root = synced.root
    found = ncx("retrieve", case.task, "--kind", "code", "--json", cwd=root).stdout
    assert case.path in found  # the definition is found: what follows can fail
    frame = ncx("assemble", "--task", case.task, cwd=root).stdout
    assert case.path in frame
    for secret in case.secrets:
        assert secret not in found
        assert secret not in frame


# The prompt hook and the text listing render what the two above do (the same hits, the same
# frame); each case through them is the end-to-end tier's, the first one the default's.
@pytest.mark.parametrize(
    "case",
    [CASES[0], *(pytest.param(c, marks=pytest.mark.e2e) for c in CASES[1:])],
    ids=[c.id for c in CASES],
)
def test_the_prompt_hook_and_text_listing_show_no_credential(synced: Synced, case: Case) -> None:
    root = synced.root
    hook = json.dumps({"prompt": f"please {case.task} now", "cwd": str(root)})
    said = ncx("agent-hook", "prompt", input=hook, cwd=root, env={"NCX_HOOK_TIMEOUT": "60"})
    assert case.path in said.stdout
    text = ncx("retrieve", case.task, "--kind", "code", cwd=root).stdout
    assert case.path in text
    for secret in case.secrets:
        assert secret not in said.stdout
        assert secret not in text


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_sync_names_each_credential_by_file_and_line(synced: Synced, case: Case) -> None:
    assert f"ncx: warning: {case.path}:{case.line}: holds what looks like" in synced.sync_err
    listed = synced.sync_json["secrets"]
    assert isinstance(listed, list)
    assert any(s["path"] == case.path and s["line"] == case.line for s in listed)


def test_the_code_cache_never_holds_a_credential(synced: Synced) -> None:
    files = [p for p in (synced.root / ".neocortex" / "cache" / "code").rglob("*") if p.is_file()]
    assert files
    data = b"".join(p.read_bytes() for p in files)
    assert b"connect_api" in data  # the texts are there as bytes: a secret would be too
    for case in CASES:
        for secret in case.secrets:
            assert secret.encode() not in data, case.id


def test_the_quoted_body_is_redacted_where_it_stood(synced: Synced) -> None:
    # the frame quotes the best definition's body, read from the file when it is shown
    frame = ncx("assemble", "--task", "change open_database", cwd=synced.root).stdout
    assert "[REDACTED url password]" in frame
    assert "def open_database" in frame


def test_reading_names_lines_and_keeps_clean_files_as_they_are() -> None:
    clean = b"def f(token=None):\n    return token  # the API key is read from the env\n"
    assert read_code("python", clean).secrets == ()
    rec = read_code("python", CASES[0].source.encode())
    assert rec.secrets == ((1, "github_token"),)
    assert "[REDACTED github token]" in rec.symbols[1].signature
    # the prefilter keeps only lines that could hold one, numbered as in the file
    text = "x = 1\n\ny = 2\n" + f"z = '{GITLAB}'\n"
    assert [n for n, _ in suspect_lines(text)] == [4]
    assert scan(text) == ((4, "gitlab_token"),)


@pytest.mark.e2e
def test_mcp_retrieve_and_assemble_show_no_credential(synced: Synced) -> None:
    seen: dict[str, Any] = {}
    picked = [c for c in CASES if c.id in ("python-default-arg", "python-body-pem", "ts-body")]

    async def session(s: Any) -> None:
        for c in picked:
            seen[c.id] = (
                await s.call_tool("retrieve", {"query": c.task, "k": 5, "kind": "code"}),
                await s.call_tool("assemble", {"task": c.task}),
            )

    mcp_session(synced.root, session)
    for c in picked:
        found, frame = seen[c.id]
        said = json.dumps(found.structured_content) + frame.content[0].text
        assert c.path in said
        for secret in c.secrets:
            assert secret not in said
