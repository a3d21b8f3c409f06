"""Time a commit through the real pre-commit with the README's hooks (ncx-sync + ncx-check).

The rust-lang/rfcs docs are copied into a temp git repo, `ncx init && ncx sync` run and
committed once. Then, medians of --runs fresh `git commit`s, each row beside the same commit
with a bare `true` hook (the floor: git + pre-commit start-up):
  - a code-only commit (no doc staged): must cost close to the floor;
  - a one-doc commit, first attempt (the hook writes that doc's chunks and fails).
The ncx under test is the checkout this script lives in (`python -m ncx`, PYTHONPATH first),
so the same script measures main and a branch.

    .venv/bin/python benchmarks/commit_hooks.py [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import CHECKOUT_ENV, HERE, as_installed, data_path, git_repo_from, table
from large_tree import chunk_heads

CHECKOUT = Path(__file__).resolve().parents[1]
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or "pre-commit"
ENV = CHECKOUT_ENV


def config(hooks: str) -> str:
    ncx = f"{sys.executable} -m ncx"
    if hooks == "true":
        body = "      - {id: floor, name: floor, entry: 'true', language: system, pass_filenames: false, always_run: true}\n"
    else:
        body = (
            f"      - {{id: ncx-sync, name: ncx-sync, entry: '{ncx} hook sync', language: system, "
            "pass_filenames: false, always_run: true, require_serial: true}\n"
            f"      - {{id: ncx-check, name: ncx-check, entry: '{ncx} hook check', language: system, "
            "pass_filenames: false, always_run: true, require_serial: true}\n"
        )
    return "repos:\n  - repo: local\n    hooks:\n" + body


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=ENV, check=check
    )


def use_hooks(root: Path, hooks: str) -> None:
    (root / ".pre-commit-config.yaml").write_text(config(hooks))
    git(root, "add", ".pre-commit-config.yaml")
    git(root, "commit", "-q", "--no-verify", "-m", f"hooks: {hooks}")


def timed_commit(root: Path) -> tuple[float, int]:
    t = time.perf_counter()
    proc = subprocess.run(
        ["git", "-C", str(root), "commit", "-q", "-m", "x"], capture_output=True, text=True, env=ENV
    )
    dt = time.perf_counter() - t
    if proc.returncode and os.environ.get("BENCH_VERBOSE"):
        print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
    return dt, proc.returncode


def code_commit(root: Path, name: str) -> tuple[float, int]:
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / f"{name}.py").write_text(f"x = {name!r}\n")
    git(root, "add", "src")
    return timed_commit(root)


def doc_commit(root: Path, doc: Path, i: int) -> tuple[float, int]:
    """First attempt of a one-doc commit; then back to where it started (a `true` hook lets
    the commit land: that commit is undone too), so every run starts the same way."""
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    original = doc.read_bytes()
    doc.write_bytes(
        original + f"\n\n## Bench {i}\n\nA new section added by the benchmark, run {i}.\n".encode()
    )
    git(root, "add", str(doc.relative_to(root)))
    dt, rc = timed_commit(root)
    git(root, "reset", "-q", "--hard", head)
    git(root, "clean", "-qfd", ".neocortex")
    return dt, rc


def median(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="build the repo here and keep it")
    args = ap.parse_args()
    as_installed(checkout=HERE.parent)
    corpus = data_path("bench-data", "repo-rust-lang-rfcs", "corpus", "all")
    root = git_repo_from(corpus, args.keep)
    try:
        for step in (["init", "-q"], ["sync", "-q"]):
            t = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "ncx", *step],
                cwd=root,
                env=ENV,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                sys.exit(f"ncx {step[0]} failed: {proc.stderr}")
            print(f"ncx {step[0]}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
        git(root, "add", "-A")
        git(root, "commit", "-q", "--no-verify", "-m", "ncx")
        home = root.parent / "pre-commit-home"
        ENV["PRE_COMMIT_HOME"] = str(home)
        subprocess.run([PRE_COMMIT, "install"], cwd=root, env=ENV, check=True, capture_output=True)
        docs = sorted(p for p in root.rglob("*.md") if ".neocortex" not in p.parts)
        doc = docs[len(docs) // 2]
        rows = []
        results: dict[str, dict[str, list[float]]] = {}
        for hooks in ("true", "ncx"):
            use_hooks(root, hooks)
            code = [code_commit(root, f"{hooks}{i}") for i in range(args.runs)]
            one = [doc_commit(root, doc, i) for i in range(args.runs)]
            results[hooks] = {"code": [t for t, _ in code], "doc": [t for t, _ in one]}
            rcs = sorted({rc for _, rc in code}), sorted({rc for _, rc in one})
            print(f"{hooks}: exit codes code={rcs[0]} doc={rcs[1]}", file=sys.stderr)
        floor = statistics.median(results["true"]["code"])
        for what, key in (("code-only commit", "code"), ("one-doc commit (first attempt)", "doc")):
            ncx = statistics.median(results["ncx"][key])
            rows.append(
                {
                    "what": what,
                    "`true` hook s": median(results["true"][key]),
                    "ncx-sync + ncx-check s": f"{ncx:.3f}",
                    "× floor": f"{ncx / floor:.2f}",
                }
            )
        n_chunks = sum(
            len(chunk_heads(p.read_text(encoding="utf-8", errors="replace")))
            for p in (root / ".neocortex" / "chunks").rglob("*.md")
        )
        print(
            f"rust-lang/rfcs: {len(docs)} docs, {n_chunks} chunks; one doc = "
            f"{doc.relative_to(root)}; median of {args.runs} commits per cell\n"
        )
        print(table(rows))
    finally:
        if args.keep is None:
            shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
