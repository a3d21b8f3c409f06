"""entry: the `ncx` command. The pre-commit hooks' two commands skip the typer app.

`ncx hook sync` and `ncx hook check` run on every commit, most of them touching no doc.
Building the typer app (every command group, 28 commands) costs ~135 ms before a hook can
even look at the staged paths, about as much as the rest of a no-doc hook together, so
these two exact invocations go straight to ncx.tree.precommit, with the same error edge.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    # ncx's matrix work is one query vector against at most ~100k rows: BLAS threads only
    # add start-up and, on a busy 2-core laptop, 5-10x latency (measured: 1.8 ms vs
    # 0.2 ms per 4k x 256 product). Set before numpy is imported; the user's value wins.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if sys.argv[1:] in (["hook", "sync"], ["hook", "check"]):
        raise SystemExit(_hook(sys.argv[2]))
    from ncx.cli.main import main as full

    full()


def _hook(name: str) -> int:
    if name == "sync" and os.path.isfile(".neocortex/manifest.json"):
        # Every clone gets the chunk-file merge driver from the hooks themselves, not only
        # the one that ran `ncx init` (pre-commit runs hooks at the repository's top).
        from ncx.tree.touched import merge_driver_set

        if not merge_driver_set():
            from pathlib import Path

            from ncx.tree.merge import ensure_driver

            ensure_driver(Path.cwd())  # best effort: a read-only .git must not fail commits
    if os.environ.get("GIT_INDEX_FILE"):
        # Inside `git commit`: a commit that touches no doc, sidecar or .neocortex/ file
        # has nothing for either hook to judge. Asked before anything else is imported.
        from ncx.tree.touched import index_concerns_ncx

        if not index_concerns_ncx():
            return 0
    from pathlib import Path

    from ncx.config import load_config
    from ncx.errors import NcxError
    from ncx.repo import find_root
    from ncx.tree import precommit

    def say(msg: str) -> None:
        print(msg, file=sys.stderr)

    try:
        root, cfg = find_root(Path.cwd()), load_config()
        if name == "sync":
            return precommit.hook_sync(root, cfg, say, print)
        staged, span = precommit.check_stage(os.environ)
        pushing = bool(os.environ.get("PRE_COMMIT_REMOTE_NAME"))  # set by pre-push only
        return precommit.hook_check(
            root, cfg, say, print, staged=staged, span=span, pushing=pushing
        )
    except NcxError as exc:
        say(exc.report())
        return exc.exit_code
