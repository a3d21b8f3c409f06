"""The typed values the v2 reader returns (`V2Project` and its parts) and the v2 layout's
constants: pure data, shared by the reader's modules and by `ncx migrate`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Level = Literal["error", "warning", "note"]
SidecarShape = Literal["v1", "v1.5", "v2", "skill"]
IdSource = Literal["sidecar", "text", "registry", "none"]
TitleSource = Literal["sidecar", "heading", "registry", "filename"]
DocRole = Literal["store", "project", "paired", "prose", "handoff"]
EntryKind = Literal[
    "grouping",
    "activation",
    "verification_note",
    "related_domain",
    "anti_pattern",
    "pattern",
    "domain_interaction",
]
RegistryShape = Literal["init", "regenerated", "neocortex", "unknown"]
ArtifactKind = Literal[
    "doc",  # markdown to chunk (see V2Doc.role)
    "sidecar",
    "registry",  # derived
    "learning",
    "topic-domain",
    "patterns",
    "topic-template",  # topics/_example and other topics/_* folders
    "learning-index",  # derived
    "activation-context",  # derived
    "project-brief",  # derived
    "config",
    "graph",  # derived
    "tooling",  # .mlda/scripts, templates, schemas
    "beads",
    "other",
]
DERIVED_KINDS: frozenset[str] = frozenset(
    {"registry", "learning-index", "activation-context", "project-brief", "graph"}
)

MLDA = ".mlda"
BOM = b"\xef\xbb\xbf"
# The schema says ^DOC-[A-Z]+-[0-9]{3}$, but real trees use domain codes with digits (A11Y) and
# the activation generator accepted any number of digits; accept those, and note the deviation.
DOC_ID_RE = re.compile(r"^DOC-[A-Z][A-Z0-9]*-[0-9]+$")
SCHEMA_DOC_ID_RE = re.compile(r"^DOC-[A-Z]+-[0-9]{3}$")
_PLACEHOLDER_DOMAINS = frozenset({"EXAMPLE", "XXX", "YYY", "DOMAIN"})
_PS_ARTIFACT_RE = re.compile(
    r"Microsoft\.PowerShell\.[\w.]+|System\.Management\.Automation\.[\w.]+"
    r"|System\.Object\[\]|System\.Collections\.[\w.`\[\]]+|@\{[^{}]*=[^{}]*\}"
)
_TEMPLATE_RE = re.compile(r"\{[^{}\n]*\}|\[[^\[\]\n]*\]")
_BOLD_FIELD_RE = re.compile(r"^\*\*([^*:\n]+):\*\*\s*(.*?)\s*$")
_TEXT_ID_FIELD_RE = re.compile(r"^\*\*(?:DOC-ID|Doc ID|Document ID|ID):\*\*\s*`?([^\s`|]+)`?")
_TEXT_ID_BOLD_RE = re.compile(r"^\*\*(DOC-[^*\s]+)\*\*")
_SIDECAR_SUFFIX = ".meta.yaml"
_TOOLING_DIRS = ("scripts", "templates", "schemas")
_PRUNED_DIRS = frozenset({"node_modules", "__pycache__", "venv"})
_RELATION_TYPES = frozenset({"depends-on", "extends", "references", "supersedes"})
_INVERSE = {
    "depends-on": "depended-by",
    "extends": "extended-by",
    "references": "referenced-by",
    "supersedes": "superseded-by",
}
_STATUSES = frozenset({"draft", "review", "active", "deprecated"})
_V2_BLOCKS = ("predictions", "reference_frames", "boundaries", "has_critical_markers")
_V15_KEYS = ("domain", "version", "source", "implementation")
_SIDECAR_TYPED_KEYS = frozenset(
    {"id", "title", "status", "created", "updated", "tags", "domain", "summary", "related"}
    | {"predictions", "reference_frames", "boundaries"}
)
# v2-format §4: list key -> (entry kind, required fields, field holding DOC-IDs, label, date field)
_LEARNING_LISTS: dict[
    str, tuple[EntryKind, tuple[str, ...], str | None, str | None, str | None]
] = {
    "groupings": ("grouping", ("name", "docs", "origin"), "docs", "name", None),
    "activations": ("activation", ("docs", "frequency"), "docs", None, "last_session"),
    "verification_notes": (
        "verification_note",
        ("session", "caught", "lesson"),
        "doc",
        "caught",
        "session",
    ),
    "related_domains": (
        "related_domain",
        ("domain", "relationship"),
        "typical_overlap",
        "domain",
        None,
    ),
    "anti_patterns": ("anti_pattern", ("pattern", "reason"), None, "pattern", "session"),
}
# v2-format §6: _cross-domain/patterns.yaml has no schema
_PATTERN_LISTS: dict[str, tuple[EntryKind, tuple[str, ...], str | None, str | None, str | None]] = {
    "patterns": ("pattern", ("name",), "docs", "name", "discovered"),
    "domain_interactions": ("domain_interaction", ("domains",), None, None, None),
    "anti_patterns": ("anti_pattern", ("pattern", "reason"), None, "pattern", "discovered"),
}
_LEARNING_TOP_KEYS = frozenset(
    {"topic", "version", "last_updated", "sessions_contributed", "session_count"}
    | set(_LEARNING_LISTS)
)


# ---------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Problem:
    """Something in the tree that was odd, broken or refused.

    level: "error" = knowledge could not be read or was refused (migrate should fail loudly);
    "warning" = read, but tolerated a defect the report should show; "note" = an expected quirk.
    path is repo-relative (posix); line is 1-based where known.
    """

    path: str
    line: int | None
    message: str
    level: Level = "warning"


@dataclass(frozen=True, slots=True)
class Disagreement:
    """Derived data (registry, index, brief, activation context) that contradicts the sources."""

    source: str  # the derived file, repo-relative
    subject: str  # a DOC-ID, a topic name, or a section such as "graph"
    field: str
    derived: str  # what the derived file says
    actual: str  # what the sidecars / topic files / tree say


@dataclass(frozen=True, slots=True)
class Relation:
    id: str
    type: str | None  # depends-on | extends | references | supersedes (others kept as written)
    why: str | None


@dataclass(frozen=True, slots=True)
class Stamp:
    """A sidecar `created`/`updated`: a {date, by} mapping, a bare date or a string."""

    date: str | None  # ISO YYYY-MM-DD where the value was a date
    by: str | None


@dataclass(frozen=True, slots=True)
class Prediction:
    task: str  # "implementing" (the `when_` prefix dropped)
    required: tuple[str, ...]
    likely: tuple[str, ...]  # a skill-variant flat list lands here


@dataclass(frozen=True, slots=True)
class Sidecar:
    path: str
    shape: SidecarShape
    id: str | None  # None when missing, a placeholder, or not a DOC-ID
    title: str | None
    status: str | None
    domain: str | None
    tags: tuple[str, ...]
    summary: str | None  # trailing newline of the `|` block removed
    related: tuple[Relation, ...]
    created: Stamp | None
    updated: Stamp | None
    predictions: tuple[Prediction, ...]
    reference_frames: Mapping[str, object]
    related_domains: tuple[str, ...]  # boundaries.related_domains
    isolated_from: tuple[str, ...]  # boundaries.isolated_from
    extra: Mapping[str, object]  # every other key, kept (beads, version, source, type, ...)
    raw: Mapping[str, object]  # the whole mapping, dates as ISO strings


@dataclass(frozen=True, slots=True)
class V2Doc:
    """A markdown file to migrate as a chunked doc, with whatever metadata it has."""

    path: str  # repo-relative posix
    role: DocRole
    doc_id: str | None
    id_source: IdSource
    text_id: str | None  # a DOC-ID declared in the body's header lines, if any
    title: str
    title_source: TitleSource
    status: str | None
    domain: str | None
    tags: tuple[str, ...]
    summary: str | None
    related: tuple[Relation, ...]
    sidecar: Sidecar | None
    text: str  # decoded, BOM stripped, newlines LF
    encoding: str  # "utf-8", "utf-8-sig" (had a BOM) or "cp1252"

    @property
    def sidecar_path(self) -> str | None:
        return None if self.sidecar is None else self.sidecar.path

    @property
    def sidecar_shape(self) -> SidecarShape | None:
        return None if self.sidecar is None else self.sidecar.shape


@dataclass(frozen=True, slots=True)
class LearningEntry:
    """One item of a topic's learning lists or of _cross-domain/patterns.yaml."""

    kind: EntryKind
    topic: str  # topic folder name; "_cross-domain" for patterns.yaml
    source: str  # the v2 file, repo-relative
    list_key: str  # "groupings", "activations", ...
    index: int  # position in that list
    line: int | None
    label: str  # a short handle: name / pattern / caught / domain / the docs
    docs: tuple[str, ...]  # DOC-IDs as written (may dangle; placeholders removed)
    origin: str | None  # human | agent
    confidence: str | None  # high | medium | low
    date: str | None  # ISO date of the session/discovery, if any
    fields: Mapping[str, object]  # every key of the entry, dates as ISO strings

    @property
    def key(self) -> str:
        """Stable provenance key, e.g. ".mlda/topics/auth/learning.yaml#groupings[0]"."""
        return f"{self.source}#{self.list_key}[{self.index}]"


