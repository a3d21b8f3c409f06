"""Should issue/PR templates stay indexed by default? (issue 28) Evidence from the dev sets.

Usage: python benchmarks/template_docs.py [--trees DIR] [--sets a,b] [--every N]

For each repo-* set that holds a template (`.github/ISSUE_TEMPLATE/*`,
`.github/DISCUSSION_TEMPLATE/*`, `.github/PULL_REQUEST_TEMPLATE*`, `pull_request_template.md`):
its questions whose labelled answer is in a template (what excluding them would lose: is the
answer in the default frame today?), and the other questions (what keeping them costs: how
many frames quote a template, how many of their items and tokens). Frames are
`ncx assemble --task Q --format json` with a user's defaults, in a copy of the tree
benchmarks/suite.py builds (--trees, default /tmp/ncx-suite-trees; copied to a temp folder and
synced with this checkout's ncx, so the shared trees are never written).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("NCX_SHARED", HERE.parent.parent / "shared"))
SETS = ("repo-cisagov-manage.get.gov", "repo-pydantic-pydantic-ai", "repo-rust-lang-rfcs")
TEMPLATE = re.compile(
    r"(?:^|/)\.github/(?:ISSUE_TEMPLATE|DISCUSSION_TEMPLATE)/"
    r"|(?:^|/)\.github/PULL_REQUEST_TEMPLATE(?:\.md$|/)|(?:^|/)pull_request_template\.md$",
    re.I,
)


def ncx(root: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    env.pop("NCX_TOKEN_BUDGET", None)
    r = subprocess.run(
        [sys.executable, "-m", "ncx", *args], cwd=root, capture_output=True, text=True, env=env
    )
    if r.returncode != 0:
        sys.exit(f"ncx {' '.join(args)} failed in {root}: {r.stderr[-1500:]}")
    return r.stdout


def overlaps(item: dict[str, Any], unit: dict[str, Any]) -> bool:
    if item.get("source_path") != unit["path"]:
        return False
    a, b = item.get("start_line") or 0, item.get("end_line") or 0
    return bool(a <= unit["end"] and b >= unit["start"])


def measure(name: str, tree: Path, every: int) -> dict[str, Any]:
    data = SHARED / "bench-data" / name
    units = {u["unit"]: u for u in map(json.loads, (data / "units.jsonl").open())}
    queries = [json.loads(line) for line in (data / "queries.jsonl").open()][::every]
    out: dict[str, Any] = {
        "set": name,
        "questions": len(queries),
        "gold_in_template": 0,
        "gold_in_template_in_frame": 0,
        "other": 0,
        "other_frames_quoting_template": 0,
        "template_items": 0,
        "template_tokens": 0,
        "frame_tokens": 0,
    }
    for q in queries:
        golds = [units[g] for v in q["gold"].values() for g in v if g in units]
        frame = json.loads(ncx(tree, "assemble", "--task", q["query"], "--format", "json"))
        items = [it for z in frame["zones"] for it in z["items"]]
        if any(TEMPLATE.search(g["path"]) for g in golds):
            out["gold_in_template"] += 1
            out["gold_in_template_in_frame"] += any(overlaps(it, g) for it in items for g in golds)
            continue
        out["other"] += 1
        out["frame_tokens"] += frame["tokens"]
        tmpl = [it for it in items if TEMPLATE.search(str(it.get("source_path") or ""))]
        out["other_frames_quoting_template"] += bool(tmpl)
        out["template_items"] += len(tmpl)
        out["template_tokens"] += sum(int(it.get("tokens") or 0) for it in tmpl)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trees", type=Path, default=Path("/tmp/ncx-suite-trees"))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--every", type=int, default=1, help="every Nth question (1: all)")
    a = ap.parse_args()
    print(
        "| set | questions | answer in a template | ... in the default frame | other questions "
        "| their frames quoting a template | template items | template share of tokens |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in a.sets.split(","):
        src = a.trees / name / "all"
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "all"
            shutil.copytree(src, tree, symlinks=True)
            ncx(tree, "sync")
            r = measure(name, tree, a.every)
        share = r["template_tokens"] / r["frame_tokens"] if r["frame_tokens"] else 0.0
        print(
            f"| {name} | {r['questions']} | {r['gold_in_template']} "
            f"| {r['gold_in_template_in_frame']}/{r['gold_in_template']} | {r['other']} "
            f"| {r['other_frames_quoting_template']} | {r['template_items']} | {share:.2%} |"
        )


if __name__ == "__main__":
    main()
