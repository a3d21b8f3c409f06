"""mlda: read a v2 project tree (`.mlda/`, sidecars, `docs/`) into typed values for `ncx migrate`.

Pure and tolerant: it reads files and returns a `V2Project` listing every problem it met. It never
writes, prints, or gives up on bad input. Sidecars and topic files are the truth. The registry,
learning index, activation context and project brief are derived: they are only cross-checked.
The input format and its quirks are described in docs/v2-format.md (cited as "v2-format §N").

One module per artifact kind, below this one: `values` (the typed values), `files` (every
file read, the walk, coercions), `sidecars`, `registry`, `topics`. This module reads the docs
and handoffs, walks the whole tree and cross-checks it; its public names are the reader's.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from ncx.errors import NcxError
from ncx.v2.files import (
    _int,
    _is_template,
    _list,
    _map,
    _Reader,
    _show,
    _strings,
    _text,
    _walk,
    classify_id,
    decode_bytes,
    escapes_repo,
)
from ncx.v2.registry import _check_registry, _read_registry, _registry_candidates, _resolve_registry
from ncx.v2.sidecars import _read_sidecar, parse_sidecar
from ncx.v2.topics import _domain_refs, _read_patterns, _read_topic
from ncx.v2.values import (
    _BOLD_FIELD_RE,
    _SIDECAR_SUFFIX,
    _TEMPLATE_RE,
    _TEXT_ID_BOLD_RE,
    _TEXT_ID_FIELD_RE,
    _TOOLING_DIRS,
    BOM,
    DERIVED_KINDS,
    DOC_ID_RE,
    MLDA,
    SCHEMA_DOC_ID_RE,
    Artifact,
    ArtifactKind,
    CrossDomain,
    DerivedFile,
    Disagreement,
    DocRole,
    EntryKind,
    Handoff,
    HandoffPhase,
    IdSource,
    LearningEntry,
    Level,
    Prediction,
    Problem,
    Registry,
    RegistryEntry,
    RegistryShape,
    Relation,
    Sidecar,
    SidecarShape,
    Stamp,
    TitleSource,
    Topic,
    TopicDomain,
    V2Config,
    V2Doc,
    V2Project,
)

# ---------------------------------------------------------------- markdown

# The reader's public names, wherever they live now (callers import them from here).
__all__ = [
    "BOM",
    "DERIVED_KINDS",
    "DOC_ID_RE",
    "MLDA",
    "SCHEMA_DOC_ID_RE",
    "Artifact",
    "ArtifactKind",
    "CrossDomain",
    "DerivedFile",
    "Disagreement",
    "DocRole",
    "EntryKind",
    "Handoff",
    "HandoffPhase",
    "IdSource",
    "LearningEntry",
    "Level",
    "Prediction",
    "Problem",
    "Registry",
    "RegistryEntry",
    "RegistryShape",
    "Relation",
    "Sidecar",
    "SidecarShape",
    "Stamp",
    "TitleSource",
    "Topic",
    "TopicDomain",
    "V2Config",
    "V2Doc",
    "V2Project",
    "classify_id",
    "decode_bytes",
    "escapes_repo",
    "parse_sidecar",
    "read_v2",
]


def _heading_and_text_id(text: str) -> tuple[str | None, str | None, int | None]:
    """(H1 title, ID declared in the header lines, its line). Only the header is searched:
    bodies mention other docs' IDs all the time."""
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":  # skip YAML frontmatter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        start = 0 if end is None else end + 1
    title = None
    for i in range(start, min(len(lines), start + 20)):
        if lines[i].startswith("# "):
            title, start = lines[i][2:].strip() or None, i + 1
            break
    for i in range(start, min(len(lines), start + 12)):
        line = lines[i].strip()
        if line == "---" or line.startswith("## "):
            break
        m = _TEXT_ID_FIELD_RE.match(line) or _TEXT_ID_BOLD_RE.match(line)
        if m:
            return title, m.group(1), i + 1
    return title, None, None


def _read_handoff(rel: str, text: str) -> Handoff:
    header: dict[str, str] = {}
    phases: list[HandoffPhase] = []
    current: tuple[str, int, dict[str, str]] | None = None
    for n, line in enumerate(text.split("\n"), start=1):
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            if line.startswith("### ") and heading.lower().startswith("phase"):
                if current is not None:
                    phases.append(_phase(*current))
                current = (heading, n, {})
            elif line.startswith("## ") and current is not None:
                phases.append(_phase(*current))
                current = None
            continue
        m = _BOLD_FIELD_RE.match(line.strip())
        if m is None:
            continue
        if current is not None:
            current[2].setdefault(m.group(1).strip(), m.group(2))
        elif not phases:
            header.setdefault(m.group(1).strip(), m.group(2))
    if current is not None:
        phases.append(_phase(*current))
    version = re.search(r"Handoff Document Template v([\d.]+)", text)
    return Handoff(
        path=rel,
        fields=header,
        phases=tuple(phases),
        template_version=None if version is None else version.group(1),
        placeholders=len(_TEMPLATE_RE.findall(text)),
        filled=any(p.filled for p in phases),
    )


