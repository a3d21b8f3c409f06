"""The v2 registry (`.mlda/registry.yaml`): derived, so only read and cross-checked against
the sidecars it summarises.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace

from ncx.v2.files import _int, _list, _map, _Reader, _show, _strings, _text, escapes_repo
from ncx.v2.values import (
    _INVERSE,
    MLDA,
    Disagreement,
    Registry,
    RegistryEntry,
    RegistryShape,
    V2Doc,
)

# ---------------------------------------------------------------- registry


def _read_registry(r: _Reader, rel: str) -> Registry | None:
    loaded = r.load_yaml(rel, level="warning")
    if loaded is None:
        return None
    data = loaded[0]
    if not isinstance(data, dict):
        r.report(rel, "registry is not a mapping; ignored")
        return None
    if "neocortex" in data:
        shape: RegistryShape = "neocortex"
    elif "graph" in data or "hubs" in data or "last_updated" in data:
        shape = "regenerated"
    elif "schema_version" in data or "project" in data or "created" in data:
        shape = "init"
    else:
        shape = "unknown"
    docs = data.get("documents")
    # mlda-generate-activation-context.ps1 expected a mapping keyed by DOC-ID; accept both.
    items: list[tuple[str | None, object]] = (
        [(str(k), v) for k, v in docs.items()]
        if isinstance(docs, dict)
        else [(None, v) for v in _list(docs)]
    )
    entries: list[RegistryEntry] = []
    for i, (key, item) in enumerate(items):
        if not isinstance(item, dict):
            r.report(rel, f"documents[{i}] is not a mapping; ignored", level="note")
            continue
        entries.append(
            RegistryEntry(
                id=_text(item.get("id")) or key,
                title=_text(item.get("title")),
                path=_text(item.get("path")),
                resolved=None,
                status=_text(item.get("status")),
                tags=_strings(item.get("tags")),
                domain=_text(item.get("domain")),
                relates_to=_edges(item.get("relates_to")),
                referenced_by=_edges(item.get("referenced_by")),
                raw=item,
            )
        )
    return Registry(
        path=rel,
        shape=shape,
        last_updated=_text(data.get("last_updated")),
        domains=_strings(data.get("domains")),
        entries=tuple(entries),
        raw=data,
    )


def _edges(value: object) -> tuple[tuple[str, str], ...]:
    out = []
    for item in _list(value):
        m = _map(item)
        eid, etype = _text(m.get("id")), _text(m.get("type"))
        if eid is not None:
            out.append((eid, etype or ""))
    return tuple(out)


def _registry_candidates(r: _Reader, path: str) -> tuple[str | None, bool]:
    """(repo-relative file, refused). Registry paths are relative to .mlda/ (v2-format §0.4)."""
    p = path.replace("\\", "/")
    if escapes_repo(p):
        return None, True
    refused = False
    for cand in (posixpath.normpath(posixpath.join(MLDA, p)), posixpath.normpath(p)):
        if escapes_repo(cand) or not r.inside(cand):
            refused = True
            continue
        if (r.root / cand).is_file():
            return cand, False
    return None, refused


def _resolve_registry(r: _Reader, registry: Registry, by_id: Mapping[str, V2Doc]) -> Registry:
    """Fill in each entry's `resolved`: its path (v2-format §0.4 order), else its DOC-ID's doc."""
    entries = []
    for e in registry.entries:
        resolved, refused = (None, False) if e.path is None else _registry_candidates(r, e.path)
        if refused and resolved is None:
            r.report(registry.path, f"{e.id}: path {e.path!r} leaves the repository; refused")
        if resolved is None and e.id is not None and e.id in by_id:
            resolved = by_id[e.id].path
            if e.path is not None:
                r.report(
                    registry.path, f"{e.id}: {e.path!r} not found; matched by ID", level="note"
                )
        elif resolved is None:
            r.report(registry.path, f"{e.id}: path {e.path!r} names no file and the ID no doc")
        entries.append(replace(e, resolved=resolved))
    return replace(registry, entries=tuple(entries))


def _check_registry(
    reg: Registry, docs: list[V2Doc], by_id: Mapping[str, V2Doc]
) -> list[Disagreement]:
    out: list[Disagreement] = []

    def add(subject: str, field: str, derived: object, actual: object) -> None:
        out.append(Disagreement(reg.path, subject, field, _show(derived), _show(actual)))

    # mlda-registry.ps1 only scans .mlda/docs (v2-format §2); judge it against that scope.
    store = [d for d in docs if d.role == "store" and d.sidecar is not None and d.doc_id]
    listed = {e.id for e in reg.entries if e.id}
    for d in store:
        if d.doc_id not in listed:
            add(d.doc_id or "", "documents", "(absent)", d.path)
    inverse: dict[str, set[tuple[str, str]]] = {}
    for d in store:
        for rel in d.related:
            inverse.setdefault(rel.id, set()).add(
                (d.doc_id or "", _INVERSE.get(rel.type or "", ""))
            )
    for e in reg.entries:
        if e.id is None:
            continue
        doc = by_id.get(e.id)
        if doc is None:
            add(e.id, "documents", e.path, "(no such document)")
            continue
        if e.resolved is not None and e.resolved != doc.path:
            add(e.id, "path", e.resolved, doc.path)
        if doc.sidecar is None:
            continue
        for name, derived, actual in (
            ("title", e.title, doc.title),
            ("status", e.status, doc.status),
            ("domain", e.domain, doc.domain),
        ):
            # Shape-B entries carry no domain; absence in derived data is not a claim.
            if derived is not None and derived != actual:
                add(e.id, name, derived, actual)
        if set(e.tags) != set(doc.tags):
            add(e.id, "tags", e.tags, doc.tags)
        stated = {(rel.id, rel.type or "") for rel in doc.related}
        if set(e.relates_to) != stated:
            add(
                e.id,
                "relates_to",
                [f"{i} {t}" for i, t in e.relates_to],
                [f"{i} {t}" for i, t in stated],
            )
        if "referenced_by" in e.raw or e.id in inverse:
            expect = inverse.get(e.id, set())
            if set(e.referenced_by) != expect:
                add(
                    e.id,
                    "referenced_by",
                    [f"{i} {t}" for i, t in e.referenced_by],
                    [f"{i} {t}" for i, t in expect],
                )
    graph = _map(reg.raw.get("graph"))
    if graph:
        rel_count = sum(len(d.related) for d in store)
        types = Counter(rel.type for d in store for rel in d.related)
        for stat, count in (
            ("total_documents", len(store)),
            ("total_relationships", rel_count),
            ("documents_with_relationships", sum(1 for d in store if d.related)),
        ):
            if stat in graph and _int(graph.get(stat)) != count:
                add("graph", stat, graph.get(stat), count)
        counted = {k: _int(v) for k, v in _map(reg.raw.get("relationship_types")).items()}
        if counted and counted != dict(types):
            add(
                "graph",
                "relationship_types",
                [f"{k}={v}" for k, v in counted.items()],
                [f"{k}={v}" for k, v in types.items()],
            )
    return out
