"""The installed tier: ncx as a user gets it. The release wheel (conftest's `dist`, offline),
installed into a fresh virtual environment, and every command runs from that environment's
`ncx`, in git repositories outside the checkout, with PYTHONPATH cleared.

Why a tier of its own: every other test imports ncx from the checkout, which has every folder,
so a package left out of the wheel (ncx.eval once was: `eval`, `review` and `--at` crashed in
every regular install) passed them all. Here the fresh environment's own ncx comes first on
sys.path, and nothing of the checkout is on it: a subpackage missing from the wheel fails as
it would for a user. Nothing downloads: the wheel goes in with --no-deps --no-index, and the
dependencies are the test interpreter's, appended after the fresh site-packages by a `.pth`.

The commands come from the typer app itself, so a new command gets at least its --help run
here; the main ones get a real run each (REAL_RUNS names them; a test keeps that list true).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from test_memory import NOTES

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Installed:
    """The fresh environment: its `bin/`, and the environment every run gets."""

    bin: Path
    env: dict[str, str]

    def run(
        self,
        *args: str,
        cwd: Path,
        input: str | None = None,
        ok: bool = True,
        env: dict[str, str] | None = None,
        timeout: float = 180,
    ) -> subprocess.CompletedProcess[str]:
        """`ncx ARGS` through the installed console script, in `cwd` (never the checkout)."""
        assert not cwd.resolve().is_relative_to(REPO), cwd
        proc = subprocess.run(
            [str(self.bin / "ncx"), *args],
            cwd=cwd,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**self.env, **(env or {})},
        )
        if ok:
            assert proc.returncode == 0, (
                f"ncx {' '.join(args)} -> {proc.returncode}\n{proc.stdout[-3000:]}\n"
                f"{proc.stderr[-3000:]}"
            )
        return proc

    def python(self, code: str, *, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / "python"), "-c", code],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=120,
            env=self.env,
        )


def install_fresh(wheel: Path, where: Path) -> Path:
    """A fresh venv with only `wheel` installed in it; the test interpreter's site-packages
    appended to its path (after its own), so the dependencies import and nothing downloads."""
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
         "--no-index", "--no-compile", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fresh_site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Path lines of a .pth are appended to sys.path: the fresh site-packages stays first. The
    # test interpreter's own .pth files (an editable ncx's finder) are not run from there.
    ours = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    deps = [p for p in dict.fromkeys(ours) if Path(p).is_dir() and Path(p) != Path(fresh_site)]
    (Path(fresh_site) / "zz_ncx_test_deps.pth").write_text(
        "".join(f"{p}\n" for p in deps), encoding="utf-8"
    )
    return venv


@pytest.fixture(scope="session")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The release wheel (conftest's `dist`: built from a copy of the checkout, by way of
    its sdist) in a fresh venv."""
    where = tmp_path_factory.mktemp("installed")
    (wheel,) = dist.glob("ncx-*.whl")
    venv = install_fresh(wheel, where)
    home = where / "home"
    home.mkdir()
    here = str(Path(sys.executable).parent)
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != here]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("NCX_", "PYTHON", "GIT_")) and k != "VIRTUAL_ENV"
    }
    env.update(
        PATH=os.pathsep.join([str(venv / "bin"), *path]),
        HOME=str(home),
        NCX_MODEL_CACHE=str(where / "model-cache"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="ncx test",
        GIT_COMMITTER_NAME="ncx test",
        GIT_AUTHOR_EMAIL="test@ncx.invalid",
        GIT_COMMITTER_EMAIL="test@ncx.invalid",
    )
    return Installed(venv / "bin", env)


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _commit(root: Path, msg: str) -> None:
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", msg)


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


AUTH_DOC = """
    # Authentication

    ## Refresh

    The client refreshes the session token five minutes before it expires, with the
    refresh token kept in the keyring.

    ## Login

    The login form posts the user name and password to the auth server.
"""
EVALS = """
    questions:
      - id: refresh
        ask: how does the client refresh the session token
        expect:
          - doc: docs/auth.md
            section: Refresh
"""


@pytest.fixture(scope="module")
def project(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository a user set up with the installed ncx: two commits of docs, code and
    knowledge (HEAD~1 and HEAD), outside the checkout."""
    root = tmp_path_factory.mktemp("project") / "proj"
    root.mkdir()
    _git(root, "-c", "init.defaultBranch=main", "init", "-q")
    _git(root, "config", "user.name", "ncx test")
    _git(root, "config", "user.email", "test@ncx.invalid")
    _write(root, "README.md", "# Demo\n\nA demo service that signs users in.\n")
    _write(root, "docs/auth.md", AUTH_DOC)
    _write(
        root,
        "src/auth.py",
        '''
        def refresh_session_token(client):
            """Refresh the session token before it expires."""
            return client.post("/refresh")
        ''',
    )
    _commit(root, "docs and code")
    installed.run("init", cwd=root)
    installed.run("sync", cwd=root)
    _commit(root, "ncx knowledge")
    _write(root, "docs/deploy.md", "# Deploy\n\nThe release job tags the commit and builds it.\n")
    _write(root, ".neocortex/evals.yaml", EVALS)
    _git(root, "add", "-A")  # ncx indexes tracked docs
    installed.run("sync", cwd=root)
    installed.run("memory", "add", "Token refresh needs the clock in UTC", "--domain", "auth",
                  cwd=root)  # fmt: skip
    _commit(root, "deploy doc, a question and a memory")
    return root


@pytest.fixture
def scratch(project: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of `project` for a test that writes."""
    copy = tmp_path / "proj"
    shutil.copytree(project, copy, symlinks=True)
    yield copy


# --- the commands, from the app ------------------------------------------------------------


def command_paths() -> list[tuple[str, ...]]:
    """Every command and subcommand of the app (the checkout's: what the wheel must hold)."""
    import typer

    from ncx.cli.main import app

    found: list[tuple[str, ...]] = []

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        found.append(path)
        if hasattr(cmd, "commands"):  # a group (typer's own click, not the click package)
            for name in sorted(cmd.commands):
                walk(cmd.commands[name], (*path, name))

    walk(typer.main.get_command(app), ())
    return found


# Each path here has a real run below (test_every_real_run_is_a_command keeps the list true).
# The rest get their --help run only: `model fetch` needs the network, `model use` re-embeds
# every unit (the sync's code), `hook merge-chunks` is git's merge driver (its own tests drive
# it through git), `hook migrate` is `migrate`'s carry-over for a tree mid-transition.
REAL_RUNS = {
    (), ("init",), ("sync",), ("status",), ("check",), ("retrieve",), ("assemble",),
    ("wakeup",), ("review",), ("eval",), ("benchmark",), ("mcp",), ("migrate",), ("model",),
    ("memory", "add"), ("memory", "list"), ("memory", "show"), ("memory", "evolve"),
    ("memory", "extract"), ("memory", "approve"), ("memory", "reject"), ("memory", "rm"),
    ("hook", "sync"), ("hook", "check"), ("hook", "post-merge"),
    ("agent-hook", "prompt"), ("agent-hook", "session-start"), ("agent-hook", "warm"),
}  # fmt: skip


def test_every_real_run_is_a_command() -> None:
    assert set(command_paths()) >= REAL_RUNS


def test_the_installed_ncx_is_the_wheel(installed: Installed, tmp_path: Path) -> None:
    """The fresh environment imports its own ncx, with every package the checkout has."""
    packages = sorted(
        ".".join(p.relative_to(REPO).parent.parts)
        for p in (REPO / "ncx").rglob("__init__.py")
        if "__pycache__" not in p.parts
    )
    code = (
        "import importlib, json, ncx; "
        f"[importlib.import_module(p) for p in {packages!r}]; "
        "print(json.dumps([ncx.__file__, ncx.version()]))"
    )
    proc = installed.python(code, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where, version = json.loads(proc.stdout)
    assert Path(where).is_relative_to(installed.bin.parent), where
    assert installed.run("--version", cwd=tmp_path).stdout.strip() == f"ncx {version}"


def test_help_of_every_command(installed: Installed, tmp_path: Path) -> None:
    """--help of each command and subcommand, from the installed app, in one interpreter (a
    process each would cost a start-up per command for the same check)."""
    paths = command_paths()
    code = textwrap.dedent(
        f"""
        import json, typer
        from typer.testing import CliRunner
        from ncx.cli.main import app
        out = {{}}
        for path in {paths!r}:
            r = CliRunner().invoke(app, [*path, "--help"])
            out[" ".join(path)] = [r.exit_code, r.output, repr(r.exception)]
        print(json.dumps(out))
        """
    )
    proc = installed.python(code, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name, (code_, output, exc) in json.loads(proc.stdout).items():
        assert code_ == 0 and "Usage:" in output, f"ncx {name} --help: {code_} {exc}\n{output}"
    top = installed.run("--help", cwd=tmp_path).stdout
    for path in paths:
        if len(path) == 1:
            assert f" {path[0]} " in top, path


# --- real runs: what reads --------------------------------------------------------------------

TASK = "change how the client refreshes the session token"
READS: dict[str, tuple[list[str], str]] = {
    # name: (arguments, what stdout must hold)
    "status": (["status"], "docs"),
    "status-json": (["status", "--json"], '"chunks"'),
    "check": (["check"], ""),
    "check-since": (["check", "--since", "HEAD~1"], ""),
    "retrieve": (["retrieve", "refresh the session token"], "docs/auth.md"),
    "retrieve-code": (["retrieve", "--kind", "code", "refresh session token"], "src/auth.py"),
    "retrieve-at": (["retrieve", "release job", "--at", "HEAD~1"], ""),
    "retrieve-memory": (["retrieve", "--kind", "memory", "clock UTC"], "UTC"),
    "assemble": (["assemble", "--task", TASK], "docs/auth.md"),
    "assemble-json": (["assemble", "--task", TASK, "--format", "json"], "docs/auth.md"),
    "assemble-at": (["assemble", "--task", TASK, "--at", "HEAD~1"], "docs/auth.md"),
    "wakeup": (["wakeup"], "docs/auth.md"),
    "eval": (["eval"], "refresh"),
    "eval-if-present": (["eval", "--if-present"], "refresh"),
    "eval-since": (["eval", "--since", "HEAD~1", "--json"], "refresh"),
    "eval-suggest": (["eval", "--suggest"], "questions:"),
    "review": (["review", "HEAD~1..HEAD"], "docs/deploy.md"),
    "review-json": (["review", "HEAD~1..HEAD", "--json"], "deploy"),
    "model": (["model"], "ncx-static-v2"),
    "model-json": (["model", "--json"], "ncx-static-v2"),
    "memory-list": (["memory", "list"], "UTC"),
    "benchmark": (["benchmark", "--n", "2", "--runs", "1"], "tokens"),
    "hook-check": (["hook", "check"], ""),
}


@pytest.mark.parametrize("name", sorted(READS))
def test_read_commands_run(installed: Installed, project: Path, name: str) -> None:
    args, wanted = READS[name]
    proc = installed.run(*args, cwd=project)
    assert wanted in proc.stdout, f"ncx {' '.join(args)}:\n{proc.stdout[-3000:]}"
    assert "Traceback" not in proc.stderr


def test_retrieve_at_answers_from_the_older_commit(installed: Installed, project: Path) -> None:
    then = installed.run("retrieve", "release job tags", "--at", "HEAD~1", "--json", cwd=project)
    now = installed.run("retrieve", "release job tags", "--json", cwd=project)
    assert "docs/deploy.md" in now.stdout and "docs/deploy.md" not in then.stdout


def test_eval_if_present_without_questions(installed: Installed, tmp_path: Path) -> None:
    root = tmp_path / "bare"
    root.mkdir()
    _git(root, "init", "-q")
    _write(root, "README.md", "# Bare\n\nNothing else.\n")
    _commit(root, "readme")
    installed.run("init", cwd=root)
    proc = installed.run("eval", "--if-present", cwd=root)
    assert proc.stdout == ""


def test_agent_hooks_run(installed: Installed, project: Path) -> None:
    hook = json.dumps({"prompt": "how does the client refresh the session token"})
    proc = installed.run("agent-hook", "prompt", cwd=project, input=hook,
                         env={"NCX_HOOK_TIMEOUT": "60"})  # fmt: skip
    assert "docs/auth.md" in proc.stdout, proc.stderr
    proc = installed.run("agent-hook", "session-start", cwd=project, input="{}",
                         env={"NCX_HOOK_TIMEOUT": "60"})  # fmt: skip
    assert "docs/auth.md" in proc.stdout, proc.stderr


def mcp_exchange(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    messages: list[Any],
    *,
    wait_for: frozenset[Any] = frozenset(),
    timeout: float = 120,
) -> dict[Any, dict[str, Any]]:
    """Send `messages` to an MCP server over stdio, one line each, and read its replies until
    each request (a message with a string or integer id) and each id of `wait_for` has one;
    then close its stdin. {id: reply}; the server is killed after `timeout` seconds."""
    import threading

    proc = subprocess.Popen(
        command, cwd=cwd, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    wanted = set(wait_for) | {
        m["id"] for m in messages if isinstance(m, dict) and type(m.get("id")) in (str, int)
    }
    replies: dict[Any, dict[str, Any]] = {}
    try:
        for m in messages:
            proc.stdin.write(json.dumps(m) + "\n")
        proc.stdin.flush()
        while not wanted <= replies.keys():
            line = proc.stdout.readline()
            if not line:
                break
            reply = json.loads(line)
            replies[reply.get("id")] = reply
    finally:
        killer.cancel()
        try:
            proc.stdin.close()
        except OSError:
            pass
        proc.wait(timeout=60)
    assert wanted <= replies.keys(), (wanted, replies)
    return replies


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_mcp_initialize_and_a_tool_call(installed: Installed, project: Path) -> None:
    """`ncx mcp` over stdio, as a client talks to it: initialize, then list and call tools."""
    pytest.importorskip("mcp")
    call = {"name": "retrieve", "arguments": {"query": "refresh the session token"}}
    replies = mcp_exchange(
        [str(installed.bin / "ncx"), "mcp"],
        project,
        installed.env,
        [
            INITIALIZE,
            INITIALIZED,
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call},
        ],
    )
    assert replies[1]["result"]["serverInfo"]["name"] == "ncx"
    tools = {t["name"] for t in replies[2]["result"]["tools"]}
    assert tools == {"assemble", "retrieve", "remember", "status"}
    assert "docs/auth.md" in json.dumps(replies[3]["result"])


# --- real runs: what writes (each in a copy of the project) ---------------------------------


def test_memory_commands(installed: Installed, scratch: Path) -> None:
    added = installed.run("memory", "add", "The deploy job runs on tags only", "--json",
                          cwd=scratch)  # fmt: skip
    mem = json.loads(added.stdout)["id"]
    assert mem in installed.run("memory", "list", cwd=scratch).stdout
    assert "tags only" in installed.run("memory", "show", mem, cwd=scratch).stdout
    installed.run("memory", "evolve", mem, "--useful", cwd=scratch)
    extracted = installed.run("memory", "extract", "-", "--json", cwd=scratch, input=NOTES)
    keep, drop, *_ = (a["id"] for a in json.loads(extracted.stdout)["added"])
    installed.run("memory", "approve", keep, cwd=scratch)
    installed.run("memory", "reject", drop, cwd=scratch)
    listed = {m["id"]: m["status"] for m in json.loads(
        installed.run("memory", "list", "--json", cwd=scratch).stdout)}  # fmt: skip
    assert listed[keep] == "active" and drop not in listed, listed
    installed.run("memory", "rm", mem, cwd=scratch)
    assert mem not in installed.run("memory", "list", cwd=scratch).stdout
    installed.run("check", cwd=scratch)


def test_hooks_sync_and_post_merge(installed: Installed, scratch: Path) -> None:
    doc = scratch / "docs/auth.md"
    doc.write_text(
        doc.read_text(encoding="utf-8") + "\n## Logout\n\nLogout drops the keyring entry.\n"
    )
    _git(scratch, "add", "docs/auth.md")
    first = installed.run("hook", "sync", cwd=scratch, ok=False)
    assert first.returncode == 1, first.stderr  # it wrote the chunk file: the commit re-runs
    assert "Logout" in (scratch / ".neocortex/chunks/docs/auth.md").read_text(encoding="utf-8")
    _git(scratch, "add", "-A")
    installed.run("hook", "sync", cwd=scratch)
    installed.run("hook", "check", cwd=scratch)
    _commit(scratch, "logout")
    installed.run("hook", "post-merge", cwd=scratch)


def test_init_agent_claude_and_the_launcher(installed: Installed, scratch: Path) -> None:
    proc = installed.run("init", "--agent", "claude", cwd=scratch)
    assert "checked:" in proc.stderr, proc.stderr
    launcher = scratch / ".neocortex/bin/ncx"
    assert installed.run("--version", cwd=scratch).stdout == subprocess.run(
        [str(launcher), "--version"], cwd=scratch, capture_output=True, text=True,
        env=installed.env,
    ).stdout  # fmt: skip
    settings = json.loads((scratch / ".claude/settings.json").read_text(encoding="utf-8"))
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    hook = json.dumps({"prompt": "how does the client refresh the session token"})
    ran = subprocess.run(["sh", "-c", command], cwd=scratch, input=hook, capture_output=True,
                         text=True, env={**installed.env, "CLAUDE_PROJECT_DIR": str(scratch),
                                         "NCX_HOOK_TIMEOUT": "60"})  # fmt: skip
    assert ran.returncode == 0 and "docs/auth.md" in ran.stdout, ran.stderr
    installed.run("agent-hook", "warm", cwd=scratch)


def test_migrate_a_v2_tree(installed: Installed, tmp_path: Path) -> None:
    from test_migrate import v2_tree  # the synthetic v2 tree of every quirk

    root = tmp_path / "v2"
    root.mkdir()
    _git(root, "init", "-q")
    v2_tree(root)
    _commit(root, "v2")
    assert ".mlda/" in installed.run("migrate", "--dry-run", cwd=root).stdout
    installed.run("migrate", cwd=root)
    assert (root / ".neocortex/manifest.json").is_file()
    installed.run("check", cwd=root)
