"""at: the knowledge of a commit, without checking it out.

A commit's files are materialised once, from its own git objects, into
`.neocortex/cache/at/<tree id>/` (content-addressed: two commits with the same tree share
it, and the next use of the commit only opens it); the search cache is then built there as in
any checkout. Frames and results read from that folder are the bytes a checkout of the commit
would give (docs/decisions.md §31).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from ncx import repo
from ncx.errors import NcxError, UsageError
from ncx.layout import cache_dir

AT = "at"


@dataclass(frozen=True)
class Commit:
    """A resolved revision: the commit, its tree, and where its files are materialised."""

    rev: str  # as the user gave it
    sha: str
    tree: str
    root: Path


def resolve(root: Path, rev: str) -> tuple[str, str]:
    """(commit sha, tree sha) of `rev`, or a UsageError naming it."""
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


def materialise(root: Path, rev: str) -> Commit:
    """The commit `rev`, its files under `.neocortex/cache/at/<tree>/` (written on first use)."""
    sha, tree = resolve(root, rev)
    dest = cache_dir(root) / AT / tree
    if not dest.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.parent / f".tmp-{tree}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            _extract(root, sha, tmp)
            _write_listing(root, sha, tmp)
            try:
                os.rename(tmp, dest)  # atomic: a folder that exists is whole
            except OSError:
                if not dest.is_dir():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # another process won the race
    return Commit(rev, sha, tree, dest)


def _write_listing(root: Path, sha: str, dest: Path) -> None:
    """The commit's file list with blob ids, for the code index (ncx.code.store.listing):
    the materialised folder is no git work tree, and its code is what the commit holds."""
    from ncx.code.store import AT_LISTING

    out = repo.git(root, "ls-tree", "-r", "-z", "--full-tree", sha)
    recs = []
    for rec in out.split(b"\0"):
        if rec:
            meta, _, path = rec.partition(b"\t")
            mode, _kind, blob = meta.split(b" ")
            recs.append(mode + b" " + blob + b" 0\t" + path)
    target = cache_dir(dest) / AT_LISTING
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"\0".join(recs) + b"\0")


def _extract(root: Path, sha: str, dest: Path) -> None:
    # `git archive` streams the commit's own blobs (the same bytes, eol and filters a checkout
    # writes); tarfile's "data" filter refuses links and names that would leave `dest`.
    proc = subprocess.Popen(
        ["git", "-C", str(root), "archive", "--format=tar", sha],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            for member in tar:
                try:
                    tar.extract(member, dest, filter="data")
                except tarfile.FilterError:
                    continue  # a link out of the tree: a checkout's reader refuses it too
    finally:
        _, err = proc.communicate()
    if proc.returncode != 0:
        raise NcxError(
            f"git archive {sha[:12]} failed: {err.decode('utf-8', 'replace').strip()[-200:]}",
            path=root,
            hint="check the commit exists locally (`git fetch`)",
        )
