"""Initial and incremental `ncx sync` on the rust-lang/rfcs tree, plus CLI floor timings.

Usage: python benchmarks/sync_bench.py [--runs 10]
Prints a markdown table; every time is wall clock of a fresh process.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from common import NCX, data_path, dir_size, git_repo_from, median_time, run, table

IMPORT_PROBE = (
    "import sys, runpy; sys.argv = ['ncx'] + sys.argv[1:];\n"
    "try:\n    runpy.run_module('ncx', run_name='__main__')\nexcept SystemExit:\n    pass\n"
    "heavy = sorted(m for m in ('numpy', 'scipy', 'model2vec', 'git', 'tokenizers', 'safetensors') if m in sys.modules)\n"
    "print('HEAVY=' + ','.join(heavy), file=sys.stderr)"
)


def heavy_imports(args: list[str], cwd: Path) -> str:
    _, proc = run([sys.executable, "-c", IMPORT_PROBE, *args], cwd=cwd)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("HEAVY=")]
    return line[-1][6:] or "none" if line else "?"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--dataset", default="repo-rust-lang-rfcs")
    args = ap.parse_args()
    root = git_repo_from(data_path("bench-data", args.dataset, "corpus", "all"))
    rows = []
    py_floor = median_time([sys.executable, "-c", "pass"], n=args.runs)
    np_floor = median_time([sys.executable, "-c", "import numpy"], n=args.runs)
    rows.append({"what": "python -c pass", "seconds": f"{py_floor:.3f}", "notes": "floor"})
    rows.append(
        {"what": "python -c 'import numpy'", "seconds": f"{np_floor:.3f}", "notes": "floor"}
    )
    dt, proc = run([NCX, "init"], cwd=root)
    assert proc.returncode == 0, proc.stderr
    rows.append({"what": "ncx init", "seconds": f"{dt:.2f}", "notes": ""})
    dt, proc = run([NCX, "sync", "--json"], cwd=root)
    assert proc.returncode in (0, 1), proc.stderr
    rep = json.loads(proc.stdout)
    size = dir_size(root / ".neocortex" / "chunks")
    rows.append(
        {
            "what": "ncx sync (first)",
            "seconds": f"{dt:.2f}",
            "notes": f"{rep['docs']} docs, {rep['chunks']} chunks, {len(rep['written'])} files written, "
            f"chunks/ {size / 1e6:.1f} MB, {len(rep['problems'])} problems",
        }
    )
    dt, proc = run([NCX, "sync", "--json"], cwd=root)
    rep2 = json.loads(proc.stdout)
    rows.append(
        {
            "what": "ncx sync (second, no change)",
            "seconds": f"{dt:.2f}",
            "notes": f"{len(rep2['written'])} files written",
        }
    )
    # a fresh clone has no cache: the second sync must still write nothing
    (root / ".neocortex" / "cache" / "sync-state.json").unlink()
    dt, proc = run([NCX, "sync", "--json"], cwd=root)
    rows.append(
        {
            "what": "ncx sync (no change, cache deleted)",
            "seconds": f"{dt:.2f}",
            "notes": f"{len(json.loads(proc.stdout)['written'])} files written",
        }
    )
    docs = sorted(p for p in root.glob("text/*.md"))[:1] or sorted(root.rglob("*.md"))[:1]
    d = docs[0]
    d.write_text(
        d.read_text() + "\n\n## Appended section\n\nA new paragraph about borrow checking.\n"
    )
    dt, proc = run([NCX, "sync", "--json"], cwd=root)
    rows.append(
        {
            "what": "ncx sync (one doc edited)",
            "seconds": f"{dt:.2f}",
            "notes": f"{len(json.loads(proc.stdout)['written'])} files written",
        }
    )
    for label, cmd in (("ncx --help", ["--help"]), ("ncx status", ["status"])):
        t = median_time([NCX, *cmd], n=args.runs, cwd=root)
        rows.append(
            {
                "what": f"{label} (median of {args.runs})",
                "seconds": f"{t:.3f}",
                "notes": "heavy imports: " + heavy_imports(cmd, root),
            }
        )
    _, proc = run(["git", "status", "--porcelain"], cwd=root)
    print(table(rows))
    print(f"\n.neocortex/ total {dir_size(root / '.neocortex') / 1e6:.1f} MB; repo at {root}")


if __name__ == "__main__":
    main()
