"""cli_memory: `ncx memory …` — capture, evolve, review and list atomic memories.

Thin: parse flags, call one ncx.memory.ops function, print. stdout carries data (ids,
paths, JSON, memory text); stderr carries what happened and why.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer

from ncx.cli.app import _config, _json_out, _root, _say, app, command
from ncx.errors import UsageError

memory_app = typer.Typer(
    help="Atomic memories: learnings kept as reviewed files under .neocortex/memories/.\n\n"
    'Example: ncx memory add "Run migrations before the seed script" --type procedural',
    no_args_is_help=True,
)
app.add_typer(memory_app, name="memory")

TypeOpt = Annotated[str, typer.Option("--type", "-t", help="factual, experiential or procedural.")]
ConfidenceOpt = Annotated[str, typer.Option("--confidence", "-c", help="high, medium or low.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def _today() -> date:
    return date.today()


def _read_text(text: str | None, file: Path | None) -> str:
    """The learning from the argument, --file, or stdin ('-'): long notes never hit argv limits."""
    if text is not None and file is not None:
        raise UsageError("give the text as an argument or with --file, not both")
    if file is not None:
        if str(file) == "-":
            return sys.stdin.read()
        try:
            return file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {file}: {exc}") from None
    if text == "-":
        return sys.stdin.read()
    if text is None:
        raise UsageError(
            "nothing to remember",
            hint='ncx memory add "the learning", --file NOTES.md, or - for stdin',
        )
    return text


def _plain(value: Any) -> Any:
    """Frontmatter values as JSON values (YAML dates become ISO strings)."""
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _memory_json(memory: Any, path: str) -> dict[str, Any]:
    meta = {k: _plain(v) for k, v in memory.meta.items()}
    return {**meta, "path": path, "learning": memory.learning, "context": memory.context}


def _report(written: list[str], as_json: bool, what: str) -> None:
    if as_json:
        _json_out({"written": written})
    else:
        for p in written:
            print(p)
    _say(f"ncx: {what}")


@command("add", target=memory_app)
def add(
    text: Annotated[
        str | None, typer.Argument(help="The learning; '-' reads it from stdin.")
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="Read the learning from this file ('-': stdin)."),
    ] = None,
    context: Annotated[str, typer.Option("--context", help="Why or where it was learned.")] = "",
    type_: TypeOpt = "factual",
    domain: Annotated[str | None, typer.Option("--domain", "-d", help="Area, e.g. auth.")] = None,
    confidence: ConfidenceOpt = "medium",
    keywords: Annotated[
        str | None, typer.Option("--keywords", "-k", help="Comma-separated keywords.")
    ] = None,
    task: Annotated[str | None, typer.Option("--task", help="The task it came from.")] = None,
    related_doc: Annotated[
        list[str] | None, typer.Option("--related-doc", help="A doc it concerns (repeatable).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Add even if a near-duplicate exists.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remember a learning: writes .neocortex/memories/<id>.md + .npy and prints the id.

    Refused if it holds a credential-shaped value, or (without --force) if it repeats an
    existing memory. Example: ncx memory add "Token refresh needs the clock in UTC" --domain auth
    """
    from ncx.memory.ops import NewMemory, add_memory, load_tree_model
    from ncx.query.search import neighbours

    root, cfg = _root(), _config()
    new = NewMemory(
        learning=_read_text(text, file),
        context=context,
        type=type_,
        domain=domain,
        confidence=confidence,
        keywords=tuple((keywords or "").split(",")),
        source_task=task,
        related_docs=tuple(related_doc or ()),
    )
    model = load_tree_model(root, cfg)
    added = add_memory(
        root, new, embedder=model, neighbours=neighbours, today=_today(), force=force
    )
    if as_json:
        _json_out(
            {
                "id": added.memory.id,
                "written": list(added.written),
                "related": [
                    {"id": r.id, "kind": r.kind, "similarity": r.similarity} for r in added.related
                ],
            }
        )
    else:
        print(added.memory.id)
    for p in added.written:
        _say(f"ncx: wrote {p}")
    if added.related:
        _say("ncx: related: " + ", ".join(f"{r.label} ({r.similarity:.2f})" for r in added.related))


