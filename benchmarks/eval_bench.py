"""Issue 30 benchmark: `ncx eval` speed, `--at REV` equality and cost, a pull request's eval report.

    python benchmarks/eval_bench.py --workdir /tmp/ncx-eval [--large /tmp/evalci/tree]
        [--commits 50] [--set repo-cisagov-manage.get.gov] --out benchmarks/results/eval_DATE

1. Eval speed (`--large ROOT`: an initialised, synced, committed tree, e.g. the five doc sets
   of large_tree.py plus two ROT13 copies, 34,064 chunks): `ncx eval --suggest --limit 200`
   writes the 200 questions; then `ncx eval --json` (warm cache) is timed `--runs` times and
   its bytes compared across runs; `ncx eval --since HEAD~0` once cold (materialise + base
   cache build) and once warm.
2. `--at` equality: a history of `--commits` commits built from a real doc set (docs added,
   edited, renamed, deleted, memories added and superseded; each synced with the bundled
   model, committed). For every commit: `ncx assemble --at SHA` and `ncx retrieve --json --at
   SHA` from the branch tip, against the same commands in a clone detached at SHA; bytes
   compared. Times: the first `--at` of a commit (materialise + cache build), a second one,
   and a warm `ncx assemble` in the checkout.
3. A pull request's eval report on the same doc set: a branch that renames one doc, rewords
   one heading (two questions break) and adds the doc a failing question expects (one fixed).
Every time is the wall clock of a fresh process (`python -m ncx`, this checkout first).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import CHECKOUT_ENV as ENV
from common import SHARED

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TASK = "how do I configure and deploy the application"


def ncx(root: Path, *args: str, ok: bool = True) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "ncx", *args], cwd=root, capture_output=True, text=True, env=ENV
    )
    dt = time.perf_counter() - t
    if ok and p.returncode != 0:
        sys.exit(f"ncx {' '.join(args)} -> {p.returncode}\n{p.stderr[-2000:]}")
    return dt, p


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=ENV, check=True
    ).stdout


def commit(root: Path, msg: str) -> None:
    git(root, "add", "-A")
    if git(root, "status", "--porcelain"):
        git(root, "commit", "-q", "--no-verify", "-m", msg)


def eval_speed(large: Path, runs: int) -> dict[str, object]:
    _, p = ncx(large, "eval", "--suggest", "--limit", "200")
    (large / ".neocortex/evals.yaml").write_text(p.stdout)
    ncx(large, "retrieve", "warm", "-k", "1")
    times, outs = [], set()
    for _ in range(runs):
        dt, p = ncx(large, "eval", "--json", ok=False)
        times.append(dt)
        outs.add(p.stdout)
    report = json.loads(next(iter(outs)))
    cold, _ = ncx(large, "eval", "--since", "HEAD", "--json", ok=False)
    warm, _ = ncx(large, "eval", "--since", "HEAD", "--json", ok=False)
    shutil.rmtree(large / ".neocortex/cache/at", ignore_errors=True)
    (large / ".neocortex/evals.yaml").unlink()
    chunks = sum(1 for ln in git(large, "ls-files", ".neocortex/chunks").splitlines())
    return {
        "questions": len(report["questions"]),
        "passed": report["passed"],
        "chunk_files": chunks,
        "eval_s": {"median": statistics.median(times), "min": min(times), "max": max(times)},
        "identical_reports": len(outs) == 1,
        "since_cold_s": cold,
        "since_warm_s": warm,
        "cpus": os.cpu_count(),
        "load": os.getloadavg(),
    }


def history(root: Path, docs: list[tuple[str, str]], commits: int) -> list[str]:
    first = max(3, len(docs) // 3)
    for rel, text in docs[:first]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q", "-b", "main")
    commit(root, "docs")
    ncx(root, "init", "-q")
    ncx(root, "sync", "-q")
    commit(root, "ncx")
    shas = [git(root, "rev-parse", "HEAD").strip()]
    todo, mems = docs[first:], []
    for i in range(1, commits):
        present = sorted(git(root, "ls-files", "*.md", ":!.neocortex").split())
        step = i % 5
        if step == 0 and todo:
            for rel, text in todo[:3]:
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
            del todo[:3]
        elif step == 1:
            p = root / present[i % len(present)]
            p.write_text(p.read_text() + f"\n## Deploy note {i}\n\nConfigure the app {i}.\n")
        elif step == 2 and len(present) > 5:
            (root / "moved").mkdir(exist_ok=True)
            git(root, "mv", present[i % len(present)], f"moved/m{i}.md")
        elif step == 3 and len(present) > 5:
            git(root, "rm", "-q", present[(i * 3) % len(present)])
        else:
            _, p = ncx(
                root, "memory", "add", f"Deploy step {i}: configure the app with flag{i}", "--force"
            )
            mems.append(p.stdout.strip())
            if len(mems) > 1:
                ncx(root, "memory", "evolve", mems[-2], "--supersede-by", mems[-1])
        commit(root, f"step {i}")
        ncx(root, "sync", "-q")
        commit(root, f"sync {i}")
        shas.append(git(root, "rev-parse", "HEAD").strip())
    return shas


def at_equality(work: Path, docs: list[tuple[str, str]], commits: int) -> dict[str, object]:
    root = work / "hist"
    shutil.rmtree(work, ignore_errors=True)
    root.mkdir(parents=True)
    shas = history(root, docs, commits)
    clone = work / "clone"
    git(work, "clone", "-q", str(root), str(clone))
    rows = []
    for n, sha in enumerate(shas):
        first, a = ncx(root, "assemble", "--task", TASK, "--at", sha)
        again, _ = ncx(root, "assemble", "--task", TASK, "--at", sha)
        _, r = ncx(root, "retrieve", TASK, "--json", "--at", sha)
        git(clone, "checkout", "-q", "--detach", sha)
        # the checkout's cache as a clone that follows the history has it (patched from the
        # last commit's), then built afresh, as in a new clone
        _, bi = ncx(clone, "assemble", "--task", TASK)
        _, rbi = ncx(clone, "retrieve", TASK, "--json")
        shutil.rmtree(clone / ".neocortex/cache")
        ncx(clone, "assemble", "--task", TASK)  # builds the checkout's cache
        warm, b = ncx(clone, "assemble", "--task", TASK)
        _, rb = ncx(clone, "retrieve", TASK, "--json")
        rows.append(
            {
                "n": n,
                "commit": sha[:10],
                "frame_equal": a.stdout == b.stdout,
                "retrieve_equal": r.stdout == rb.stdout,
                "frame_equal_patched_cache": a.stdout == bi.stdout,
                "retrieve_equal_patched_cache": r.stdout == rbi.stdout,
                "frame_bytes": len(a.stdout.encode()),
                "at_first_s": round(first, 3),
                "at_again_s": round(again, 3),
                "checkout_warm_s": round(warm, 3),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr)
    ratio = [r["at_again_s"] / r["checkout_warm_s"] for r in rows]  # type: ignore[operator]
    return {
        "commits": len(rows),
        "all_equal": all(r["frame_equal"] and r["retrieve_equal"] for r in rows),
        "all_equal_patched_cache": all(
            r["frame_equal_patched_cache"] and r["retrieve_equal_patched_cache"] for r in rows
        ),
        "ratio_again_to_warm_median": statistics.median(ratio),
        "ratio_again_to_warm_max": max(ratio),
        "rows": rows,
    }


def pr_report(work: Path, docs: list[tuple[str, str]]) -> str:
    root = work / "pr"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    held_back = docs[-1]
    for rel, text in docs[:-1]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q", "-b", "main")
    commit(root, "docs")
    ncx(root, "init", "-q")
    ncx(root, "sync", "-q")
    _, p = ncx(root, "eval", "--suggest", "--limit", "12")
    text = p.stdout + (
        f"  - id: held-back\n    ask: {json.dumps(held_back[1].splitlines()[0].lstrip('# '))}\n"
        f"    expect:\n      - doc: {json.dumps(held_back[0])}\n"
    )
    (root / ".neocortex/evals.yaml").write_text(text)
    commit(root, "ncx + questions")
    git(root, "checkout", "-q", "-b", "pr")
    suggested = [ln.split('"')[1] for ln in text.splitlines() if "- doc:" in ln]
    renamed, reworded = suggested[0], next(d for d in suggested if d != suggested[0])
    (root / "renamed").mkdir(exist_ok=True)
    git(root, "mv", renamed, "renamed/" + Path(renamed).name)
    sec = next(
        ln.split('"')[1]
        for ln in text.splitlines()[text.splitlines().index(f'      - doc: "{reworded}"') :]
        if "section:" in ln
    )
    body = (root / reworded).read_text()
    (root / reworded).write_text(body.replace(f" {sec}\n", f" {sec} (reworded)\n", 1))
    (root / held_back[0]).parent.mkdir(parents=True, exist_ok=True)
    (root / held_back[0]).write_text(held_back[1])
    commit(root, "pr")
    ncx(root, "sync", "-q")
    commit(root, "sync")
    _, p = ncx(root, "eval", "--since", "main", ok=False)
    return f"(exit {p.returncode}; stderr: {p.stderr.strip()})\n\n{p.stdout}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ncx-eval"))
    ap.add_argument("--large", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--commits", type=int, default=50)
    ap.add_argument("--set", default="repo-cisagov-manage.get.gov")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    corpus = SHARED / "bench-data" / a.set / "corpus" / "all"
    docs = [
        (p.relative_to(corpus).as_posix(), p.read_text(encoding="utf-8"))
        for p in sorted(corpus.rglob("*.md"))
        if p.is_file()
    ]
    out: dict[str, object] = {"set": a.set}
    if a.large:
        out["eval_speed"] = eval_speed(a.large, a.runs)
        print(json.dumps(out["eval_speed"]), file=sys.stderr)
    out["pr_report"] = pr_report(a.workdir, docs)
    if a.commits:
        out["at"] = at_equality(a.workdir / "at", docs, a.commits)
    a.out.with_suffix(".json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "at"}, indent=2)[:3000])


if __name__ == "__main__":
    main()
