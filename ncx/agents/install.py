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

# every agent file starts ncx through the committed launcher: no machine's path in them
from ncx.layout import LAUNCHER
from ncx.markers import END, START
from ncx.sources import AGENT_BLOCK_END, AGENT_BLOCK_START

AGENTS = ("claude", "cursor", "codex")
MD_START, MD_END = AGENT_BLOCK_START, AGENT_BLOCK_END  # one home: the readers skip this block
TOML_START, TOML_END = START, END  # one home: ncx.markers
# Python 3.10 has no tomllib: there, a definition of the ncx server in any TOML form it can
# take (a table, a dotted key, an inline table inside [mcp_servers]) is found by its shape.
_OWN_TOML_SHAPES = re.compile(
    r'^\s*(?:\[\s*mcp_servers\s*\.\s*"?ncx"?\s*[\].]'
    r'|mcp_servers\s*\.\s*"?ncx"?\s*[.=]'
    r"|mcp_servers\s*=\s*\{.*\bncx\s*="
    r'|"?ncx"?\s*=\s*\{)',
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class Change:
    path: str  # repo-relative, posix
    before: str | None  # None: the file does not exist yet
    after: str
    executable: bool = False  # the launcher: written with its x bits


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

# The launcher's last line: the digest of the lines above it, so that `ncx init --agent` tells
# a copy it wrote (any version: replaced by the current one) from one a teammate edited (kept,
# and said: a committed tweak is not lost without a word).
_DIGEST_LINE = "# ncx init --agent wrote this launcher; sha256 of the lines above: "
# the launcher ncx wrote before it carried a digest (its sha256, whole text)
_FIRST_LAUNCHERS = frozenset({"d581258bbf1a590676c89d15ad3466f438043d3650f76f4c6c7a7481c00bfdd5"})


def _sha256(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def launcher_text() -> str:
    """templates/ncx-launcher.sh with its digest line."""
    body = template_text("ncx-launcher.sh")
    return f"{body}{_DIGEST_LINE}{_sha256(body)}\n"


def is_ncx_launcher(text: str) -> bool:
    """Whether `text` is a launcher as some ncx wrote it (not edited since)."""
    text = text.replace("\r\n", "\n")  # a checkout with autocrlf: the same launcher
    if _sha256(text) in _FIRST_LAUNCHERS:
        return True
    body, _, last = text.rstrip("\n").rpartition("\n")
    return last.startswith(_DIGEST_LINE) and last[len(_DIGEST_LINE) :] == _sha256(body + "\n")


def installing_ncx() -> Path | None:
    """The ncx console script running now (`.venv/bin/ncx init`), or None (`python -m ncx`,
    ncx called in process): what this clone's launcher should start on this machine."""
    if not sys.argv or Path(sys.argv[0]).name != "ncx":
        return None
    running = Path(sys.argv[0])
    return running.resolve() if running.is_file() else None


def remember_ncx(root: Path) -> str | None:
    """Record the running ncx in this clone's own git config (`ncx.bin`, never committed):
    the launcher's first choice after NCX_BIN, so hooks that an ncx installed off PATH (a
    project's venv) wrote start that ncx on this machine. Returns the path recorded, if any."""
    from ncx import repo

    exe = installing_ncx()
    if exe is None:
        return None
    try:
        have = repo.git(root, "config", "--local", "--get", "ncx.bin", check=False)
        if have.decode("utf-8", "replace").strip() != str(exe):
            repo.git(root, "config", "--local", "ncx.bin", str(exe))
    except (NcxError, OSError):
        return None  # a read-only .git: the launcher then looks on PATH, as without it
    return str(exe)


def ncx_command() -> list[str]:
    """The running ncx as a command: what NCX_BIN should name when the launcher finds no
    ncx on this machine. Its console script (when that is what runs), else this
    interpreter with `-m ncx`."""
    running = Path(sys.argv[0]) if sys.argv and Path(sys.argv[0]).name == "ncx" else None
    on_path = shutil.which("ncx")
    if on_path and (running is None or _same_file(Path(on_path), running)):
        return [str(Path(on_path).resolve())]
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
    root: Path, agents: Sequence[str], *, workflow: bool = False, force: bool = False
) -> Plan:
    """Every file change installing `agents` needs; reads files, writes nothing.

    Every file starts ncx through the committed launcher (LAUNCHER), never through a path
    of this machine. A launcher edited by hand is kept (and said) unless `force`."""
    changes: list[Change] = []
    notes: list[str] = []
    block = template_text("agents-block.md")
    mcp = json.loads(template_text("mcp.json"))

    def add(rel: str, make: Any, *, executable: bool = False) -> None:
        before = _read(root, rel)
        after = make(before)
        if after is not None and after != before:
            changes.append(Change(rel, before, after, executable))

    if agents:
        current_launcher = _read(root, LAUNCHER)
        if current_launcher is None or force or is_ncx_launcher(current_launcher):
            add(LAUNCHER, lambda t: launcher_text(), executable=True)
        elif current_launcher != launcher_text():
            notes.append(
                f"kept {LAUNCHER}: it is not a copy ncx wrote (edited by hand?); "
                "`--dry-run --force` shows ncx's version as a diff, `--force` writes it"
            )
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
            lambda t: _merge_file(
                t,
                ".claude/settings.json",
                lambda d: merge_hooks(d, json.loads(template_text("claude-settings.json"))),
            ),
        )
        add(".mcp.json", lambda t: _merge_file(t, ".mcp.json", lambda d: merge_mcp(d, mcp)))
    if "cursor" in agents:
        rule = template_text("cursor-rule.mdc")
        add(
            ".cursor/rules/ncx.mdc",
            lambda t: rule if t is None else put_block(t, block, MD_START, MD_END, rel="ncx.mdc"),
        )
        cursor_mcp = json.loads(template_text("cursor-mcp.json"))
        add(
            ".cursor/mcp.json",
            lambda t: _merge_file(t, ".cursor/mcp.json", lambda d: merge_mcp(d, cursor_mcp)),
        )
    if "codex" in agents:
        add("AGENTS.md", lambda t: put_block(t or "", block, MD_START, MD_END, rel="AGENTS.md"))
        rel = ".codex/config.toml"
        current = _read(root, rel)
        toml = template_text("codex-config.toml")
        if current is not None and _defines_ncx_server(current, rel):
            notes.append(f"{rel} already defines the MCP server ncx; left as it is")
        else:
            add(rel, lambda t: _codex_config(t or "", toml, rel))
        if any(c.path == rel for c in changes):
            notes.append(
                f"Codex reads {rel} only in a trusted project; to use ncx in every project, "
                "add the [mcp_servers.ncx] lines of that block to ~/.codex/config.toml, with "
                "the launcher's absolute path as the command"
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
    return Plan(tuple(changes), tuple(notes))


# --- .codex/config.toml ---------------------------------------------------------------------


def _toml(text: str, rel: str) -> dict[str, Any] | None:
    """`text` parsed (None where this Python has no TOML reader); a file that does not parse
    is refused: appended to, it would stay broken and Codex would lose its whole config."""
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError:  # Python 3.10
        return None
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadAgentFile(
            f"is not valid TOML ({exc})",
            path=rel,
            hint="fix the TOML (Codex cannot read it either), then re-run",
        ) from None
    return data


def _defines_ncx_server(text: str, rel: str) -> bool:
    """Whether the user's part of the config (outside ncx's block) defines mcp_servers.ncx,
    in whatever TOML form: a table, a dotted key, an inline table."""
    _toml(text, rel)  # the whole file must parse
    outside = _outside_block(text, TOML_START, TOML_END)
    try:
        data = _toml(outside, rel)
    except BadAgentFile:
        return False  # only with ncx's block does it parse: the block is what defines it
    if data is None:
        return _OWN_TOML_SHAPES.search(outside) is not None
    servers = data.get("mcp_servers")
    return isinstance(servers, dict) and "ncx" in servers


def _codex_config(text: str, block: str, rel: str) -> str:
    after = put_block(text, block, TOML_START, TOML_END, rel=rel)
    try:
        _toml(after, rel)
    except BadAgentFile:
        # e.g. `mcp_servers = { other = {...} }`: a [mcp_servers.ncx] table cannot extend an
        # inline table. Said, never written.
        raise BadAgentFile(
            "defines [mcp_servers] in a form ncx's [mcp_servers.ncx] table cannot be added to",
            path=rel,
            hint=f'add `ncx = {{ command = "{LAUNCHER}", args = ["mcp"] }}` to your '
            "mcp_servers by hand",
        ) from None
    return after


def apply_plan(root: Path, plan: Plan) -> list[str]:
    """Write the planned files (atomically); return their repo-relative paths."""
    import os
    import stat

    from ncx.store import write_if_changed

    written = [
        c.path
        for c in plan.changes
        if write_if_changed(root / c.path, c.after.encode(), mode=0o777 if c.executable else 0o666)
    ]
    launcher = root / LAUNCHER
    if launcher.is_file() and os.name != "nt":
        # a launcher that lost its x bits (a copy, an archive) cannot start: given back
        mode = stat.S_IMODE(launcher.stat().st_mode)
        want = mode | (mode & 0o444) >> 2  # executable by whoever may read it
        if want != mode:
            launcher.chmod(want)
    return written


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


def _ncx_exe(command: Any, *, subcommand: str | None = None) -> str | None:
    """The executable of an ncx command line (`/x/bin/ncx agent-hook prompt` -> '/x/bin/ncx',
    the launcher's `"${CLAUDE_PROJECT_DIR:-.}"/.neocortex/bin/ncx` too)."""
    if not isinstance(command, str):
        return None
    try:
        argv = _unguarded(shlex.split(command))
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


def _unguarded(argv: list[str]) -> list[str]:
    """`[ -x L ] && L ARGS || true` (ncx's hook commands: where the launcher is missing, a
    checkout of a branch without ncx, the hook does nothing and exits 0) -> `L ARGS`."""
    if len(argv) > 5 and argv[:2] == ["[", "-x"] and argv[3:5] == ["]", "&&"]:
        argv = argv[5:]
        if argv[-2:] == ["||", "true"]:
            argv = argv[:-2]
    return argv


def _is_ours(hook: Any) -> bool:
    return (
        isinstance(hook, dict)
        and _ncx_exe(hook.get("command"), subcommand="agent-hook") is not None
    )


def merge_hooks(settings: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """Claude Code settings with ncx's hook groups in place of any earlier ncx hooks.

    The user's keys, other hooks and their order are kept; ncx's group goes where its
    previous one was (else last), so re-running changes nothing. An earlier ncx hook that
    named an executable (`/home/me/.ncx/bin/ncx agent-hook prompt`, what ncx wrote before
    the launcher) is replaced too: a machine's path in a committed file fails on every other
    machine; a machine's own choice of ncx goes in NCX_BIN, which the launcher reads.
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
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(_is_ours(h) for h in inner):
                at = len(kept) if at is None else at
                rest = [h for h in inner if not _is_ours(h)]
                if rest:
                    kept.append({**group, "hooks": rest})
                continue
            kept.append(group)
        at = len(kept) if at is None else at
        merged_hooks[event] = kept[:at] + list(our_groups) + kept[at:]
    return {**settings, "hooks": merged_hooks}


def merge_mcp(config: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """An MCP client config (`mcpServers`) with ncx's server entry set; other servers kept.

    The user's extra keys on the ncx entry (env, ...) are kept; its command and args are
    ncx's (the launcher: see merge_hooks for why not a machine's path).
    """
    servers = config.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise BadAgentFile('"mcpServers" must be a JSON object')
    entry = dict(ours["mcpServers"]["ncx"])
    old = servers.get("ncx")
    if isinstance(old, dict):
        entry = {**old, **entry}
    return {**config, "mcpServers": {**servers, "ncx": entry}}
