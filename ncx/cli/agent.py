"""cli_agent: `ncx agent-hook …` (what agents' hooks run) and `ncx mcp` (the MCP server).

A hook must never block or break the agent: it runs under a hard deadline, and on any error
or timeout it prints one warning line on stderr and exits 0 with nothing on stdout (an exit
of 2 would make Claude Code drop the user's prompt).
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ncx.cli.app import _config, _root, _say, app, command
from ncx.controls import strip_controls
from ncx.errors import UsageError
from ncx.query.warm import warm_in_background

DEFAULT_TIMEOUT = 3.0  # seconds; NCX_HOOK_TIMEOUT
DEFAULT_BUDGET = 2500  # tokens; NCX_HOOK_BUDGET

hook_app = typer.Typer(
    help="What agents' hooks run (installed by `ncx init --agent claude`). "
    "Reads the hook's JSON on stdin; never fails: errors and timeouts are one warning line.",
    no_args_is_help=True,
)
app.add_typer(hook_app, name="agent-hook")

TimeoutOpt = Annotated[
    str | None,
    typer.Option(
        "--timeout",
        envvar="NCX_HOOK_TIMEOUT",
        help=f"Give up after this many seconds [default: {DEFAULT_TIMEOUT:g}].",
    ),
]
BudgetOpt = Annotated[
    str | None,
    typer.Option(
        "--budget",
        envvar="NCX_HOOK_BUDGET",
        help=f"Token budget of what the hook prints [default: {DEFAULT_BUDGET}].",
    ),
]


# What a hook setting may be at most: an hour to answer, a million tokens.
_MAXIMUM = {"NCX_HOOK_TIMEOUT": 3600.0, "NCX_HOOK_BUDGET": 1_000_000.0}


def _number(raw: str | None, name: str, default: float) -> float:
    # Parsed here, not by typer: a bad value must not become a usage error (exit 2): a hook
    # never fails, so it says what is wrong and goes on with the default.
    from ncx.config import positive_setting

    if raw is None or not raw.strip():
        return default
    try:
        return positive_setting(raw.strip(), name, maximum=_MAXIMUM[name])
    except UsageError as exc:
        _say(f"ncx: {exc.message}; using {default:g}")
        return default


def _fail_open(
    event: str,
    timeout: float,
    produce: Callable[[], str],
    *,
    warm: bool = True,
    group: bool = False,
) -> None:
    """Run `produce` under a hard deadline; print its text, or a warning, and exit 0."""
    lock = threading.Lock()  # held while writing, so a timeout never cuts a frame in half
    done = threading.Event()

    def watchdog() -> None:
        if done.wait(timeout):
            return
        with lock:
            if done.is_set():
                return
            # Trigger: the deadline passed, usually because the search cache is being rebuilt
            # (first query after a sync or a pull: seconds on a large tree). Why: killed here,
            # that work is lost and every later prompt times out too. Outcome: a detached
            # `ncx agent-hook warm` finishes the cache, so the next prompt gets its context.
            bg = warm and warm_in_background()
            _say(
                f"ncx: {event} hook gave up after {timeout:g}s; no context added"
                + ("; building the search cache in the background" if bg else "")
                + " (NCX_HOOK_TIMEOUT raises the limit)"
            )
            sys.stderr.flush()
            if group and hasattr(os, "killpg") and os.getpgrp() == os.getpid():
                # A detached build (its own process group, warm_in_background): its pool
                # workers go with it, whatever they are doing (they hold the cache lock).
                os.killpg(os.getpid(), 9)
            os._exit(0)  # the main thread may be stuck in C code; only this is certain

    threading.Thread(target=watchdog, name="ncx-hook-deadline", daemon=True).start()
    try:
        text = produce()
    except Exception as exc:  # fail open: whatever went wrong, the agent carries on
        text = ""
        _say(
            f"ncx: {event} hook skipped: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        )
    with lock:
        done.set()
        if text:
            # What a hook prints goes to the agent, and often to the user's terminal too: a
            # prompt or a doc holding `ESC ] 52` must not reach either as a control.
            _emit(strip_controls(text))


def _emit(text: str) -> None:
    """Print a hook's text. A closed stdout (`>&-`) or one nobody reads any more (the agent
    gave up on the hook) is no error: the hook still exits 0, without a traceback."""
    try:
        if sys.stdout is not None:
            sys.stdout.write(text)
            sys.stdout.flush()
    except (OSError, ValueError):
        # What is left in the buffer is flushed again at exit: into /dev/null, quietly.
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
        except OSError:
            pass


def _stdin() -> str:
    return "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()


def _hook_root(cwd: Path | None) -> Path:
    from ncx.repo import find_root

    return find_root(cwd if cwd is not None and cwd.is_dir() else Path.cwd())


@hook_app.command("prompt")
def hook_prompt(timeout: TimeoutOpt = None, budget: BudgetOpt = None) -> None:
    """UserPromptSubmit: print the context frame for the submitted prompt (within the budget).

    Example: echo '{"prompt": "fix the token refresh"}' | ncx agent-hook prompt
    """
    limit = _number(timeout, "NCX_HOOK_TIMEOUT", DEFAULT_TIMEOUT)
    tokens = int(_number(budget, "NCX_HOOK_BUDGET", DEFAULT_BUDGET))

    def produce() -> str:
        import dataclasses

        from ncx.agents.prompt_hook import parse_hook_input, prompt_context
        from ncx.query.cache import cache_is_current

        hook = parse_hook_input(_stdin())
        root = _hook_root(hook.cwd)
        # After a pull or a sync the cache is out of date, and rebuilding it on a large tree
        # takes longer than the hook may. Answer from the old cache now (chunk text is read
        # from the files, so a changed chunk shows its new text) and rebuild in the background.
        if not cache_is_current(root):
            warm_in_background(root)
        cfg = dataclasses.replace(_config(), stale_cache_ok=True)
        return prompt_context(root, cfg, hook.prompt, tokens)

    _fail_open("prompt", limit, produce)


@hook_app.command("session-start")
def hook_session_start(timeout: TimeoutOpt = None, budget: BudgetOpt = None) -> None:
    """SessionStart: print `ncx wakeup` (what the project is, its knowledge map, key memories).

    Example: ncx agent-hook session-start < /dev/null
    """
    limit = _number(timeout, "NCX_HOOK_TIMEOUT", DEFAULT_TIMEOUT)
    tokens = int(_number(budget, "NCX_HOOK_BUDGET", DEFAULT_BUDGET))

    def produce() -> str:
        from ncx.agents.prompt_hook import parse_hook_input, session_context

        hook = parse_hook_input(_stdin())
        root = _hook_root(hook.cwd)
        from ncx.query.warming import warm_if_worth_it

        # The moment the agent gives: a stale cache (a pull since the last session) or a
        # missing or stale code index is built now, before the first prompt needs it.
        warm_if_worth_it(root)
        return session_context(root, _config(), tokens)

    _fail_open("session-start", limit, produce)


@hook_app.command("warm")
def hook_warm() -> None:
    """Build the search cache and the code index now (what a timed-out hook starts in the
    background)."""

    def produce() -> str:
        from ncx.code.index import load_code_index
        from ncx.query.cache import building, load_index

        root = _root()
        # another search-cache build under way: waiting for it would only pile up; the
        # code index has its own lock (one build at a time, the second loads the first's)
        if not building(root):
            load_index(root)
        load_code_index(root)
        return ""

    _fail_open("warm", 600.0, produce, warm=False, group=True)


@command(look=False)  # a server: the tree changes between its requests
def mcp(
    root: Annotated[
        Path | None,
        typer.Option("--root", help="The repository to serve [default: the one holding the cwd]."),
    ] = None,
) -> None:
    """Serve this repository's knowledge to an agent over MCP (stdio).

    Tools: assemble, retrieve, remember (a proposed memory), status. Needs the extra:
    pip install 'ncx[mcp]'. Example (.mcp.json): {"mcpServers": {"ncx": {"command": "ncx", "args": ["mcp"]}}}
    """
    try:
        import mcp  # noqa: F401  (the optional extra; heavy, so only here)
    except ImportError:
        _say("ncx: error: `ncx mcp` needs the MCP Python SDK, which is not installed")
        # the pip of the interpreter running ncx: the `pip` on PATH belongs to another
        # Python after the README's install (~/.ncx) or a pipx one
        _say(f"  hint: {shlex.join([sys.executable, '-m', 'pip', 'install', 'ncx[mcp]'])}")
        _say("  (an install made with pipx: pipx inject ncx mcp)")
        raise typer.Exit(code=1) from None
    from ncx.agents.mcp_server import build_server, serve_stdio
    from ncx.errors import NcxError
    from ncx.repo import find_root

    # Cursor expands ${workspaceFolder} in mcp.json; a client that does not passes it verbatim.
    where = root if root is not None and "${" not in str(root) else None
    # No repository to serve (a --root that is a typo or a moved checkout, a cwd outside any
    # repository): dying here shows the client only a closed pipe, so the server starts and
    # answers every tool with this error and how to point it at a repository (README).
    problem: NcxError | None = None
    fix = (
        "give the repository's path in the MCP config's \"--root\" argument"
        if where is not None
        else "start the MCP server inside the repository: set the server's cwd, or add "
        '"--root", "<repo path>" to its args in the MCP config'
    )
    try:
        if where is not None and not where.is_dir():
            raise NcxError("--root is not a folder", path=where)
        tree_root = find_root(where) if where is not None else _root()
    except NcxError as exc:
        problem = NcxError(exc.message, path=exc.path, hint=fix)
        tree_root = where or Path.cwd()
        _say(f"ncx: warning: {problem}\n  hint: {fix}")
    _say(f"ncx: MCP server for {tree_root} on stdio")
    serve_stdio(build_server(tree_root, _config(), problem=problem))
