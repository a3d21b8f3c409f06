"""mlda: read a v2 project tree (`.mlda/`, sidecars, `docs/`) into typed values for `ncx migrate`.

Pure and tolerant: it reads files and returns a `V2Project` listing every problem it met. It never
writes, prints, or gives up on bad input. Sidecars and topic files are the truth. The registry,
learning index, activation context and project brief are derived: they are only cross-checked.
The input format and its quirks are described in docs/v2-format.md (cited as "v2-format §N").
"""

from __future__ import annotations

import datetime as dt
import json
import os
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from ncx.errors import NcxError

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


# ---------------------------------------------------------------- public helpers


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode as the v2 scripts wrote: UTF-8 (a BOM stripped), else cp1252; newlines become LF.

    Returns (text, encoding) with encoding "utf-8", "utf-8-sig" or "cp1252". cp1252 leaves five
    byte values undefined; those become U+FFFD rather than failing.
    """
    try:
        text = data.decode("utf-8-sig")
        encoding = "utf-8-sig" if data.startswith(BOM) else "utf-8"
    except UnicodeDecodeError:
        # Windows PowerShell 5.1 Set-Content writes the ANSI code page (v2-format §2, §12).
        text = data.decode("cp1252", errors="replace")
        encoding = "cp1252"
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding


def classify_id(value: str) -> Literal["valid", "placeholder", "invalid"]:
    """Tell a real DOC-ID from a template placeholder (DOC-{DOMAIN}-{NNN}, DOC-DS-xxx) or junk."""
    if DOC_ID_RE.match(value):
        return "placeholder" if value.split("-")[1] in _PLACEHOLDER_DOMAINS else "valid"
    if value.upper().startswith("DOC-") or "{" in value:
        return "placeholder"
    return "invalid"


def escapes_repo(path: str) -> bool:
    """True for a v2 path that is absolute or climbs out of the repository root."""
    p = path.replace("\\", "/")
    if p.startswith("/") or re.match(r"^[A-Za-z]:", p):
        return True
    norm = posixpath.normpath(p)
    return norm == ".." or norm.startswith("../")


def parse_sidecar(rel: str, data: bytes) -> tuple[Sidecar | None, tuple[Problem, ...]]:
    """Read one sidecar from its bytes (for sync, which may read them from the git index).

    Returns (sidecar or None when it does not parse or is not a mapping, problems met)."""
    r = _Reader(Path("."))
    r.given[rel] = data
    return _read_sidecar(r, rel), tuple(r.problems)


# ---------------------------------------------------------------- reading files


class _Reader:
    """Owns the repository root and the problems met so far; every file read goes through it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = root.resolve()
        self.problems: list[Problem] = []
        self.encodings: dict[str, str] = {}
        self.crlf: set[str] = set()
        self.given: dict[str, bytes] = {}  # contents supplied by the caller (parse_sidecar)

    def report(
        self, path: str, message: str, *, line: int | None = None, level: Level = "warning"
    ) -> None:
        self.problems.append(Problem(path, line, message, level))

    def inside(self, rel: str) -> bool:
        """rel stays in the repository, symlinks included."""
        if escapes_repo(rel):
            return False
        try:
            real = (self.root / rel).resolve()
        except (OSError, RuntimeError):
            return False
        return real == self.real_root or self.real_root in real.parents

    def read_text(self, rel: str, *, level: Level = "error") -> str | None:
        if rel not in self.given and not self.inside(rel):
            self.report(rel, "refused: the path leaves the repository", level="error")
            return None
        try:
            data = self.given[rel] if rel in self.given else (self.root / rel).read_bytes()
        except OSError as exc:
            self.report(rel, f"cannot be read: {exc.strerror or exc}", level=level)
            return None
        text, encoding = decode_bytes(data)
        self.encodings[rel] = encoding
        if b"\r" in data:
            self.crlf.add(rel)
        if encoding == "cp1252":
            self.report(rel, "not valid UTF-8; decoded as cp1252 (Windows ANSI)")
        return text

    def load_yaml(self, rel: str, *, level: Level) -> tuple[object, Any] | None:
        """(cleaned data, composed node) or None when unreadable; a parse error names its line."""
        text = self.read_text(rel, level=level)
        if text is None:
            return None
        try:
            # compose builds only the node tree (no objects), for line numbers of entries.
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            self.report(
                rel,
                f"YAML does not parse ({what}); file skipped",
                line=None if mark is None else mark.line + 1,
                level=level,
            )
            return None
        return self._clean(rel, text, data, (), {}), node

    def _clean(
        self, rel: str, text: str, value: object, where: tuple[str, ...], memo: dict[int, object]
    ) -> object:
        """Dates to ISO strings, keys to str, PowerShell artifacts to None (reported).

        YAML anchors make shared, even cyclic, containers: memo cleans each one once."""
        if id(value) in memo:
            return memo[id(value)]
        if isinstance(value, dt.datetime | dt.date):
            return value.isoformat()
        if isinstance(value, str):
            found = _PS_ARTIFACT_RE.search(value)
            if found is None:
                return value
            whole = found.group(0) == value.strip()
            self.report(
                rel,
                f"PowerShell artifact in {'.'.join(where) or 'value'}: {found.group(0)!r}"
                + ("; value dropped" if whole else ""),
                line=_line_of(text, found.group(0)),
                level="note" if whole else "warning",
            )
            return None if whole else value
        if isinstance(value, dict):
            out: dict[str, object] = {}
            memo[id(value)] = out
            for k, v in value.items():
                key = k.isoformat() if isinstance(k, dt.date) else str(k)
                out[key] = self._clean(rel, text, v, (*where, key), memo)
            return out
        if isinstance(value, list):
            items: list[object] = []
            memo[id(value)] = items
            items.extend(
                self._clean(rel, text, v, (*where, f"[{i}]"), memo) for i, v in enumerate(value)
            )
            return items
        return value


