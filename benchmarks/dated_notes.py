"""Can a frame answer "when"? LoCoMo notes carry their date in frontmatter, not in their text.

Usage: NCX_SHARED=../shared python benchmarks/dated_notes.py [--trees DIR] [--budget B]

For every temporal question (LoCoMo category 2) of locomo-memories-dev: the default frame
(`ncx assemble --task Q`, built in process over the trees `benchmarks/suite.py` syncs), and
whether it quotes a gold note and whether it also shows that note's frontmatter date (the
text a "when" question needs: "Caroline attended an LGBTQ support group recently" says
nothing of May 2023). Mean frame tokens beside. Prints one markdown table row.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from suite import SHARED

SET = "locomo-memories-dev"


def gold_notes(scope: str, gold: list[str]) -> dict[str, str]:
    """{note path: its frontmatter date} of the gold evidence units."""
    units = [json.loads(ln) for ln in (SHARED / "bench-data" / SET / "units.jsonl").open()]
    paths = {u["path"] for u in units if u["scope"] == scope and u["unit"] in gold}
    out = {}
    for p in paths:
        text = (SHARED / "bench-data" / SET / "corpus" / scope / p).read_text()
        date = next((ln[6:].strip() for ln in text.splitlines() if ln.startswith("date: ")), "")
        out[p] = date
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--trees", type=Path, default=Path("/tmp/ncx-suite-trees"))
    ap.add_argument("--budget", type=int, default=None, help="default: a user's (none)")
    args = ap.parse_args()

    from ncx.config import load_config
    from ncx.query.context import FrameRequest, build_frame
    from ncx.query.search import Searcher

    cfg = load_config()
    qs = [json.loads(ln) for ln in (SHARED / "bench-data" / SET / "queries.jsonl").open()]
    qs = [q for q in qs if q["meta"].get("category") == 2]
    searchers: dict[str, Searcher] = {}
    quoted = dated = 0
    tokens = []
    for q in qs:
        root = args.trees / SET / q["scope"]
        s = searchers.get(q["scope"]) or searchers.setdefault(q["scope"], Searcher.open(root, cfg))
        req = FrameRequest(task=q["query"], **({"budget": args.budget} if args.budget else {}))
        f = build_frame(root, cfg, req, searcher=s)
        tokens.append(f.tokens)
        notes = gold_notes(q["scope"], q["gold"]["evidence"])
        hit = [p for p in notes if f"`{p}:" in f.markdown]
        quoted += bool(hit)
        dated += any(notes[p] and notes[p] in f.markdown for p in hit)
    n = len(qs)
    print("| temporal questions | gold note quoted | ... with its date | mean tokens |")
    print("|---|---|---|---|")
    print(f"| {n} | {quoted / n:.3f} | {dated / n:.3f} | {statistics.mean(tokens):,.0f} |")


if __name__ == "__main__":
    main()
