"""v2 learnings as memories: each kind of entry (a topic's groupings, activations, patterns
and the rest, a domain's knowledge, a sidecar without a doc, a handoff) becomes a memory's
learning, context and metadata; entries too big or holding a credential are refused.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from ncx.memory.file import Memory
from ncx.tree.chunkfile import keywords
from ncx.v2.plan import _DOMAIN_SETTINGS, _TYPES, PROVENANCE
from ncx.v2.reader import (
    LearningEntry,
    Sidecar,
    TopicDomain,
    V2Project,
)


def _entries_of(project: V2Project, path: str) -> list[LearningEntry]:
    return [e for e in project.learning_entries if e.source == path]


def _entry_keys(entries: Sequence[LearningEntry]) -> dict[str, str]:
    """Provenance identity per entry: by label (survives reordering) unless labels repeat."""
    labels = Counter((e.list_key, e.label) for e in entries)
    return {
        e.key: f"{e.source}#{e.list_key}/{e.label}" if labels[(e.list_key, e.label)] == 1 else e.key
        for e in entries
    }


def _topic_date(project: V2Project, e: LearningEntry) -> str | None:
    if e.topic == "_cross-domain":
        return None if project.cross_domain is None else project.cross_domain.last_updated
    t = next((t for t in project.topics if t.name == e.topic), None)
    return None if t is None else t.last_updated


def _day(value: str | None, today: date) -> date:
    try:
        return date.fromisoformat((value or "")[:10])
    except ValueError:
        return today


_ENTRY_MAX = 100_000  # characters one v2 entry may carry into its memory


def _too_big(value: object, limit: int = _ENTRY_MAX) -> str | None:
    """Why an entry must not become a memory: YAML anchors let 1 KB expand to gigabytes
    (an alias bomb), or to a structure that contains itself. Walked without expanding."""
    total = 0
    stack: list[tuple[object, tuple[int, ...]]] = [(value, ())]
    while stack:
        v, parents = stack.pop()
        if isinstance(v, (dict, list, tuple)):
            if id(v) in parents:
                return "it refers to itself (a recursive YAML alias)"
            items = list(v.items()) if isinstance(v, dict) else [(None, x) for x in v]
            total += len(items)
            for k, x in items:
                total += len(str(k)) if k is not None else 0
                stack.append((x, (*parents, id(v))))
        else:
            total += len(str(v))
        if total > limit:
            return f"it expands to over {limit:,} characters (YAML aliases: an alias bomb?)"
    return None


def _secret_in(*values: object) -> str | None:
    """What credential-shaped value a v2 entry holds (the one scanner memories pass), or None."""
    from ncx.secrets import find_secrets

    text = "\n".join(v if isinstance(v, str) else json.dumps(v, default=str) for v in values)
    found = find_secrets(text)
    return None if not found else f"a credential-shaped value ({found[0].kind}: {found[0].reason})"


def _digest(value: object) -> str:
    raw = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return _data_digest(raw.encode())


def _data_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _prov(m: Memory) -> Mapping[str, Any]:
    p = m.meta.get("provenance")
    return p if isinstance(p, dict) else {}


def _show(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list | tuple) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _fields(fields: Mapping[str, object]) -> str:
    """Every field of the v2 entry, so nothing it said is lost."""
    return "\n".join(f"- {k}: {_show(v)}" for k, v in fields.items() if v not in (None, "", []))


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _confidence(fields: Mapping[str, object], given: str | None) -> str:
    if given in ("high", "medium", "low"):
        return given
    if fields.get("human_approved") is True or fields.get("origin") == "human":
        return "high"
    return "medium"


def _entry_memory(e: LearningEntry, *, docs_known: set[str]) -> tuple[str, str, dict[str, Any]]:
    f = e.fields

    def s(key: str) -> str:
        v = f.get(key)
        return "" if v is None else _show(v)

    topic = "cross-domain patterns" if e.topic == "_cross-domain" else f"the {e.topic} topic"
    docs = _and(list(e.docs)) if e.docs else ""
    tasks = s("typical_tasks")
    if e.kind == "grouping":
        learning = (
            f"{docs} belong together as the '{e.label}' group in {topic}; consult them together."
            if docs
            else f"'{e.label}' is a group of docs in {topic}."
        )
        if s("notes"):
            learning += f" {s('notes')}"
    elif e.kind == "activation":
        learning = (
            f"When {tasks or 'working'} in {topic}, {docs or 'these docs'} are needed "
            f"together (activated together {s('frequency') or 'several'} times)."
        )
    elif e.kind == "verification_note":
        learning = f"Verification caught: {s('caught')}. Lesson: {s('lesson')}"
        if s("doc"):
            learning += f" (in {s('doc')}{', ' + s('section') if s('section') else ''})"
    elif e.kind == "related_domain":
        learning = f"{topic[0].upper()}{topic[1:]} relates to {s('domain')}: {s('relationship')}."
        if s("typical_overlap"):
            learning += f" Typical overlap: {s('typical_overlap')}."
    elif e.kind == "anti_pattern":
        learning = f"Anti-pattern: {s('pattern')}. Why it fails: {s('reason')}"
    elif e.kind == "pattern":
        learning = f"Cross-domain pattern '{e.label}'"
        if s("domains"):
            learning += f" ({s('domains')})"
        learning += f": {s('description') or 'docs used together'}."
        if docs:
            learning += f" Docs: {docs}."
        if tasks:
            learning += f" Typical tasks: {tasks}."
    else:  # domain_interaction
        learning = f"Domains {s('domains')} interact"
        if s("frequency"):
            learning += f" ({s('frequency')} frequency)"
        if s("typical_direction"):
            learning += f", typically {s('typical_direction')}"
        learning += "."
        if s("notes"):
            learning += f" {s('notes')}"
    dangling = [d for d in e.docs if d not in docs_known]
    context = (
        f"Migrated from v2: {e.source}, {e.list_key}[{e.index}] "
        f"(topic {e.topic}).\n\nThe v2 entry:\n\n{_fields(f)}"
    )
    if dangling:
        context += f"\n\nNo document in this project defines {_and(dangling)}."
    domain = "cross-domain" if e.topic == "_cross-domain" else e.topic.lower()
    meta: dict[str, Any] = {
        "type": _TYPES.get(e.kind, "factual"),
        "domain": domain,
        "confidence": _confidence(f, e.confidence),
        "status": "active",
        "keywords": keywords(learning),
        "related_docs": list(e.docs),
        "provenance": {
            "from": PROVENANCE,
            "file": e.source,
            "topic": e.topic,
            "entry": f"{e.list_key}[{e.index}]",
            "kind": e.kind,
        },
    }
    return learning, context, meta


def _domain_knowledge(td: TopicDomain) -> dict[str, object]:
    """The parts of a domain.yaml that say something about the project (not agent settings)."""
    out: dict[str, object] = {}
    for k, v in td.raw.items():
        if k in _DOMAIN_SETTINGS or v in (None, "", [], {}):
            continue
        if k == "entry_points" and isinstance(v, dict):
            v = {a: b for a, b in v.items() if b not in (None, "", [], {})}
            if not v:
                continue
        out[k] = v
    return out


def _domain_memory(
    topic: str, td: TopicDomain, carried: Mapping[str, object]
) -> tuple[str, str, dict[str, Any]]:
    parts = []
    subs = [str(s.get("name")) for s in td.sub_domains if s.get("name")]
    if subs:
        parts.append(f"sub-domains {_and(subs)}")
    if "entry_points" in carried:
        parts.append(f"entry points {_show(carried['entry_points'])}")
    rel = [str(r.get("domain")) for r in td.related_domains if r.get("domain")]
    if rel:
        parts.append(f"related domains {_and(rel)}")
    learning = f"Domain map of the {topic} topic" + (f": {'; '.join(parts)}." if parts else ".")
    if td.description:
        learning += f" {td.description}"
    context = f"Migrated from v2: {td.path}.\n\nThe v2 domain map:\n\n{_fields(carried)}"
    meta: dict[str, Any] = {
        "type": "factual",
        "domain": topic.lower(),
        "confidence": "high" if td.raw.get("source") == "human" else "medium",
        "status": "active",
        "keywords": keywords(learning + " " + context),
        "provenance": {"from": PROVENANCE, "file": td.path, "topic": topic, "kind": "domain"},
    }
    return learning, context, meta


def _orphan_memory(sc: Sidecar) -> tuple[str, str, dict[str, Any], str | None]:
    name = sc.id or sc.path
    learning = f"{name} '{sc.title or '(untitled)'}' was a document whose file is gone."
    if sc.summary:
        learning += f" Summary: {sc.summary}"
    context = f"Migrated from v2: orphan sidecar {sc.path}.\n\nThe sidecar:\n\n{_fields(sc.raw)}"
    meta: dict[str, Any] = {
        "type": "factual",
        "domain": (sc.domain or "docs").lower(),
        "confidence": "low",
        "status": "proposed",
        "keywords": keywords(learning),
        "related_docs": [r.id for r in sc.related],
        "provenance": {"from": PROVENANCE, "file": sc.path, "kind": "orphan-sidecar"},
    }
    day = sc.updated.date if sc.updated else (sc.created.date if sc.created else None)
    return learning, context, meta, day


def _handoff_memory(
    path: str, fields: Mapping[str, str], phases: Sequence[Any]
) -> tuple[str, str, dict[str, Any]]:
    bits = [f"{k}: {v}" for k, v in fields.items() if v.strip()]
    filled = [p for p in phases if p.filled]
    for p in filled:
        bits.append(f"{p.title}: " + ", ".join(f"{k} {v}" for k, v in p.fields.items()))
    learning = "Project handoff state (" + path + "). " + "; ".join(bits) + "."
    context = f"Migrated from v2: {path} (a snapshot; the handoff doc itself is chunked)."
    meta: dict[str, Any] = {
        "type": "factual",
        "domain": "handoff",
        "confidence": "medium",
        "status": "active",
        "keywords": keywords(learning),
        "provenance": {"from": PROVENANCE, "file": path, "kind": "handoff"},
    }
    return learning, context, meta