def _line_of(text: str, needle: str) -> int | None:
    for n, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return n
    return None


def _item_lines(node: Any, key: str) -> list[int | None]:
    """1-based line of each item of the sequence under mapping key `key` of a composed node."""
    if not isinstance(node, yaml.MappingNode):
        return []
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            if isinstance(v, yaml.SequenceNode):
                return [item.start_mark.line + 1 for item in v.value]
            if isinstance(v, yaml.MappingNode):
                return [item.start_mark.line + 1 for item, _ in v.value]
    return []


def _walk(r: _Reader) -> list[str]:
    """Repo-relative paths of the files worth looking at, sorted; links out of the repo refused."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(r.root):
        rel_dir = Path(dirpath).relative_to(r.root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        keep = []
        for d in sorted(dirnames):
            # Only .mlda among hidden folders holds v2 data; .git, .neocortex, .venv never do.
            hidden = d.startswith(".") and not (rel_dir == "" and d == MLDA)
            if hidden or d in _PRUNED_DIRS:
                continue
            if (Path(dirpath) / d).is_symlink():
                r.report(posixpath.join(rel_dir, d), "symlinked folder not followed", level="note")
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            rel = posixpath.join(rel_dir, f)
            if (Path(dirpath) / f).is_symlink() and not r.inside(rel):
                r.report(rel, "refused: symlink leaves the repository", level="error")
                continue
            found.append(rel)
    return sorted(found)


# ---------------------------------------------------------------- small coercions


def _text(value: object) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    s = str(value).strip()
    return s or None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _map(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    """A list. None (a key with only comments under it, v2-format §0.2) is empty; a scalar,
    one item."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


def _strings(value: object) -> tuple[str, ...]:
    return tuple(s for s in (_text(v) for v in _list(value)) if s is not None)


def _show(value: object) -> str:
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(sorted(str(v) for v in value)) or "(none)"
    return "(none)" if value is None else str(value)


def _is_template(value: str) -> bool:
    return bool(_TEMPLATE_RE.search(value))


def _ids(r: _Reader, rel: str, value: object, where: str) -> tuple[str, ...]:
    """DOC-IDs in a list (or one value), placeholders dropped with a note."""
    out: list[str] = []
    for item in _list(value):
        s = _text(item)
        if s is None:
            if item is not None:
                r.report(rel, f"{where}: {item!r} is not a DOC-ID; ignored")
            continue
        if classify_id(s) == "placeholder":
            r.report(rel, f"{where}: placeholder ID {s} ignored", level="note")
            continue
        if classify_id(s) == "invalid":
            r.report(rel, f"{where}: {s!r} is not a DOC-ID; kept as written")
        out.append(s)
    return tuple(out)


# ---------------------------------------------------------------- sidecars


def _stamp(r: _Reader, rel: str, key: str, value: object) -> Stamp | None:
    if value is None:
        return None
    if isinstance(value, dict):
        date, by = _text(value.get("date")), _text(value.get("by"))
    else:
        date, by = _text(value), None
    if date is not None and _is_template(date):
        r.report(rel, f"{key}: unfilled template value {date!r}", level="note")
        date = None
    return Stamp(date, by)


