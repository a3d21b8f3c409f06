"""zone: the frame's "Code to Open" items, from ranked code hits. Pure.

Which files: the best file always, then those whose score stays within FILE_RATIO of it, up to
MAX_FILES; a file brings its best definition (PER_FILE): over the four code-* sets, one
definition from each of more files found a gold file more often per token than two from
fewer (benchmarks/code_sweep.py --frame-cap 500: 0.85-0.93 against 0.78-0.94 file recall,
at 20% fewer tokens). Each item is the definition's
signature and docstring summary, fenced in its language and cited path:lines, so an agent
knows what to open and where. The best definition also brings its body when it is short
enough (BODY_TOKENS): the lines a change most likely starts from.
"""

from __future__ import annotations

from collections.abc import Sequence

from ncx.code.langs import language_of
from ncx.code.rank import CodeHit
from ncx.tokens import count_tokens

MAX_FILES = 10
FILE_RATIO = 0.25  # a further file must score at least this share of the best file
PER_FILE = 1
BODY_TOKENS = 400  # the best definition's body is quoted when it is no longer than this
_FENCE = {
    "python": "python",
    "javascript": "js",
    "typescript": "ts",
    "tsx": "tsx",
    "go": "go",
    "rust": "rust",
    "java": "java",
}


def pick(hits: Sequence[CodeHit]) -> list[CodeHit]:
    """The hits the frame offers, in rank order."""
    if not hits:
        return []
    top = hits[0].file_score or 1.0
    out: list[CodeHit] = []
    per: dict[str, int] = {}
    files: list[str] = []
    for h in hits:
        if h.path not in per:
            if len(files) >= MAX_FILES or (files and h.file_score < FILE_RATIO * top):
                continue
            files.append(h.path)
        if per.get(h.path, 0) >= PER_FILE:
            continue
        per[h.path] = per.get(h.path, 0) + 1
        out.append(h)
    return out


def item_text(hit: CodeHit, lines: Sequence[str] | None, *, with_body: bool) -> str:
    """A code item as the frame quotes it: the definition's head (or its body), fenced."""
    lang = _FENCE.get(language_of(hit.path) or "", "")
    if hit.kind == "module":
        head = f"module {hit.path}"
        return f"{head}: {hit.doc}" if hit.doc else head
    if with_body and lines is not None:
        body = "\n".join(lines[hit.start - 1 : hit.end])
        if body.strip() and count_tokens(body) <= BODY_TOKENS and "```" not in body:
            return f"```{lang}\n{body}\n```"
    text = f"```{lang}\n{hit.signature}\n```"
    return f"{text}\n{hit.doc}" if hit.doc else text
