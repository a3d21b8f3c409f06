"""Speed on the rust-lang/rfcs tree: cold assemble, warm batch retrieval, pre-commit hook.

Usage: python benchmarks/speed_bench.py [--runs 10]
Every number is a median over fresh processes (or, for warm retrieval, over queries in one
batch process), printed beside floors measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from common import (
    GIT_IDENTITY,
    NCX,
    as_installed,
    data_path,
    git_repo_from,
    median_time,
    run,
    table,
)

TASKS = [
    "make the borrow checker accept two-phase borrows for method calls",
    "add async closures that can borrow from their captures",
    "change how editions reserve new keywords",
]


def pre_commit_config(root: Path, entry: str) -> None:
    (root / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n"
        f"  - id: h\n    name: h\n    entry: {entry}\n    language: system\n"
        "    pass_filenames: false\n    always_run: true\n    require_serial: true\n"
    )


def hook_time(root: Path, runs: int, prepare: object) -> float:
    """Median of `pre-commit run` with a fresh staged change prepared before each run."""
    times = []
    pc = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or "pre-commit"
    for i in range(runs):
        prepare(i)  # type: ignore[operator]
        dt, _ = run([pc, "run", "--hook-stage", "pre-commit"], cwd=root)
        times.append(dt)
        subprocess.run(["git", "-C", str(root), "reset", "-q", "--hard"], check=True)
        subprocess.run(["git", "-C", str(root), "clean", "-qfd", "--", "text", "src"], check=True)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    as_installed()
    root = git_repo_from(data_path("bench-data", "repo-rust-lang-rfcs", "corpus", "all"))
    for cmd in ([NCX, "init", "-q"], [NCX, "sync", "-q"]):
        subprocess.run(cmd, cwd=root, check=True, capture_output=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "commit", "-qm", "ncx", "--no-verify"],
        check=True,
        env={**os.environ, **GIT_IDENTITY},
    )
    run([NCX, "retrieve", "warm the cache", "-k", "1"], cwd=root)
    rows = []
    np_floor = median_time([sys.executable, "-c", "import numpy"], n=args.runs)
    rows.append({"what": "python -c 'import numpy' (floor)", "median": f"{np_floor * 1000:.0f} ms"})
    rows.append(
        {
            "what": "ncx --help",
            "median": f"{median_time([NCX, '--help'], n=args.runs) * 1000:.0f} ms",
        }
    )
    t = median_time([NCX, "assemble", "--task", TASKS[0]], n=args.runs, cwd=root)
    rows.append(
        {"what": "ncx assemble --task (cold process, budget 15000)", "median": f"{t * 1000:.0f} ms"}
    )
    qs = [
        json.loads(line)
        for line in data_path("bench-data", "repo-rust-lang-rfcs", "queries.jsonl")
        .read_text()
        .splitlines()
    ]
    payload = "".join(
        json.dumps({"qid": q["qid"], "query": q["query"], "k": 10}) + "\n" for q in qs
    )
    _, proc = run([NCX, "retrieve", "--batch", "--json"], cwd=root, input=payload)
    lat = [json.loads(line)["latency_ms"] for line in proc.stdout.splitlines()]
    rows.append(
        {
            "what": f"warm batch retrieve, k=10 ({len(lat)} queries, text included)",
            "median": f"{statistics.median(lat):.2f} ms/query",
        }
    )

    # pre-commit hooks: a `true` hook as the floor, then ncx-sync on no-op / 1 doc / 10 docs.
    docs = sorted((root / "text").glob("*.md"))

    def touch(n: int):  # type: ignore[no-untyped-def]
        def prep(i: int) -> None:
            if n == 0:
                (root / "src").mkdir(exist_ok=True)
                (root / "src" / f"f{i}.rs").write_text("fn main() {}\n")
                subprocess.run(["git", "-C", str(root), "add", "src"], check=True)
                return
            for d in docs[i : i + n]:
                d.write_text(
                    d.read_text() + f"\n\n## Appendix {i}\n\nA note about lifetimes number {i}.\n"
                )
            subprocess.run(["git", "-C", str(root), "add", "text"], check=True)

        return prep

    pre_commit_config(root, "true")
    subprocess.run(["git", "-C", str(root), "add", ".pre-commit-config.yaml"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "pc", "--no-verify"], check=True)
    rows.append(
        {
            "what": "pre-commit run, `true` hook (floor)",
            "median": f"{hook_time(root, args.runs, touch(0)) * 1000:.0f} ms",
        }
    )
    pre_commit_config(root, f"{NCX} hook sync")
    subprocess.run(["git", "-C", str(root), "add", ".pre-commit-config.yaml"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "pc2", "--no-verify"], check=True)
    for label, n in (("no doc touched", 0), ("one doc changed", 1), ("ten docs changed", 10)):
        rows.append(
            {
                "what": f"pre-commit run, ncx-sync, {label}",
                "median": f"{hook_time(root, args.runs, touch(n)) * 1000:.0f} ms",
            }
        )
    print(table(rows))


if __name__ == "__main__":
    main()
