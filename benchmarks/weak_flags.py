"""How often the weak-evidence flag fires on the top result, before and after the
one-shared-word rule (ncx/query/rank.py _coverage): dev questions (in scope) and questions
about subjects the docs never name (out of scope).

Usage: python benchmarks/weak_flags.py [--sets raydocs,repo-fastapi-en] [--trees DIR]
Trees are built as benchmarks/suite.py builds them (kept under --trees for later runs).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from suite import SHARED, build_tree  # noqa: E402

# Questions about things none of the dev corpora documents; each holds one or two common words.
OUT_OF_SCOPE = [
    "kubernetes values",
    "What values should the Kubernetes helm chart use?",
    "recommended JVM heap values",
    "Which values does the Django ORM accept for on_delete?",
    "default values for the nginx ingress annotations",
    "terraform provider configuration values",
    "How do I set the Postgres autovacuum values?",
    "values of the Elasticsearch shard allocation settings",
    "What are good values for the Linux swappiness setting?",
    "Spring Boot actuator endpoint values",
]


def old_confidence(index: object, q_terms: list[str], unit: int) -> float:
    """The confidence before the rule: the idf-weighted share alone."""
    import numpy as np

    from ncx.query.rank import _contains

    lx = index.lex  # type: ignore[attr-defined]
    unknown = float(np.log(1 + (lx.n_units + 0.5) / 0.5))
    total = got = 0.0
    for t in set(q_terms):
        col = lx.vocab.get(t)
        if col is None:
            total += unknown
            continue
        w = float(lx.idf[col])
        total += w
        got += w * bool(_contains(lx, col, np.asarray([unit], dtype=np.int32))[0])
    return got / total if total > 0 else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="raydocs,repo-cisagov-manage.get.gov,repo-fastapi-en")
    ap.add_argument("--trees", default="/tmp/ncx-weak-trees")
    args = ap.parse_args()
    from ncx.config import load_config
    from ncx.query.lexical import terms
    from ncx.query.rank import WEAK_BELOW
    from ncx.query.search import Searcher

    ncx_exe = str(Path(sys.executable).parent / "ncx")
    print("| set | questions | weak before | weak after |")
    print("|---|---|---|---|")
    for name in args.sets.split(","):
        data = SHARED / "bench-data" / name
        tree = Path(args.trees) / name
        build_tree(ncx_exe, data / "corpus", tree)
        os.chdir(tree)
        s = Searcher.open(tree, load_config())
        rows = [json.loads(ln) for ln in (data / "queries.jsonl").read_text().splitlines() if ln]
        for label, questions in (
            ("in scope", [r["query"] for r in rows]),
            ("out of scope", OUT_OF_SCOPE),
        ):
            before = after = 0
            for q in questions:
                hits = s.search(q, k=1)
                if not hits:
                    continue
                after += hits[0].weak
                before += old_confidence(s.index, terms(q), hits[0].unit) < WEAK_BELOW
            n = len(questions)
            print(
                f"| {name} {label} | {n} | {before} ({before / n:.0%}) | {after} ({after / n:.0%}) |"
            )


if __name__ == "__main__":
    main()
