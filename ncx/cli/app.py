"""cli_app: the typer app, the one error edge, and output helpers shared by command modules.

Command modules (cli.py, cli_memory.py, cli_migrate.py, ...) register on `app` through
`command`; nothing below the CLI imports this module.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO, TypeVar

import typer

from ncx.controls import strip_controls
from ncx.errors import NcxError

if TYPE_CHECKING:
    from ncx.config import Config
    from ncx.query.rank import Filters

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


def clean(text: str) -> str:
    """Text quoted from docs, memories, paths or tasks, made safe to show on a terminal."""
    return strip_controls(text)


class _Clean:
    """A text stream that strips terminal controls from everything written through it.

    `ncx`: how to name ncx in the commands the text quotes (`ncx sync`), where that is not
    `ncx` (started by the committed launcher, whose hints must be runnable the same way)."""

    def __init__(self, inner: TextIO, ncx: str = "ncx"):
        self._inner = inner
        self._ncx = ncx

    def write(self, text: str) -> int:
        out = clean(text)
        if self._ncx != "ncx":
            out = out.replace("`ncx ", f"`{self._ncx} ")
        self._inner.write(out)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.contextmanager
def _clean_streams() -> Iterator[None]:
    # The CLI edge: every line ncx prints (reports, frames, memory text, error messages)
    # passes here, so a heading or task holding `ESC ]` cannot drive the user's terminal.
    from ncx.config import command_name

    out, err = sys.stdout, sys.stderr
    # stderr is talk, hints included; stdout is data (frames name ncx by the tree's files)
    sys.stdout, sys.stderr = _Clean(out), _Clean(err, command_name())
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def _say(msg: str) -> None:
    # (Also outside the CLI edge's cleaned streams: the agent hooks print their warnings here.)
    print(strip_controls(msg), file=sys.stderr)


def _fail(exc: NcxError) -> typer.Exit:
    _say(exc.report())
    return typer.Exit(code=exc.exit_code)


def as_ncx_error(exc: BaseException) -> NcxError | None:
    """An unexpected exception as the one message a user sees (None: let it propagate).

    Every known failure is already an NcxError; this is the net under them, so a missed
    case is still one line naming the file, not a traceback."""
    if any(c.__module__.startswith(("click", "typer")) for c in type(exc).__mro__):
        return None  # the CLI framework's own exits and usage errors print themselves
    if isinstance(exc, (SystemExit, KeyboardInterrupt, GeneratorExit)):
        return None
    if isinstance(exc, OSError):
        name = exc.filename if isinstance(exc.filename, str) else None
        return NcxError(
            f"{exc.strerror or exc}",
            path=name,
            hint="check that the path exists, is the right kind (file or folder) and is writable",
        )
    if isinstance(exc, UnicodeError):
        return NcxError(f"text is not valid UTF-8 ({exc})", hint="re-save the file as UTF-8")
    if isinstance(exc, (RecursionError, MemoryError)):
        return NcxError(
            "input too large or too deeply nested to process",
            hint="run `ncx check` to find the file",
        )
    if os.environ.get("NCX_DEBUG"):
        return None
    return NcxError(
        f"internal error: {type(exc).__name__}: {str(exc)[:300]}",
        hint="this is a bug in ncx; run again with NCX_DEBUG=1 for the traceback and report it",
    )


def _silence_stdout() -> None:
    """Point stdout at the null device, so the flush at exit does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (a test runner's buffer): nothing left to flush into a pipe


def command(
    *args: Any, target: typer.Typer | None = None, look: bool = True, **kwargs: Any
) -> Callable[[F], F]:
    """app.command (or `target`.command for a sub-app such as `ncx memory`), with NcxError
    turned into a message and an exit code (the one edge). `look`: the command takes one
    look at the repository (ncx.repo.one_look); a long-lived one (the MCP server) does not."""
    from ncx.repo import one_look

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*a: Any, **kw: Any) -> Any:
            with _clean_streams(), one_look() if look else contextlib.nullcontext():
                try:
                    return fn(*a, **kw)
                except NcxError as exc:
                    raise _fail(exc) from None
                except BrokenPipeError:
                    # the reader left (`ncx retrieve ... | head`): stop quietly, as `cat` does
                    _silence_stdout()
                    raise typer.Exit(code=141) from None
                except Exception as exc:
                    err = as_ncx_error(exc)
                    if err is None:
                        raise
                    raise _fail(err) from None

        (target or app).command(*args, **kwargs)(wrapper)
        return fn

    return deco


def _root() -> Path:
    from ncx.repo import find_root

    return find_root(Path.cwd())


def _config() -> Config:
    from ncx.config import load_config

    return load_config()


@contextlib.contextmanager
def _answering(root: Path) -> Iterator[None]:
    """The run of a command that answers a query: a cache it must build first (a fresh
    clone's first query, after a pull) says so on stderr when that takes more than a second
    (ncx.slow); in a tree where no cache can be saved, the answer says it was built for
    this query only."""
    from ncx.query.cache import has_cache
    from ncx.query.warm import cache_writable
    from ncx.slow import say_to

    with say_to(_say):
        yield
    if not cache_writable(root) and not has_cache(root):
        # Every query here builds it in memory: the user should know why each is as slow.
        _say(
            "ncx: .neocortex/cache/ cannot be written here (a read-only tree): answered "
            "without writing a search cache"
        )


# Line breaks to str.splitlines that JSON leaves raw inside a string (text stays readable,
# ensure_ascii=False): escaped, so a JSON line holding a doc's U+2028 is still one line to a
# tool that splits the output into lines.
_RAW_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def json_text(data: Any, *, indent: int | None = None) -> str:
    """`data` as the JSON ncx prints: UTF-8 text, one line unless `indent`."""
    return json.dumps(data, indent=indent, ensure_ascii=False).translate(_RAW_BREAKS)


def _json_out(data: Any) -> None:
    sys.stdout.write(json_text(data, indent=2) + "\n")


def _filters(
    kind: list[str] | None,
    domain: list[str] | None,
    path: list[str] | None,
    include_superseded: bool,
) -> Filters:
    from ncx.query.rank import Filters

    kinds = frozenset(kind or [])
    bad = kinds - {"chunk", "memory", "code"}
    if bad:
        raise typer.BadParameter(
            f"unknown kind {sorted(bad)[0]!r}; use chunk, memory or code", param_hint="--kind"
        )
    return Filters(
        kinds=kinds,
        domains=frozenset(d.lower() for d in domain or []),
        path_globs=tuple(path or []),
        include_hidden=include_superseded,
    )


AtOpt = Annotated[
    str | None,
    typer.Option(
        "--at",
        metavar="REV",
        help="Answer from the knowledge of commit REV, without checking it out (the "
        "bytes a checkout of REV gives).",
    ),
]
