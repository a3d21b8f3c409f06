"""cli_migrate: `ncx migrate` — move a v2 (.mlda) project into .neocortex/ (see migrate.py).

stdout: the report (text or --json); stderr: progress and hints.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ncx.cli.app import _config, _json_out, _root, _say, command


@command()
def migrate(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan: every v2 artifact and its fate.")
    ] = False,
    archive: Annotated[
        bool, typer.Option("--archive", help="Afterwards, move .mlda/ to .mlda.archive/.")
    ] = False,
    rollback: Annotated[
        bool,
        typer.Option("--rollback", help="Restore the tree exactly as it was before migrating."),
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="With --rollback: discard memories edited since."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Move a v2 project (.mlda/, *.meta.yaml sidecars) into .neocortex/, losing nothing.

    Docs are chunked with their DOC-IDs and sidecar metadata, topic learnings become memories,
    derived files are cross-checked. Safe to re-run: later v2 edits are carried over.
    Exit 1 if anything that carried knowledge could not be migrated.
    Example: ncx migrate --dry-run
    """
    root = _root()
    if rollback:
        if dry_run or archive:
            raise typer.BadParameter("--rollback cannot be combined with --dry-run or --archive")
        from ncx.v2.journal import rollback as run_rollback

        res = run_rollback(root, force=force)
        if as_json:
            _json_out(
                {
                    "restored": list(res.restored),
                    "removed": list(res.removed),
                    "moved_back": [list(m) for m in res.moved_back],
                    "neocortex": res.ncx,
                }
            )
        else:
            for src, dst in res.moved_back:
                print(f"moved {src} back to {dst}")
            for p in res.restored:
                print(f"restored {p}")
            for p in res.removed:
                print(f"removed {p}")
            print(f"{res.ncx} .neocortex/")
            _say("ncx: rolled back; the tree is as it was before `ncx migrate`")
        return
    if force:
        raise typer.BadParameter("--force only goes with --rollback")

    from ncx.v2.migrate import apply_migration, build_plan, format_report, has_v2, report_json

    if not has_v2(root):
        if as_json:
            _json_out({"ok": True, "nothing_to_migrate": True})
        _say("ncx: nothing to migrate: no .mlda/ folder and no *.meta.yaml sidecars here")
        return
    plan = build_plan(root)
    result = None
    if not dry_run:
        result = apply_migration(
            root,
            plan,
            _config(),
            archive=archive,
            progress=None if as_json else lambda m: _say(f"ncx: {m}"),
        )
    if as_json:
        _json_out(report_json(plan, result))
    else:
        print(format_report(plan, result), end="")
        if result is not None:
            _say(f"ncx: to undo: ncx migrate --rollback (data in {result.journal})")
    ok = report_json(plan, result)["ok"]
    if not ok:
        _say("ncx: some v2 knowledge could not be migrated; see 'failed' above")
        raise typer.Exit(code=1)