@command("evolve", target=memory_app)
def evolve(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory (id or its suffix).")],
    useful: Annotated[
        bool, typer.Option("--useful", help="It proved right: raise usefulness and confidence.")
    ] = False,
    incorrect: Annotated[
        str | None,
        typer.Option(
            "--incorrect", help="Append this dated correction, lower confidence, re-embed."
        ),
    ] = None,
    supersede_by: Annotated[
        str | None,
        typer.Option(
            "--supersede-by",
            metavar="NEW_ID",
            help="Mark it superseded by NEW_ID (linked both ways).",
        ),
    ] = None,
    confirm: Annotated[
        bool,
        typer.Option(
            "--confirm",
            help="Still true as the code and docs it cites are now: record them again "
            "(clears a stale flag).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Evolve a memory: confirm it, correct it, or supersede it by a newer one.

    Examples: ncx memory evolve MEM-2026-11-21-k3f9q2 --useful
              ncx memory evolve k3f9q2 --incorrect "the limit is 100 requests, not 50"
              ncx memory evolve k3f9q2 --confirm   (what it cites changed; it still holds)
    """
    from ncx.memory import ops as memory_ops

    chosen = sum((useful, incorrect is not None, supersede_by is not None, confirm))
    if chosen != 1:
        raise UsageError(
            "give exactly one of --useful, --confirm, --incorrect TEXT, --supersede-by NEW_ID"
        )
    root = _root()
    if confirm:
        written = memory_ops.confirm(root, memory_id, today=_today())
        what = "confirmed: its citations recorded as they are now"
    elif useful:
        written = memory_ops.mark_useful(root, memory_id, today=_today())
        what = "marked useful"
    elif incorrect is not None:
        model = memory_ops.load_tree_model(root, _config())
        written = memory_ops.mark_incorrect(
            root, memory_id, incorrect, embedder=model, today=_today()
        )
        what = "correction appended; re-embedded"
    else:
        assert supersede_by is not None
        written = memory_ops.supersede(root, memory_id, supersede_by, today=_today())
        what = f"superseded by {supersede_by}"
    _report(written, as_json, what)


@command("rm", target=memory_app)
def rm(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory to delete.")],
) -> None:
    """Delete a memory's .md and .npy (git keeps its history).

    Example: ncx memory rm MEM-2026-11-21-k3f9q2
    """
    from ncx.memory.ops import find_memory, referrers, remove

    root = _root()
    mid = find_memory(root, memory_id).stem
    others = referrers(root, mid)
    for p in remove(root, mid):
        print(f"removed {p}")
    if others:
        _say(f"ncx: note: still referred to by {', '.join(others)}")


@command("extract", target=memory_app)
def extract(
    source: Annotated[
        str,
        typer.Argument(metavar="[FILE|-]", help="Session notes to read; '-' (default) is stdin."),
    ] = "-",
    auto_save: Annotated[
        bool,
        typer.Option("--auto-save", help="Save high-confidence proposals as active memories."),
    ] = False,
    task: Annotated[
        str | None, typer.Option("--task", help="The task the notes come from.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Propose memories from session notes (no LLM): written with status: proposed.

    Review them with `ncx memory approve ID` / `reject ID`.
    Example: ncx memory extract session-notes.md --auto-save
    """
    from ncx.memory.ops import extract as run_extract
    from ncx.memory.ops import load_tree_model
    from ncx.query.search import neighbours

    notes = sys.stdin.read() if source == "-" else _read_text(None, Path(source))
    root = _root()
    result = run_extract(
        root,
        notes,
        embedder=load_tree_model(root, _config()),
        neighbours=neighbours,
        today=_today(),
        auto_save=auto_save,
        source_task=task,
    )
    if as_json:
        _json_out(
            {
                "added": [
                    {
                        "id": a.memory.id,
                        "status": a.memory.status,
                        "confidence": a.memory.meta.get("confidence"),
                        "learning": a.memory.learning,
                    }
                    for a in result.added
                ],
                "skipped": [
                    {"lines": list(s.source_lines), "text": s.text, "reason": s.reason}
                    for s in result.skipped
                ],
            }
        )
    else:
        for a in result.added:
            print(f"{a.memory.id}\t{a.memory.status}\t{' '.join(a.memory.learning.split())[:100]}")
    for s in result.skipped:
        _say(
            f"ncx: skipped the proposal from lines {s.source_lines[0]}-{s.source_lines[1]}: {s.reason}"
        )
    proposed = sum(a.memory.status == "proposed" for a in result.added)
    _say(
        f"ncx: {len(result.added)} written ({proposed} proposed, {len(result.added) - proposed} "
        f"active), {len(result.skipped)} skipped"
        + ("; review with `ncx memory approve ID` / `reject ID`" if proposed else "")
    )


@command("approve", target=memory_app)
def approve(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="A proposed memory.")],
) -> None:
    """Make a proposed memory active. Example: ncx memory approve MEM-2026-11-21-k3f9q2"""
    from ncx.memory.ops import approve as run_approve

    _report(run_approve(_root(), memory_id, today=_today()), False, "approved")


@command("reject", target=memory_app)
def reject(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="A proposed memory.")],
) -> None:
    """Delete a proposed memory. Example: ncx memory reject MEM-2026-11-21-k3f9q2"""
    from ncx.memory.ops import reject as run_reject

    for p in run_reject(_root(), memory_id):
        print(f"removed {p}")
    _say("ncx: rejected")


