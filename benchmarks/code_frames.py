"""The frames agents get on code tasks, in process, for choosing the frame's rules.

Each task's parent tree of every code-* set is materialised once under --work (as
../shared/bench/code_tasks.py does: git archive + one commit), `ncx init && ncx sync` runs
there once (docs chunks and the code index, as a user's tree has them), and each task's frame
is built by `build_frame` from its task file read as `ncx assemble --task-file` reads it, at
the default budget and at --budget 2500. Scored as code_tasks.py scores a frame:

  tok     the frame's tokens
  gold    gold share: tokens of items in a gold file / the frame's tokens
  prec    code precision: share of the items citing a source file that cite a gold file
  first   whether the first item citing a source file cites a gold file
  R       frame R: share of gold files cited by any item
  R@1     `retrieve --kind code`'s first file is gold (what `first` is held against)

and, where the task is a commit whose mirror is at hand (--history; the commit sets), at the
level of the lines the commit changed (its `git diff -U0` hunks, parent side: an item whose
line range meets one is "changed"), closer to what a reader judges worth reading than the
gold file (a neighbouring definition of the gold file counts for `prec`, not here); for a
task that names its definitions instead (code-neuralmind-public's `oracle_symbol`), an item
"meets" when it is one of them or inside one (a method of the class):

  dprec   share of the code items that meet a changed line
  dfirst  whether the first code item meets one
  dshare  tokens of items that meet one / the frame's tokens
  shown   whether some code item's text holds a line the commit edits (the agent sees it)
  lead    whether the first code item's text does (the lead's quote: its window)

and where the docs' tokens go: `docs` the share of the frame's tokens in the docs zones,
`docsR` whether a gold file is cited by the docs zones alone (what a rule on docs can cost R).

With --history MIRRORS (the `fetch` tool's folder: MIRRORS/owner+name/repo), each frame's
Current State is read from the task's upstream parent in its repository's mirror (its history,
nothing later), and a second table says what that history costs and whether it bears on the
task: the state's tokens, and how often a commit it shows touched a gold file, beside the
repository's last five commits (what Current State showed before it named the frame's files).

The numbers to quote come from code_tasks.py through the CLI (benchmarks/code_bench.py);
this script is the fast loop for sweeping constants (`--set MODULE.NAME=VALUE`).

    python benchmarks/code_frames.py --work /tmp/code-frames [--sets code-swe-dev,...]
        [--budgets 15000,2500] [--set ncx.query.zone.FILE_GAP=0.5] [--show ID]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from code_sweep import SHARED, materialise, tasks_of  # noqa: E402
from frame_suite import set_constants  # noqa: E402

SETS = ("code-swe-dev", "code-requests", "code-rich", "code-starlette", "code-neuralmind-public")
# search a task file's body too, as `ncx assemble --task-file` does (0: the first line only)
TASK_BODY = os.environ.get("NCX_BENCH_TASK_BODY", "1") == "1"
CODE_SUFFIXES = {".py", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java"}


def synced(tree: Path) -> Path:
    """The tree with its .neocortex/ built by this checkout's ncx (once)."""
    if not (tree / ".neocortex" / "manifest.json").is_file():
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        for args in (["init"], ["sync"]):
            subprocess.run(
                [sys.executable, "-m", "ncx", *args], cwd=tree, env=env, capture_output=True
            )
    return tree


def trees(work: Path, name: str, limit: int = 0) -> list[tuple[dict[str, Any], Path]]:
    """Each task with its synced tree; `limit`: that many tasks, evenly spread over the set."""
    repo_git = SHARED / "bench-data" / name / "repo.git"
    tasks = tasks_of(name)
    if limit and limit < len(tasks):
        tasks = [tasks[int((i + 0.5) * len(tasks) / limit)] for i in range(limit)]
    out = []
    for t in tasks:
        scope = t.get("scope")
        dst = work / name / (t["parent"][:12] + ("-" + scope.replace("/", "_") if scope else ""))
        materialise(repo_git, t["parent"], scope, dst)
        out.append((t, synced(dst)))
    return out


