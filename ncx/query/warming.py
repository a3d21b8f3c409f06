"""warming: whether the detached build (ncx.query.warm) would find work at one of the
moments git and the agents give: `ncx sync`, post-checkout / post-merge / post-rewrite, the
agent's session start (docs/design.md "Warming"). Only the CLI imports it.
"""

from __future__ import annotations

from pathlib import Path

from ncx.query import warm

# Committed unit files (a doc's chunk file, a memory) from which a fresh clone's first
# search-cache build is worth a process in the background: below it (about 2,000 chunks at
# the dev sets' 10-18 chunks a doc) the first query builds the cache in about a second.
WARM_FROM_FILES = 200


def worth_warming(root: Path) -> bool:
    """Whether a detached build would find work worth a process: the search cache or the
    code index is out of date (a pull, a branch switch, a sync that wrote chunks), or
    missing on a tree large enough for its first build to be felt (a fresh clone). Reads
    the cache's head, the code index's meta and git's listing; builds nothing. False in a
    tree that is not set up (`ncx init`) or cannot be written."""
    if not (root / ".neocortex").is_dir() or not warm.cache_writable(root):
        return False
    from ncx.code.index import code_index_wants_build
    from ncx.query import cache

    try:
        if cache.has_cache(root):
            if not cache.cache_is_current(root):
                return True
        elif _unit_files(root) >= WARM_FROM_FILES:
            return True
        return code_index_wants_build(root)
    except Exception:  # a tree git cannot list, a damaged file: the build says what is wrong
        return True


def warm_if_worth_it(root: Path) -> bool:
    """Start the detached build where it would find work (`worth_warming`); True if one
    was started."""
    return worth_warming(root) and warm.warm_in_background(root)


def _unit_files(root: Path) -> int:
    """How many unit files are committed (one `git ls-files`, nothing read)."""
    from ncx import repo
    from ncx.layout import chunks_dir, memories_dir

    specs = [p.relative_to(root).as_posix() for p in (chunks_dir(root), memories_dir(root))]
    return sum(1 for p in repo.tracked_files(root, specs) if p.endswith(".md"))
