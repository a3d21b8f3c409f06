"""The agent side's edges (issue 36, item 9): the MCP server on a wrong --root and on
JSON-RPC it must answer (not drop, not misaddress), the hooks with a closed stdout."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import NCX_CMD, NCX_SHELL, first_sync, write
from test_installed import INITIALIZE, INITIALIZED, mcp_exchange

pytestmark = pytest.mark.e2e  # each starts ncx in a process of its own

TOOLS_LIST = {"jsonrpc": "2.0", "id": 99, "method": "tools/list"}


def _serve(
    cwd: Path, *lines: Any, args: tuple[str, ...] = (), null_reply: bool = False
) -> dict[Any, dict[str, Any]]:
    """Replies of `ncx mcp ARGS` to initialize, `lines`, then a tools/list (id 99); with
    `null_reply`, also waited for: a reply with id null."""
    pytest.importorskip("mcp")
    return mcp_exchange(
        [*NCX_CMD, "mcp", *args],
        cwd,
        dict(os.environ),
        [INITIALIZE, INITIALIZED, *lines, TOOLS_LIST],
        wait_for=frozenset({None} if null_reply else ()),
        timeout=60,
    )


# --- a wrong --root: the server starts and every tool answers the error (README) -------------


@pytest.mark.parametrize("kind", ["missing", "not-a-repo"])
def test_mcp_on_a_wrong_root_starts_and_each_tool_answers_the_error(
    tmp_path: Path, kind: str
) -> None:
    root = tmp_path / "nonexistent"
    if kind == "not-a-repo":
        root = tmp_path / "plain"
        root.mkdir()
    calls = [
        {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
         "params": {"name": name, "arguments": arguments}}
        for i, (name, arguments) in enumerate(
            [("status", {}), ("retrieve", {"query": "x"}), ("assemble", {"task": "x"}),
             ("remember", {"learning": "the cache lives in .neocortex/cache"})]
        )
    ]  # fmt: skip
    replies = _serve(tmp_path, *calls, args=("--root", str(root)))
    assert replies[1]["result"]["serverInfo"]["name"] == "ncx"
    assert "Not serving a repository" in replies[1]["result"]["instructions"]
    for call in calls:
        result = replies[call["id"]]["result"]
        assert result["isError"], call
        text = result["content"][0]["text"]
        want = "--root is not a folder" if kind == "missing" else "not inside a git repository"
        assert want in text and str(root) in text and '"--root"' in text, text


# --- JSON-RPC the SDK misread ------------------------------------------------------------------


def test_mcp_answers_a_request_with_bad_params_on_its_own_id(repo: Path) -> None:
    """Was: the error went out with id null, and the client waited on id 8 forever."""
    bad = {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": [1, 2]}
    replies = _serve(repo, bad)
    assert replies[8]["error"]["code"] == -32600
    assert "params must be an object" in replies[8]["error"]["message"]
    assert None not in replies and "tools" in replies[99]["result"]


@pytest.mark.parametrize("ident", [None, {"a": 1}, 1.5, True])
def test_mcp_answers_a_request_whose_id_is_not_a_string_or_integer(repo: Path, ident: Any) -> None:
    """Was: read as a notification, and nothing answered."""
    line = {"jsonrpc": "2.0", "id": ident, "method": "tools/list"}
    replies = _serve(repo, line, null_reply=True)
    assert replies[None]["error"]["code"] == -32600
    assert "string or an integer" in replies[None]["error"]["message"]
    assert "tools" in replies[99]["result"]


def test_mcp_says_a_batch_is_not_mcp(repo: Path) -> None:
    replies = _serve(repo, [{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}], null_reply=True)
    assert replies[None]["error"]["code"] == -32600
    assert "batch" in replies[None]["error"]["message"]
    assert 7 not in replies and "tools" in replies[99]["result"]


def test_mcp_still_answers_what_is_right_and_what_is_not_json(repo: Path) -> None:
    write(repo, "README.md", "# Shop\n\nAn online shop.\n")
    first_sync(repo)
    notification = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 123}}  # fmt: skip
    pytest.importorskip("mcp")
    proc = subprocess.Popen(
        [*NCX_CMD, "mcp"], cwd=repo, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    out, _ = proc.communicate(
        "".join(json.dumps(m) + "\n" for m in (INITIALIZE, INITIALIZED, notification))
        + "{not json\n"
        + json.dumps(TOOLS_LIST)
        + "\n",
        timeout=120,
    )
    replies = [json.loads(line) for line in out.splitlines()]
    ids = [r.get("id") for r in replies]
    assert ids.count(None) == 1 and 1 in ids, replies  # the notification gets no reply
    assert next(r for r in replies if r.get("id") is None)["error"]["code"] == -32700


# --- hooks with a closed stdout ----------------------------------------------------------------


@pytest.mark.parametrize("event", ["prompt", "session-start"])
def test_a_hook_with_a_closed_stdout_exits_0_quietly(repo: Path, event: str) -> None:
    write(repo, "docs/auth.md", "# Auth\n\n## Token refresh\n\nThe client refreshes the token.\n")
    first_sync(repo)
    hook = json.dumps({"prompt": "how does the client refresh the token"})
    closed = subprocess.run(
        ["sh", "-c", f"{NCX_SHELL} agent-hook {event} >&-"],
        cwd=repo, input=hook, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert closed.returncode == 0 and closed.stderr == "", closed.stderr
    # a reader that went away (the agent gave up on the hook): the same
    proc = subprocess.Popen(
        [*NCX_CMD, "agent-hook", event], cwd=repo, text=True, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(hook, timeout=120)
    assert proc.returncode == 0 and err == "", err
