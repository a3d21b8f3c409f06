"""tokens: one offline, deterministic token estimate used for every budget in ncx.

Pure; stdlib only. Calibrated against a real BPE/WordPiece tokenizer (see
benchmarks/token_calibration.py): words cost about one token each, long words
one more per ~6 letters, numbers one per 3 digits, every other symbol one.
"""

from __future__ import annotations

import re

# One match per "piece" a subword tokenizer would start a token at.
_PIECE = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def count_tokens(text: str) -> int:
    """Approximate LLM tokens in `text` (never less than 0; 0 only for blank text)."""
    n = 0
    for m in _PIECE.finditer(text):
        piece = m.group()
        c = piece[0]
        if c.isalpha() and c.isascii():
            n += 1 + (len(piece) - 1) // 6
        elif c.isdigit():
            n += (len(piece) + 2) // 3
        else:
            # Non-ASCII characters (CJK, emoji, accents) cost about one token per char.
            n += 1
    return n
