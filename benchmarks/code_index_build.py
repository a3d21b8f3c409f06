"""The code index from nothing at 4 sizes: CPU seconds (this process and its workers) and
wall, beside `python -c "import numpy"` in the same run.

The trees are Python files of this environment's site-packages (a real, varied tree: numpy,
pip, pygments, setuptools, mypy, ...), sampled evenly by sorted path and committed into temp
git repos. The ncx under test is the checkout this script lives in, so the same script
measures main and a branch (issue 39: ≤ 4 s for 2,000 source files on 2 cores, linear).

    .venv/bin/python benchmarks/code_index_build.py [--sizes 500,1000,2000,4000]
    .venv/bin/python benchmarks/code_index_build.py --tree ~/src/zod --tree ~/src/bat --runs 5

`--tree REPO` measures a real repository instead (any language ncx reads): a `git clone` of
it, the index built from nothing `--runs` times (deleted between runs), medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from common import as_installed, table

CHECKOUT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
# one build, timed inside a fresh interpreter: (wall, CPU of it and its workers, units)
BUILD = """
import resource, sys, time
from pathlib import Path
t, c = time.perf_counter(), time.process_time()
from ncx.code.index import load_code_index
idx = load_code_index(Path(sys.argv[1]))
ch = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.perf_counter() - t, time.process_time() - c + ch.ru_utime + ch.ru_stime, len(idx),
      len(idx.files))
"""


def tree(dest: Path, files: list[Path], base: Path) -> None:
    for f in files:
        out = dest / "src" / f.relative_to(base)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, out)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tree"]):
        subprocess.run(
            ["git", "-c", "user.name=b", "-c", "user.email=b@x", *args], cwd=dest, check=True
        )


def build_once(root: Path) -> tuple[float, float, int, int]:
    """(wall, CPU, units, indexed files) of one build from nothing in a fresh interpreter."""
    shutil.rmtree(root / ".neocortex" / "cache" / "code", ignore_errors=True)
    # set up as a user's tree is, so the build is saved and the save is timed (a tree
    # without .neocortex/ is read in memory only: ncx.code.index.load_code_index)
    (root / ".neocortex").mkdir(exist_ok=True)
    out = subprocess.run(
        [sys.executable, "-c", BUILD, str(root)],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), int(out[2]), int(out[3])


def repos(paths: list[Path], runs: int) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for src in paths:
            root = Path(tmp) / src.name
            subprocess.run(["git", "clone", "-q", str(src), str(root)], check=True)
            got, floors = [], []
            for _ in range(runs):  # each build beside the floor, in turn
                got.append(build_once(root))
                t = time.perf_counter()
                subprocess.run([sys.executable, "-c", "import numpy"], check=True)
                floors.append(time.perf_counter() - t)
            wall = statistics.median(g[0] for g in got)
            cpu = statistics.median(g[1] for g in got)
            rows.append(
                {
                    "tree": src.name,
                    "indexed": got[0][3],
                    "units": got[0][2],
                    "wall s": f"{wall:.2f}",
                    "CPU s": f"{cpu:.2f}",
                    "CPU ms/file": f"{1000 * cpu / max(1, got[0][3]):.1f}",
                    "wall × numpy": f"{wall / statistics.median(floors):.1f}",
                }
            )
    print(f"medians of {runs} runs\n")
    print(table(rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="500,1000,2000,4000")
    ap.add_argument("--tree", type=Path, action="append", help="a git repository to measure")
    ap.add_argument("--runs", type=int, default=3, help="builds per --tree")
    args = ap.parse_args()
    as_installed(checkout=CHECKOUT)
    if args.tree:
        repos(args.tree, args.runs)
        return
    base = Path(sysconfig.get_paths()["purelib"])
    pool = sorted(p for p in base.rglob("*.py") if "__pycache__" not in p.parts and p.is_file())
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy"], check=True)
    floor = time.perf_counter() - t
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            picked = [pool[i * len(pool) // n] for i in range(min(n, len(pool)))]
            root = Path(tmp) / f"t{n}"
            tree(root, picked, base)
            wall, cpu, units, indexed = build_once(root)
            rows.append(
                {
                    "files": n,
                    "indexed": indexed,
                    "units": units,
                    "wall s": f"{wall:.2f}",
                    "CPU s": f"{cpu:.2f}",
                    "CPU ms/file": f"{1000 * cpu / n:.1f}",
                    "wall × numpy": f"{wall / floor:.1f}",
                }
            )
    print(f"import numpy: {floor:.3f} s; {len(pool)} files in {base}\n")
    print(table(rows))


if __name__ == "__main__":
    main()
