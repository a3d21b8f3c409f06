"""cli_model: `ncx model` — show, fetch and switch the tree's embedding model."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ncx.cli.app import _config, _root, _say, app, command

model_app = typer.Typer(
    help="The tree's embedding model: show it, fetch a hub model on purpose, switch to another.",
    invoke_without_command=True,
)
app.add_typer(model_app, name="model")


@model_app.callback()
def model_show(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Show the model of this tree (id, dim, sha256 of the weights, where it loads from)."""
    if ctx.invoked_subcommand is not None:
        return
    from ncx.cli.app import _fail
    from ncx.errors import NcxError
    from ncx.tree.model_ops import model_info

    try:
        info = model_info(_root(), _config())
    except NcxError as exc:
        raise _fail(exc) from None
    if as_json:
        sys.stdout.write(json.dumps(info, indent=2) + "\n")
        return
    state = info.get("source", "") if info["available"] else f"NOT AVAILABLE: {info.get('problem')}"
    print(f"{info['id']}  dim {info['dim']}  sha256 {str(info['sha256'])[:16]}…  {state}")
    if info.get("override"):
        print(f"NCX_EMBEDDING_MODEL={info['override']} differs: `ncx model use` it to switch")


@command("fetch", target=model_app)
def model_fetch(
    hub_id: Annotated[
        str,
        typer.Argument(
            help="A model2vec model on the Hugging Face hub, e.g. minishlab/potion-base-8M."
        ),
    ],
    timeout: Annotated[
        float, typer.Option("--timeout", help="Give up after this many seconds.")
    ] = 120.0,
) -> None:
    """Download a hub model once (needs network); afterwards it loads offline.

    Example: ncx model fetch minishlab/potion-base-8M && ncx model use minishlab/potion-base-8M
    """
    from ncx.tree.model_ops import fetch_model

    path = fetch_model(hub_id, _config(), timeout=timeout)
    print(path)


@command("use", target=model_app)
def model_use(
    model: Annotated[
        str,
        typer.Argument(
            help="bundled name (ncx-static-v2), a local model2vec folder, or a fetched hub id."
        ),
    ],
) -> None:
    """Switch this tree to another model and re-embed every chunk and memory.

    Example: ncx model use ./models/my-model2vec
    """
    from ncx.tree.model_ops import switch_model

    report = switch_model(_root(), _config(), model)
    _say(
        f"ncx: re-embedded {report.embedded} units with {model}; {len(report.written)} files written"
    )
    _say("next: review and commit .neocortex/ (every vector changed)")
