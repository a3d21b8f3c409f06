"""pointers: what a task points at in the code, read from its text. Pure.

An issue says which code it is about in more ways than its words: a path or a file name, a
link to the file on its forge (`.../blob/<ref>/pkg/models.py#L401`: the file, and the
definition at the line), the frames of a traceback (`File "x.py", line N, in f`; IPython's
`File ~/x.py:41, in PolyFit.__call__(...)`), options and settings (`--recursive`,
`ignore-paths`), a message the program printed (the code that prints it). (A dotted name's
last part is a named identifier, ncx.code.rank.named_identifiers: resolving its module was
tried and dropped, §46.) And much
of a long issue is not words at all but what a program printed: logs, version dumps, rendered
output. `read_task` splits a task into its parts so the ranking (ncx.code.rank) weighs each as
the evidence it is: the title and prose, quoted code, tracebacks and dumps (decisions.md §46).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A task shorter than this is read as prose whole: a commit subject or a one-line question
# has no dumps to split off, and its pointers are found all the same.
SHORT_TASK = 200

_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
# Python's traceback frame, and IPython's (`File ~/x.py:41, in f(...)`, `x.py in f(...)`)
_FRAME = re.compile(
    r"""File\s+"([^"]+)",\s+line\s+\d+(?:,\s+in\s+([\w.<>]+))?"""
    r"""|File\s+([^\s,:"]+\.\w+):\d+(?:,\s+in\s+([\w.<>]+))?"""
    r"""|([\w./\\:~-]+\.py)\S*\s+in\s+([\w.<>]+)\("""
)
_SOURCE = r"(?:py|pyi|js|jsx|ts|tsx|go|rs|java)"
_PATH = re.compile(rf"(?<![\w/.-])((?:[\w.-]+[/\\])*[\w-]+\.{_SOURCE})\b")
# a link to a file of the repository (`github.com/o/r/blob/<ref>/pkg/models.py#L401`): the
# path after the ref is the file, written whole (a ref with a `/` leaves folders in front,
# which ncx.code.rank's longest-tail match drops)
_LINKED = re.compile(
    rf"/(?:blob|tree|blame|raw)/[\w.%-]+/((?:[\w.-]+/)*[\w-]+\.{_SOURCE})\b(?:#L(\d+))?"
)
_INLINE = re.compile(r"`([^`\n]{1,200})`")
_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*|[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+)(?![\w-])")
# lines of output rather than code or prose: a version pin, `key: value` of a report, a
# table or rule, a log line's timestamp
_DUMP_LINE = re.compile(
    r"^\s*(?:[\w.-]+\s*(?:==|>=|<=)\s*[\w.]+|[\w .-]{1,40}:\s+\S.*|[-=+|*#\s]{4,}.*|"
    r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d.*|[<\[{].*[>\]}],?)\s*$"
)
# A printed line is a message when it holds this many distinct words: a version pin or a
# `netCDF4: None` of a report is one or two (their identifiers split into more terms).
PRINTED_WORDS = 4
_WORD = re.compile(r"[A-Za-z]{2,}")
_CODE_LANGS = {"python", "py", "python3", "pycon", "ipython", "js", "ts", "go", "rust", "java"}


@dataclass(frozen=True)
class TaskText:
    """A task's parts (each a text) and the pointers found in it."""

    title: str
    long: bool  # split into parts (a short task is its title and prose)
    prose: str  # the words around the quoted parts, inline code included
    code: str  # quoted code: fenced or indented blocks that read as code
    trace: str  # tracebacks
    dump: str  # what a program printed: logs, version lists, rendered output
    paths: tuple[str, ...]  # path-like strings, as written, in order
    frames: tuple[tuple[str, str], ...]  # (path, function) of each traceback frame, in order
    options: tuple[str, ...]  # option and setting names: `--recursive`, `ignore-paths`
    lines: tuple[tuple[str, int], ...] = ()  # (path, line) a link points at (`#L377`)
    # lines a program printed (a dump's or a traceback's): a message the code writes is
    # found by its words all together in one definition (ncx.code.rank._pointed)
    printed: tuple[str, ...] = ()


# What a message was filled in with, not what its code writes: a path, a number, a quoted
# value. walkdir's "File system loop found: /home/me/a/b points to an ancestor /home/me/a"
# is written by `"File system loop found: {} points to an ancestor {}"`; with "home" and "me"
# asked of it too, no definition held every word.
_FILLED = re.compile(r"\S*[/\\]\S*|\b\d[\w.:-]*|'[^'\s]*'|\"[^\"\s]*\"")


