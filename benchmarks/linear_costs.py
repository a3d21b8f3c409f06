"""Costs that grew faster than the input (issue 29): a table of sizes and times, each case at
growing sizes, through the real CLI in fresh processes (wall time and peak RSS of the
command measured, not of the setup).

Cases:
- repeated: a doc of N identical lines; the first `retrieve` (cache build) after `sync`
- heading: a heading of N characters over a 3,000-paragraph section; `sync` and the bytes
  of its chunk file
- notebook: N markdown cells saved one string per cell (not nbformat's one string per line);
  `sync`
- query: a query of N MB through `retrieve --batch`

Usage: python benchmarks/linear_costs.py [--checkout PATH] [--quick]
`--checkout` runs another ncx checkout (e.g. a worktree of main) for the before column.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import as_installed  # (and no measured process compiles ncx: common's note)

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))


def _run(
    root: Path, checkout: Path, model: Path, *args: str, stdin: str | None = None
) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of `python -m ncx ARGS` in `root`."""
    env = {
        **os.environ,
        "PYTHONPATH": str(checkout),
        "NCX_EMBEDDING_MODEL": str(model),
        "HOME": str(root.parent / "home"),
        # Past the 4 MB default, so the largest docs are measured rather than refused.
        "NCX_MAX_DOC_BYTES": str(64_000_000),
    }
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ncx", *args],
        cwd=root,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    return took, usage.ru_maxrss / 1024


def _repo(base: Path, checkout: Path, model: Path, files: dict[str, str]) -> Path:
    root = base / "proj"
    root.mkdir()
    git = ["git", "-c", "user.email=b@ncx.invalid", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    _run(root, checkout, model, "init", "-q")
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "docs", "--no-verify"], cwd=root, check=True)
    return root


def repeated(n: int) -> dict[str, str]:
    return {"rep.md": "# Rep\n\n" + "The same line about the cache and the index.\n" * n}


def heading(n: int) -> dict[str, str]:
    head = " ".join(f"word{i % 50}" for i in range(n // 5))[:n]
    paras = "".join(f"Paragraph {i} says something about the cache.\n\n" for i in range(3000))
    return {"h.md": f"# Top\n\n## {head}\n\n{paras}"}


def notebook(n: int) -> dict[str, str]:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": f"## Cell {i}\n\nText of cell {i}."}
        for i in range(n)
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return {"nb.ipynb": json.dumps(nb, indent=1)}


def big_query(mb: float) -> str:
    rng = random.Random(0)
    words = "install cache index config service token retry deploy commit hook".split()
    parts, size = [], 0
    while size < mb * 1_000_000:
        w = f"{rng.choice(words)}{rng.randint(0, 99_999)}"
        parts.append(w)
        size += len(w) + 1
    return json.dumps({"qid": 1, "query": " ".join(parts), "k": 3}) + "\n"


def case(
    name: str,
    sizes: list[float],
    unit: str,
    make: Callable[[Path, float], tuple[float, float, str]],
) -> list[tuple[str, str, float, float, str]]:
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="ncx-linear-") as tmp:
            took, rss, extra = make(Path(tmp), size)
        label = f"{size:g} {unit}"
        rows.append((name, label, took, rss, extra))
        print(f"  {name:<9} {label:>14}  {took:7.2f} s  {rss:7.0f} MB  {extra}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkout", type=Path, default=HERE, help="the ncx checkout to run")
    ap.add_argument("--quick", action="store_true", help="the two smallest sizes of each case")
    args = ap.parse_args()
    as_installed(checkout=args.checkout)
    from conftest import build_tiny_model

    checkout = args.checkout.resolve()
    with tempfile.TemporaryDirectory(prefix="ncx-linear-model-") as mtmp:
        model = build_tiny_model(Path(mtmp) / "model")

        def cut(sizes: list[float]) -> list[float]:
            return sizes[:2] if args.quick else sizes

        def build(tmp: Path, n: float, files: dict[str, str], *cmd: str) -> tuple[float, float]:
            root = _repo(tmp, checkout, model, files)
            _run(root, checkout, model, "sync", "-q")
            return _run(root, checkout, model, *cmd)

        def do_repeated(tmp: Path, n: float) -> tuple[float, float, str]:
            took, rss = build(tmp, n, repeated(int(n)), "retrieve", "cache index")
            return took, rss, "retrieve (cold cache)"

        def do_heading(tmp: Path, n: float) -> tuple[float, float, str]:
            root = _repo(tmp, checkout, model, heading(int(n)))
            took, rss = _run(root, checkout, model, "sync", "-q")
            size = (root / ".neocortex/chunks/h.md").stat().st_size
            return took, rss, f"sync; chunk file {size / 1e6:.2f} MB"

        def do_notebook(tmp: Path, n: float) -> tuple[float, float, str]:
            root = _repo(tmp, checkout, model, notebook(int(n)))
            took, rss = _run(root, checkout, model, "sync", "-q")
            return took, rss, "sync"

        def do_query(tmp: Path, mb: float) -> tuple[float, float, str]:
            root = _repo(tmp, checkout, model, repeated(200))
            _run(root, checkout, model, "sync", "-q")
            _run(root, checkout, model, "retrieve", "cache")  # the cache, built beforehand
            took, rss = _run(root, checkout, model, "retrieve", "--batch", stdin=big_query(mb))
            return took, rss, "retrieve --batch"

        print(f"ncx checkout: {checkout}")
        print(f"  {'case':<9} {'size':>14}  {'time':>9}  {'peak RSS':>10}  what")
        rows = []
        rows += case("repeated", cut([20_000, 40_000, 80_000, 300_000]), "lines", do_repeated)
        rows += case("heading", cut([50_000, 100_000, 200_000]), "chars", do_heading)
        rows += case("notebook", cut([2_000, 4_000, 8_000, 15_000]), "cells", do_notebook)
        rows += case("query", cut([1, 3, 10]), "MB", do_query)
    print()
    print("| case | size | time (s) | peak RSS (MB) | what |")
    print("|---|---:|---:|---:|---|")
    for name, label, took, rss, extra in rows:
        print(f"| {name} | {label} | {took:.2f} | {rss:.0f} | {extra} |")


if __name__ == "__main__":
    main()