@dataclass(frozen=True, slots=True)
class TopicDomain:
    """A topic's domain.yaml: metadata only (its schema is broken by real files; v2-format §5)."""

    path: str
    domain: str | None
    description: str | None  # `description` or `display_name`
    version: int | None
    last_updated: str | None
    sub_domains: tuple[Mapping[str, object], ...]
    entry_points: Mapping[str, object]
    related_domains: tuple[Mapping[str, object], ...]
    isolated_from: tuple[str, ...]
    raw: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Topic:
    name: str  # folder name as written (authentication, ux, api, UI, ...)
    path: str  # folder, repo-relative
    learning_path: str | None
    declared: str | None  # the file's `topic:` value
    version: int | None
    last_updated: str | None
    sessions: int | None  # sessions_contributed, or its alias session_count
    entries: tuple[LearningEntry, ...]
    domain: TopicDomain | None
    extra: Mapping[str, object]  # top-level keys outside the schema


@dataclass(frozen=True, slots=True)
class CrossDomain:
    path: str
    version: int | None
    last_updated: str | None
    entries: tuple[LearningEntry, ...]


@dataclass(frozen=True, slots=True)
class HandoffPhase:
    title: str  # "Phase 1: Analyst Discovery"
    line: int
    fields: Mapping[str, str]  # Status, Agent, Dates, ... as written
    filled: bool  # Status is real and under way, and another field holds a real value


