"""A fresh clone's first frame beside the warm one: how often are they the same?

Usage: NCX_SHARED=../shared python benchmarks/cold_frames.py TREE --set NAME [--limit N]

TREE is a synced tree of 5,000 units or more (`cache.QUICK_FROM`: below that a fresh clone
builds its whole cache for the first query, and the two frames are the same by
construction), NAME the data set whose questions are asked (e.g. the suite's
repo-rust-lang-rfcs tree and set). For each question the default frame (what `ncx assemble
--task Q` gives) is built from the quick index a fresh clone answers its first query from
(`cache.quick_index`) and from the full cache, and compared: byte-identical markdown, the
same quoted items (path and lines) in any order, and the share of the warm frame's items the
cold one quotes too. Medians and counts; prints one markdown table row.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from common import data_path


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--set", required=True)
    ap.add_argument("--limit", type=int, default=100, help="questions (0: all)")
    a = ap.parse_args()

    from ncx.config import load_config
    from ncx.query.cache import load_index, quick_index
    from ncx.query.context import FrameRequest, build_frame
    from ncx.query.search import Searcher

    root = a.tree.resolve()
    cfg = load_config()
    warm = Searcher(root, cfg, load_index(root))
    lines = data_path("bench-data", a.set, "queries.jsonl").read_text().splitlines()
    queries = [json.loads(ln)["query"] for ln in lines if ln.strip()]
    queries = queries[: a.limit] if a.limit else queries
    same = same_items = 0
    shares = []
    git_lines: list[str] = []
    for q in queries:
        req = FrameRequest(task=q)
        idx = quick_index(root, q)
        cold = Searcher(root, cfg, idx) if idx is not None else warm
        frames = [build_frame(root, cfg, req, s, git_lines=git_lines) for s in (cold, warm)]
        items = [
            {
                (p.item.source_path, p.item.start_line, p.item.end_line)
                for z in f.zones.values()
                for p in z
            }
            for f in frames
        ]
        same += frames[0].markdown == frames[1].markdown
        same_items += items[0] == items[1]
        shares.append(len(items[0] & items[1]) / max(1, len(items[1])))
    n = len(queries)
    print(
        "| set | questions | cold frame = warm frame | same items | warm items in the cold frame (median) |"
    )
    print("|---|---|---|---|---|")
    print(f"| {a.set} | {n} | {same}/{n} | {same_items}/{n} | {statistics.median(shares):.2f} |")


if __name__ == "__main__":
    main()
