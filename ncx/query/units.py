"""units: the cache's unit model — what a row of the search cache is (a chunk or a memory),
the rows of a loaded cache decoded as they are read, and the loaded index a query ranks
(vectors, BM25F arrays, doc groups), with a unit's body read from its file.

The model only: how the cache is built is ncx.query.build, how it is found fresh
ncx.query.fresh, how it is loaded, saved and locked ncx.query.cache.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from ncx.errors import NcxError
from ncx.query.lexical import LexIndex
from ncx.store import (
    open_regular,
    read_chunk_file,
    read_regular,
    split_chunk_file,
    split_frontmatter,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


@dataclass
class Unit:
    """One row of the cache, a chunk or a memory: what ranking, frames and memory ops read.

    Mutable only while the cache is being built (line ranges are attached last)."""

    id: str
    kind: str  # "chunk" or "memory"
    file: str  # its .md, repo-relative (a chunk: its doc's chunk file)
    block: int = 0  # a chunk's place among the blocks of its file
    at: int = -1  # ... and its bytes there, [at, at + size): its body is read without a split
    size: int = 0
    tokens: int = 0
    domain: str | None = None
    source_path: str = ""  # a chunk's source doc; a memory's own file
    section: list[str] = field(default_factory=list)  # a chunk's heading trail
    doc_id: str | None = None
    start_line: int | None = None  # current line range in the source (read time, not stored)
    end_line: int | None = None
    cell: str | None = None  # notebook cell(s), e.g. "7" or "7-9"
    status: str | None = None  # memories: active, proposed, superseded, deprecated
    type: str | None = None
    confidence: str | None = None
    updated: str = ""
    usefulness: float | None = None
    keywords: list[str] = field(default_factory=list)
    dated: str | None = None  # a chunk's doc's frontmatter date, as written (docmeta.doc_date)

    def to_json(self) -> dict[str, Any]:
        # Not dataclasses.asdict: its recursive deep copy was 4 s of a 40k-unit cold build.
        # A unit's attributes are its fields, set in field order by __init__ or adopted from
        # its cache row (_units): a shallow copy of them is its row, 10x cheaper than a
        # getattr per field.
        return dict(self.__dict__)


_UNIT_FIELDS = tuple(f.name for f in dataclasses.fields(Unit))


# A row is a unit's fields in field order (Unit.to_json): where its heading trail stands.
_SECTION_KEY = '"section": '


_AFTER_SECTION_KEY = f'"{_UNIT_FIELDS[_UNIT_FIELDS.index("section") + 1]}": '


_UNIT_KEYS = frozenset(_UNIT_FIELDS)


# The fields kept as columns beside the rows: what filters, doc groups and the cache's reuse
# read of every unit. The rest of a unit is decoded from its row when it is first read.
COLUMNS = ("kind", "file", "source_path", "domain", "status")


class Units(Sequence[Unit]):
    """The units of a cache, each decoded from its stored JSON row when first read.

    A query reads a few hundred of 40,000 units; decoding them all was 0.4 s of every warm
    query on such a tree. What every unit is asked for (kind, status, domain, paths) is in
    `columns`. A read unit is kept, so changes to it (line ranges found late) stay."""

    def __init__(self, rows: list[str | Unit], columns: dict[str, list[Any]]) -> None:
        self._rows = rows  # a row's JSON text until it is read, then its Unit
        self._columns = columns

    @classmethod
    def of(cls, units: list[Unit]) -> Units:
        return cls(list(units), {c: [getattr(u, c) for u in units] for c in COLUMNS})

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> Unit: ...
    @overload
    def __getitem__(self, i: slice) -> list[Unit]: ...
    def __getitem__(self, i: int | slice) -> Unit | list[Unit]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        row = self._rows[i]
        if isinstance(row, str):
            row = self._rows[i] = _unit_of(json.loads(row))
        return row

    def __iter__(self) -> Iterator[Unit]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def column(self, name: str) -> list[Any]:
        """One field of every unit (a name in COLUMNS), without decoding a row."""
        return self._columns[name]

    def row(self, i: int) -> str:
        """Unit i's JSON row as stored (as it was read, for a unit read since)."""
        row = self._rows[i]
        return row if isinstance(row, str) else json.dumps(row.to_json())

    def unread(self, i: int) -> str | None:
        """Unit i's JSON row as stored while it has not been decoded, else None: a scan of
        every unit can look at the text and decode only the rows it needs."""
        row = self._rows[i]
        return row if isinstance(row, str) else None

    def unread_section(self, i: int) -> str | None:
        """The JSON text of unit i's heading trail in its undecoded row (between its key and
        the next field's, as rows are written; the whole row if they are not found), else
        None. The keys' quotes are found only as keys: inside a JSON string a quote is
        escaped."""
        row = self.unread(i)
        if row is None:
            return None
        at = row.find(_SECTION_KEY)
        end = row.find(_AFTER_SECTION_KEY, at) if at >= 0 else -1
        return row[at + len(_SECTION_KEY) : end] if end >= 0 else row


