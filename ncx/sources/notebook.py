"""notebook: a Jupyter notebook (.ipynb) -> markdown view. Pure, stdlib json.

Markdown cells are kept as markdown (MyST included), code cells become fenced code in the
kernel's language; outputs and metadata carry no knowledge worth indexing and are dropped.
Each view line maps to the line of the .ipynb as stored where its text sits (nbformat
writes one source line per JSON line), so a citation opens at the cell; a notebook saved
another way (minified, one string per cell) maps to its cell's `"source"` line instead.

Why not nbformat: json reads the cells as well, in a fraction of the import time, and
validation would refuse notebooks whose cells are still perfectly readable.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from typing import Any

from ncx.errors import BadSource
from ncx.sources.myst import render_myst
from ncx.sources.view import Line, View, build, fenced

_SOURCE_KEY = re.compile(r'^\s*"source"\s*:\s*\[\s*$')
HINT_JSON = (
    "open and save it in Jupyter to repair it, or switch notebooks off in "
    ".neocortex/manifest.json (`sources.skip_formats`) / exclude the file"
)


def read_notebook(text: str, path: str = "") -> View:
    try:
        nb = json.loads(text)
    except RecursionError:  # json's decoder nests by recursion too
        raise BadSource(
            "is not a readable notebook: its JSON is nested too deeply",
            path=path,
            hint=HINT_JSON,
        ) from None
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        where = f" (line {line})" if line else ""
        raise BadSource(
            f"is not a valid notebook: not JSON{where}", path=path, hint=HINT_JSON
        ) from None
    cells = _cells(nb)
    if cells is None:
        raise BadSource("is not a notebook: no `cells` list", path=path, hint=HINT_JSON)
    raw = text.split("\n")
    keys = [i for i, line in enumerate(raw) if '"source"' in line]
    lang = _language(nb)
    out: list[Line] = []
    owner: list[int] = []
    pos = 0  # where the search for the next cell's source starts in the stored file
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            continue
        src = cell.get("source", cell.get("input", ""))
        parts = src if isinstance(src, list) else str(src).splitlines(keepends=True)
        parts = [str(p) for p in parts]
        if not "".join(parts).strip():
            continue
        at, pos = _locate(raw, keys, pos, parts)
        cell_lines = _cell_lines(parts, at)
        kind = cell.get("cell_type")
        if kind == "code":
            rendered = fenced(lang, cell_lines, cell_lines[0][1])
        elif kind == "markdown":
            rendered = [("", cell_lines[0][1]), *render_myst(cell_lines), ("", cell_lines[-1][1])]
        else:  # raw cells: text as written
            rendered = [("", cell_lines[0][1]), *cell_lines, ("", cell_lines[-1][1])]
        out.extend(rendered)
        owner.extend([number] * len(rendered))
    return build(out, owner)


def _cells(nb: Any) -> list[Any] | None:
    if not isinstance(nb, dict):
        return None
    if isinstance(nb.get("cells"), list):
        return list(nb["cells"])
    sheets = nb.get("worksheets")  # nbformat 3
    if isinstance(sheets, list) and sheets and isinstance(sheets[0], dict):
        cells = sheets[0].get("cells")
        return list(cells) if isinstance(cells, list) else None
    return None


def _language(nb: dict[str, Any]) -> str:
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    for key in ("language_info", "kernelspec"):
        sub = meta.get(key) if isinstance(meta, dict) else None
        if isinstance(sub, dict):
            name = sub.get("name") if key == "language_info" else sub.get("language")
            if isinstance(name, str) and re.fullmatch(r"[\w+#-]+", name):
                return name.lower()
    return "python"


def _locate(
    raw: list[str], keys: list[int], pos: int, parts: list[str]
) -> tuple[int | list[int], int]:
    """The stored line (0-based) of each source part, and where the next search starts.

    `keys`: the stored lines holding `"source"`, in order. The cell's source is the next
    one at or after `pos`: when it is a `"source": [` whose following lines decode to
    exactly these parts (nbformat's layout), each part cites its own line; otherwise every
    part cites that `"source"` line itself. One look per cell: searching every later line
    for a layout that is not there made a 4,000-cell notebook saved with one string per
    cell take 12 s (quadratic).
    """
    k = bisect_left(keys, pos)
    if k == len(keys):
        return pos, pos
    i = keys[k]
    if _SOURCE_KEY.match(raw[i]) and _matches(raw, i + 1, parts):
        return list(range(i + 1, i + 1 + len(parts))), i + 1 + len(parts)
    return i, i + 1


def _matches(raw: list[str], start: int, parts: list[str]) -> bool:
    if start + len(parts) > len(raw):
        return False
    for k, part in enumerate(parts):
        s = raw[start + k].strip()
        if s.endswith(","):
            s = s[:-1]
        try:
            if json.loads(s) != part:
                return False
        except ValueError:
            return False
    return True


def _cell_lines(parts: list[str], at: int | list[int]) -> list[Line]:
    """The cell's text as view lines, each tagged with its 1-based stored line."""
    out: list[Line] = []
    for k, part in enumerate(parts):
        line = (at[k] if isinstance(at, list) else at) + 1
        for piece in part.rstrip("\n").split("\n") if part.endswith("\n") else part.split("\n"):
            out.append((piece, line))
    return out
