"""Issue 30 item 3: memories that know when they went stale, on a real history.

    python benchmarks/stale_bench.py --workdir /tmp/ncx-stale [--set code-starlette]
        [--memories 24] [--out benchmarks/results/stale_DATE.md]

The history: two parent trees of the same project from `bench-data/<set>/repo.git` (one
commit per upstream parent tree), the earlier and the later of two tasks' parents (the task
at the 40th percentile of dates and, by default, the one at the 50th: `--late`). Commit 1 is
the earlier tree, initialised and synced with the bundled model; memories are added with `ncx memory add` citing real
definitions (a backticked `Class.method` and its file's path, chosen deterministically: the
first two public definitions of each source file) and real doc sections (`--related-doc
path#chunk-name`, the first section of each doc) and whole docs (`--related-doc path`), and
committed. Commit 2 replaces every file by the later tree's, synced and committed.

For every memory the table says whether what it cites changed, judged without ncx's hashes:
a definition by its source text (Python's `ast.get_source_segment`) in the two trees, a doc
section by its chunk's text in the two chunk files, a file by its bytes; and whether
`ncx status --json` flags it. Target: flagged exactly when a citation changed.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

from common import CHECKOUT_ENV as ENV
from common import SHARED

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def ncx(root: Path, *args: str) -> str:
    p = subprocess.run(
        [sys.executable, "-m", "ncx", *args], cwd=root, capture_output=True, text=True, env=ENV
    )
    if p.returncode != 0:
        sys.exit(f"ncx {' '.join(args)} -> {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout


def git(root: Path, *args: str, data: bool = False) -> str:
    p = subprocess.run(["git", "-C", str(root), *args], capture_output=True, env=ENV, check=True)
    return p.stdout.decode("utf-8", "replace")


def put_tree(bare: Path, commit: str, root: Path) -> None:
    """Make the work tree exactly `commit`'s files (`.neocortex/` kept), and commit it."""
    for p in git(root, "ls-files", "-z").split("\0"):
        if p and not p.startswith(".neocortex/"):
            (root / p).unlink(missing_ok=True)
    tar = subprocess.run(
        ["git", f"--git-dir={bare}", "archive", commit], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=tar, check=True)


