"""Code tasks through the CLI a user runs: ../shared/bench/code_tasks.py on every code-* set.

For each set: `ncx retrieve --kind code --json` (file recall@1/5/10, MRR, tokens) and
`ncx assemble --format json` at a budget (the frame's file recall and tokens), beside BM25
over whole files and BM25 40-line chunks packed to the same budget, in the same run.

    python benchmarks/code_bench.py --bench-python /path/to/bench-venv/bin/python \\
        [--sets code-requests,...] [--budget 2500] [--out benchmarks/results/code_tasks.md]

`ncx` is this checkout (a wrapper on PATH runs `python -m ncx` with it first on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NCX_SHARED", ROOT.parent / "shared"))
SETS = ("code-requests", "code-rich", "code-starlette", "code-neuralmind-public")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench-python", default=os.environ.get("NCX_BENCH_PYTHON", "python3"))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--budget", type=int, default=2500)
    ap.add_argument("--neuralmind-budget", type=int, default=1000)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    bindir = Path(tempfile.mkdtemp(prefix="ncx-bin-"))
    wrapper = bindir / "ncx"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m ncx "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    out = []
    for name in a.sets.split(","):
        budget = a.neuralmind_budget if name == "code-neuralmind-public" else a.budget
        cmd = [
            a.bench_python,
            str(SHARED / "bench" / "code_tasks.py"),
            "run",
            "--data-dir",
            str(SHARED / "bench-data"),
            "--dataset",
            name,
            "--index-cmd",
            "ncx init >/dev/null 2>&1 && ncx sync >/dev/null 2>&1",
            "--query-cmd",
            "ncx retrieve --kind code --json --k 10 {task}",
            "--frame-cmd",
            "ncx assemble --task-file {task_file} --budget {budget} --format json",
            "--budget",
            str(budget),
        ]
        got = subprocess.run(cmd, env=env, capture_output=True, text=True)
        print(got.stdout, flush=True)
        if got.returncode:
            print(got.stderr[-3000:], file=sys.stderr)
        out.append(got.stdout)
    if a.out:
        a.out.write_text("\n".join(out))


if __name__ == "__main__":
    main()
