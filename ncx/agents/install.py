"""agents: install ncx into coding agents' files — protocol blocks, hooks, MCP server config.

`plan_install` reads the files and returns the changes (before/after text) without writing;
`apply_plan` writes them. Text files get a marker block replaced in place (the user's lines
around it are kept byte for byte); JSON settings are merged structurally, replacing only
ncx's own entries. The templates ship in the package (templates/).
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ncx.errors import NcxError, UsageError
from ncx.sources import AGENT_BLOCK_END, AGENT_BLOCK_START

AGENTS = ("claude", "cursor", "codex")
MD_START, MD_END = AGENT_BLOCK_START, AGENT_BLOCK_END  # one home: the readers skip this block
TOML_START, TOML_END = "# >>> ncx >>>", "# <<< ncx <<<"
_OWN_TOML_TABLE = re.compile(r'^\s*\[\s*mcp_servers\s*\.\s*(ncx|"ncx")\s*\]', re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Change:
    path: str  # repo-relative, posix
    before: str | None  # None: the file does not exist yet
    after: str


@dataclass(frozen=True, slots=True)
class Plan:
    changes: tuple[Change, ...]  # only files whose text changes
    notes: tuple[str, ...]  # what the user should know (said on stderr)


class BadAgentFile(NcxError):
    """An agent file ncx must update cannot be parsed; ncx leaves it alone."""


def template_text(name: str) -> str:
    """A file of the repository's templates/ folder, e.g. 'agents-block.md': installed as the
    package ncx.agents.templates, or read from the source checkout that ncx runs from."""
    from importlib.resources import files

    try:
        folder: Any = files("ncx.agents.templates")
    except ModuleNotFoundError:  # running from a checkout: the package is templates/ itself
        folder = Path(__file__).resolve().parents[2] / "templates"
    return str((folder / name).read_text(encoding="utf-8"))


def resolve_agents(names: Sequence[str]) -> tuple[str, ...]:
    """['all'] -> every agent; unknown names are a usage error. Order: AGENTS order."""
    wanted = {n.strip().lower() for name in names for n in name.split(",") if n.strip()}
    unknown = sorted(wanted - {*AGENTS, "all"})
    if unknown:
        raise UsageError(
            f"unknown agent {unknown[0]!r}", hint=f"use one of {', '.join(AGENTS)} or all"
        )
    return AGENTS if "all" in wanted else tuple(a for a in AGENTS if a in wanted)


WORKFLOWS = ("ncx-review.yml", "ncx-review-comment.yml")


def ncx_command() -> list[str]:
    """How an agent should start this ncx, whatever the install.

    `ncx` when that name on PATH is the ncx running now (portable across machines), else
    the absolute path of the running console script (a venv not on PATH), else this
    interpreter with `-m ncx`. Agents start hooks and MCP servers from their own
    environment, where a bare name that fails here fails there too.
    """
    running = Path(sys.argv[0]) if sys.argv and Path(sys.argv[0]).name == "ncx" else None
    on_path = shutil.which("ncx")
    if on_path and (running is None or _same_file(Path(on_path), running)):
        return ["ncx"]
    if running is not None and running.is_file():
        return [str(running.resolve())]
    return [sys.executable, "-m", "ncx"]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or a.samefile(b)
    except OSError:
        return False


def verify_command(command: Sequence[str]) -> tuple[bool, str]:
    """Run `COMMAND --version` as an agent would; (worked, what it printed or why not)."""
    import subprocess

    try:
        proc = subprocess.run(
            [*command, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    out = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    return proc.returncode == 0, out[-1] if out else f"exit {proc.returncode}"


def imports_agents_md(text: str | None) -> bool:
    """CLAUDE.md that pulls in AGENTS.md (`@AGENTS.md` on a line): Claude reads both."""
    return text is not None and any(ln.strip() == "@AGENTS.md" for ln in text.splitlines())


def plan_install(
    root: Path,
    agents: Sequence[str],
    *,
    workflow: bool = False,
    command: Sequence[str] = ("ncx",),
) -> Plan:
    """Every file change installing `agents` needs; reads files, writes nothing.

    `command` starts ncx in the files written (see ncx_command)."""
    changes: list[Change] = []
    notes: list[str] = []
    block = template_text("agents-block.md")
    cmd = list(command)
    mcp = _with_command(json.loads(template_text("mcp.json")), cmd)

    def add(rel: str, make: Any) -> None:
        before = _read(root, rel)
        after = make(before)
        if after is not None and after != before:
            changes.append(Change(rel, before, after))

    if "claude" in agents:
        claude_md = _read(root, "CLAUDE.md")
        # one block where Claude reads it: in AGENTS.md when CLAUDE.md imports that file
        if imports_agents_md(claude_md) and MD_START not in (claude_md or ""):
            if "codex" not in agents:
                add(
                    "AGENTS.md",
                    lambda t: put_block(t or "", block, MD_START, MD_END, rel="AGENTS.md"),
                )
            notes.append("CLAUDE.md imports AGENTS.md (@AGENTS.md): the ncx block went there, once")
        else:
            add("CLAUDE.md", lambda t: put_block(t or "", block, MD_START, MD_END, rel="CLAUDE.md"))
        add(
            ".claude/settings.json",
            lambda t: _merge_file(t, ".claude/settings.json", lambda d: _hooks(d, cmd)),
        )
        add(".mcp.json", lambda t: _merge_file(t, ".mcp.json", lambda d: merge_mcp(d, mcp)))
    if "cursor" in agents:
        rule = template_text("cursor-rule.mdc")
        add(
            ".cursor/rules/ncx.mdc",
            lambda t: rule if t is None else put_block(t, block, MD_START, MD_END, rel="ncx.mdc"),
        )
        cursor_mcp = _with_command(json.loads(template_text("cursor-mcp.json")), cmd)
        add(
            ".cursor/mcp.json",
            lambda t: _merge_file(t, ".cursor/mcp.json", lambda d: merge_mcp(d, cursor_mcp)),
        )
    if "codex" in agents:
        add("AGENTS.md", lambda t: put_block(t or "", block, MD_START, MD_END, rel="AGENTS.md"))
        toml = template_text("codex-config.toml").replace(
            'command = "ncx"\nargs = [',
            f"command = {json.dumps(cmd[0])}\nargs = ["
            + "".join(f"{json.dumps(a)}, " for a in cmd[1:]),
        )
        rel = ".codex/config.toml"
        current = _read(root, rel) or ""
        if _OWN_TOML_TABLE.search(_outside_block(current, TOML_START, TOML_END)):
            notes.append(f"{rel} already defines [mcp_servers.ncx]; left as it is")
        else:
            add(rel, lambda t: put_block(t or "", toml, TOML_START, TOML_END, rel=rel))
        if any(c.path == rel for c in changes):
            notes.append(
                f"Codex reads {rel} only in a trusted project; to use ncx in every project, "
                "add the [mcp_servers.ncx] lines of that block to ~/.codex/config.toml"
            )
    # the PR review: a read-only pull_request workflow and the workflow_run one that comments
    for name in WORKFLOWS if workflow else ():
        rel = f".github/workflows/{name}"
        wf = template_text(f"github/{name}")
        current_wf = _read(root, rel)
        if current_wf is None:
            changes.append(Change(rel, None, wf))
        elif current_wf != wf:
            notes.append(f"{rel} differs from ncx's template; left as it is")
    if agents and cmd != ["ncx"]:
        where = "is not on PATH here" if shutil.which("ncx") is None else "on PATH is another ncx"
        notes.append(f"`ncx` {where}; the agents' files start this one: {shlex.join(cmd)}")
    return Plan(tuple(changes), tuple(notes))


def apply_plan(root: Path, plan: Plan) -> list[str]:
    """Write the planned files (atomically); return their repo-relative paths."""
    from ncx.store import write_if_changed

    return [c.path for c in plan.changes if write_if_changed(root / c.path, c.after.encode())]


def diff_text(change: Change) -> str:
    """A unified diff of one change (for --dry-run)."""
    before = (change.before or "").splitlines(keepends=True)
    after = change.after.splitlines(keepends=True)
    old = "/dev/null" if change.before is None else f"a/{change.path}"
    lines = difflib.unified_diff(before, after, old, f"b/{change.path}")
    return "".join(
        ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines
    )


# --- text blocks ---------------------------------------------------------------------------


def put_block(text: str, block: str, start: str, end: str, *, rel: str) -> str:
    """`text` with ncx's block inserted (at the end) or replaced in place; newline style kept."""
    from ncx.tree.init import with_block

    lines = [ln.rstrip("\r\n") for ln in text.splitlines()]
    starts = [i for i, ln in enumerate(lines) if ln == start]
    ends = [i for i, ln in enumerate(lines) if ln == end]
    # Trigger: a hand edit lost a marker. Why: replacing up to a guessed end could eat the
    # user's text, appending would duplicate the block. Outcome: refuse, name the fix.
    if len(starts) != len(ends) or len(starts) > 1 or (starts and starts[0] > ends[0]):
        raise BadAgentFile(
            f"the ncx block markers are broken ({len(starts)} start, {len(ends)} end)",
            path=rel,
            hint=f"keep exactly one `{start}` … `{end}` pair (or delete both), then re-run",
        )
    if "\r\n" in text:
        block = block.replace("\r\n", "\n").replace("\n", "\r\n")
    return with_block(text, block)


