"""at: the knowledge of a commit, without checking it out.

A commit's files are materialised once, from its own git objects, into
`.neocortex/cache/at/<tree id>/` (content-addressed: two commits with the same tree share
it, and the next use of the commit only opens it); the search cache is then built there as in
any checkout. Frames and results read from that folder are the bytes a checkout of the commit
would give (docs/decisions.md §31): the files are written by git's own checkout code
(`read-tree` into a scratch index, `checkout-index`), so eol conversion, filters, symlinks
and executable bits are a checkout's, and `export-ignore` / `export-subst` (which `git
archive` applies) are not.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ncx import repo
from ncx.errors import NcxError, UsageError
from ncx.paths import cache_file, cache_folder

AT = "at"


@dataclass(frozen=True)
class Commit:
    """A resolved revision: the commit, its tree, and where its files are materialised."""

    rev: str  # as the user gave it
    sha: str
    tree: str
    root: Path


# `A..B`, `A...B`, `A^!`, `A^@`, `A^-`: git's ways to write a set of commits. (A `rev:path`
# may hold `..` in its path; it names a blob or a tree, and is refused as no commit.)
_RANGE = re.compile(r"\.\.|\^[!@]$|\^-\d*$")


def resolve(root: Path, rev: str, option: str = "--at") -> tuple[str, str]:
    """(commit sha, tree sha) of `rev`, or a UsageError naming it (`option`: the flag it came
    with, for the message)."""
    if ":" not in rev and _RANGE.search(rev):
        # (--since wants the base, the range's left end; --at a state, its right end)
        left, _, right = rev.partition("..")
        right = right.lstrip(".")
        end = (left if option == "--since" else right) if ".." in rev else rev[: rev.rindex("^")]
        raise UsageError(
            f"{option} takes one commit, not a range: {rev!r}",
            hint=f"give one commit, e.g. `{option} {end or 'HEAD'}`"
            + (" (or `git merge-base A B` for where two branches part)" if ".." in rev else ""),
        )
    out = repo.git(
        root, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}", check=False
    )
    sha = out.decode().strip()
    if not sha:
        raise UsageError(
            f"{rev!r} is not a commit of this repository",
            path=root,
            hint="give a branch, tag or commit sha (`git log --oneline` lists them)",
        )
    tree = repo.git(root, "rev-parse", f"{sha}^{{tree}}").decode().strip()
    return sha, tree


def materialise(root: Path, rev: str, option: str = "--at") -> Commit:
    """The commit `rev`, its files under `.neocortex/cache/at/<tree>/` (written on first use).
    Every folder on the way is a real one (ncx.paths.cache_folder): a committed link at
    `cache/at` or `cache/at/<tree>` is refused, never written through or read from."""
    return _materialised(root, rev, *resolve(root, rev, option))


def _materialised(root: Path, rev: str, sha: str, tree: str) -> Commit:
    dest = cache_folder(root, f"{AT}/{tree}")
    if not dest.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".tmp-{tree}-"))
        try:
            files = scratch / "tree"
            files.mkdir()
            _checkout(root, sha, files, scratch / "index")
            _write_listing(root, sha, files)
            try:
                os.rename(files, dest)  # atomic: a folder that exists is whole
            except OSError:
                if not dest.is_dir():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)  # (another process won the race)
    return Commit(rev, sha, tree, dest)


def with_knowledge(root: Path, rev: str, option: str = "--at") -> Commit:
    """materialise, for a command that answers from the commit's knowledge (`--at`): refused
    before anything is written where the commit holds no .neocortex/manifest.json (a commit
    before `ncx init`, or a tree whose .neocortex/ was never committed), which would fail
    inside the cache folder as "no .neocortex/ here", naming that folder."""
    sha, tree = resolve(root, rev, option)
    if not _holds(root, sha):
        raise UsageError(
            f"commit {sha[:12]} ({rev}) holds no .neocortex/: ncx's files were not committed then",
            path=root,
            hint="give a commit that holds them (after `git add .neocortex && git commit`); "
            "code alone (`retrieve --kind code`) needs none",
        )
    return _materialised(root, rev, sha, tree)


def _holds(root: Path, sha: str) -> bool:
    """Whether commit `sha` holds .neocortex/manifest.json (git's exit status says)."""
    proc = subprocess.run(
        ["git", "-C", str(root), "cat-file", "-e", f"{sha}:.neocortex/manifest.json"],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def _write_listing(root: Path, sha: str, dest: Path) -> None:
    """The commit's file list with blob ids, for the code index (ncx.code.store.listing):
    the materialised folder is no git work tree, and its code is what the commit holds."""
    from ncx.code.store import AT_LISTING
    from ncx.store import write_atomic

    out = repo.git(root, "ls-tree", "-r", "-z", "--full-tree", sha)
    recs = []
    for rec in out.split(b"\0"):
        if rec:
            meta, _, path = rec.partition(b"\t")
            mode, _kind, blob = meta.split(b" ")
            recs.append(mode + b" " + blob + b" 0\t" + path)
    # (the commit's own .neocortex/cache/ is checked as any: a link it holds there is refused)
    write_atomic(cache_file(dest, AT_LISTING), b"\0".join(recs) + b"\0")


def _checkout(root: Path, sha: str, dest: Path, index: Path) -> None:
    """Write commit `sha`'s files into the empty folder `dest` as `git checkout` would: its
    tree read into a scratch index (the repository's own index and HEAD are not touched) and
    checked out with `dest` as the work tree, so the commit's own .gitattributes apply (git
    reads them from that index while `dest` has none yet). checkout-index runs no hook and
    ignores skip-worktree bits (a sparse clone gets the whole commit, as a fresh clone does)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_INDEX_FILE", "GIT_WORK_TREE")}
    env["GIT_INDEX_FILE"] = str(index)
    base = ["git", "-C", str(root), f"--work-tree={dest}"]
    for args in (
        ["read-tree", sha],
        ["checkout-index", "--all", "--quiet", "--ignore-skip-worktree-bits"],
    ):
        proc = subprocess.run([*base, *args], env=env, capture_output=True, check=False)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise NcxError(
                f"git {args[0]} {sha[:12]} failed: {err[-200:]}",
                path=root,
                hint="check the commit exists locally (`git fetch`)",
            )
