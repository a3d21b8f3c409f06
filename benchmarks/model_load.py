"""Cold model load + one query embedding in a fresh process, beside interpreter floors.

Usage: python benchmarks/model_load.py [--runs 15] [--model ncx-static-v2]
"""

from __future__ import annotations

import argparse
import sys

from common import median_time, table

LOAD = (
    "from ncx.embedder import load_embedder\n"
    "m = load_embedder({model!r}, sha256='-')\n"
    "m.embed(['how do I configure the retry policy of the client'])\n"
)
VIA_M2V = (
    "import os; os.environ['HF_HUB_OFFLINE'] = '1'\n"
    "from model2vec import StaticModel\n"
    "from ncx.embedder import resolve_model_dir\n"
    "m = StaticModel.from_pretrained(str(resolve_model_dir({model!r})))\n"
    "m.encode(['how do I configure the retry policy of the client'])\n"
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--model", default="ncx-static-v2")
    args = ap.parse_args()
    py = sys.executable
    rows = []
    for label, code in (
        ("python -c pass", "pass"),
        ("python -c 'import numpy'", "import numpy"),
        ("ncx loader: load model + embed one query", LOAD.format(model=args.model)),
        (
            "model2vec StaticModel.from_pretrained + encode (reference)",
            VIA_M2V.format(model=args.model),
        ),
    ):
        t = median_time([py, "-c", code], n=args.runs)
        rows.append({"fresh process": label, f"median of {args.runs}": f"{t * 1000:.0f} ms"})
    print(table(rows))


if __name__ == "__main__":
    main()