def _phase(title: str, line: int, fields: dict[str, str]) -> HandoffPhase:
    def real(v: str) -> bool:
        return bool(v.strip()) and not _is_template(v)

    status = fields.get("Status", "")
    under_way = real(status) and status.strip().lower() not in {"not started", "pending"}
    others = any(real(v) for k, v in fields.items() if k != "Status")
    return HandoffPhase(title, line, fields, under_way and others)


# ---------------------------------------------------------------- the whole tree


def _classify(rel: str) -> ArtifactKind:
    inner = rel[len(MLDA) + 1 :] if rel.startswith(MLDA + "/") else None
    top = None if inner is None else inner.split("/", 1)[0]
    if top in _TOOLING_DIRS:
        return "tooling"
    if rel.endswith(_SIDECAR_SUFFIX):
        return "sidecar"
    if rel.startswith(".beads/"):
        return "beads"
    if inner is None:
        return "doc" if rel.endswith(".md") else "other"
    fixed: dict[str, ArtifactKind] = {
        "registry.yaml": "registry",
        "learning-index.yaml": "learning-index",
        "activation-context.yaml": "activation-context",
        "project-brief.md": "project-brief",
        "project-brief.json": "project-brief",
        "config.yaml": "config",
        "graph.mmd": "graph",
    }
    if inner in fixed:
        return fixed[inner]
    parts = inner.split("/")
    if top == "topics" and len(parts) >= 3:
        if parts[1] == "_cross-domain" and parts[2] == "patterns.yaml":
            return "patterns"
        if parts[1].startswith("_"):
            return "topic-template"
        if len(parts) == 3 and parts[2] == "learning.yaml":
            return "learning"
        if len(parts) == 3 and parts[2] == "domain.yaml":
            return "topic-domain"
    return "doc" if rel.endswith(".md") else "other"


def _md_role(rel: str) -> DocRole | None:
    """The role of a markdown file found by the scan, or None if it is not a v2 doc by place."""
    if rel.startswith(f"{MLDA}/docs/"):
        return "store"
    if rel == "docs/handoff.md":
        return "handoff"
    if rel.startswith("docs/"):
        return "project"
    if rel.startswith(MLDA + "/"):
        parts = rel.split("/")
        if len(parts) == 2 and rel != f"{MLDA}/project-brief.md":
            return "prose"
        if parts[1] == "topics" and not any(p.startswith("_") for p in parts[2:-1]):
            return "prose"
    return None


def _pair(
    r: _Reader, sidecars: list[Sidecar], files: set[str], reg_paths: Mapping[str, str]
) -> tuple[dict[str, Sidecar], list[Sidecar]]:
    """Match each sidecar with its .md: next to it, then (for .mlda/) at the root-relative
    path, then wherever the registry puts its DOC-ID. Returns ({md: sidecar}, orphans)."""
    paired: dict[str, Sidecar] = {}
    fallback: list[tuple[Sidecar, list[str]]] = []
    for sc in sidecars:
        md = sc.path[: -len(_SIDECAR_SUFFIX)] + ".md"
        if md in files:
            paired[md] = sc
            continue
        cands = []
        if sc.path.startswith(MLDA + "/"):
            cands.append(md[len(MLDA) + 1 :])
        if sc.id is not None and sc.id in reg_paths:
            cands.append(reg_paths[sc.id])
        fallback.append((sc, cands))
    orphans: list[Sidecar] = []
    # Adjacent sidecars win; a fallback never displaces one.
    for sc, cands in fallback:
        found = next((c for c in cands if c in files and c not in paired), None)
        if found is None:
            taken = [c for c in cands if c in paired]
            why = f"; {taken[0]} already has {paired[taken[0]].path}" if taken else ""
            r.report(sc.path, f"orphan sidecar: no .md found{why}")
            orphans.append(sc)
        else:
            r.report(sc.path, f"sidecar's doc is not next to it; paired with {found}", level="note")
            paired[found] = sc
    return paired, orphans


