"""ncx migrate: a synthetic v2 tree with every quirk of docs/v2-format.md, in real git
repos, through the installed CLI; plus the two real trees in ../shared/fixtures/mlda-v2
(skipped where that folder is absent)."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import SHARED, commit_all, git, ncx, write

from ncx.config import load_config
from ncx.layout import doc_chunk_file
from ncx.store import split_chunk_file
from ncx.tree.chunkfile import header_doc_id
from ncx.v2.migrate import migrate_changed

REAL = SHARED / "fixtures" / "mlda-v2"

LEARNING = """
    # Topic Learning File
    topic: auth
    version: 3
    last_updated: "2026-01-20"
    session_count: 4
    groupings:
      - name: token-management
        docs: [DOC-CORE-001, DOC-AUTH-009]
        origin: human
        confidence: medium
        notes: "Refresh and rotation are always changed together"
    activations:
      - docs: [DOC-CORE-001, DOC-CORE-002]
        frequency: 7
        typical_tasks: [implementing, debugging]
        last_session: 2026-01-19
    verification_notes:
      - session: "2026-01-18"
        caught: "Token expiry was assumed to be 24h"
        lesson: "Expiry comes from the identity provider config, never hard-code it"
        doc: DOC-CORE-002
        section: "Token lifetime"
    related_domains:
      - domain: rbac
        relationship: "Auth provides the identity claims RBAC checks"
        typical_overlap: [session, claims]
    anti_patterns:
      - pattern: "Storing refresh tokens in localStorage"
        reason: "Readable by any injected script"
        session: "2026-01-17"
"""

SIDECAR_V2 = """
    # MLDA Sidecar v2 - Neocortex Format
    id: DOC-CORE-002
    title: "MLDA Navigation Protocol"
    status: active
    created:
      date: "2026-01-14"
      by: "Claude (Architect)"
    tags:
      - navigation
    domain: CORE
    summary: |
      Defines how agents walk the knowledge graph.
    related:
      - id: DOC-CORE-001
        type: depends-on
        why: "The paradigm this protocol implements"
    predictions:
      when_architecting:
        required: [DOC-CORE-001]
        likely: []
    has_critical_markers: false
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

SIDECAR_SKILL = """
    id: DOC-UX-001
    title: "Login wireframe"
    status: draft
    created: "{date}"
    type: wireframe
    domain: UX
    tags:
      - {domain}
    predictions:
      when_implementing: [DOC-CORE-002]
    reference_frames:
      phase: design
"""

REGISTRY = """
    last_updated: 2026-01-20
    graph:
      total_documents: 9
      orphan_documents: Microsoft.PowerShell.Commands.GenericMeasureInfo.Count
    domains:
      - CORE    # Auto-discovered
    documents:
      - id: DOC-CORE-001
        title: "MLDA Neocortex Paradigm"
        path: docs/core/paradigm.md
        status: active
        tags: [mlda]
      - id: DOC-CORE-002
        title: "MLDA Navigation Protocol"
        path: docs/core/navigation.md
        status: review
        tags: [navigation]
      - id: DOC-EVIL-001
        title: "escape"
        path: ../../../etc/passwd
"""

UX_DOMAIN = """
    domain: ux
    version: 1
    last_updated: "2026-01-21"
    source: human
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
    cross_domain_touchpoints:
      - domain: REQ
        relationship: "Requirements inform UX decisions"
        traversal_allowed: true
"""

PATTERNS = """
    version: 1
    last_updated: "2026-01-20"
    patterns:
      - name: auth-rbac-bridge
        domains: [auth, rbac]
        docs: [DOC-CORE-001]
        description: "Authentication provides identity claims that RBAC uses"
        typical_tasks: [implementing]
        frequency: 5
        discovered: "2026-01-20"
        origin: agent
    domain_interactions:
      - domains: [auth, rbac]
        frequency: high
        typical_direction: "auth -> rbac"
        notes: "Auth always provides identity to RBAC, not reverse"
    anti_patterns:
      # Example:
      # - pattern: "x"
"""

HANDOFF = """
    # Project Handoff Document

    **Project:** Tasks App
    **Last Updated:** 2026-01-22
    **Current Phase:** Architecture Refinement

    ---

    ## Phase History

    ### Phase 1: Analyst Discovery
    **Status:** completed
    **Agent:** Maya (Analyst)
    **Dates:** 2026-01-16 - 2026-01-20

    #### Work Summary
    Requirements for the quartz ledger export were gathered.

    ### Phase 2: Architecture Refinement
    **Status:** Not Started
    **Agent:** [Agent Name]
"""

BODY = " ".join(
    ["Agents follow the relationships of a document before reading its neighbours."] * 4
)