Changed = dict[str, list[Any]]  # gold file -> changed (first, last) lines, or named qualnames


def score(frame: Any, gold: list[str], changed: Changed | None = None) -> dict[str, float]:
    items = [it for z in frame["zones"] for it in z["items"]]
    code = [it for it in items if os.path.splitext(it["source_path"])[1].lower() in CODE_SUFFIXES]
    g = set(gold)
    tok = frame["tokens"]
    m = {
        "tok": float(tok),
        "gold": sum(it["tokens"] for it in items if it["source_path"] in g) / tok if tok else 0.0,
        "R": len({it["source_path"] for it in items} & g) / len(g),
    }
    # where the docs' tokens go: their share of the frame, and whether a gold file is cited
    # by the docs zones alone (what a rule on docs could cost frame R)
    docs = [
        it for z in frame["zones"] if z["name"] in ("relevant", "background") for it in z["items"]
    ]
    m["docs"] = sum(it["tokens"] for it in docs) / tok if tok else 0.0
    cited_code = {it["source_path"] for it in code}
    m["docsR"] = float(bool({it["source_path"] for it in docs} & g - cited_code))
    if code:
        m["first"] = float(code[0]["source_path"] in g)
        m["prec"] = sum(it["source_path"] in g for it in code) / len(code)
    if changed is not None:
        met = [_meets(it, changed) for it in code]
        m["dshare"] = (
            sum(it["tokens"] for it, ok in zip(code, met, strict=True) if ok) / tok if tok else 0.0
        )
        if code:
            m["dfirst"] = float(met[0])
            m["dprec"] = sum(met) / len(met)
        m["shown"] = float(any(_shows(it, changed) for it in code))
        if code:
            m["lshown"] = float(_shows(code[0], changed))
    return m


def _shows(item: dict[str, Any], changed: Changed) -> bool:
    """The item's text holds a line the change edits (a removed line, or one of the two an
    insertion goes between), of at least 8 characters stripped: the agent sees where the
    change is. A task that names definitions (no lines): as _meets."""
    marks = changed.get(item["source_path"])
    if not marks:
        return False
    if any(isinstance(m, str) for m in marks):
        return _meets(item, changed)
    shown = {ln.strip() for ln in item.get("text", "").split("\n")}
    return any(len(t.strip()) >= 8 and t.strip() in shown for m in marks for t in m[2])


def _meets(item: dict[str, Any], changed: Changed) -> bool:
    """The item's line range meets a changed hunk of its file, or it is (or is inside) a
    definition the task names. A module item (a file's name and doc, its range the whole
    file) never does: it does not show the changed lines."""
    marks = changed.get(item["source_path"])
    qual = item.get("section") or ""
    if not marks or not qual:
        return False
    a, b = item.get("start_line"), item.get("end_line")
    for m in marks:
        if isinstance(m, str):
            if qual == m or qual.startswith(m + "."):
                return True
        elif a is not None and b is not None and a <= m[1] and m[0] <= b:
            return True
    return False


def _blob_lines(mirror: Path, rev: str, path: str) -> list[str]:
    got = subprocess.run(
        ["git", "-C", str(mirror), "show", f"{rev}:{path}"],
        capture_output=True,
        text=True,
        errors="replace",
    )
    return got.stdout.split("\n") if got.returncode == 0 else []