def commit(root: Path, msg: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", msg)


def defs(source: str) -> dict[str, str]:
    """qualname -> source text of every def/class of a Python file (ast, not ncx)."""
    out: dict[str, str] = {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                q = prefix + child.name
                out.setdefault(q, ast.get_source_segment(source, child) or "")
                walk(child, q + ".")

    walk(tree, "")
    return out


def chunk_texts(root: Path, rev: str, doc: str) -> dict[str, str]:
    """chunk name -> body of each block of `doc`'s chunk file at `rev`."""
    sys.path.insert(0, str(REPO))
    from ncx.layout import chunk_file_paths
    from ncx.store import parse_frontmatter, split_chunk_file

    path = chunk_file_paths([doc])[doc]
    p = subprocess.run(["git", "-C", str(root), "show", f"{rev}:{path}"], capture_output=True)
    if p.returncode != 0:
        return {}
    out: dict[str, str] = {}
    for block in split_chunk_file(p.stdout, path=path):
        meta, body, _ = parse_frontmatter(block.decode("utf-8", "replace"), path=path)
        out.setdefault(str(meta["id"]).partition("#")[2], body)
    return out


def show(root: Path, rev: str, path: str) -> bytes | None:
    p = subprocess.run(["git", "-C", str(root), "show", f"{rev}:{path}"], capture_output=True)
    return p.stdout if p.returncode == 0 else None


def changed(root: Path, cite: dict[str, str]) -> bool:
    old, new = show(root, "HEAD~1", cite["path"]), show(root, "HEAD", cite["path"])
    if "symbol" in cite:
        a = defs((old or b"").decode("utf-8", "replace")).get(cite["symbol"])
        b = defs((new or b"").decode("utf-8", "replace")).get(cite["symbol"])
        return b is None or a != b
    if "section" in cite:
        name = cite["section"]
        a = chunk_texts(root, "HEAD~1", cite["path"]).get(name)
        b = chunk_texts(root, "HEAD", cite["path"]).get(name)
        return b is None or a != b
    return new is None or old != new


def pick_trees(data: Path, late_at: float) -> tuple[str, str]:
    tasks = [json.loads(x) for x in (data / "tasks.jsonl").read_text().splitlines() if x.strip()]
    tasks.sort(key=lambda t: (t["meta"]["date"], t["parent"]))
    early, late = (
        tasks[int(len(tasks) * 0.4)],
        tasks[min(len(tasks) - 1, int(len(tasks) * late_at))],
    )
    return (
        f"refs/heads/starlette/{early['meta']['upstream_parent']}",
        f"refs/heads/starlette/{late['meta']['upstream_parent']}",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ncx-stale"))
    ap.add_argument("--set", default="code-starlette")
    ap.add_argument("--memories", type=int, default=24)
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--late", type=float, default=0.5, help="the later tree's task percentile (1: the last)"
    )
    args = ap.parse_args()
    data = SHARED / "bench-data" / args.set
    bare = data / "repo.git"
    before, after = pick_trees(data, args.late)
    root = args.workdir / "tree"
    shutil.rmtree(args.workdir, ignore_errors=True)
    root.mkdir(parents=True)
    git(root, "-c", "init.defaultBranch=main", "init", "-q")
    put_tree(bare, before, root)
    commit(root, "earlier tree")
    ncx(root, "init", "-q")
    ncx(root, "sync", "-q")
    commit(root, "ncx")

    files = git(root, "ls-files").split("\n")
    src = sorted(
        f for f in files if f.endswith(".py") and f.count("/") == 1 and not f.startswith("tests")
    )
    docs = sorted(f for f in files if f.startswith("docs/") and f.endswith(".md"))
    wanted: list[tuple[str, ...]] = []
    for f in src:
        names = [
            q for q in defs((root / f).read_text()) if not q.rsplit(".", 1)[-1].startswith("_")
        ]
        for q in names[:2]:
            wanted.append((f"`{q}` in {f} is the place to change its behaviour",))
    for d in docs:
        chunks = list(chunk_texts(root, "HEAD", d))
        if chunks:
            wanted.append(
                (f"The docs explain this in {d}", "--related-doc", f"{d}#{chunks[1 % len(chunks)]}")
            )
    step = max(1, len(wanted) // args.memories)
    chosen = wanted[::step][: args.memories]
    for d in docs[:3]:
        chosen.append((f"The page {d} is the reference for it", "--related-doc", d))
    mids = []
    for spec in chosen:
        mids.append(ncx(root, "memory", "add", *spec, "--force").strip())
    commit(root, "memories at the earlier tree")

    put_tree(bare, after, root)
    git(root, "add", "-A")
    ncx(root, "sync", "-q")
    commit(root, "later tree, synced")  # HEAD~1: the memories at the earlier tree

    status = json.loads(ncx(root, "status", "--json"))
    flagged: dict[str, list[str]] = {}
    for s in status["stale_memories"]:
        flagged.setdefault(s["memory"], []).append(
            s["path"]
            + (":" + s["symbol"] if "symbol" in s else "")
            + ("#" + s["section"] if "section" in s else "")
        )
    rows, agree, n_changed = [], 0, 0
    for mid in mids:
        meta = json.loads(ncx(root, "memory", "show", mid, "--json"))
        cites = meta.get("cites") or []
        truth = [c for c in cites if changed(root, c)]
        is_flagged = mid in flagged
        ok = bool(truth) == is_flagged
        agree += ok
        n_changed += bool(truth)
        label = (
            ", ".join(
                c["path"]
                + (":" + c["symbol"] if "symbol" in c else "")
                + ("#" + c["section"] if "section" in c else "")
                for c in cites
            )
            or "(nothing)"
        )
        rows.append(
            f"| {mid} | {label} | {'yes' if truth else 'no'} | {'yes' if is_flagged else 'no'} | {'ok' if ok else 'MISS'} |"
        )
    lines = [
        f"# Staleness on a real history ({args.set})",
        "",
        f"earlier tree {before.rsplit('/', 1)[-1][:12]}, later tree {after.rsplit('/', 1)[-1][:12]}; "
        f"{len(mids)} memories added at the earlier tree",
        "",
        "| memory | cites | cited changed? | flagged? | |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"agreement: {agree}/{len(mids)}; cited changed: {n_changed}; flagged: {len(flagged)}",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
