"""cli_bench: `ncx benchmark` — what ncx saves on your own tree."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ncx.cli.app import _config, _root, _say, command


@command()
def benchmark(
    tasks: Annotated[
        Path | None,
        typer.Option(
            "--tasks",
            help="A file with one task per line [default: generated from the docs' headings].",
        ),
    ] = None,
    n: Annotated[int, typer.Option("--n", help="How many generated tasks.", min=1)] = 10,
    budget: Annotated[
        int | None,
        typer.Option("--budget", "-b", help="Frame budget [default: NCX_TOKEN_BUDGET or 15000]."),
    ] = None,
    runs: Annotated[
        int, typer.Option("--runs", help="Fresh processes timed for the cold assemble.", min=1)
    ] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Tokens of the full docs vs wake-up and task frames, reduction factor, latency, size.

    Example: ncx benchmark --tasks tasks.txt --json
    """
    from ncx.query.benchmark import render_markdown, run_benchmark, tasks_from_headings

    root = _root()
    cfg = _config()
    if tasks is not None:
        try:
            task_list = [
                t.strip() for t in tasks.read_text(encoding="utf-8").splitlines() if t.strip()
            ]
        except OSError as exc:
            raise typer.BadParameter(f"{tasks}: {exc.strerror}", param_hint="--tasks") from None
    else:
        task_list = tasks_from_headings(root, n)
    if not task_list:
        _say("ncx: no tasks (the tree has no sections); give --tasks FILE")
    _say(f"ncx: benchmarking {len(task_list)} tasks ...")
    rep = run_benchmark(root, cfg, task_list, budget or cfg.token_budget, runs)
    if as_json:
        sys.stdout.write(json.dumps(rep.as_json(), indent=2) + "\n")
    else:
        sys.stdout.write(render_markdown(rep))
