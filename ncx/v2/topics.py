"""v2 topics (`.mlda/topics/<domain>/`): learning entries, domain files and cross-domain
patterns read into `Topic` values.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ncx.v2.files import _ids, _int, _item_lines, _list, _map, _Reader, _strings, _text
from ncx.v2.values import (
    _LEARNING_LISTS,
    _LEARNING_TOP_KEYS,
    _PATTERN_LISTS,
    CrossDomain,
    EntryKind,
    LearningEntry,
    Topic,
    TopicDomain,
)

# ---------------------------------------------------------------- topics


def _entries(
    r: _Reader,
    rel: str,
    topic: str,
    data: Mapping[str, object],
    node: Any,
    lists: Mapping[str, tuple[EntryKind, tuple[str, ...], str | None, str | None, str | None]],
) -> list[LearningEntry]:
    out: list[LearningEntry] = []
    for list_key, (kind, required, docs_key, label_key, date_key) in lists.items():
        value = data.get(list_key)
        if list_key in data and value is None:
            continue  # only commented examples under the key (v2-format §0.2)
        if value is not None and not isinstance(value, list):
            r.report(rel, f"{list_key} is not a list; read as one entry")
        lines = _item_lines(node, list_key)
        for i, item in enumerate(_list(value)):
            line = lines[i] if i < len(lines) else None
            if item is None:
                r.report(rel, f"{list_key}[{i}] is empty; skipped", line=line, level="note")
                continue
            fields = item if isinstance(item, dict) else {"value": item}
            if not isinstance(item, dict):
                r.report(rel, f"{list_key}[{i}] is not a mapping; kept as its text", line=line)
            missing = [k for k in required if fields.get(k) in (None, "", [])]
            if missing and isinstance(item, dict):
                r.report(
                    rel, f"{list_key}[{i}] lacks {', '.join(missing)} (schema); kept", line=line
                )
            docs = _ids(r, rel, fields.get(docs_key), f"{list_key}[{i}]") if docs_key else ()
            if kind == "activation" and len(docs) < 2:
                r.report(
                    rel,
                    f"{list_key}[{i}]: an activation needs 2+ docs (schema); kept",
                    line=line,
                    level="note",
                )
            label = _text(fields.get(label_key)) if label_key else None
            if label is None:
                label = _label(kind, fields, docs)
            out.append(
                LearningEntry(
                    kind=kind,
                    topic=topic,
                    source=rel,
                    list_key=list_key,
                    index=i,
                    line=line,
                    label=label,
                    docs=docs,
                    origin=_text(fields.get("origin")),
                    confidence=_text(fields.get("confidence")),
                    date=_text(fields.get(date_key)) if date_key else None,
                    fields=fields,
                )
            )
    return out


def _label(kind: EntryKind, fields: Mapping[str, object], docs: tuple[str, ...]) -> str:
    if kind == "domain_interaction":
        return " <-> ".join(_strings(fields.get("domains"))) or "domain interaction"
    if docs:
        return " + ".join(docs)
    return _text(fields.get("value")) or kind.replace("_", " ")


def _read_topic(r: _Reader, folder: str, files: set[str]) -> Topic:
    name = folder.rsplit("/", 1)[-1]
    learning_rel, domain_rel = f"{folder}/learning.yaml", f"{folder}/domain.yaml"
    declared = version = last = sessions = None
    entries: list[LearningEntry] = []
    extra: dict[str, object] = {}
    if learning_rel in files and (loaded := r.load_yaml(learning_rel, level="error")) is not None:
        data, node = loaded
        if isinstance(data, dict):
            declared, version = _text(data.get("topic")), _int(data.get("version"))
            last = _text(data.get("last_updated"))
            sessions = _int(data.get("sessions_contributed", data.get("session_count")))
            for key in ("topic", "version", "last_updated"):
                if data.get(key) is None:
                    r.report(learning_rel, f"required key {key} is missing (schema)", level="note")
            if declared is not None and declared != name:
                r.report(
                    learning_rel,
                    f"topic: {declared!r} differs from its folder {name!r}",
                    level="note",
                )
            extra = {k: v for k, v in data.items() if k not in _LEARNING_TOP_KEYS}
            for k in extra:
                r.report(
                    learning_rel,
                    f"key {k!r} is not in the topic-learning schema; kept",
                    level="note",
                )
            entries = _entries(r, learning_rel, name, data, node, _LEARNING_LISTS)
        elif data is not None:
            r.report(learning_rel, "learning file is not a mapping; skipped", level="error")
    domain = _read_topic_domain(r, domain_rel) if domain_rel in files else None
    return Topic(
        name=name,
        path=folder,
        learning_path=learning_rel if learning_rel in files else None,
        declared=declared,
        version=version,
        last_updated=last,
        sessions=sessions,
        entries=tuple(entries),
        domain=domain,
        extra=extra,
    )


def _read_topic_domain(r: _Reader, rel: str) -> TopicDomain | None:
    loaded = r.load_yaml(rel, level="error")
    if loaded is None:
        return None
    data = loaded[0]
    if not isinstance(data, dict):
        if data is not None:
            r.report(rel, "domain file is not a mapping; skipped", level="error")
        return None
    subs = tuple(_map(s) for s in _list(data.get("sub_domains")) if isinstance(s, dict))
    for s in subs:
        code = _text(s.get("code"))
        if code is not None and not re.match(r"^[A-Z]+$", code):
            r.report(rel, f"sub-domain code {code!r} breaks the pattern [A-Z]+; kept", level="note")
    return TopicDomain(
        path=rel,
        domain=_text(data.get("domain")),
        description=_text(data.get("description")) or _text(data.get("display_name")),
        version=_int(data.get("version")),
        last_updated=_text(data.get("last_updated")),
        sub_domains=subs,
        entry_points=_map(data.get("entry_points")),
        related_domains=tuple(
            _map(d) for d in _list(data.get("related_domains")) if isinstance(d, dict)
        ),
        isolated_from=_strings(data.get("isolated_from")),
        raw=data,
    )


def _domain_refs(d: TopicDomain) -> Iterator[tuple[str, str]]:
    """(id, where) for every DOC-ID-ish value in a domain.yaml (by_task values may be lists)."""
    for i, s in enumerate(d.sub_domains):
        for v in [*_list(s.get("docs")), s.get("entry_point")]:
            if isinstance(v, str):
                yield v, f"sub_domains[{i}]"
    for v in _list(d.entry_points.get("default")):
        if isinstance(v, str):
            yield v, "entry_points.default"
    for task, v in _map(d.entry_points.get("by_task")).items():
        for x in _list(v):
            if isinstance(x, str):
                yield x, f"entry_points.by_task.{task}"
    for i, rd in enumerate(d.related_domains):
        for v in _list(rd.get("boundary_docs")):
            if isinstance(v, str):
                yield v, f"related_domains[{i}]"


def _read_patterns(r: _Reader, rel: str) -> CrossDomain | None:
    loaded = r.load_yaml(rel, level="error")
    if loaded is None:
        return None
    data, node = loaded
    if not isinstance(data, dict):
        if data is not None:
            r.report(rel, "patterns file is not a mapping; skipped", level="error")
        return None
    return CrossDomain(
        path=rel,
        version=_int(data.get("version")),
        last_updated=_text(data.get("last_updated")),
        entries=tuple(_entries(r, rel, "_cross-domain", data, node, _PATTERN_LISTS)),
    )
