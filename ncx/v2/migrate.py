"""migrate: move a v2 project (`.mlda/`, sidecars) into .neocortex/ without losing anything.

read_v2 (mlda) -> plan_migration (pure: every v2 artifact and its fate, the memories and files
to write) -> apply_migration (journal for rollback, init, writes, sync, optional archive).
Docs are chunked by the ordinary sync; their sidecars stay beside them and lend their metadata
to the chunks (see sidecar.py). Learnings become memories keyed by their v2 provenance, so a
re-run updates what changed in v2 and leaves the rest (and human edits in v3) alone. What each
v2 source became is recorded in the journal, so a re-run also leaves deleted in v3 what you
deleted there, unless its v2 source changed since.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from ncx.errors import NcxError
from ncx.layout import NCX_DIR, memories_dir
from ncx.memory.file import Memory, new_memory_id, read_memory, render_memory
from ncx.tree.chunkfile import keywords
from ncx.tree.sidecar import sidecar_path
from ncx.v2.reader import (
    MLDA,
    Disagreement,
    LearningEntry,
    Problem,
    Sidecar,
    TopicDomain,
    V2Doc,
    V2Project,
    escapes_repo,
)

if TYPE_CHECKING:
    from ncx.config import Config
    from ncx.embedder import Embedder
    from ncx.tree.sync import SyncReport
    from ncx.v2.journal import Output

Fate = Literal["chunked", "memory", "metadata", "derived", "skipped", "failed"]
# recreate: you deleted it, but its v2 source changed since, so the change comes back with it;
# keep-deleted: you deleted it and its v2 source is unchanged since, so it stays deleted.
Action = Literal["create", "recreate", "update", "keep", "keep-deleted"]
WriteAction = Literal["write", "keep-deleted"]
_ACTIONS: tuple[Action, ...] = ("create", "recreate", "update", "keep", "keep-deleted")
_SAYS: dict[str, str] = {
    "recreate": "recreated: removed since the last migration, but its v2 source changed since",
    "keep-deleted": "kept deleted: removed since the last migration, its v2 source unchanged",
}
ARCHIVE = ".mlda.archive"
PROVENANCE = "mlda-v2"
# v2 files that are not project knowledge and must not be chunked: tooling, templates, the
# stale derived brief (v2-format §1, §10). Listed for the archive too, so archiving needs no
# change.
EXCLUDES = tuple(
    f"{top}/{sub}"
    for top in (MLDA, ARCHIVE)
    for sub in ("scripts", "templates", "schemas", "topics/_*", "project-brief.md")
)
_TYPES: dict[str, str] = {
    "grouping": "factual",
    "related_domain": "factual",
    "domain_interaction": "factual",
    "activation": "procedural",
    "pattern": "procedural",
    "verification_note": "experiential",
    "anti_pattern": "experiential",
}
_SKIP_REASONS: dict[str, str] = {
    "tooling": "v2 tooling (scripts, templates, schemas): not project knowledge; excluded",
    "topic-template": "topic template (topics/_*): examples, not project knowledge; excluded",
    "beads": "beads issue tracker: shared by v2 and v3, left as it is",
    "other": "not a v2 format ncx reads; left in place",
}
# Files outside .neocortex/ that `ncx init` may write (journaled before it runs).
_INIT_WRITES = (".gitattributes",)
_DOMAIN_SETTINGS = frozenset(
    {"domain", "version", "last_updated", "source", "decomposition"}
    | {"override_allowed", "override_requires_approval"}
)


@dataclass(frozen=True, slots=True)
class Item:
    """One v2 artifact (a file, or an entry inside a learning file) and what becomes of it."""

    path: str  # the v2 file, repo-relative
    kind: str  # artifact kind (doc, sidecar, learning, ...) or entry kind (grouping, ...)
    fate: Fate
    detail: str  # DOC-ID, memory id, where the metadata went, or the reason
    entry: str | None = None  # "groupings[0]" for an entry of a learning file
    knowledge: bool = True  # carries project knowledge: losing it fails the migration


@dataclass(frozen=True, slots=True)
class PlannedMemory:
    key: str  # provenance identity, e.g. ".mlda/topics/auth/learning.yaml#groupings/tokens"
    memory: Memory
    action: Action
    source: str
    digest: str  # of the v2 entry; recorded, to tell later whether the entry changed

    @property
    def did(self) -> str:
        return f"{self.memory.id} ({_SAYS.get(self.action, self.action)})"


@dataclass(frozen=True, slots=True)
class PlannedWrite:
    """A file written outside .neocortex/ (a sidecar beside its doc, a doc re-encoded)."""

    path: str
    data: bytes
    reason: str
    action: WriteAction = "write"


@dataclass(frozen=True, slots=True)
class MigrationPlan:
    has_mlda: bool
    items: tuple[Item, ...]
    memories: tuple[PlannedMemory, ...]
    writes: tuple[PlannedWrite, ...]
    stale: tuple[str, ...]  # memories from v2 entries that are gone; kept, reported
    problems: tuple[Problem, ...]
    disagreements: tuple[Disagreement, ...]
    artifacts_in: Mapping[str, int]  # files found, by kind

    @property
    def failed(self) -> tuple[Item, ...]:
        return tuple(i for i in self.items if i.fate == "failed" and i.knowledge)

    def counts(self) -> dict[str, Any]:
        fates = Counter(i.fate for i in self.items)
        actions = Counter(m.action for m in self.memories)
        entries = sum(1 for i in self.items if i.entry is not None and i.kind in _TYPES)
        return {
            "in": {
                "files": sum(self.artifacts_in.values()),
                "by_kind": dict(sorted(self.artifacts_in.items())),
                "learning_entries": entries,
            },
            "out": {
                **{f: fates.get(f, 0) for f in _FATES},
                "memories": {a: actions.get(a, 0) for a in _ACTIONS},
            },
        }


_FATES: tuple[Fate, ...] = ("chunked", "memory", "metadata", "derived", "skipped", "failed")


# ---------------------------------------------------------------- plan (pure)


def plan_migration(
    project: V2Project,
    *,
    tracked: Collection[str],
    exclude: Sequence[str] = (),
    existing: Mapping[str, Memory] | None = None,
    produced: Mapping[str, Output] | None = None,
    today: date,
) -> MigrationPlan:
    """Every artifact of `project` and its fate. Pure (but for whether a file to write exists).

    `tracked`: files in the git index (sync chunks only those); `exclude`: the manifest's
    excludes; `existing`: memories migrated earlier, by provenance key; `produced`: what
    earlier runs wrote, by provenance key or path (journal.py); `today`: the date for
    memories whose v2 entry has none.
    """
    from ncx.sources import is_excluded

    existing = existing or {}
    produced = produced or {}
    tracked = set(tracked)
    docs = {d.path: d for d in project.docs}
    by_sidecar = {d.sidecar.path: d for d in project.docs if d.sidecar is not None}
    orphans = {s.path: s for s in project.orphan_sidecars}
    errors: dict[str, Problem] = {}
    for p in project.problems:
        if p.level == "error":
            errors.setdefault(p.path, p)
    dis = Counter(d.source for d in project.disagreements)
    items: list[Item] = []
    memories: list[PlannedMemory] = []
    writes: list[PlannedWrite] = []

    def add_memory(
        key: str,
        source: str,
        learning: str,
        context: str,
        meta: dict[str, Any],
        day: str | None,
        related: Sequence[str] = (),
    ) -> PlannedMemory:
        v2_hash = _digest([learning, context, meta])
        prov = dict(meta.pop("provenance"), key=key, v2_hash=v2_hash)
        old = existing.get(key)
        lines = tuple(f"- {r}" for r in related)
        if old is None:
            when = _day(day, today)
            before = produced.get(key)
            present = before is not None and (project.root / before.path).exists()
            mid, action = _fresh(before, v2_hash, present)
            mid = mid or new_memory_id(learning, context, when)
            meta = {"created": when.isoformat(), **meta, "provenance": prov}
            pm = PlannedMemory(
                key, Memory(mid, learning, context, meta, lines), action, source, v2_hash
            )
        elif _prov(old).get("v2_hash") == v2_hash:
            pm = PlannedMemory(key, old, "keep", source, v2_hash)
        else:
            # v2 changed since the last run: carry it over, keep what v3 added (status, usage).
            merged = {**dict(old.meta), **meta, "provenance": prov, "updated": today.isoformat()}
            pm = PlannedMemory(
                key, Memory(old.id, learning, context, merged, lines), "update", source, v2_hash
            )
        memories.append(pm)
        return pm

    for art in project.artifacts:
        path, kind = art.path, art.kind
        err = errors.get(path)
        if err is not None and kind not in (
            "registry",
            "learning-index",
            "activation-context",
            "project-brief",
            "graph",
            "tooling",
            "beads",
        ):
            where = f" (line {err.line})" if err.line else ""
            # A sidecar that does not parse: its doc is still chunked, without the metadata.
            items.append(Item(path, kind, "failed", err.message + where))
            continue
        if art.derived:
            n = dis.get(path, 0)
            note = f"{n} disagreement(s) with the sources" if n else "agrees with the sources"
            items.append(Item(path, kind, "derived", f"cross-checked: {note}", knowledge=False))
        elif kind == "doc":
            doc = docs.get(path)
            items.append(_doc_item(path, doc, tracked, exclude, is_excluded))
            if doc is not None and doc.encoding == "cp1252" and path in tracked:
                writes.append(
                    PlannedWrite(
                        path,
                        doc.text.encode("utf-8")
                        if not art.crlf
                        else doc.text.replace("\n", "\r\n").encode("utf-8"),
                        "re-encoded from cp1252 to UTF-8 so it can be chunked",
                    )
                )
            if doc is not None and doc.id_source == "registry" and doc.doc_id:
                writes.extend(_registry_sidecar(doc, project, tracked))
        elif kind == "sidecar":
            items.append(
                _sidecar_item(path, by_sidecar.get(path), orphans.get(path), tracked, writes)
            )
            sc = orphans.get(path)
            if sc is not None and _secret_in(*_orphan_memory(sc)[:3]) is not None:
                items[-1] = Item(
                    path,
                    kind,
                    "failed",
                    f"not migrated: it holds {_secret_in(*_orphan_memory(sc)[:3])}; secrets never "
                    f"enter memory (remove the value from {path}, then run ncx migrate again)",
                )
            elif sc is not None:
                learning, context, meta, day = _orphan_memory(sc)
                pm = add_memory(f"{path}#sidecar", path, learning, context, meta, day)
                items[-1] = Item(
                    path,
                    kind,
                    "memory",
                    f"{pm.did}: orphan sidecar, its doc is missing; kept as a proposed memory",
                )
        elif kind in ("learning", "patterns"):
            entries = _entries_of(project, path)
            if not entries:
                items.append(
                    Item(
                        path,
                        kind,
                        "skipped",
                        "no entries (lists empty or only commented examples)",
                        knowledge=False,
                    )
                )
                continue
            items.append(
                Item(path, kind, "memory", f"{len(entries)} entries -> {len(entries)} memories")
            )
            keys = _entry_keys(entries)
            for e in entries:
                bloat = _too_big(e.fields)
                if bloat is not None:
                    items.append(
                        Item(
                            path,
                            e.kind,
                            "failed",
                            f"not migrated: {bloat} (fix the entry in {path}, then run "
                            "ncx migrate again)",
                            entry=f"{e.list_key}[{e.index}]",
                        )
                    )
                    continue
                learning, context, meta = _entry_memory(
                    e, docs_known={d.doc_id for d in project.docs if d.doc_id}
                )
                secret = _secret_in(learning, context, meta)
                if secret is not None:
                    items.append(
                        Item(
                            path,
                            e.kind,
                            "failed",
                            f"not migrated: it holds {secret}; secrets never enter memory "
                            f"(remove the value from {path}, then run ncx migrate again)",
                            entry=f"{e.list_key}[{e.index}]",
                        )
                    )
                    continue
                day = e.date or _topic_date(project, e)
                pm = add_memory(keys[e.key], e.source, learning, context, meta, day, e.docs)
                items.append(
                    Item(
                        path,
                        e.kind,
                        "memory",
                        pm.did,
                        entry=f"{e.list_key}[{e.index}]",
                    )
                )
        elif kind == "topic-domain":
            td = next(
                (t.domain for t in project.topics if t.domain and t.domain.path == path), None
            )
            if td is None:
                items.append(Item(path, kind, "skipped", "empty", knowledge=False))
                continue
            carried = _domain_knowledge(td)
            if not carried:
                items.append(
                    Item(
                        path,
                        kind,
                        "metadata",
                        "stub: no sub-domains, entry points or "
                        "related domains; its agent settings have no v3 equivalent",
                        knowledge=False,
                    )
                )
                continue
            topic = path.split("/")[2]
            learning, context, meta = _domain_memory(topic, td, carried)
            pm = add_memory(f"{path}#domain", path, learning, context, meta, td.last_updated)
            items.append(Item(path, kind, "metadata", f"domain map -> memory {pm.did}"))
        elif kind == "config":
            c = project.config
            budget = "" if c is None else f" (soft {c.soft_tokens}, hard {c.hard_tokens} tokens)"
            items.append(
                Item(
                    path,
                    kind,
                    "metadata",
                    f"token budgets{budget}: set "
                    "NCX_TOKEN_BUDGET to keep them; the rest is v2 agent config",
                    knowledge=False,
                )
            )
        else:
            items.append(
                Item(
                    path, kind, "skipped", _SKIP_REASONS.get(kind, "not migrated"), knowledge=False
                )
            )

    if project.handoff is not None and project.handoff.filled:
        h = project.handoff
        learning, context, meta = _handoff_memory(h.path, h.fields, h.phases)
        pm = add_memory(
            f"{h.path}#state", h.path, learning, context, meta, h.fields.get("Last Updated")
        )
        items.append(
            Item(
                h.path,
                "handoff-state",
                "memory",
                f"{pm.did}: its phase fields hold real values",
                entry="current state",
            )
        )

    # Refused paths and other unreadable files that are not artifacts (symlinks out of the repo).
    listed = {i.path for i in items}
    for path, p in sorted(errors.items()):
        if path not in listed:
            items.append(Item(path, "refused", "failed", p.message))

    planned = {m.key for m in memories}
    stale = tuple(sorted(f"{m.id} ({k})" for k, m in existing.items() if k not in planned))
    return MigrationPlan(
        has_mlda=project.has_mlda,
        items=tuple(items),
        memories=tuple(memories),
        writes=tuple(
            _settle(w, produced.get(w.path), (project.root / w.path).exists()) for w in writes
        ),
        stale=stale,
        problems=project.problems,
        disagreements=project.disagreements,
        artifacts_in=dict(Counter(a.kind for a in project.artifacts)),
    )


def _fresh(before: Output | None, v2_hash: str, present: bool) -> tuple[str | None, Action]:
    """A memory to write where none carries its key: new, or one you deleted since a run.

    A deleted one keeps its id (links to it hold again) and stays deleted unless its v2
    entry changed since: migrate must not undo a deletion, but must not drop a v2 edit.
    If the file is still there (it no longer parses, or lost its provenance), it was not
    deleted: a new memory is written beside it, never over your edits."""
    if before is None or present:
        return None, "create"
    mid = PurePosixPath(before.path).stem
    return mid, "keep-deleted" if before.source == v2_hash else "recreate"


def _settle(w: PlannedWrite, before: Output | None, present: bool) -> PlannedWrite:
    """The same rule for a file written beside a doc (a sidecar) that you deleted since."""
    if present or before is None:
        return w
    if before.source == _data_digest(w.data):
        return replace(w, action="keep-deleted")
    return replace(w, reason=w.reason + "; removed since, written again: its v2 source changed")


def _doc_item(
    path: str,
    doc: V2Doc | None,
    tracked: set[str],
    exclude: Sequence[str],
    is_excluded: Callable[[str, Sequence[str]], bool],
) -> Item:
    if is_excluded(path, EXCLUDES):
        return Item(path, "doc", "skipped", "v2 tooling or derived text; excluded", knowledge=False)
    if is_excluded(path, exclude):
        return Item(
            path, "doc", "skipped", "excluded by the manifest (your choice)", knowledge=False
        )
    if path not in tracked:
        return Item(
            path,
            "doc",
            "failed",
            "not tracked by git, and ncx chunks tracked docs "
            "only: `git add` it and run `ncx migrate` again",
        )
    if doc is None:
        return Item(path, "doc", "chunked", "no DOC-ID")
    what = f"{doc.doc_id} (from the {doc.id_source})" if doc.doc_id else "no DOC-ID"
    if doc.role == "handoff":
        what += "; handoff: its current state is searchable"
    return Item(path, "doc", "chunked", what)


def _sidecar_item(
    path: str,
    doc: V2Doc | None,
    orphan: Sidecar | None,
    tracked: set[str],
    writes: list[PlannedWrite],
) -> Item:
    if orphan is not None or doc is None:
        return Item(path, "sidecar", "failed", "orphan sidecar")  # replaced by its memory
    target = sidecar_path(doc.path)
    if target == path:
        if path not in tracked:
            return Item(
                path,
                "sidecar",
                "failed",
                f"not tracked by git, so the chunks of "
                f"{doc.path} cannot carry it: `git add` it and run `ncx migrate` again",
            )
        return Item(
            path,
            "sidecar",
            "metadata",
            f"-> chunk metadata of {doc.path} "
            f"({doc.doc_id or 'no id'}: title, status, domain, tags, summary, related)",
        )
    assert target is not None
    writes.append(
        PlannedWrite(target, _raw_bytes(doc), f"copy of {path}, which is not beside its doc")
    )
    return Item(
        path,
        "sidecar",
        "metadata",
        f"copied beside {doc.path} as {target}; commit it "
        "and the next sync carries it into the chunks",
    )


def _raw_bytes(doc: V2Doc) -> bytes:
    import yaml

    assert doc.sidecar is not None
    head = f"# copied by ncx migrate from {doc.sidecar.path}\n"
    body = str(yaml.safe_dump(dict(doc.sidecar.raw), sort_keys=False, allow_unicode=True))
    return (head + body).encode("utf-8")


def _registry_sidecar(doc: V2Doc, project: V2Project, tracked: set[str]) -> list[PlannedWrite]:
    import yaml

    target = sidecar_path(doc.path)
    if target is None or (project.root / target).exists():
        return []
    data = {"id": doc.doc_id, "title": doc.title}
    head = "# written by ncx migrate: this DOC-ID survived only in .mlda/registry.yaml\n"
    text = head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    return [
        PlannedWrite(
            target,
            text.encode("utf-8"),
            "sidecar from the registry entry, so the chunks keep the DOC-ID",
        )
    ]


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


# ---------------------------------------------------------------- reading the tree (I/O)


def existing_memories(root: Path) -> dict[str, Memory]:
    """Memories an earlier `ncx migrate` wrote, by provenance key."""
    folder = memories_dir(root)
    out: dict[str, Memory] = {}
    for md in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        try:
            m = read_memory(md)
        except NcxError:
            continue  # `ncx check` reports it
        prov = _prov(m)
        if prov.get("from") == PROVENANCE and isinstance(prov.get("key"), str):
            out.setdefault(str(prov["key"]), m)
    return out


def has_v2(root: Path) -> bool:
    """Whether there is anything v2 here: a .mlda/ folder or a tracked *.meta.yaml sidecar."""
    from ncx import repo

    if (root / MLDA).is_dir():
        return True
    return any(p.endswith(".meta.yaml") for p in repo.tracked_files(root))


def build_plan(root: Path, *, today: date | None = None) -> MigrationPlan:
    """Read the v2 tree and the git index, and plan. Reads only."""
    from ncx import repo
    from ncx.errors import NotInitialized
    from ncx.manifest import load_manifest
    from ncx.v2.journal import read_outputs
    from ncx.v2.reader import read_v2

    try:
        exclude: tuple[str, ...] = load_manifest(root).exclude
    except NotInitialized:
        exclude = ()
    return plan_migration(
        read_v2(root),
        tracked=repo.tracked_files(root),
        exclude=exclude,
        existing=existing_memories(root),
        produced=read_outputs(root),
        today=today or date.today(),
    )


# ---------------------------------------------------------------- apply (writes)


@dataclass
class MigrationResult:
    plan: MigrationPlan
    written: list[str] = field(default_factory=list)  # outside the sync report
    sync: SyncReport | None = None
    archived: bool = False
    journal: str = ""

    @property
    def ok(self) -> bool:
        return not self.plan.failed and not (self.sync is not None and self.sync.problems)

    @property
    def changed(self) -> bool:
        return bool(self.written or (self.sync is not None and self.sync.changed) or self.archived)


def _inside(root: Path, rel: str) -> Path:
    """root/rel, refusing a path that leaves the repository (belt and braces: mlda refuses too)."""
    target = (root / rel).resolve()
    real = root.resolve()
    if escapes_repo(rel) or not (target == real or real in target.parents):
        raise NcxError(f"refused to write {rel!r}: the path leaves the repository", path=root)
    return root / rel


def apply_migration(
    root: Path,
    plan: MigrationPlan,
    cfg: Config,
    *,
    archive: bool = False,
    embedder: Embedder | None = None,
    progress: Callable[[str], None] | None = None,
) -> MigrationResult:
    """Carry out `plan`: init if needed, write sidecars/memories, sync, archive .mlda/ if asked.

    Every change is journaled first (journal.py), so `rollback` restores the tree exactly."""
    from ncx.memory.file import memory_path
    from ncx.store import write_atomic
    from ncx.tree.init import init_tree
    from ncx.tree.sync import sync
    from ncx.v2.journal import Journal, Output, has_journal, journal_dir

    if archive:
        if not (root / MLDA).is_dir():
            raise NcxError("nothing to archive: there is no .mlda/ here", path=root)
        if (root / ARCHIVE).exists():
            raise NcxError(
                f"{ARCHIVE} exists already",
                path=root / ARCHIVE,
                hint=f"move {ARCHIVE} away first, or run without --archive",
            )
    targets = [_inside(root, w.path) for w in plan.writes]
    result = MigrationResult(plan, journal=journal_dir(root).as_posix())
    first = not has_journal(root)
    journal = Journal.open(root)
    for rel in _INIT_WRITES:
        journal.remember(rel)
    result.written += init_tree(root, cfg, model=None, exclude=list(EXCLUDES)).written
    for rel in _INIT_WRITES:
        if rel in result.written or rel not in journal.written:
            journal.record_written(rel)
    for w, target in zip(plan.writes, targets, strict=True):
        if w.action == "keep-deleted":
            continue
        if not (target.is_file() and target.read_bytes() == w.data):
            journal.remember(w.path)
            write_atomic(target, w.data)
            journal.record_written(w.path)
            result.written.append(w.path)
        journal.record_output(w.path, Output(w.path, _data_digest(w.data)))
    for pm in plan.memories:
        if pm.action == "keep-deleted":
            continue
        md = memory_path(root, pm.memory.id)
        output = Output(md.relative_to(root).as_posix(), pm.digest)
        # "keep" too: journals from before this record existed learn what the memories are.
        data = None if pm.action == "keep" else render_memory(pm.memory)
        if data is not None and not (md.is_file() and md.read_bytes() == data):
            journal.record_memory(md.name, data)  # first: rollback knows the file is migrate's
            write_atomic(md, data)
            # A new text needs a new vector: drop the old one so sync embeds it again.
            if md.with_suffix(".npy").exists():
                md.with_suffix(".npy").unlink()
            result.written.append(md.relative_to(root).as_posix())
        journal.record_output(pm.key, output)  # last: only what exists counts as produced
    journal.save()
    result.sync = sync(root, cfg, embedder=embedder, progress=progress)
    if archive:
        journal.record_move(MLDA, ARCHIVE)
        os.rename(root / MLDA, root / ARCHIVE)
        result.archived = True
    if first:
        journal.record_memories()
    return result


def migrate_changed(
    root: Path,
    cfg: Config,
    say: Callable[[str], None] | None = None,
    out: Callable[[str], None] | None = None,
) -> int:
    """For the `ncx-migrate` pre-commit hook: carry later v2 edits over while .mlda/ exists.

    `out` gets one line per file written, `say` the failures. Returns 0 when nothing needed
    writing; 1 when files were written (pre-commit's contract: the commit stops so they can be
    added) or when something carrying knowledge could not be migrated.
    """
    if not (root / MLDA).is_dir():
        return 0
    plan = build_plan(root)
    result = apply_migration(root, plan, cfg)
    written = sorted(set(result.written) | set(result.sync.written if result.sync else []))
    if out is not None:
        for line in written:
            out(line)
    if say is not None:
        for item in plan.failed:
            where = f"{item.path} {item.entry}" if item.entry else item.path
            say(f"ncx migrate: could not migrate {where}: {item.detail}")
        for exc in result.sync.problems if result.sync else []:
            say(f"ncx migrate: {exc}")
        if result.sync is not None:
            from ncx.tree.sync import secret_warnings

            for line in secret_warnings(result.sync):
                say(line)
    return 0 if result.ok and not result.changed else 1


# ---------------------------------------------------------------- the report


def report_json(plan: MigrationPlan, result: MigrationResult | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "dry_run": result is None,
        "v2_present": plan.has_mlda,
        "counts": plan.counts(),
        "items": [
            {
                k: v
                for k, v in (
                    ("path", i.path),
                    ("kind", i.kind),
                    ("fate", i.fate),
                    ("detail", i.detail),
                    ("entry", i.entry),
                    ("knowledge", i.knowledge),
                )
                if v is not None
            }
            for i in plan.items
        ],
        "memories": [
            {
                "id": m.memory.id,
                "action": m.action,
                "key": m.key,
                "source": m.source,
                "path": f"{NCX_DIR}/memories/{m.memory.id}.md",
            }
            for m in plan.memories
        ],
        "writes": [{"path": w.path, "reason": w.reason, "action": w.action} for w in plan.writes],
        "stale_memories": list(plan.stale),
        "problems": [
            {"path": p.path, "line": p.line, "level": p.level, "message": p.message}
            for p in plan.problems
        ],
        "disagreements": [
            {
                "source": d.source,
                "subject": d.subject,
                "field": d.field,
                "derived": d.derived,
                "actual": d.actual,
            }
            for d in plan.disagreements
        ],
        "failed": [i.path + (f" {i.entry}" if i.entry else "") for i in plan.failed],
    }
    if result is not None:
        s = result.sync
        out.update(
            written=result.written,
            sync=None
            if s is None
            else {
                "written": len(s.written),
                "removed": len(s.removed),
                "embedded": s.embedded,
                "docs": s.docs,
                "chunks": s.chunks,
                "memories": s.memories,
                "problems": [str(e) for e in s.problems],
            },
            archived=result.archived,
            rollback=result.journal,
        )
    out["ok"] = not plan.failed if result is None else result.ok
    return out


def format_report(plan: MigrationPlan, result: MigrationResult | None = None) -> str:
    """The human report: every item and its fate, then counts in and out."""
    lines = ["# ncx migrate" + (" (dry run: nothing written)" if result is None else "")]
    for fate in _FATES:
        chosen = [i for i in plan.items if i.fate == fate]
        if not chosen:
            continue
        lines.append(f"\n## {fate} ({len(chosen)})")
        for i in chosen:
            where = f"{i.path} {i.entry}" if i.entry else i.path
            lines.append(f"- {where} [{i.kind}]: {i.detail}")
    writes = [w for w in plan.writes if w.action == "write"]
    if writes:
        lines.append(f"\n## files written beside the docs ({len(writes)})")
        lines += [f"- {w.path}: {w.reason}" for w in writes]
    gone = [f"- {m.memory.id} ({m.key})" for m in plan.memories if m.action == "keep-deleted"]
    gone += [f"- {w.path}: kept deleted ({w.reason})" for w in plan.writes if w.action != "write"]
    if gone:
        lines.append(
            f"\n## kept deleted ({len(gone)}): removed since the last migration, their v2 "
            "source unchanged; restore the file, or edit the v2 source, to have one back"
        )
        lines += gone
    if plan.stale:
        lines.append("\n## memories kept although their v2 entry is gone")
        lines += [f"- {s}" for s in plan.stale]
    if plan.disagreements:
        lines.append(
            f"\n## derived data that disagrees with the sources ({len(plan.disagreements)})"
        )
        lines += [
            f"- {d.source}: {d.subject} {d.field}: says {d.derived}, sources say {d.actual}"
            for d in plan.disagreements
        ]
    shown = [p for p in plan.problems if p.level != "note"]
    if shown:
        lines.append(
            f"\n## problems ({len(shown)}; {len(plan.problems) - len(shown)} notes in --json)"
        )
        lines += [
            f"- {p.level}: {p.path}{':' + str(p.line) if p.line else ''}: {p.message}"
            for p in shown
        ]
    c = plan.counts()
    out = c["out"]
    mem = out["memories"]
    files = len(plan.memories) - mem["keep-deleted"]
    recreated = f"{mem['recreate']} recreated, " if mem["recreate"] else ""
    kept_deleted = f", {mem['keep-deleted']} kept deleted" if mem["keep-deleted"] else ""
    lines.append(
        f"\nin: {c['in']['files']} files, {c['in']['learning_entries']} learning entries; "
        f"out: {out['chunked']} chunked, {out['memory']} to memories "
        f"({files} memory files: {mem['create']} new, {recreated}{mem['update']} updated, "
        f"{mem['keep']} unchanged{kept_deleted}), {out['metadata']} metadata, "
        f"{out['derived']} derived, {out['skipped']} skipped, {out['failed']} failed"
    )
    if result is not None and result.sync is not None:
        s = result.sync
        lines.append(
            f"sync: {s.docs} docs, {s.chunks} chunks, {s.memories} memories; "
            f"{len(s.written)} files written, {s.embedded} embedded"
        )
        for e in s.problems:
            lines.append(f"- sync error: {e}")
        from ncx.tree.sync import secret_warnings

        # What migrate brought in is scanned as every doc is: a credential is redacted from
        # the chunks and named here, file and line.
        lines += [f"- {w.removeprefix('ncx: ')}" for w in secret_warnings(s)]
    if result is not None and result.archived:
        lines.append(
            f"archived: {MLDA}/ -> {ARCHIVE}/ (commit the move; the next sync "
            f"chunks {ARCHIVE}/docs/ with their sidecars)"
        )
    return "\n".join(lines) + "\n"
