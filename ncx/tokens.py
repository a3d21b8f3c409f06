"""tokens: one offline, deterministic token estimate used for every budget in ncx.

Pure; stdlib only. Calibrated against a real BPE/WordPiece tokenizer (see
benchmarks/token_calibration.py): words cost about one token each, long words
one more per ~6 letters, numbers one per 3 digits, every other symbol one.
"""

from __future__ import annotations

import re

_ALPHA = re.compile(r"[A-Za-z]+")
_LONG = re.compile(r"[A-Za-z]{7,}")
_DIGITS = re.compile(r"\d+")
_OTHER = re.compile(r"[^\sA-Za-z0-9]")


def count_tokens(text: str) -> int:
    """Approximate LLM tokens in `text` (never less than 0; 0 only for blank text).

    Three C-level regex scans and a sum over long words only: frames count often.
    """
    n = len(_ALPHA.findall(text))
    n += sum((len(w) - 1) // 6 for w in _LONG.findall(text))
    n += sum((len(d) + 2) // 3 for d in _DIGITS.findall(text))
    # Non-ASCII characters (CJK, emoji, accents) and punctuation cost about one token each.
    n += len(_OTHER.findall(text))
    return n
