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
