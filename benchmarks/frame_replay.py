"""Sweep the frame planner's rules without searching again: capture each question's frame
input once, then replay `assembler.assemble` (pure) under other constants.

Usage: python benchmarks/frame_replay.py capture [--trees DIR] [--sets a,b] [--every N]
                                                 [--budgets 2000,4000,8000,15000]
       python benchmarks/frame_replay.py replay  [same] [--set MODULE.NAME=VALUE ...]

`capture` builds every frame as benchmarks/frame_suite.py does (build_frame over the trees it
synced) and pickles the `FrameInput` handed to `assemble`, per question and budget, under
DIR/_replay/. `replay` assembles those inputs again and scores them as frame_suite.py does
(recall, quoted recall, mean tokens, gold share, per budget): a rule of `assembler.plan` or
`assemble` is measured in seconds. A rule that changes what the frame input holds (the
passages, the memories, the follow-ups) needs a new capture, or frame_suite.py itself:
`capture --tag NAME --set ...` keeps it apart, `replay --tag NAME` reads it. `--plain` replays
without the vague-task rule. The pickles are this script's own output, read back only by it.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from frame_suite import (  # noqa: E402
    _dataset,
    _questions,
    chosen_sets,
    frame_score,
    set_constants,
)
from suite import SHORT  # noqa: E402

TAG = ""  # --tag: inputs captured under other constants (a passage rule) kept apart


def _store(trees: Path, name: str, labels: str, every: int) -> Path:
    """Where a set's inputs are kept (every budget captured; replay asks for some of them)."""
    return trees / "_replay" / f"{name}.{labels}{TAG}.every{every}.pkl"


def capture(trees: Path, name: str, labels: str, budgets: list[int], every: int) -> None:
    from ncx.config import load_config
    from ncx.query import context
    from ncx.query.context import FrameRequest, build_frame
    from ncx.query.search import Searcher

    got: list[Any] = []
    real = context.assemble

    def keep(inp: Any, budget: int) -> Any:
        got.append(inp)
        return real(inp, budget)

    context.assemble = keep
    states: dict[str, list[str]] = {}
    real_state = context.git_state
    context.git_state = lambda root: states.setdefault(str(root), real_state(root))
    ds = _dataset(name)
    cfg = load_config()
    rows: list[dict[str, Any]] = []
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for q in _questions(ds, labels, every):
        by_scope.setdefault(q["scope"], []).append(q)
    for scope, qs in by_scope.items():
        s = Searcher.open(trees / name / scope, cfg)
        for q in qs:
            inputs = {}
            for b in budgets:
                got.clear()
                build_frame(trees / name / scope, cfg, FrameRequest(task=q["query"], budget=b), s)
                inputs[b] = got[0]
            rows.append({"qid": q["qid"], "scope": scope, "gold": q["gold"][labels], "in": inputs})
    context.assemble, context.git_state = real, real_state
    out = _store(trees, name, labels, every)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pickle.dumps(rows))


def replay(
    trees: Path, name: str, labels: str, budgets: list[int], every: int, plain: bool = False
) -> list[dict[str, Any]]:
    """Each captured input assembled again; the task's vagueness judged again (inputs captured
    before FrameInput.vague existed lack it); `plain`: no weak-evidence short frame."""
    import dataclasses

    from ncx.query.assembler import assemble
    from ncx.query.context import is_vague

    ds = _dataset(name)
    path = _store(trees, name, labels, every)
    if not path.exists():  # a set captured as a sample (--every N) only: that sample
        path = next(path.parent.glob(f"{name}.{labels}{TAG}.every*.pkl"), path)
    rows = pickle.loads(path.read_bytes())
    out: list[dict[str, Any]] = []
    for r in rows:
        gold = set(r["gold"])
        res: dict[int, Any] = {}
        for b in budgets:
            inp = r["in"][b]
            inp = dataclasses.replace(inp, vague=not plain and is_vague(inp.task))
            f = assemble(dataclasses.replace(inp, weak=inp.weak and not plain), b)
            covered, quoted, gold_tok = frame_score(ds, r["scope"], f, gold)
            res[b] = (covered, quoted, f.tokens, gold_tok)
        out.append({"qid": r["qid"], "res": res})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("what", choices=("capture", "replay"))
    ap.add_argument("--trees", type=Path, default=Path(tempfile.gettempdir()) / "ncx-suite-trees")
    ap.add_argument("--sets", default="", help="comma-separated set names or short names")
    ap.add_argument("--budgets", default="2000,4000,8000,15000")
    ap.add_argument("--every", type=int, default=1, help="every Nth question (a sample)")
    ap.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE")
    ap.add_argument("--json", type=Path, help="also write per-question results here")
    ap.add_argument("--plain", action="store_true", help="no weak-evidence short frame")
    ap.add_argument("--tag", default="", help="keep or read the inputs under this name")
    a = ap.parse_args()
    global TAG
    TAG = f".{a.tag}" if a.tag else ""
    set_constants(a.set)
    budgets = [int(x) for x in a.budgets.split(",")]
    sets = chosen_sets(a.sets)
    dump: dict[str, Any] = {}
    print("| set | budget | recall | quoted recall | mean tokens | gold share |")
    print("|---|---|---|---|---|---|")
    for name, labels in sets:
        if a.what == "capture":
            capture(a.trees, name, labels, budgets, a.every)
            print(f"captured {name}/{labels}", flush=True)
            continue
        res = replay(a.trees, name, labels, budgets, a.every, a.plain)
        n = len(res)
        for b in budgets:
            rec = sum(r["res"][b][0] for r in res) / n
            quo = sum(r["res"][b][1] for r in res) / n
            tok = sum(r["res"][b][2] for r in res)
            gtok = sum(r["res"][b][3] for r in res)
            print(
                f"| {SHORT[name]}/{labels} (n={n}) | {b} | {rec:.3f} | {quo:.3f} "
                f"| {tok / n:,.0f} | {gtok / max(1, tok):.3f} |",
                flush=True,
            )
        dump[f"{SHORT[name]}/{labels}"] = res
    if a.json:
        a.json.write_text(json.dumps(dump))


if __name__ == "__main__":
    main()