def changed_lines(mirror: Path, task: dict[str, Any]) -> Changed | None:
    """The parent-side line ranges the task's commit changed, per gold file, or the
    definitions a task names (`oracle_symbol`); None: neither (a real issue's fix is not a
    commit of its mirror), or the mirror lacks the commit. Each hunk is (first, last, the
    parent's lines it removes); a pure insertion after line n is (n, n + 1, lines n and
    n + 1)."""
    import re

    oracle = task["meta"].get("oracle_symbol")
    if oracle:  # "class Session", "Session.get_adapter + HTTPAdapter.send"
        names = [part.split()[-1] for part in oracle.split("+") if part.strip()]
        return {g: list(names) for g in task["gold"]}
    commit, parent = task["meta"].get("commit"), task["meta"].get("upstream_parent")
    if not commit or not parent or not mirror.is_dir():
        return None
    scope = task.get("scope")
    paths = [f"{scope}/{g}" if scope else g for g in task["gold"]]
    got = subprocess.run(
        ["git", "-C", str(mirror), "diff", "-U0", "--no-color", parent, commit, "--", *paths],
        capture_output=True,
        text=True,
        errors="replace",
    )
    if got.returncode != 0:
        return None
    out: Changed = {}
    path = None
    for line in got.stdout.splitlines():
        if line.startswith("--- "):
            path = line[6:] if line.startswith("--- a/") else None
            if path and scope:
                path = path.removeprefix(scope + "/")
        elif path and (h := re.match(r"@@ -(\d+)(?:,(\d+))? ", line)):
            start, n = int(h.group(1)), int(h.group(2) or 1)
            if n:
                out.setdefault(path, []).append((start, start + n - 1, []))
            else:  # an insertion after line `start`: the lines it goes between
                old = _blob_lines(mirror, parent, f"{scope}/{path}" if scope else path)
                around = [old[i - 1] for i in (start, start + 1) if 0 < i <= len(old)]
                out.setdefault(path, []).append((start, start + 1, around))
        elif path and line.startswith("-") and out.get(path):
            out[path][-1][2].append(line[1:])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/code-frames"))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--budgets", default="15000,2500")
    ap.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE")
    ap.add_argument("--show", default="", help="print the frame of this task id (markdown)")
    ap.add_argument("--json", type=Path, help="write per-task rows here")
    ap.add_argument("--limit", type=int, default=0, help="N tasks of each set, evenly spread")
    ap.add_argument("--history", type=Path, help="mirrors folder: Current State from history")
    a = ap.parse_args()
    set_constants(a.set)
    from ncx.code.search import CodeSearcher
    from ncx.config import load_config
    from ncx.query.context import FrameRequest, build_frame
    from ncx.query.search import Searcher
    from ncx.query.state import GitState, git_state
    from ncx.query.task import body_of, from_text

    budgets = [int(b) for b in a.budgets.split(",")]
    cfg = load_config()
    keys = (
        "tok",
        "gold",
        "prec",
        "first",
        "R",
        "dprec",
        "dfirst",
        "dshare",
        "shown",
        "lshown",
        "docs",
        "docsR",
    )
    print(
        "| set | budget | n | tok | gold share | code prec | first code | frame R | R@1 |"
        " changed: prec | first | share | shown | lead | docs share | gold by docs only |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows: list[dict[str, Any]] = []
    hist_rows: list[tuple[str, dict[str, list[float]]]] = []
    for name in a.sets.split(","):
        tasks = trees(a.work, name, a.limit)
        agg: dict[int, dict[str, list[float]]] = {b: {k: [] for k in keys} for b in budgets}
        r1: list[float] = []
        open_at: dict[Path, tuple[Searcher, CodeSearcher, GitState]] = {}
        hist: dict[str, list[float]] = {
            k: [] for k in ("tok", "tok_last5", "bears", "bears_last5", "any")
        }
        for t, tree in tasks:
            if tree not in open_at:
                open_at.clear()  # one tree's caches in memory at a time
                open_at[tree] = (Searcher.open(tree, cfg), CodeSearcher(tree), git_state(tree))
            s, code, state = open_at[tree]
            changed = None
            mirror = a.history / t["repo"].replace("/", "+") / "repo" if a.history else None
            if mirror is not None and not mirror.is_dir():
                mirror = None  # (code-neuralmind-public has none)
            if mirror is not None:
                state = git_state(mirror, t["meta"]["upstream_parent"])
                changed = changed_lines(mirror, t)
            task, crit = from_text(t["task"])
            files = list(dict.fromkeys(h.path for h in code.search(t["task"])))
            r1.append(float(bool(files) and files[0] in t["gold"]))
            for b in budgets:
                extra = {"body": body_of(t["task"])} if TASK_BODY else {}
                req = FrameRequest(task=task, criteria=crit, budget=b, **extra)
                f = build_frame(tree, cfg, req, s, git=state)
                m = score(f.as_json(), t["gold"], changed)
                if mirror is not None and b == budgets[0]:
                    _history(hist, state, f, t["gold"], req)
                for k, v in m.items():
                    agg[b][k].append(v)
                rows.append({"set": name, "id": t["id"], "budget": b, "r1": r1[-1], **m})
                if t["id"] == a.show:
                    print(f.markdown)
        for b in budgets:
            v = agg[b]

            def mean(k: str, v: dict[str, list[float]] = v) -> str:
                return f"{sum(v[k]) / len(v[k]):.3f}" if v[k] else "–"

            print(
                f"| {name} | {b} | {len(v['tok'])} | {sum(v['tok']) / len(v['tok']):,.0f} | "
                f"{mean('gold')} | {mean('prec')} | {mean('first')} | {mean('R')} | "
                f"{sum(r1) / len(r1):.3f} | {mean('dprec')} | {mean('dfirst')} | "
                f"{mean('dshare')} | {mean('shown')} | {mean('lshown')} | {mean('docs')} | "
                f"{mean('docsR')} |",
                flush=True,
            )
        if a.history:
            hist_rows.append((name, hist))
    if a.history:
        print(
            "\n| set | n | state tokens | shown commits | frames whose state shows a commit to a"
            " gold file | the last five commits: tokens, a gold file |"
        )
        print("|---|---|---|---|---|---|")
        for name, h in hist_rows:
            n = len(h["tok"])
            print(
                f"| {name} | {n} | {sum(h['tok']) / n:.0f} | {sum(h['any']) / n:.2f} | "
                f"{sum(h['bears']) / n:.3f} | {sum(h['tok_last5']) / n:.0f}, "
                f"{sum(h['bears_last5']) / n:.3f} |"
            )
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


def _history(
    hist: dict[str, list[float]], state: Any, frame: Any, gold: list[str], req: Any
) -> None:
    """What the frame's Current State shows of history, and whether it bears on the task,
    beside the repository's last five commits (what it showed before)."""
    from ncx import repo
    from ncx.tokens import count_tokens

    zones = frame.as_json()["zones"]
    code = [it["source_path"] for z in zones if z["name"] == "code" for it in z["items"]]
    lead = code or [
        it["source_path"] for z in zones if z["name"] == "relevant" for it in z["items"]
    ]
    from ncx.query.context import asked_terms

    asked = asked_terms(req)
    shown = state.touching(lead, asked)
    g = set(gold)
    hist["tok"].append(count_tokens("\n".join(state.lines(lead, asked))))
    hist["any"].append(float(len(shown)))
    # (all the files each shown commit touched, as the last five's are counted)
    full = set()
    for c in shown:
        out = repo.git(
            Path(state.root),
            "log",
            "-1",
            "--first-parent",
            "-m",
            "--format=",
            "--name-only",
            c.sha,
            "--",
        )
        full |= set(out.decode("utf-8", "replace").split())
    hist["bears"].append(float(bool(full & g)))
    log = repo.git(
        Path(state.root),
        "log",
        "-5",
        "--first-parent",
        "-m",
        "--format=%x1e%h %s",
        "--name-only",
        state.rev,
        "--",
    ).decode("utf-8", "replace")
    last5 = [r.split("\n", 1) for r in log.split("\x1e")[1:]]
    lines = [*state.head, "- recent commits:", *(f"  - {head}" for head, _ in last5)]
    hist["tok_last5"].append(count_tokens("\n".join(lines)))
    touched = {f for _, names in last5 for f in names.split()}
    hist["bears_last5"].append(float(bool(touched & g)))


if __name__ == "__main__":
    main()
