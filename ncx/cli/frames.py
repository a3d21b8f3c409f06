"""frames: `ncx assemble` (a task's position-optimized frame) and `ncx wakeup` (the
session-start frame), the read side's two frame commands."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ncx.cli.app import (
    AtOpt,
    _answering,
    _config,
    _filters,
    _root,
    _say,
    command,
    json_text,
)

if TYPE_CHECKING:
    from ncx.config import Config
    from ncx.query.context import FrameRequest


@command(context_settings={"allow_extra_args": True})
def assemble(
    ctx: typer.Context,
    task: Annotated[
        str | None, typer.Option("--task", "-t", help="What you are about to do.")
    ] = None,
    task_file: Annotated[
        Path | None,
        typer.Option(
            "--task-file",
            help="Read the task from a file (an issue, say): its first line is the task, its list "
            "items acceptance criteria (not those in code blocks or HTML comments), and the "
            "whole text is searched. With --task too, that is the task and the file its details.",
        ),
    ] = None,
    criteria: Annotated[
        list[str] | None,
        typer.Option("--criteria", "-c", help="An acceptance criterion (repeatable)."),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            "-b",
            help="Hard token budget for the frame [env NCX_TOKEN_BUDGET; default 15000].",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="markdown (for agents) or json (for tools).")
    ] = "markdown",
    as_json: Annotated[
        bool, typer.Option("--json", help="The same as --format json (as other commands say it).")
    ] = False,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="Also print, on stderr, why each candidate is in or out."),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the frame to this file instead of stdout."),
    ] = None,
    state: Annotated[
        Path | None,
        typer.Option(
            "--state",
            help="A handoff/state note for the Current State zone [default: .neocortex/state.md if present].",
        ),
    ] = None,
    domain: Annotated[
        list[str] | None,
        typer.Option("--domain", help="Only knowledge from these domains (repeatable)."),
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="Only knowledge from sources matching this glob (repeatable)."),
    ] = None,
    at: AtOpt = None,
) -> None:
    """Build a position-optimized context frame for a task, within a hard token budget.

    Zones: task, relevant knowledge, code to open, background, past learnings, current
    state, instructions.
    Same tree + same task + same options => byte-identical frame; its id goes to stderr.
    Example: ncx assemble --task "add rate limiting to the login endpoint" --budget 8000
    """
    from ncx.query.context import FrameRequest, build_frame

    fmt = "json" if as_json else fmt
    if fmt not in ("markdown", "json"):
        raise typer.BadParameter("use markdown or json", param_hint="--format")
    words = ctx.args  # (not a declared argument: `--help` would show it in the usage line)
    if words:
        # `ncx assemble "fix the login"`: the task given as an argument, as to `retrieve`
        raise typer.BadParameter(
            f"the task goes after --task: ncx assemble --task {shlex.quote(' '.join(words))}",
            param_hint="TASK",
        )
    crit = list(criteria or [])
    body = ""
    if task_file is not None:
        from ncx.store import decode_text

        try:
            text = decode_text(task_file.read_bytes())
        except OSError as exc:
            raise typer.BadParameter(
                f"{task_file}: {exc.strerror}", param_hint="--task-file"
            ) from None
        except UnicodeDecodeError as exc:
            raise typer.BadParameter(
                f"{task_file}: not UTF-8 (bad byte at offset {exc.start}); "
                "re-save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)",
                param_hint="--task-file",
            ) from None
        from ncx.query.task import body_of, from_text

        first, items = from_text(text)
        if not (task or text.strip()):
            raise typer.BadParameter(
                f'{task_file}: is empty; write the task in it, or give --task "..."',
                param_hint="--task-file",
            )
        if not (task or first):
            raise typer.BadParameter(
                f"{task_file}: no line of prose to take as the task (its text is list items, "
                "code blocks or HTML comments); put the task on a line of its own, or give "
                '--task "..."',
                param_hint="--task-file",
            )
        task = task or first
        crit += items
        # the whole file is searched: an issue's body holds its paths, tracebacks and names
        # (the code ranking weighs its dumps below its words; decisions §46)
        body = body_of(text)
    if not task:
        raise typer.BadParameter('give --task "..." or --task-file FILE')
    if budget is not None and budget <= 0:
        raise typer.BadParameter(
            f"{budget} is not a budget; give a positive number of tokens", param_hint="--budget"
        )
    if out is not None and not out.parent.is_dir():
        raise typer.BadParameter(
            f"{out.parent} is not a folder; create it first", param_hint="--out"
        )
    from ncx.query.search import clip_query

    root = _root()
    cfg = _config()
    if (note := clip_query("\n".join([task, *crit, body]))[1]) is not None:
        _say(f"ncx: {note}")
    req = FrameRequest(
        task=task,
        criteria=tuple(crit),
        budget=budget or cfg.token_budget,
        state_file=state,
        filters=_filters(None, domain, path, False),
        body=body,
    )
    named = ""
    if at is not None:
        from ncx.eval.at import with_knowledge
        from ncx.query.state import git_state

        commit = with_knowledge(root, at)
        frame = build_frame(commit.root, cfg, req, git=git_state(root, commit.sha))
        named = f" at {commit.sha[:12]} ({_frame_options(commit.root, cfg, req)})"
    else:
        # A fresh clone's first frame builds the caches it needs (saying so when that is
        # slow) and is the frame every later query gives (docs/decisions.md §44).
        with _answering(root):
            frame = build_frame(root, cfg, req)
    text = frame.markdown if fmt == "markdown" else json_text(frame.as_json(), indent=2) + "\n"
    if out is not None:
        out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    _say(f"ncx: frame {frame.id}{named}: {frame.tokens}/{frame.budget} tokens")
    if explain:
        _say(f"  stopped: {frame.stop}")
        said: dict[str, int] = {}  # how many of each kind of "below" were said
        for d in frame.decisions:
            if d.outcome.startswith("below"):
                said[d.outcome] = said.get(d.outcome, 0) + 1
                if said[d.outcome] > EXPLAIN_BELOW:
                    continue
            why = f"  ({d.why})" if d.why else ""
            _say(f"  {d.outcome:<14} {d.zone:<10} {d.score:7.3f}  {d.id}{why}")
        for outcome, n in said.items():
            if n > EXPLAIN_BELOW:
                _say(f"  ... and {n - EXPLAIN_BELOW} more {outcome}")


# Candidates under a floor `--explain` names, of each floor: the next ones below it say
# where the floor stands; 160 of them (zustand's docs under a code lead) said it 160 times.
EXPLAIN_BELOW = 5


def _frame_options(root: Path, cfg: Config, req: FrameRequest) -> str:
    """The model and options a frame was built with, to replay it (`--at`)."""
    from ncx.embedder import tree_model_id
    from ncx.manifest import load_manifest

    model, _ = tree_model_id(cfg.model, load_manifest(root).model)
    opts = [f"model {model}", f"budget {req.budget}"]
    opts += [f"--domain {d}" for d in sorted(req.filters.domains)]
    opts += [f"--path {g}" for g in req.filters.path_globs]
    return ", ".join(opts)


@command()
def wakeup(
    budget: Annotated[int, typer.Option("--budget", "-b", help="Token budget.")] = 600,
) -> None:
    """The small session-start frame: what the project is, its knowledge map, key memories.

    Example: ncx wakeup
    """
    from ncx.query.context import wakeup as make_wakeup

    if budget <= 0:
        raise typer.BadParameter(
            f"{budget} is not a budget; give a positive number of tokens", param_hint="--budget"
        )
    root = _root()
    with _answering(root):
        text = make_wakeup(root, _config(), budget)
    sys.stdout.write(text)
