"""The development suite in one run: ncx retrieve beside BM25 (and TF-IDF) on every dev set.

Usage: python benchmarks/suite.py [--bench-python PATH] [--trees DIR] [--sets a,b] [--tfidf]
                                  [--env NCX_W_DENSE=0.3 ...] [--json OUT]

Eight evaluations: raydocs (page and section labels), the four repo-* sets (known
sections), locomo-memories-dev and locomo-sessions-dev (evidence). Each scope of a set is
copied once into a git repo under --trees (default /tmp/ncx-suite-trees) and synced with
`ncx init && ncx sync`; later runs reuse it, so a parameter sweep re-runs only retrieval
(`ncx retrieve --batch --json`, parameters through NCX_* variables, see ncx/config.py).
Baseline runs are cached beside the trees (they depend on nothing of ncx). Scoring is the
harness's own (../shared/bench/harness.py), k = 100. Prints one markdown table with a
macro-average row per system.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("NCX_SHARED", HERE.parent.parent / "shared"))
NCX = str(Path(sys.executable).parent / "ncx")

SUITE = [
    ("raydocs", "page"),
    ("raydocs", "section"),
    ("repo-rust-lang-rfcs", "known_item"),
    ("repo-fastapi-en", "known_item"),
    ("repo-pydantic-pydantic-ai", "known_item"),
    ("repo-cisagov-manage.get.gov", "known_item"),
    ("locomo-memories-dev", "evidence"),
    ("locomo-sessions-dev", "evidence"),
]
SHORT = {
    "raydocs": "raydocs",
    "repo-rust-lang-rfcs": "rfcs",
    "repo-fastapi-en": "fastapi",
    "repo-pydantic-pydantic-ai": "pydantic-ai",
    "repo-cisagov-manage.get.gov": "get.gov",
    "locomo-memories-dev": "locomo-mem",
    "locomo-sessions-dev": "locomo-sess",
}
COLS = ["mrr@10", "ndcg@10", "hit@10", "hit@100", "recall@1024tok", "recall@4096tok"]


def build_tree(ncx: str, corpus: Path, dest: Path) -> None:
    """A one-commit git copy of a scope's corpus, synced by ncx; kept for later runs."""
    if (dest / ".neocortex" / "manifest.json").exists() and (dest / ".suite-done").exists():
        return
    subprocess.run(["rm", "-rf", str(dest)], check=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-r", str(corpus), str(dest)], check=True)
    git = ["git", "-c", "user.email=b@e", "-c", "user.name=b"]
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["commit", "-qm", "corpus", "--no-verify"],
    ):
        subprocess.run([*git, *args], cwd=dest, check=True, stdout=subprocess.DEVNULL)
    for args in (["init", "-q"], ["sync", "-q"]):
        subprocess.run([ncx, *args], cwd=dest, check=True, stdout=subprocess.DEVNULL)
    (dest / ".suite-done").write_text("")


def harness(bench_py: str, *args: str) -> dict[str, float]:
    h = SHARED / "bench" / "harness.py"
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [bench_py, str(h), "run", *args, "--k", "100", "--out", tmp],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            sys.exit(f"harness failed ({' '.join(args[:4])}): {proc.stderr[-2000:]}")
        overall: dict[str, float] = json.loads((Path(tmp) / "summary.json").read_text())["overall"]
    return overall


def baseline(bench_py: str, trees: Path, ds: str, labels: str, name: str) -> dict[str, float]:
    cache = trees / "_baselines" / f"{ds}.{labels}.{name}.json"
    if cache.exists():
        cached: dict[str, float] = json.loads(cache.read_text())
        return cached
    row = harness(
        bench_py, "--dataset", ds, "--labelset", labels, "--baseline", name, "--chunking", "heading"
    )
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(row))
    return row


def ncx_run(bench_py: str, trees: Path, ds: str, labels: str, ncx: str) -> dict[str, float]:
    data = SHARED / "bench-data" / ds / "corpus"
    for scope in sorted(p.name for p in data.iterdir() if p.is_dir()):
        build_tree(ncx, data / scope, trees / ds / scope)
    batch = (
        f"cd {shlex.quote(str(trees / ds))}/{{scope}} && {shlex.quote(ncx)} retrieve --batch --json"
    )
    return harness(
        bench_py, "--dataset", ds, "--labelset", labels, "--name", "ncx", "--batch-cmd", batch
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--bench-python", default=os.environ.get("NCX_BENCH_PYTHON", sys.executable))
    ap.add_argument("--trees", type=Path, default=Path(tempfile.gettempdir()) / "ncx-suite-trees")
    ap.add_argument("--ncx", default=NCX, help="the ncx executable [default: beside this python]")
    ap.add_argument("--sets", default="", help="comma-separated data set names (default: all)")
    ap.add_argument("--tfidf", action="store_true", help="also the TF-IDF baseline")
    ap.add_argument("--no-bm25", action="store_true", help="ncx rows only")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for ncx (repeatable)")
    ap.add_argument("--json", type=Path, help="also write all rows as JSON here")
    args = ap.parse_args()
    for kv in args.env:
        name, _, value = kv.partition("=")
        os.environ[name] = value
    wanted = set(filter(None, args.sets.split(",")))
    suite = [(d, lab) for d, lab in SUITE if not wanted or d in wanted or SHORT[d] in wanted]
    systems = ["ncx"] + ([] if args.no_bm25 else ["bm25"]) + (["tfidf"] if args.tfidf else [])
    rows: dict[str, list[dict[str, float]]] = {s: [] for s in systems}
    for ds, labels in suite:
        for s in systems:
            if s == "ncx":
                r = ncx_run(args.bench_python, args.trees, ds, labels, args.ncx)
            else:
                r = baseline(args.bench_python, args.trees, ds, labels, s)
            rows[s].append(
                {c: float(r.get(c) or 0.0) for c in COLS}
                | {"ms": float(r.get("latency_ms_mean") or 0)}
            )
    print(render(suite, systems, rows))
    if args.json:
        names = [f"{SHORT[d]}/{lab}" for d, lab in suite]
        args.json.write_text(
            json.dumps({s: dict(zip(names, rows[s], strict=True)) for s in systems}, indent=1)
        )


def render(
    suite: list[tuple[str, str]], systems: list[str], rows: dict[str, list[dict[str, float]]]
) -> str:
    out = ["| set | system | " + " | ".join(COLS) + " | ms/q |", "|" + "---|" * (len(COLS) + 3)]
    for i, (ds, labels) in enumerate(suite):
        for s in systems:
            r = rows[s][i]
            out.append(
                f"| {SHORT[ds]}/{labels} | {s} | "
                + " | ".join(f"{r[c]:.3f}" for c in COLS)
                + f" | {r['ms']:.1f} |"
            )
    for s in systems:
        macro = {c: sum(r[c] for r in rows[s]) / len(rows[s]) for c in COLS}
        out.append(
            f"| **macro ({len(suite)})** | {s} | "
            + " | ".join(f"{macro[c]:.3f}" for c in COLS)
            + " | |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    main()