def _as_written(line: str) -> str:
    """A printed line with what its message was filled in with left out."""
    return " ".join(_FILLED.sub(" ", line).split())


def read_task(task: str) -> TaskText:
    lines = task.split("\n")
    title = lines[0].strip() if lines else ""
    parts: dict[str, list[str]] = {"prose": [], "code": [], "trace": [], "dump": []}
    if len(task) < SHORT_TASK:
        parts["prose"] = lines[1:]
    else:
        _split(lines[1:], parts)
    prose = "\n".join(parts["prose"])
    trace = "\n".join(parts["trace"])
    frames = tuple(_frames(task))
    spoken = f"{title}\n{prose}"
    links = list(_LINKED.finditer(task))
    paths = tuple(
        dict.fromkeys([*(m.group(1) for m in _PATH.finditer(task)), *(m.group(1) for m in links)])
    )
    # an option or setting in backticks (`ignore-paths`, `--recursive`), or a flag anywhere
    # in the words
    quoted = " ".join(m.group(1) for m in _INLINE.finditer(spoken))
    options = tuple(
        dict.fromkeys(
            [*_OPTION.findall(quoted), *re.findall(r"(?<![\w-])--[A-Za-z][\w-]+", spoken)]
        )
    )
    return TaskText(
        title=title,
        long=len(task) >= SHORT_TASK,
        prose=prose,
        code="\n".join(parts["code"]),
        trace=trace,
        dump="\n".join(parts["dump"]),
        paths=paths,
        frames=frames,
        options=options,
        lines=tuple(dict.fromkeys((m.group(1), int(m.group(2))) for m in links if m.group(2))),
        printed=tuple(
            dict.fromkeys(
                said
                for ln in (*parts["dump"], *parts["trace"])
                if not _FRAME.search(ln)
                and len(set(_WORD.findall(said := _as_written(ln)))) >= PRINTED_WORDS
            )
        ),
    )


def _split(lines: list[str], parts: dict[str, list[str]]) -> None:
    """Each line to its part: fenced blocks by what they hold, a traceback until its
    error line, `<details>` as a dump unless fenced code is inside, the rest prose."""
    i = 0
    details = 0
    while i < len(lines):
        ln = lines[i]
        m = _FENCE.match(ln)
        if m:
            fence, lang = m.group(1), m.group(2).lower()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence[:3]):
                j += 1
            block = lines[i + 1 : j]
            parts[_kind(block, lang)].extend(block)
            i = j + 1
            continue
        low = ln.strip().lower()
        if low.startswith("<details"):
            details += 1
        elif low.startswith("</details"):
            details = max(0, details - 1)
        if "traceback (most recent call last)" in low:
            j = i + 1
            while j < len(lines) and (lines[j][:1] in (" ", "\t") or _FRAME.search(lines[j])):
                j += 1
            parts["trace"].extend(lines[i : j + 1])
            i = j + 1
            continue
        if details or (ln.strip() and _DUMP_LINE.match(ln) and not _INLINE.search(ln)):
            parts["dump"].append(ln)
        elif ln[:4] == "    " or ln[:1] == "\t":
            parts["code" if _codeish(ln) else "dump"].append(ln)
        else:
            parts["prose"].append(ln)
        i += 1


def _kind(block: list[str], lang: str) -> str:
    text = "\n".join(block)
    if "Traceback" in text or "traceback" in lang or _FRAME.search(text):
        return "trace"
    if lang in _CODE_LANGS:
        return "code"
    if not lang:
        code = sum(_codeish(b) for b in block if b.strip())
        return "code" if code * 2 >= max(1, sum(1 for b in block if b.strip())) else "dump"
    return "dump"


def _codeish(line: str) -> bool:
    s = line.strip()
    return bool(
        s.startswith((">>>", "import ", "from ", "def ", "class ", "return ", "@"))
        or re.search(r"\w\(.*\)|\w\s*=\s*\S|\w\.\w+\(", s)
    ) and not _DUMP_LINE.match(line)


def _frames(task: str) -> list[tuple[str, str]]:
    out = []
    for m in _FRAME.finditer(task):
        path = m.group(1) or m.group(3) or m.group(5) or ""
        func = m.group(2) or m.group(4) or m.group(6) or ""
        if func.startswith("<"):
            func = ""
        out.append((path.replace("\\", "/"), func))
    return out
