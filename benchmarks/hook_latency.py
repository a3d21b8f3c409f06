"""Time the agent hooks: what a Claude Code prompt-submit (and session-start) hook adds.

The rust-lang/rfcs tree is copied into a temp git repo, `ncx init && ncx sync` run once, and
the first query builds the cache (reported on its own line). Every timed run is a fresh
process (cold interpreter, warm OS file cache), measured beside `python -c "import numpy"`
in the same run. Prints a markdown table.

    .venv/bin/python benchmarks/hook_latency.py [--runs 15]
    NCX_EMBEDDING_MODEL=/path/to/model2vec-folder ...   # while the bundled model is not built
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time

from common import NCX, as_installed, data_path, git_repo_from, run, table

from ncx.cli.agent import DEFAULT_BUDGET

PROMPTS = [
    "Why was the ? operator chosen for error propagation instead of try!?",
    "How do const generics interact with trait objects and where clauses?",
    "Summarise the async/await syntax RFC and the alternatives it rejected",
    "What is the process for stabilising a language feature after an RFC is merged?",
    "Explain the orphan rule and how coherence is checked for blanket impls",
]


def timed(
    label: str,
    cmd: list[str],
    runs: int,
    root: object,
    env: dict[str, str],
    inputs: list[str] | None = None,
) -> dict[str, object]:
    times, sizes = [], []
    for i in range(runs):
        dt, proc = run(cmd, cwd=root, env=env, input=inputs[i % len(inputs)] if inputs else None)  # type: ignore[arg-type]
        if proc.returncode != 0:
            sys.exit(f"{label} failed ({proc.returncode}): {proc.stderr}")
        if proc.stderr.strip() and inputs and "NCX_HOOK_TIMEOUT" in env:
            print(f"warning: {label}: {proc.stderr.strip()}", file=sys.stderr)
        times.append(dt)
        sizes.append(len(proc.stdout))
    return {
        "what": label,
        "median s": f"{statistics.median(times):.3f}",
        "min s": f"{min(times):.3f}",
        "max s": f"{max(times):.3f}",
        "runs": runs,
        "output chars (median)": int(statistics.median(sizes)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="fresh processes per row (>= 10)")
    args = ap.parse_args()
    as_installed()
    runs = max(args.runs, 10)
    corpus = data_path("bench-data", "repo-rust-lang-rfcs", "corpus", "all")
    root = git_repo_from(corpus)
    try:
        for step in (["init", "-q"], ["sync", "-q"]):
            dt, proc = run([NCX, *step], cwd=root)
            if proc.returncode != 0:
                sys.exit(f"ncx {' '.join(step)} failed: {proc.stderr}")
            print(f"ncx {step[0]}: {dt:.1f} s", file=sys.stderr)
        # No deadline while measuring: the numbers show how close the default 3 s limit is.
        env = {"NCX_HOOK_TIMEOUT": "120"}
        payloads = [
            json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": str(root), "prompt": p})
            for p in PROMPTS
        ]
        hook = [NCX, "agent-hook", "prompt"]
        first = timed(
            "first prompt after sync, no deadline (builds the cache)", hook, 1, root, env, payloads
        )
        cache = root / ".neocortex" / "cache" / "index.npz"
        cache.unlink()
        capped = timed(
            "first prompt after sync, default 3 s deadline (fails open; cache built "
            "in the background)",
            hook,
            1,
            root,
            {},
            payloads,
        )
        deadline = time.monotonic() + 120
        while not cache.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # let the background build finish writing and exit
        rows = [
            timed(
                'python -c "import numpy"', [sys.executable, "-c", "import numpy"], runs, root, env
            ),
            timed("ncx --help", [NCX, "--help"], runs, root, env),
            first,
            capped,
            timed(
                "prompt hook (`ncx agent-hook prompt`)",
                [NCX, "agent-hook", "prompt"],
                runs,
                root,
                env,
                payloads,
            ),
            timed(
                "session-start hook (`ncx agent-hook session-start`)",
                [NCX, "agent-hook", "session-start"],
                runs,
                root,
                env,
                ["{}"],
            ),
        ]
        n_docs = sum(1 for _ in corpus.rglob("*.md"))
        print(
            f"rust-lang/rfcs: {n_docs} docs; hook budget {DEFAULT_BUDGET} tokens (default); "
            f"{runs} fresh processes per row (median)\n"
        )
        print(table(rows))
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
