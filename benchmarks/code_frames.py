"""The frames agents get on code tasks, in process, for choosing the frame's rules.

Each task's parent tree of every code-* set is materialised once under --work (as
../shared/bench/code_tasks.py does: git archive + one commit), `ncx init && ncx sync` runs
there once (docs chunks and the code index, as a user's tree has them), and each task's frame
is built by `build_frame` from its task file read as `ncx assemble --task-file` reads it, at
the default budget and at --budget 2500. Scored as code_tasks.py scores a frame:

  tok     the frame's tokens
  gold    gold share: tokens of items in a gold file / the frame's tokens
  prec    code precision: share of the items citing a source file that cite a gold file
  first   whether the first item citing a source file cites a gold file
  R       frame R: share of gold files cited by any item
  R@1     `retrieve --kind code`'s first file is gold (what `first` is held against)

With --history MIRRORS (the `fetch` tool's folder: MIRRORS/owner+name/repo), each frame's
Current State is read from the task's upstream parent in its repository's mirror (its history,
nothing later), and a second table says what that history costs and whether it bears on the
task: the state's tokens, and how often a commit it shows touched a gold file, beside the
repository's last five commits (what Current State showed before it named the frame's files).

The numbers to quote come from code_tasks.py through the CLI (benchmarks/code_bench.py);
this script is the fast loop for sweeping constants (`--set MODULE.NAME=VALUE`).

    python benchmarks/code_frames.py --work /tmp/code-frames [--sets code-swe-dev,...]
        [--budgets 15000,2500] [--set ncx.query.zone.FILE_GAP=0.5] [--show ID]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from code_sweep import SHARED, materialise, tasks_of  # noqa: E402
from frame_suite import set_constants  # noqa: E402

SETS = ("code-swe-dev", "code-requests", "code-rich", "code-starlette", "code-neuralmind-public")
# search a task file's body too, as `ncx assemble --task-file` does (0: the first line only)
TASK_BODY = os.environ.get("NCX_BENCH_TASK_BODY", "1") == "1"
CODE_SUFFIXES = {".py", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java"}


def synced(tree: Path) -> Path:
    """The tree with its .neocortex/ built by this checkout's ncx (once)."""
    if not (tree / ".neocortex" / "manifest.json").is_file():
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        for args in (["init"], ["sync"]):
            subprocess.run(
                [sys.executable, "-m", "ncx", *args], cwd=tree, env=env, capture_output=True
            )
    return tree


def trees(work: Path, name: str, limit: int = 0) -> list[tuple[dict[str, Any], Path]]:
    """Each task with its synced tree; `limit`: that many tasks, evenly spread over the set."""
    repo_git = SHARED / "bench-data" / name / "repo.git"
    tasks = tasks_of(name)
    if limit and limit < len(tasks):
        tasks = [tasks[int((i + 0.5) * len(tasks) / limit)] for i in range(limit)]
    out = []
    for t in tasks:
        scope = t.get("scope")
        dst = work / name / (t["parent"][:12] + ("-" + scope.replace("/", "_") if scope else ""))
        materialise(repo_git, t["parent"], scope, dst)
        out.append((t, synced(dst)))
    return out


