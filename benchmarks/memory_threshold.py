"""When does a memory earn its place in a frame? The relevance threshold of frame learnings.

Usage: python benchmarks/memory_threshold.py [--unrelated 100]

The memories of benchmarks/memory_bench.py (ADR facts of cisagov/manage.get.gov, one memory
each) are searched as a frame searches them (`Searcher.search`, kind memory, k 12) for
 - related tasks: memory_bench's fact questions (gold: the memory the question is about);
 - unrelated tasks: raydocs questions (about Ray; no ADR memory helps them).
For each threshold on a hit's confidence (the idf-weighted share of the task's terms the
memory holds, `Hit.confidence`), it prints the share of related questions whose gold memory
passes it, and the share of unrelated tasks that would still get a memory. Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import memory_bench  # noqa: E402
from common import SHARED, data_path  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--unrelated", type=int, default=100)
    a = ap.parse_args()
    from ncx.config import load_config
    from ncx.query.rank import Filters
    from ncx.query.search import Searcher

    model = str(HERE.parent / "ncx" / "models" / "ncx-static-v2")
    facts = memory_bench.load_facts(data_path(*memory_bench.ADR_DIR))
    fact_q, _ = memory_bench.questions(facts)
    root, ids, _ = memory_bench.build_tree(facts, model, False)
    cfg = load_config({**os.environ, "NCX_EMBEDDING_MODEL": model})
    s = Searcher.open(root, cfg)
    flt = Filters(frozenset({"memory"}))
    related: list[float] = []  # the gold memory's confidence (-1: not in the 12)
    for q in fact_q:
        hits = s.search(str(q["query"]), k=12, filters=flt)
        gold = set(q["gold"])  # type: ignore[call-overload]
        related.append(next((h.confidence for h in hits if ids.get(h.id) in gold), -1.0))
    ray = SHARED / "bench-data" / "raydocs" / "queries.jsonl"
    lines = ray.read_text().splitlines()[: a.unrelated]
    unrelated: list[float] = []  # the best confidence of any memory found
    for ln in lines:
        hits = s.search(json.loads(ln)["query"], k=12, filters=flt)
        unrelated.append(max((h.confidence for h in hits), default=-1.0))
    print(f"{len(related)} related (fact) questions, {len(unrelated)} unrelated (raydocs) tasks\n")
    print("| confidence >= | related: gold memory kept | unrelated: a memory shown |")
    print("|---|---|---|")
    for t in (0.0, 0.1, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6):
        kept = sum(c >= t for c in related) / len(related)
        leak = sum(c >= t for c in unrelated) / len(unrelated)
        print(f"| {t:.2f} | {kept:.3f} | {leak:.3f} |")


if __name__ == "__main__":
    main()
