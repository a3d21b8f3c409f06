"""cli_hooks: `ncx hook ...` (what .pre-commit-hooks.yaml runs) and `ncx review`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from ncx.cli.app import _config, _json_out, _root, _say, app, command
from ncx.query.warming import warm_if_worth_it

hook_app = typer.Typer(
    help="Entry points for pre-commit (see .pre-commit-hooks.yaml): they write derived files "
    "and exit 1 so you review and stage them; they never run `git add`.",
    no_args_is_help=True,
)
app.add_typer(hook_app, name="hook")


def _out(line: str) -> None:
    print(line)


@command("sync", target=hook_app)
def hook_sync() -> None:
    """Re-chunk the docs (and re-embed the memories) this commit stages; exit 1 if it wrote files.

    Example (.pre-commit-config.yaml): hooks: [{id: ncx-sync}]
    """
    from ncx.tree.merge import ensure_driver
    from ncx.tree.precommit import hook_sync as run

    root = _root()
    ensure_driver(root)  # (`ncx hook sync` itself takes ncx.cli.entry's shortcut, which does too)
    raise typer.Exit(code=run(root, _config(), _say, _out))


@command("check", target=hook_app)
def hook_check(
    full: Annotated[
        bool,
        typer.Option(
            "--all", help="Check the whole tree, even inside `git commit` or for a ref range."
        ),
    ] = False,
) -> None:
    """Validate .neocortex/; never writes. Inside `git commit`: only what the commit touches,
    judged in the index. With a ref range (pre-push; CI: `pre-commit run --from-ref BASE
    --to-ref HEAD`): what the range changed, judged in its last commit, like
    `ncx check --since BASE`. Otherwise (`pre-commit run --all-files`): like `ncx check`.
    """
    from ncx.tree.precommit import check_stage
    from ncx.tree.precommit import hook_check as run

    staged, span = check_stage(os.environ, full=full)
    pushing = bool(os.environ.get("PRE_COMMIT_REMOTE_NAME"))  # set by pre-push only
    raise typer.Exit(
        code=run(_root(), _config(), _say, _out, staged=staged, span=span, pushing=pushing)
    )


@command("post-merge", target=hook_app)
def hook_post_merge() -> None:
    """After a merge or a rebase (post-rewrite): re-sync the chunks of the docs that changed,
    in the working tree, and say the one command that commits the fix.

    Example (.pre-commit-config.yaml): default_install_hook_types: [pre-commit, post-merge,
    post-rewrite] and hooks: [{id: ncx-sync-after-merge}]. Run as a post-checkout hook it
    follows branch switches too.
    """
    from ncx.tree.precommit import hook_after

    env = os.environ
    if env.get("PRE_COMMIT_CHECKOUT_TYPE") is not None:
        if env.get("PRE_COMMIT_CHECKOUT_TYPE") != "1":
            raise typer.Exit(code=0)  # a file checkout (`git checkout -- path`): nothing to follow
        base, what = env.get("PRE_COMMIT_FROM_REF", ""), "checkout"
    elif env.get("PRE_COMMIT_REWRITE_COMMAND") == "amend":
        base, what = "HEAD@{1}", "amend"
    elif env.get("PRE_COMMIT_REWRITE_COMMAND") is not None:
        base, what = "ORIG_HEAD", "rebase"
    else:
        base, what = "ORIG_HEAD", "merge"
    root = _root()
    from ncx.tree.merge import ensure_driver

    ensure_driver(root)
    code = hook_after(root, _config(), _say, _out, base=base, what=what)
    # The moment git gives: after a pull, a merge, a rebase or a branch switch, bring the
    # search cache and the code index up to date now, off the user's time, so the first
    # query after it answers from them (a fresh clone's first checkout builds both).
    warm_if_worth_it(root)
    raise typer.Exit(code=code)


@command("merge-chunks", target=hook_app)
def hook_merge_chunks(
    base: Annotated[Path, typer.Argument(help="The common ancestor's version (%O).")],
    ours: Annotated[Path, typer.Argument(help="This branch's version; the result goes here (%A).")],
    theirs: Annotated[Path, typer.Argument(help="The other branch's version (%B).")],
    path: Annotated[str | None, typer.Argument(help="The chunk file's path (%P).")] = None,
) -> None:
    """git's merge driver for a doc's chunk file (set up by `ncx init` and by the hooks):
    the text merge when it is clean, else this branch's version kept, without conflict
    markers, and the file reported merged: it is derived from the doc, and the hooks (or
    `ncx sync`) rewrite it from the merged doc.
    """
    from ncx.tree.merge import merge_chunk_file

    if not merge_chunk_file(base, ours, theirs):
        # Exit 0: a chunk file left unmerged is a step nobody can take but by hand (git
        # refuses the commit before any hook runs), and the right content is not either side.
        _say(
            f"ncx: {path or 'a chunk file'}: both sides changed the same section; this "
            "side's chunks kept, without markers: once the doc is merged, the ncx hooks "
            "(or `ncx sync`) rewrite them from it"
        )
    raise typer.Exit(code=0)


@command("migrate", target=hook_app)
def hook_migrate() -> None:
    """Carry edits of a v2 `.mlda/` tree over to .neocortex/ during the transition; exit 1 if it wrote."""
    root = _root()
    if not (root / ".mlda").is_dir():
        raise typer.Exit(code=0)  # no v2 tree (any more): nothing to carry over
    from ncx.v2 import migrate

    raise typer.Exit(code=migrate.migrate_changed(root, _config(), _say, _out))


@command()
def review(
    rev_range: Annotated[
        str | None,
        typer.Argument(
            metavar="[BASE..HEAD]",
            help="What HEAD adds since it left BASE (git's meaning; BASE...HEAD too) "
            "[default: merge base with main..HEAD].",
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="markdown or json.")] = "markdown",
    as_json: Annotated[
        bool, typer.Option("--json", help="The full report as JSON (same as --format json).")
    ] = False,
    limit: Annotated[
        int,
        typer.Option(
            "--limit",
            min=0,
            help="Markdown on stdout shows at most this many memories, docs and problems "
            "each, then '… N more' (0: no cap).",
        ),
    ] = 30,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Also write the full, uncapped markdown report here."),
    ] = None,
    fail_on_problems: Annotated[
        bool, typer.Option("--fail-on-problems", help="Exit 1 if the check finds problems.")
    ] = False,
    full_check: Annotated[
        bool,
        typer.Option(
            "--full-check",
            help="Check the whole working tree (`ncx check`) instead of what the range "
            "changed, judged in HEAD (`ncx check --since BASE`, the default: its cost grows "
            "with the branch, not the tree).",
        ),
    ] = False,
    no_check: Annotated[bool, typer.Option("--no-check", help="Skip the check.")] = False,
) -> None:
    """The knowledge change of a branch, ready to paste as a PR comment.

    Memories added / changed / superseded / removed with their text, docs re-chunked
    (which sections; docs added, renamed, deleted), model and manifest changes, and the
    problems of what the range changed (`ncx check --since`; --full-check: the whole tree).
    Example: ncx review main..HEAD --out review-full.md
    """
    from ncx.tree.review import build_review, render_markdown, resolve_range

    if fmt not in ("markdown", "json"):
        raise typer.BadParameter("use markdown or json", param_hint="--format")
    root = _root()
    base, head = resolve_range(root, rev_range)
    rev = build_review(root, base, head, spec=rev_range or "")
    if not no_check and (root / ".neocortex" / "manifest.json").is_file():
        if full_check:
            from ncx.tree.check import check_tree

            rev.problems = [str(p) for p in check_tree(root, _config())]
        else:
            from ncx.tree.staged import verify_range

            rev.problems = [str(f) for f in verify_range(root, _config(), base, head).findings]
    if (root / ".neocortex" / "manifest.json").is_file():
        from ncx.memory.stale import stale_memories

        rev.stale = [c.line() for c in stale_memories(root)]
    from ncx.eval.review import eval_delta

    eval_delta(root, _config(), rev, base, head)
    if out is not None:
        out.write_text(render_markdown(rev), encoding="utf-8")
    if as_json or fmt == "json":
        _json_out(rev.as_json())
    else:
        sys.stdout.write(render_markdown(rev, limit=limit or None))
    if fail_on_problems and rev.problems:
        _say(f"ncx: {len(rev.problems)} problem(s)")
        raise typer.Exit(code=1)