def _build_doc(
    r: _Reader, rel: str, role: DocRole, sidecar: Sidecar | None, reg: Mapping[str, RegistryEntry]
) -> V2Doc | None:
    text = r.read_text(rel)
    if text is None:
        return None
    heading, raw_text_id, line = _heading_and_text_id(text)
    text_id = None
    if raw_text_id is not None:
        kind = classify_id(raw_text_id)
        if kind == "valid":
            text_id = raw_text_id
        elif kind == "placeholder":
            r.report(
                rel,
                f"header declares placeholder ID {raw_text_id}; ignored",
                line=line,
                level="note",
            )
        else:
            r.report(
                rel,
                f"header declares {raw_text_id!r}, not a DOC-ID; ignored",
                line=line,
                level="note",
            )

    entry = reg.get(rel)
    doc_id: str | None
    id_source: IdSource
    if sidecar is not None and sidecar.id is not None:
        doc_id, id_source = sidecar.id, "sidecar"
        if text_id is not None and text_id != sidecar.id:
            r.report(
                rel,
                f"header says {text_id} but the sidecar says {sidecar.id}; sidecar kept",
                line=line,
            )
    elif text_id is not None:
        doc_id, id_source = text_id, "text"
    elif entry is not None and entry.id is not None and classify_id(entry.id) == "valid":
        # A registered doc whose sidecar is gone: the registry is the last place the ID survives.
        doc_id, id_source = entry.id, "registry"
        r.report(rel, f"DOC-ID {entry.id} known only from the registry")
    else:
        doc_id, id_source = None, "none"

    title_source: TitleSource
    if sidecar is not None and sidecar.title:
        title, title_source = sidecar.title, "sidecar"
    elif heading:
        title, title_source = heading, "heading"
    elif entry is not None and entry.title:
        title, title_source = entry.title, "registry"
    else:
        title, title_source = posixpath.basename(rel).removesuffix(".md"), "filename"

    return V2Doc(
        path=rel,
        role=role,
        doc_id=doc_id,
        id_source=id_source,
        text_id=text_id,
        title=title,
        title_source=title_source,
        status=None if sidecar is None else sidecar.status,
        domain=None if sidecar is None else sidecar.domain,
        tags=() if sidecar is None else sidecar.tags,
        summary=None if sidecar is None else sidecar.summary,
        related=() if sidecar is None else sidecar.related,
        sidecar=sidecar,
        text=text,
        encoding=r.encodings.get(rel, "utf-8"),
    )


