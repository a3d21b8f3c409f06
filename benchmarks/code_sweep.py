"""Code ranking on every code-* development set, in process, for choosing its weights.

Each task's parent tree is materialised once (git archive + one commit, as
../shared/bench/code_tasks.py does) under --work, its code index built by ncx.code, and the
tasks ranked with the weights given; file recall@1/5/10 and MRR are scored the way
code_tasks.py scores them (gold in the first k distinct files / min(k, #gold)). The numbers
to quote come from code_tasks.py through the CLI (benchmarks/code_bench.py); this script is
how the weights in ncx/code/rank.py were picked: one grid, all sets, macro mean.

    python benchmarks/code_sweep.py --work /tmp/code-trees [--set NAME=VALUE ...] [--grid NAME=v1,v2]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("NCX_SHARED", ROOT.parent / "shared"))
SETS = ("code-swe-dev", "code-requests", "code-rich", "code-starlette", "code-neuralmind-public")


def materialise(repo_git: Path, parent: str, scope: str | None, dst: Path) -> None:
    if (dst / ".git").exists():
        (dst / ".neocortex").mkdir(exist_ok=True)  # (see below)
        return
    dst.mkdir(parents=True, exist_ok=True)
    arch = subprocess.run(
        [
            "git",
            f"--git-dir={repo_git}",
            "archive",
            "--format=tar",
            parent,
            *([scope] if scope else []),
        ],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dst)], input=arch, check=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "tree"]):
        subprocess.run(["git", "-C", str(dst), *args], check=True, env=env, capture_output=True)
    # a tree ncx is set up in keeps its code index (one without .neocortex/ is read in memory
    # only, every time: ncx.code.index.load_code_index); untracked, as a user's cache is
    (dst / ".neocortex").mkdir(exist_ok=True)


def tasks_of(name: str) -> list[dict]:
    return [
        json.loads(x)
        for x in (SHARED / "bench-data" / name / "tasks.jsonl").read_text().splitlines()
        if x.strip()
    ]


def score(files: list[str], gold: list[str]) -> dict[str, float]:
    # a scoped tree is materialised with the scope's own folder, so its paths are repo paths
    out = {}
    for k in (1, 5, 10):
        out[f"R@{k}"] = len(set(files[:k]) & set(gold)) / min(k, len(gold))
        out[f"A@{k}"] = float(set(gold) <= set(files[:k]))  # every gold file in the first k
    rr = next((1 / (i + 1) for i, f in enumerate(files) if f in gold), 0.0)
    out["MRR"] = rr
    return out


def frame_files(zone: object, hits: list, cap: int) -> tuple[set[str], int]:
    """The files the frame's code zone cites when packed to `cap` tokens (bodies left out:
    the tree's files are not read here), and the tokens it used."""
    from ncx.query.assembler import Item, _pack

    items = [
        Item(
            h.path + h.qualname,
            "code",
            h.path,
            h.start,
            h.end,
            (h.qualname,),
            None,
            h.file_score,
            zone.item_text(h, None, brief=i >= zone.BRIEF),
        )  # type: ignore[attr-defined]
        for i, h in enumerate(zone.pick(hits))  # type: ignore[attr-defined]
    ]
    placed, used = _pack("code", items, cap, [])
    return {p.item.source_path for p in placed}, used


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/code-trees"))
    ap.add_argument("--set", action="append", default=[], help="NAME=VALUE for ncx.code.rank")
    ap.add_argument("--grid", action="append", default=[], help="NAME=v1,v2,... (all combinations)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument(
        "--frame-cap",
        type=int,
        default=0,
        help="also score the code zone packed to this many tokens",
    )
    a = ap.parse_args()
    from ncx.code import rank
    from ncx.code.index import load_code_index
    from ncx.query import zone

    def param(name: str) -> object:
        return zone if hasattr(zone, name) else rank

    for kv in a.set:
        name, v = kv.split("=")
        setattr(param(name), name, type(getattr(param(name), name))(float(v)))
    trees: dict[str, list[tuple[dict, object]]] = {}
    for name in a.sets.split(","):
        repo_git = SHARED / "bench-data" / name / "repo.git"
        rows = []
        idx_of: dict[tuple[str, str | None], object] = {}
        for t in tasks_of(name):
            key = (t["parent"], t.get("scope"))
            if key not in idx_of:
                dst = (
                    a.work
                    / name
                    / (
                        t["parent"][:12]
                        + ("-" + t["scope"].replace("/", "_") if t.get("scope") else "")
                    )
                )
                materialise(repo_git, t["parent"], t.get("scope"), dst)
                idx_of[key] = load_code_index(dst)
            rows.append((t, idx_of[key]))
        trees[name] = rows
    grid = [(kv.split("=")[0], [float(x) for x in kv.split("=")[1].split(",")]) for kv in a.grid]
    names = [g[0] for g in grid]
    print("| " + " | ".join([*names, *a.sets.split(","), "macro R@5", "macro MRR"]) + " |")
    for combo in itertools.product(*[g[1] for g in grid]) if grid else [()]:
        for n, v in zip(names, combo, strict=True):
            setattr(param(n), n, type(getattr(param(n), n))(v))
        cells, r5s, mrrs = [], [], []
        for rows in trees.values():
            agg = {k: 0.0 for k in ("R@1", "R@5", "R@10", "A@1", "A@5", "A@10", "MRR")}
            agg |= {"FR": 0.0, "Ftok": 0.0}
            for t, idx in rows:
                hits = rank.search_code(idx, t["task"], files=10)
                files = list(dict.fromkeys(h.path for h in hits))
                for k2, v2 in score(files, t["gold"]).items():
                    agg[k2] += v2 / len(rows)
                if a.frame_cap:
                    cited, used = frame_files(zone, hits, a.frame_cap)
                    agg["FR"] += len(cited & set(t["gold"])) / len(t["gold"]) / len(rows)
                    agg["Ftok"] += used / len(rows)
            cell = f"{agg['R@1']:.3f}/{agg['R@5']:.3f}/{agg['R@10']:.3f}/{agg['MRR']:.3f}"
            cell += f" A {agg['A@1']:.3f}/{agg['A@5']:.3f}/{agg['A@10']:.3f}"
            if a.frame_cap:
                cell += f" F {agg['FR']:.3f}@{agg['Ftok']:.0f}"
            cells.append(cell)
            r5s.append(agg["R@5"])
            mrrs.append(agg["MRR"])
        print(
            "| "
            + " | ".join(
                [
                    *(str(c) for c in combo),
                    *cells,
                    f"{sum(r5s) / len(r5s):.3f}",
                    f"{sum(mrrs) / len(mrrs):.3f}",
                ]
            )
            + " |",
            flush=True,
        )


if __name__ == "__main__":
    main()
