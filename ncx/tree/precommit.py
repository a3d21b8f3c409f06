"""hooks: what the pre-commit hooks run. Returns exit codes; writes derived files, never stages.

pre-commit's contract (docs/decisions.md §12): a hook that writes files says what it
wrote and exits 1, so the user reviews and stages them; it never runs `git add`.
pre-commit passes no deleted files and may split long file lists, so the hooks ask git for
the staged changes themselves (pass_filenames: false). What they judge is the index
(ncx.tree.staged): the staged docs against the staged chunk files, never the working tree
or a cache, and only the units the commit touches.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ncx import repo
from ncx.config import Config
from ncx.errors import NcxError
from ncx.layout import MANIFEST, NCX_DIR, doc_chunk_file
from ncx.tree.staged import (
    Change,
    Finding,
    Scope,
    Verdict,
    changes,
    scope_here,
    staged_changes,
)

Say = Callable[[str], None]
# More lines than this and a hook prints the first few and a count instead of all of them.
SUMMARY_LIMIT = 20
_HEAD_LINES = 5
# The command a hook names stays short enough to read and paste: past this many docs (or
# characters of their paths) it stages .neocortex/ alone.
STAGE_DOCS_LIMIT = 5
STAGE_CHARS_LIMIT = 120


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
        if repo.git(root, "ls-files", "--", f"{NCX_DIR}/{MANIFEST}", check=False).strip():
            # In the index, not on disk: a sparse checkout that leaves .neocortex/ out. The
            # hooks cannot write the chunk files there, and passing would commit stale ones.
            say(
                f"ncx: {NCX_DIR}/ is outside this sparse checkout, so the chunk files of the "
                f"docs this commit changes cannot follow them; bring it in: "
                f"`git sparse-checkout add {NCX_DIR}`, then commit again"
            )
            return 1
        say(absent)
        return 0
    return None


def hook_sync(root: Path, cfg: Config, say: Say, out: Say) -> int:
    """Write the chunk files of the docs this commit changes from their staged text; 1 if the
    commit does not hold matching chunk files (written now or only unstaged)."""
    found = staged_changes(root)
    if strays := merge_backups(found):
        summarise(
            [
                f"{p}: a merge tool's backup, not an ncx file; unstage and delete it: "
                f"`git rm --cached -q {p}` (ncx init ignores them under {NCX_DIR}/)"
                for p in strays
            ],
            out,
        )
        return 1
    scope = scope_here(root, found)
    # Trigger: nothing this commit touches is a doc, a sidecar, a chunk, a memory or the
    # manifest. Why: most commits are code; they must cost no more than the CLI floor.
    # Outcome: exit 0 before numpy, the model or the manifest are even looked at.
    if scope.empty:
        return 0
    if (
        stop := _tree_gate(root, say, "ncx: no .neocortex/ here; run `ncx init` (hook skipped)")
    ) is not None:
        return stop
    from ncx.tree import handover
    from ncx.tree.staged import verify
    from ncx.tree.sync import sync

    judged = None if scope.everything else scope
    verdict = verify(root, cfg, judged)
    # (before sync writes the working tree: the key holds the manifest as verify read it)
    handover.leave(root, handover.key(root, cfg, judged), verdict.findings)
    based = {} if scope.everything else _stale_base(root, cfg, scope, verdict)
    if not verdict.findings:
        return 0
    stale = sorted({f.doc for f in verdict.findings if f.doc is not None and f.syncable})
    # Docs the commit changes get their chunks from their staged text. Chunks staged
    # without their doc are not overwritten: the doc's unstaged edit is what they follow.
    # A doc whose chunk files were stale in HEAD already (a commit without the hooks) is
    # the commit's to fix: nothing else would before the push.
    fixable = [d for d in stale if d in scope.changed_docs or scope.everything or d in based]
    for d in sorted(set(fixable) & set(based)):
        say(
            f"ncx: {d}: its chunk files were stale before this commit (commit "
            f"{based[d][:12]} changed it without them: made without the ncx hooks?); "
            "this commit brings them in step"
        )
    # Another model's vectors (a merge of a branch that switched models) match their
    # text's hash, so a plain sync keeps them: those docs are re-embedded, as the
    # post-merge hook does (naming `git add` for them looped, issue 36 f25b).
    foreign = sorted({f.doc for f in verdict.findings if f.doc is not None and f.reembed})
    memories = any(f.syncable and f.doc is None for f in verdict.findings)
    written: list[str] = []
    removed: list[str] = []
    said = set(verdict.marked)  # memories the verdict names (sync's word on them is the same)
    if fixable or memories or foreign:
        from ncx.tree.sync import secret_warnings

        # Absolute paths: sync reads user paths relative to the cwd (a subdirectory here).
        runs = []
        if fixable or memories:
            paths = [str(root / d) for d in fixable] or [str(root / NCX_DIR / "memories")]
            runs.append(sync(root, cfg, paths=paths, staged=True))
        if foreign:
            paths = [str(root / d) for d in foreign]
            runs.append(sync(root, cfg, paths=paths, staged=True, reembed=True))
        for report in runs:
            written = sorted(set(written) | set(report.written))
            removed = sorted(set(removed) | set(report.removed))
        summarise(
            [f"ncx: wrote {p}" for p in written] + [f"ncx: removed {p}" for p in removed], out
        )
        for report in runs:
            for exc in report.problems:
                if exc.path not in said:
                    said.add(exc.path or "")
                    say(exc.report())
            for line in secret_warnings(report):
                say(line)
    # What sync just rewrote is not repeated; the rest (chunks staged without their doc,
    # broken docs, secrets in memories, unresolved conflicts) is printed as found.
    rest = [
        f
        for f in verdict.findings
        if not (f.syncable and (f.doc in fixable or f.doc is None))
        and not (f.reembed and f.doc in foreign)
    ]
    summarise([str(f) for f in rest], out)
    if verdict.marked:
        # Nothing a hook writes ends this: a commit retried as it is fails again. Named:
        # the step by hand, then the one command (issue 36, f25b).
        say(
            f"ncx: {len(verdict.marked)} memory file(s) hold git's conflict markers; resolve "
            f"them by hand (keep one side's lines), then `{verdict.after_markers} && git add "
            f"-A {NCX_DIR}`, then commit again"
        )
        return 1
    fixable = sorted(set(fixable) | set(foreign))
    if fixable or (memories and not rest):
        what = (
            f"{len(written) + len(removed)} file(s) written under {NCX_DIR}/ for the staged docs"
            if written or removed
            else f"{NCX_DIR}/ is right in the working tree but the commit does not hold it"
        )
        again = (
            "`git am --continue`"
            if _applying_patches(root)
            else "commit again (`git commit -a` does not stage new files; "
            f"a `git commit PATH...` must name {NCX_DIR} too)"
        )
        say(
            f"ncx: {what}; stage the doc and .neocortex: "
            f"`{stage_command(root, fixable, _recased(root, fixable))}`, "
            f"then {again}"
        )
    return 1


def _applying_patches(root: Path) -> bool:
    """Whether `git am` is applying a patch (the sync hook then runs as pre-applypatch)."""
    rel = repo.git(root, "rev-parse", "--git-path", "rebase-apply/applying", check=False)
    path = Path(rel.decode().strip())
    return bool(rel.strip()) and (path if path.is_absolute() else root / path).is_file()


def merge_backups(found: Sequence[Change]) -> list[str]:
    """Files a commit adds under .neocortex/ that `git mergetool` leaves (`X.orig`,
    `X_BACKUP_123.md`…): never ncx's, and `git add .neocortex` would commit them."""
    import re

    backup = re.compile(r"(\.orig|_(BACKUP|BASE|LOCAL|REMOTE)_\d+(\.[^/]*)?)$")
    return [
        c.path
        for c in found
        if c.status != "D" and c.path.startswith(f"{NCX_DIR}/") and backup.search(c.path)
    ]


