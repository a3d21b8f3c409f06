"""The committed launcher (.neocortex/bin/ncx, templates/ncx-launcher.sh) under real `sh`,
real PATHs and temp folders (issue 36): which ncx it starts, how it fails, and how
`ncx init --agent` treats a launcher that is already there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, git, ncx, write

from ncx.agents.install import is_ncx_launcher, launcher_text, template_text

LAUNCHER = ".neocortex/bin/ncx"
BARE = "/usr/bin:/bin"  # a shell where no ncx is on PATH


def _put_launcher(root: Path, text: str | None = None) -> Path:
    path = root / LAUNCHER
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else launcher_text(), encoding="utf-8")
    path.chmod(0o755)
    return path


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A machine with no ncx anywhere the launcher looks (HOME empty, PATH bare)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NCX_", "PYTHON"))}
    return {**env, "HOME": str(home), "PATH": BARE, **extra}


def _run(argv: list[str], cwd: Path, env: dict[str, str], input: str = "{}") -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(
        argv, cwd=cwd, env=env, input=input, capture_output=True, text=True, timeout=120
    )


def _python3_wrapper(tmp_path: Path) -> Path:
    """A folder holding `python3`: this interpreter (so ncx's dependencies import)."""
    bin_ = tmp_path / "pybin"
    bin_.mkdir()
    (bin_ / "python3").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (bin_ / "python3").chmod(0o755)
    return bin_


# --- S4: the python3 fallback -----------------------------------------------------------------


def test_the_python_fallback_never_runs_the_repository_s_own_ncx(
    repo: Path, tmp_path: Path
) -> None:
    launcher = _put_launcher(repo)
    ran = tmp_path / "ran"
    write(repo, "ncx/__init__.py", "")
    write(repo, "ncx/__main__.py", f'open({str(ran)!r}, "w").write("x"); print("ncx 9.9")\n')
    write(repo, "runpy.py", f'open({str(ran)!r}, "w").write("runpy")\n')  # nor a stdlib shadow
    pybin = _python3_wrapper(tmp_path)
    # ncx importable from elsewhere (PYTHONPATH): that one runs
    env = _env(tmp_path, PATH=f"{pybin}:{BARE}", PYTHONPATH=str(REPO))
    out = _run([str(launcher), "--version"], repo, env)
    assert out.returncode == 0 and out.stdout.startswith("ncx 0."), out.stdout + out.stderr
    assert "9.9" not in out.stdout and not ran.exists()
    # the system's python3, where ncx is not installed: the repository's package is not run
    out = _run([LAUNCHER, "status"], repo, _env(tmp_path))
    assert "9.9" not in out.stdout and not ran.exists(), out.stdout + out.stderr


# --- U1: a wrong NCX_BIN, a missing launcher ----------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "folder", "not-executable"])
def test_a_wrong_ncx_bin_is_named_and_a_hook_exits_0(repo: Path, tmp_path: Path, kind: str) -> None:
    launcher = _put_launcher(repo)
    bad = tmp_path / "nosuch" / "ncx"
    if kind == "folder":
        bad = tmp_path
    elif kind == "not-executable":
        bad = tmp_path / "ncx"
        bad.write_text("#!/bin/sh\necho hi\n")
    env = _env(tmp_path, NCX_BIN=str(bad))
    hook = _run([str(launcher), "agent-hook", "prompt"], repo, env, '{"prompt": "x"}')
    assert hook.returncode == 0 and hook.stdout == ""
    assert f"NCX_BIN={bad} is not an executable" in hook.stderr
    plain = _run([str(launcher), "status"], repo, env)
    assert plain.returncode == 126 and f"NCX_BIN={bad} is not an executable" in plain.stderr


def _hook_commands() -> list[str]:
    settings = json.loads(template_text("claude-settings.json"))
    return [h["command"] for gs in settings["hooks"].values() for g in gs for h in g["hooks"]]


def test_hooks_exit_0_where_the_launcher_is_missing(repo: Path, tmp_path: Path) -> None:
    """Hooks installed globally meeting a repository without ncx, or a branch from before it."""
    commands = _hook_commands()
    assert len(commands) == 2
    for command in commands:
        for project in ({"CLAUDE_PROJECT_DIR": str(repo)}, {}):
            ran = _run(["sh", "-c", command], repo, _env(tmp_path, **project))
            assert ran.returncode == 0 and ran.stdout == "" and ran.stderr == "", ran.stderr


def test_hook_commands_run_the_launcher_where_it_is(repo: Path, tmp_path: Path) -> None:
    launcher = _put_launcher(repo)
    launcher.write_text('#!/bin/sh\necho "ran $*"\nexit 3\n')  # a stand-in that fails
    for command in _hook_commands():
        ran = _run(["sh", "-c", command], repo, _env(tmp_path, CLAUDE_PROJECT_DIR=str(repo)))
        assert ran.returncode == 0 and ran.stdout.startswith("ran agent-hook "), ran.stderr


# --- item 7: the installing ncx, remembered per clone -------------------------------------------


def _console_script(folder: Path) -> Path:
    """An `ncx` console script as pip writes one (this checkout's ncx), in a venv-like folder
    that is not on PATH."""
    folder.mkdir(parents=True)
    script = folder / "ncx"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(REPO)!r})\n"
        "from ncx.cli.entry import main\nmain()\n"
    )
    script.chmod(0o755)
    return script


