"""The migration report: the JSON `ncx migrate --json` prints and the text it says."""

from __future__ import annotations

from typing import Any

from ncx.layout import NCX_DIR
from ncx.v2.plan import _FATES, ARCHIVE, MigrationPlan, MigrationResult
from ncx.v2.reader import (
    MLDA,
)

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