def read_v2(repo_root: Path) -> V2Project:
    """Read everything v2 left in repo_root. Never writes; raises only if repo_root is no folder."""
    root = Path(repo_root)
    if not root.is_dir():
        raise NcxError("not a folder", path=root, hint="pass the root of the project to migrate")
    r = _Reader(root)
    all_files = _walk(r)
    files = set(all_files)
    has_mlda = (root / MLDA).is_dir()
    kinds = {f: _classify(f) for f in all_files}

    registry = None
    if f"{MLDA}/registry.yaml" in files:
        registry = _read_registry(r, f"{MLDA}/registry.yaml")

    sidecar_files = [
        f
        for f in all_files
        if f.endswith(_SIDECAR_SUFFIX)
        and kinds[f] == "sidecar"
        and not f.startswith(tuple(f"{MLDA}/{d}/" for d in (*_TOOLING_DIRS, "topics")))
    ]
    # Registry paths as hints only: to find a sidecar's doc, and to lend a title/ID to a doc
    # whose sidecar is gone. Entries are checked against the sources further down.
    reg_by_path: dict[str, RegistryEntry] = {}
    for e in () if registry is None else registry.entries:
        cand = None if e.path is None else _registry_candidates(r, e.path)[0]
        if cand is not None:
            reg_by_path.setdefault(cand, e)
    reg_by_id = {e.id: path for path, e in reg_by_path.items() if e.id}

    read = {f: _read_sidecar(r, f) for f in sidecar_files}
    sidecars = [sc for sc in read.values() if sc is not None]
    paired, orphans = _pair(r, sidecars, files, reg_by_id)
    # A sidecar that failed to parse still marks its .md as a doc to migrate (without metadata).
    unread = {f[: -len(_SIDECAR_SUFFIX)] + ".md" for f, sc in read.items() if sc is None}

    roles: dict[str, DocRole] = {}
    for f in all_files:
        if f.endswith(".md") and (role := _md_role(f)) is not None:
            roles[f] = role
    for md in [*paired, *(u for u in unread if u in files)]:
        roles.setdefault(md, "paired")
    docs = [
        d
        for d in (_build_doc(r, md, roles[md], paired.get(md), reg_by_path) for md in sorted(roles))
        if d is not None
    ]
    by_id: dict[str, V2Doc] = {}
    for d in docs:
        if d.doc_id is None:
            continue
        if d.doc_id in by_id:
            r.report(d.path, f"DOC-ID {d.doc_id} is also declared by {by_id[d.doc_id].path}")
        else:
            by_id[d.doc_id] = d

    handoff_doc = next((d for d in docs if d.role == "handoff"), None)
    handoff = None if handoff_doc is None else _read_handoff(handoff_doc.path, handoff_doc.text)

    topics: list[Topic] = []
    cross: CrossDomain | None = None
    topic_dirs = sorted(
        {
            f.split("/")[2]
            for f in all_files
            if f.startswith(f"{MLDA}/topics/") and f.count("/") >= 3
        }
    )
    for name in topic_dirs:
        folder = f"{MLDA}/topics/{name}"
        if name == "_cross-domain":
            if f"{folder}/patterns.yaml" in files:
                cross = _read_patterns(r, f"{folder}/patterns.yaml")
        elif not name.startswith("_"):  # _example is a template (v2-format §0.9)
            topics.append(_read_topic(r, folder, files))

    config = None
    if f"{MLDA}/config.yaml" in files:
        config = _read_config(r, f"{MLDA}/config.yaml")

    derived: list[DerivedFile] = []
    derived_files: tuple[tuple[str, ArtifactKind], ...] = (
        (f"{MLDA}/learning-index.yaml", "learning-index"),
        (f"{MLDA}/activation-context.yaml", "activation-context"),
        (f"{MLDA}/project-brief.json", "project-brief"),
    )
    for rel, kind in derived_files:
        if rel in files and (df := _read_derived(r, rel, kind)) is not None:
            derived.append(df)

    if registry is not None:
        registry = _resolve_registry(r, registry, by_id)

    _check_refs(r, set(by_id), docs, orphans, topics, cross)
    disagreements: list[Disagreement] = []
    if registry is not None:
        disagreements += _check_registry(registry, docs, by_id)
    for df in derived:
        disagreements += _check_derived(r, df, docs, topics)

    artifacts = tuple(
        Artifact(f, kinds[f], r.encodings.get(f), f in r.crlf)
        for f in all_files
        if f.startswith(MLDA + "/") or f in roles or kinds[f] == "sidecar"
    )
    beads = root / ".beads"
    if beads.is_dir() and not beads.is_symlink():
        artifacts += tuple(
            Artifact(f".beads/{p.name}", "beads", None, False)
            for p in sorted(beads.iterdir())
            if p.is_file() and not p.is_symlink()
        )
    return V2Project(
        root=root,
        has_mlda=has_mlda,
        docs=tuple(docs),
        orphan_sidecars=tuple(orphans),
        topics=tuple(topics),
        cross_domain=cross,
        handoff=handoff,
        registry=registry,
        derived=tuple(derived),
        config=config,
        artifacts=artifacts,
        problems=tuple(r.problems),
        disagreements=tuple(disagreements),
    )


def _read_config(r: _Reader, rel: str) -> V2Config | None:
    loaded = r.load_yaml(rel, level="warning")
    if loaded is None or not isinstance(loaded[0], dict):
        return None
    data = loaded[0]
    limits = _map(data.get("context_limits"))
    return V2Config(
        rel, _int(limits.get("soft_threshold_tokens")), _int(limits.get("hardstop_tokens")), data
    )


def _read_derived(r: _Reader, rel: str, kind: ArtifactKind) -> DerivedFile | None:
    if rel.endswith(".json"):
        text = r.read_text(rel, level="note")
        if text is None:
            return None
        try:
            data: object = json.loads(text)
        except json.JSONDecodeError as exc:
            r.report(rel, f"JSON does not parse ({exc.msg}); ignored", line=exc.lineno)
            return None
    else:
        loaded = r.load_yaml(rel, level="warning")
        if loaded is None:
            return None
        data = loaded[0]
    if not isinstance(data, dict):
        r.report(rel, "not a mapping; ignored", level="note")
        return None
    return DerivedFile(rel, kind, data)


# ---------------------------------------------------------------- cross-checks


