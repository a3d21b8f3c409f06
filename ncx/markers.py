"""markers: a block of lines that ncx owns inside a file the user owns too.

`.gitattributes`, `.git/info/attributes` and agent instruction files hold ncx's lines between
a start and an end marker line; everything outside the markers is the user's and is kept.
A leaf (pure text in, text out), so that the init, the merge driver and the agent wiring
share it without importing each other.
"""

from __future__ import annotations

START, END = "# >>> ncx >>>", "# <<< ncx <<<"  # the marker lines of a `#`-comment file


def with_block(text: str, block: str) -> str:
    """`text` with the marker-delimited block inserted or replaced in place; user lines kept."""
    start, end = block.splitlines()[0], block.splitlines()[-1]
    lines = text.splitlines(keepends=True)
    span = _span(lines, start, end)
    if span is not None:
        return "".join(lines[: span[0]]) + block + "".join(lines[span[1] :])
    nl = "\r\n" if text.endswith("\r\n") else "\n"
    sep = "" if not text or text.endswith(nl * 2) else (nl if text.endswith("\n") else nl * 2)
    return text + sep + block


def without_block(text: str, start: str, end: str) -> str:
    """`text` with the block between the `start` and `end` marker lines taken out (the rest
    as written); `text` itself when it holds no such block."""
    lines = text.splitlines(keepends=True)
    span = _span(lines, start, end)
    return text if span is None else "".join(lines[: span[0]] + lines[span[1] :])


def _span(lines: list[str], start: str, end: str) -> tuple[int, int] | None:
    """[i, j) of the lines from the `start` marker line through the `end` one, or None."""
    try:
        i = next(n for n, ln in enumerate(lines) if ln.rstrip("\r\n") == start)
        j = next(n for n in range(i, len(lines)) if lines[n].rstrip("\r\n") == end)
    except StopIteration:
        return None
    return i, j + 1
