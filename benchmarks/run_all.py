"""Run every benchmark and write benchmarks/RESULTS.md (one command for every claim).

Usage: python benchmarks/run_all.py [--quick] [--bench-python PATH]
Data come from ../shared (override with NCX_SHARED); nothing is copied into the repo.
Each script prints its own markdown table; this collects them with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

SCRIPTS = [
    ("Retrieval quality (raydocs, harness)", "retrieval_bench.py", []),
    ("Sync on rust-lang/rfcs", "sync_bench.py", ["--runs", "10"]),
    ("Speed: cold assemble, warm retrieval, pre-commit hook", "speed_bench.py", ["--runs", "10"]),
    ("Memory retrieval (cisagov ADR memories)", "memory_bench.py", []),
    ("Agent prompt-submit hook latency", "hook_latency.py", []),
    ("Commits through pre-commit (rust-lang/rfcs)", "commit_hooks.py", ["--runs", "5"]),
    ("Token estimate calibration", "token_calibration.py", []),
    ("Model cold load", "model_load.py", ["--runs", "15"]),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="3 runs instead of 10 where it applies")
    ap.add_argument("--bench-python", default=os.environ.get("NCX_BENCH_PYTHON", sys.executable))
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = ap.parse_args()
    parts = [
        "# ncx benchmark results",
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average at start {os.getloadavg()[0]:.2f}.",
        "Times are medians of fresh processes unless a row says otherwise; floors are measured in the same run.",
        "",
    ]
    for title, script, extra in SCRIPTS:
        if not (HERE / script).exists():
            continue
        if args.quick:
            extra = [("3" if a == "10" else a) for a in extra]
        cmd = [sys.executable, str(HERE / script), *extra]
        if script == "retrieval_bench.py":
            cmd += ["--bench-python", args.bench_python]
        t = time.perf_counter()
        print(f"== {title}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE)
        took = time.perf_counter() - t
        parts += [
            f"## {title}",
            "",
            f"`python benchmarks/{script} {' '.join(extra)}` ({took:.0f} s)",
            "",
        ]
        parts.append(
            proc.stdout.strip()
            if proc.returncode == 0
            else f"FAILED ({proc.returncode}):\n\n```\n{proc.stderr[-1500:]}\n```"
        )
        parts.append("")
    Path(args.out).write_text("\n".join(parts) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
