"""sidecar: a doc's `<name>.meta.yaml` beside it -> the DocMeta its chunks carry. Pure.

Why sidecars stay where they are instead of being copied into .neocortex/: the sidecar is
already one committed file per doc (docs/design.md invariant 1), it is the v2 source of truth
(docs/v2-format.md §0.6), and reading it at every sync means an edit to it reaches
the chunks on the next commit with no second copy to drift. The same file works after
`ncx migrate --archive` (it moves with its doc) and for v3 projects that never had v2.
"""

from __future__ import annotations

from ncx.errors import BadSource
from ncx.tree.chunkfile import DocMeta

SUFFIX = ".meta.yaml"


def sidecar_path(doc_path: str) -> str | None:
    """`docs/a.md` -> `docs/a.meta.yaml`; None for a path that is not markdown."""
    for ext in (".md", ".markdown"):
        if doc_path.lower().endswith(ext):
            return doc_path[: -len(ext)] + SUFFIX
    return None


def read_doc_meta(rel: str, data: bytes) -> tuple[DocMeta | None, list[BadSource]]:
    """Parse sidecar bytes; (None, [error]) when it does not parse. Warnings are left to
    `ncx migrate`, which reports them; only what makes the sidecar unusable is an error here."""
    from ncx.store import yaml_problem
    from ncx.v2.reader import parse_sidecar  # yaml and the v2 reader only when a sidecar exists

    # The v2 reader shares anchored values instead of copying them, but a chunk's frontmatter
    # is written out in full: an alias bomb in a sidecar would become gigabytes of chunks.
    bomb = yaml_problem(data.decode("utf-8", "replace"))
    if bomb is not None:
        return None, [
            BadSource(
                f"sidecar refused: {bomb}",
                path=rel,
                hint="write the sidecar without &anchors / *aliases; its doc is chunked "
                "without its metadata meanwhile",
            )
        ]
    sc, problems = parse_sidecar(rel, data)
    errors = [
        BadSource(
            p.message + (f" (line {p.line})" if p.line else ""),
            path=rel,
            hint="fix the sidecar's YAML; its doc is chunked without its metadata meanwhile",
        )
        for p in problems
        if p.level == "error"
    ]
    if sc is None:
        return None, errors
    from ncx.secrets import find_secrets, redact

    # Its values are copied into every chunk's frontmatter: a credential in a summary or a
    # tag is kept out as a doc's is (the parsed values are redacted, never the YAML, whose
    # syntax a label could break); the lines are the sidecar's own, to say where it is.
    found = find_secrets(data.decode("utf-8", "replace"))

    def clean(value: str | None) -> str | None:
        return value if value is None or not found else redact(value)[0]

    meta = DocMeta(
        sidecar=rel,
        doc_id=clean(sc.id),
        title=clean(sc.title),
        status=clean(sc.status),
        domain=clean(sc.domain),
        tags=tuple(redact(t)[0] for t in sc.tags) if found else sc.tags,
        summary=clean(sc.summary),
        related=tuple((r.id, r.type, clean(r.why)) for r in sc.related),
        secrets=tuple((f.line, f.kind) for f in found),
    )
    return meta, errors
