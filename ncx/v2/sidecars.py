"""v2 sidecars (`*.meta.yaml`): their four shapes (v1, v1.5, v2, skill) read into `Sidecar`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from ncx.v2.files import _ids, _is_template, _list, _map, _Reader, _strings, _text, classify_id
from ncx.v2.values import (
    _RELATION_TYPES,
    _SIDECAR_TYPED_KEYS,
    _STATUSES,
    _V2_BLOCKS,
    _V15_KEYS,
    SCHEMA_DOC_ID_RE,
    Prediction,
    Problem,
    Relation,
    Sidecar,
    SidecarShape,
    Stamp,
)


def parse_sidecar(rel: str, data: bytes) -> tuple[Sidecar | None, tuple[Problem, ...]]:
    """Read one sidecar from its bytes (for sync, which may read them from the git index).

    Returns (sidecar or None when it does not parse or is not a mapping, problems met)."""
    r = _Reader(Path("."))
    r.given[rel] = data
    return _read_sidecar(r, rel), tuple(r.problems)


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
