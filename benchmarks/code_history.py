"""History as evidence for code ranking, measured before it is built (issue 38 item 3).

For each code-swe-dev task: the code ranking's 50 best files on the task's parent tree
(materialised under --work by code_frames.py), and the last N non-merge commits BEFORE the
task's upstream parent from the repository's bare mirror (`git log <upstream_parent>`: no
commit of the fix or later can leak in). Each file's commit subjects form a BM25 document; a
file's history score, over the best one's, is added to the ranking's file score times W. A
co-change rule (files that changed with the top file, count / the top file's commits) times
WC is measured beside it. Commits touching more than 20 files are skipped (a sweep says
nothing of one file). Mirrors: the `fetch` tool's /work/.mirror/<owner>+<name>/repo.

    python benchmarks/code_history.py [N_COMMITS]
"""

import math
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from code_sweep import tasks_of  # noqa: E402

from ncx.code import rank  # noqa: E402
from ncx.code.index import load_code_index  # noqa: E402
from ncx.query.lexical import terms  # noqa: E402

M = {
    "psf/requests": "psf+requests",
    "pallets/flask": "pallets+flask",
    "mwaskom/seaborn": "mwaskom+seaborn",
    "pydata/xarray": "pydata+xarray",
}
N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000


def log(g, rev):
    out = subprocess.run(
        [
            "git",
            f"--git-dir={g}",
            "-c",
            "core.quotePath=false",
            "log",
            "--no-merges",
            f"-n{N}",
            "--name-only",
            "--format=%x00%s",
            rev,
        ],
        capture_output=True,
        text=True,
    ).stdout
    cs = []
    for chunk in out.split("\x00")[1:]:
        lines = chunk.split("\n")
        cs.append((lines[0], [x for x in lines[1:] if x.strip()]))
    return cs


rows = []
for t in tasks_of("code-swe-dev"):
    dst = Path("/tmp/code-frames/code-swe-dev") / t["parent"][:12]
    idx = load_code_index(dst)
    cs = log(f"/work/.mirror/{M[t['repo']]}/repo", t["meta"]["upstream_parent"])
    hits = rank.search_code(idx, t["task"], files=50)
    fs = {}
    for h in hits:
        fs.setdefault(h.path, h.file_score)
    rows.append((t, fs, cs))
print("loaded", flush=True)


def run(W, WC, maxf=20, k1=1.2):
    agg = Counter()
    for t, fs, cs in rows:
        post = defaultdict(Counter)
        dl = Counter()
        co = defaultdict(Counter)
        nch = Counter()
        for subj, files in cs:
            if len(files) > maxf:
                continue
            ts = terms(subj)
            for f in files:
                for x in ts:
                    post[x][f] += 1
                dl[f] += len(ts)
                nch[f] += 1
                for g2 in files:
                    if g2 != f:
                        co[f][g2] += 1
        nd = len(dl) or 1
        avg = (sum(dl.values()) / nd) or 1
        hs = Counter()
        q = set(terms(rank.task_words(t["task"])))
        for x in q:
            p = post.get(x)
            if not p:
                continue
            idf = math.log(1 + (nd - len(p) + 0.5) / (len(p) + 0.5))
            for f, tf in p.items():
                if f in fs:
                    hs[f] += idf * tf * (k1 + 1) / (tf + k1 * (0.25 + 0.75 * dl[f] / avg))
        top = max(hs.values(), default=0) or 1
        fin = {f: s + W * hs[f] / top for f, s in fs.items()}
        best = max(fin, key=lambda f: (fin[f], f)) if fin else None
        if best and WC:
            for g2, c in co[best].items():
                if g2 in fin:
                    fin[g2] += WC * c / nch[best]
        order = sorted(fin, key=lambda f: -fin[f])[:10]
        g = set(t["gold"])
        for k in (1, 5, 10):
            agg[f"R@{k}"] += len(set(order[:k]) & g) / min(k, len(g)) / len(rows)
            agg[f"A@{k}"] += (g <= set(order[:k])) / len(rows)
        agg["MRR"] += next((1 / (i + 1) for i, f in enumerate(order) if f in g), 0) / len(rows)
    print(
        f"W={W} WC={WC} maxf={maxf}",
        " ".join(f"{k} {agg[k]:.3f}" for k in ("R@1", "R@5", "R@10", "A@1", "A@5", "A@10", "MRR")),
        flush=True,
    )


for W in (0, 0.1, 0.2, 0.3, 0.5):
    run(W, 0)
for WC in (0.05, 0.1, 0.2):
    run(0, WC)
    run(0.2, WC)
