"""merge: git's merge of a doc's chunk file, section by section, never with markers.

Committed `.gitattributes` says `merge=binary` for chunk files: with no more set up, a
chunk file both branches changed is a conflict and git keeps one side, without markers
(`git rebase --continue` runs no hook, so markers could otherwise be committed), and
`ncx sync` rewrites it from the merged doc and names the `git add` that resolves it. Every
clone gets, from `ncx init` or from the first run of any ncx hook (so a teammate who only
ran `pre-commit install` has it too; `.git/info/attributes` wins over `.gitattributes`),
the driver below: git's own three-way text merge of the file, taken when it is clean (two
branches that edited different sections of a doc changed different blocks); when it is not,
this side's file is kept, without markers, and the merge of the file reported as done: the
file is derived (design.md invariant 5), so nobody must resolve it by hand. What makes it
right again is the doc, once merged: the sync hook of the commit that concludes the merge,
or the post-merge / post-rewrite hook, rewrites it and names the one command to commit.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ncx import repo
from ncx.errors import NcxError
from ncx.markers import END, START, with_block
from ncx.store import lf, write_atomic
from ncx.tree.touched import MERGE_DRIVER, merge_driver_command, merge_driver_set

DRIVER = MERGE_DRIVER
LOCAL_ATTRIBUTES = f"{START}\n.neocortex/chunks/** merge={DRIVER}\n{END}\n"


def driver_command() -> str:
    """What git runs: this Python's ncx (an `ncx` on PATH may be another one, or none)."""
    return merge_driver_command()


def ensure_driver(root: Path) -> None:
    """Set up the driver in a clone of an ncx tree that lacks it (or names another Python's
    ncx): what every hook does first, so no teammate's clone depends on having run `ncx
    init`. One git call when it is there already (the cost of a code-only commit)."""
    from ncx.layout import manifest_path

    if not manifest_path(root).is_file():
        return
    if not merge_driver_set(str(root)):
        try:
            install_driver(root)
        except (NcxError, OSError):
            pass  # a read-only .git (a CI sandbox): the merges then go as without it


def install_driver(root: Path) -> list[str]:
    """Set up the driver for this clone (git config and .git/info/attributes); return the
    files it changed as git names them (repo-relative; in a linked worktree, the shared
    repository's own paths). Idempotent."""
    changed = []
    want = {
        f"merge.{DRIVER}.name": "ncx: a doc's chunk file, merged by section, never with markers",
        f"merge.{DRIVER}.driver": driver_command(),
    }
    for key, value in want.items():
        have = repo.git(root, "config", "--local", "--get", key, check=False).decode().strip()
        if have != value:
            repo.git(root, "config", "--local", key, value)
            # (in a linked worktree, the repository's own config, which every worktree reads:
            # named as it is, not as a `.git/config` the worktree does not have)
            changed.append(repo.git_path_out(repo.git(root, "rev-parse", "--git-path", "config")))
    changed += install_am_hook(root)
    rel = repo.git_path_out(repo.git(root, "rev-parse", "--git-path", "info/attributes"))
    path = Path(rel) if Path(rel).is_absolute() else root / rel
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    new = with_block(text, LOCAL_ATTRIBUTES)
    if new != text:
        write_atomic(path, new.encode())
        changed.append(rel)
    return sorted(set(changed))


def merge_chunk_file(base: Path, ours: Path, theirs: Path) -> bool:
    """git's three-way text merge of a chunk file into `ours` when it is clean; False (and
    `ours` as it was) when both sides changed the same lines."""
    proc = subprocess.run(
        ["git", "merge-file", "-p", "--", str(ours), str(base), str(theirs)],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:  # the number of conflicts, or an error
        return False
    write_atomic(ours, lf(proc.stdout))
    return True


def unmerged_advice(root: Path) -> str | None:
    """What to say after `ncx sync` in a merge git left with files under .neocortex/
    unmerged (a clone without the driver, or a doc renamed or deleted on one side and edited
    on the other, which no driver sees): they are derived, sync has just rewritten them from
    the docs, and one `git add` resolves them. None when nothing there is unmerged."""
    from ncx.layout import NCX_DIR
    from ncx.sources import format_of

    # The index's unmerged entries (stages 1-3), not `git diff --diff-filter=U`: that one
    # stats the whole work tree (0.3 s of a no-op sync on 100,000 docs), this reads the index.
    out = repo.git(root, "ls-files", "-u", "-z", check=False)
    paths = sorted(
        {
            rec.partition("\t")[2]
            for rec in out.decode("utf-8", "surrogateescape").split("\0")
            if rec
        }
    )
    mine = sorted(p for p in paths if p == NCX_DIR or p.startswith(f"{NCX_DIR}/"))
    if not mine:
        return None
    shown = ", ".join(mine[:3]) + (f" and {len(mine) - 3} more" if len(mine) > 3 else "")
    docs = sorted(p for p in paths if p not in mine and format_of(p) is not None)
    if docs:
        return (
            f"ncx: {shown}: unmerged in git, derived from docs that are unmerged too "
            f"({', '.join(docs[:3])}{' …' if len(docs) > 3 else ''}); resolve those, "
            "`git add` them, and run `ncx sync` again"
        )
    return (
        f"ncx: {shown}: unmerged in git; rewritten from the merged docs, so mark it "
        f"resolved: `git add -A {NCX_DIR}`"
    )


AM_HOOK_MARK = "# ncx: git am runs no pre-commit hook"


def install_am_hook(root: Path) -> list[str]:
    """`git am` commits each patch without a pre-commit hook (and pre-commit installs none
    of git's applypatch hooks), so a doc-only patch landed with stale chunks. A
    `pre-applypatch` hook that runs the sync hook stops `git am` the way a commit is
    stopped: the chunk files written, the one `git add` named, then `git am --continue`.
    Written only where there is no such hook yet (a user's own is never replaced), or
    rewritten where it is ncx's and names another Python. Returns the file, if written."""
    import shlex
    import sys

    rel = repo.git_path_out(repo.git(root, "rev-parse", "--git-path", "hooks/pre-applypatch"))
    path = Path(rel) if Path(rel).is_absolute() else root / rel
    py = shlex.quote(sys.executable)
    # A Python that is gone (a pre-commit environment cleaned away) must not block `git am`.
    text = (
        f"#!/bin/sh\n{AM_HOOK_MARK} (ncx init / the ncx hooks wrote this file)\n"
        f"[ -x {py} ] || exit 0\nexec {py} -m ncx hook sync\n"
    )
    if path.exists():
        have = path.read_text(encoding="utf-8", errors="replace")
        if AM_HOOK_MARK not in have or have == text:
            return []
    write_atomic(path, text.encode())
    path.chmod(0o755)
    return [rel]
