"""Helpers shared by the benchmark scripts: temp git repos from data sets, timing, tables."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

# Timings are of ncx as a user's install runs it: with bytecode. `pip install` compiles every
# module it installs; a shell with PYTHONDONTWRITEBYTECODE set (this workplace's) left an
# editable checkout's every ncx process compiling its ~100 modules again, 0.1-0.2 s a process
# that no user pays (docs/decisions.md §103). So no process a benchmark starts inherits it:
# dropped here, before any script builds an environment from os.environ.
_BYTECODE_OFF = os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("NCX_SHARED", HERE.parent.parent / "shared"))
NCX = str(Path(sys.executable).parent / "ncx")
# Who commits in a benchmark's throwaway repos (no global git config is assumed).
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@x",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@x",
}
# `python -m ncx` from this checkout, committing as GIT_IDENTITY.
CHECKOUT_ENV = {**os.environ, "PYTHONPATH": str(HERE.parent), **GIT_IDENTITY}


def as_installed(python: str = sys.executable, checkout: Path | None = None) -> None:
    """Compile the ncx package `python` imports (from `checkout` when given: a benchmark
    that runs a checkout by PYTHONPATH), as `pip install` does (an installed wheel's is
    compiled already: nothing is written there), so the first timed process does not pay
    for it either (see _BYTECODE_OFF)."""
    env = {**os.environ, **({"PYTHONPATH": str(checkout)} if checkout else {})}
    where = subprocess.run(
        [python, "-c", "import ncx, os; print(os.path.dirname(ncx.__file__))"],
        capture_output=True,
        text=True,
        env=env,
    ).stdout.strip()
    if where:
        subprocess.run([python, "-m", "compileall", "-q", where], capture_output=True)


def data_path(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        sys.exit(f"benchmark data not found: {path} (set NCX_SHARED to the shared/ folder)")
    return path


def git_repo_from(corpus: Path, dest: Path | None = None) -> Path:
    """Copy a markdown tree into a fresh one-commit git repo; return its root."""
    root = dest or Path(tempfile.mkdtemp(prefix="ncx-bench-")) / "repo"
    shutil.copytree(corpus, root)
    env = {**os.environ, **GIT_IDENTITY}
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["commit", "-q", "--no-verify", "-m", "corpus"],
    ):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)
    return root


def run(
    cmd: Sequence[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | None = None,
) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    proc = subprocess.run(
        list(cmd),
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
    )
    return time.perf_counter() - t, proc


def median_time(cmd: Sequence[str], n: int = 10, **kw: object) -> float:
    times = []
    for _ in range(n):
        dt, proc = run(cmd, **kw)  # type: ignore[arg-type]
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr}")
        times.append(dt)
    return statistics.median(times)


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def table(rows: list[dict[str, object]]) -> str:
    if not rows:
        return ""
    cols = list(rows[0])
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(out)