def v2_tree(root: Path) -> None:
    files: dict[str, str | bytes] = {
        ".mlda/registry.yaml": REGISTRY,
        ".mlda/docs/core/paradigm.md": f"# MLDA Neocortex Paradigm\n\n**DOC-CORE-001** | Foundation\n\n{BODY}\n",
        ".mlda/docs/core/paradigm.meta.yaml": SIDECAR_V1,
        # CRLF and a BOM, as Windows PowerShell writes them
        ".mlda/docs/core/navigation.md": b"\xef\xbb\xbf# MLDA Navigation Protocol\r\n\r\n"
        + BODY.encode()
        + b"\r\n\r\n## Termination\r\n\r\nStop when the quiver budget is spent.\r\n",
        ".mlda/docs/core/navigation.meta.yaml": b"\xef\xbb\xbf"
        + textwrap.dedent(SIDECAR_V2).lstrip().replace("\n", "\r\n").encode(),
        # v1.5 sidecar with a cp1252 title (Windows ANSI)
        "docs/decisions/DEC-001.md": "# Critical Thinking Protocol\n\nAlways verify claims twice.\n",
        "docs/decisions/DEC-001.meta.yaml": (
            b'id: DOC-PROC-001\ntitle: "Critical \x93Thinking\x94 Protocol"\nstatus: active\n'
            b'domain: PROC\nversion: "1.0"\nbeads: "Ways of Development-63"\n'
            b'source: {research: ["r.md"], sections: ["all"]}\n'
        ),
        "docs/ux/login.md": "# Login wireframe\n\nThe login form has two fields.\n",
        "docs/ux/login.meta.yaml": SIDECAR_SKILL,
        # DOC-ID only in the header; the body mentions another doc's ID
        "docs/decisions/DEC-003.md": "# DEC-003 Hooks\n\n**DOC-PROC-003** | Decision\n\n"
        "We build on DOC-CORE-001 for the zephyr hooks.\n",
        "docs/plain.md": "# Plain notes\n\nNo identity here, only the walrus runbook.\n",
        "docs/legacy.md": b"# Legacy\n\nCaf\xe9 ordering uses the \x93pelican\x94 queue.\n",
        "docs/handoff.md": HANDOFF,
        "docs/gone.meta.yaml": 'id: DOC-OLD-001\ntitle: "Retired billing flow"\nstatus: deprecated\n'
        'summary: "Invoices were sent by the nightly heron job."\n',
        ".mlda/topics/auth/learning.yaml": LEARNING,
        ".mlda/topics/auth/domain.yaml": "domain: auth\nversion: 1\nlast_updated: '2026-01-20'\n"
        "sub_domains: []\nentry_points: {default: null, by_task: {}}\nisolated_from: []\n",
        ".mlda/topics/UI/learning.yaml": "topic: ui\nversion: 1\nlast_updated: '2026-01-20'\n"
        "groupings:\n  # - name: x\nactivations: []\n",
        ".mlda/topics/ux/domain.yaml": UX_DOMAIN,
        ".mlda/topics/_cross-domain/patterns.yaml": PATTERNS,
        ".mlda/topics/_example/learning.yaml": "topic: example\ngroupings:\n  - name: ex\n    docs: [DOC-EXAMPLE-001]\n",
        ".mlda/learning-index.yaml": b"\xef\xbb\xbfversion: 1\ngenerated_at: '2026-01-23T15:27:27Z'\n"
        b"generated_from: 1\ntopics:\n  auth:\n    learning_path: .mlda/topics/auth/learning.yaml\n"
        b"    has_groupings: true\n    has_activations: false\nempty_topics: [UI]\n",
        ".mlda/activation-context.yaml": b"\xef\xbb\xbfgenerated: '2026-01-24T06:36:25Z'\n"
        b"mlda:\n  status: initialized\n  doc_count: 0\n",
        ".mlda/project-brief.json": '{\n    "generated":  "2026-01-12",\n    "statistics":  {"TotalDocs":  1}\n}\n',
        ".mlda/project-brief.md": "# Project brief\n\nStale.\n",
        ".mlda/config.yaml": "version: '2.0'\ncontext_limits:\n  soft_threshold_tokens: 35000\n"
        "  hardstop_tokens: 50000\n",
        ".mlda/templates/topic-doc.md": "# {Title}\n\n**DOC-ID:** DOC-{DOMAIN}-{NNN}\n",
        ".mlda/scripts/mlda-create.ps1": "Write-Host 'x'\n",
        ".mlda/README.md": "# MLDA\n\nHow this folder works.\n",
    }
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            p.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
        else:
            p.write_bytes(content)


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the working tree (not .git), and every folder (as b'<dir>')."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) == root and d == ".git")]
        rel = Path(dirpath).relative_to(root).as_posix()
        out[rel + "/"] = b"<dir>"
        for n in names:
            p = Path(dirpath) / n
            out[(Path(rel) / n).as_posix()] = (
                b"<link>" + os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
            )
    return out


def chunks_of(root: Path, doc: str) -> list[dict[str, Any]]:
    """The frontmatter of each chunk of `doc`, in order: the blocks of its chunk file."""
    path = root / doc_chunk_file(doc)
    if not path.is_file():
        return []
    blocks = split_chunk_file(path.read_bytes(), path=path)
    return [yaml.safe_load(b.decode("utf-8").split("---\n")[1]) for b in blocks]


def memories(root: Path) -> dict[str, tuple[dict[str, Any], str]]:
    out = {}
    for md in sorted((root / ".neocortex/memories").glob("*.md")):
        text = md.read_text(encoding="utf-8")
        _, head, body = text.split("---\n", 2)
        out[md.stem] = (yaml.safe_load(head), body)
    return out


def by_entry(root: Path) -> dict[str, tuple[dict[str, Any], str]]:
    return {m[0]["provenance"]["key"]: m for m in memories(root).values()}


def run_json(*args: str, ok: bool = True) -> dict[str, Any]:
    proc = ncx("migrate", "--json", *args, ok=ok)
    return json.loads(proc.stdout)


@pytest.fixture
def v2(repo: Path) -> Path:
    v2_tree(repo)
    commit_all(repo, "v2")
    return repo


# ---------------------------------------------------------------- pure helpers


