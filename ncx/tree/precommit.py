"""hooks: what the pre-commit hooks run. Returns exit codes; writes derived files, never stages.

pre-commit's contract (docs/decisions.md §12): a hook that writes files says what it
wrote and exits 1, so the user reviews and stages them; it never runs `git add`.
pre-commit passes no deleted files and may split long file lists, so the hooks ask git for
the staged changes themselves (pass_filenames: false). What they judge is the index
(ncx.tree.staged): the staged docs against the staged chunk files, never the working tree
or a cache, and only the units the commit touches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ncx import repo
from ncx.config import Config
from ncx.errors import NcxError
from ncx.layout import MANIFEST, NCX_DIR, doc_chunk_file
from ncx.tree.staged import Finding, changes, scope_of, staged_changes

Say = Callable[[str], None]
# More lines than this and a hook prints the first few and a count instead of all of them.
SUMMARY_LIMIT = 20
_HEAD_LINES = 5


def _manifest_left_out(root: Path) -> str | None:
    """The commit keeps .neocortex/ files but not their manifest (`git rm` or `git rm --cached`
    of it): every ncx command in a clone would then say there is no tree, and every later
    commit would skip the hooks. Only asked when the commit touches .neocortex/ or a doc."""
    manifest = f"{NCX_DIR}/{MANIFEST}"
    held = repo.tracked_files(root, [NCX_DIR])
    if not held or manifest in held:
        return None
    return (
        f"{manifest}: is not in the commit, but {len(held)} other file(s) under {NCX_DIR}/ "
        f"are; restore it (`git checkout HEAD -- {manifest}`, or `git add {manifest}`), "
        f"or remove the whole tree (`git rm -r {NCX_DIR}`)"
    )


def _tree_gate(root: Path, say: Say, absent: str) -> int | None:
    """The exit code when a hook must stop before judging anything (a commit that drops the
    manifest but keeps its tree: 1; no tree here: 0, saying `absent`); None to go on."""
    if (gone := _manifest_left_out(root)) is not None:
        say(gone)
        return 1
    if not (root / NCX_DIR / MANIFEST).is_file():
        say(absent)
        return 0
    return None


def hook_sync(root: Path, cfg: Config, say: Say, out: Say) -> int:
    """Write the chunk files of the docs this commit changes from their staged text; 1 if the
    commit does not hold matching chunk files (written now or only unstaged)."""
    scope = scope_of(staged_changes(root))
    # Trigger: nothing this commit touches is a doc, a sidecar, a chunk, a memory or the
    # manifest. Why: most commits are code; they must cost no more than the CLI floor.
    # Outcome: exit 0 before numpy, the model or the manifest are even looked at.
    if scope.empty:
        return 0
    if (
        stop := _tree_gate(root, say, "ncx: no .neocortex/ here; run `ncx init` (hook skipped)")
    ) is not None:
        return stop
    from ncx.tree.staged import verify
    from ncx.tree.sync import sync

    verdict = verify(root, cfg, None if scope.everything else scope)
    if not verdict.findings:
        return 0
    stale = verdict.stale_docs()
    # Docs the commit changes get their chunks from their staged text. Chunks staged
    # without their doc are not overwritten: the doc's unstaged edit is what they follow.
    fixable = [d for d in stale if d in scope.changed_docs or scope.everything]
    memories = any(f.syncable and f.doc is None for f in verdict.findings)
    written: list[str] = []
    removed: list[str] = []
    if fixable or memories:
        # Absolute paths: sync reads user paths relative to the cwd (a subdirectory here).
        paths = [str(root / d) for d in fixable] or [str(root / NCX_DIR / "memories")]
        report = sync(root, cfg, paths=paths, staged=True)
        written, removed = report.written, report.removed
        summarise(
            [f"ncx: wrote {p}" for p in written] + [f"ncx: removed {p}" for p in removed], out
        )
        for exc in report.problems:
            say(exc.report())
        from ncx.tree.sync import secret_warnings

        for line in secret_warnings(report):
            say(line)
    # What sync just rewrote is not repeated; the rest (chunks staged without their doc,
    # broken docs, secrets in memories, unresolved conflicts) is printed as found.
    rest = [f for f in verdict.findings if not (f.syncable and (f.doc in fixable or f.doc is None))]
    summarise([str(f) for f in rest], out)
    if fixable or (memories and not rest):
        docs = " ".join(fixable)
        what = (
            f"{len(written) + len(removed)} file(s) written under {NCX_DIR}/ for the staged docs"
            if written or removed
            else f"{NCX_DIR}/ is right in the working tree but the commit does not hold it"
        )
        say(
            f"ncx: {what}; stage the doc and .neocortex: `git add {docs + ' ' if docs else ''}"
            f"{NCX_DIR}`, then commit again (`git commit -a` does not stage new files; "
            f"a `git commit PATH...` must name {NCX_DIR} too)"
        )
    return 1


def check_stage(
    env: Mapping[str, str], *, full: bool = False
) -> tuple[bool, tuple[str, str] | None]:
    """(staged, span) for `ncx hook check`, from what git and pre-commit put in the
    environment. git sets GIT_INDEX_FILE for the hooks `git commit` runs (pre-commit passes
    it on); pre-commit gives a hook no other sign of its stage. A ref range is what pre-push
    and `pre-commit run --from-ref A --to-ref B` (CI on a branch) pass on; a pre-push of a
    new branch has no remote side (all zeros) and gets the full check."""
    if full:
        return False, None
    if env.get("GIT_INDEX_FILE"):
        return True, None
    refs = (env.get("PRE_COMMIT_FROM_REF", ""), env.get("PRE_COMMIT_TO_REF", ""))
    if all(refs) and set(refs[0]) != {"0"}:
        return False, refs
    return False, None


def hook_check(
    root: Path,
    cfg: Config,
    say: Say,
    out: Say,
    *,
    staged: bool,
    span: tuple[str, str] | None = None,
) -> int:
    """Never writes. `staged` (inside `git commit`): the units this commit touches, judged in
    the index. `span` (FROM, TO) (pre-push, `pre-commit run --from-ref --to-ref`): what TO
    changed since its merge base with FROM, judged in TO. Otherwise (CI: `pre-commit run
    --all-files`): the whole tree."""
    if span is not None:
        if (
            stop := _tree_gate(root, say, "ncx: no .neocortex/ here; nothing to check")
        ) is not None:
            return stop
        from ncx.tree.staged import verify_range

        try:
            found = verify_range(root, cfg, *span).findings
        except NcxError as exc:
            say(exc.report())
            return 1
        summarise([str(f) for f in found], out)
        if found:
            say(f"ncx: {len(found)} problem(s) in what {span[1][:12]} changed since {span[0][:12]}")
        return 1 if found else 0
    if staged:
        scope = scope_of(staged_changes(root))
        if scope.empty:
            return 0
    if (stop := _tree_gate(root, say, "ncx: no .neocortex/ here; nothing to check")) is not None:
        return stop
    if staged:
        from ncx.tree.staged import verify

        findings: Sequence[Finding | object] = verify(
            root, cfg, None if scope.everything else scope
        ).findings
        where = "what this commit holds"
    else:
        from ncx.tree.check import check_tree

        findings = check_tree(root, cfg)
        where = f"{NCX_DIR}/"
    summarise([str(p) for p in findings], out)
    if findings:
        say(f"ncx: {len(findings)} problem(s) in {where}")
    return 1 if findings else 0


def hook_after(root: Path, cfg: Config, say: Say, out: Say, *, base: str, what: str) -> int:
    """After a merge, rebase or checkout: bring the chunks of the docs that changed between
    `base` and HEAD in step in the working tree; say the one command that commits the fix."""
    if not (root / NCX_DIR / MANIFEST).is_file() or not base or set(base) == {"0"}:
        return 0
    try:
        found = changes(root, base, "HEAD")
    except NcxError:
        return 0  # base is not a commit here (a first checkout): nothing to compare
    scope = scope_of(found)
    if scope.empty:
        return 0
    from ncx.tree.sync import sync

    tracked = set(repo.tracked_files(root, sorted(scope.docs)))
    live_files = {doc_chunk_file(d) for d in tracked}
    # A removed doc's chunk file is removed only when no live doc owns the same file.
    gone = {d for d in scope.changed_docs - tracked if doc_chunk_file(d) not in live_files}
    paths = sorted(tracked | gone)
    if not paths and not scope.memories:
        return 0
    try:
        report = sync(root, cfg, paths=[str(root / p) for p in paths] or [str(root / NCX_DIR)])
    except NcxError as exc:
        say(exc.report())
        say(f"ncx: {NCX_DIR}/ may not match the docs after the {what}; run `ncx sync`")
        return 1
    summarise(
        [f"ncx: wrote {p}" for p in report.written] + [f"ncx: removed {p}" for p in report.removed],
        out,
    )
    for err in report.problems:
        say(err.report())
    if report.changed:
        say(
            f"ncx: {NCX_DIR}/ did not match the docs after the {what}; fixed in the working tree. "
            f"Commit it: `git add -A {NCX_DIR} && git commit -m 'ncx sync'`"
        )
    elif report.problems:
        say("ncx: fix the docs above, then run `ncx sync`")
    return 1 if report.changed or report.problems else 0


def summarise(lines: list[str], out: Say, limit: int = SUMMARY_LIMIT) -> None:
    """Every line, or the first few and a count: a 500-doc commit must not print 15,000."""
    if len(lines) <= limit:
        for line in lines:
            out(line)
        return
    for line in lines[:_HEAD_LINES]:
        out(line)
    out(f"… and {len(lines) - _HEAD_LINES} more ({len(lines)} in all)")
