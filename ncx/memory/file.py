"""memories: the memory file format — frontmatter + `## Learning` / `## Context` / `## Related`.

Pure parts (ids, rendering, parsing) plus `write_memory`, which writes the .md and .npy
pair through store. IDs are `MEM-<date>-<6 chars of a content hash>`: never "highest
number + 1", so memories added on two branches never collide, and the same memory added
twice is the same file.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.layout import memories_dir
from ncx.memory.text import body_sections as body_sections  # (re-exported: one home, text.py)
from ncx.memory.text import memory_embed_text as memory_embed_text
from ncx.store import blob_vec, dump_frontmatter, read_unit, write_atomic

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

TYPES = ("factual", "experiential", "procedural")
CONFIDENCES = ("low", "medium", "high")
STATUSES = ("active", "proposed", "superseded", "deprecated")
# Frontmatter keys in the order they are written; unknown keys a person added are kept after.
KEY_ORDER = (
    "id",
    "type",
    "domain",
    "confidence",
    "status",
    "keywords",
    "source_task",
    "related_docs",
    "related",
    "cites",
    "created",
    "updated",
    "verified",
    "superseded_by",
    "supersedes",
    "usefulness",
    "provenance",
    "hash",
    "vec",
)

_ID = re.compile(r"^MEM-\d{4}-\d{2}-\d{2}-[a-z2-7]{6}$")


@dataclass(frozen=True)
class Memory:
    """A memory as read from or written to `.neocortex/memories/<id>.md`."""

    id: str
    learning: str
    context: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)  # every frontmatter key, id included
    related_lines: tuple[str, ...] = ()  # the rendered `## Related` list

    @property
    def status(self) -> str:
        return str(self.meta.get("status") or "active")


def new_memory_id(learning: str, context: str, day: date) -> str:
    """Content-derived id: same text on the same day -> same id; different text -> different."""
    digest = hashlib.sha256(f"{learning.strip()}\n\x00{context.strip()}".encode()).digest()
    return f"MEM-{day.isoformat()}-{base64.b32encode(digest).decode()[:6].lower()}"


def is_memory_id(value: str) -> bool:
    return bool(_ID.match(value))


def memory_hash(body: str) -> str:
    return hashlib.sha256(memory_embed_text(body).encode()).hexdigest()[:16]


def render_body(learning: str, context: str, related_lines: Sequence[str]) -> str:
    parts = [f"## Learning\n\n{learning.strip()}\n"]
    if context.strip():
        parts.append(f"## Context\n\n{context.strip()}\n")
    if related_lines:
        parts.append("## Related\n\n" + "\n".join(related_lines) + "\n")
    return "\n".join(parts)


def render_memory(memory: Memory, *, vec: str | None = None) -> bytes:
    """Bytes of the memory file: ordered frontmatter (hash refreshed) + body.

    `vec` names the .npy written with it (store.blob_vec); without it the one the memory
    already records is kept, for rewrites that leave the vector alone."""
    body = render_body(memory.learning, memory.context, memory.related_lines)
    meta = dict(memory.meta)
    meta["id"] = memory.id
    meta["hash"] = memory_hash(body)
    if vec is not None:
        meta["vec"] = vec
    ordered = {k: meta[k] for k in KEY_ORDER if k in meta}
    ordered.update({k: v for k, v in meta.items() if k not in ordered})
    return dump_frontmatter(ordered, body).encode()


def read_memory(path: Path) -> Memory:
    """Parse a memory file; raises BadFrontmatter / BadSource naming the file."""
    meta, body = read_unit(path)
    sections = body_sections(body)
    learning = sections.get("learning", body.strip() if not sections else "")
    related = tuple(
        line for line in sections.get("related", "").splitlines() if line.strip().startswith("-")
    )
    mid = str(meta.get("id") or path.stem)
    return Memory(mid, learning, sections.get("context", ""), meta, related)


def memory_path(root: Path, memory_id: str) -> Path:
    """The file of a memory id; the id is checked first, so it can never name another path."""
    from ncx.paths import memory_ref

    return memories_dir(root) / f"{memory_ref(memory_id)}.md"


def write_memory(root: Path, memory: Memory, vector: NDArray[np.float32]) -> list[Path]:
    """Write the vector, then the markdown (a crash in between is healed by `ncx sync`)."""
    import numpy as np

    from ncx.paths import check_write

    md = memory_path(root, memory.id)
    check_write(root, md)  # a linked memories/ folder must not carry the write elsewhere
    buf = io.BytesIO()
    np.save(buf, np.asarray(vector, dtype=np.float16), allow_pickle=False)
    write_atomic(md.with_suffix(".npy"), buf.getvalue())
    write_atomic(md, render_memory(memory, vec=blob_vec(buf.getvalue())))
    return [md, md.with_suffix(".npy")]


def memory_problems(meta: Mapping[str, Any], body: str, stem: str) -> list[str]:
    """What is wrong with a memory's frontmatter and body (empty: nothing). Pure.

    Catches what a hand edit typically breaks: a misspelt enum value, an id that no longer
    matches the file name, a date that is not YYYY-MM-DD, a lost `## Learning` section.
    """
    out: list[str] = []
    mid = meta.get("id")
    if mid != stem:
        out.append(f"id {mid!r} does not match the file name {stem!r}")
    elif not is_memory_id(stem):
        out.append(f"id {stem!r} is not of the form MEM-YYYY-MM-DD-xxxxxx")
    for key, allowed in (("type", TYPES), ("confidence", CONFIDENCES), ("status", STATUSES)):
        value = meta.get(key)
        if value is not None and value not in allowed:
            out.append(f"{key} {value!r} is not one of {', '.join(allowed)}")
    for key in ("created", "updated", "verified"):
        value = meta.get(key)
        if value is not None and not _is_date(value):
            out.append(f"{key} {value!r} is not a date (YYYY-MM-DD)")
    related = meta.get("related")
    if related is not None and not (
        isinstance(related, list)
        and all(isinstance(r, dict) and "id" in r and "similarity" in r for r in related)
    ):
        out.append("related must be a list of {id, similarity}")
    cites = cites_problem(meta.get("cites"))
    if cites:
        out.append(cites)
    useful = meta.get("usefulness")
    if useful is not None and (
        isinstance(useful, bool) or not isinstance(useful, int | float) or not 0 <= useful <= 1
    ):
        out.append(f"usefulness {useful!r} is not a number between 0 and 1")
    if meta.get("status") == "superseded" and not meta.get("superseded_by"):
        out.append("status is superseded but superseded_by is empty")
    if not body_sections(body).get("learning", "").strip():
        out.append("has no text under `## Learning`")
    return out


def cites_problem(value: Any) -> str | None:
    """What is wrong with a `cites` value (ncx.memory.cites writes it), or None: the
    frontmatter's shape is this module's, what the entries mean is cites'."""
    if value is None:
        return None
    if isinstance(value, list) and all(
        isinstance(c, dict)
        and isinstance(c.get("path"), str)
        and isinstance(c.get("hash"), str)
        and set(c) <= {"path", "symbol", "section", "hash"}
        for c in value
    ):
        return None
    return "cites must be a list of {path, symbol or section (optional), hash}"


def _is_date(value: Any) -> bool:
    if isinstance(value, date):
        return True
    try:
        date.fromisoformat(str(value))
    except ValueError:
        return False
    return True
