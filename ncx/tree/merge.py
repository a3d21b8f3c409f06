"""merge: git's merge of a doc's chunk file, section by section, never with markers.

Committed `.gitattributes` says `merge=binary` for chunk files: with no more set up, a
chunk file both branches changed is a conflict and git keeps one side, without markers
(`git rebase --continue` runs no hook, so markers could otherwise be committed), and
`ncx sync` rewrites it from the merged doc. `ncx init` adds, for this clone only
(`.git/info/attributes` wins over `.gitattributes`), the driver below: git's own three-way
text merge of the file, taken when it is clean (two branches that edited different
sections of a doc changed different blocks) and refused, leaving one side and no markers,
when it is not.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from ncx import repo
from ncx.store import lf, write_atomic

DRIVER = "ncx-chunks"
LOCAL_ATTRIBUTES = f"# >>> ncx >>>\n.neocortex/chunks/** merge={DRIVER}\n# <<< ncx <<<\n"


def driver_command() -> str:
    """What git runs: this Python's ncx (an `ncx` on PATH may be another one, or none)."""
    return f"{shlex.quote(sys.executable)} -m ncx hook merge-chunks %O %A %B"


def install_driver(root: Path) -> list[str]:
    """Set up the driver for this clone (git config and .git/info/attributes); return the
    files it changed, repo-relative. Idempotent."""
    from ncx.tree.init import with_block

    changed = []
    want = {
        f"merge.{DRIVER}.name": "ncx: a doc's chunk file, merged by section, never with markers",
        f"merge.{DRIVER}.driver": driver_command(),
    }
    for key, value in want.items():
        have = repo.git(root, "config", "--local", "--get", key, check=False).decode().strip()
        if have != value:
            repo.git(root, "config", "--local", key, value)
            changed.append(".git/config")
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
