"""task: what a task file says, as the frame's task and acceptance criteria. Pure.

`ncx assemble --task-file F` and the benchmarks read a file through this one function, so a
change to how a task file is read is measured where it is used.
"""

from __future__ import annotations


def from_text(text: str) -> tuple[str, tuple[str, ...]]:
    """(task, criteria) of a task file: its first line of prose is the task (a markdown
    heading's `#` dropped), its list items (`- `, `* `) the acceptance criteria."""
    lines = [ln.strip() for ln in text.splitlines()]
    items = tuple(ln[2:].strip() for ln in lines if ln.startswith(("- ", "* ")))
    prose = [ln.lstrip("# ") for ln in lines if ln and not ln.startswith(("- ", "* "))]
    return (prose[0] if prose else ""), items


def body_of(text: str) -> str:
    """What a task file says after its first line of prose: an issue's body, searched with
    the task (the frame quotes the task and criteria, not the whole issue)."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s and not s.startswith(("- ", "* ")):
            return "\n".join(lines[i + 1 :]).strip()
    return ""