@pytest.mark.parametrize(
    ("body", "doc_id"),
    [
        ("# T\n\n**DOC-ID:** DOC-API-001\n\nText.\n", "DOC-API-001"),
        ("# T\n\n**DOC-CORE-002** | Subtitle\n", "DOC-CORE-002"),
        ("# T\n\n**DOC-ID:** `DOC-A11Y-004`\n", "DOC-A11Y-004"),
        ("# T\n\nBuilt on DOC-CORE-001, see there.\n", None),  # a mention, not an identity
        ("# T\n\n## Part\n\n**DOC-ID:** DOC-API-001\n", None),  # below the header
        ("# T\n\n**DOC-ID:** DOC-{DOMAIN}-{NNN}\n", None),  # a template placeholder
    ],
)
def test_header_doc_id(body: str, doc_id: str | None) -> None:
    assert header_doc_id(body) == doc_id


# ---------------------------------------------------------------- the synthetic tree


def test_dry_run_writes_nothing_and_accounts_for_every_artifact(v2: Path) -> None:
    before = tree(v2)
    index = (v2 / ".git/index").read_bytes()
    report = run_json("--dry-run")
    assert tree(v2) == before and (v2 / ".git/index").read_bytes() == index
    assert not (v2 / ".git/ncx-migrate").exists()
    assert report["dry_run"] is True
    fates = {(i["path"], i.get("entry")): i for i in report["items"]}
    files = {p for p, _ in fates}
    # every file under .mlda/, every sidecar and every doc is accounted for
    expected = {
        p.relative_to(v2).as_posix() for p in v2.rglob("*") if p.is_file() and ".git" not in p.parts
    }
    assert expected <= files, expected - files
    fate = {k: v["fate"] for k, v in fates.items()}
    assert fate[(".mlda/docs/core/navigation.md", None)] == "chunked"
    assert "DOC-CORE-002" in fates[(".mlda/docs/core/navigation.md", None)]["detail"]
    assert "DOC-PROC-003 (from the text)" in fates[("docs/decisions/DEC-003.md", None)]["detail"]
    assert fate[(".mlda/docs/core/navigation.meta.yaml", None)] == "metadata"
    assert fate[("docs/gone.meta.yaml", None)] == "memory"  # orphan sidecar
    assert fate[(".mlda/registry.yaml", None)] == "derived"
    assert fate[(".mlda/learning-index.yaml", None)] == "derived"
    assert fate[(".mlda/activation-context.yaml", None)] == "derived"
    assert fate[(".mlda/templates/topic-doc.md", None)] == "skipped"
    assert fate[(".mlda/topics/_example/learning.yaml", None)] == "skipped"
    assert fate[(".mlda/topics/UI/learning.yaml", None)] == "skipped"  # lists only comments
    assert fate[(".mlda/topics/auth/domain.yaml", None)] == "metadata"  # a stub
    assert "memory" in fates[(".mlda/topics/ux/domain.yaml", None)]["detail"]
    assert fate[("docs/handoff.md", None)] == "chunked"
    entries = [k for k, v in fates.items() if k[1] is not None and v["kind"] != "handoff-state"]
    assert len(entries) == 5 + 2  # auth: one per list; cross-domain: pattern + interaction
    assert report["counts"]["in"]["learning_entries"] == 7
    # derived data is cross-checked, never trusted
    subjects = {(d["source"], d["field"]) for d in report["disagreements"]}
    assert (".mlda/activation-context.yaml", "doc_count") in subjects
    assert (".mlda/registry.yaml", "status") in subjects  # registry says review, sidecar active
    # the registry path that leaves the repository is refused and reported
    assert any("leaves the repository" in p["message"] for p in report["problems"])
    assert any(p["path"] == ".mlda/registry.yaml" and p["line"] for p in report["problems"])


