"""Agents and pull requests as the README installs them (issue 29): the commands ncx tells
agents and users to run exist, the committed agent files carry no machine's paths, and the
small CLI edges around them (hints, refusals, file modes) behave."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    REPO,
    commit_all,
    git,
    mcp_session,
    ncx,
    ncx_proc,
    shared_pre_commit_home,
    write,
)

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


# --- one committed configuration: the launcher ------------------------------------------------

LAUNCHER = ".neocortex/bin/ncx"
AGENT_FILES = (
    ".claude/settings.json",
    ".mcp.json",
    ".cursor/mcp.json",
    ".codex/config.toml",
    "CLAUDE.md",
    "AGENTS.md",
    ".cursor/rules/ncx.mdc",
)
BARE = {"PATH": "/usr/bin:/bin"}  # a shell where ncx is not on PATH (the README's install)


def _machine(tmp_path: Path, name: str, *, ncx_home: bool) -> dict[str, str]:
    """The environment of a teammate's machine: its own HOME, ncx not on PATH, and (with
    `ncx_home`) ncx installed where the README puts it, ~/.ncx/bin/ncx."""
    home = tmp_path / name
    env = {**os.environ, "HOME": str(home), **BARE}
    if ncx_home:
        exe = home / ".ncx/bin/ncx"
        exe.parent.mkdir(parents=True)
        exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m ncx "$@"\n')
        exe.chmod(0o755)
    else:
        env.pop("PYTHONPATH", None)  # nothing to import ncx from either
        home.mkdir(parents=True)
    return env


@pytest.fixture
def installed(tree: Path) -> Path:
    """`ncx init --agent all` run where ncx is not on PATH (a venv nobody activated), the
    result committed as a team would."""
    out = ncx_proc("init", "--agent", "all", cwd=tree, env=BARE)
    # the launcher finds no ncx on this machine: said, with what to do
    assert f"warning: `{LAUNCHER} --version` found no ncx on this machine" in out.stderr
    assert "the agents cannot start ncx here until you install ncx" in out.stderr
    own = str(Path(sys.executable).parent / "ncx")
    out = ncx_proc("init", "--agent", "all", cwd=tree, env={**BARE, "NCX_BIN": own})
    assert f"checked: `{LAUNCHER} --version` -> ncx " in out.stderr, out.stderr
    assert "already installed; nothing to do" in out.stderr
    commit_all(tree, "agents")
    return tree


def test_committed_agent_files_name_no_machine_path(installed: Path) -> None:
    import json

    tomllib = pytest.importorskip("tomllib")
    for rel in AGENT_FILES:
        text = (installed / rel).read_text()
        for machine in (sys.executable, str(Path(sys.executable).parent), os.environ["HOME"]):
            assert machine not in text, (rel, machine)
    settings = json.loads((installed / ".claude/settings.json").read_text())
    for groups in settings["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                assert f"/{LAUNCHER} agent-hook " in hook["command"]
    for rel in (".mcp.json", ".cursor/mcp.json"):
        entry = json.loads((installed / rel).read_text())["mcpServers"]["ncx"]
        assert entry["command"].endswith(LAUNCHER) and entry["args"][0] == "mcp"
    codex = tomllib.loads((installed / ".codex/config.toml").read_text())
    assert codex["mcp_servers"]["ncx"] == {"command": LAUNCHER, "args": ["mcp"]}
    mode = (installed / LAUNCHER).stat().st_mode
    assert mode & 0o111 == 0o111
    assert git(installed, "ls-files", "-s", LAUNCHER).startswith("100755 ")
    # ncx's own tree is still right with the launcher in it
    ncx("check")


def _hook_commands(root: Path) -> dict[str, str]:
    import json

    settings = json.loads((root / ".claude/settings.json").read_text())
    return {event: groups[0]["hooks"][0]["command"] for event, groups in settings["hooks"].items()}


# e2e: the committed launcher under /bin/sh, a process per hook
@pytest.mark.e2e
def test_a_teammate_s_hooks_run_through_the_committed_launcher(
    installed: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "teammate"
    git(installed, "clone", "-q", str(installed), str(clone))
    env = {**_machine(tmp_path, "home2", ncx_home=True), "CLAUDE_PROJECT_DIR": str(clone)}
    hooks = _hook_commands(clone)
    ran = subprocess.run(
        ["/bin/sh", "-c", hooks["UserPromptSubmit"]],
        cwd=clone / "docs",  # Claude Code runs hooks from the session's cwd, maybe a subfolder
        input='{"prompt": "why does the API answer 401 after the token refresh", "cwd": "'
        + str(clone)
        + '"}',
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert "docs/auth.md:" in ran.stdout, ran.stderr
    start = subprocess.run(
        ["/bin/sh", "-c", hooks["SessionStart"]],
        cwd=clone,
        input="{}",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert start.returncode == 0 and f"`{LAUNCHER} assemble --task" in start.stdout, start.stderr


def test_a_machine_without_ncx_gets_one_clear_line_and_hooks_fail_open(
    installed: Path, tmp_path: Path
) -> None:
    env = {**_machine(tmp_path, "bare", ncx_home=False), "CLAUDE_PROJECT_DIR": str(installed)}
    for command in _hook_commands(installed).values():
        ran = subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=installed,
            input="{}",
            capture_output=True,
            text=True,
            env=env,
        )
        assert ran.returncode == 0 and ran.stdout == ""
        assert "ncx is not installed on this machine" in ran.stderr
        assert "~/.ncx/bin/pip install" in ran.stderr
    ran = subprocess.run(
        [str(installed / LAUNCHER), "status"], capture_output=True, text=True, env=env
    )
    assert ran.returncode == 127 and "ncx is not installed" in ran.stderr
    # NCX_BIN: a machine's own ncx, wherever it is
    ran = subprocess.run(
        [str(installed / LAUNCHER), "--version"],
        capture_output=True,
        text=True,
        env={**env, "NCX_BIN": str(Path(sys.executable).parent / "ncx"), "PYTHONPATH": str(REPO)},
    )
    assert ran.returncode == 0 and ran.stdout.startswith("ncx "), ran.stderr


def _backticked_commands(text: str) -> list[str]:
    import re

    return [m for m in re.findall(r"`([^`\n]+)`", text) if re.match(r"(\S*/)?ncx \w", m)]


# e2e: every told command through the launcher, a process each
@pytest.mark.e2e
def test_every_command_agents_are_told_to_run_runs(installed: Path, tmp_path: Path) -> None:
    import shlex

    env = _machine(tmp_path, "home3", ncx_home=True)
    told: list[str] = []
    for rel in ("CLAUDE.md", "AGENTS.md", ".cursor/rules/ncx.mdc"):
        told += _backticked_commands((installed / rel).read_text())
    wakeup = subprocess.run(
        [LAUNCHER, "wakeup"], cwd=installed, capture_output=True, text=True, env=env
    )
    assert wakeup.returncode == 0, wakeup.stderr
    told += _backticked_commands(wakeup.stdout.splitlines()[-1])  # its "Next:" line
    frame = subprocess.run(
        [LAUNCHER, "assemble", "--task", "fix the token refresh", "--budget", "800"],
        cwd=installed,
        capture_output=True,
        text=True,
        env=env,
    )
    told += _backticked_commands(frame.stdout)
    hint = subprocess.run(
        [LAUNCHER, "sync", "docs/nosuch.rst"],
        cwd=installed,
        capture_output=True,
        text=True,
        env=env,
    )
    told += _backticked_commands(hint.stderr)
    assert len(told) >= 10 and any("wakeup" not in c for c in told)
    for command in told:
        argv = shlex.split(command.replace("<", "").replace(">", ""))
        assert argv[0] == LAUNCHER, command  # never a bare `ncx`, which is not on PATH here
        sub = [a for a in argv[1:3] if not a.startswith(("-", '"')) and a.isidentifier()]
        ran = subprocess.run(
            [argv[0], *sub[:2], "--help"], cwd=installed, capture_output=True, text=True, env=env
        )
        assert ran.returncode == 0, (command, ran.stderr)


def test_readme_next_steps_run_after_the_readme_install() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("Then, in your repository:") :]
    block = section[
        section.index("```sh\n") + 6 : section.index("```", section.index("```sh\n") + 6)
    ]
    lines = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]
    assert lines
    for line in lines:
        assert line.startswith(("~/.ncx/bin/ncx ", f"{LAUNCHER} ")), line


# --- .codex/config.toml -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "user",
    [
        '[mcp_servers]\nncx = { command = "/opt/ncx", args = ["mcp"] }\n',
        'mcp_servers.ncx.command = "/opt/ncx"\nmcp_servers.ncx.args = ["mcp"]\n',
        'mcp_servers = { ncx = { command = "/opt/ncx", args = ["mcp"] } }\n',
        '[mcp_servers."ncx"]\ncommand = "/opt/ncx"\n',
        '[mcp_servers.ncx.env]\nK = "v"\n',
    ],
)
def test_codex_server_defined_in_any_toml_form_is_left_alone(repo: Path, user: str) -> None:
    tomllib = pytest.importorskip("tomllib")
    write(repo, ".codex/config.toml", 'model = "o4"\n' + user)
    out = ncx("init", "--agent", "codex")
    text = (repo / ".codex/config.toml").read_text()
    assert text == 'model = "o4"\n' + user
    tomllib.loads(text)
    assert "already defines the MCP server ncx" in out.stderr


@pytest.mark.parametrize(
    ("user", "said"),
    [
        ('model = "o4"\n[mcp_servers.docs\ncommand = "x"\n', "is not valid TOML"),
        ('mcp_servers = { docs = { command = "docs-mcp" } }\n', "cannot be added to"),
    ],
)
def test_codex_config_ncx_cannot_extend_is_refused_untouched(
    repo: Path, user: str, said: str
) -> None:
    write(repo, ".codex/config.toml", user)
    out = ncx("init", "--agent", "codex", ok=False)
    assert out.returncode == 1 and said in out.stderr, out.stderr
    assert ".codex/config.toml" in out.stderr
    assert (repo / ".codex/config.toml").read_text() == user


# --- ncx review ---------------------------------------------------------------------------------

SEC = " ".join(["Every request is authenticated by the gateway before it reaches a service."] * 6)


def _ops(monitor: str) -> str:
    return (
        f"# Ops\n\n{SEC}\n\n## Deploy\n\n{SEC}\n\n## Monitor\n\n{monitor}\n\n## Alerts\n\n{SEC}\n"
    )


def test_review_says_a_section_merged_into_a_neighbour_was_merged(repo: Path) -> None:
    write(repo, "docs/ops.md", _ops(SEC))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    write(repo, "docs/ops.md", _ops("Short now."))
    ncx("sync")
    commit_all(repo, "shrink")
    out = ncx("review", "HEAD~1..HEAD")
    row = next(ln for ln in out.stdout.splitlines() if ln.startswith("| `docs/ops.md`"))
    assert "Ops > Monitor (merged into Ops > " in row, row
    assert row.endswith("| — |"), row  # nothing removed
    import json

    doc = json.loads(ncx("review", "HEAD~1..HEAD", "--json").stdout)["docs"][0]
    assert doc["removed"] == [] and doc["merged"]["Ops > Monitor"].startswith("Ops > ")
    # a section really removed is still "removed"
    write(repo, "docs/ops.md", f"# Ops\n\n{SEC}\n\n## Deploy\n\n{SEC}\n\n## Alerts\n\n{SEC}\n")
    ncx("sync")
    commit_all(repo, "drop")
    row = next(
        ln for ln in ncx("review", "HEAD~2..HEAD").stdout.splitlines() if "`docs/ops.md`" in ln
    )
    assert row.endswith("| Ops > Monitor |"), row  # from when it had its own chunk


def test_review_of_reflog_ranges(tree: Path) -> None:
    write(tree, ".neocortex/memories/x.txt", "")  # any change; reflog entries are what counts
    commit_all(tree, "more")
    out = ncx("review", "HEAD@{1}..HEAD")
    assert out.stdout.startswith("## ncx knowledge review `HEAD@{1}..HEAD`")
    out = ncx("review", "HEAD@{99}..HEAD", ok=False)
    assert out.returncode == 2 and "unknown git revision 'HEAD@{99}'" in out.stderr
    assert "internal error" not in out.stderr


# --- the same learning, another context ----------------------------------------------------------

LEARNING = "The refresh endpoint allows ten calls per minute per user."


def test_the_same_learning_with_another_context_is_a_duplicate(tree: Path) -> None:
    ncx("memory", "add", LEARNING, "--context", "found while fixing the login retry loop")
    again = ncx(
        "memory",
        "add",
        "the refresh endpoint allows ten calls per minute, per user",
        "--context",
        "seen in the gateway logs during the outage review of the payment service last week",
        ok=False,
    )
    assert again.returncode == 1 and "already remembered" in again.stderr, again.stderr
    # another learning under the same context is not a duplicate
    ncx("memory", "add", "Logout deletes the session row.", "--context", "found while fixing")
    assert len(list((tree / ".neocortex/memories").glob("*.md"))) == 2


@pytest.mark.e2e
def test_mcp_remember_judges_duplicates_on_the_learning(tree: Path) -> None:
    seen: dict[str, object] = {}

    async def session(s: Any) -> None:
        seen["first"] = await s.call_tool(
            "remember", {"learning": LEARNING, "context": "from the auth session"}
        )
        seen["again"] = await s.call_tool(
            "remember",
            {
                "learning": LEARNING,
                "context": "noticed again by another agent while load testing checkout",
            },
        )

    mcp_session(tree, session)
    assert not seen["first"].is_error  # type: ignore[attr-defined]
    again = seen["again"]
    assert again.is_error and "already remembered" in again.content[0].text  # type: ignore[attr-defined]


# --- weak evidence --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question", ["kubernetes values", "Which values does the Kubernetes autoscaler take?"]
)
def test_one_shared_word_does_not_hide_weak_evidence(tree: Path, question: str) -> None:
    import json

    write(tree, "docs/config.md", "# Config\n\nSettings read their values from the environment.\n")
    commit_all(tree)
    ncx("sync")
    hits = [json.loads(ln) for ln in ncx("retrieve", question, "--json").stdout.splitlines()]
    assert hits[0]["source_path"] == "docs/config.md" and hits[0]["weak"], hits[0]
    frame = ncx("assemble", "--task", question, "--budget", "800").stdout
    assert "Weak evidence" in frame
    # in scope: the same one word, asked about what the tree holds, is not weak
    hits = [
        json.loads(ln) for ln in ncx("retrieve", "environment values", "--json").stdout.splitlines()
    ]
    assert hits[0]["source_path"] == "docs/config.md" and not hits[0]["weak"]
    frame = ncx(
        "assemble", "--task", "refresh token rotation after a 401", "--budget", "800"
    ).stdout
    assert "Weak evidence" not in frame


# --- MCP over stdio: what is not JSON-RPC gets an answer ------------------------------------------


@pytest.mark.e2e
def test_mcp_answers_what_is_not_json_rpc(tree: Path) -> None:
    pytest.importorskip("mcp")
    import json

    from conftest import NCX_CMD

    lines = [
        '{"foo": 1}',  # JSON, not a JSON-RPC message
        "not json at all",
        '{"jsonrpc": "2.0", "id": 7, "method": "ping"}',  # still served after both
    ]
    # stdin stays open until the three replies are read: at end of input the server stops,
    # and a request still in flight then goes unanswered
    proc = subprocess.Popen(
        [*NCX_CMD, "mcp"],
        cwd=tree,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        got = [proc.stdout.readline() for _ in lines]
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    replies = [json.loads(ln) for ln in got if ln.strip()]
    assert [r.get("error", {}).get("code") for r in replies] == [-32600, -32700, None], replies
    assert replies[0]["id"] is None and replies[1]["id"] is None
    assert replies[2] == {"jsonrpc": "2.0", "id": 7, "result": {}}


# --- one doc edit, two hooks, one piece of advice -------------------------------------------------


@pytest.mark.e2e
def test_one_doc_edit_gets_one_piece_of_advice_from_both_hooks(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from test_hooks import PRE_COMMIT, local_config

    if PRE_COMMIT is None:
        pytest.skip("pre-commit is not installed")
    monkeypatch.setenv("PRE_COMMIT_HOME", str(shared_pre_commit_home(tmp_path)))
    write(tree, ".pre-commit-config.yaml", local_config())
    commit_all(tree, "hooks")
    subprocess.run([PRE_COMMIT, "install"], cwd=tree, check=True, capture_output=True)
    write(tree, "docs/auth.md", AUTH.replace("one day", "two days"))
    git(tree, "add", "docs/auth.md")
    first = subprocess.run(
        ["git", "commit", "-m", "edit"],
        cwd=tree,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert first.returncode != 0
    out = first.stdout
    assert "ncx sync (re-chunk changed docs)" in out and "ncx check" in out
    check = out[out.index("ncx check (validate .neocortex/)") :]
    # ncx-sync already wrote the chunk file: running `ncx sync` again is needless advice
    assert "ncx sync" not in check.replace("ncx sync (re-chunk", ""), check
    assert "`git add docs/auth.md .neocortex`" in out
    assert "`git add docs/auth.md .neocortex`" in check, check
    git(tree, "add", "docs/auth.md", ".neocortex")
    second = subprocess.run(
        ["git", "commit", "-m", "edit"], cwd=tree, capture_output=True, text=True
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert shutil.which("git")


@pytest.mark.e2e
def test_each_agent_s_mcp_config_starts_the_server_on_a_teammate_s_machine(
    installed: Path, tmp_path: Path
) -> None:
    """The committed MCP entries, expanded as each client does (Claude Code: ${VAR:-default};
    Cursor: ${workspaceFolder}; Codex: as written, from the project folder), start a server
    that answers, where ncx is only at ~/.ncx/bin/ncx."""
    import json

    tomllib = pytest.importorskip("tomllib")
    clone = tmp_path / "teammate"
    git(installed, "clone", "-q", str(installed), str(clone))
    env = _machine(tmp_path, "home4", ncx_home=True)
    claude = json.loads((clone / ".mcp.json").read_text())["mcpServers"]["ncx"]
    cursor = json.loads((clone / ".cursor/mcp.json").read_text())["mcpServers"]["ncx"]
    codex = tomllib.loads((clone / ".codex/config.toml").read_text())["mcp_servers"]["ncx"]

    def claude_expand(s: str) -> str:
        return s.replace("${CLAUDE_PROJECT_DIR:-.}", ".")  # no such variable: the default

    def cursor_expand(s: str) -> str:
        return s.replace("${workspaceFolder}", str(clone))

    configs = {
        "claude": (claude_expand(claude["command"]), [claude_expand(a) for a in claude["args"]]),
        "cursor": (cursor_expand(cursor["command"]), [cursor_expand(a) for a in cursor["args"]]),
        "codex": (codex["command"], codex["args"]),
    }
    seen: dict[str, object] = {}
    for name, command in configs.items():

        async def session(s: Any, name: str = name) -> None:
            seen[name] = await s.call_tool("status", {})

        mcp_session(clone, session, command=command, env=env)
        res = seen[name]
        assert not res.is_error, (name, res)  # type: ignore[attr-defined]
        assert res.structured_content["chunks"] >= 1, name  # type: ignore[attr-defined]
