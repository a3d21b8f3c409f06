"""lines: where each chunk stands in its source now, found by its text (chunk files hold no
line numbers: they would churn on every edit above them), and a source's frontmatter values
as index text, read on the way. Used by the cache's build (ncx.query.build) when it builds
or patches.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ncx.errors import NcxError
from ncx.query.docmeta import doc_date, meta_text
from ncx.store import parse_frontmatter, read_regular, source_text

if TYPE_CHECKING:
    from ncx.query.units import Unit
    from ncx.sources.includes import Fetch


def attach_lines(
    root: Path, units: list[Unit], bodies: list[str], gate: str | None = None
) -> dict[str, str]:
    """Each chunk's current line range in its source, found by its verbatim text; returns
    {source: its frontmatter values as index text} (ncx.query.docmeta), read on the way
    (with the doc's date, set on its chunks).

    Chunk files hold no line numbers (they would churn on every edit above them). The text
    is found in the source's markdown view (the file itself for plain markdown; reST,
    notebooks, MDX and MyST read by ncx.sources, stdlib-only and fast) and mapped to
    the file's own lines; a notebook chunk also gets its `cell`. `bodies` are the units'
    bodies when the caller has them (a fresh parse), else each is read from its file. A
    chunk whose text is no longer in the source (edited, not yet synced) gets no range.
    `gate`: a key one build shares across its calls, so the gate for included files (the
    index's blob of every tracked file) is made once per build and process (_gate), not
    once per doc.
    """
    from ncx.sources import View, read_view
    from ncx.sources.includes import may_include

    front: dict[str, str] = {}
    by_source: dict[str, list[int]] = {}
    included: list[Fetch] = []  # the gate for included files, made for the first doc with one
    for i, u in enumerate(units):
        by_source.setdefault(u.source_path, []).append(i)
    for src, rows in by_source.items():
        try:
            # As sync read it: a FIFO is not waited on, a UTF-16 doc is decoded, a lone CR
            # ends a line (else a classic-Mac doc is one line and no chunk is found in it).
            text = source_text(read_regular(root / src))
        except OSError:
            text = ""
        found_bodies: list[str] = []
        for i in rows:
            u = units[i]
            body = bodies[i] if bodies else _body(root, u)
            found_bodies.append(body.strip("\n"))
        fetch = None
        if text and may_include(text):
            # Its chunks quote the files it includes (ncx.sources.includes): found in the
            # view with them read in, as sync read it.
            if not included:
                included.append(_gate(root, gate))
            fetch = included[0]
        try:
            if text and any("[REDACTED " in b for b in found_bodies):
                from ncx.tree.chunkfile import redacted_view

                # Its chunks hold labels where the doc has credentials (chunkfile.load_doc):
                # found in the doc as sync read it, and its frontmatter indexed without them.
                # Only such a doc pays for the scan.
                view = redacted_view(src, text, fetch)[0]
            else:
                view = read_view(src, text, fetch) if text else View(text)
        except NcxError:
            view = View("")  # unreadable now: `ncx sync` reports it; no ranges meanwhile
        front[src], dated = _front(
            src, view.text, {units[i].section[0] for i in rows if units[i].section}
        )
        found = locate(view.text, found_bodies)
        for i, body, pos in zip(rows, found_bodies, found, strict=True):
            u = units[i]
            u.cell = None
            u.dated = dated
            if pos is None:
                u.start_line = u.end_line = None
                continue
            first = pos[1]
            last = first + body.count("\n")
            u.start_line, u.end_line = view.source_span(first, last)
            cell = view.cell_span(first, last)
            if cell is not None:
                u.cell = cell
    return front


# The last build's gate for included files, by (root, build key): one `git ls-files` per
# build and worker, where one per doc with an include was 400 of them on a 38,000-chunk tree
# (about a third of its cold build).
_GATES: dict[tuple[str, str], Fetch] = {}


def _gate(root: Path, key: str | None) -> Fetch:
    from ncx.tree.includefiles import WorkTree

    if key is None:
        return WorkTree(root, _tracked(root))
    got = _GATES.get((str(root), key))
    if got is None:
        _GATES.clear()  # (a build's gate is not another build's: the index may have moved)
        got = _GATES[(str(root), key)] = WorkTree(root, _tracked(root))
    return got


def _tracked(root: Path) -> dict[str, str | None]:
    """The blob id of every file the tree holds: the index's, or in a folder `--at REV`
    materialised, the commit's own (ncx.code.store.at_blobs)."""
    from ncx import repo
    from ncx.code.store import at_blobs

    got = at_blobs(root)
    return repo.index_blobs(root) if got is None else got


def _front(src: str, text: str, heads: set[str]) -> tuple[str, str | None]:
    """The searchable values of a source's frontmatter, as sync reads it (ncx.tree.chunkfile
    load_doc), and its date (docmeta.doc_date); ("", None) when its format has none or it
    does not parse (`ncx sync` says why)."""
    from ncx.sources import format_of

    fmt = format_of(src)
    if not text.startswith("---") or (fmt is not None and not fmt.frontmatter):
        return "", None
    try:
        meta = parse_frontmatter(text, path=src)[0]
    except NcxError:
        return "", None
    return meta_text(meta, heads), doc_date(meta)


def locate(text: str, bodies: list[str]) -> list[tuple[int, int] | None]:
    """(char offset, 1-based line) of each body in `text` (its first occurrence, or for a
    body with no rare line, the first one after the body before it), or None.

    Linear in the text plus the bodies: a body of three or more lines is keyed by its rarest
    inner line in the text (the longest of those), a whole line of the text wherever the
    body starts, even mid-line as a sentence window does; the text's lines are scanned once
    for those keys, and each candidate is verified in place; the earliest verified one is
    the first occurrence. A key found more than _MAX_CANDIDATES times is dropped from the
    scan at once (a doc of one line repeated 40,000 times made every line try every chunk:
    quadratic, 57 s), and so is a body of one or two lines: those are found by `str.find`
    from where the body before them was found (chunks come in the doc's order), from the
    start only when not found after it. (A `find` per chunk from the start plus a newline
    count up to it made a 50 MB doc's first retrieve take 92 s; benchmarks/hostile_costs.py.)
    """
    from bisect import bisect_right
    from collections import Counter

    if not text:
        return [None] * len(bodies)
    starts = [0]
    starts.extend(m + 1 for m in _newlines(text))
    seen = Counter(text.split("\n"))  # how often each whole line stands in the text
    wanted: dict[str, list[tuple[int, int]]] = {}  # source line -> (body index, shift)
    keyed: set[int] = set()
    for b, body in enumerate(bodies):
        lines = body.split("\n")
        if len(lines) < 3:
            continue
        # Inner lines are whole source lines wherever the body starts (a sentence window
        # starts mid-line); the rarest, then the longest, is the one to look for.
        shift, best = 0, (-len(starts) - 1, -1)  # (minus how often, length) of the key
        off = len(lines[0]) + 1
        for line in lines[1:-1]:
            rank = (-seen.get(line, 0), len(line))
            if rank > best:
                shift, best = off, rank
            off += len(line) + 1
        if -best[0] <= _MAX_CANDIDATES:
            wanted.setdefault(body[shift : shift + best[1]], []).append((b, shift))
            keyed.add(b)
    cands: dict[int, list[int]] = {}
    for n, start in enumerate(starts):
        if not wanted:
            break
        end = starts[n + 1] - 1 if n + 1 < len(starts) else len(text)
        hits = wanted.get(text[start:end])
        if hits:
            for b, shift in hits:
                if start - shift >= 0:
                    cands.setdefault(b, []).append(start - shift)
    out: list[tuple[int, int] | None] = []
    after = 0  # where the body before this one was found
    for b, body in enumerate(bodies):
        pos = -1
        if b in keyed:  # (a keyed body none of whose candidates holds it is not in the text)
            for c in sorted(set(cands.get(b, ()))):
                if text.startswith(body, c):
                    pos = c
                    break
        elif body:
            # No rare whole line to key on: found after the body before it (chunks are in
            # the doc's order), before it only when it is not there.
            pos = text.find(body, after)
            if pos < 0 and after:
                pos = text.find(body, 0, after + len(body))
        if pos >= 0:
            after = pos + 1  # (the next chunk starts after this one starts)
        out.append(None if pos < 0 else (pos, bisect_right(starts, pos)))
    return out


_MAX_CANDIDATES = 64


def _newlines(text: str) -> Iterator[int]:
    i = text.find("\n")
    while i >= 0:
        yield i
        i = text.find("\n", i + 1)


def _body(root: Path, unit: Unit) -> str:
    from ncx.query.units import unit_body

    return unit_body(root, unit)
