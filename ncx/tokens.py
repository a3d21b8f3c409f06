"""tokens: one offline, deterministic token estimate used for every budget in ncx.

Pure; stdlib only. Calibrated against a real BPE/WordPiece tokenizer (see
benchmarks/token_calibration.py): words cost about one token each, long words
one more per ~6 letters, numbers one per 3 digits, every other symbol one.
"""

from __future__ import annotations

import re

# One scan counts all three kinds: a run of letters costs one token per 6 letters begun
# (1 + (n - 1) // 6, so `[A-Za-z]{1,6}` matches once per token), a run of digits one per 3
# begun, any other visible character one. Non-ASCII digits are digits and symbols both.
_TOKEN = re.compile(r"[A-Za-z]{1,6}|\d{1,3}|[^\sA-Za-z0-9]")
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")


def count_tokens(text: str) -> int:
    """Approximate LLM tokens in `text` (never less than 0; 0 only for blank text).

    One C-level regex scan (a second one only for non-ASCII text): frames and the chunker
    count often, a large tree's first sync counts 100 MB.
    """
    n = len(_TOKEN.findall(text))
    if not text.isascii():
        n += len(_OTHER_DIGIT.findall(text))
    return n
