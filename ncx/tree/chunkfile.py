"""docs: a source document and the chunk file it yields. Pure: bytes in, bytes out.

A doc's chunk file holds one block per chunk. A block depends only on its own section's
text and the identity of its document (path, DOC-ID, domain): no line numbers, no
position, no whole-document hash, so an edit in one section rewrites only that section's
block (docs/design.md invariant 2).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ncx.errors import BadSource
from ncx.sources import View, format_of, read_view
from ncx.store import body_lines, decode_source, dump_frontmatter, parse_frontmatter
from ncx.tree.chunker import Chunk, ChunkSettings, chunk_markdown
from ncx.words import STOPWORDS

if TYPE_CHECKING:
    from ncx.sources.includes import Fetch

_DOC_ID = re.compile(r"^(DOC-[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\d{2,})$")
# A DOC-ID declared in a doc's header lines (v2 styles: `**DOC-ID:** DOC-API-001` under the
# H1, or `**DOC-CORE-002** | Subtitle`). Only the header counts: bodies mention other docs'
# IDs all the time, and taking one of those would give the chunks a wrong identity.
_HEADER_ID = re.compile(
    r"^\*\*(?:DOC-ID|Doc ID|Document ID|ID):\*\*\s*`?([^\s`|]+)`?|^\*\*(DOC-[^*\s]+)\*\*"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")


@dataclass(frozen=True, slots=True)
class DocMeta:
    """Metadata lent to every chunk of a doc by its sidecar (`<name>.meta.yaml` beside it).

    Made by ncx.tree.sidecar from the v2 sidecar format; values override the doc's frontmatter.
    """

    sidecar: str  # repo-relative path of the sidecar
    doc_id: str | None = None
    title: str | None = None
    status: str | None = None
    domain: str | None = None
    tags: tuple[str, ...] = ()
    summary: str | None = None
    related: tuple[tuple[str, str | None, str | None], ...] = ()  # (id, type, why)
    secrets: tuple[tuple[int, str], ...] = ()  # (line, kind) of each credential redacted

    def frontmatter(self) -> dict[str, Any]:
        """The chunk frontmatter keys it adds (after `domain`), empty values left out."""
        out: dict[str, Any] = {}
        if self.title:
            out["title"] = self.title
        if self.status:
            out["status"] = self.status
        if self.tags:
            out["tags"] = list(self.tags)
        if self.summary:
            out["summary"] = self.summary
        if self.related:
            out["related"] = [
                {k: v for k, v in (("id", i), ("type", t), ("why", w)) if v is not None}
                for i, t, w in self.related
            ]
        out["sidecar"] = self.sidecar
        return out


@dataclass(frozen=True, slots=True)
class SourceDoc:
    path: str  # repo-relative, POSIX
    doc_id: str | None
    domain: str | None
    title: str | None
    body: str
    first_line: int  # view line where body starts (after frontmatter)
    meta: DocMeta | None = None
    view: View | None = None  # the source as markdown; maps view lines to the file's lines
    # (file, line, kind) of each credential redacted: the doc's own, and its sidecar's
    secrets: tuple[tuple[str, int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ChunkBlock:
    """One chunk, as its block in the doc's chunk file (without its `vec` line)."""

    name: str  # unique within the doc: the heading trail's slug
    id: str
    data: bytes
    hash: str  # of embed_text: equal hash, equal vector
    embed_text: str
    chunk: Chunk


def load_doc(
    path: str, data: bytes, sidecar: DocMeta | None = None, includes: Fetch | None = None
) -> SourceDoc:
    """Decode and split a source doc; raise BadSource / BadFrontmatter naming `path`.

    Any source format is first read as markdown (ncx.sources); the DOC-ID comes from
    the sidecar, else the frontmatter, else the header lines. `includes` reads the files
    the doc includes (ncx.tree.includefiles); None leaves include lines as written."""
    text = decode_source(data, path=path)
    conflict = conflict_lines(text)
    if conflict is not None:
        # Chunked as is, both sides of an unmerged edit would become "knowledge" and the
        # markers would be served to agents; the doc's existing chunks stay until it is fixed.
        a, b, c = conflict
        raise BadSource(
            f"has unresolved merge-conflict markers (<<<<<<< line {a}, ======= line {b}, "
            f">>>>>>> line {c}); not chunked (chunks it had are kept)",
            path=f"{path}:{a}",
            hint="resolve the conflict (keep one side, delete the marker lines), then "
            f"`git add {path}`",
        )
    # A credential in a doc never reaches its committed chunk file, a search cache or a
    # frame: it is replaced by a label here, where every reader of a doc starts (sync, the
    # staged check, check's dry run), and the finding travels with the doc to be said.
    view, found = redacted_view(path, text, includes)
    fmt = format_of(path)
    if fmt is None or fmt.frontmatter:
        meta, body, first_line = parse_frontmatter(view.text, path=path)
    else:
        meta, body, first_line = {}, view.text, 1
    sc = sidecar or DocMeta(sidecar="")
    doc_id = sc.doc_id or _str(meta.get("id") or meta.get("doc_id") or meta.get("doc-id"))
    if doc_id is None:
        doc_id = header_doc_id(body)
    domain = sc.domain or _str(meta.get("domain"))
    if domain is None and doc_id and doc_id.count("-") >= 2:
        domain = doc_id.split("-")[1]
    title = sc.title or _str(meta.get("title"))
    secrets = tuple((path, line, kind) for line, kind in found)
    if sidecar is not None:
        secrets += tuple((sidecar.sidecar, line, kind) for line, kind in sidecar.secrets)
    return SourceDoc(path, doc_id, domain, title, body, first_line, sidecar, view, secrets)