def test_migrate_carries_docs_metadata_and_learnings(v2: Path) -> None:
    report = run_json()
    assert report["ok"], report["failed"]
    assert report["counts"]["out"]["failed"] == 0
    # sidecar metadata in every chunk of its doc (v2 sidecar with BOM + CRLF)
    nav = chunks_of(v2, ".mlda/docs/core/navigation.md")
    assert nav and all(c["source_doc"] == "DOC-CORE-002" for c in nav)
    first = nav[0]
    assert first["title"] == "MLDA Navigation Protocol" and first["domain"] == "CORE"
    assert first["status"] == "active" and first["tags"] == ["navigation"]
    assert first["summary"] == "Defines how agents walk the knowledge graph."
    assert first["related"] == [
        {"id": "DOC-CORE-001", "type": "depends-on", "why": "The paradigm this protocol implements"}
    ]
    assert first["sidecar"] == ".mlda/docs/core/navigation.meta.yaml"
    # v1 sidecar with bare dates; cp1252 title; skill variant
    assert chunks_of(v2, ".mlda/docs/core/paradigm.md")[0]["related"][0]["type"] == "extends"
    dec = chunks_of(v2, "docs/decisions/DEC-001.md")[0]
    assert (
        dec["title"] == "Critical \u201cThinking\u201d Protocol"
        and dec["source_doc"] == "DOC-PROC-001"
    )
    assert chunks_of(v2, "docs/ux/login.md")[0]["source_doc"] == "DOC-UX-001"
    # body-only DOC-ID, and no identity stolen from a mention
    assert chunks_of(v2, "docs/decisions/DEC-003.md")[0]["source_doc"] == "DOC-PROC-003"
    assert chunks_of(v2, "docs/plain.md")[0]["source_doc"] is None
    # cp1252 doc re-encoded so it can be chunked; tooling and templates never chunked
    assert "Café" in (v2 / "docs/legacy.md").read_text(encoding="utf-8")
    assert chunks_of(v2, "docs/legacy.md")
    assert not (v2 / ".neocortex/chunks/.mlda/templates").exists()
    assert not (v2 / doc_chunk_file(".mlda/project-brief.md")).exists()
    assert chunks_of(v2, "docs/handoff.md")

    mems = by_entry(v2)
    src = ".mlda/topics/auth/learning.yaml"
    grouping = mems[f"{src}#groupings/token-management"]
    assert grouping[0]["type"] == "factual" and grouping[0]["domain"] == "auth"
    assert grouping[0]["confidence"] == "medium" and grouping[0]["status"] == "active"
    assert grouping[0]["related_docs"] == ["DOC-CORE-001", "DOC-AUTH-009"]
    assert grouping[0]["provenance"]["file"] == src
    assert grouping[0]["provenance"]["topic"] == "auth"
    assert grouping[0]["provenance"]["entry"] == "groupings[0]"
    assert "DOC-AUTH-009" in grouping[1] and "No document in this project defines" in grouping[1]
    types = {k.split("#", 1)[1].split("/")[0]: m[0]["type"] for k, m in mems.items() if "#" in k}
    assert types["activations"] == "procedural"
    assert types["verification_notes"] == "experiential"
    assert types["related_domains"] == "factual"
    assert types["anti_patterns"] == "experiential"
    assert types["patterns"] == "procedural"
    assert types["domain_interactions"] == "factual"
    # nothing an entry said is lost: every scalar of every entry is in its memory
    raw = yaml.safe_load(textwrap.dedent(LEARNING))
    bodies = "\n".join(b for _, b in mems.values())
    for key in (
        "groupings",
        "activations",
        "verification_notes",
        "related_domains",
        "anti_patterns",
    ):
        for entry in raw[key]:
            for v in entry.values():
                for s in v if isinstance(v, list) else [v]:
                    assert str(s) in bodies, (key, s)
    cross = [m for k, m in mems.items() if k.startswith(".mlda/topics/_cross-domain/")]
    assert {m[0]["domain"] for m in cross} == {"cross-domain"} and len(cross) == 2
    orphan = mems["docs/gone.meta.yaml#sidecar"]
    assert orphan[0]["status"] == "proposed" and "heron" in orphan[1]
    ux = mems[".mlda/topics/ux/domain.yaml#domain"]
    assert "accessibility" in ux[1] and "Requirements inform UX decisions" in ux[1]
    handoff = mems["docs/handoff.md#state"]
    assert "Architecture Refinement" in handoff[1] and "Maya" in handoff[1]

    # the migrated tree answers questions about its content
    hit = ncx("retrieve", "expiry identity provider hard-code", "--json", "-k", "3")
    assert any(json.loads(line)["kind"] == "memory" for line in hit.stdout.splitlines())
    hit = ncx("retrieve", "quiver budget termination", "--json", "-k", "3")
    top = json.loads(hit.stdout.splitlines()[0])
    assert top["source_path"] == ".mlda/docs/core/navigation.md"
    status = ncx("status")
    assert ".mlda/" in status.stdout  # coexistence: status says the v2 tree is still there


def test_rerun_is_idempotent(v2: Path) -> None:
    run_json()
    before = tree(v2)
    second = run_json()
    assert second["written"] == [] and second["sync"]["written"] == 0
    assert second["counts"]["out"]["memories"] == {
        "create": 0,
        "recreate": 0,
        "update": 0,
        "keep": 10,
        "keep-deleted": 0,
    }
    assert tree(v2) == before


def test_later_v2_edits_are_carried_over(v2: Path) -> None:
    run_json()
    commit_all(v2, "migrated")
    key = ".mlda/topics/auth/learning.yaml#verification_notes/Token expiry was assumed to be 24h"
    old = by_entry(v2)[key]
    human = ".mlda/topics/auth/learning.yaml#anti_patterns/Storing refresh tokens in localStorage"
    human_file = v2 / ".neocortex/memories" / f"{by_entry(v2)[human][0]['id']}.md"
    human_file.write_text(human_file.read_text().replace("Readable by", "Readable (v3 note) by"))
    learning = v2 / ".mlda/topics/auth/learning.yaml"
    learning.write_text(learning.read_text().replace("never hard-code it", "read it at start-up"))
    sidecar = v2 / ".mlda/docs/core/paradigm.meta.yaml"
    sidecar.write_text(sidecar.read_text() + 'summary: "The brain-like graph of docs."\n')
    commit_all(v2, "v2 edits")
    count = len(memories(v2))
    report = run_json()
    assert report["counts"]["out"]["memories"]["update"] == 1
    new = by_entry(v2)[key]
    assert new[0]["id"] == old[0]["id"] and "read it at start-up" in new[1]
    assert "never hard-code" not in new[1] and len(memories(v2)) == count
    assert (v2 / ".neocortex/memories" / f"{new[0]['id']}.npy").exists()
    assert "(v3 note)" in human_file.read_text()  # v2 unchanged there: the v3 edit stays
    assert (
        chunks_of(v2, ".mlda/docs/core/paradigm.md")[0]["summary"]
        == "The brain-like graph of docs."
    )
    # a plain sync (the pre-commit hook) also carries a sidecar edit into the chunks
    sidecar.write_text(sidecar.read_text().replace("brain-like", "cortex-like"))
    commit_all(v2, "sidecar edit")
    ncx("sync")
    assert (
        chunks_of(v2, ".mlda/docs/core/paradigm.md")[0]["summary"]
        == "The cortex-like graph of docs."
    )


