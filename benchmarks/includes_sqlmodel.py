"""Includes resolved (issue 28), measured on sqlmodel's MkDocs docs, which show their code with
FastAPI's `{* ./docs_src/... ln[...] hl[...] *}` lines.

For one ncx checkout: clones REPO (a local sqlmodel clone) into WORKDIR/<name>, runs `ncx init`
and `ncx sync` (timed), then a no-op `ncx sync` (timed, median of --runs), ten task frames at
--budget 4000 (the tasks below, written from the docs before any run), and reports:
- frame items that still hold a literal `{*` line (and all items),
- chunks (retrieve's view) holding a literal `{*` line, over all chunks,
- the rank of docs/tutorial/indexes.md ("Declare Indexes with SQLModel") in
  `ncx retrieve "declare indexes with sqlmodel"`, and for each task the rank of its doc.

Usage: python benchmarks/includes_sqlmodel.py --repo /tmp/sqlmodel --checkout PATH --name after
Run it once with main's checkout and once with this one; JSON on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]

# (task, the doc that answers it)
TASKS = [
    ("declare indexes with sqlmodel", "docs/tutorial/indexes.md"),
    (
        "create the database and tables with SQLModel.metadata.create_all",
        "docs/tutorial/create-db-and-table.md",
    ),
    ("insert rows: add heroes to a session and commit", "docs/tutorial/insert.md"),
    ("read data with select and session.exec", "docs/tutorial/select.md"),
    ("filter rows with where and a condition on a column", "docs/tutorial/where.md"),
    ("update a hero's age and commit the session", "docs/tutorial/update.md"),
    ("delete a row from the database", "docs/tutorial/delete.md"),
    ("read a range of rows with limit and offset", "docs/tutorial/limit-and-offset.md"),
    (
        "define a one-to-many relationship between team and heroes",
        "docs/tutorial/relationship-attributes/define-relationships-attributes.md",
    ),
    (
        "use a session dependency in a FastAPI path operation",
        "docs/tutorial/fastapi/session-with-dependency.md",
    ),
]


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} -> {proc.returncode}\n{proc.stderr[-3000:]}")
    return proc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--checkout", type=Path, default=HERE)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ncx-includes"))
    ap.add_argument("--name", default="run")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tree = args.workdir / args.name
    shutil.rmtree(tree, ignore_errors=True)
    tree.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(args.repo), str(tree)], check=True)
    env = {**os.environ, "PYTHONPATH": str(args.checkout)}
    env.pop("NCX_EMBEDDING_MODEL", None)
    ncx = [sys.executable, "-m", "ncx"]
    run([*ncx, "init"], tree, env)
    t = time.perf_counter()
    run([*ncx, "sync"], tree, env)
    first = time.perf_counter() - t
    noop = []
    for _ in range(args.runs):
        t = time.perf_counter()
        run([*ncx, "sync"], tree, env)
        noop.append(time.perf_counter() - t)
    chunks = list((tree / ".neocortex/chunks").rglob("*.md"))
    blocks = [b for f in chunks for b in f.read_text().split("\n---\nid: ")]
    literal_chunks = sum(1 for b in blocks if "\n{* " in b or b.startswith("{* "))
    out: dict[str, Any] = {
        "name": args.name,
        "first_sync_s": round(first, 2),
        "noop_sync_s": round(statistics.median(noop), 3),
        "chunks": len(blocks),
        "chunks_with_literal_star": literal_chunks,
        "tasks": [],
    }
    items_all = items_literal = 0
    for task, gold in TASKS:
        res = run([*ncx, "retrieve", task, "--json", "--k", "100"], tree, env).stdout
        paths = [json.loads(line)["source_path"] for line in res.splitlines() if line.strip()]
        seen: list[str] = []
        for p in paths:
            if p not in seen:
                seen.append(p)
        rank = seen.index(gold) + 1 if gold in seen else None
        chunk_rank = paths.index(gold) + 1 if gold in paths else None
        frame = json.loads(
            run(
                [*ncx, "assemble", "--task", task, "--budget", "4000", "--format", "json"],
                tree,
                env,
            ).stdout
        )
        items = [it for z in frame["zones"] for it in z["items"]]
        literal = [
            it
            for it in items
            if any(ln.lstrip().startswith("{*") for ln in it.get("text", "").split("\n"))
        ]
        in_frame = any(it.get("source_path") == gold for it in items)
        items_all += len(items)
        items_literal += len(literal)
        out["tasks"].append(
            {
                "task": task,
                "gold": gold,
                "doc_rank": rank,
                "chunk_rank": chunk_rank,
                "gold_in_frame": in_frame,
                "items": len(items),
                "items_with_literal_star": len(literal),
            }
        )
    out["frame_items"] = items_all
    out["frame_items_with_literal_star"] = items_literal
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