def redacted_view(
    path: str, text: str, includes: Fetch | None = None
) -> tuple[View, list[tuple[int, str]]]:
    """The doc's markdown view with its credentials redacted, and (file line, kind) of each.

    The view is what chunks are made of, so it is what is scanned: for a notebook that is
    its cells' text (a key block whose lines were separate JSON strings is one block
    there), for plain markdown the file itself. Line breaks are kept, so the view's map to
    the file's lines still holds and cites each finding at its line in the file."""
    from dataclasses import replace as _replace

    from ncx.secrets import redact

    view = read_view(path, text, includes)
    clean, found = redact(view.text)
    if not found:
        return view, []
    view = _replace(view, text=clean)
    return view, sorted({(view.source_span(f.line, f.line)[0], f.kind) for f in found})


_CONFLICT_START = re.compile(r"^<<<<<<<(?: |$)", re.MULTILINE)
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def conflict_lines(text: str) -> tuple[int, int, int] | None:
    """Lines (1-based) of the first unresolved merge conflict: a `<<<<<<< ` line, then a
    `=======` line, then a `>>>>>>> ` line, all at line starts and outside fenced code (a
    doc about git quotes them there); None when there is none. An underline of seven `=`
    (reST) or a lone quoted marker is not a conflict: the three must come in order."""
    if _CONFLICT_START.search(text) is None:  # most docs: one regex, no line loop
        return None
    fence = ""
    start = middle = 0
    for n, line in enumerate(text.split("\n"), start=1):
        m = _FENCE_LINE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
        elif line.startswith("<<<<<<<") and line[7:8] in ("", " "):
            start, middle = n, 0
        elif start and line.rstrip() == "=======":
            middle = middle or n
        elif start and middle and line.startswith(">>>>>>>") and line[7:8] in ("", " "):
            return start, middle, n
    return None


def header_doc_id(body: str) -> str | None:
    """A DOC-ID declared in the lines under the H1 (before the first `##` or `---`)."""
    lines = body.split("\n")[:30]
    seen_h1 = False
    for i, raw in enumerate(lines):
        line = raw.strip()
        if line.startswith("# ") and not seen_h1:
            seen_h1 = True
            continue
        if line.startswith("## ") or (line == "---" and i > 0) or i >= 20:
            break
        m = _HEADER_ID.match(line)
        if m:
            found = (m.group(1) or m.group(2) or "").strip()
            return found if _DOC_ID.match(found) else None
    return None


def _str(v: Any) -> str | None:
    if v is None or isinstance(v, (dict, list)):
        return None
    s = str(v).strip()
    return s or None


def chunk_blocks(doc: SourceDoc, settings: ChunkSettings) -> list[ChunkBlock]:
    """The blocks of one doc's chunk file, in document order."""
    out = []
    for chunk in chunk_markdown(
        doc.body, settings=settings, first_line=doc.first_line, title=doc.title
    ):
        if doc.view is not None and doc.view.lines is not None:
            start, end = doc.view.source_span(chunk.start_line, chunk.end_line)
            chunk = replace(chunk, start_line=start, end_line=end)
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
            **({} if doc.meta is None else doc.meta.frontmatter()),
            "tokens": chunk.tokens,
            "keywords": keywords(chunk.text, chunk.trail),
            "hash": digest,
            "lines": body_lines(chunk.text),
        }
        data = dump_frontmatter(meta, chunk.text).encode()
        out.append(ChunkBlock(chunk.name, cid, data, digest, embed_text, chunk))
    return out


def chunk_file_bytes(blocks: list[bytes]) -> bytes:
    """A doc's chunk file: its blocks (each with its `vec`) one after another."""
    return b"".join(blocks)


def embed_text_for(trail: tuple[str, ...] | list[str], text: str) -> str:
    """What a chunk's vector encodes: its heading trail, then its text (a reference's
    target left out: ncx.sources.roles.without_link_targets)."""
    from ncx.sources.roles import without_link_targets

    head = " > ".join(trail)
    text = without_link_targets(text)
    return f"{head}\n\n{text}" if head else text


def keywords(text: str, trail: tuple[str, ...] = (), n: int = 6) -> list[str]:
    """The chunk's most frequent content words, heading words counted double. Pure."""
    # Words are ASCII, so they are lowered as one string and counted by Counter's C loop
    # (a Python loop per word was a fifth of chunking a large tree). Lowering ASCII text
    # before the scan finds the same words; other text is lowered after it, since lowering
    # some non-ASCII letters gives ASCII ones (the Kelvin sign gives k).
    if text.isascii():
        counts = Counter(_WORD.findall(text.lower()))
    else:
        counts = Counter(" ".join(_WORD.findall(text)).lower().split())
    # Heading words count double: added twice by Counter's C loop. A word never spans two
    # headings, as the space that joins them ends it.
    heading = " ".join(_WORD.findall(" ".join(trail))).lower().split()
    counts.update(heading)
    counts.update(heading)
    for w in STOPWORDS.intersection(counts):
        del counts[w]
    # Count descending, then word ascending: two stable sorts with C keys (heapq.nsmallest
    # called a Python key per distinct word, 2 million calls on a large tree).
    top = sorted(counts.items(), key=itemgetter(0))
    top.sort(key=itemgetter(1), reverse=True)
    return [w for w, _ in top[:n]]
