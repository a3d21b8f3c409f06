"""task: what a task file says, as the frame's task and acceptance criteria. Pure.

`ncx assemble --task-file F` and the benchmarks read a file through this one function, so a
change to how a task file is read is measured where it is used.
"""

from __future__ import annotations

from collections.abc import Iterator

_ITEM = ("- ", "* ")


def from_text(text: str) -> tuple[str, tuple[str, ...]]:
    """(task, criteria) of a task file: its first line of prose is the task (a markdown
    heading's `#` dropped), its list items (`- `, `* `) the acceptance criteria.

    Lines inside a fenced code block or an HTML comment are neither: an issue's pasted
    output (`* x  (x) <U3 'foo'` in an xarray repr) and its template's hidden guidance
    (`<!-- - Craft Minimal Bug Reports … -->`) were 16 of the 23 criteria the frames of
    code-swe-dev's 33 issues printed in their task zone (decisions.md §73)."""
    at = _task_line(text)
    return (at[1].lstrip("# ") if at else ""), _criteria(text)


def _criteria(text: str) -> tuple[str, ...]:
    """The list items of `text` outside code and comments, each whole: an item wrapped over
    several lines goes on over the lines indented under it, or right after it (markdown's
    lazy continuation), up to a blank line, a heading or the next item (a new user's issue
    file printed "SchemaItemsType() panics for any GenericFlag, since it always": its first
    line only)."""
    items: list[str] = []
    going = blank = False
    marker = 0  # the open item's indentation
    for _, ln, indent in _prose_lines(text):
        if ln.startswith(_ITEM):
            items.append(ln[2:].strip())
            going, blank, marker = True, False, indent
        elif not ln:
            blank = True
        elif going and not ln.startswith("#") and (indent > marker or not blank):
            items[-1] = f"{items[-1]} {ln}"
            blank = False
        else:
            going = False
    return tuple(items)


def _task_line(text: str) -> tuple[int, str] | None:
    """(index, stripped line) of the line a task file's task is: its first line of prose."""
    found = ((i, ln) for i, ln, _ in _prose_lines(text) if ln and not ln.startswith(_ITEM))
    return next(found, None)


def _prose_lines(text: str) -> Iterator[tuple[int, str, int]]:
    """(index, stripped line, its indentation) of the lines of `text` outside fenced code
    blocks and HTML comments."""
    fence = ""  # the open fence's marker (``` or ~~~, as long as it was opened), or ""
    comment = False
    for i, raw in enumerate(text.splitlines()):
        ln = raw.strip()
        if fence:
            if ln.startswith(fence) and not ln[len(fence) :].strip(fence[0]).strip():
                fence = ""
            continue
        if comment:
            comment = "-->" not in ln
            continue
        if ln.startswith(("```", "~~~")):
            mark = ln[0]
            fence = mark * (len(ln) - len(ln.lstrip(mark)))
            continue
        if ln.startswith("<!--"):
            comment = "-->" not in ln[4:]
            continue
        yield i, ln, len(raw) - len(raw.lstrip())


def body_of(text: str) -> str:
    """What a task file says after the line `from_text` takes as its task: an issue's body,
    searched with the task (the frame quotes the task and criteria, not the whole issue)."""
    at = _task_line(text)
    return "\n".join(text.splitlines()[at[0] + 1 :]).strip() if at else ""