def _recased(root: Path, docs: Sequence[str]) -> list[str]:
    """Chunk files the index holds under another case of the path the docs' chunk files
    now have (a case-only rename): with core.ignorecase=true, `git add` keeps the index's
    case, so the commit never holds the new path (issue 31 item 9) unless the old entry is
    removed first."""
    # The docs the index holds under their exact name (a renamed doc's old name is gone).
    live = set(repo.tracked_files(root, list(docs))) & set(docs) if docs else set()
    want = {doc_chunk_file(d) for d in live}
    lower = {w.lower() for w in want}
    held = repo.tracked_files(root, [f"{NCX_DIR}/chunks"]) if want else []
    old = sorted(t for t in held if t not in want and t.lower() in lower)
    by_lower = {w.lower(): w for w in want}
    for t in old:
        # A case-sensitive file system (core.ignorecase set by hand, or a copied clone)
        # holds both names; the old one is the removed doc's and would be staged as an
        # alias of the new. Where both names are one file (macOS, Windows) it is kept.
        gone, new = root / t, root / by_lower[t.lower()]
        if gone.is_file() and new.is_file() and not os.path.samefile(gone, new):
            gone.unlink()
    return old


def stage_command(root: Path, docs: Sequence[str], recased: Sequence[str] = ()) -> str:
    """The `git add` that stages what the hook wrote, runnable as printed: a doc that is gone
    (renamed or deleted) is not named, as git refuses a path that matches nothing, and past
    a few docs none is (they are staged already; 300 renames made an 8,000-character command).
    `git add PATH` records removals under PATH too."""
    import shlex

    here = [d for d in docs if (root / d).exists()]
    named = " ".join(shlex.quote(d) for d in here)
    first = ""
    if recased:
        old = " ".join(shlex.quote(p) for p in recased[:STAGE_DOCS_LIMIT])
        # Past the limit the whole folder is taken out of the index and put back.
        old = old if len(recased) <= STAGE_DOCS_LIMIT else f"{NCX_DIR}/chunks"
        first = f"git rm -r -q --cached -- {old} && "
    if not here or len(here) > STAGE_DOCS_LIMIT or len(named) > STAGE_CHARS_LIMIT:
        return f"{first}git add -A {NCX_DIR}"
    dashes = "-- " if any(d.startswith("-") for d in here) else ""
    return f"{first}git add {dashes}{named} {NCX_DIR}"


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
    pushing: bool = False,
) -> int:
    """Never writes. `staged` (inside `git commit`): the units this commit touches, judged in
    the index. `span` (FROM, TO) (pre-push, `pre-commit run --from-ref --to-ref`): what TO
    changed since its merge base with FROM, judged in TO; `pushing` (pre-push) and TO is the
    clean HEAD: the whole tree too. Otherwise (CI: `pre-commit run --all-files`): the whole
    tree."""
    if span is not None:
        if (
            stop := _tree_gate(root, say, "ncx: no .neocortex/ here; nothing to check")
        ) is not None:
            return stop
        from ncx.tree.staged import verify_range

        try:
            found: list[Finding | object] = list(verify_range(root, cfg, *span).findings)
        except NcxError as exc:
            say(exc.report())
            return 1
        if pushing and _is_clean_head(root, span[1]):
            # A range check trusts its base, as each commit's hook trusted its parent; a
            # base pushed by a clone without hooks breaks that (issue 31 item 5). A push is
            # rare enough for the whole tree (sync's state file makes it ~1 s after a first
            # run): what the range found and what the tree holds, each file said once.
            from ncx.tree.check import check_tree

            seen = {f.path for f in found if isinstance(f, Finding)}
            found += [p for p in check_tree(root, cfg) if p.path not in seen]
        summarise([str(f) for f in found], out)
        if found:
            say(f"ncx: {len(found)} problem(s) in what {span[1][:12]} changed since {span[0][:12]}")
            if (fix := _commit_fix(root, found)) is not None:
                # A push needs a commit: named whole, one command (issue 36).
                say(f"ncx: to make the chunk files follow the docs and commit them: `{fix}`")
        return 1 if found else 0
    if staged:
        scope = scope_here(root, staged_changes(root))
        if scope.empty:
            return 0
    if (stop := _tree_gate(root, say, "ncx: no .neocortex/ here; nothing to check")) is not None:
        return stop
    if staged:
        from ncx.tree import handover

        judged = None if scope.everything else scope
        # The sync hook of this commit judged this very index a moment ago (handover.py).
        left = handover.take(root, handover.key(root, cfg, judged))
        if left is None:
            from ncx.tree.staged import verify

            left = verify(root, cfg, judged).findings
        findings: Sequence[Finding | object] = left
        where = "what this commit holds"
    else:
        from ncx.tree.check import check_tree

        findings = check_tree(root, cfg)
        where = f"{NCX_DIR}/"
    if staged:
        findings = _staged_in_working_tree(root, findings)
    summarise([str(p) for p in findings], out)
    if findings:
        say(f"ncx: {len(findings)} problem(s) in {where}")
        if pushing and (fix := _commit_fix(root, findings)) is not None:
            # (a new branch's push: no remote side to take a range from)
            say(f"ncx: to make the chunk files follow the docs and commit them: `{fix}`")
    return 1 if findings else 0


