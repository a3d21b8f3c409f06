"""The quick answer on a fresh clone (ncx.query.cache.quick_index) beside the full index.

A large tree with no search cache yet answers its first query from the few hundred units
that share the query's words (found by `git grep`), while the real cache is built in the
background. This measures what that costs in quality and time, on the large tree that
`large_tree.py` builds (copy1/<set>/... holds each data set's docs unchanged):

    python benchmarks/quick_path.py --tree /tmp/ncx-large/tree --limit 60

For every question of each set: the page-level rank of the gold page among the top 10
results, through the full index (built once, warm) and through a quick index built for that
question alone; how often the two agree on the top result; and the time to build the quick
index (in process: no interpreter start, no model load). Medians, not means.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from common import data_path

from ncx.config import load_config
from ncx.query.cache import Index, load_index, quick_index
from ncx.query.search import Searcher

SETS = {  # data set -> the label set whose file part names the gold page
    "raydocs": "page",
    "repo-rust-lang-rfcs": "known_item",
    "repo-fastapi-en": "known_item",
    "repo-pydantic-pydantic-ai": "known_item",
    "repo-cisagov-manage.get.gov": "known_item",
}


def gold_pages(q: dict[str, object], labels: str, prefix: str) -> set[str]:
    gold = q["gold"]
    assert isinstance(gold, dict)
    out = set()
    for g in gold.get(labels, []):
        path = str(g).split(":", 1)[1].split("#", 1)[0]
        out.add(f"{prefix}/{path}")
    return out


def rank_of(hits: list[str], gold: set[str]) -> int | None:
    for i, path in enumerate(hits[:10], 1):
        if path in gold:
            return i
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True, help="a synced large tree (committed)")
    ap.add_argument("--limit", type=int, default=60, help="questions per set (0: all)")
    ap.add_argument("--json-out", type=Path)
    a = ap.parse_args()
    root = a.tree.resolve()
    cfg = load_config()
    full = Searcher(root, cfg, load_index(root))
    rows = []
    for name, labels in SETS.items():
        queries = [
            json.loads(line)
            for line in data_path("bench-data", name, "queries.jsonl").read_text().splitlines()
            if line.strip()
        ]
        if a.limit:
            queries = queries[: a.limit]
        rr_full, rr_quick, agree, ms = [], [], 0, []
        for q in queries:
            text = str(q["query"])
            gold = gold_pages(q, labels, f"copy1/{name}")
            got_full = [h.source_path for h in full.search(text, k=10)]
            t = time.perf_counter()
            idx: Index | None = quick_index(root, text)
            ms.append((time.perf_counter() - t) * 1000)
            quick = Searcher(root, cfg, idx) if idx is not None else full
            got_quick = [h.source_path for h in quick.search(text, k=10)]
            for got, rr in ((got_full, rr_full), (got_quick, rr_quick)):
                r = rank_of(got, gold)
                rr.append(1 / r if r else 0.0)
            agree += bool(got_full and got_quick and got_full[0] == got_quick[0])
        n = len(queries)
        rows.append(
            {
                "set": name,
                "questions": n,
                "mrr10_full": round(sum(rr_full) / n, 3),
                "mrr10_quick": round(sum(rr_quick) / n, 3),
                "hit10_full": round(sum(r > 0 for r in rr_full) / n, 3),
                "hit10_quick": round(sum(r > 0 for r in rr_quick) / n, 3),
                "top1_same": round(agree / n, 3),
                "quick_ms_median": round(statistics.median(ms), 1),
                "quick_ms_max": round(max(ms), 1),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    print()
    print(
        "| set | questions | page MRR@10 full | quick | hit@10 full | quick | same top-1 | quick index ms (median / max) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['set']} | {r['questions']} | {r['mrr10_full']} | {r['mrr10_quick']} | "
            f"{r['hit10_full']} | {r['hit10_quick']} | {r['top1_same']} | "
            f"{r['quick_ms_median']} / {r['quick_ms_max']} |"
        )
    if a.json_out:
        a.json_out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
