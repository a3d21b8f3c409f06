"""cli: the `ncx` command line. Thin: build a Config, call one core function, print, exit.

Heavy modules (numpy, the model, git plumbing) are imported inside the commands that
use them, so `ncx --help` and the hooks' no-op paths stay near the interpreter floor.
stdout carries data (reports, JSON, frames); stderr carries progress, warnings, errors.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ncx.cli.app import (
    AtOpt,
    _answering,
    _config,
    _filters,
    _json_out,
    _root,
    _say,
    app,
    command,
    json_text,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ncx.code.rank import CodeHit
    from ncx.code.search import CodeSearcher
    from ncx.query.rank import Filters
    from ncx.tree.status import CodeStatus


@command()
def init(
    model: Annotated[
        str | None,
        typer.Option(
            help="Embedding model: a local model2vec folder or a fetched hub id. "
            "Default: the bundled model (or NCX_EMBEDDING_MODEL)."
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude", help="Glob of docs never to index (repeatable), e.g. 'vendor/**'."
        ),
    ] = None,
    skip_format: Annotated[
        list[str] | None,
        typer.Option(
            "--skip-format",
            help="A source format never to index (repeatable): markdown, rst, notebook, mdx or asciidoc.",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")] = False,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            help="Also install ncx into an agent's files: claude, cursor, codex or all "
            "(repeatable). See README 'Use with your agent'.",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="With --agent: print the changes as a diff; write nothing."),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="With --agent: also replace a launcher (.neocortex/bin/ncx) edited by hand.",
        ),
    ] = False,
) -> None:
    """Create .neocortex/ in this git repository (safe to re-run).

    With --agent, also write the agent's protocol block, hooks and MCP server config;
    existing files keep the user's text, and re-running changes nothing.
    Example: ncx init --agent claude --dry-run
    """
    from ncx.agents.install import resolve_agents
    from ncx.tree.init import init_tree

    root = _root()
    agents = resolve_agents(agent) if agent else ()  # a bad name fails before any write
    tree: list[str] = []
    if dry_run:
        from ncx.layout import manifest_path

        if not manifest_path(root).exists():
            _say("ncx: would create .neocortex/ (manifest, chunks/, memories/)")
    else:
        tree = init_tree(
            root, _config(), model=model, exclude=exclude or [], skip_formats=skip_format or []
        ).written
        from ncx.agents.install import remember_ncx

        remember_ncx(root)  # this clone's launcher starts this ncx (git config ncx.bin)
    if agents:
        _install_agents(root, agents, dry_run=dry_run, quiet=quiet, tree=tree, force=force)
    elif not quiet and not dry_run:
        for path in tree:
            print(f"wrote {path}")
        _say(
            "next: `ncx sync` to chunk and embed your docs"
            if tree
            else "ncx: already initialised; nothing to do"
        )


def _install_agents(
    root: Path,
    agents: tuple[str, ...],
    *,
    dry_run: bool,
    quiet: bool,
    tree: list[str],
    force: bool = False,
) -> None:
    from ncx.agents.install import (
        apply_plan,
        diff_text,
        ncx_command,
        plan_install,
        verify_command,
    )
    from ncx.layout import LAUNCHER

    plan = plan_install(root, agents, workflow=len(agents) == 3, force=force)
    if dry_run:
        for change in plan.changes:
            sys.stdout.write(diff_text(change))
        written = [c.path for c in plan.changes]
    else:
        written = apply_plan(root, plan)
    if quiet:
        return
    if not dry_run:
        for path in [*tree, *written]:
            print(f"wrote {path}")
    for note in plan.notes:
        _say(f"ncx: note: {note}")
    who, verb = ", ".join(agents), "would write" if dry_run else "wrote"
    _say(
        f"ncx: {who}: {verb} {len(written)} file(s)"
        if written
        else f"ncx: {who}: already installed; nothing to do"
    )
    if not dry_run:  # the agents start ncx through the launcher: prove it finds one here
        worked, said = verify_command([str(root / LAUNCHER)])
        if worked:
            _say(f"ncx: checked: `{LAUNCHER} --version` -> {said}")
        else:
            own = ncx_command()
            fix = (
                f"export NCX_BIN={shlex.quote(own[0])} (in your shell profile)"
                if len(own) == 1
                else "install ncx as the README's Set-up does (~/.ncx), or with pipx or uv tool"
            )
            _say(
                f"ncx: warning: `{LAUNCHER} --version` found no ncx on this machine ({said}); "
                f"the agents cannot start ncx here until you {fix}"
            )
    if LAUNCHER in written and not dry_run:
        _say(f"ncx: commit {LAUNCHER} with the agents' files: they start ncx through it")
    if tree:
        _say("next: `ncx sync` to chunk and embed your docs")


@command()
def sync(
    paths: Annotated[
        list[str] | None, typer.Argument(help="Limit the run to these docs or folders.")
    ] = None,
    reembed: Annotated[
        bool, typer.Option("--reembed", help="Re-embed every unit with the configured model.")
    ] = False,
    staged: Annotated[
        bool,
        typer.Option("--staged", help="Read docs from the git index (what a commit will hold)."),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change; write nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print only the summary line, errors, each credential found (always "
            "said), and a count of the files not indexed.",
        ),
    ] = False,
) -> None:
    """Chunk and embed changed docs; drop chunks of removed docs; re-embed edited memories.

    Exit 1 if any doc could not be read (the rest is still synced).
    Example: ncx sync docs/
    """
    from ncx.sources import describe
    from ncx.tree.merge import ensure_driver
    from ncx.tree.sync import sync as run_sync

    root = _root()
    ensure_driver(root)
    report = run_sync(
        root,
        _config(),
        paths=paths or [],
        staged=staged,
        reembed=reembed,
        dry_run=dry_run,
        progress=None if quiet or as_json else lambda m: _say(f"ncx: {m}"),
    )
    code = None
    if not staged and not dry_run and not paths:
        # The moment a person runs sync is the one to read the code too: the code index is
        # derived (cache/, keyed by git blob ids), so this writes nothing a commit holds.
        code, code_secrets = _warm_code(quiet or as_json)
    else:
        code_secrets = []
    if as_json:
        _json_out(
            {
                "written": report.written,
                "removed": report.removed,
                "embedded": report.embedded,
                "docs": report.docs,
                "chunks": report.chunks,
                "memories": report.memories,
                "formats": {
                    name: {"docs": n, "chunks": report.chunks_by_format.get(name, 0)}
                    for name, n in sorted(report.by_format.items())
                },
                "skipped": [{"path": p, "reason": why} for p, why in report.skipped],
                "problems": [
                    {"path": e.path, "message": e.message, "hint": e.hint} for e in report.problems
                ],
                "secrets": [
                    {"path": p, "line": n, "kind": k}
                    for p, n, k in sorted({*report.secrets, *code_secrets})
                ],
                "dry_run": dry_run,
                **({"code": code.to_json()} if code is not None else {}),
            }
        )
    else:
        if not quiet:
            from ncx.tree.precommit import SUMMARY_LIMIT, summarise

            verb = "would write" if dry_run else "wrote"
            lines = [f"{verb} {p}" for p in report.written]
            lines += [f"{'would remove' if dry_run else 'removed'} {p}" for p in report.removed]
            # A first sync writes two files per chunk: past the limit, a few and a count
            # (`--json` lists every file).
            summarise(lines, print)
            if len(lines) > SUMMARY_LIMIT:
                print("(`ncx sync --json` lists every file)")
        for exc in report.problems:
            _say(exc.report())
        from ncx.code.guard import secret_warnings as code_warnings
        from ncx.tree.sync import secret_warnings

        # said by every sync, -q too: a credential in the tree is the user's to remove
        for line in [*secret_warnings(report), *code_warnings(code_secrets)]:
            _say(line)
        if quiet and report.skipped:
            _say(f"ncx: {len(report.skipped)} file(s) not indexed (see `ncx sync --dry-run`)")
        elif report.skipped:
            for p, why in report.skipped:
                _say(f"ncx: skipped {p}: {why}")
        kinds = describe(report.by_format)
        docs = f"{report.docs} docs" + (f": {kinds};" if kinds else ",")
        if report.changed:
            _say(
                f"ncx: {len(report.written)} written, {len(report.removed)} removed, "
                f"{report.embedded} embedded ({docs} {report.chunks} chunks)"
            )
        elif report.problems:  # not "up to date": something asked for was not done
            _say(f"ncx: nothing written ({docs} {report.chunks} chunks); see the error above")
        else:
            _say(f"ncx: up to date ({docs} {report.chunks} chunks); nothing written")
    if not dry_run:
        from ncx.tree.merge import unmerged_advice

        if (advice := unmerged_advice(root)) is not None:
            _say(advice)
    if not dry_run and not staged:
        from ncx.query.warming import warm_if_worth_it

        # the chunks it wrote make the search cache stale: rebuilt now, detached, so the
        # first query after a sync answers from it (docs/design.md "Warming")
        warm_if_worth_it(root)
    if report.problems:
        raise typer.Exit(code=1)


@command()
def status(as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False) -> None:
    """One short summary: docs, chunks, memories, model, stale items.

    Example: ncx status --json
    """
    from ncx.tree.status import tree_status

    root = _root()
    st = tree_status(root, _config())
    from ncx.memory.stale import stale_memories

    stale = stale_memories(root) if st.memories else []
    if as_json:
        _json_out({**st.to_json(), "stale_memories": [_stale_json(c) for c in stale]})
        return
    from ncx.sources import describe

    kinds = describe(st.formats)
    line = (
        f"ncx: {st.docs} docs"
        + (f" ({kinds})" if kinds else "")
        + f", {st.chunks} chunks, {st.memories} memories; "
        f"model {st.model.id} ({st.model.dim}d"
        + ("); " if st.model.available else ", not available here: run `ncx check`); ")
    )
    line += f"{st.stale} stale (run `ncx sync`)" if st.stale else "up to date"
    if st.problems:
        line += f"; {st.problems} problems (run `ncx check`)"
    print(line)
    for line in _skipped_lines(st.skipped):
        print(line)
    print(_code_line(st.code.files, st.code.built, list(st.code.left_out), st.code.stale))
    if st.v2:
        print("v2 tree .mlda/ still present: `ncx migrate` carries its edits over")
    if st.memories > 1:
        from ncx.memory.dupes import near_duplicates

        for pair in near_duplicates(root):  # as a merge of two branches can leave them
            print(f"near-duplicate memories: {pair}")
    _print_stale(root, stale, out=print)


STALE_SHOWN = 5  # stale citations a status line lists; --json lists all
SKIPPED_SHOWN = 5  # files not indexed a status line names for one reason; --json lists all


def _skipped_lines(skipped: Sequence[tuple[str, str]]) -> list[str]:
    """The files not indexed, a line per reason (a reason and its hint said once: a tree's
    two changelogs were two lines of one long hint, 150 tokens of a status promised under
    100), its first SKIPPED_SHOWN files named."""
    by_why: dict[str, list[str]] = {}
    for path, why in skipped:
        by_why.setdefault(why, []).append(path)
    out = []
    for why, paths in by_why.items():
        named = ", ".join(paths[:SKIPPED_SHOWN])
        more = f" and {len(paths) - SKIPPED_SHOWN} more" if len(paths) > SKIPPED_SHOWN else ""
        out.append(f"not indexed: {named}{more}: {why}")
    return out


def _code_line(
    files: int, built: bool, left_out: list[tuple[str, str]], stale: bool = False
) -> str:
    from ncx.code.scope import summary

    line = f"code: {files} source files"
    if stale:  # (an edit since it was saved: the next query or sync reads the changed files)
        line += " (index out of date: the next query or `ncx sync` updates it)"
    elif not built:
        line += " (index not built: `ncx sync`)"
    return line + (f"; {summary(left_out)}" if left_out else "")


def _stale_json(c: Any) -> dict[str, Any]:
    return {"memory": c.memory, **c.cite.to_meta(), "gone": c.gone}


def _print_stale(root: Path, stale: list[Any], *, out: Any, prefix: str = "") -> None:
    """The stale memories, counted, then the first few with the commits since (status: data
    on stdout; check: warnings on stderr)."""
    from ncx.memory.cites import by_memory, commits_since

    if not stale:
        return
    mems = by_memory(stale)
    out(
        f"{prefix}{len(mems)} memor{'y' if len(mems) == 1 else 'ies'} cite code or docs that "
        "changed since they were written (ranked down until `ncx memory evolve ID --confirm`)"
    )
    for c in stale[:STALE_SHOWN]:
        n = commits_since(root, c.memory, c.cite.path)
        when = "" if n is None else (f" (in {n} commit{'s' * (n != 1)})" if n else " (uncommitted)")
        out(f"{prefix}{c.line(advice=False)}{when}")
    if len(stale) > STALE_SHOWN:
        out(f"{prefix}... and {len(stale) - STALE_SHOWN} more (ncx status --json lists all)")


@command()
def check(
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="REV",
            help="Judge only what HEAD changed since its merge base with REV (docs, sidecars, "
            "chunk files, memories), in the commit itself, as the commit hook does: for CI on "
            "a branch or pull request, where REV was checked when it landed. Cost grows with "
            "the change, not the tree.",
        ),
    ] = None,
) -> None:
    """Verify .neocortex/ (frontmatter, vectors, model, stale chunks); never writes.

    Exit 1 with one line per problem. Examples: ncx check (the whole working tree);
    ncx check --since origin/main (what the branch changed, judged in HEAD)
    """
    root = _root()
    problems: list[object]
    if since is not None:
        from ncx.tree.staged import verify_range

        verdict = verify_range(root, _config(), since)
        problems = list(verdict.findings)
        ok = (
            f"ncx: OK: what HEAD changed since {since} ({len(verdict.docs)} doc(s), "
            f"{verdict.units} unit(s))"
        )
    else:
        from ncx.tree.check import check_tree

        problems = list(check_tree(root, _config()))
        ok = "ncx: tree OK"
    for p in problems:
        print(p)
    if since is not None:
        # A warning, never a failure: the code change is legitimate and the memory may well
        # still hold; a person confirms or corrects it (docs/decisions.md §36).
        from ncx.memory.stale import stale_memories

        _print_stale(root, stale_memories(root), out=_say, prefix="ncx: warning: ")
    if problems:
        _say(f"ncx: {len(problems)} problem(s)")
        raise typer.Exit(code=1)
    _say(ok)


@command()
def retrieve(
    query: Annotated[str | None, typer.Argument(help="What to look for.")] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=1, help="How many results.")] = 10,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="JSON lines: id, kind, source_path, start_line, end_line, section, score, text.",
        ),
    ] = False,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help='Read {"qid","query","k"} JSON lines on stdin; print one {"qid","results"} line each.',
        ),
    ] = False,
    kind: Annotated[
        list[str] | None,
        typer.Option("--kind", help="chunk, memory or code (repeatable) [default: all three]."),
    ] = None,
    domain: Annotated[
        list[str] | None, typer.Option("--domain", help="Only these domains (repeatable).")
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="Only sources matching this glob (repeatable)."),
    ] = None,
    include_superseded: Annotated[
        bool,
        typer.Option(
            "--include-superseded", help="Also show superseded, deprecated and proposed memories."
        ),
    ] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show the score parts of each result.")
    ] = False,
    at: AtOpt = None,
    task: Annotated[
        str | None,
        typer.Option("--task", help="The query, written as `ncx assemble --task` takes it."),
    ] = None,
) -> None:
    """Find the chunks, memories and code that best match a query.

    Docs and memories are ranked by BM25F + static embeddings; code (definitions in the
    tracked source files) by BM25F over names, signatures and docstrings, and the files'
    reference graph. A code hit names path:lines and the symbol.

    Example: ncx retrieve "how do I rotate the signing key" --k 5 --json
    Example: ncx retrieve "where are retries configured" --kind code
    """
    import dataclasses
    import time

    from ncx.code.search import CodeSearcher
    from ncx.query.fuse import combined, merged
    from ncx.query.quote import shown_trail
    from ncx.query.search import Searcher, clip_query

    filters = _filters(kind, domain, path, include_superseded)
    root = _root()
    want_code, want_docs = _wanted(filters)
    if at is not None:
        from ncx.eval.at import materialise, with_knowledge

        # its own cache, built there once; code alone needs no knowledge at that commit
        root = (with_knowledge if want_docs else materialise)(root, at).root
    code = CodeSearcher(root)
    if batch:
        searcher = Searcher.open(root, _config())
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                req = json.loads(line)
                q, qk = str(req["query"]), req.get("k", k)
                if isinstance(qk, bool) or not isinstance(qk, int) or not 1 <= qk <= 10_000:
                    raise ValueError(f"k must be a whole number from 1 to 10000, not {qk!r}")
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise typer.BadParameter(f"bad request line {line.strip()[:80]!r}: {exc}") from None
            q, note = clip_query(q)
            if note is not None:
                _say(f"ncx: qid {req.get('qid')!r}: {note}")
            t = time.perf_counter()
            results = combined(searcher, code, q, qk, filters, explain=explain)
            ms = (time.perf_counter() - t) * 1000
            out = {"qid": req.get("qid"), "results": results, "latency_ms": round(ms, 3)}
            sys.stdout.write(json_text(out) + "\n")
        return
    if task is not None:
        if query:
            raise typer.BadParameter("give the query once: as an argument or as --task")
        query = task
    if not query:
        raise typer.BadParameter("give a query, or --batch to read queries from stdin")
    query, note = clip_query(query)
    if note is not None:
        _say(f"ncx: {note}")
    if not want_docs:
        _print_code(code, query, k, filters, as_json, explain)
        return
    # A fresh clone's first query builds the caches it needs and answers from them: the
    # same answer as every later query (docs/decisions.md §44).
    code.on_read = lambda n: _say(f"ncx: reading {n} source files for the code index (once)")
    with _answering(root):
        searcher = Searcher.open(root, _config())
        if as_json:
            for r in combined(searcher, code, query, k, filters, explain=explain):
                sys.stdout.write(json_text(r) + "\n")
            return
        hits = searcher.search(
            query, k=k, filters=dataclasses.replace(filters, kinds=filters.kinds - {"code"})
        )
        code_hits = code.search(query, files=k, path_globs=filters.path_globs) if want_code else []
    if not hits and not code_hits:
        _say("ncx: no match")
        return
    rows = merged(hits, code_hits, k)
    from ncx.code.rank import CodeHit

    for rank, h in enumerate(rows, 1):
        if isinstance(h, CodeHit):
            _print_code_hit(rank, h, explain)
            continue
        where = f"{h.source_path}:{h.start_line}-{h.end_line}" if h.start_line else h.source_path
        where += f" (cell {h.cell})" if h.cell else ""
        trail = " > ".join(shown_trail(h.section))
        print(f"{rank:>2}. {h.score:.3f}  {where}  [{h.kind}] {trail}")
        if explain:
            parts = [f"{k}={v}" for k, v in h.why.items()]
            print("      " + ", ".join([*parts, f"confidence={h.confidence:.3f}"]))
        snippet = " ".join(searcher.text(h).split())[:160]
        print(f"      {snippet}")
    if any(isinstance(h, CodeHit) for h in rows) and not all(isinstance(h, CodeHit) for h in rows):
        # (three new users read the interleaved scores, 1.24 then 0.38 then 0.68, as a bug)
        _say(
            "ncx: docs and code interleaved, each best first by its own score "
            "(`--kind chunk` or `--kind code` lists one)"
        )
    if hits and hits[0].weak and not code_hits:
        _say(
            f"ncx: weak evidence: the best match has {hits[0].confidence:.0%} of the query's "
            "terms; the answer may not be in the docs"
        )


def _warm_code(quiet: bool) -> tuple[CodeStatus, list[tuple[str, int, str]]]:
    """Load or build the code index: what it holds and left out, and the credentials it
    found, (path, line, kind)."""
    from ncx.code.index import load_code_index
    from ncx.tree.status import code_status

    def said(n: int) -> None:
        if not quiet:
            _say(f"ncx: reading {n} source files for the code index (cache/, not committed)")

    idx = load_code_index(_root(), on_read=said)
    from ncx.history.log import update_history

    update_history(_root())  # the commits' evidence for the code, O(new commits)
    got = code_status(_root())
    if not quiet and (len(idx) or got.left_out):
        from ncx.code.scope import summary

        line = f"ncx: code: {got.files} source files, {len(idx)} definitions"
        _say(line + (f"; {summary(list(got.left_out))}" if got.left_out else ""))
    return got, list(idx.secrets)


def _wanted(filters: Filters) -> tuple[bool, bool]:
    """(code, docs-or-memories): what a --kind list asks for; none asks for all."""
    kinds = filters.kinds
    return (not kinds or "code" in kinds), (not kinds or bool(kinds - {"code"}))


def _print_code(
    code: CodeSearcher, query: str, k: int, filters: Filters, as_json: bool, explain: bool
) -> None:
    from ncx.code.search import best_per_file

    code.on_read = lambda n: _say(f"ncx: reading {n} source files for the code index (once)")
    hits = code.search(query, files=k, path_globs=filters.path_globs)
    if as_json:  # k lines, as the text lists: each of the k files' best definition
        for h in best_per_file(hits):
            sys.stdout.write(json_text(code.hit_json(h, explain=explain)) + "\n")
        return
    if not hits:
        _say("ncx: no match in the code")
        return
    for rank, h in enumerate(best_per_file(hits), 1):
        _print_code_hit(rank, h, explain)


def _print_code_hit(rank: int, h: CodeHit, explain: bool) -> None:
    from ncx.code.search import describe

    sym = f"{h.kind} {h.qualname}" if h.qualname else "module"
    from ncx.code.text import shown_path

    where = f"{shown_path(h.path)}:{h.start}-{h.end}"
    print(f"{rank:>2}. {h.file_score:.3f}  {where}  [code] {sym}")
    if explain:
        parts = [f"{k}={v}" for k, v in h.why.items()]
        print("      " + ", ".join([*parts, f"confidence={h.confidence:.3f}"]))
    print(f"      {' '.join(describe(h).split())[:160]}")


# The command groups defined in their own modules register on `app` when imported; import
# them here, explicitly, so `ncx --help` lists every command.
import ncx.cli.agent  # noqa: E402
import ncx.cli.bench  # noqa: E402
import ncx.cli.eval  # noqa: E402
import ncx.cli.frames  # noqa: E402
import ncx.cli.hooks  # noqa: E402
import ncx.cli.memory  # noqa: E402
import ncx.cli.migrate  # noqa: E402
import ncx.cli.model  # noqa: E402, F401


def main() -> None:
    """The typer app; `ncx` itself starts in ncx.cli.entry (BLAS threads, the hooks' path)."""
    import os

    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # see ncx.cli.entry
    app()