def score(frame: Any, gold: list[str]) -> dict[str, float]:
    items = [(it["source_path"], it["tokens"]) for z in frame["zones"] for it in z["items"]]
    code = [p for p, _ in items if os.path.splitext(p)[1].lower() in CODE_SUFFIXES]
    g = set(gold)
    tok = frame["tokens"]
    m = {
        "tok": float(tok),
        "gold": sum(t for p, t in items if p in g) / tok if tok else 0.0,
        "R": len({p for p, _ in items} & g) / len(g),
    }
    if code:
        m["first"] = float(code[0] in g)
        m["prec"] = sum(p in g for p in code) / len(code)
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/code-frames"))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--budgets", default="15000,2500")
    ap.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE")
    ap.add_argument("--show", default="", help="print the frame of this task id (markdown)")
    ap.add_argument("--json", type=Path, help="write per-task rows here")
    ap.add_argument("--limit", type=int, default=0, help="N tasks of each set, evenly spread")
    ap.add_argument("--history", type=Path, help="mirrors folder: Current State from history")
    a = ap.parse_args()
    set_constants(a.set)
    from ncx.code.search import CodeSearcher
    from ncx.config import load_config
    from ncx.query.context import FrameRequest, build_frame
    from ncx.query.search import Searcher
    from ncx.query.state import GitState, git_state
    from ncx.query.task import body_of, from_text

    budgets = [int(b) for b in a.budgets.split(",")]
    cfg = load_config()
    keys = ("tok", "gold", "prec", "first", "R")
    print("| set | budget | n | tok | gold share | code prec | first code | frame R | R@1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows: list[dict[str, Any]] = []
    hist_rows: list[tuple[str, dict[str, list[float]]]] = []
    for name in a.sets.split(","):
        tasks = trees(a.work, name, a.limit)
        agg: dict[int, dict[str, list[float]]] = {b: {k: [] for k in keys} for b in budgets}
        r1: list[float] = []
        open_at: dict[Path, tuple[Searcher, CodeSearcher, GitState]] = {}
        hist: dict[str, list[float]] = {
            k: [] for k in ("tok", "tok_last5", "bears", "bears_last5", "any")
        }
        for t, tree in tasks:
            if tree not in open_at:
                open_at.clear()  # one tree's caches in memory at a time
                open_at[tree] = (Searcher.open(tree, cfg), CodeSearcher(tree), git_state(tree))
            s, code, state = open_at[tree]
            if a.history:
                mirror = a.history / t["repo"].replace("/", "+") / "repo"
                state = git_state(mirror, t["meta"]["upstream_parent"])
            task, crit = from_text(t["task"])
            files = list(dict.fromkeys(h.path for h in code.search(t["task"])))
            r1.append(float(bool(files) and files[0] in t["gold"]))
            for b in budgets:
                extra = {"body": body_of(t["task"])} if TASK_BODY else {}
                req = FrameRequest(task=task, criteria=crit, budget=b, **extra)
                f = build_frame(tree, cfg, req, s, git=state)
                m = score(f.as_json(), t["gold"])
                if a.history and b == budgets[0]:
                    _history(hist, state, f, t["gold"], req)
                for k, v in m.items():
                    agg[b][k].append(v)
                rows.append({"set": name, "id": t["id"], "budget": b, **m})
                if t["id"] == a.show:
                    print(f.markdown)
        for b in budgets:
            v = agg[b]

            def mean(k: str, v: dict[str, list[float]] = v) -> str:
                return f"{sum(v[k]) / len(v[k]):.3f}" if v[k] else "–"

            print(
                f"| {name} | {b} | {len(v['tok'])} | {sum(v['tok']) / len(v['tok']):,.0f} | "
                f"{mean('gold')} | {mean('prec')} | {mean('first')} | {mean('R')} | "
                f"{sum(r1) / len(r1):.3f} |",
                flush=True,
            )
        if a.history:
            hist_rows.append((name, hist))
    if a.history:
        print(
            "\n| set | n | state tokens | shown commits | frames whose state shows a commit to a"
            " gold file | the last five commits: tokens, a gold file |"
        )
        print("|---|---|---|---|---|---|")
        for name, h in hist_rows:
            n = len(h["tok"])
            print(
                f"| {name} | {n} | {sum(h['tok']) / n:.0f} | {sum(h['any']) / n:.2f} | "
                f"{sum(h['bears']) / n:.3f} | {sum(h['tok_last5']) / n:.0f}, "
                f"{sum(h['bears_last5']) / n:.3f} |"
            )
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


def _history(
    hist: dict[str, list[float]], state: Any, frame: Any, gold: list[str], req: Any
) -> None:
    """What the frame's Current State shows of history, and whether it bears on the task,
    beside the repository's last five commits (what it showed before)."""
    from ncx import repo
    from ncx.tokens import count_tokens

    zones = frame.as_json()["zones"]
    code = [it["source_path"] for z in zones if z["name"] == "code" for it in z["items"]]
    lead = code or [
        it["source_path"] for z in zones if z["name"] == "relevant" for it in z["items"]
    ]
    from ncx.query.context import asked_terms

    asked = asked_terms(req)
    shown = state.touching(lead, asked)
    g = set(gold)
    hist["tok"].append(count_tokens("\n".join(state.lines(lead, asked))))
    hist["any"].append(float(len(shown)))
    # (all the files each shown commit touched, as the last five's are counted)
    full = set()
    for c in shown:
        out = repo.git(
            Path(state.root),
            "log",
            "-1",
            "--first-parent",
            "-m",
            "--format=",
            "--name-only",
            c.sha,
            "--",
        )
        full |= set(out.decode("utf-8", "replace").split())
    hist["bears"].append(float(bool(full & g)))
    log = repo.git(
        Path(state.root),
        "log",
        "-5",
        "--first-parent",
        "-m",
        "--format=%x1e%h %s",
        "--name-only",
        state.rev,
        "--",
    ).decode("utf-8", "replace")
    last5 = [r.split("\n", 1) for r in log.split("\x1e")[1:]]
    lines = [*state.head, "- recent commits:", *(f"  - {head}" for head, _ in last5)]
    hist["tok_last5"].append(count_tokens("\n".join(lines)))
    touched = {f for _, names in last5 for f in names.split()}
    hist["bears_last5"].append(float(bool(touched & g)))


if __name__ == "__main__":
    main()
