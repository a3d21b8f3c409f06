"""hooks: what the pre-commit hooks run. Returns exit codes; writes derived files, never stages.

pre-commit's contract (docs/decisions.md §12): a hook that writes files prints one
line per file and exits 1, so the user reviews and stages them; it never runs `git add`.
pre-commit passes no deleted files and may split long file lists, so `hook sync` asks git
for the staged changes itself (pass_filenames: false) and reads docs from the index.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ncx import repo
from ncx.config import Config
from ncx.layout import NCX_DIR, is_inside_ncx
from ncx.sources import suffixes

Say = Callable[[str], None]
MARKDOWN = suffixes()  # every source format ncx reads (ncx.sources)


def staged_changes(root: Path) -> list[tuple[str, str]]:
    """(status letter, path) of every staged change; renames come as delete + add."""
    out = repo.git(root, "diff", "--cached", "--name-status", "--no-renames", "-z")
    parts = [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
    return [(parts[i][0], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]


def hook_sync(root: Path, cfg: Config, say: Say, out: Say) -> int:
    """Re-chunk the docs this commit touches; 1 if anything was written or a doc is broken."""
    changes = staged_changes(root)
    docs = [p for _, p in changes if p.lower().endswith(MARKDOWN) and not is_inside_ncx(p)]
    memories = [p for _, p in changes if p.startswith(f"{NCX_DIR}/memories/") and p.endswith(".md")]
    # Trigger: nothing this commit touches is a doc or a memory.
    # Why: most commits are code; they must cost no more than the CLI floor.
    # Outcome: exit 0 before numpy, the model or the manifest are even looked at.
    if not docs and not memories:
        return 0
    if not (root / NCX_DIR / "manifest.json").is_file():
        say("ncx: no .neocortex/ here; run `ncx init` (hook skipped)")
        return 0
    from ncx.tree.sync import sync

    report = sync(root, cfg, paths=docs or [f"{NCX_DIR}/memories"], staged=True)
    for p in report.written:
        out(f"ncx: wrote {p}")
    for p in report.removed:
        out(f"ncx: removed {p}")
    for exc in report.problems:
        say(exc.report())
    if report.changed:
        say(
            f"ncx: {len(report.written) + len(report.removed)} file(s) changed under {NCX_DIR}/; "
            f"review them, then `git add {NCX_DIR}` and commit again"
        )
    return 1 if report.changed or report.problems else 0


def hook_check(root: Path, cfg: Config, say: Say, out: Say) -> int:
    if not (root / NCX_DIR / "manifest.json").is_file():
        say("ncx: no .neocortex/ here; nothing to check")
        return 0
    from ncx.tree.check import check_tree

    problems = check_tree(root, cfg)
    for p in problems:
        out(str(p))
    if problems:
        say(f"ncx: {len(problems)} problem(s) in {NCX_DIR}/")
    return 1 if problems else 0
