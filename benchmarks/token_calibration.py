"""Calibrate ncx's offline token estimate against a real tokenizer on real docs.

Usage: python benchmarks/token_calibration.py [--tokenizer PATH/tokenizer.json]
Default tokenizer: the bundled model's WordPiece tokenizer (the only real one available
offline). Prints, per data set, the ratio estimate / real over all docs and its spread.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from common import data_path, table

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ncx.tokens import count_tokens  # noqa: E402

SETS = [
    "repo-rust-lang-rfcs",
    "repo-fastapi-en",
    "repo-pydantic-pydantic-ai",
    "repo-cisagov-manage.get.gov",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--tokenizer", default=str(HERE.parent / "ncx/models/ncx-static-v2/tokenizer.json")
    )
    args = ap.parse_args()
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(args.tokenizer)
    tok.no_truncation()
    rows = []
    for name in SETS:
        files = sorted(data_path("bench-data", name, "corpus").rglob("*.md"))[:300]
        est = real = 0
        ratios = []
        for f in files:
            text = f.read_text(encoding="utf-8", errors="replace")
            if len(text) < 200:
                continue
            e = count_tokens(text)
            r = len(tok.encode(text, add_special_tokens=False).ids)
            est += e
            real += r
            ratios.append(e / r)
        rows.append(
            {
                "data set": name,
                "docs": len(ratios),
                "real tokens": f"{real:,}",
                "ncx estimate": f"{est:,}",
                "ratio (all)": f"{est / real:.3f}",
                "ratio p10-p90": f"{statistics.quantiles(ratios, n=10)[0]:.2f}-{statistics.quantiles(ratios, n=10)[-1]:.2f}",
            }
        )
    print(table(rows))


if __name__ == "__main__":
    main()