def _check_refs(
    r: _Reader,
    known: set[str],
    docs: Iterable[V2Doc],
    orphans: Iterable[Sidecar],
    topics: Iterable[Topic],
    cross: CrossDomain | None,
) -> None:
    """Report references to IDs that no doc defines (dangling), once per file and ID."""
    refs: list[tuple[str, str, str, int | None]] = []  # (id, file, where, line)
    sidecars = [d.sidecar for d in docs if d.sidecar is not None] + list(orphans)
    for sc in sidecars:
        refs += [(rel.id, sc.path, "related", None) for rel in sc.related]
        refs += [
            (i, sc.path, f"predictions.{p.task}", None)
            for p in sc.predictions
            for i in (*p.required, *p.likely)
        ]
    entries = [e for t in topics for e in t.entries] + (
        [] if cross is None else list(cross.entries)
    )
    refs += [(i, e.source, f"{e.list_key}[{e.index}]", e.line) for e in entries for i in e.docs]
    for t in topics:
        if t.domain is not None:
            for i, where in _domain_refs(t.domain):
                kind = classify_id(i)
                if kind == "placeholder":
                    r.report(t.domain.path, f"{where}: placeholder ID {i}", level="note")
                elif kind == "valid":
                    refs.append((i, t.domain.path, where, None))
    seen: set[tuple[str, str]] = set()
    for i, path, where, line in refs:
        if i not in known and classify_id(i) == "valid" and (i, path) not in seen:
            seen.add((i, path))
            r.report(path, f"{where}: {i} is not defined by any document (dangling)", line=line)


def _check_derived(
    r: _Reader, df: DerivedFile, docs: list[V2Doc], topics: list[Topic]
) -> list[Disagreement]:
    out: list[Disagreement] = []

    def add(subject: str, field: str, derived: object, actual: object) -> None:
        out.append(Disagreement(df.path, subject, field, _show(derived), _show(actual)))

    data = df.data
    with_data = {t.name for t in topics if t.entries}
    if df.kind == "learning-index":
        listed = _map(data.get("topics"))
        if set(listed) != with_data:
            add("topics", "topics", list(listed), sorted(with_data))
        empty = set(_strings(data.get("empty_topics")))
        actual_empty = {t.name for t in topics} - with_data
        if "empty_topics" in data and empty != actual_empty:
            add("topics", "empty_topics", empty, actual_empty)
        if "generated_from" in data and _int(data.get("generated_from")) != len(with_data):
            add("topics", "generated_from", data.get("generated_from"), len(with_data))
        by_name = {t.name: t for t in topics}
        for name, info in listed.items():
            m, t = _map(info), by_name.get(name)
            lp = _text(m.get("learning_path"))
            if lp is not None and (escapes_repo(lp) or not r.inside(lp)):
                r.report(
                    df.path, f"topics.{name}.learning_path {lp!r} leaves the repository; refused"
                )
            elif t is not None and lp is not None and lp != t.learning_path:
                add(name, "learning_path", lp, t.learning_path)
            if t is None:
                continue
            for flag, kind in (("has_groupings", "grouping"), ("has_activations", "activation")):
                actual = any(e.kind == kind for e in t.entries)
                if flag in m and bool(m.get(flag)) != actual:
                    add(name, flag, m.get(flag), actual)
    elif df.kind == "activation-context":
        mlda = _map(data.get("mlda"))
        store = [d for d in docs if d.role == "store" and d.doc_id]
        if "doc_count" in mlda and _int(mlda.get("doc_count")) != len(store):
            add("mlda", "doc_count", mlda.get("doc_count"), len(store))
        domains = {d.domain for d in docs if d.domain}
        if "domains" in mlda and set(_strings(mlda.get("domains"))) != domains:
            add("mlda", "domains", _strings(mlda.get("domains")), domains)
        learning = _map(data.get("learning"))
        if "topics_with_data" in learning and _int(learning.get("topics_with_data")) != len(
            with_data
        ):
            add("learning", "topics_with_data", learning.get("topics_with_data"), len(with_data))
    elif df.kind == "project-brief":
        stats = _map(data.get("statistics"))
        store = [d for d in docs if d.role == "store" and d.doc_id]
        if "TotalDocs" in stats and _int(stats.get("TotalDocs")) != len(store):
            add("statistics", "TotalDocs", stats.get("TotalDocs"), len(store))
        by_id = {d.doc_id: d for d in docs if d.doc_id}
        for code, items in _map(data.get("domains")).items():
            for item in _list(items):
                m = _map(item)
                doc_id = _text(m.get("id"))
                if doc_id is None:
                    continue
                doc = by_id.get(doc_id)
                if doc is None:
                    add(doc_id, "domains", code, "(no such document)")
                elif _text(m.get("title")) != doc.title:
                    add(doc_id, "title", m.get("title"), doc.title)
    return out
