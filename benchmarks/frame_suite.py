"""Frame recall on every dev set: does `ncx assemble`'s frame cite a gold unit, beside BM25
heading chunks packed to the same budget (the scoring of ../shared/bench/frame_recall.py).

Usage: python benchmarks/frame_suite.py [--bench-python PATH] [--trees DIR] [--sets a,b]
                                        [--budgets 2000,4000,8000,15000] [--every N] [--why]

Frames are built in process by `build_frame` (what `ncx assemble --task-file Q --budget B
--format json` builds, without a process start per question) over the trees
`benchmarks/suite.py` syncs under --trees (built here when missing); git state is computed
once per tree. The BM25 side runs under --bench-python (the harness's own BM25 and
chunking) and is cached beside the trees per question. `--why` lists every question BM25
packed answers and the frame does not, with where the ranking put the gold unit and what
the frame did with it. Besides frame recall it prints, per budget, the quoted recall (an item
quotes a unit when it overlaps it by >= 60 tokens or half its lines), the frame's mean tokens
and its gold share, as frame_recall.py does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from suite import SHARED, SHORT
from suite import SUITE as SETS

HERE = Path(__file__).resolve().parent


def _dataset(name: str) -> Any:
    sys.path.insert(0, str(SHARED / "bench"))
    from ncxbench.dataset import Dataset

    return Dataset.load(name, SHARED / "bench-data")


def _questions(ds: Any, labels: str, every: int) -> list[dict[str, Any]]:
    qs: list[dict[str, Any]] = [q for q in ds.queries if q["gold"].get(labels)]
    return qs[::every]


def bm25_packed(name: str, labels: str, budgets: list[int], every: int) -> dict[str, list[int]]:
    """Per question, the budgets at which BM25 heading chunks packed best first cover gold.
    Runs under the bench venv (bm25s)."""
    sys.path.insert(0, str(SHARED / "bench"))
    from ncxbench.chunking import chunk_corpus
    from ncxbench.mdutil import approx_tokens
    from ncxbench.retrievers import BM25

    ds = _dataset(name)
    out: dict[str, list[int]] = {}
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for q in _questions(ds, labels, every):
        by_scope.setdefault(q["scope"], []).append(q)
    for scope, qs in by_scope.items():
        bm = BM25()
        bm.index(chunk_corpus(ds.corpus_dir(scope), "heading"))
        for q in qs:
            gold = set(q["gold"][labels])
            res = bm.search(q["query"], k=200)
            got = []
            for b in budgets:
                used, cov = 0, set()
                for c, _ in res:
                    t = approx_tokens(c.text)
                    if used + t > b:
                        break
                    used += t
                    cov |= ds.covered_units(scope, c.path, c.start, c.end)
                if cov & gold:
                    got.append(b)
            out[q["qid"]] = got
    return out


def baseline(
    bench_py: str, trees: Path, name: str, labels: str, budgets: list[int], every: int
) -> dict[str, list[int]]:
    key = f"frames.{name}.{labels}.{'-'.join(map(str, budgets))}.every{every}.json"
    cache = trees / "_baselines" / key
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        args = [bench_py, __file__, "--bm25-only", name, labels]
        args += ["--budgets", ",".join(map(str, budgets)), "--every", str(every)]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"BM25 packing failed for {name}: {proc.stderr[-2000:]}")
        cache.write_text(proc.stdout)
    got: dict[str, list[int]] = json.loads(cache.read_text())
    return got


QUOTE_TOKENS = 60  # ../shared/bench/frame_recall.py: an item quotes a unit it overlaps by
# at least this many tokens or by half of the unit's lines; a shorter one merely points at it


def _quoted(
    ds: Any, scope: str, path: str, start: int | None, end: int | None, tokens: int
) -> set[str]:
    out: set[str] = set()
    for unit, us, ue in ds.unit_index.get(scope, {}).get(path, []):
        if start is None or end is None:
            continue
        overlap = min(ue, end) - max(us, start) + 1
        if overlap > 0 and (tokens >= QUOTE_TOKENS or overlap * 2 >= ue - us + 1):
            out.add(unit)
    return out


def frame_score(ds: Any, scope: str, frame: Any, gold: set[str]) -> tuple[bool, bool, int]:
    """Whether `frame` covers a gold unit, whether it quotes one, and the tokens of its items
    that cover gold (frame_recall.py's scoring; a passage is judged by its own lines)."""
    cov: set[str] = set()
    quoted: set[str] = set()
    gold_tok = 0
    for placed in frame.zones.values():
        for p in placed:
            it = p.item
            c = ds.covered_units(scope, it.source_path, it.start_line, it.end_line)
            cov |= c
            quoted |= _quoted(ds, scope, it.source_path, it.start_line, it.end_line, p.tokens)
            gold_tok += p.tokens if c & gold else 0
    return bool(cov & gold), bool(quoted & gold), gold_tok


STATS: dict[int, list[float]] = {}  # budget -> [questions, recall, quoted, tokens, gold tokens]


def ncx_frames(
    trees: Path, name: str, labels: str, budgets: list[int], every: int, why: bool
) -> tuple[dict[str, list[int]], dict[str, Any]]:
    """Per question, the budgets at which the frame covers gold; and, per question and
    budget missed, what happened to the gold unit (when `why`)."""
    from ncx.config import load_config
    from ncx.query import context
    from ncx.query.context import FrameRequest, build_frame
    from ncx.query.search import Searcher

    states: dict[str, list[str]] = {}
    real_state = context.git_state

    def once(root: Path) -> list[str]:  # same lines, computed once per tree
        return states.setdefault(str(root), real_state(root))

    context.git_state = once
    ds = _dataset(name)
    cfg = load_config()
    out: dict[str, list[int]] = {}
    notes: dict[str, Any] = {}
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for q in _questions(ds, labels, every):
        by_scope.setdefault(q["scope"], []).append(q)
    for scope, qs in by_scope.items():
        root = trees / name / scope
        s = Searcher.open(root, cfg)
        for q in qs:
            gold = set(q["gold"][labels])
            got = []
            for b in budgets:
                f = build_frame(root, cfg, FrameRequest(task=q["query"], budget=b), searcher=s)
                covered, quoted, gold_tok = frame_score(ds, scope, f, gold)
                st = STATS.setdefault(b, [0, 0, 0, 0, 0])
                st[0] += 1
                st[1] += covered
                st[2] += quoted
                st[3] += f.tokens
                st[4] += gold_tok
                if covered:
                    got.append(b)
                elif why:
                    notes.setdefault(q["qid"], {})[b] = _why(ds, scope, s, q, gold, f, b)
            out[q["qid"]] = got
    context.git_state = real_state
    return out, notes


def _why(ds: Any, scope: str, s: Any, q: dict[str, Any], gold: set[str], f: Any, b: int) -> str:
    from ncx.query.context import frame_per_doc
    from ncx.query.rank import Filters

    flt = Filters(frozenset({"chunk"}))
    for per_doc, label in ((frame_per_doc(b), "capped"), (0, "uncapped")):
        hits = s.search(q["query"], k=400, filters=flt, per_doc=per_doc)
        cum = 0
        for r, h in enumerate(hits, 1):
            if ds.covered_units(scope, h.source_path, h.start_line, h.end_line) & gold:
                fate = next((d.outcome for d in f.decisions if d.id == h.id), "not offered")
                return (
                    f"gold at rank {r} ({label} per doc), {h.tokens} tok, "
                    f"{cum} tok ranked above; frame: {fate}; {h.source_path}:{h.start_line}"
                )
            cum += h.tokens
    return "gold not in the first 400"


def set_constants(overrides: list[str]) -> None:
    """One thread for the BLAS (steady timings), then each `MODULE.NAME=VALUE` (a JSON
    value, cast to the constant's own type) set on its module: a sweep's override."""
    import importlib

    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    for kv in overrides:
        target, _, value = kv.partition("=")
        module, _, attr = target.rpartition(".")
        mod = importlib.import_module(module)
        setattr(mod, attr, type(getattr(mod, attr))(json.loads(value)))


def chosen_sets(arg: str) -> list[tuple[str, str]]:
    """The (data set, labels) evaluations `--sets` names (full or short names; none: all)."""
    wanted = set(filter(None, arg.split(",")))
    sets = [(d, lab) for d, lab in SETS if not wanted or d in wanted or SHORT[d] in wanted]
    if any(d not in SHORT for d in wanted) and not sets:
        sys.exit(f"unknown set; give some of {', '.join(SHORT.values())}")
    return sets


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--bench-python", default=os.environ.get("NCX_BENCH_PYTHON", sys.executable))
    ap.add_argument("--trees", type=Path, default=Path(tempfile.gettempdir()) / "ncx-suite-trees")
    ap.add_argument("--sets", default="", help="comma-separated set names or short names")
    ap.add_argument("--budgets", default="2000,4000,8000,15000")
    ap.add_argument("--every", type=int, default=1, help="every Nth question (a sample)")
    ap.add_argument("--why", action="store_true", help="explain questions BM25 gets and ncx not")
    ap.add_argument("--json", type=Path, help="also write per-question results here")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="MODULE.NAME=VALUE",
        help="override a module constant for a sweep, e.g. ncx.query.context.FRAME_PER_DOC=5 "
        "(with ncx.query.context.FRAME_DOC_TOKENS=0: that cap at every budget)",
    )
    ap.add_argument("--bm25-only", nargs=2, metavar=("DATASET", "LABELS"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    budgets = [int(x) for x in a.budgets.split(",")]
    if a.bm25_only:
        print(json.dumps(bm25_packed(*a.bm25_only, budgets, a.every)))
        return
    set_constants(a.set)
    sets = chosen_sets(a.sets)
    sys.path.insert(0, str(HERE))
    import suite

    ncx = str(Path(sys.executable).parent / "ncx")
    rows = [
        "| set | system | " + " | ".join(map(str, budgets)) + " |",
        "|---|---|" + "---|" * len(budgets),
    ]
    dump: dict[str, Any] = {}
    quoted_rows = [
        "| set | budget | recall | quoted recall | mean tokens | gold share |",
        "|---|---|---|---|---|---|",
    ]
    for name, labels in sets:
        data = SHARED / "bench-data" / name / "corpus"
        for scope in sorted(p.name for p in data.iterdir() if p.is_dir()):
            suite.build_tree(ncx, data / scope, a.trees / name / scope)
        base = baseline(a.bench_python, a.trees, name, labels, budgets, a.every)
        STATS.clear()
        mine, notes = ncx_frames(a.trees, name, labels, budgets, a.every, a.why)
        n = len(mine)
        tag = f"{SHORT[name]}/{labels}"
        for b in budgets:
            q, rec, quo, tok, gtok = STATS[b]
            line = (
                f"| {tag} (n={n}) | {b} | {rec / q:.3f} | {quo / q:.3f} | {tok / q:,.0f} "
                f"| {gtok / max(1, tok):.3f} |"
            )
            quoted_rows.append(line)
            print(line, flush=True)
        for system, got in (("ncx", mine), ("BM25 packed", base)):
            cells = [f"{sum(b in got[q] for q in mine) / n:.3f}" for b in budgets]
            rows.append(f"| {tag} (n={n}) | {system} | " + " | ".join(cells) + " |")
        print("\n".join(rows[-2:]), flush=True)
        if a.why:
            for qid in mine:
                for b in budgets:
                    if b in base[qid] and b not in mine[qid]:
                        print(f"  lost {qid} @{b}: {notes[qid][b]}", flush=True)
        dump[tag] = {"ncx": mine, "bm25": base}
    print("\n".join(rows))
    print("\n".join(quoted_rows))
    if a.json:
        a.json.write_text(json.dumps(dump))


if __name__ == "__main__":
    main()
