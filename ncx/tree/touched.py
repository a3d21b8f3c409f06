"""touched: could a commit's staged change concern ncx at all? The hooks' first question.

Most commits touch only code. For them both hooks must cost little more than starting
Python: this module is the whole of what they import (no dataclasses of the judge, no
layout hashing, no chunker), and one `git diff --cached` answers. ncx.tree.staged refines
the same rule (scope_of) for the commits it lets through.
"""

from __future__ import annotations

import shlex
import subprocess
import sys

from ncx import suffixes

NCX_PREFIX = ".neocortex/"
# ncx.tree.sidecar.SUFFIX, not imported: the sidecar reader pulls in the chunker (a test
# holds the two equal).
SIDECAR_SUFFIX = ".meta.yaml"
SOURCES = suffixes.ALL  # every format ncx reads; the manifest may switch some off


def concerns(path: str) -> bool:
    """A path whose change may need the hooks: under .neocortex/, a doc, or a sidecar."""
    return (
        path.startswith(NCX_PREFIX)
        or path.lower().endswith(SOURCES)
        or path.endswith(SIDECAR_SUFFIX)
    )


def index_concerns_ncx() -> bool:
    """Whether any staged change (either side of a rename) concerns ncx; True when git
    cannot say (the full path then reports why)."""
    proc = subprocess.run(
        ["git", "diff", "--cached", "--name-status", "-M", "-z"],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        return True
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    paths = []
    while i < len(fields) - 1 and fields[i]:
        n = 2 if fields[i][0] in "RC" else 1  # a rename or copy names both paths
        if any(concerns(p) for p in fields[i + 1 : i + 1 + n]):
            return True
        paths += fields[i + 1 : i + 1 + n]
        i += 1 + n
    return bool(paths) and _included(paths)


def _included(paths: list[str]) -> bool:
    """Whether a doc includes one of `paths` (a file a FastAPI doc shows with `{* *}`), as
    recorded in ncx.tree.includefiles.INCLUDED_BY (one small read: pre-commit runs hooks at
    the repository's top). True when the record cannot answer, for the full path to bring it
    up to date: none yet in a tree (a fresh clone), or docs changed by commits since it was
    made (a pull, a checkout: `git diff` of the two commits says, O(change))."""
    import json

    from ncx.regular import open_regular  # (a FIFO here must not hang the hook)

    try:
        # (not through a link: the full path checks the cache's folders, ncx.paths.read_cache)
        with open_regular(NCX_PREFIX + "cache/included-by.json", follow=False) as f:
            found = json.loads(f.read())
    except (OSError, ValueError):
        # (no tree, no map to find: a repo whose hooks run before `ncx init` commits code fast)
        import os

        return os.path.isfile(NCX_PREFIX + "manifest.json")
    if not isinstance(found, dict) or not isinstance(found.get("by"), dict):
        return True
    return _docs_moved(str(found.get("head") or "")) or any(p in found["by"] for p in paths)


# The Markdown and reST docs, in a `git diff` of two commits (chunk files are .md too: not
# docs): what the included-by map is kept up to date over (ncx.tree.includefiles).
DOC_PATHSPECS = (*suffixes.pathspecs("markdown", "rst"), ":(exclude).neocortex")


def head_commit(cwd: str | None = None) -> str:
    """HEAD's commit id; "" before the first commit (or where git cannot say)."""
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "-q", "--verify", "HEAD^{commit}"],
            cwd=cwd,
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        return ""
    return proc.stdout.decode("ascii", "replace").strip()


def _docs_moved(made_at: str) -> bool:
    """Whether a Markdown or reST doc differs between commit `made_at` and HEAD (or git
    cannot say). One git call: HEAD moves with every commit, so asking for its id first
    (to skip the diff when it is `made_at`) was a second process on every code-only
    commit's two hooks, and a diff of a commit with itself is as quick."""
    if not made_at:
        return True
    proc = subprocess.run(
        ["git", "diff", "--quiet", "--no-renames", made_at, "HEAD", "--", *DOC_PATHSPECS],
        capture_output=True,
        check=False,
    )
    # (1: they differ; 128: a commit git no longer has, or no HEAD yet)
    return proc.returncode != 0


MERGE_DRIVER = "ncx-chunks"


def merge_driver_command() -> str:
    """What git runs to merge a chunk file: this Python's ncx (an `ncx` on PATH may be
    another one, or none). ncx.tree.merge sets it up."""
    return f"{shlex.quote(sys.executable)} -m ncx hook merge-chunks %O %A %B %P"


def merge_driver_set(cwd: str | None = None) -> bool:
    """Whether this clone has the chunk-file merge driver, as this ncx would set it: one git
    call, asked by the sync hook on every commit, so a teammate's clone that never ran
    `ncx init` has it before its first merge."""
    proc = subprocess.run(
        ["git", "config", "--get", f"merge.{MERGE_DRIVER}.driver"],
        cwd=cwd,
        capture_output=True,
        check=False,
    )
    return proc.stdout.decode("utf-8", "surrogateescape").strip() == merge_driver_command()
