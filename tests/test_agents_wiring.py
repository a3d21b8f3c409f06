"""Agents and pull requests as the README installs them (issue 29): the commands ncx tells
agents and users to run exist, the committed agent files carry no machine's paths, and the
small CLI edges around them (hints, refusals, file modes) behave."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, commit_all, git, ncx, ncx_proc, write

AUTH = (
    "# Auth\n\nHow login works in the shop backend.\n\n"
    "## Token refresh\n\nThe refresh token is rotated on every use; a 401 from the API means "
    "the access token expired and the client must call the refresh endpoint once.\n\n"
    "## Sessions\n\nA session cookie lasts one day; logout deletes the session row.\n"
)


@pytest.fixture
def tree(repo: Path) -> Path:
    write(repo, "docs/auth.md", AUTH)
    write(repo, "README.md", "# Shop\n\nAn online shop backend written in Python.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    return repo


# --- small CLI edges --------------------------------------------------------------------------


def test_mcp_without_the_sdk_names_this_interpreter_s_pip(repo: Path) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None; sys.argv = ['ncx', 'mcp']; "
        "from ncx.cli.main import main; main()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 1
    assert f"{sys.executable} -m pip install 'ncx[mcp]'" in out.stderr, out.stderr


def test_agent_hook_is_listed_in_help() -> None:
    out = ncx("--help")
    assert "agent-hook" in out.stdout


def test_mcp_refuses_a_root_that_is_not_a_repository(tmp_path: Path) -> None:
    out = ncx_proc("mcp", "--root", str(tmp_path / "nonexistent"), ok=False, input="")
    assert out.returncode == 1 and "nonexistent" in out.stderr and "--root" in out.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    out = ncx_proc("mcp", "--root", str(plain), ok=False, input="")
    assert out.returncode == 1 and "not inside a git repository" in out.stderr


def test_sync_of_a_path_that_names_nothing_fails(tree: Path) -> None:
    out = ncx("sync", "docs/nosuch.rst", ok=False)
    assert out.returncode == 1
    assert "docs/nosuch.rst" in out.stderr and "up to date" not in out.stderr
    ncx("sync", "docs")  # a folder that holds docs
    ncx("sync", "README.md")
    # a doc removed from the tree is still a path sync acts on: its chunks go
    git(tree, "rm", "-q", "docs/auth.md")
    out = ncx("sync", "docs/auth.md")
    assert "removed .neocortex/chunks/docs/auth.md" in out.stdout


def test_assemble_with_the_task_as_an_argument_says_to_use_task(tree: Path) -> None:
    out = ncx("assemble", "fix the token refresh", ok=False)
    assert out.returncode == 2
    assert "--task 'fix the token refresh'" in out.stderr, out.stderr


def test_hooks_in_a_repository_without_ncx_leave_nothing_behind(repo: Path) -> None:
    write(repo, "README.md", "# Plain\n")
    commit_all(repo)
    for event in ("prompt", "session-start", "warm"):
        out = ncx_proc("agent-hook", event, input='{"prompt": "how do we deploy the shop backend"}')
        assert out.stdout == ""
    import time

    time.sleep(1.0)  # a background warm, had one started, would have made its lock by now
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (repo / ".neocortex").exists()


def test_files_ncx_writes_respect_the_umask(repo: Path) -> None:
    write(repo, "docs/auth.md", AUTH)
    commit_all(repo)
    old = os.umask(0o022)
    try:
        ncx("init", "--agent", "claude")
        ncx("sync")
    finally:
        os.umask(old)
    for rel in (
        ".gitattributes",
        "CLAUDE.md",
        ".neocortex/manifest.json",
        ".neocortex/chunks/docs/auth.md",
        ".claude/settings.json",
    ):
        mode = stat.S_IMODE((repo / rel).stat().st_mode)
        assert mode == 0o644, f"{rel}: {oct(mode)}"
    # a file the user made private stays private when ncx rewrites it
    (repo / "CLAUDE.md").chmod(0o600)
    (repo / "CLAUDE.md").write_text("# Notes\n")
    ncx("init", "--agent", "claude")
    assert stat.S_IMODE((repo / "CLAUDE.md").stat().st_mode) == 0o600


# --- the PR review workflow finds the ncx a repository pins ------------------------------------


def _readme_precommit_snippet() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## pre-commit hooks") :]
    start = section.index("```yaml\n") + len("```yaml\n")
    return section[start : section.index("```", start)]


def _pin_step() -> str:
    import yaml

    wf = yaml.safe_load((REPO / "templates/github/ncx-review.yml").read_text(encoding="utf-8"))
    steps = wf["jobs"]["review"]["steps"]
    return next(s["run"] for s in steps if str(s.get("name", "")).startswith("Install the ncx"))


def _run_pin_step(tmp_path: Path, config: str) -> subprocess.CompletedProcess[str]:
    """The workflow's install step as GitHub runs it (bash -e), in a checkout holding
    `config`; `python -m pip` and `ncx` are stand-ins that say what they were asked."""
    work = tmp_path / "checkout"
    work.mkdir(exist_ok=True)
    (work / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "python"
    shim.write_text(
        '#!/bin/sh\nif [ "$1" = -m ] && [ "$2" = pip ]; then echo "PIP $*"; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    (bin_dir / "ncx").write_text("#!/bin/sh\necho ncx 0.1.0\n")
    for f in (shim, bin_dir / "ncx"):
        f.chmod(0o755)
    return subprocess.run(
        ["bash", "-e", "-c", _pin_step()],
        cwd=work,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
    )


@pytest.mark.parametrize("source", ["README.md", "templates/pre-commit-config.yaml"])
def test_review_workflow_installs_the_pin_of_the_documented_snippet(
    tmp_path: Path, source: str
) -> None:
    text = (
        _readme_precommit_snippet()
        if source == "README.md"
        else (REPO / source).read_text(encoding="utf-8")
    )
    assert "    # " in text  # the snippet comments its repo: and rev: lines, as users keep them
    filled = text.replace("<you>", "acme").replace("<tag or commit sha>", "v0.1.0")
    ran = _run_pin_step(tmp_path, filled)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "PIP -m pip install --quiet git+https://github.com/acme/ncx@v0.1.0" in ran.stdout
    # the snippet as printed (placeholders) is not a pin: the step says where to pin
    ran = _run_pin_step(tmp_path, text)
    assert ran.returncode == 1 and "pin ncx there" in ran.stdout


@pytest.mark.parametrize(
    "config",
    [
        # quoted, flow style, rev before repo, another repo first, a fork not named ncx
        "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.0.0\n"
        "  hooks: [{id: trailing-whitespace}]\n"
        "- {rev: 'v0.1.0', repo: \"https://git.example/team/knowledge-tools\", "
        "hooks: [{id: ncx-sync}, {id: ncx-check}]}\n",
        "repos:\n  - rev: v0.1.0   # pinned\n    repo: https://git.example/team/knowledge-tools  # ours\n"
        "    hooks:\n      - id: ncx-check\n",
    ],
)
def test_review_workflow_reads_the_config_as_yaml(tmp_path: Path, config: str) -> None:
    ran = _run_pin_step(tmp_path, config)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "git+https://git.example/team/knowledge-tools@v0.1.0" in ran.stdout
