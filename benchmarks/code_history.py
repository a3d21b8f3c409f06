"""History as evidence for code ranking (issue 38 item 3): every code-* set with and without it.

For each task: its parent tree (materialised under --work as code_sweep.py does) and the last
N non-merge commits BEFORE the task's upstream parent, read by ncx.history.log from the
repository's bare mirror (`git log <upstream_parent>`: no commit of the task or later can leak
in), then `search_code` with `history=None` and with it at each W_HISTORY. Mirrors: the
`fetch` tool's /work/.mirror/<owner>+<name>/repo (psf/requests, pallets/flask, pallets/click,
mwaskom/seaborn, pydata/xarray, Textualize/rich, encode/starlette).

    python benchmarks/code_history.py [--commits 2000] [--weights 0,0.1,0.2,0.3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from code_sweep import SETS, SHARED, materialise, score, tasks_of  # noqa: E402

from ncx.code import rank  # noqa: E402
from ncx.code.index import load_code_index  # noqa: E402
from ncx.history.log import History, _read_log  # noqa: E402

MIRRORS = Path("/work/.mirror")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/code-frames"))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--weights", default="0,0.1,0.2,0.3")
    a = ap.parse_args()
    weights = [float(w) for w in a.weights.split(",")]
    print("| set | W | R@1 / R@5 / R@10 | Acc@1 / Acc@5 / Acc@10 | MRR |")
    print("|---|---|---|---|---|")
    for name in a.sets.split(","):
        rows = []
        logs: dict[str, History] = {}
        spent = 0.0
        for t in tasks_of(name):
            up = t.get("meta", {}).get("upstream_parent")
            mirror = MIRRORS / t.get("repo", "").replace("/", "+") / "repo"
            if not up or not mirror.is_dir():
                continue
            scope = t.get("scope")
            dst = (
                a.work
                / name
                / (t["parent"][:12] + ("-" + scope.replace("/", "_") if scope else ""))
            )
            materialise(SHARED / "bench-data" / name / "repo.git", t["parent"], scope, dst)
            if up not in logs:
                t0 = time.perf_counter()
                logs[up] = History(up, _read_log(mirror, [up], a.commits))
                spent += time.perf_counter() - t0
            rows.append((t, load_code_index(dst), logs[up]))
        if not rows:
            print(f"| {name} | no mirror | | | |")
            continue
        for w in weights:
            rank.W_HISTORY = w
            agg: Counter[str] = Counter()
            for t, idx, h in rows:
                hits = rank.search_code(idx, t["task"], files=10, history=h if w else None)
                files = list(dict.fromkeys(x.path for x in hits))
                for k, v in score(files, t["gold"]).items():
                    agg[k] += v / len(rows)
            r = "/".join(f"{agg[f'R@{k}']:.3f}" for k in (1, 5, 10))
            acc = "/".join(f"{agg[f'A@{k}']:.3f}" for k in (1, 5, 10))
            print(f"| {name} ({len(rows)}) | {w} | {r} | {acc} | {agg['MRR']:.3f} |", flush=True)
        print(f"<!-- {name}: {len(logs)} logs of {a.commits} commits read in {spent:.1f} s -->")


if __name__ == "__main__":
    main()
