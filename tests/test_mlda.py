"""Tests for ncx.v2.reader: one synthetic tree per quirk in docs/v2-format.md, plus the
two real trees in ../shared/fixtures/mlda-v2 (skipped where that folder is absent)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ncx.errors import NcxError
from ncx.v2.reader import V2Project, classify_id, decode_bytes, escapes_repo, read_v2

REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "mlda-v2"


def make(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8", newline="")
        else:
            path.write_bytes(content)
    return root


def messages(p: V2Project, path: str | None = None) -> list[str]:
    return [x.message for x in p.problems if path is None or x.path == path]


def doc(p: V2Project, path: str):
    found = [d for d in p.docs if d.path == path]
    assert found, [d.path for d in p.docs]
    return found[0]


SIDECAR_V2 = """
    # MLDA Sidecar v2 - Neocortex Format
    id: DOC-CORE-002
    title: "MLDA Navigation Protocol"
    status: active
    created:
      date: "2026-01-14"
      by: "Claude (Architect)"
    updated:
      date: "2026-01-20"
      by: "Claude (Developer)"
    tags:
      - architecture
      - navigation
    domain: CORE
    summary: |
      Defines how agents navigate the MLDA knowledge graph.
    related:
      - id: DOC-CORE-001
        type: depends-on
        why: "Neocortex paradigm - foundational model"
    predictions:
      when_architecting:
        required: [DOC-CORE-001]
        likely: []
    reference_frames:
      domain: methodology
      layer: design
      stability: stable
      scope: cross-cutting
    boundaries:
      related_domains:
        - paradigm
      isolated_from: []
    has_critical_markers: false
    beads: "Ways of Development-24"
"""

SIDECAR_V1 = """
    id: DOC-CORE-001
    title: "MLDA Neocortex Paradigm"
    status: active
    created: 2026-01-14
    updated: 2026-01-14
    tags:
      - mlda
    related:
      - id: DOC-CORE-002
        type: extends
        why: "Navigation protocol"
"""

REGISTRY_B = """
    last_updated: 2026-01-20
    graph:
      total_documents: 2
      total_relationships: 2
      documents_with_relationships: 2
      orphan_documents: Microsoft.PowerShell.Commands.GenericMeasureInfo.Count
    relationship_types:
      depends-on: 1
      extends: 1
    domains:
      - CORE    # Auto-discovered
    documents:
      - id: DOC-CORE-001
        title: "MLDA Neocortex Paradigm"
        path: docs/core/paradigm.md
        status: active
        tags: [mlda]
        relates_to:
          - id: DOC-CORE-002
            type: extends
        referenced_by:
          - id: DOC-CORE-002
            type: depended-by
      - id: DOC-CORE-002
        title: "MLDA Navigation Protocol"
        path: docs/core/navigation.md
        status: active
        tags: [architecture, navigation]
        relates_to:
          - id: DOC-CORE-001
            type: depends-on
        referenced_by:
          - id: DOC-CORE-001
            type: extended-by
