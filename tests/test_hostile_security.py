"""Hostile input, security (issue 29): ncx works on the repository it is in and writes only
into real folders inside it; credentials in docs never reach committed chunk files or an
agent's context; terminal controls never reach an agent's terminal. Every test drives the
real CLI (in process, or as a subprocess where the process itself matters)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import NCX_CMD, commit_all, git, mcp_session, ncx, ncx_proc, write

SEC = " ".join(["The service reads its settings from the config file at start."] * 6)
TRACE = "Traceback (most recent call last)"


def _git_init(root: Path) -> None:
    root.mkdir()
    git(root, "-c", "init.defaultBranch=main", "init", "-q")


# --- the repository's own path ------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [" ", "\n", "\t"])
def test_a_repo_whose_path_ends_in_whitespace_is_that_repo(
    repo: Path, tmp_path: Path, suffix: str
) -> None:
    """`/x/proj ` is not `/x/proj`: stripping git's output sent writes to the sibling."""
    write(repo, "docs/a.md", f"# Sibling\n\n{SEC}\n")
    commit_all(repo)
    ncx("init", "-q", cwd=repo)
    before = sorted(
        p.relative_to(repo).as_posix() for p in repo.rglob("*") if ".git" not in p.parts
    )
    odd = tmp_path / f"proj{suffix}"
    _git_init(odd)
    write(odd, "docs/b.md", f"# Odd\n\n{SEC}\n")
    commit_all(odd)
    ncx("init", "-q", cwd=odd)
    ncx("sync", "-q", cwd=odd)
    ncx("memory", "add", "Release builds run on linux only.", cwd=odd)
    assert (odd / ".neocortex/chunks/docs/b.md").is_file()
    assert len(list((odd / ".neocortex/memories").glob("MEM-*.md"))) == 1
    after = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if ".git" not in p.parts)
    assert after == before  # nothing written into the sibling `proj`


# e2e: nine fresh processes, each with the undecodable cwd as the OS hands it over
@pytest.mark.e2e
def test_a_repo_whose_path_is_not_utf8_works(repo: Path, tmp_path: Path) -> None:
    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9-\xff"))
    _git_init(odd)
    write(odd, "docs/b.md", f"# Odd\n\n{SEC}\n")
    commit_all(odd)
    for args in (
        ("init", "-q"),
        ("sync", "-q"),
        ("status",),
        ("status", "--json"),
        ("check",),
        ("memory", "add", "Release builds run on linux only."),
        ("retrieve", "odd service settings"),
        ("assemble", "--task", "change the odd settings"),
        ("wakeup",),
    ):
        raw = subprocess.run(
            [*NCX_CMD, *args], cwd=odd, capture_output=True, env=dict(os.environ), check=False
        )
        err = raw.stderr.decode("utf-8", "surrogateescape")
        assert raw.returncode == 0, (args, err)
        assert TRACE not in err and "UTF-8" not in err
        if args[0] in ("retrieve", "assemble", "wakeup"):
            raw.stdout.decode("utf-8")  # text for an agent: valid UTF-8
    assert (odd / ".neocortex/chunks/docs/b.md").is_file()


# --- writes only into real folders --------------------------------------------------------------


def _clean_refusal(proc: subprocess.CompletedProcess[str]) -> bool:
    return proc.returncode == 1 and "ncx: error:" in proc.stderr and TRACE not in proc.stderr


