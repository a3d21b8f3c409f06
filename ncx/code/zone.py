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
from ncx.code.text import shown_path
from ncx.tokens import count_tokens

MAX_FILES = 10
FILE_RATIO = 0.25  # a further file must score at least this share of the best file
PER_FILE = 1
BODY_TOKENS = 400  # the best definition's body is quoted when it is no longer than this
BODY_SHARE = 0.12  # ... and than this share of the frame's budget
BRIEF = 3  # items after the first BRIEF quote their docstring's first sentence only
BRIEF_CHARS = 160
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


def item_text(
    hit: CodeHit,
    lines: Sequence[str] | None,  # the file's (ncx.code.read.source_text's, split at "\n")
    *,
    body_tokens: int = 0,
    brief: bool = False,
) -> str:
    """A code item as the frame quotes it: the definition's head, fenced, and its docstring
    summary (`brief`: its first sentence); or, given `body_tokens`, its whole body when it
    is no longer than that."""
    lang = _FENCE.get(language_of(hit.path) or "", "")
    doc = _first_sentence(hit.doc) if brief else hit.doc
    if hit.kind == "module":
        head = f"module {shown_path(hit.path)}"
        return f"{head}: {doc}" if doc else head
    if body_tokens and lines is not None:
        from ncx.code.guard import redact_body

        # read from the file as it is now: the credentials the index left out, left out here
        body = redact_body("\n".join(lines[hit.start - 1 : hit.end]))
        if body.strip() and count_tokens(body) <= body_tokens and "```" not in body:
            return f"```{lang}\n{body}\n```"
    text = f"```{lang}\n{hit.signature}\n```"
    return f"{text}\n{doc}" if doc else text


def body_tokens(budget: int) -> int:
    """How long a body the frame quotes: BODY_TOKENS, less in a small frame, where the
    same tokens name more files."""
    return min(BODY_TOKENS, int(budget * BODY_SHARE))


def _first_sentence(doc: str) -> str:
    cut = doc.find(". ")
    s = doc if cut < 0 else doc[: cut + 1]
    return s if len(s) <= BRIEF_CHARS else s[: BRIEF_CHARS - 1] + "…"