@dataclass(frozen=True, slots=True)
class Handoff:
    path: str
    fields: Mapping[str, str]  # header: Project, Last Updated, Current Phase, Last Handoff By, ...
    phases: tuple[HandoffPhase, ...]
    template_version: str | None  # "1.1" from the footer, if present
    placeholders: int  # count of [..]/{..} template placeholders left in the text
    filled: bool  # some phase is filled


@dataclass(frozen=True, slots=True)
class RegistryEntry:
    id: str | None
    title: str | None
    path: str | None  # as written (relative to .mlda/ by the scripts)
    resolved: str | None  # repo-relative file it names, or None (missing / refused)
    status: str | None
    tags: tuple[str, ...]
    domain: str | None
    relates_to: tuple[tuple[str, str], ...]  # (id, type); the registry drops `why`
    referenced_by: tuple[tuple[str, str], ...]
    raw: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Registry:
    path: str
    shape: RegistryShape  # v2-format §2: A init, B regenerated, C regenerated + neocortex
    last_updated: str | None
    domains: tuple[str, ...]
    entries: tuple[RegistryEntry, ...]
    raw: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class DerivedFile:
    """learning-index.yaml, activation-context.yaml or project-brief.json, parsed as is."""

    path: str
    kind: ArtifactKind
    data: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class V2Config:
    path: str
    soft_tokens: int | None  # context_limits.soft_threshold_tokens
    hard_tokens: int | None  # context_limits.hardstop_tokens
    raw: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Artifact:
    """One file found, and what it is. Every file under .mlda/ is listed, plus docs and sidecars."""

    path: str
    kind: ArtifactKind
    encoding: str | None  # None when not read
    crlf: bool

    @property
    def derived(self) -> bool:
        return self.kind in DERIVED_KINDS


@dataclass(frozen=True, slots=True)
class V2Project:
    root: Path
    has_mlda: bool  # .mlda/ exists (sidecars under docs/ are read either way)
    docs: tuple[V2Doc, ...]  # sorted by path; includes the handoff doc
    orphan_sidecars: tuple[Sidecar, ...]  # sidecars whose .md was not found
    topics: tuple[Topic, ...]
    cross_domain: CrossDomain | None
    handoff: Handoff | None
    registry: Registry | None
    derived: tuple[DerivedFile, ...]
    config: V2Config | None
    artifacts: tuple[Artifact, ...]
    problems: tuple[Problem, ...]
    disagreements: tuple[Disagreement, ...]

    def doc_by_id(self, doc_id: str) -> V2Doc | None:
        return next((d for d in self.docs if d.doc_id == doc_id), None)

    @property
    def learning_entries(self) -> tuple[LearningEntry, ...]:
        entries = [e for t in self.topics for e in t.entries]
        if self.cross_domain is not None:
            entries.extend(self.cross_domain.entries)
        return tuple(entries)
