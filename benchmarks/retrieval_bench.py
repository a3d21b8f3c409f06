"""Retrieval quality on raydocs through ../shared/bench/harness.py: ncx beside BM25 and TF-IDF.

Usage: python benchmarks/retrieval_bench.py [--bench-python PATH] [--dataset raydocs]
The harness needs its own venv (../shared/bench/requirements.txt); pass its python with
--bench-python or NCX_BENCH_PYTHON. Prints one markdown table (page and section labels).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import NCX, data_path, table

COLS = ["mrr@10", "ndcg@10", "hit@10", "recall@1024tok", "recall@4096tok", "latency_ms_mean"]


def harness(bench_py: str, out: Path, *args: str) -> dict[str, float]:
    h = data_path("bench", "harness.py")
    proc = subprocess.run(
        [bench_py, str(h), "run", *args, "--out", str(out)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.exit(f"harness failed: {proc.stderr[-2000:]}")
    row = json.loads(next(out.rglob("summary.json")).read_text())["overall"]
    return {c: row.get(c) for c in COLS}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench-python", default=os.environ.get("NCX_BENCH_PYTHON", sys.executable))
    ap.add_argument("--dataset", default="raydocs")
    args = ap.parse_args()
    rows = []
    for labels in ("page", "section"):
        common = ["--dataset", args.dataset, "--labelset", labels]
        for name, extra in (
            ("bm25 (heading chunks)", ["--baseline", "bm25", "--chunking", "heading"]),
            ("tfidf (heading chunks)", ["--baseline", "tfidf", "--chunking", "heading"]),
            (
                "ncx retrieve",
                [
                    "--workdir",
                    "git",
                    "--name",
                    "ncx",
                    "--index-cmd",
                    f"cd {{corpus}} && {NCX} init -q && {NCX} sync -q",
                    "--batch-cmd",
                    f"cd {{corpus}} && {NCX} retrieve --batch --json",
                ],
            ),
        ):
            with tempfile.TemporaryDirectory() as tmp:
                res = harness(args.bench_python, Path(tmp), *common, *extra)
            rows.append({"labels": labels, "system": name, **{c: _fmt(res[c]) for c in COLS}})
    print(table(rows))


def _fmt(v: object) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


if __name__ == "__main__":
    main()
