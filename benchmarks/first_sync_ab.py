"""First `ncx sync` and full `ncx check` in a fresh clone, two ncx versions side by side.

Both only ever happen on a whole tree, so they are timed on the large tree that
`large_tree.py --workdir DIR` builds (3,498 docs, ~40,600 chunks): a clone of it with its
chunk files removed is synced from nothing; a plain clone (no cache) is checked. The two
versions alternate run by run (A B, B A, ...) on the same host, each beside the floor
`python -c "import numpy"`, because a shared 2-core machine drifts more between minutes
than the difference being measured. Both versions run on this script's Python, each from
its own source folder (e.g. `git archive REV ncx | tar -x -C /tmp/old`).

    python benchmarks/first_sync_ab.py --tree /tmp/ncx-large/tree \\
        --a /tmp/old --b . --runs 3 --json-out benchmarks/results/first_sync_ab.json

Reports medians of wall time and of CPU time (the command and its worker processes), and
checks that the two versions write byte-identical chunk files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(cmd: list[str], cwd: Path, src: str | None = None) -> tuple[float, float, int]:
    """(wall s, CPU s of the command and its children, exit code)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    os.sync()  # the last copy's dirty pages are flushed now, not during the timed command
    before = os.times()
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = os.times()
    cpu = (after.children_user + after.children_system) - (
        before.children_user + before.children_system
    )
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stderr[-2000:]}")
    return wall, cpu, proc.returncode


def git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, required=True, help="a synced, committed large tree")
    ap.add_argument("--a", required=True, help="source folder holding version A's ncx/")
    ap.add_argument("--b", required=True, help="source folder holding version B's ncx/")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()
    py = sys.executable
    work = Path(tempfile.mkdtemp(prefix="ncx-first-sync-"))
    # The bare tree: the same commit without its chunk files (what a first sync starts from).
    bare = work / "bare"
    git("clone", "-q", str(args.tree), str(bare))
    git("-C", str(bare), "rm", "-rq", ".neocortex/chunks")
    git("-C", str(bare), "commit", "-qm", "no chunks", "--no-verify")
    versions = {"A": str(Path(args.a).resolve()), "B": str(Path(args.b).resolve())}
    rows: dict[str, dict[str, list[float]]] = {
        v: {"sync_s": [], "sync_cpu": [], "check_s": [], "check_cpu": []} for v in versions
    }
    floors: list[float] = []
    for i in range(args.runs):
        for v in ("A", "B") if i % 2 == 0 else ("B", "A"):
            src = versions[v]
            floors.append(timed([py, "-c", "import numpy"], work)[0])
            tree = work / f"sync-{v}"
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(bare, tree, symlinks=True)
            wall, cpu, _ = timed([py, "-m", "ncx", "sync", "--quiet"], tree, src)
            rows[v]["sync_s"].append(wall)
            rows[v]["sync_cpu"].append(cpu)
            clone = work / f"clone-{v}"
            shutil.rmtree(clone, ignore_errors=True)
            git("clone", "-q", str(args.tree), str(clone))
            wall, cpu, rc = timed([py, "-m", "ncx", "check"], clone, src)
            if rc != 0:
                sys.exit(f"ncx check found problems in a clone of {args.tree} (version {v})")
            rows[v]["check_s"].append(wall)
            rows[v]["check_cpu"].append(cpu)
            print(
                f"run {i + 1} {v}: sync {rows[v]['sync_s'][-1]:.2f} s, "
                f"check {rows[v]['check_s'][-1]:.2f} s",
                file=sys.stderr,
            )
    same = (
        subprocess.run(
            [
                "diff",
                "-rq",
                str(work / "sync-A/.neocortex/chunks"),
                str(work / "sync-B/.neocortex/chunks"),
            ],
            capture_output=True,
        ).returncode
        == 0
    )
    floor = statistics.median(floors)
    med = {v: {k: statistics.median(x) for k, x in r.items()} for v, r in rows.items()}
    print(f"floor `python -c 'import numpy'`: median {floor:.3f} s over {len(floors)} runs")
    print("| what | A | B | B / A |")
    print("|---|---|---|---|")
    for key, label in (
        ("sync_s", "first `ncx sync`, wall"),
        ("sync_cpu", "… CPU (with workers)"),
        ("check_s", "`ncx check` in a fresh clone, wall"),
        ("check_cpu", "… CPU (with workers)"),
    ):
        a, b = med["A"][key], med["B"][key]
        print(f"| {label} | {a:.2f} s | {b:.2f} s | {b / a:.2f} |")
    print(f"chunk files of the two first syncs byte-identical: {same}")
    if args.json_out:
        args.json_out.write_text(
            json.dumps(
                {"versions": versions, "floor_s": floor, "runs": rows, "median": med, "same": same},
                indent=1,
            )
            + "\n"
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