def _commit_fix(root: Path, found: Sequence[Finding | object]) -> str | None:
    """The one command that ends what `ncx sync` fixes among a range's (and the tree's)
    findings, with the commit; None when sync fixes none of them."""
    from ncx.tree.check import Problem
    from ncx.tree.staged import sync_and_commit

    docs = {f.doc for f in found if isinstance(f, Finding) and f.doc and f.syncable}
    docs |= {p.doc for p in found if isinstance(p, Problem) and p.doc and p.syncable}
    reembed = sorted({f.doc for f in found if isinstance(f, Finding) and f.doc and f.reembed})
    # A stale unit with no doc to name (a memory): the whole tree.
    whole = any(isinstance(p, Problem) and p.syncable and not p.doc for p in found)
    if not (docs or reembed or whole):
        return None
    return sync_and_commit(sorted(docs), reembed=reembed, whole=whole, root=root)


def _staged_in_working_tree(
    root: Path, findings: Sequence[Finding | object]
) -> list[Finding | object]:
    """The findings, with "run `ncx sync`" replaced by "stage it" where the working tree
    already holds the chunk file the commit lacks. Trigger: ncx-sync, the hook before,
    wrote it a moment ago. Why: the same doc edit got two pieces of advice, one of them
    needless (and, for an agent without ncx on PATH, not runnable). Outcome: both hooks
    name the same `git add`."""
    import shlex

    paths = sorted({f.path for f in findings if isinstance(f, Finding) and f.syncable and f.doc})
    if not paths:
        return list(findings)
    raw = repo.git(root, "diff", "--name-only", "-z", "--", *paths)
    differs = set(raw.decode("utf-8", "surrogateescape").split("\0"))
    differs |= set(repo.untracked_files(root, paths))
    fixed: list[Finding | object] = []
    for f in findings:
        cut = f.message.find("; run `ncx sync ") if isinstance(f, Finding) else -1
        if not isinstance(f, Finding) or f.doc is None or f.path not in differs or cut < 0:
            fixed.append(f)
            continue
        stage = (
            f"git add {shlex.quote(f.doc)} {NCX_DIR}"
            if (root / f.doc).exists()
            else f"git add -A {NCX_DIR}"
        )
        how = f"; the working tree has it right (ncx-sync wrote it): stage it, `{stage}`"
        fixed.append(Finding(f.path, f.message[:cut] + how, f.doc, f.syncable))
    return fixed


