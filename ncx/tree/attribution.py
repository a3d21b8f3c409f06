"""attribution: are a chunk file's vectors the manifest's model's? Sampled, by re-embedding.

A chunk's `hash` is of its text, not of its vector: a vector made by another model of the
same dimension passes every other check. That happens after a merge of a branch that
switched models (`ncx model use`) with one that added or edited docs meanwhile: the merged
manifest names the new model, the other side's chunk files keep the old model's vectors, and
git merges them without a conflict. So the judges re-embed one block of each chunk file they
judge (a batch of short texts: milliseconds) and compare it with the vector the file holds:
another model's vector points elsewhere (cosine near 0 for unrelated models), the same
model's agrees up to float16 rounding. No format change and nothing written: the chunk files
of a tree stay what they are (design.md invariants 2 and 3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ncx.errors import NcxError

if TYPE_CHECKING:
    from ncx.embedder import Embedder

# A block's stored vector against the same text embedded again by the manifest's model:
# float16 rounding keeps the same model above 0.999; unrelated models of one dimension
# land near 0. Far apart, so no tuning: any value in between would do.
SAME_MODEL_COSINE = 0.9


def _sample(rel: str, data: bytes, dim: int) -> tuple[object, str, str | None] | None:
    """(stored vector, embed text, its doc) of one of the file's shortest blocks whose text
    is as its hash says; None when none can be judged (another check names what is wrong)."""
    from ncx.store import (
        decode_vec,
        inline_vec,
        parse_frontmatter,
        split_chunk_file,
        without_inline_vec,
    )
    from ncx.tree.chunkfile import embed_text_for

    try:
        blocks = split_chunk_file(data, path=rel)
    except NcxError:
        return None
    # The shortest blocks first: a vector is as telling from a short text as a long one,
    # and tokenizing is most of the cost (400 first blocks: 0.24 s of a 0.56 s sample).
    for block in sorted(blocks, key=len)[:3]:
        b64 = inline_vec(block)
        vec = None if b64 is None else decode_vec(b64, dim)
        if vec is None:
            continue
        try:
            meta, body, _ = parse_frontmatter(
                without_inline_vec(block).decode("utf-8", "replace"), path=rel
            )
        except NcxError:
            continue
        trail = meta.get("source_section") or []
        if not isinstance(trail, list):
            continue
        text = body.lstrip("\n")
        text = text[:-1] if text.endswith("\n") else text
        embed_text = embed_text_for([str(t) for t in trail], text)
        if hashlib.sha256(embed_text.encode()).hexdigest()[:16] == meta.get("hash"):
            doc = meta.get("source_path")
            return vec, embed_text, doc if isinstance(doc, str) else None
    return None


def foreign_files(
    files: Mapping[str, bytes], embedder: Embedder, dim: int
) -> list[tuple[str, str | None]]:
    """The chunk files (repo-relative path -> bytes) whose sampled vector is not what
    `embedder` gives for its text (made by another model), each with its doc."""
    import numpy as np

    samples = [(rel, s) for rel, data in sorted(files.items()) if (s := _sample(rel, data, dim))]
    if not samples:
        return []
    from ncx.embedder import StaticEmbedder

    texts = [text for _rel, (_vec, text, _doc) in samples]
    # One text per file, hundreds of files: embedded as a first sync's batch is (the table
    # widened once, the texts tokenized as one), the same vectors at a fraction of the cost.
    if isinstance(embedder, StaticEmbedder) and len(texts) > 1:
        raw = embedder.embed_here(texts, bulk=True)
    else:
        raw = embedder.embed(texts)
    fresh = np.asarray(raw, dtype=np.float32)
    out = []
    for (rel, (vec, _text, doc)), new in zip(samples, fresh, strict=True):
        old = np.asarray(vec, dtype=np.float32)
        a, b = float(np.linalg.norm(old)), float(np.linalg.norm(new))
        if a == 0.0 or b == 0.0:
            # A text with no word the model knows embeds to zeros under any model that
            # knows none of them: no direction to compare; foreign only if one side has one.
            if (a == 0.0) != (b == 0.0):
                out.append((rel, doc))
            continue
        if float(old @ new) / (a * b) < SAME_MODEL_COSINE:
            out.append((rel, doc))
    return out


def foreign_message(doc: str | None) -> str:
    """What a judge says of a chunk file `foreign_files` named, with the command that fixes it."""
    target = f" {doc}" if doc else ""
    return (
        "holds vectors another model made (not the manifest's: a merge of a branch that "
        f"switched models?); run `ncx sync --reembed{target}` and commit .neocortex"
    )