"""


def store_tree(tmp_path: Path, **extra: str | bytes) -> Path:
    files: dict[str, str | bytes] = {
        ".mlda/registry.yaml": REGISTRY_B,
        ".mlda/docs/core/paradigm.md": "# MLDA Neocortex Paradigm\n\n**DOC-CORE-001** | Foundation\n",
        ".mlda/docs/core/paradigm.meta.yaml": SIDECAR_V1,
        ".mlda/docs/core/navigation.md": "# MLDA Navigation Protocol\n\n**DOC-CORE-002** | Rules\n",
        ".mlda/docs/core/navigation.meta.yaml": SIDECAR_V2,
    }
    files.update({k.replace("__", "/"): v for k, v in extra.items()})
    return make(tmp_path, files)


# ---------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("DOC-API-001", "valid"),
        ("DOC-A11Y-001", "valid"),  # digits in the domain code: real, breaks the schema
        ("DOC-CORE-1234", "valid"),
        ("DOC-{DOMAIN}-{NNN}", "placeholder"),
        ("DOC-XXX-NNN", "placeholder"),
        ("DOC-DS-xxx", "placeholder"),
        ("DOC-UI-{NNN}", "placeholder"),
        ("DOC-EXAMPLE-001", "placeholder"),
        ("ENHANCEMENT-001", "invalid"),
    ],
)
def test_classify_id(value: str, kind: str) -> None:
    assert classify_id(value) == kind


@pytest.mark.parametrize(
    ("path", "escapes"),
    [
        ("docs/a.md", False),
        ("../docs/a.md", True),
        ("docs/../../a.md", True),
        ("/etc/passwd", True),
        ("C:\\Users\\x\\a.md", True),
        ("docs\\..\\..\\a.md", True),
        ("docs/./a/../b.md", False),
    ],
)
def test_escapes_repo(path: str, escapes: bool) -> None:
    assert escapes_repo(path) is escapes


@given(st.text(), st.booleans(), st.booleans())
def test_decode_bytes_roundtrip(text: str, bom: bool, crlf: bool) -> None:
    text = text.replace("\r", "").lstrip("\ufeff")
    data = text.replace("\n", "\r\n" if crlf else "\n").encode("utf-8")
    decoded, encoding = decode_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    assert decoded == text
    assert encoding == ("utf-8-sig" if bom else "utf-8")


def test_decode_bytes_cp1252_fallback() -> None:
    assert decode_bytes(b"Caf\xe9 \x93quoted\x94\r\n") == ("Café “quoted”\n", "cp1252")
    assert decode_bytes(b"\x81") == ("\ufffd", "cp1252")  # undefined in cp1252


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(NcxError):
        read_v2(tmp_path / "missing")


# ---------------------------------------------------------------- sidecars and docs


def test_store_docs_with_v1_and_v2_sidecars(tmp_path: Path) -> None:
    p = read_v2(store_tree(tmp_path))
    nav = doc(p, ".mlda/docs/core/navigation.md")
    assert (nav.doc_id, nav.id_source, nav.role) == ("DOC-CORE-002", "sidecar", "store")
    assert nav.sidecar_path == ".mlda/docs/core/navigation.meta.yaml"
    assert nav.sidecar_shape == "v2"
    assert nav.title == "MLDA Navigation Protocol" and nav.title_source == "sidecar"
    assert (nav.status, nav.domain, nav.tags) == ("active", "CORE", ("architecture", "navigation"))
    assert nav.summary == "Defines how agents navigate the MLDA knowledge graph."  # no "\n"
    assert nav.related[0].id == "DOC-CORE-001" and nav.related[0].type == "depends-on"
    assert nav.related[0].why == "Neocortex paradigm - foundational model"
    sc = nav.sidecar
    assert sc is not None
    assert sc.created is not None and sc.created.date == "2026-01-14"
    assert sc.created.by == "Claude (Architect)"
    assert sc.predictions[0].task == "architecting"
    assert sc.predictions[0].required == ("DOC-CORE-001",)
    assert sc.reference_frames["layer"] == "design"
    assert sc.related_domains == ("paradigm",)
    assert sc.extra["beads"] == "Ways of Development-24"
    assert sc.extra["has_critical_markers"] is False
    par = doc(p, ".mlda/docs/core/paradigm.md")
    assert par.sidecar_shape == "v1" and par.text_id == "DOC-CORE-001"
    # v2-format §3: a bare YAML date with no `by`
    assert par.sidecar is not None and par.sidecar.created is not None
    assert (par.sidecar.created.date, par.sidecar.created.by) == ("2026-01-14", None)
    assert p.orphan_sidecars == ()


def test_sidecar_v15_shape_keeps_unknown_keys(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "docs/decisions/DEC-001.md": "# DEC-001: Critical Thinking\n\n**DOC-PROC-001** | Spec\n",
            "docs/decisions/DEC-001.meta.yaml": """
                id: DOC-PROC-001
                title: "Critical Thinking Protocol"
                status: active
                created: {date: "2026-01-17", by: "Human + Claude collaboration"}
                source:
                  research: ["Research.md"]
                  sections: ["all"]
                domain: PROC
                version: "1.0"
                implementation:
                  phase_1: "Ways of Development-64"
                related: []
            """,
        },
    )
    p = read_v2(tmp_path)
    d = doc(p, "docs/decisions/DEC-001.md")
    assert d.sidecar_shape == "v1.5" and d.role == "project" and d.doc_id == "DOC-PROC-001"
    assert d.sidecar is not None
    assert d.sidecar.extra["version"] == "1.0"
    assert d.sidecar.extra["implementation"] == {"phase_1": "Ways of Development-64"}
    assert d.sidecar.extra["source"] == {"research": ["Research.md"], "sections": ["all"]}
    assert not p.has_mlda  # no .mlda/: sidecars under docs/ are read anyway


def test_skill_variant_sidecar(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "docs/ux/login-wireframe.md": "# Login wireframe\n",
            "docs/ux/login-wireframe.meta.yaml": """
                id: DOC-UI-003
                title: "Login wireframe"
                status: draft
                type: wireframe
                created: "{date}"
                domain: UI
                predictions:
                  when_implementing: [DOC-UI-001, DOC-API-002]
                reference_frames: {domain: ux, layer: design, phase: wireframing}
            """,
        },
    )
    p = read_v2(tmp_path)
    sc = doc(p, "docs/ux/login-wireframe.md").sidecar
    assert sc is not None and sc.shape == "skill"
    assert sc.predictions[0].task == "implementing"
    assert sc.predictions[0].likely == ("DOC-UI-001", "DOC-API-002")
    assert sc.created is not None and sc.created.date is None  # "{date}" is a placeholder
    assert sc.extra["type"] == "wireframe"
    assert sc.reference_frames["phase"] == "wireframing"


def test_root_sidecar_pairs_root_doc(tmp_path: Path) -> None:
    # mlda-init-project.ps1 -Migrate writes sidecars next to root docs (v2-format §1, §3)
    make(
        tmp_path,
        {
            "ARCHITECTURE.md": "# Architecture\n",
            "ARCHITECTURE.meta.yaml": """
                id: DOC-API-001
                title: "ARCHITECTURE"
                status: active
                tags: [migrated, api]
                related: []
                # NOTE: Auto-generated during migration. Review and update.
            """,
            "README.md": "# Not a v2 doc\n",
        },
    )
    p = read_v2(tmp_path)
    assert [d.path for d in p.docs] == ["ARCHITECTURE.md"]
    d = p.docs[0]
    assert (d.role, d.doc_id, d.sidecar_shape, d.tags) == (
        "paired",
        "DOC-API-001",
        "v1",
        ("migrated", "api"),
    )


def test_body_only_doc_ids(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "docs/decisions/DEC-003.md": "# DEC-003: Thing\n\n**DOC-PROC-003** | Decision\n\nSee DOC-CORE-001.\n",
            "docs/template-style.md": "# API\n\n**DOC-ID:** DOC-API-001\n\n---\n",
            "docs/history/phase1.md": "# Phase 1\n\n**Document ID:** DOC-WOD-001\n",
            "docs/mentions.md": "# Mentions\n\n## Body\n\n**DOC-CORE-002** | not a header\n",
            "docs/template.md": "# {Title}\n\n**DOC-ID:** DOC-{DOMAIN}-{NNN}\n",
            "docs/DEC-010.md": "# DEC-010: No id\n\nText.\n",
            "docs/no-heading.md": "Just text.\n",
        },
    )
    p = read_v2(tmp_path)
    ids = {d.path: (d.doc_id, d.id_source) for d in p.docs}
    assert ids["docs/decisions/DEC-003.md"] == ("DOC-PROC-003", "text")
    assert ids["docs/template-style.md"] == ("DOC-API-001", "text")
    assert ids["docs/history/phase1.md"] == ("DOC-WOD-001", "text")
    assert ids["docs/mentions.md"] == (None, "none")  # only the header lines declare an ID
    assert ids["docs/template.md"] == (None, "none")
    assert ids["docs/DEC-010.md"] == (None, "none")
    assert doc(p, "docs/no-heading.md").title == "no-heading"
    assert doc(p, "docs/no-heading.md").title_source == "filename"
    assert doc(p, "docs/DEC-010.md").title == "DEC-010: No id"
    assert any("placeholder ID DOC-{DOMAIN}-{NNN}" in m for m in messages(p, "docs/template.md"))


def test_text_id_disagrees_with_sidecar(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "docs/a.md": "# A\n\n**DOC-API-002** | x\n",
            "docs/a.meta.yaml": "id: DOC-API-001\ntitle: A\nstatus: active\n",
        },
    )
    p = read_v2(tmp_path)
    d = doc(p, "docs/a.md")
    assert (d.doc_id, d.id_source, d.text_id) == ("DOC-API-001", "sidecar", "DOC-API-002")
    assert [x.line for x in p.problems if "sidecar kept" in x.message] == [3]


def test_orphan_sidecar(tmp_path: Path) -> None:
    make(tmp_path, {"docs/gone.meta.yaml": "id: DOC-API-009\ntitle: Gone\nstatus: active\n"})
    p = read_v2(tmp_path)
    assert p.docs == ()
    assert [s.id for s in p.orphan_sidecars] == ["DOC-API-009"]
    assert any("orphan sidecar" in m for m in messages(p, "docs/gone.meta.yaml"))


def test_store_sidecar_whose_doc_lives_under_root_docs(tmp_path: Path) -> None:
    # The registry says docs/api/x.md (relative to .mlda/), but only <root>/docs/api/x.md exists.
    make(
        tmp_path,
        {
            ".mlda/registry.yaml": """
                documents:
                  - id: DOC-API-001
                    title: "X"
                    path: docs/api/x.md
                    status: active
                  # the create-doc skill writes repo-relative, quoted paths
                  - id: DOC-API-002
                    title: "Y"
                    path: ".mlda/docs/api/y.md"
                    sidecar: ".mlda/docs/api/y.meta.yaml"
                    type: spec
            """,
            ".mlda/docs/api/y.md": "# Y\n",
            ".mlda/docs/api/x.meta.yaml": "id: DOC-API-001\ntitle: X\nstatus: active\n",
            "docs/api/x.md": "# X\n",
        },
    )
    p = read_v2(tmp_path)
    d = doc(p, "docs/api/x.md")
    assert d.sidecar_path == ".mlda/docs/api/x.meta.yaml" and d.doc_id == "DOC-API-001"
    assert p.registry is not None
    assert [e.resolved for e in p.registry.entries] == ["docs/api/x.md", ".mlda/docs/api/y.md"]
    assert p.orphan_sidecars == ()
    assert p.disagreements == ()


def test_placeholders_and_schema_violations_in_sidecar(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "docs/t.md": "# T\n",
            "docs/t.meta.yaml": """
                id: DOC-{DOMAIN}-{NNN}
                title: "{Document Title}"
                status: finished
                tags:
                  - {domain}
                  - Upper Case
                domain: A11Y
                related:
                  - id: DOC-XXX-NNN
                    type: depends-on
                    why: "{Why}"
                  - id: DOC-API-001
                    type: relates
                  - DOC-API-002
                predictions:
                  when_testing:
                    required:
                      - DOC-UI-{NNN}
                    likely: null
            """,
            "docs/api.md": "# API\n\n**DOC-ID:** DOC-API-001\n",
        },
    )
    p = read_v2(tmp_path)
    d = doc(p, "docs/t.md")
    assert d.doc_id is None and d.id_source == "none"
    assert d.title == "T" and d.title_source == "heading"
    assert d.status == "finished"  # kept, reported
    assert d.tags == ("Upper Case",)  # `{domain}` parsed as a mapping: dropped
    assert d.domain == "A11Y"
    assert [(r.id, r.type) for r in d.related] == [
        ("DOC-API-001", "relates"),
        ("DOC-API-002", None),
    ]
    assert d.sidecar is not None and d.sidecar.predictions[0].required == ()
    text = "\n".join(messages(p, "docs/t.meta.yaml"))
    for needle in (
        "placeholder or not a DOC-ID",
        "unfilled template value '{Document Title}'",
        "status 'finished'",
        "not a string",
        "A11Y",
        "type 'relates'",
        "placeholder ID DOC-UI-{NNN}",
        "DOC-API-002 is not defined",
    ):
        assert needle in text, needle


def test_sidecar_that_does_not_parse_keeps_its_doc(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "notes/a.md": "# A\n",
            "notes/a.meta.yaml": 'id: DOC-API-001\ntitle: "Say "hi""\nstatus: active\n',
            "docs/b.md": "# B\n",
            "docs/b.meta.yaml": "id: DOC-API-002\ntitle: B\nstatus: active\n",
        },
    )
    p = read_v2(tmp_path)
    bad = [x for x in p.problems if x.path == "notes/a.meta.yaml"]
    assert len(bad) == 1 and bad[0].level == "error" and bad[0].line == 2
    assert "does not parse" in bad[0].message
    a = doc(p, "notes/a.md")
    assert a.sidecar is None and a.role == "paired"
    assert doc(p, "docs/b.md").doc_id == "DOC-API-002"  # the rest continues


def test_sidecar_not_a_mapping(tmp_path: Path) -> None:
    make(tmp_path, {"docs/a.md": "# A\n", "docs/a.meta.yaml": "- just\n- a list\n"})
    p = read_v2(tmp_path)
    assert doc(p, "docs/a.md").sidecar is None
    assert [x.level for x in p.problems if x.path == "docs/a.meta.yaml"] == ["error"]


def test_duplicate_doc_id(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "docs/a.md": "# A\n\n**DOC-ID:** DOC-API-001\n",
            "docs/b.md": "# B\n\n**DOC-ID:** DOC-API-001\n",
        },
    )
    p = read_v2(tmp_path)
    assert any("also declared by docs/a.md" in m for m in messages(p, "docs/b.md"))
    found = p.doc_by_id("DOC-API-001")
    assert found is not None and found.path == "docs/a.md"


# ---------------------------------------------------------------- encodings


def test_bom_crlf_and_cp1252(tmp_path: Path) -> None:
    crlf_sidecar = textwrap.dedent(SIDECAR_V2).lstrip("\n").replace("\n", "\r\n")
    make(
        tmp_path,
        {
            "docs/nav.md": b"\xef\xbb\xbf# Navigation\r\n\r\n**DOC-CORE-002** | x\r\n",
            "docs/nav.meta.yaml": b"\xef\xbb\xbf" + crlf_sidecar.encode(),
            "docs/cafe.md": b"# Caf\xe9\r\n",
            "docs/cafe.meta.yaml": b'id: DOC-API-001\r\ntitle: "Caf\xe9 \x93menu\x94"\r\nstatus: active\r\n',
        },
    )
    p = read_v2(tmp_path)
    nav = doc(p, "docs/nav.md")
    assert nav.encoding == "utf-8-sig" and "\r" not in nav.text
    assert nav.text.startswith("# Navigation\n")
    assert nav.sidecar_shape == "v2" and nav.doc_id == "DOC-CORE-002"
    assert nav.summary == "Defines how agents navigate the MLDA knowledge graph."
    cafe = doc(p, "docs/cafe.md")
    assert cafe.title == "Café “menu”" and cafe.encoding == "cp1252"
    assert "cp1252" in " ".join(messages(p, "docs/cafe.meta.yaml"))
    arts = {a.path: a for a in p.artifacts}
    assert arts["docs/nav.meta.yaml"].crlf and arts["docs/nav.meta.yaml"].encoding == "utf-8-sig"
    assert arts["docs/cafe.meta.yaml"].encoding == "cp1252"


# ---------------------------------------------------------------- registry


def test_registry_regenerated_shape_agrees(tmp_path: Path) -> None:
    p = read_v2(store_tree(tmp_path))
    reg = p.registry
    assert reg is not None and reg.shape == "regenerated"
    assert reg.last_updated == "2026-01-20"  # a bare YAML date, normalised
    assert reg.domains == ("CORE",)
    # paths are relative to .mlda/ (v2-format §0.4)
    assert [e.resolved for e in reg.entries] == [
        ".mlda/docs/core/paradigm.md",
        ".mlda/docs/core/navigation.md",
    ]
    # relates_to without `why`, edges that disagree between ends: no disagreement
    assert p.disagreements == ()
    # the PowerShell artifact is a note and the value is dropped
    ps = [x for x in p.problems if "PowerShell" in x.message]
    assert len(ps) == 1 and ps[0].line == 6 and ps[0].level == "note"
    assert reg.raw["graph"]["orphan_documents"] is None  # type: ignore[index]


def test_registry_disagreements(tmp_path: Path) -> None:
    registry = REGISTRY_B.replace("tags: [mlda]", "tags: [mlda, extra]").replace(
        '"MLDA Navigation Protocol"', '"Old title"'
    )
    registry = registry.replace("total_documents: 2", "total_documents: 7")
    registry += """
      - id: DOC-CORE-009
        title: "Ghost"
        path: docs/core/ghost.md
    """
    make(
        tmp_path,
        {
            ".mlda/docs/core/extra.md": "# Extra\n",
            ".mlda/docs/core/extra.meta.yaml": "id: DOC-CORE-003\ntitle: Extra\nstatus: active\n",
        },
    )
    p = read_v2(store_tree(tmp_path, **{".mlda__registry.yaml": registry}))
    got = {(d.subject, d.field) for d in p.disagreements}
    assert got == {
        ("DOC-CORE-001", "tags"),
        ("DOC-CORE-002", "title"),
        ("DOC-CORE-003", "documents"),  # a store doc missing from the registry
        ("DOC-CORE-009", "documents"),  # a registry entry with no document
        ("graph", "total_documents"),
    }
    title = next(d for d in p.disagreements if d.field == "title")
    assert (title.derived, title.actual) == ("Old title", "MLDA Navigation Protocol")
    assert any("DOC-CORE-009" in m for m in messages(p, ".mlda/registry.yaml"))


def test_registry_ignores_unregistered_project_sidecars(tmp_path: Path) -> None:
    # mlda-registry.ps1 scans only .mlda/docs: docs/ sidecars are never registered (v2-format §2).
    p = read_v2(
        store_tree(
            tmp_path,
            **{
                "docs__decisions__DEC-002.md": "# DEC-002\n",
                "docs__decisions__DEC-002.meta.yaml": (
                    "id: DOC-METH-001\ntitle: M\nstatus: active\nrelated:\n"
                    "  - {id: DOC-CORE-001, type: supersedes, why: x}\n"
                ),
            },
        )
    )
    assert p.disagreements == ()
    assert doc(p, "docs/decisions/DEC-002.md").related[0].type == "supersedes"


def test_registry_init_shape(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/registry.yaml": """
                project: demo
                created: "2026-01-12"
                schema_version: "2.0"
                domains: [api, auth]
                documents: []
            """
        },
    )
    reg = read_v2(tmp_path).registry
    assert reg is not None and reg.shape == "init"
    assert reg.domains == ("api", "auth") and reg.entries == ()


def test_registry_keyed_by_doc_id_shape_c(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/registry.yaml": """
                last_updated: 2026-01-24
                neocortex: {v2_sidecars: 1, v1_sidecars: 0}
                documents:
                  DOC-API-001:
                    title: "API"
                    path: docs/api/api.md
                    status: active
                    domain: DATA
            """,
            ".mlda/docs/api/api.md": "# API\n",
            ".mlda/docs/api/api.meta.yaml": "id: DOC-API-001\ntitle: API\nstatus: active\ndomain: API\n",
        },
    )
    p = read_v2(tmp_path)
    assert p.registry is not None and p.registry.shape == "neocortex"
    assert p.registry.entries[0].id == "DOC-API-001"
    assert p.registry.entries[0].resolved == ".mlda/docs/api/api.md"
    assert [(d.subject, d.field, d.derived, d.actual) for d in p.disagreements] == [
        ("DOC-API-001", "domain", "DATA", "API")
    ]


def test_registry_paths_that_escape_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# secret\n")
    repo = tmp_path / "repo"
    make(
        repo,
        {
            ".mlda/registry.yaml": """
                documents:
                  - id: DOC-API-001
                    path: ../../outside.md
                  - id: DOC-API-002
                    path: /etc/passwd
                  - id: DOC-API-003
                    path: C:\\Users\\me\\doc.md
            """,
        },
    )
    p = read_v2(repo)
    assert p.registry is not None
    assert [e.resolved for e in p.registry.entries] == [None, None, None]
    refused = [m for m in messages(p, ".mlda/registry.yaml") if "leaves the repository" in m]
    assert len(refused) == 3


def test_registry_that_does_not_parse(tmp_path: Path) -> None:
    # An embedded quote in a title breaks the registry (v2-format §2); the rest continues.
    registry = REGISTRY_B.replace('"MLDA Neocortex Paradigm"', '"The "Neocortex" Paradigm"')
    p = read_v2(store_tree(tmp_path, **{".mlda__registry.yaml": registry}))
    assert p.registry is None
    bad = [x for x in p.problems if x.path == ".mlda/registry.yaml"]
    assert len(bad) == 1 and bad[0].line == 14 and bad[0].level == "warning"
    assert len(p.docs) == 2 and p.disagreements == ()


def test_doc_whose_sidecar_is_lost_keeps_registry_id(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/registry.yaml": (
                'documents:\n  - id: DOC-API-004\n    title: "Lost"\n    path: docs/api/lost.md\n'
            ),
            ".mlda/docs/api/lost.md": "No heading here.\n",
        },
    )
    d = doc(read_v2(tmp_path), ".mlda/docs/api/lost.md")
    assert (d.doc_id, d.id_source, d.title, d.title_source) == (
        "DOC-API-004",
        "registry",
        "Lost",
        "registry",
    )


# ---------------------------------------------------------------- topics


LEARNING_FULL = """
    topic: billing
    version: 3
    last_updated: "2026-01-20"
    session_count: 4
    groupings:
      - name: invoices
        docs: [DOC-BILL-001, DOC-BILL-002]
        origin: agent
        confidence: high
        discovered_during: implementing
        notes: "Always needed together"
    activations:
      - docs: [DOC-BILL-001, DOC-API-001]
        frequency: 3
        typical_tasks: [implementing, debugging]
        last_session: 2026-01-19
    verification_notes:
      - session: "2026-01-18"
        caught: "Missing error handling requirement"
        doc: DOC-BILL-002
        section: "Error Handling"
        lesson: "Check error handling before implementing"
    related_domains:
      - domain: authentication
        relationship: "Uses auth tokens"
        typical_overlap: [DOC-AUTH-001]
    anti_patterns:
      - pattern: "Loading all docs upfront"
        reason: "Context overflow"
        session: "2026-01-15"