@command("list", target=memory_app)
def list_(
    type_: Annotated[str | None, typer.Option("--type", "-t", help="Only this type.")] = None,
    domain: Annotated[str | None, typer.Option("--domain", "-d", help="Only this domain.")] = None,
    status: Annotated[
        str | None, typer.Option("--status", "-s", help="Only this status (default: all).")
    ] = None,
    confidence: Annotated[
        str | None, typer.Option("--confidence", "-c", help="Only this confidence.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List memories: id, type, confidence, status, domain, first words.

    Example: ncx memory list --status proposed --json
    """
    from ncx.memory.ops import list_memories

    root = _root()
    found, problems = list_memories(root)
    wanted = {"type": type_, "domain": domain, "status": status, "confidence": confidence}
    rows = []
    for mem in found:
        meta = {**mem.meta, "status": mem.status}
        if all(v is None or str(meta.get(k) or "").lower() == v.lower() for k, v in wanted.items()):
            rows.append(mem)
    if as_json:
        _json_out([_memory_json(m, f".neocortex/memories/{m.id}.md") for m in rows])
    else:
        for m in rows:
            first = " ".join(m.learning.split())
            first = first if len(first) <= 80 else first[:79] + "…"
            print(
                f"{m.id}  {m.meta.get('type') or '-':<12} {m.meta.get('confidence') or '-':<6} "
                f"{m.status:<10} {m.meta.get('domain') or '-':<10} {first}"
            )
    for exc in problems:
        _say(f"ncx: error: {exc}")
    _say(f"ncx: {len(rows)} of {len(found)} memories")
    if problems:
        raise typer.Exit(code=1)


@command("show", target=memory_app)
def show(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory (id or its suffix).")],
    as_json: JsonOpt = False,
) -> None:
    """Print a memory's file. Example: ncx memory show k3f9q2"""
    from ncx.memory.file import read_memory
    from ncx.memory.ops import find_memory

    root = _root()
    path = find_memory(root, memory_id)
    if as_json:
        _json_out(_memory_json(read_memory(path), path.relative_to(root).as_posix()))
        return
    from ncx.store import read_unit

    read_unit(path)  # refuses a link, a file over the size cap, a YAML bomb, before printing
    sys.stdout.write(path.read_bytes().decode("utf-8", "replace"))