def test_rollback_restores_the_tree_byte_for_byte(v2: Path) -> None:
    before = tree(v2)
    run_json()
    run_json()  # a re-run must not overwrite the pre-migration record
    report = run_json("--archive")
    assert report["archived"] and (v2 / ".mlda.archive/registry.yaml").exists()
    assert not (v2 / ".mlda").exists()
    assert tree(v2) != before
    out = ncx("migrate", "--rollback")
    assert "removed .neocortex/" in out.stdout
    assert tree(v2) == before
    assert git(v2, "status", "--porcelain") == ""
    assert not (v2 / ".git/ncx-migrate").exists()
    again = ncx("migrate", "--rollback", ok=False)
    assert again.returncode == 1 and "nothing to roll back" in again.stderr


def test_rollback_with_an_existing_tree_and_a_human_edit(v2: Path) -> None:
    ncx("init")
    ncx("sync", ok=False)  # docs/legacy.md is cp1252: plain sync cannot read it
    commit_all(v2, "ncx before migrating")
    before = tree(v2)
    run_json()
    mem = next((v2 / ".neocortex/memories").glob("MEM-*.md"))
    mem.write_text(mem.read_text() + "\nA human note.\n")
    refused = ncx("migrate", "--rollback", ok=False)
    assert refused.returncode == 1 and mem.name in refused.stderr and "--force" in refused.stderr
    ncx("migrate", "--rollback", "--force")
    assert tree(v2) == before


def test_a_memory_deleted_in_v3_stays_deleted(v2: Path) -> None:
    run_json()
    commit_all(v2, "migrated")
    key = ".mlda/topics/auth/learning.yaml#groupings/token-management"
    mid = by_entry(v2)[key][0]["id"]
    orphan = by_entry(v2)["docs/gone.meta.yaml#sidecar"][0]["id"]
    ncx("memory", "rm", mid)
    git(v2, "rm", "-q", f".neocortex/memories/{orphan}.md", f".neocortex/memories/{orphan}.npy")
    commit_all(v2, "two memories we do not want")
    plan = run_json("--dry-run")
    kept = {m["id"]: m for m in plan["memories"] if m["action"] == "keep-deleted"}
    assert set(kept) == {mid, orphan} and kept[mid]["key"] == key
    assert plan["counts"]["out"]["memories"]["keep-deleted"] == 2
    text = ncx("migrate").stdout
    assert "## kept deleted (2)" in text and f"- {mid} ({key})" in text
    assert f"{mid} (kept deleted: removed since the last migration" in text
    assert "2 kept deleted" in text
    assert not (v2 / f".neocortex/memories/{mid}.md").exists()
    assert key not in by_entry(v2) and "docs/gone.meta.yaml#sidecar" not in by_entry(v2)
    assert git(v2, "status", "--porcelain") == ""
    assert migrate_changed(v2, load_config()) == 0  # the pre-commit hook stays quiet too


def test_a_deleted_memory_comes_back_when_its_v2_entry_changes(v2: Path) -> None:
    run_json()
    commit_all(v2, "migrated")
    key = ".mlda/topics/auth/learning.yaml#verification_notes/Token expiry was assumed to be 24h"
    mid = by_entry(v2)[key][0]["id"]
    ncx("memory", "rm", mid)
    commit_all(v2, "drop it")
    learning = v2 / ".mlda/topics/auth/learning.yaml"
    learning.write_text(learning.read_text().replace("never hard-code it", "read it at start-up"))
    commit_all(v2, "v2 edit")
    text = ncx("migrate", "--dry-run").stdout
    assert f"{mid} (recreated: removed since the last migration, but its v2 source changed" in text
    report = run_json()
    (mem,) = [m for m in report["memories"] if m["key"] == key]
    assert mem["action"] == "recreate" and mem["id"] == mid  # the same id: links still hold
    assert report["counts"]["out"]["memories"]["recreate"] == 1
    back = by_entry(v2)[key]
    assert back[0]["id"] == mid and "read it at start-up" in back[1]
    assert (v2 / f".neocortex/memories/{mid}.npy").exists()


def test_a_memory_that_no_longer_parses_is_never_overwritten(v2: Path) -> None:
    # Not deleted, only unreadable (or stripped of its provenance): a re-run must leave the
    # file and its hand edits alone, even when the v2 entry changed since.
    run_json()
    commit_all(v2, "migrated")
    key = ".mlda/topics/auth/learning.yaml#verification_notes/Token expiry was assumed to be 24h"
    mid = by_entry(v2)[key][0]["id"]
    md = v2 / f".neocortex/memories/{mid}.md"
    broken = md.read_text().replace("---\n", "---\nnote: reviewed: keep\n", 1) + "HUMAN NOTE\n"
    md.write_text(broken)
    learning = v2 / ".mlda/topics/auth/learning.yaml"
    learning.write_text(learning.read_text().replace("never hard-code it", "read it at start-up"))
    commit_all(v2, "hand edit that breaks the YAML, and a v2 edit")
    assert "kept deleted" not in ncx("migrate", "--dry-run", ok=False).stdout
    report = run_json(ok=False)  # exit 1: the broken memory is a problem of the tree
    (mem,) = [m for m in report["memories"] if m["key"] == key]
    assert mem["action"] == "create" and mem["id"] != mid
    assert md.read_text() == broken