"""


def test_topic_learning_all_kinds(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/topics/billing/learning.yaml": LEARNING_FULL,
            ".mlda/topics/billing/domain.yaml": """
                domain: billing
                version: 1
                last_updated: "2026-01-20"
                display_name: Billing
                sub_domains: []
                entry_points: {default: null, by_task: {}}
            """,
            "docs/b1.md": "# B1\n\n**DOC-ID:** DOC-BILL-001\n",
            "docs/b2.md": "# B2\n\n**DOC-ID:** DOC-BILL-002\n",
        },
    )
    p = read_v2(tmp_path)
    [t] = p.topics
    assert (t.name, t.declared, t.version, t.sessions) == ("billing", "billing", 3, 4)
    assert t.learning_path == ".mlda/topics/billing/learning.yaml"
    assert t.domain is not None and t.domain.description == "Billing"
    kinds = [(e.kind, e.index, e.label) for e in t.entries]
    assert kinds == [
        ("grouping", 0, "invoices"),
        ("activation", 0, "DOC-BILL-001 + DOC-API-001"),
        ("verification_note", 0, "Missing error handling requirement"),
        ("related_domain", 0, "authentication"),
        ("anti_pattern", 0, "Loading all docs upfront"),
    ]
    g, a, v, rd, ap = t.entries
    assert (g.origin, g.confidence, g.docs, g.line) == (
        "agent",
        "high",
        ("DOC-BILL-001", "DOC-BILL-002"),
        6,
    )
    assert g.fields["notes"] == "Always needed together"
    assert g.key == ".mlda/topics/billing/learning.yaml#groupings[0]"
    assert a.date == "2026-01-19" and a.fields["last_session"] == "2026-01-19"  # bare date -> ISO
    assert v.docs == ("DOC-BILL-002",) and v.date == "2026-01-18"
    assert rd.docs == ("DOC-AUTH-001",)
    assert ap.date == "2026-01-15"
    dangling = [x for x in p.problems if "dangling" in x.message]
    assert sorted(x.message.split(": ")[1].split()[0] for x in dangling) == [
        "DOC-API-001",
        "DOC-AUTH-001",
    ]
    assert all(x.line is not None for x in dangling)


def test_topics_templates_nulls_and_uppercase(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/topics/_example/learning.yaml": LEARNING_FULL,
            ".mlda/topics/ux/learning.yaml": """
                topic: ux
                version: 1
                last_updated: "2026-01-20"
                groupings: []
                  # - name: example
                activations:
                  # only comments under the key -> None
                verification_notes: []
                related_domains: []
                anti_patterns: []
            """,
            ".mlda/topics/UI/learning.yaml": """
                topic: UI
                version: 1
                last_updated: "2026-01-20"
                sessions_contributed: 2
                groupings:
                  - name: screens
                    docs: [DOC-UI-001]
                  - "loose note"
                  -
                surprise: true
            """,
        },
    )
    p = read_v2(tmp_path)
    assert [t.name for t in p.topics] == ["UI", "ux"]  # _example skipped
    ui, ux = p.topics
    assert ux.entries == ()
    assert ui.sessions == 2 and ui.extra == {"surprise": True}
    assert [(e.label, e.fields) for e in ui.entries] == [
        ("screens", {"name": "screens", "docs": ["DOC-UI-001"]}),
        ("loose note", {"value": "loose note"}),
    ]
    text = "\n".join(messages(p, ".mlda/topics/UI/learning.yaml"))
    assert "groupings[0] lacks origin" in text
    assert "groupings[1] is not a mapping" in text
    assert "groupings[2] is empty" in text
    assert "'surprise' is not in the topic-learning schema" in text
    assert any(a.kind == "topic-template" for a in p.artifacts)


def test_learning_file_that_does_not_parse(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/topics/broken/learning.yaml": "topic: broken\ngroupings:\n  - name: [unclosed\n",
            ".mlda/topics/billing/learning.yaml": LEARNING_FULL,
        },
    )
    p = read_v2(tmp_path)
    bad = [x for x in p.problems if x.path == ".mlda/topics/broken/learning.yaml"]
    assert len(bad) == 1 and bad[0].level == "error" and bad[0].line is not None
    broken = next(t for t in p.topics if t.name == "broken")
    assert broken.entries == () and broken.learning_path is not None
    assert len(next(t for t in p.topics if t.name == "billing").entries) == 5


def test_ux_domain_breaking_the_schema(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/topics/ux/domain.yaml": """
                domain: ux
                version: 1
                last_updated: "2026-01-20"
                sub_domains:
                  - name: accessibility
                    code: A11Y
                    docs: []
                    doc_types: [audit]
                    entry_point: null
                entry_points:
                  default: null
                  by_task:
                    wireframing:
                      - DOC-DS-xxx  # Design system
                      - DOC-UI-007
                cross_domain_touchpoints:
                  - domain: REQ
                    relationship: "Requirements inform UX decisions"
                    typical_overlap: []
                    traversal_allowed: true
            """,
        },
    )
    p = read_v2(tmp_path)
    [t] = p.topics
    assert t.learning_path is None and t.entries == ()
    d = t.domain
    assert d is not None and d.sub_domains[0]["code"] == "A11Y"
    assert d.raw["cross_domain_touchpoints"] == [
        {
            "domain": "REQ",
            "relationship": "Requirements inform UX decisions",
            "typical_overlap": [],
            "traversal_allowed": True,
        }
    ]
    text = "\n".join(messages(p, ".mlda/topics/ux/domain.yaml"))
    assert "placeholder ID DOC-DS-xxx" in text
    assert "DOC-UI-007 is not defined" in text
    assert "A11Y" in text


def test_cross_domain_patterns(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/topics/_cross-domain/patterns.yaml": """
                version: 1
                last_updated: "2026-01-20"
                patterns:
                  - name: auth-rbac-bridge
                    domains: [authentication, rbac]
                    docs: [DOC-AUTH-008, DOC-RBAC-001]
                    description: "Auth provides identity claims"
                    frequency: 5
                    discovered: "2026-01-20"
                    origin: agent
                domain_interactions:
                  - domains: [authentication, rbac]
                    frequency: high
                    notes: "Auth always provides identity to RBAC"
                anti_patterns:
                  # nothing yet
            """,
        },
    )
    p = read_v2(tmp_path)
    cd = p.cross_domain
    assert cd is not None and cd.version == 1
    assert [(e.kind, e.label, e.topic) for e in cd.entries] == [
        ("pattern", "auth-rbac-bridge", "_cross-domain"),
        ("domain_interaction", "authentication <-> rbac", "_cross-domain"),
    ]
    assert cd.entries[0].date == "2026-01-20" and cd.entries[0].origin == "agent"
    assert p.learning_entries == cd.entries


def test_empty_cross_domain_with_null_lists(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/topics/_cross-domain/patterns.yaml": (
                "version: 1\npatterns:\n  # - name: x\ndomain_interactions:\nanti_patterns: []\n"
            )
        },
    )
    p = read_v2(tmp_path)
    assert p.cross_domain is not None and p.cross_domain.entries == ()
    assert p.problems == ()


# ---------------------------------------------------------------- handoff, derived, config


HANDOFF = """
    # Project Handoff Document

    **Project:** Ways of Development
    **Current Phase:** Phase 1 - Analyst (Requirements)
    **Last Handoff By:** [Agent Name]

    ---

    ### Phase 1: Analyst - Requirements
    **Status:** {status}
    **Agent:** {agent}
    **Dates:** [Start] - [End]

    | DOC-ID | Title |
    |--------|-------|
    | DOC-UI-xxx | |

    ### Phase 2: Architect - Design
    **Status:** Not Started
    **Agent:** [Agent]

    ## Document Statistics
    **Total Documents:** 5

    *Handoff Document Template v1.1 | 5-Phase Workflow*
