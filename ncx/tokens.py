"""tokens: one offline, deterministic token estimate used for every budget in ncx.

Pure; stdlib only. Calibrated against a real BPE/WordPiece tokenizer (see
benchmarks/token_calibration.py): words cost about one token each, long words
one more per ~6 letters, numbers one per 3 digits, every other symbol one.
"""

from __future__ import annotations

import re

# The rule, as one scan: a run of letters costs one token per 6 letters begun
# (1 + (n - 1) // 6, so `[A-Za-z]{1,6}` matches once per token), a run of digits one per 3
# begun, any other visible character one. Non-ASCII digits are digits and symbols both.
_TOKEN = re.compile(r"[A-Za-z]{1,6}|\d{1,3}|[^\sA-Za-z0-9]")
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")
_UNUSUAL = re.compile(r"[\s\d]")  # run on the non-ASCII characters only


def _kind(byte: int) -> str:
    """A UTF-8 byte's kind for the count: 'a' letter, '0' digit, '.' symbol, ' ' nothing
    (space, or the continuation byte of a multi-byte character, whose lead byte is its
    one symbol). ASCII bytes are classed by _TOKEN's own classes, so they cannot differ."""
    if byte >= 0x80:
        return "." if byte >= 0xC0 else " "
    c = chr(byte)
    if re.match(r"[A-Za-z]", c):
        return "a"
    if re.match(r"\d", c):
        return "0"
    return " " if re.match(r"\s", c) else "."


_KINDS = "".join(_kind(i) for i in range(256))
_LETTERS = _KINDS.replace("0", " ").replace(".", " ").encode()  # translate tables
_DIGITS = _KINDS.replace("a", " ").replace(".", " ").encode()
_NOT_SYMBOL = bytes(i for i, k in enumerate(_KINDS) if k != ".")  # bytes to delete
_ASCII = bytes(range(0x80))


def count_tokens(text: str) -> int:
    """Approximate LLM tokens in `text` (never less than 0; 0 only for blank text).

    Counted with bytes.translate / replace / count, C loops over the UTF-8 bytes that make
    no object per token: 2.7x faster than a regex match per token, and a large tree's first
    sync counts 50 MB. Text with a non-ASCII space or digit takes the regex (_TOKEN), which
    is the rule; tests/test_chunker.py checks both against it.
    """
    if text.isascii():
        data = text.encode("ascii")
    else:
        data = text.encode("utf-8", "surrogatepass")  # a lone surrogate is one symbol
        if _UNUSUAL.search(data.translate(None, _ASCII).decode("utf-8", "surrogatepass")):
            return len(_TOKEN.findall(text)) + len(_OTHER_DIGIT.findall(text))
    # A run of n letters costs ceil(n / 6) = floor((n + 5) / 6): five letters are added at
    # each run's end (every run ends before a space, one is appended) and runs of six
    # counted; digits the same with 3.
    letters = (data.translate(_LETTERS) + b" ").replace(b"a ", b"aaaaaa ").count(b"aaaaaa")
    digits = (data.translate(_DIGITS) + b" ").replace(b"0 ", b"000 ").count(b"000")
    return letters + digits + len(data.translate(None, _NOT_SYMBOL))