def test_a_deleted_sidecar_migrate_wrote_stays_deleted(v2: Path) -> None:
    registry = v2 / ".mlda/registry.yaml"
    registry.write_text(
        registry.read_text()
        + '  - id: DOC-CORE-004\n    title: "Lost sidecar"\n    path: docs/core/lost.md\n'
    )
    (v2 / ".mlda/docs/core/lost.md").write_text("# Lost sidecar\n\nIts sidecar is gone.\n")
    commit_all(v2, "a doc whose DOC-ID survives only in the registry")
    written = ".mlda/docs/core/lost.meta.yaml"
    first = run_json()
    assert (v2 / written).is_file() and written in first["written"]
    commit_all(v2, "migrated")
    git(v2, "rm", "-q", written)
    commit_all(v2, "we do not want that sidecar")
    report = run_json()
    assert not (v2 / written).exists() and report["written"] == []
    assert [w["action"] for w in report["writes"] if w["path"] == written] == ["keep-deleted"]
    assert [w["action"] for w in first["writes"] if w["path"] == written] == ["write"]
    text = ncx("migrate", "--dry-run").stdout
    assert f"- {written}: kept deleted" in text


def test_repeated_runs_keep_one_journal_and_rollback_spares_new_memories(v2: Path) -> None:
    before = tree(v2)
    learning = v2 / ".mlda/topics/auth/learning.yaml"
    original = learning.read_text()
    run_json()
    for n in range(3):  # v2 edits carried over run after run, as the pre-commit hook does
        learning.write_text(original.replace("Readable by", f"Readable ({n}) by"))
        commit_all(v2, f"v2 edit {n}")
        assert run_json()["counts"]["out"]["memories"]["update"] == 1
    learning.write_text(original)
    commit_all(v2, "v2 as it was")
    run_json()
    commit_all(v2, "migrated")
    # one journal, and one saved copy per file migrate changed (docs/legacy.md), however many runs
    folder = v2 / ".git/ncx-migrate"
    assert sorted(p.name for p in folder.iterdir()) == ["files", "journal.json"]
    assert len(list((folder / "files").iterdir())) == 1
    added = json.loads(ncx("memory", "add", "Walrus quotas reset at midnight UTC", "--json").stdout)
    run_json()  # a later run must not take the new memory for one of its own
    refused = ncx("migrate", "--rollback", ok=False)
    assert refused.returncode == 1 and added["id"] in refused.stderr
    ncx("migrate", "--rollback", "--force")
    assert tree(v2) == before and not folder.exists()


def test_unparsable_yaml_is_reported_and_the_rest_continues(v2: Path) -> None:
    bad = v2 / ".mlda/topics/billing/learning.yaml"
    bad.parent.mkdir(parents=True)
    bad.write_text("topic: billing\ngroupings:\n  - name: [unclosed\n    docs: x\n")
    commit_all(v2, "broken")
    proc = ncx("migrate", "--json", ok=False)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    failed = [i for i in report["items"] if i["fate"] == "failed"]
    assert [i["path"] for i in failed] == [".mlda/topics/billing/learning.yaml"]
    assert "line" in failed[0]["detail"]
    assert report["counts"]["out"]["memories"]["create"] == 10  # the rest was migrated
    text = ncx("migrate", ok=False)
    assert "failed" in text.stdout and "could not be migrated" in text.stderr


