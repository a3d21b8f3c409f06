"""How `ncx migrate` scales with the number of v2 learning entries (a linear-cost check).

Builds a v2 project in a temp dir whose one topic holds N verification notes (each becomes a
memory), runs `ncx migrate --dry-run` and `ncx migrate` (bundled model), and prints both times.
Usage: python benchmarks/migrate_scale.py [N ...]   (default: 1000 4000)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REGISTRY = """\
documents:
  - id: DOC-AUTH-001
    title: Auth
    path: docs/auth.md
    domain: AUTH
"""


def build(root: Path, n: int) -> None:
    notes = "".join(
        f'  - session: "2026-01-{1 + i % 28:02d}"\n'
        f'    caught: "Finding number {i} about token handling in service {i % 97}"\n'
        f'    lesson: "Lesson {i}: rotate key {i} before the window {i % 13} closes"\n'
        for i in range(n)
    )
    files = {
        ".mlda/registry.yaml": REGISTRY,
        ".mlda/docs/auth.md": "# Auth\n\nTokens are refreshed by the gateway.\n",
        ".mlda/topics/auth/learning.yaml": f"topic: auth\nversion: 1\nverification_notes:\n{notes}",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "commit", "-qm", "v2", "--no-verify"], check=True, env=env
    )


def timed(root: Path, *args: str) -> float:
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ncx", "migrate", *args], cwd=root, capture_output=True, text=True
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)
    return time.perf_counter() - t


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 4000]
    print("| entries | dry run s | migrate s | migrate s per 1,000 |\n|---|---|---|---|")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "proj"
            root.mkdir()
            build(root, n)
            dry = timed(root, "--dry-run")
            real = timed(root)
            print(f"| {n} | {dry:.1f} | {real:.1f} | {real / n * 1000:.2f} |", flush=True)


if __name__ == "__main__":
    main()