def hook_after(root: Path, cfg: Config, say: Say, out: Say, *, base: str, what: str) -> int:
    """After a merge, rebase or checkout: bring the chunks of the docs that changed between
    `base` and HEAD in step in the working tree; say the one command that commits the fix."""
    if not (root / NCX_DIR / MANIFEST).is_file() or not base or set(base) == {"0"}:
        return 0
    try:
        found = changes(root, base, "HEAD")
    except NcxError:
        return 0  # base is not a commit here (a first checkout): nothing to compare
    scope = scope_here(root, found)
    votes: list[str] = []
    if what == "merge":
        from ncx.memory.ops import merged_votes

        # Identical changes on both sides are no change to this side: not in `scope`.
        votes = merged_votes(root)
    if scope.empty and not votes:
        return 0
    from ncx.tree.sync import sync

    if scope.everything:
        # The manifest changed (a chunker setting, the model): every doc's chunks may be
        # wrong, not only those of the docs that changed (issue 31 item 4).
        from ncx.manifest import load_manifest
        from ncx.sources import list_sources

        tracked = set(list_sources(root, load_manifest(root), tracked=repo.tracked_files(root)))
        paths: list[str] = []
    else:
        tracked = set(repo.tracked_files(root, sorted(scope.docs)))
        live_files = {doc_chunk_file(d) for d in tracked}
        # A removed doc's chunk file is removed only when no live doc owns the same file,
        # and a removed doc is named to sync only while its chunk file is here: a merge that
        # brings a rename moved that file already (R15), and sync takes a path that names
        # nothing for a typo (issue 36).
        gone = {
            d
            for d in scope.changed_docs - tracked
            if doc_chunk_file(d) not in live_files and _left_behind(root, d, live_files)
        }
        paths = sorted(tracked | gone)
        if not paths and not scope.memories and not votes:
            return 0
    try:
        where = [str(root / p) for p in paths] or [str(root / NCX_DIR)]
        report = sync(root, cfg, paths=[] if scope.everything else where)
        if what in ("merge", "rebase") and tracked:
            # Another model's vectors, from a side of the merge that had another manifest
            # model, match their text's hash: sync keeps them; re-embed what the sample
            # says another model made (ncx.tree.attribution).
            foreign = _foreign_docs(root, cfg, sorted(tracked))
            if foreign:
                again = sync(root, cfg, paths=[str(root / d) for d in foreign], reembed=True)
                report.written = sorted(set(report.written) | set(again.written))
                report.problems += again.problems
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
    if votes:
        report.written = sorted(set(report.written) | set(votes))
        summarise([f"ncx: counted the other side's usefulness vote in {p}" for p in votes], out)
    pairs = []
    if scope.memories and what in ("merge", "rebase"):
        from ncx.memory.dupes import near_duplicates

        # The same learning added on two branches passed `memory add`'s duplicate check on
        # each; the merge is the first moment both are in one tree.
        pairs = near_duplicates(root, among=scope.memories)
        summarise([f"ncx: {p}" for p in pairs], out)
    if report.changed:
        say(
            f"ncx: {NCX_DIR}/ did not match the docs after the {what}; fixed in the working tree. "
            f"Commit it: `git add -A {NCX_DIR} && git commit -m 'ncx sync'`"
        )
    elif report.problems:
        say("ncx: fix the docs above, then run `ncx sync`")
    return 1 if report.changed or report.problems or pairs else 0


