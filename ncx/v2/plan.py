"""What `ncx migrate` plans and did, as values: every v2 artifact's fate (`Item`), the
memories and files to write, the plan, the result; and the constants of the v2 layout it
moves from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ncx.memory.file import Memory
from ncx.v2.reader import (
    MLDA,
    Disagreement,
    Problem,
)

if TYPE_CHECKING:
    from ncx.tree.sync import SyncReport


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
