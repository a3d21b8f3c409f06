"""migrate: move a v2 project (`.mlda/`, sidecars) into .neocortex/ without losing anything.

read_v2 (mlda) -> plan_migration (pure: every v2 artifact and its fate, the memories and files
to write) -> apply_migration (journal for rollback, init, writes, sync, optional archive).
Docs are chunked by the ordinary sync; their sidecars stay beside them and lend their metadata
to the chunks (see sidecar.py). Learnings become memories keyed by their v2 provenance, so a
re-run updates what changed in v2 and leaves the rest (and human edits in v3) alone. What each
v2 source became is recorded in the journal, so a re-run also leaves deleted in v3 what you
deleted there, unless its v2 source changed since.

Beside this module: `plan` (the plan and result as values), `memories` (each kind of v2
learning as a memory), `report` (the JSON and text report). This one plans the whole tree,
reads what is there and applies the plan; its public names are the migration's.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ncx.errors import NcxError
from ncx.layout import memories_dir
from ncx.memory.file import Memory, new_memory_id, read_memory, render_memory
from ncx.tree.sidecar import sidecar_path
from ncx.v2.memories import (
    _data_digest,
    _day,
    _digest,
    _domain_knowledge,
    _domain_memory,
    _entries_of,
    _entry_keys,
    _entry_memory,
    _handoff_memory,
    _orphan_memory,
    _prov,
    _secret_in,
    _too_big,
    _topic_date,
)
from ncx.v2.plan import (
    _INIT_WRITES,
    _SKIP_REASONS,
    ARCHIVE,
    EXCLUDES,
    PROVENANCE,
    Action,
    Fate,
    Item,
    MigrationPlan,
    MigrationResult,
    PlannedMemory,
    PlannedWrite,
    WriteAction,
)
from ncx.v2.reader import (
    MLDA,
    Problem,
    Sidecar,
    V2Doc,
    V2Project,
    escapes_repo,
)
from ncx.v2.report import format_report, report_json

if TYPE_CHECKING:
    from ncx.config import Config
    from ncx.embedder import Embedder
    from ncx.v2.journal import Output

# The migration's public names, wherever they live now (callers import them from here).
__all__ = [
    "ARCHIVE",
    "EXCLUDES",
    "PROVENANCE",
    "Action",
    "Fate",
    "Item",
    "MigrationPlan",
    "MigrationResult",
    "PlannedMemory",
    "PlannedWrite",
    "WriteAction",
    "apply_migration",
    "build_plan",
    "existing_memories",
    "format_report",
    "has_v2",
    "migrate_changed",
    "plan_migration",
    "report_json",
]


# ---------------------------------------------------------------- plan (pure)


def plan_migration(
    project: V2Project,
    *,
    tracked: Collection[str],
    exclude: Sequence[str] = (),
    existing: Mapping[str, Memory] | None = None,
    produced: Mapping[str, Output] | None = None,
    today: date,
    index_logs: bool = False,
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
            items.append(_doc_item(path, doc, tracked, exclude, is_excluded, index_logs))
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
    index_logs: bool = False,
) -> Item:
    from ncx.sources import log_reason

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
    if not index_logs and (why := log_reason(path)):
        # sync leaves changelogs out by default: the report says so rather than "chunked"
        return Item(path, "doc", "skipped", why, knowledge=False)
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

    index_logs = False
    try:
        manifest = load_manifest(root)
        exclude: tuple[str, ...] = manifest.exclude
        index_logs = manifest.index_logs
    except NotInitialized:
        exclude = ()
    return plan_migration(
        read_v2(root),
        tracked=repo.tracked_files(root),
        exclude=exclude,
        index_logs=index_logs,
        existing=existing_memories(root),
        produced=read_outputs(root),
        today=today or date.today(),
    )


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
