"""No-op cost on a tree of many docs (issue 29): an unchanged tree's `ncx sync`, `ncx status`
and `ncx check`, beside `git status` on the same tree.

Builds WORKDIR/tree with N small markdown docs (100 per folder), commits them, runs the first
`ncx init` + `ncx sync` (timed once), commits `.neocortex/`, then times each no-op command
`--runs` times in fresh processes (wall clock; median, min, max).

Usage: python benchmarks/noop_scale.py --docs 100000 [--checkout PATH] [--workdir DIR] [--runs 3]
`--reuse` keeps an already built WORKDIR/tree (its first sync is not timed again).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import as_installed  # (and no measured process compiles ncx: common's note)

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))
GIT = ["git", "-c", "user.email=b@ncx.invalid", "-c", "user.name=bench"]


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} -> {proc.returncode}\n{proc.stderr[-2000:]}")
    return took


def build(tree: Path, docs: int) -> None:
    tree.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=tree, check=True)
    for i in range(docs):
        folder = tree / "docs" / f"d{i // 100:04d}"
        if i % 100 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{i % 100:02d}.md").write_text(
            f"# Doc {i}\n\nSome text about topic {i % 97} in area {i // 100}.\n", encoding="utf-8"
        )
    subprocess.run([*GIT, "add", "-A"], cwd=tree, check=True)
    subprocess.run([*GIT, "commit", "-qm", "docs", "--no-verify"], cwd=tree, check=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--checkout", type=Path, default=HERE)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ncx-noop"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reuse", action="store_true")
    args = ap.parse_args()
    as_installed(checkout=args.checkout)
    from conftest import build_tiny_model

    tree = args.workdir / "tree"
    model = args.workdir / "model"
    if not model.exists():
        build_tiny_model(model)
    env = {
        **os.environ,
        "PYTHONPATH": str(args.checkout.resolve()),
        "NCX_EMBEDDING_MODEL": str(model),
    }
    ncx = [sys.executable, "-m", "ncx"]
    if not (args.reuse and tree.exists()):
        shutil.rmtree(tree, ignore_errors=True)
        t = time.perf_counter()
        build(tree, args.docs)
        print(f"built {args.docs} docs in {time.perf_counter() - t:.1f} s", flush=True)
        timed([*ncx, "init", "-q"], tree, env)
        first = timed([*ncx, "sync", "-q"], tree, env)
        print(f"first sync: {first:.1f} s", flush=True)
        subprocess.run([*GIT, "add", "-A"], cwd=tree, check=True)
        subprocess.run([*GIT, "commit", "-qm", "ncx", "--no-verify"], cwd=tree, check=True)
    # The state file as after any sync of this ncx (another checkout's is not taken: its
    # code differs), and git's index refreshed, as after any `git status`.
    timed([*ncx, "sync", "-q"], tree, env)
    rows = []
    # Other work on the machine shows in every number: said beside them.
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    for name, cmd in (
        ("git status", ["git", "status", "--short"]),
        ("ncx sync (no-op)", [*ncx, "sync", "-q"]),
        ("ncx status", [*ncx, "status"]),
        ("ncx check", [*ncx, "check"]),
    ):
        runs = [timed(cmd, tree, env) for _ in range(args.runs)]
        rows.append((name, statistics.median(runs), min(runs), max(runs)))
        print(
            f"  {name:<18} median {rows[-1][1]:6.2f} s  (min {min(runs):.2f}, max {max(runs):.2f})"
        )
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"\n| command ({args.docs:,} docs) | median s | min | max |\n|---|---:|---:|---:|")
    for name, med, lo, hi in rows:
        print(f"| {name} | {med:.2f} | {lo:.2f} | {hi:.2f} |")


if __name__ == "__main__":
    main()
