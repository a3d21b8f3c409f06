"""cli_eval: `ncx eval` — the team's questions about its knowledge, run as regression tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ncx.cli.app import _config, _json_out, _root, _say, command

if TYPE_CHECKING:
    from ncx.config import Config
    from ncx.eval.run import Report
    from ncx.eval.spec import Evals


@command("eval")
def eval_command(
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="BASE",
            help="Also ask the questions of BASE's knowledge (built from that commit's own "
            "files); exit 1 only when a question that passed there fails now.",
        ),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="The questions [default: .neocortex/evals.yaml]."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    suggest: Annotated[
        bool,
        typer.Option(
            "--suggest",
            help="Print (YAML) questions proposed from the docs' headings and the memories.",
        ),
    ] = False,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="With --suggest: at most this many.")
    ] = 100,
    if_present: Annotated[
        bool,
        typer.Option(
            "--if-present", help="Do nothing (exit 0) when there is no questions file (hooks)."
        ),
    ] = False,
) -> None:
    """Ask the questions of .neocortex/evals.yaml through the ranking and the frames agents get.

    Per question: pass or fail, the answer's rank in `ncx retrieve`, whether it is in the
    frame of `ncx assemble --task`. Exit 1 when a question fails (with --since BASE: when one
    that passed on BASE fails now). Examples: ncx eval; ncx eval --since origin/main --json;
    ncx eval --suggest > .neocortex/evals.yaml
    """
    root = _root()
    cfg = _config()
    if suggest:
        from ncx.eval.suggest import suggest as make

        sys.stdout.write(make(root, limit=limit))
        return
    from ncx.eval.run import ask_commit, regressions, report_json, report_markdown
    from ncx.eval.spec import EVALS_PATH, load_evals

    path = file if file is not None else root / EVALS_PATH
    if if_present and not os.path.lexists(path):
        return  # (a link, a FIFO in its place is there: load_evals names what is wrong)
    evals = load_evals(root, path)
    if since is not None:
        from ncx.eval.at import resolve

        resolve(root, since, "--since")  # a bad BASE is named before the questions are asked
    now = evaluate_worktree(root, cfg, evals)
    base = ask_commit(root, cfg, evals, since) if since is not None else None
    if as_json:
        _json_out(report_json(now, base))
    else:
        sys.stdout.write(report_markdown(now, base))
    failed = (
        regressions(base, now)
        if base is not None
        else [r.question.id for r in now.results if not r.passed]
    )
    if failed:
        what = f"broken since {since}" if base is not None else "failing"
        _say(f"ncx: {len(failed)} question(s) {what}: {', '.join(failed)}")
        raise typer.Exit(code=1)


def evaluate_worktree(root: Path, cfg: Config, evals: Evals) -> Report:
    from ncx import repo
    from ncx.eval.run import run_evals
    from ncx.query.state import git_state

    head = repo.head_info(root).head
    at = f"working tree at {head}" if head else "working tree"
    return run_evals(root, cfg, evals, git=git_state(root), at=at)