def test_init_remembers_the_installing_ncx_for_the_launcher(repo: Path, tmp_path: Path) -> None:
    write(repo, "README.md", "# Shop\n\nAn online shop backend.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "readme")
    script = _console_script(tmp_path / "project-venv" / "bin")
    env = _env(tmp_path, NCX_EMBEDDING_MODEL=os.environ["NCX_EMBEDDING_MODEL"])
    out = _run([str(script), "init", "--agent", "claude"], repo, env)
    assert out.returncode == 0, out.stderr
    assert git(repo, "config", "--local", "--get", "ncx.bin").strip() == str(script.resolve())
    assert git(repo, "ls-files", "--others", "--exclude-standard").count("config") == 0
    # the check init runs found it (before: "found no ncx on this machine")
    assert f"checked: `{LAUNCHER} --version` -> ncx " in out.stderr, out.stderr
    # the hooks start it, from any folder, with ncx nowhere on PATH
    command = next(c for c in _hook_commands() if "session-start" in c)
    ran = _run(["sh", "-c", command], repo / ".neocortex", {**env, "CLAUDE_PROJECT_DIR": str(repo)})
    assert ran.returncode == 0 and "ncx wakeup" in ran.stdout, ran.stderr
    # NCX_BIN still comes first; a remembered ncx that is gone is passed over
    other = _console_script(tmp_path / "other" / "bin")
    ver = _run([LAUNCHER, "--version"], repo, {**env, "NCX_BIN": str(other)})
    assert ver.returncode == 0 and ver.stdout.startswith("ncx ")
    script.unlink()
    gone = _run([LAUNCHER, "status"], repo, env)
    assert gone.returncode == 127 and "ncx is not installed" in gone.stderr


def test_ncx_run_in_process_or_as_a_module_records_nothing(repo: Path) -> None:
    ncx("init")
    asked = subprocess.run(
        ["git", "-C", str(repo), "config", "--local", "--get-all", "ncx.bin"], capture_output=True
    )
    assert asked.returncode == 1 and asked.stdout == b""


# --- L1: an edited launcher is kept -------------------------------------------------------------


def test_an_edited_launcher_is_kept_and_said_force_replaces_it(repo: Path) -> None:
    ncx("init", "--agent", "claude")
    launcher = repo / LAUNCHER
    assert is_ncx_launcher(launcher.read_text())
    edited = launcher.read_text().replace(
        "export NCX_LAUNCHER\n", "export NCX_LAUNCHER\numask 077\n"
    )
    launcher.write_text(edited)
    again = ncx("init", "--agent", "claude")
    assert f"kept {LAUNCHER}: it is not a copy ncx wrote" in again.stderr
    assert launcher.read_text() == edited
    diff = ncx("init", "--agent", "claude", "--dry-run", "--force")
    assert "-umask 077" in diff.stdout and launcher.read_text() == edited
    ncx("init", "--agent", "claude", "--force")
    assert launcher.read_text() == launcher_text()


def test_a_launcher_an_older_ncx_wrote_is_updated_without_a_word(repo: Path) -> None:
    ncx("init", "--agent", "claude")
    launcher = repo / LAUNCHER
    # a copy written by an ncx whose template differed: its digest line still matches
    body = launcher_text().rpartition("# ncx init --agent wrote")[0].replace("stop 127", "exit 127")
    import hashlib

    older = body + (
        "# ncx init --agent wrote this launcher; sha256 of the lines above: "
        + hashlib.sha256(body.encode()).hexdigest()
        + "\n"
    )
    assert is_ncx_launcher(older) and older != launcher_text()
    launcher.write_text(older)
    out = ncx("init", "--agent", "claude")
    assert "kept" not in out.stderr and launcher.read_text() == launcher_text()
    # the first launcher ncx shipped, before the digest line
    first = subprocess.run(
        ["git", "-C", str(REPO), "show", "146323a:templates/ncx-launcher.sh"],
        capture_output=True,
        text=True,
    )
    if first.returncode != 0:
        pytest.skip("no git history of the checkout here")
    assert is_ncx_launcher(first.stdout)
    assert is_ncx_launcher(first.stdout.replace("\n", "\r\n"))  # checked out with autocrlf