def _outside_block(text: str, start: str, end: str) -> str:
    lines = text.splitlines(keepends=True)
    out, inside = [], False
    for ln in lines:
        key = ln.rstrip("\r\n")
        if key == start:
            inside = True
        if not inside:
            out.append(ln)
        if key == end:
            inside = False
    return "".join(out)


# --- JSON settings --------------------------------------------------------------------------


def _read(root: Path, rel: str) -> str | None:
    from ncx.paths import check_real_folders, read_problem

    path = root / rel
    # Every file read here may be written: a linked .claude/, .codex/, .cursor/ or .github/
    # would carry the write out of the repository (or into .git/).
    check_real_folders(
        root, rel, hint="replace the symlink with a real folder inside the repository, then re-run"
    )
    # A linked CLAUDE.md (or .claude/ folder) could point outside the repository: its text
    # would be read into the plan and the merged file written over the link's target.
    bad = read_problem(root, rel)
    if bad is not None or (path.is_symlink() and not path.exists()):
        raise BadAgentFile(
            bad or "is a dangling symlink",
            path=rel,
            hint="replace the link with a regular file, then re-run",
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BadAgentFile(f"cannot read: {exc.strerror}", path=path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadAgentFile("is not UTF-8 text", path=path, hint="save it as UTF-8") from None


def _merge_file(text: str | None, rel: str, merge: Any) -> str | None:
    """The merged JSON text, or None when the merge changes nothing (the file is not
    reformatted just because ncx looked at it)."""
    data: dict[str, Any] = {}
    if text is not None and text.strip():
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadAgentFile(
                f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
                path=rel,
                hint="fix the JSON (comments and trailing commas are not allowed), then re-run",
            ) from None
        if not isinstance(data, dict):
            raise BadAgentFile("must hold a JSON object", path=rel)
    merged = merge(data)
    if text is not None and merged == data:
        return None
    return json.dumps(merged, indent=2, ensure_ascii=False) + "\n"


def _hooks(settings: dict[str, Any], cmd: list[str]) -> dict[str, Any]:
    ours = json.loads(template_text("claude-settings.json"))
    if cmd != ["ncx"]:
        prefix = shlex.join(cmd)
        ours["hooks"] = {e: [_with_exe(g, prefix) for g in gs] for e, gs in ours["hooks"].items()}
    return merge_hooks(settings, ours)


def _with_command(config: dict[str, Any], cmd: list[str]) -> dict[str, Any]:
    """An mcpServers template whose ncx entry starts `cmd` instead of bare `ncx`."""
    entry = config["mcpServers"]["ncx"]
    entry["command"], entry["args"] = cmd[0], [*cmd[1:], *entry["args"]]
    return config


def _ncx_exe(command: Any, *, subcommand: str | None = None) -> str | None:
    """The executable of an ncx command line (`/x/bin/ncx agent-hook prompt` -> '/x/bin/ncx')."""
    if not isinstance(command, str):
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if argv and Path(argv[0]).name == "ncx":
        n = 1
    elif len(argv) >= 3 and argv[1:3] == ["-m", "ncx"]:
        n = 3  # an interpreter running ncx as a module
    else:
        return None
    if subcommand is not None and argv[n : n + 1] != [subcommand]:
        return None
    return shlex.join(argv[:n])


def _is_ours(hook: Any) -> bool:
    return (
        isinstance(hook, dict)
        and _ncx_exe(hook.get("command"), subcommand="agent-hook") is not None
    )


def merge_hooks(settings: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """Claude Code settings with ncx's hook groups in place of any earlier ncx hooks.

    The user's keys, other hooks and their order are kept; ncx's group goes where its
    previous one was (else last), so re-running changes nothing. An ncx command the user
    pointed at another executable (`/home/me/.ncx/bin/ncx ...`) keeps that executable.
    """
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise BadAgentFile('"hooks" must be a JSON object', path=".claude/settings.json")
    merged_hooks = dict(hooks)
    for event, our_groups in ours["hooks"].items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise BadAgentFile(f'"hooks.{event}" must be a list', path=".claude/settings.json")
        kept: list[Any] = []
        at: int | None = None
        exe: str | None = None
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(_is_ours(h) for h in inner):
                at = len(kept) if at is None else at
                exe = exe or next(_kept_exe(h["command"]) for h in inner if _is_ours(h))
                rest = [h for h in inner if not _is_ours(h)]
                if rest:
                    kept.append({**group, "hooks": rest})
                continue
            kept.append(group)
        fresh = [_with_exe(g, exe) for g in our_groups]
        at = len(kept) if at is None else at
        merged_hooks[event] = kept[:at] + fresh + kept[at:]
    return {**settings, "hooks": merged_hooks}


def _with_exe(group: dict[str, Any], exe: str | None) -> dict[str, Any]:
    """`group` with its commands started by `exe` (a shell-quoted command prefix)."""
    if not exe or exe == "ncx":
        return group
    hooks = []
    for h in group["hooks"]:
        argv = shlex.split(h["command"])
        rest = argv[len(shlex.split(_ncx_exe(h["command"]) or "ncx")) :]
        hooks.append({**h, "command": exe + " " + shlex.join(rest)})
    return {**group, "hooks": hooks}


def merge_mcp(config: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """An MCP client config (`mcpServers`) with ncx's server entry set; other servers kept.

    The user's extra keys on the ncx entry (env, ...) and an ncx executable they pointed
    elsewhere are kept.
    """
    servers = config.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise BadAgentFile('"mcpServers" must be a JSON object')
    entry = dict(ours["mcpServers"]["ncx"])
    old = servers.get("ncx")
    if isinstance(old, dict):
        args = old.get("args")
        old_args: list[Any] = args if isinstance(args, list) else []
        exe = _kept_exe(_argv_text([old.get("command"), *old_args]))
        entry = {**old, **entry}
        if exe:  # the user's own ncx executable: keep it
            argv = [entry["command"], *entry["args"]]
            rest = argv[len(shlex.split(_ncx_exe(_argv_text(argv)) or "ncx")) :]
            prefix = shlex.split(exe)
            entry["command"], entry["args"] = prefix[0], [*prefix[1:], *rest]
    return {**config, "mcpServers": {**servers, "ncx": entry}}


def _argv_text(argv: list[Any]) -> str | None:
    return shlex.join(argv) if argv and all(isinstance(a, str) for a in argv) else None


def _kept_exe(command: str | None) -> str | None:
    """The ncx command prefix of an existing entry when it names an executable (an install
    the user chose); a bare `ncx` is re-derived (see ncx_command)."""
    exe = _ncx_exe(command)
    return None if not exe or exe == "ncx" else exe