def _unit_of(row: dict[str, Any]) -> Unit:
    """A unit from its cache row: the row's dict is taken over as its attributes (20x
    cheaper than __init__) when it holds exactly the unit's fields."""
    if row.keys() == _UNIT_KEYS:
        unit = Unit.__new__(Unit)
        unit.__dict__ = row
        return unit
    return Unit(**{k: v for k, v in row.items() if k in _UNIT_KEYS})


@dataclass(frozen=True)
class Index:
    units: Sequence[Unit]  # one per row of the arrays (Units for a cache)
    # (n, dim), unit rows (zero rows for units with no vector), laid out column by column:
    # a query's cosines then read memory in order (10,916 units: 0.5 ms, not 1.1 ms).
    vectors: NDArray[np.float32]
    lex: LexIndex
    group: NDArray[np.int32]  # units of the same source doc share a group; memories are alone
    root: Path
    memo: dict[Any, Any] = field(default_factory=dict)  # per-process derived values (masks)

    def column(self, name: str) -> list[Any]:
        """One field (a name in COLUMNS) of every unit."""
        if isinstance(self.units, Units):
            return self.units.column(name)
        return [getattr(u, name) for u in self.units]

    def cosines(self, vec: Any) -> NDArray[np.float32]:
        """Cosine of every unit to a unit vector (rows are unit-length, or zero): the one
        dense similarity, for ranking and for related / near-duplicate memories."""
        import numpy as np

        q = np.asarray(vec, dtype=np.float32)
        # A frame searches twice with one query (chunks, then memories), `ncx eval` three
        # times: the last query's cosines are kept (a pass over every vector, ~17 ms on a
        # 34,000-unit tree); each caller gets its own copy (the ranking masks it in place).
        key = q.tobytes()
        last = self.memo.get("cosines")
        if last is None or last[0] != key:
            last = self.memo["cosines"] = (key, self.vectors @ q)
        out: NDArray[np.float32] = last[1].copy()
        return out

    def body(self, i: int) -> str:
        """The unit's markdown body, read from its file (only top results need it)."""
        return unit_body(self.root, self.units[i]).strip()

    def shown(self, i: int, body: str) -> str:
        """Unit i's body as a reader is shown it: a bare `:doc:` reference reads as its
        target's title (ncx.query.doclinks). Ranking reads the body as stored."""
        unit = self.units[i]
        if "](:" not in body or unit.kind != "chunk":
            return body
        from ncx.query.doclinks import resolve

        return resolve(body, unit.source_path, self.root, self.memo.setdefault("doc_titles", {}))


def unit_body(root: Path, unit: Unit) -> str:
    """A unit's markdown body, from its file ("" when it is gone or damaged)."""
    try:
        if unit.kind == "chunk":
            data = _block_bytes(root, unit)
        else:
            data = read_regular(root / unit.file)
    except (OSError, NcxError, IndexError):
        return ""
    # No YAML parse on the query path: only the text after the frontmatter is wanted.
    return split_frontmatter(data.decode("utf-8", "replace").replace("\r\n", "\n"))[1]


def _block_bytes(root: Path, unit: Unit) -> bytes:
    """A chunk's block: read at the offset the cache recorded when it is still that chunk's
    (its id line says so); else (a file changed since, a CRLF checkout) the file is split
    again and the block taken by its place."""
    path = root / unit.file
    if unit.at >= 0 and not os.path.islink(path):
        with open_regular(path) as f:
            f.seek(unit.at)
            data = f.read(unit.size)
        first = data[: data.find(b"\n", 4) + 1]
        if len(data) == unit.size and first.startswith(b"---\nid: ") and _names(first, unit.id):
            return data
    return split_chunk_file(read_chunk_file(path), path=unit.file)[unit.block]


def _names(line: bytes, unit_id: str) -> bool:
    """Whether a block's `id:` line (plain or YAML-quoted) is that of `unit_id`."""
    text = line.decode("utf-8", "replace").rstrip("\r\n")[len("---\nid: ") :]
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].replace("''", "'") if text[0] == "'" else text[1:-1]
    return text == unit_id
