"""How `ncx retrieve` (no --kind) merges docs and code: the weight of a code hit's evidence.

Two sides, both with docs and code in one tree:
- docs questions: repo-fastapi-en's 300 known-section questions over fastapi's docs/en AND its
  Python (the package, docs_src, tests) at the set's commit; docs MRR@10 of the merged list
  (a code hit never answers, so it can only push the gold section down). Needs a fastapi
  clone holding that commit: --fastapi PATH (the data set itself keeps only the docs).
- commit tasks: every 3rd task of code-requests, code-rich and code-starlette, in their parent
  trees with `ncx init && ncx sync`; file recall@10 of the code inside the merged top 10, and
  the median rank of the first gold file.

Each query's docs hits and code hits are computed once with this checkout's ncx; the merge is
then replayed for every weight (ncx.query.fuse.interleave).

    python benchmarks/interleave_sweep.py --fastapi /path/to/fastapi --work /tmp/interleave
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("NCX_SHARED", ROOT.parent / "shared"))
FASTAPI_COMMIT = "c3f316b7e814667e8ee81e03a7330d00ee61e45c"
WEIGHTS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)


def tree(dest: Path, fill: list[str]) -> None:
    if (dest / ".neocortex" / "manifest.json").exists():
        return
    dest.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@e",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@e",
    }
    arch = subprocess.run(fill, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=arch, check=True)
    for args in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "commit", "-qm", "t", "--no-verify"],
    ):
        subprocess.run(args, cwd=dest, env=env, check=True, capture_output=True)
    for cmd in (["init"], ["sync", "-q"]):
        subprocess.run([sys.executable, "-m", "ncx", *cmd], cwd=dest, env=env, capture_output=True)


def hits(root: Path, query: str) -> tuple[list, list]:
    from ncx.code.search import CodeSearcher, best_per_file
    from ncx.config import load_config
    from ncx.query.rank import Filters
    from ncx.query.search import Searcher

    s = Searcher.open(root, load_config())
    d = s.search(query, k=10, filters=Filters(frozenset({"chunk", "memory"})))
    c = best_per_file(CodeSearcher(root).search(query, files=10))
    return (
        [(h.score, h.confidence, ("doc", h.source_path, h.start_line, h.end_line)) for h in d],
        [(h.file_score, h.confidence, ("code", h.path, h.start, h.end)) for h in c],
    )


def main() -> None:
    from ncx.query.fuse import interleave

    ap = argparse.ArgumentParser()
    ap.add_argument("--fastapi", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/interleave"))
    a = ap.parse_args()
    ds = SHARED / "bench-data" / "repo-fastapi-en"
    fa = a.work / "fastapi"
    git = ["git", f"--git-dir={a.fastapi / '.git' if (a.fastapi / '.git').exists() else a.fastapi}"]
    tree(fa, [*git, "archive", FASTAPI_COMMIT, "docs/en", "fastapi", "docs_src", "tests"])
    units = {u["unit"]: u for u in map(json.loads, (ds / "units.jsonl").read_text().splitlines())}
    queries = [json.loads(x) for x in (ds / "queries.jsonl").read_text().splitlines() if x.strip()]
    docs_rows = [(q, hits(fa, q["query"])) for q in queries]
    tasks = []
    for name in ("code-requests", "code-rich", "code-starlette"):
        data = SHARED / "bench-data" / name
        for t in [json.loads(x) for x in (data / "tasks.jsonl").read_text().splitlines()][::3]:
            dest = a.work / name / t["parent"][:12]
            tree(dest, ["git", f"--git-dir={data / 'repo.git'}", "archive", t["parent"]])
            tasks.append((t, hits(dest, t["task"])))

    def covers(r: tuple, gold: list[str]) -> bool:
        _, path, start, end = r
        return any(
            units[g]["path"] == path
            and start is not None
            and not (end < units[g]["start"] or start > units[g]["end"])
            for g in gold
        )

    print(
        "| code weight | fastapi docs MRR@10 (docs alone: see first row) | commit tasks: code file R@10 in the merged top 10 | median rank of the first gold file |"
    )
    print("|---|---|---|---|")
    alone = sum(
        next(
            (1 / (i + 1) for i, r in enumerate(d[:10]) if covers(r[2], q["gold"]["known_item"])),
            0.0,
        )
        for q, (d, _) in docs_rows
    ) / len(docs_rows)
    print(f"| docs alone | {alone:.4f} | – | – |")
    for w in WEIGHTS:
        mrr = 0.0
        for q, (d, c) in docs_rows:
            merged = interleave(d, c, 10, code_weight=w)
            mrr += next(
                (
                    1 / (i + 1)
                    for i, r in enumerate(merged)
                    if r[0] == "doc" and covers(r, q["gold"]["known_item"])
                ),
                0.0,
            )
        rec, ranks = 0.0, []
        for t, (d, c) in tasks:
            merged = interleave(d, c, 10, code_weight=w)
            files = [r[1] for r in merged if r[0] == "code"]
            rec += len(set(files) & set(t["gold"])) / min(10, len(t["gold"]))
            ranks.append(
                next(
                    (i + 1 for i, r in enumerate(merged) if r[0] == "code" and r[1] in t["gold"]),
                    11,
                )
            )
        print(
            f"| {w} | {mrr / len(docs_rows):.4f} | {rec / len(tasks):.3f} | {statistics.median(ranks)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