"""


def test_handoff_template_and_filled(tmp_path: Path) -> None:
    make(tmp_path, {"docs/handoff.md": HANDOFF.format(status="[status]", agent="[Agent]")})
    p = read_v2(tmp_path)
    h = p.handoff
    assert h is not None and not h.filled and h.template_version == "1.1"
    assert h.fields["Project"] == "Ways of Development"
    assert [ph.title for ph in h.phases] == [
        "Phase 1: Analyst - Requirements",
        "Phase 2: Architect - Design",
    ]
    assert h.phases[0].line == 9 and h.placeholders > 3
    d = doc(p, "docs/handoff.md")
    assert (d.role, d.doc_id, d.sidecar) == ("handoff", None, None)

    make(
        tmp_path, {"docs/handoff.md": HANDOFF.format(status="in-progress", agent="Maya (Analyst)")}
    )
    h = read_v2(tmp_path).handoff
    assert h is not None and h.filled and h.phases[0].filled and not h.phases[1].filled
    assert h.phases[0].fields["Agent"] == "Maya (Analyst)"


def test_derived_files_are_cross_checked_not_trusted(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/learning-index.yaml": b"\xef\xbb\xbf"
            + textwrap.dedent(
                """\
                version: 1
                generated_at: "2026-01-23T15:27:27Z"
                generated_from: 2
                topics:
                  billing:
                    summary: "Topic learnings"
                    size: "2,3 MB"
                    learning_path: .mlda/topics/billing/learning.yaml
                    has_groupings: false
                  evil:
                    learning_path: ../../etc/passwd
                empty_topics:
                  - ux
                """
            ).encode(),
            ".mlda/activation-context.yaml": b"\xef\xbb\xbf"
            + b"generated: 2026-01-24T06:36:25Z\nmlda:\n  status: initialized\n  doc_count: 0\n"
            + b"  domains: []\nhandoff:\n  current_phase: analyst\n",
            ".mlda/project-brief.json": b'{\r\n    "statistics":  {\r\n      "TotalDocs":  1\r\n  },'
            b'\r\n    "domains":  {"API": [{"id": "DOC-API-001", "title": "Old", "path": "docs/x.md"}]}}',
            ".mlda/project-brief.md": "# Project Brief\n",
            ".mlda/graph.mmd": "graph TD\n",
            ".mlda/topics/billing/learning.yaml": LEARNING_FULL,
            ".mlda/docs/api/x.md": "# X\n",
            ".mlda/docs/api/x.meta.yaml": "id: DOC-API-001\ntitle: X\nstatus: active\ndomain: API\n",
            ".mlda/docs/api/y.md": "# Y\n",
            ".mlda/docs/api/y.meta.yaml": "id: DOC-API-002\ntitle: Y\nstatus: active\ndomain: API\n",
        },
    )
    p = read_v2(tmp_path)
    assert {d.kind for d in p.derived} == {"learning-index", "activation-context", "project-brief"}
    got = {(d.source.rsplit("/", 1)[-1], d.subject, d.field) for d in p.disagreements}
    assert got == {
        ("learning-index.yaml", "topics", "topics"),  # lists `evil`, which has no topic
        ("learning-index.yaml", "topics", "empty_topics"),
        ("learning-index.yaml", "topics", "generated_from"),
        ("learning-index.yaml", "billing", "has_groupings"),
        ("activation-context.yaml", "mlda", "doc_count"),
        ("activation-context.yaml", "mlda", "domains"),
        ("project-brief.json", "statistics", "TotalDocs"),
        ("project-brief.json", "DOC-API-001", "title"),
    }
    assert any("leaves the repository" in m for m in messages(p, ".mlda/learning-index.yaml"))
    kinds = {a.path: (a.kind, a.derived) for a in p.artifacts}
    assert kinds[".mlda/graph.mmd"] == ("graph", True)
    assert kinds[".mlda/project-brief.md"] == ("project-brief", True)
    assert kinds[".mlda/topics/billing/learning.yaml"] == ("learning", False)
    assert ".mlda/project-brief.md" not in {d.path for d in p.docs}


def test_config_budgets_and_tooling(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".mlda/config.yaml": """
                version: "2.0"
                context_limits:
                  soft_threshold_tokens: 35000
                  hardstop_tokens: 50000
            """,
            ".mlda/templates/topic-meta.meta.yaml": "id: DOC-{DOMAIN}-{NNN}\n",
            ".mlda/templates/topic-doc.md": "# {Title}\n",
            ".mlda/scripts/mlda-registry.ps1": "Write-Host hi\n",
            ".mlda/README.md": "# MLDA\n",
            ".mlda/topics/README.md": "# Topics\n",
            ".beads/issues.jsonl": "{}\n",
        },
    )
    p = read_v2(tmp_path)
    assert p.config is not None and (p.config.soft_tokens, p.config.hard_tokens) == (35000, 50000)
    assert [(d.path, d.role) for d in p.docs] == [
        (".mlda/README.md", "prose"),
        (".mlda/topics/README.md", "prose"),
    ]
    kinds = {a.path: a.kind for a in p.artifacts}
    assert kinds[".mlda/templates/topic-meta.meta.yaml"] == "tooling"
    assert kinds[".mlda/scripts/mlda-registry.ps1"] == "tooling"
    assert kinds[".beads/issues.jsonl"] == "beads"
    assert p.problems == ()


def test_powershell_artifact_inside_a_sidecar_value(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "docs/a.md": "# A\n",
            "docs/a.meta.yaml": (
                'id: DOC-API-001\ntitle: A\nstatus: active\nbeads: "System.Object[]"\n'
                'updated: "@{date=2026-01-20; by=User}"\n'
            ),
        },
    )
    p = read_v2(tmp_path)
    sc = doc(p, "docs/a.md").sidecar
    assert sc is not None and sc.extra["beads"] is None and sc.updated is None
    assert sum("PowerShell artifact" in m for m in messages(p, "docs/a.meta.yaml")) == 2


def test_symlink_out_of_the_repo_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n")
    repo = make(tmp_path / "repo", {"docs/ok.md": "# OK\n"})
    try:
        os.symlink(secret, repo / "docs" / "leak.md")
        os.symlink(tmp_path, repo / "docs" / "up")
    except OSError:
        pytest.skip("no symlinks here")
    p = read_v2(repo)
    assert [d.path for d in p.docs] == ["docs/ok.md"]
    assert [x.level for x in p.problems if x.path == "docs/leak.md"] == ["error"]
    assert any(x.path == "docs/up" for x in p.problems)


def test_reader_is_pure(tmp_path: Path) -> None:
    root = store_tree(tmp_path)
    before = sorted((q.relative_to(root), q.read_bytes()) for q in root.rglob("*") if q.is_file())
    read_v2(root)
    after = sorted((q.relative_to(root), q.read_bytes()) for q in root.rglob("*") if q.is_file())
    assert before == after


# ---------------------------------------------------------------- the real trees


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for q in sorted(root.rglob("*")):
        if q.is_file():
            h.update(str(q.relative_to(root)).encode() + q.read_bytes())
    return h.hexdigest()


def summary(p: V2Project) -> dict[str, object]:
    return {
        "docs": dict(Counter(d.role for d in p.docs)),
        "ids": dict(Counter(d.id_source for d in p.docs)),
        "shapes": dict(Counter(d.sidecar_shape for d in p.docs if d.sidecar)),
        "orphans": len(p.orphan_sidecars),
        "topics": [(t.name, len(t.entries)) for t in p.topics],
        "entries": dict(Counter(e.kind for e in p.learning_entries)),
        "levels": dict(Counter(x.level for x in p.problems)),
        "disagreements": sorted((d.subject, d.field) for d in p.disagreements),
    }


@pytest.mark.skipif(not (REAL / "neocortex-2264561").is_dir(), reason="real fixtures absent")
def test_real_tree_2264561() -> None:
    root = REAL / "neocortex-2264561"
    digest = tree_digest(root)
    p = read_v2(root)
    assert tree_digest(root) == digest
    assert summary(p) == {
        "docs": {"prose": 3, "store": 5, "project": 9},
        "ids": {"none": 6, "sidecar": 5, "text": 6},
        "shapes": {"v1": 5},
        "orphans": 0,
        "topics": [],
        "entries": {},
        "levels": {"note": 2},
        "disagreements": [("statistics", "TotalDocs")],  # the stale project brief
    }
    usage = doc(p, ".mlda/docs/core/mlda-usage-patterns.md")
    assert usage.sidecar is not None and usage.sidecar.created == usage.sidecar.updated
    assert usage.sidecar.created is not None and usage.sidecar.created.date == "2026-01-14"
    assert p.registry is not None and p.registry.shape == "regenerated"
    assert all(e.resolved and e.resolved.startswith(".mlda/docs/") for e in p.registry.entries)
    assert any("GenericMeasureInfo" in m for m in messages(p, ".mlda/registry.yaml"))


@pytest.mark.skipif(not (REAL / "neocortex-622556f").is_dir(), reason="real fixtures absent")
def test_real_tree_622556f() -> None:
    root = REAL / "neocortex-622556f"
    p = read_v2(root)
    assert summary(p) == {
        "docs": {"prose": 4, "store": 5, "project": 23, "handoff": 1},
        "ids": {"none": 19, "sidecar": 8, "text": 6},
        "shapes": {"v2": 6, "v1.5": 2},
        "orphans": 0,
        "topics": [("authentication", 1)],
        "entries": {"grouping": 1},
        "levels": {"note": 2, "warning": 2},  # + DOC-AUTH-001/002 dangling
        "disagreements": [("DOC-API-001", "tags"), ("statistics", "TotalDocs")],
    }
    [g] = p.learning_entries
    assert (g.label, g.docs, g.origin, g.confidence) == (
        "token-management",
        ("DOC-AUTH-001", "DOC-AUTH-002"),
        "human",
        "medium",
    )
    meth = p.doc_by_id("DOC-METH-001")
    assert meth is not None and meth.path == "docs/decisions/DEC-002-neocortex-methodology.md"
    assert {(r.id, r.type) for r in meth.related} >= {("DOC-CORE-001", "supersedes")}
    assert p.cross_domain is not None and p.cross_domain.entries == ()
    assert p.handoff is not None and len(p.handoff.phases) == 3
    # the same doc in two generations (v2-format §3): v1 in 2264561, v2 here
    nav = p.doc_by_id("DOC-CORE-002")
    assert nav is not None and nav.sidecar is not None and nav.sidecar_shape == "v2"
    assert nav.sidecar.updated == type(nav.sidecar.updated)("2026-01-20", "Claude (Developer)")


def test_import_is_light() -> None:
    code = "import sys, ncx.v2.reader; sys.exit('numpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_yaml_anchors_and_cycles(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi")
    )
    make(
        tmp_path,
        {
            "docs/a.md": "# A\n",
            "docs/a.meta.yaml": "id: DOC-API-001\ntitle: A\nstatus: active\n" + bomb,
            "docs/b.md": "# B\n",
            "docs/b.meta.yaml": "id: DOC-API-002\ntitle: B\nstatus: active\nloop: &l [*l]\n",
        },
    )
    p = read_v2(tmp_path)
    assert doc(p, "docs/a.md").doc_id == "DOC-API-001"
    assert doc(p, "docs/b.md").doc_id == "DOC-API-002"