def _shape(data: Mapping[str, object]) -> SidecarShape:
    preds = _map(data.get("predictions"))
    frames = _map(data.get("reference_frames"))
    created = data.get("created")
    # Skill-written sidecars (v2-format §3): `type:`, flat prediction lists, frames.phase,
    # string dates.
    if (
        "type" in data
        or any(isinstance(v, list) for v in preds.values())
        or "phase" in frames
        or (isinstance(created, str) and not re.match(r"^\d{4}-\d{2}-\d{2}$", created))
    ):
        return "skill"
    if any(k in data for k in _V2_BLOCKS):
        return "v2"
    if any(k in data for k in _V15_KEYS):
        return "v1.5"
    return "v1"


def _read_sidecar(r: _Reader, rel: str) -> Sidecar | None:
    loaded = r.load_yaml(rel, level="error")
    if loaded is None:
        return None
    data = loaded[0]
    if not isinstance(data, dict):
        r.report(
            rel, f"sidecar is not a mapping (found {type(data).__name__}); skipped", level="error"
        )
        return None

    raw_id, doc_id = _text(data.get("id")), None
    if raw_id is None:
        r.report(rel, "sidecar has no id")
    elif classify_id(raw_id) == "valid":
        doc_id = raw_id
        if not SCHEMA_DOC_ID_RE.match(raw_id):
            r.report(
                rel, f"id {raw_id} breaks the schema pattern DOC-[A-Z]+-NNN; kept", level="note"
            )
    else:
        r.report(rel, f"id {raw_id!r} is a placeholder or not a DOC-ID; treated as no id")

    title, status = _text(data.get("title")), _text(data.get("status"))
    if title is None:
        r.report(rel, "sidecar has no title")
    elif _is_template(title) and title.startswith("{"):
        r.report(rel, f"title is an unfilled template value {title!r}; ignored")
        title = None
    if status is None:
        r.report(rel, "sidecar has no status")
    elif status not in _STATUSES:
        r.report(
            rel, f"status {status!r} is not draft|review|active|deprecated; kept", level="note"
        )

    tags: list[str] = []
    for tag in _list(data.get("tags")):
        s = _text(tag)
        if s is None:
            # `- {domain}` in an unfilled template parses as the mapping {domain: None}.
            r.report(rel, f"tag {tag!r} is not a string (unfilled template?); dropped")
        elif not re.match(r"^[a-z0-9-]+$", s):
            r.report(rel, f"tag {s!r} breaks the schema pattern [a-z0-9-]+; kept", level="note")
            tags.append(s)
        else:
            tags.append(s)

    domain = _text(data.get("domain"))
    if domain is not None and not re.match(r"^[A-Z]+$", domain):
        r.report(rel, f"domain {domain!r} breaks the schema pattern [A-Z]+; kept", level="note")

    summary = data.get("summary")
    summary_text = summary.strip() if isinstance(summary, str) and summary.strip() else None

    related: list[Relation] = []
    for i, item in enumerate(_list(data.get("related"))):
        rel_map = item if isinstance(item, dict) else {"id": item}
        rid = _text(rel_map.get("id"))
        if rid is None or classify_id(rid) == "placeholder":
            r.report(rel, f"related[{i}]: no usable id ({rel_map.get('id')!r}); dropped")
            continue
        rtype = _text(rel_map.get("type"))
        if rtype not in _RELATION_TYPES:
            r.report(
                rel,
                f"related[{i}]: type {rtype!r} is not a known relation type; kept",
                level="note",
            )
        related.append(Relation(rid, rtype, _text(rel_map.get("why"))))

    predictions: list[Prediction] = []
    for task, spec in _map(data.get("predictions")).items():
        name = task.removeprefix("when_")
        if isinstance(spec, dict):
            req = _ids(r, rel, spec.get("required"), f"predictions.{task}.required")
            likely = _ids(r, rel, spec.get("likely"), f"predictions.{task}.likely")
            predictions.append(Prediction(name, req, likely))
        else:
            # The skill variant writes a flat list without strengths; "likely" claims the least.
            predictions.append(Prediction(name, (), _ids(r, rel, spec, f"predictions.{task}")))

    boundaries = _map(data.get("boundaries"))
    return Sidecar(
        path=rel,
        shape=_shape(data),
        id=doc_id,
        title=title,
        status=status,
        domain=domain,
        tags=tuple(tags),
        summary=summary_text,
        related=tuple(related),
        created=_stamp(r, rel, "created", data.get("created")),
        updated=_stamp(r, rel, "updated", data.get("updated")),
        predictions=tuple(predictions),
        reference_frames=_map(data.get("reference_frames")),
        related_domains=_strings(boundaries.get("related_domains")),
        isolated_from=_strings(boundaries.get("isolated_from")),
        extra={k: v for k, v in data.items() if k not in _SIDECAR_TYPED_KEYS},
        raw=data,
    )


# ---------------------------------------------------------------- markdown


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
