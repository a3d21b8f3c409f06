"""cli_app: the typer app, the one error edge, and output helpers shared by command modules.

Command modules (cli.py, cli_memory.py, cli_migrate.py, ...) register on `app` through
`command`; nothing below the CLI imports this module.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from ncx.errors import NcxError

if TYPE_CHECKING:
    from ncx.config import Config

app = typer.Typer(
    name="ncx",
    help="Project knowledge for coding agents, kept in the project's own git repo.\n\n"
    "Docs become small chunks and learnings atomic memories under .neocortex/; "
    "`ncx assemble --task` hands an agent only what a task needs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    # help text carries literal brackets ('ncx[mcp]', '[default: ...]'); rich markup would
    # eat them, so help is plain text
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from ncx import version

        print(f"ncx {version()}")
        raise typer.Exit()


@app.callback()
def _root_options(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print the installed ncx version and exit.",
        ),
    ] = False,
) -> None:
    """Project knowledge for coding agents, kept in the project's own git repo."""


F = TypeVar("F", bound=Callable[..., Any])


def _say(msg: str) -> None:
    print(msg, file=sys.stderr)


def _fail(exc: NcxError) -> typer.Exit:
    _say(exc.report())
    return typer.Exit(code=exc.exit_code)


def command(*args: Any, target: typer.Typer | None = None, **kwargs: Any) -> Callable[[F], F]:
    """app.command (or `target`.command for a sub-app such as `ncx memory`), with NcxError
    turned into a message and an exit code (the one edge)."""

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*a: Any, **kw: Any) -> Any:
            try:
                return fn(*a, **kw)
            except NcxError as exc:
                raise _fail(exc) from None

        (target or app).command(*args, **kwargs)(wrapper)
        return fn

    return deco


def _root() -> Path:
    from ncx.repo import find_root

    return find_root(Path.cwd())


def _config() -> Config:
    from ncx.config import load_config

    return load_config()


def _json_out(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
