"""docs: a source document and the chunk files it yields. Pure: bytes in, bytes out.

A chunk file depends only on its own section's text and the identity of its document
(path, DOC-ID, domain): no line numbers, no position, no whole-document hash, so an edit
in one section rewrites only that section's files (DESIGN.md invariant 2).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ncx.chunker import Chunk, ChunkSettings, chunk_markdown
from ncx.layout import doc_chunk_dir
from ncx.store import decode_source, dump_frontmatter, parse_frontmatter

_DOC_ID = re.compile(r"\b(DOC-[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\d{2,})\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his
    how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through
    to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves use used using may might must shall
    one two new see via e.g i.e etc per let lets get gets got make makes made
    """.split()
)


@dataclass(frozen=True, slots=True)
class SourceDoc:
    path: str  # repo-relative, POSIX
    doc_id: str | None
    domain: str | None
    title: str | None
    body: str
    first_line: int  # source line where body starts (after frontmatter)


@dataclass(frozen=True, slots=True)
class ChunkFile:
    rel_path: str  # repo-relative path of the .md
    id: str
    data: bytes
    hash: str  # of embed_text: equal hash, equal vector
    embed_text: str
    chunk: Chunk


def load_doc(path: str, data: bytes) -> SourceDoc:
    """Decode and split a source doc; raise BadSource / BadFrontmatter naming `path`."""
    text = decode_source(data, path=path)
    meta, body, first_line = parse_frontmatter(text, path=path)
    doc_id = _str(meta.get("id") or meta.get("doc_id") or meta.get("doc-id"))
    if doc_id is None:
        m = _DOC_ID.search(body[:3000])
        doc_id = m.group(1) if m else None
    domain = _str(meta.get("domain"))
    if domain is None and doc_id and doc_id.count("-") >= 2:
        domain = doc_id.split("-")[1]
    title = _str(meta.get("title"))
    return SourceDoc(path, doc_id, domain, title, body, first_line)


def _str(v: Any) -> str | None:
    if v is None or isinstance(v, (dict, list)):
        return None
    s = str(v).strip()
    return s or None


def chunk_files(doc: SourceDoc, settings: ChunkSettings) -> list[ChunkFile]:
    folder = doc_chunk_dir(doc.path)
    out = []
    for chunk in chunk_markdown(
        doc.body, settings=settings, first_line=doc.first_line, title=doc.title
    ):
        embed_text = embed_text_for(chunk.trail, chunk.text)
        digest = hashlib.sha256(embed_text.encode()).hexdigest()[:16]
        cid = f"{doc.path}#{chunk.name}"
        meta: dict[str, Any] = {
            "id": cid,
            "kind": "chunk",
            "source_doc": doc.doc_id,
            "source_path": doc.path,
            "source_section": list(chunk.trail),
            "domain": doc.domain,
            "tokens": chunk.tokens,
            "keywords": keywords(chunk.text, chunk.trail),
            "hash": digest,
        }
        data = dump_frontmatter(meta, chunk.text).encode()
        out.append(ChunkFile(f"{folder}/{chunk.name}.md", cid, data, digest, embed_text, chunk))
    return out


def embed_text_for(trail: tuple[str, ...] | list[str], text: str) -> str:
    """What a chunk's vector encodes: its heading trail, then its text."""
    head = " > ".join(trail)
    return f"{head}\n\n{text}" if head else text


def keywords(text: str, trail: tuple[str, ...] = (), n: int = 6) -> list[str]:
    """The chunk's most frequent content words, heading words counted double. Pure."""
    counts: Counter[str] = Counter()
    for w in _WORD.findall(text):
        lw = w.lower()
        if lw not in STOPWORDS:
            counts[lw] += 1
    for t in trail:
        for w in _WORD.findall(t):
            lw = w.lower()
            if lw not in STOPWORDS:
                counts[lw] += 2
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
