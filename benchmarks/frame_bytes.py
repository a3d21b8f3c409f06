"""The byte proof: the sha256 of every frame on every development set, and a diff of two runs.

    python benchmarks/frame_bytes.py record OUT.json [--sets a,b] [--budgets 15000,2500]
                                     [--every N] [--trees DIR] [--work DIR]
    python benchmarks/frame_bytes.py compare BEFORE.json AFTER.json

`record` builds, in process and with this checkout's ncx, the frame of every question of the
docs sets (benchmarks/suite.py's evaluations over the trees it syncs under --trees, built
there when missing) and of every task of the code-* sets (the trees benchmarks/code_frames.py
materialises and syncs under --work), at each budget, and writes the sha256 of each frame's
markdown and of its JSON (sorted keys) keyed `set/labels/qid/budget`. `compare` prints how
many frames the two files share, how many differ, and the first differing keys; it exits 1
when any shared frame differs or a key is missing from one side. A refactor that claims "no
behaviour change" records before and after on the same trees and compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if os.environ.get("PYTHONHASHSEED") != "0":
    # A frame's JSON scores differ in their 6th decimal with the process's string-hash seed
    # (a sum taken in set order); its markdown does not. One seed for every run.
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread: the same sums in the same order
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from suite import NCX, SHARED, SHORT, build_tree  # noqa: E402
from suite import SUITE as DOC_SETS  # noqa: E402

CODE_SETS = (
    "code-swe-dev",
    "code-requests",
    "code-rich",
    "code-starlette",
    "code-neuralmind-public",
)


def _digest(frame: Any) -> dict[str, str]:
    blob = json.dumps(frame.as_json(), sort_keys=True, ensure_ascii=False)
    return {
        "md": hashlib.sha256(frame.markdown.encode()).hexdigest(),
        "json": hashlib.sha256(blob.encode()).hexdigest(),
    }


def doc_frames(
    name: str, labels: str, budgets: list[int], every: int, trees: Path
) -> dict[str, dict[str, str]]:
    sys.path.insert(0, str(SHARED / "bench"))
    from ncxbench.dataset import Dataset

    from ncx.config import load_config
    from ncx.query.context import FrameRequest, GitState, build_frame, git_state
    from ncx.query.search import Searcher

    ds = Dataset.load(name, SHARED / "bench-data")
    cfg = load_config()
    out: dict[str, dict[str, str]] = {}
    opened: dict[Path, tuple[Searcher, GitState]] = {}
    for q in [q for q in ds.queries if q["gold"].get(labels)][::every]:
        root = trees / name / q["scope"]
        if root not in opened:
            build_tree(NCX, ds.corpus_dir(q["scope"]), root)
            opened.clear()  # one tree's caches in memory at a time
            opened[root] = (Searcher.open(root, cfg), git_state(root))
        s, state = opened[root]
        for b in budgets:
            req = FrameRequest(task=q["query"], budget=b)
            f = build_frame(root, cfg, req, s, git=state)
            out[f"{name}/{labels}/{q['qid']}/{b}"] = _digest(f)
    return out


def code_frames(name: str, budgets: list[int], every: int, work: Path) -> dict[str, dict[str, str]]:
    from code_frames import trees as code_trees

    from ncx.config import load_config
    from ncx.query.context import FrameRequest, GitState, build_frame, git_state
    from ncx.query.search import Searcher
    from ncx.query.task import from_text

    cfg = load_config()
    out: dict[str, dict[str, str]] = {}
    opened: dict[Path, tuple[Searcher, GitState]] = {}
    for t, tree in code_trees(work, name)[::every]:
        if tree not in opened:
            opened.clear()
            opened[tree] = (Searcher.open(tree, cfg), git_state(tree))
        s, state = opened[tree]
        task, crit = from_text(t["task"])
        for b in budgets:
            req = FrameRequest(task=task, criteria=crit, budget=b)
            f = build_frame(tree, cfg, req, s, git=state)
            out[f"{name}/code/{t['id']}/{b}"] = _digest(f)
    return out


def record(a: argparse.Namespace) -> None:
    budgets = [int(b) for b in a.budgets.split(",")]
    wanted = set(a.sets.split(",")) if a.sets else None
    frames: dict[str, dict[str, str]] = {}
    for name, labels in DOC_SETS:
        if wanted and name not in wanted and SHORT.get(name) not in wanted:
            continue
        t = time.perf_counter()
        got = doc_frames(name, labels, budgets, a.every, a.trees)
        print(f"{name}/{labels}: {len(got)} frames, {time.perf_counter() - t:.0f} s", flush=True)
        frames.update(got)
    for name in CODE_SETS:
        if wanted and name not in wanted:
            continue
        t = time.perf_counter()
        got = code_frames(name, budgets, a.every, a.work)
        print(f"{name}: {len(got)} frames, {time.perf_counter() - t:.0f} s", flush=True)
        frames.update(got)
    a.out.write_text(json.dumps(frames, indent=0, sort_keys=True) + "\n")
    print(f"{len(frames)} frames -> {a.out}")


def compare(a: argparse.Namespace) -> None:
    before: dict[str, dict[str, str]] = json.loads(a.before.read_text())
    after: dict[str, dict[str, str]] = json.loads(a.after.read_text())
    shared = sorted(set(before) & set(after))
    differ = [k for k in shared if before[k] != after[k]]
    only = sorted(set(before) ^ set(after))
    print(f"{len(shared)} frames in both, {len(differ)} differ, {len(only)} in one file only")
    for k in differ[:20]:
        print(f"  differs: {k}")
    for k in only[:20]:
        print(f"  only in {'before' if k in before else 'after'}: {k}")
    sys.exit(1 if differ or only else 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("record")
    r.add_argument("out", type=Path)
    r.add_argument("--sets", default="", help="data set names (docs short names too); none: all")
    r.add_argument("--budgets", default="15000,2500")
    r.add_argument("--every", type=int, default=1, help="every Nth question (1: all)")
    r.add_argument("--trees", type=Path, default=Path("/tmp/ncx-suite-trees"))
    r.add_argument("--work", type=Path, default=Path("/tmp/code-frames"))
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    a = ap.parse_args()
    record(a) if a.verb == "record" else compare(a)


if __name__ == "__main__":
    main()
