"""A fresh clone's first frame beside the warm one, byte for byte, per tree (issue 39).

Usage: NCX_SHARED=../shared python benchmarks/cold_frames.py TREE [TREE ...] [--limit N]
           [--set NAME]

Each TREE is a synced tree (the suite's under /tmp/ncx-suite-trees, the code sets'
under /tmp/code-frames/<set>/<sha>, the large tree). It is cloned fresh (no cache, no code
index) into a temp folder, and there:

- through the real CLI, each in a fresh process: the clone's first `ncx assemble --task Q`
  (it builds the docs cache and the code index, then answers), timed beside `python -c
  "import numpy"` in the same run; a warm `ncx assemble` of the same task; and the first
  frame again after the cache is deleted. Byte identity of the three.
- in process, for the set's first N questions (`--set`, default: the tree's folder name when
  it is a data set's): every frame from the index a cold build returns (what a first query
  answers from) beside the frame from the index loaded back from the saved file (what every
  later query answers from). Byte identity count.

Prints one markdown table row per tree: the first frame's time is the median of `--runs`
fresh clones, each beside its own floor (the floors' median is the ratio's divisor).
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

from common import as_installed, data_path

TASK = "how do I configure the retry policy and timeouts"


def _ncx(clone: Path, *args: str) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "ncx", *args],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "NCX_PROGRESS_AFTER": "1"},
    )
    return time.perf_counter() - t, out.stdout


def _floor() -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy"], check=True)
    return time.perf_counter() - t


def _questions(name: str | None, limit: int) -> list[str]:
    if not name:
        return [TASK]
    try:
        text = data_path("bench-data", name, "queries.jsonl").read_text()
    except (OSError, SystemExit):
        return [TASK]
    qs = [json.loads(ln)["query"] for ln in text.splitlines() if ln.strip()]
    return qs[:limit] if limit else qs


def _in_process(clone: Path, questions: list[str]) -> int:
    """How many of the questions' frames from a cold build's index are the frames from the
    saved index, byte for byte."""
    from ncx.config import load_config
    from ncx.query.cache import load_index
    from ncx.query.context import FrameRequest, GitState, build_frame
    from ncx.query.search import Searcher

    cfg = load_config()
    shutil.rmtree(clone / ".neocortex/cache")
    cold = Searcher(clone, cfg, load_index(clone))  # the index the build returned
    warm = Searcher(clone, cfg, load_index(clone))  # ... and as read back from its file
    same = 0
    for q in questions:
        req = FrameRequest(task=q)
        frames = [build_frame(clone, cfg, req, s, git=GitState()).markdown for s in (cold, warm)]
        same += frames[0] == frames[1]
    return same


def _fresh_copy(tree: Path, clone: Path) -> None:
    """A fresh clone of `tree`; a copy without `.neocortex/cache/` where its `.neocortex/`
    is not committed (the code sets' trees): what a clone of it would hold."""
    tracked = subprocess.run(
        ["git", "ls-files", ".neocortex/manifest.json"], cwd=tree, capture_output=True, text=True
    ).stdout.strip()
    if tracked:
        subprocess.run(["git", "clone", "-q", str(tree), str(clone)], check=True)
        return
    derived = str(tree / ".neocortex")
    shutil.copytree(
        tree, clone, symlinks=True, ignore=lambda d, names: ["cache"] if d == derived else []
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("trees", type=Path, nargs="+")
    ap.add_argument("--set", default=None, help="data set of the questions (one tree)")
    ap.add_argument("--limit", type=int, default=20, help="questions per tree (0: all)")
    ap.add_argument(
        "--runs", type=int, default=3, help="fresh clones timed per tree (medians, floor beside)"
    )
    a = ap.parse_args()
    as_installed()
    print(
        "| tree | units | first frame (s) | × import numpy | first = warm | "
        "deleted cache = warm | cold-build frames = warm frames |"
    )
    print("|---|---|---|---|---|---|---|")
    for tree in a.trees:
        tree = tree.resolve()
        name = a.set or next(
            (p for p in tree.parts if p.startswith(("repo-", "raydocs", "code-"))), None
        )
        if name == "code-frames":  # /tmp/code-frames/<set>/<sha>
            name = tree.parts[-2]
        # Each run a fresh clone, its floor beside it: one process of either is noise here.
        floors, tooks = [], []
        for _ in range(max(1, a.runs) - 1):
            with tempfile.TemporaryDirectory(prefix="ncx-cold-") as tmp:
                _fresh_copy(tree, Path(tmp) / "clone")
                floors.append(_floor())
                tooks.append(_ncx(Path(tmp) / "clone", "assemble", "--task", TASK)[0])
        with tempfile.TemporaryDirectory(prefix="ncx-cold-") as tmp:
            clone = Path(tmp) / "clone"
            _fresh_copy(tree, clone)
            floors.append(_floor())
            took, first = _ncx(clone, "assemble", "--task", TASK)
            tooks.append(took)
            took, floor = statistics.median(tooks), statistics.median(floors)
            warm = _ncx(clone, "assemble", "--task", TASK)[1]
            shutil.rmtree(clone / ".neocortex/cache")
            again = _ncx(clone, "assemble", "--task", TASK)[1]
            from ncx.query.cache import load_index

            units = len(load_index(clone).units)
            qs = _questions(name, a.limit)
            same = _in_process(clone, qs)
        print(
            f"| {tree.name if name is None else name} | {units:,} | {took:.2f} | "
            f"{took / floor:.1f} | {'yes' if first == warm else 'NO'} | "
            f"{'yes' if again == warm else 'NO'} | {same}/{len(qs)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