def _tree_bytes(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def test_init_refuses_a_neocortex_link_out_of_the_repo(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    os.symlink(outside, repo / ".neocortex")
    commit_all(repo)
    proc = ncx("init", ok=False)
    assert _clean_refusal(proc), proc.stderr
    assert ".neocortex" in proc.stderr and "real folder" in proc.stderr
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("target", [".", ".git", "docs"])
def test_a_neocortex_link_inside_the_repo_is_never_written_through(repo: Path, target: str) -> None:
    write(repo, ".gitignore", "secret.env\n*.pem\n")
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    # the tree's files where the link points, so every command finds a tree to write into
    ncx_dir = repo / ".neocortex"
    (ncx_dir / ".gitignore").unlink()
    shutil.copytree(ncx_dir, repo / target, dirs_exist_ok=True)
    shutil.rmtree(ncx_dir)
    os.symlink(target, ncx_dir)
    write(repo, "docs/a.md", f"# A changed\n\n{SEC}\n")
    before = _tree_bytes(repo / target)
    for args in (
        ("init",),
        ("sync",),
        ("memory", "add", "Release builds run on linux only."),
    ):
        proc = ncx(*args, ok=False)
        assert _clean_refusal(proc), (args, proc.stderr)
        assert "real folder" in proc.stderr, proc.stderr
    after = _tree_bytes(repo / target)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    # git's own bookkeeping (config, index) may change; nothing ncx writes may land there
    assert not {k for k in changed if k not in ("config", "index")}, changed
    assert (repo / ".gitignore").read_text() == "secret.env\n*.pem\n"


@pytest.mark.parametrize("sub", ["chunks", "memories"])
def test_init_never_writes_through_a_linked_folder_inside_neocortex(repo: Path, sub: str) -> None:
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    (repo / ".neocortex").mkdir()
    os.symlink("../docs", repo / ".neocortex" / sub)
    proc = ncx("init", ok=False)
    assert _clean_refusal(proc), proc.stderr
    assert sorted(p.name for p in (repo / "docs").iterdir()) == ["a.md"]


@pytest.mark.parametrize("folder", [".claude", ".codex", ".cursor", ".github"])
def test_init_agent_never_writes_through_a_linked_agent_folder(
    repo: Path, tmp_path: Path, folder: str
) -> None:
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    ncx("init", "-q")
    outside = tmp_path / "out"
    outside.mkdir()
    os.symlink(outside, repo / folder)
    proc = ncx("init", "--agent", "all", ok=False)
    assert _clean_refusal(proc), proc.stderr
    assert folder in proc.stderr and "symlink" in proc.stderr
    assert list(outside.rglob("*")) == []


def test_init_agent_never_writes_through_a_github_link_into_git(repo: Path) -> None:
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    ncx("init", "-q")
    os.symlink(".git", repo / ".github")
    proc = ncx("init", "--agent", "all", ok=False)
    assert _clean_refusal(proc), proc.stderr
    assert not (repo / ".git/workflows").exists()


# --- credentials in docs ------------------------------------------------------------------------

TOKEN = "ghp_" + "R4nd0mL00k1ngT0kenV4lue" + "1234567890123"
PEM = (
    "-----BEGIN " + "RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA7bq2x9Lk3Jd8QwErTy6UiOp1AsDfGh\n"
    "Zq8wLm2pX4Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5\n"
    "-----END " + "RSA PRIVATE KEY-----"
)


def _ncx_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((root / ".neocortex").rglob("*")) if p.is_file())


def test_a_credential_in_a_doc_is_said_and_kept_out_of_chunks_and_frames(repo: Path) -> None:
    password = 'DB_PASSWORD = "Xk29vQ8mLp2Rt7wz"'
    text = (
        f"# Deploy\n\n{SEC}\n\nexport GITHUB_TOKEN={TOKEN}\n\n## Keys\n\n{SEC}\n\n{PEM}\n\nend\n"
        f"\n## Database\n\n{password}\n"
    )
    write(repo, "docs/deploy.md", text)
    commit_all(repo)
    ncx("init", "-q")
    proc = ncx("sync", "-q")
    assert "docs/deploy.md:5: holds what looks like a github token;" in proc.stderr
    assert "docs/deploy.md:11: holds what looks like a private key;" in proc.stderr
    at = text.splitlines().index(password) + 1  # an article that agrees with the kind
    assert f"docs/deploy.md:{at}: holds what looks like an assigned password;" in proc.stderr
    assert TOKEN not in proc.stderr
    blob = _ncx_bytes(repo)
    assert TOKEN.encode() not in blob and b"MIIEowIBAAKC" not in blob and b"Zq8wLm2pX4" not in blob
    chunk = (repo / ".neocortex/chunks/docs/deploy.md").read_text()
    assert "[REDACTED github token]" in chunk and "[REDACTED private key]" in chunk
    for args in (
        ("retrieve", "deploy github token keys", "--json"),
        ("assemble", "--task", "deploy with the github token and the keys"),
    ):
        out = ncx(*args)
        assert TOKEN not in out.stdout and "MIIEowIBAAKC" not in out.stdout
    # a redacted chunk is still cited with the doc's own lines
    out = ncx("retrieve", "deploy github token keys", "--json").stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    redacted = [h for h in rows if "[REDACTED" in h["text"]]
    assert redacted and all(h["start_line"] is not None for h in redacted), redacted
    # said again by a sync with nothing to do, deterministic bytes, nothing left dirty
    commit_all(repo, "ncx")
    again = ncx("sync", "-q")
    assert "docs/deploy.md:5:" in again.stderr
    assert git(repo, "status", "--porcelain") == ""
    # the JSON report names them too
    data = json.loads(ncx("sync", "--json").stdout)
    assert {(s["path"], s["line"], s["kind"]) for s in data["secrets"]} == {
        ("docs/deploy.md", 5, "github_token"),
        ("docs/deploy.md", 11, "private_key"),
        ("docs/deploy.md", at, "assigned_password"),
    }


def test_a_credential_in_a_sidecar_is_kept_out_of_chunk_frontmatter(repo: Path) -> None:
    write(repo, "docs/api.md", f"# API\n\n{SEC}\n")
    write(
        repo,
        "docs/api.meta.yaml",
        f"id: DOC-API-001\ntitle: API\nsummary: use {TOKEN} to call it\n",
    )
    commit_all(repo)
    ncx("init", "-q")
    proc = ncx("sync", "-q")
    assert "docs/api.meta.yaml:3:" in proc.stderr
    chunk = (repo / ".neocortex/chunks/docs/api.md").read_text()
    assert TOKEN not in chunk and "[REDACTED github token]" in chunk


def test_check_fails_on_a_credential_in_a_chunk_file(repo: Path) -> None:
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    ncx("check")
    chunk = repo / ".neocortex/chunks/docs/a.md"
    # as an older ncx wrote it, or a hand edit: the credential in the chunk's text
    chunk.write_text(chunk.read_text().replace("at start.", f"at start. {TOKEN}", 1))
    proc = ncx("check", ok=False)
    assert proc.returncode == 1
    assert ".neocortex/chunks/docs/a.md:" in proc.stdout + proc.stderr
    assert "GitHub token" in proc.stdout + proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    ncx("sync", "-q")
    ncx("check")


# --- terminal controls --------------------------------------------------------------------------

OSC52 = "\x1b]52;c;" + "ZWNobyBwd25lZA==" + "\x07"
CLEAR = "\x1b[2J\x1b[H"
C1 = "\x9b31m\x9d0;title\x9c"
EVIL = f"{OSC52}{CLEAR}{C1}"


def _no_controls(text: str) -> bool:
    return not any(c in text for c in ("\x1b", "\x07", "\x9b", "\x9d", "\x9c"))


@pytest.fixture
def evil_tree(repo: Path) -> Path:
    write(
        repo,
        "docs/settings.md",
        f"# Settings {EVIL}\n\nThe service reads its settings {EVIL} from the config file.\n\n"
        + SEC
        + "\n",
    )
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(repo, "ncx")
    return repo


def test_the_prompt_hook_prints_no_terminal_controls(evil_tree: Path) -> None:
    prompt = f"change how the service reads its settings from the config file {EVIL}"
    hook = json.dumps({"prompt": prompt, "cwd": str(evil_tree)})
    proc = ncx("agent-hook", "prompt", input=hook)
    assert "settings" in proc.stdout  # the frame is there
    assert _no_controls(proc.stdout) and _no_controls(proc.stderr)
    # as the agent runs it: its own process
    proc = ncx_proc("agent-hook", "prompt", input=hook, cwd=evil_tree)
    assert "settings" in proc.stdout
    assert _no_controls(proc.stdout) and _no_controls(proc.stderr)


@pytest.mark.e2e
def test_mcp_answers_hold_no_terminal_controls(evil_tree: Path) -> None:
    seen: dict[str, object] = {}

    async def session(s: Any) -> None:
        seen["assemble"] = await s.call_tool(
            "assemble", {"task": f"change the settings config file {EVIL}"}
        )
        seen["retrieve"] = await s.call_tool("retrieve", {"query": f"settings config file {EVIL}"})

    mcp_session(evil_tree, session)
    frame = seen["assemble"].content[0].text  # type: ignore[attr-defined]
    assert "settings" in frame and _no_controls(frame)
    hits = json.dumps(seen["retrieve"].structured_content, ensure_ascii=False)  # type: ignore[attr-defined]
    assert "settings" in hits and _no_controls(hits)


# --- a hand-edited memory -----------------------------------------------------------------------


def _memory_file(root: Path, mem_id: str) -> Path:
    return root / ".neocortex/memories" / f"{mem_id}.md"


def test_approve_refuses_a_proposal_edited_to_hold_a_credential(repo: Path) -> None:
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    ncx("init", "-q")
    mem_id = ncx("memory", "add", "Deploys read the registry login from the CI settings.").stdout
    mem_id = mem_id.strip()
    md = _memory_file(repo, mem_id)
    # a proposal (as `memory extract` or MCP `remember` write one), then edited by hand
    text = md.read_text().replace("status: active", "status: proposed")
    md.write_text(text.replace("CI settings.", f"CI settings: {TOKEN}"))
    proc = ncx("memory", "approve", mem_id, ok=False)
    assert _clean_refusal(proc), proc.stderr
    assert "GitHub token" in proc.stderr and TOKEN not in proc.stderr
    assert "status: proposed" in md.read_text()


def test_a_memory_edited_to_hold_a_credential_is_never_served(repo: Path) -> None:
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    ncx("init", "-q")
    mem_id = ncx(
        "memory", "add", "Deploys read the registry login from the CI settings."
    ).stdout.strip()
    md = _memory_file(repo, mem_id)
    md.write_text(md.read_text().replace("CI settings.", f"CI settings: {TOKEN}"))
    ncx("sync", "-q")
    for args in (
        ("retrieve", "registry login deploys CI settings", "--json"),
        ("assemble", "--task", "deploys registry login CI settings"),
    ):
        out = ncx(*args)
        assert TOKEN not in out.stdout, args
    proc = ncx("check", ok=False)
    assert proc.returncode == 1 and mem_id in proc.stdout + proc.stderr


def test_what_migrate_brings_in_is_scanned_like_any_doc(repo: Path) -> None:
    write(repo, ".mlda/registry.yaml", "version: 2\ndocuments: []\n")
    write(repo, ".mlda/docs/ops/deploy.md", f"# Deploy\n\n{SEC}\n\nexport GITHUB_TOKEN={TOKEN}\n")
    write(
        repo,
        ".mlda/docs/ops/deploy.meta.yaml",
        f"id: DOC-OPS-001\ntitle: Deploy\nsummary: deploy with {TOKEN}\n",
    )
    commit_all(repo, "v2")
    proc = ncx("migrate", ok=False)
    assert TRACE not in proc.stderr, proc.stderr
    said = proc.stdout + proc.stderr
    assert ".mlda/docs/ops/deploy.md:5:" in said and ".mlda/docs/ops/deploy.meta.yaml:3:" in said
    assert TOKEN not in said
    assert TOKEN.encode() not in _ncx_bytes(repo)


def test_a_credential_in_a_notebook_is_redacted_and_the_notebook_still_reads(repo: Path) -> None:
    key_lines = PEM.split("\n")
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Setup\n", "\n", SEC + "\n"]},
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": [f"TOKEN = '{TOKEN}'\n", "KEY = '''\n"]
                + [ln + "\n" for ln in key_lines]
                + ["'''\n"],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    write(repo, "nb/setup.ipynb", json.dumps(nb, indent=1))
    commit_all(repo)
    ncx("init", "-q")
    proc = ncx("sync", "-q")  # exit 0: the notebook is read, not refused
    assert "nb/setup.ipynb:" in proc.stderr and "github token" in proc.stderr
    blob = _ncx_bytes(repo)
    assert TOKEN.encode() not in blob and b"MIIEowIBAAKC" not in blob and b"Zq8wLm2pX4" not in blob
    assert b"[REDACTED github token]" in blob


def test_the_commit_check_names_a_credential_in_a_committed_chunk_file(repo: Path) -> None:
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(repo, "ncx")
    base = git(repo, "rev-parse", "HEAD").strip()
    chunk = repo / ".neocortex/chunks/docs/a.md"
    chunk.write_text(chunk.read_text().replace("at start.", f"at start. {TOKEN}", 1))
    commit_all(repo, "a hand edit")
    proc = ncx("check", "--since", base, ok=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and ".neocortex/chunks/docs/a.md:" in said
    assert "GitHub token" in said and TOKEN not in said