def _stale_base(root: Path, cfg: Config, scope: Scope, verdict: Verdict) -> dict[str, str]:
    """{doc: commit} for the docs outside `scope` that a recent commit changed without its
    chunk files and whose staged chunk files do not follow them (ncx.tree.staged
    .unsynced_docs); their findings are added to `verdict`. Only a commit that touches docs
    asks (a code-only one never gets here): two git calls, and a verify of what they name."""
    from ncx.tree.staged import noted, unsynced_docs, verify, with_docs

    unsynced = {d: c for d, c in unsynced_docs(root).items() if d not in scope.docs}
    if not unsynced:
        return {}
    found = noted(verify(root, cfg, with_docs(Scope(), unsynced)), unsynced)
    verdict.findings.extend(found.findings)
    return {f.doc: unsynced[f.doc] for f in found.findings if f.doc in unsynced and f.syncable}


def _left_behind(root: Path, doc: str, live_files: set[str]) -> bool:
    """Whether a removed doc's chunk file is still in the working tree as a file of its own:
    not moved away with a rename, and not a live doc's file under another case of its name
    (a case-only rename on a case-insensitive file system, where both names are one file)."""
    path = root / doc_chunk_file(doc)
    if not os.path.isfile(path):
        return False
    lower = doc_chunk_file(doc).lower()
    for live in live_files:
        if live.lower() == lower and os.path.isfile(root / live):
            if os.path.samefile(path, root / live):
                return False
    return True


def _foreign_docs(root: Path, cfg: Config, docs: Sequence[str]) -> list[str]:
    """The docs among `docs` whose chunk file in the working tree holds another model's
    vectors (sampled: ncx.tree.attribution)."""
    from ncx.embedder import load_tree_model
    from ncx.manifest import load_manifest
    from ncx.store import read_chunk_file
    from ncx.tree.attribution import foreign_files

    manifest = load_manifest(root)
    files = {}
    for d in docs:
        try:
            files[d] = read_chunk_file(root / doc_chunk_file(d))
        except (OSError, NcxError):
            continue
    if not files:
        return []
    embedder = load_tree_model(root, manifest.model, None, cfg.model_cache, check_sha=False)
    return [d for d, _doc in foreign_files(files, embedder, int(manifest.model.get("dim", 0)))]


def _is_clean_head(root: Path, rev: str) -> bool:
    """Whether `rev` is HEAD and the working tree holds it (no tracked file changed), so
    the working tree's check judges what is pushed."""
    head = repo.git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip()
    want = repo.git(root, "rev-parse", "--verify", "--quiet", rev, check=False).strip()
    if not head or head != want:
        return False
    return not repo.git(root, "status", "--porcelain", "--untracked-files=no", check=False)


def summarise(lines: list[str], out: Say, limit: int = SUMMARY_LIMIT) -> None:
    """Every line, or the first few and a count: a 500-doc commit must not print 15,000."""
    if len(lines) <= limit:
        for line in lines:
            out(line)
        return
    for line in lines[:_HEAD_LINES]:
        out(line)
    out(f"… and {len(lines) - _HEAD_LINES} more ({len(lines)} in all)")