def test_paths_escaping_the_repo_are_refused(v2: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nthe launch code is osprey\n")
    try:
        os.symlink(secret, v2 / "docs/leak.md")
    except OSError:
        pytest.skip("no symlinks here")
    commit_all(v2, "a link out")
    proc = ncx("migrate", "--json", ok=False)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    leak = [i for i in report["items"] if i["path"] == "docs/leak.md"]
    assert leak and leak[0]["fate"] == "failed" and "leaves the repository" in leak[0]["detail"]
    assert not (v2 / doc_chunk_file("docs/leak.md")).exists()
    assert "osprey" not in "".join(p.read_text() for p in (v2 / ".neocortex").rglob("*.md"))


def test_untracked_v2_doc_is_a_failure_not_a_silent_loss(v2: Path) -> None:
    (v2 / "docs/new.md").write_text("# New\n\nNot committed yet.\n")
    proc = ncx("migrate", "--dry-run", "--json", ok=False)
    item = next(i for i in json.loads(proc.stdout)["items"] if i["path"] == "docs/new.md")
    assert item["fate"] == "failed" and "git add" in item["detail"]


def test_hook_function_carries_edits_then_is_quiet(v2: Path) -> None:
    cfg = load_config()
    lines: list[str] = []
    assert migrate_changed(v2, cfg, lines.append, lines.append) == 1
    assert any(line.startswith(".neocortex/memories/") for line in lines)
    assert migrate_changed(v2, cfg) == 0
    learning = v2 / ".mlda/topics/auth/learning.yaml"
    learning.write_text(learning.read_text().replace("Readable by any", "Readable by every"))
    assert migrate_changed(v2, cfg) == 1
    assert migrate_changed(v2, cfg) == 0


def test_without_v2_files_there_is_nothing_to_migrate(repo: Path) -> None:
    for i in range(3):
        write(repo, f"docs/d{i}.md", f"# Doc {i}\n\nSome text about topic {i}.\n")
    commit_all(repo)
    for args in (("--dry-run",), ()):
        out = ncx("migrate", *args)
        assert out.stdout == "" and "nothing to migrate" in out.stderr
    assert not (repo / ".neocortex").exists()
    assert json.loads(ncx("migrate", "--dry-run", "--json").stdout)["nothing_to_migrate"] is True


def test_archive_refuses_an_existing_archive(v2: Path) -> None:
    (v2 / ".mlda.archive").mkdir()
    proc = ncx("migrate", "--archive", ok=False)
    assert proc.returncode == 1 and ".mlda.archive exists already" in proc.stderr


# ---------------------------------------------------------------- the real trees


@pytest.mark.parametrize("name", ["neocortex-2264561", "neocortex-622556f"])
def test_real_tree_migrates_without_losing_knowledge(repo: Path, name: str) -> None:
    src = REAL / name
    if not src.is_dir():
        pytest.skip(f"{src} is absent")
    shutil.copytree(src, repo, dirs_exist_ok=True)
    commit_all(repo, "v2")
    before = tree(repo)
    report = run_json()
    assert report["ok"] and report["failed"] == []
    items = report["items"]
    paths = {i["path"] for i in items}
    v2_files = {
        p.relative_to(repo).as_posix()
        for p in repo.rglob("*")
        if p.is_file()
        and ".git" not in p.parts
        and ".neocortex" not in p.parts
        and (p.relative_to(repo).parts[0] in (".mlda", "docs") or p.name.endswith(".meta.yaml"))
    }
    assert v2_files <= paths, v2_files - paths
    # every DOC-ID a sidecar defines is the source_doc of its chunks, with its title
    sidecars = [i for i in items if i["kind"] == "sidecar"]
    assert sidecars and all(i["fate"] == "metadata" for i in sidecars)
    for sc in sidecars:
        meta = yaml.safe_load((repo / sc["path"]).read_text(encoding="utf-8-sig"))
        doc = sc["path"].removesuffix(".meta.yaml") + ".md"
        chunks = chunks_of(repo, doc)
        assert chunks and {c["source_doc"] for c in chunks} == {meta["id"]}, doc
        assert {c["title"] for c in chunks} == {meta["title"]}
        assert [r["id"] for r in chunks[0].get("related", [])] == [
            r["id"] for r in meta.get("related") or []
        ]
    # every doc the reader found is chunked, body-only DOC-IDs included
    for i in items:
        if i["kind"] == "doc" and i["fate"] == "chunked":
            chunks = chunks_of(repo, i["path"])
            assert chunks, i["path"]
            if "(from the text)" in i["detail"]:
                assert chunks[0]["source_doc"] == i["detail"].split()[0]
    entries = [i for i in items if i.get("entry")]
    assert len(memories(repo)) >= len(entries)
    if name.endswith("622556f"):
        grouping = by_entry(repo)[
            ".mlda/topics/authentication/learning.yaml#groupings/token-management"
        ]
        assert grouping[0]["related_docs"] == ["DOC-AUTH-001", "DOC-AUTH-002"]
        hit = ncx("retrieve", "token-management grouping DOC-AUTH-001", "--json", "-k", "5")
        assert any(
            json.loads(line)["source_path"].endswith(f"{grouping[0]['id']}.md")
            for line in hit.stdout.splitlines()
        )
    hit = ncx("retrieve", "how do agents navigate the MLDA knowledge graph", "--json", "-k", "5")
    assert any(
        json.loads(line)["source_path"] == ".mlda/docs/core/mlda-navigation-protocol.md"
        for line in hit.stdout.splitlines()
    )
    assert run_json()["written"] == []  # idempotent
    ncx("migrate", "--rollback")
    assert tree(repo) == before


def test_a_journal_from_a_newer_ncx_is_left_alone(v2: Path) -> None:
    run_json()
    path = v2 / ".git/ncx-migrate/journal.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "version": 99, "future": {"kept": True}}))
    before = path.read_bytes()
    out = ncx("migrate", ok=False)
    assert out.returncode == 1 and "written by a newer ncx (version 99)" in out.stderr
    assert "journal.json" in out.stderr and "upgrade ncx" in out.stderr
    assert path.read_bytes() == before  # not re-saved without what it does not understand


def test_a_run_that_stops_halfway_still_owns_the_memories_it_wrote(
    v2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Journal first, then write: after a crash, rollback must not take migrate's own memories
    # for hand-written ones (and refuse without --force).
    from ncx import store
    from ncx.v2.migrate import apply_migration, build_plan

    real_write = store.write_atomic
    written: list[Path] = []

    def write_then_fail(path: Path, data: bytes) -> None:
        if "/memories/" in path.as_posix() and len(written) == 2:
            raise KeyboardInterrupt  # the user gave up halfway
        real_write(path, data)
        if "/memories/" in path.as_posix():
            written.append(path)

    monkeypatch.setattr(store, "write_atomic", write_then_fail)
    with pytest.raises(KeyboardInterrupt):
        apply_migration(v2, build_plan(v2), load_config())
    monkeypatch.setattr(store, "write_atomic", real_write)
    assert len(written) == 2
    out = ncx("migrate", "--rollback")
    assert out.returncode == 0 and not any(p.exists() for p in written)


def test_a_killed_run_resumes_to_the_result_of_an_uninterrupted_one(
    v2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed between journaling a memory and writing it, the next run used to take the missing
    # file for one you deleted, and never wrote it (a learning lost).
    from ncx import store
    from ncx.v2.migrate import apply_migration, build_plan

    real_write = store.write_atomic
    written: list[Path] = []

    def write_then_die(path: Path | str, data: bytes, **kw: Any) -> None:
        if "/memories/" in Path(path).as_posix() and len(written) == 2:
            raise KeyboardInterrupt
        real_write(path, data, **kw)
        if "/memories/" in Path(path).as_posix():
            written.append(Path(path))

    # every module that holds the writer (sync's writer imports it by name), loaded first
    import importlib
    import sys

    importlib.import_module("ncx.tree.sync_write")  # (a plain import would shadow `ncx`)

    holders = [
        m for m in list(sys.modules.values()) if getattr(m, "write_atomic", None) is real_write
    ]
    for m in holders:
        monkeypatch.setattr(m, "write_atomic", write_then_die)
    with pytest.raises(KeyboardInterrupt):
        apply_migration(v2, build_plan(v2), load_config())
    for m in holders:
        monkeypatch.setattr(m, "write_atomic", real_write)
    resumed = run_json()
    assert resumed["counts"]["out"]["memories"].get("keep-deleted", 0) == 0
    # sync's state file and the staleness table record the stat (size, mtime) of the files
    # they checked, by design (accelerators verified against the files): they differ between
    # any two runs.
    stats = (".neocortex/cache/sync-state.json", ".neocortex/cache/stale.json")
    after_resume = tree(v2)
    for f in stats:
        after_resume.pop(f, None)
    ncx("migrate", "--rollback")
    run_json()  # the same migration, uninterrupted
    again = tree(v2)
    for f in stats:
        again.pop(f, None)
    assert again == after_resume


def test_rollback_never_overwrites_work_done_since(v2: Path) -> None:
    run_json()
    commit_all(v2, "migrated")
    legacy = v2 / "docs/legacy.md"  # re-encoded to UTF-8 by migrate, then edited by hand
    legacy.write_text(
        legacy.read_text(encoding="utf-8") + "\nA line written after the migration.\n",
        encoding="utf-8",
    )
    attrs = v2 / ".gitattributes"
    attrs.write_text(attrs.read_text() + "*.png binary\n")
    state = v2 / ".neocortex/state.md"
    state.write_text("# Handoff\n\nHalfway through the billing refactor.\n")
    refused = ncx("migrate", "--rollback", ok=False)
    assert refused.returncode == 1
    for name in ("docs/legacy.md", ".gitattributes", ".neocortex/state.md"):
        assert name in refused.stderr
    assert "A line written after the migration." in legacy.read_text(encoding="utf-8")
    ncx("migrate", "--rollback", "--force")
    assert "A line written after the migration." in legacy.read_text(encoding="utf-8")
    assert "*.png binary" in attrs.read_text()


def test_the_journal_is_written_once_per_run_not_once_per_memory(
    v2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ncx.v2.journal import Journal

    saves: list[int] = []
    real_save = Journal.save
    monkeypatch.setattr(Journal, "save", lambda self: (saves.append(1), real_save(self))[1])
    report = run_json()
    assert sum(report["counts"]["out"]["memories"].values()) >= 5
    assert len(saves) <= 3  # open, the first run's memory record, the end: a fixed number


def test_a_learning_entry_holding_a_secret_is_refused_and_the_rest_migrates(v2: Path) -> None:
    key_id = "AKIA" + "Z7QW2M4N6P8R1T3V"  # assembled: a fake, correctly shaped AWS key id
    path = v2 / ".mlda/topics/auth/learning.yaml"
    path.write_text(
        path.read_text().replace(
            "Expiry comes from the identity provider config, never hard-code it",
            f"The staging deploy key is {key_id}, rotate it monthly",
        )
    )
    commit_all(v2, "a secret in v2")
    out = ncx("migrate", "--json", ok=False)
    assert out.returncode == 1
    report = json.loads(out.stdout)
    refused = [i for i in report["items"] if i["fate"] == "failed"]
    assert len(refused) == 1 and "credential-shaped" in refused[0]["detail"]
    assert refused[0]["entry"].startswith("verification_notes")
    mems = list((v2 / ".neocortex/memories").glob("*.md"))
    assert len(mems) >= 4 and not any(key_id in m.read_text() for m in mems)


def test_alias_bombs_and_cycles_in_a_learning_file_are_refused_per_entry(v2: Path) -> None:
    # 1 KB of YAML used to become a 624 MB memory (and a tokenizer panic); a self-referencing
    # alias was a traceback.
    bomb = "  - session: '2026-01-02'\n    caught: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    bomb += "".join(
        f"    l{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]\n"
        for i in range(1, 9)
    )
    loop = "  - session: '2026-01-03'\n    caught: &c [loops, *c]\n    lesson: recursion\n"
    path = v2 / ".mlda/topics/auth/learning.yaml"
    text = path.read_text()
    path.write_text(text.replace("verification_notes:\n", "verification_notes:\n" + bomb + loop, 1))
    commit_all(v2, "hostile v2 entries")
    out = ncx("migrate", "--json", ok=False)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    refused = [i for i in json.loads(out.stdout)["items"] if i["fate"] == "failed"]
    assert len(refused) == 2
    assert any("alias bomb" in i["detail"] for i in refused)
    assert any("refers to itself" in i["detail"] for i in refused)
    sizes = [p.stat().st_size for p in (v2 / ".neocortex/memories").glob("*.md")]
    assert len(sizes) >= 4 and max(sizes) < 50_000
