"""Retrieval quality of memories: ADR facts of cisagov/manage.get.gov stored as ncx memories.

How the set is built (deterministic, no LLM, nothing copied into this repo — the ADRs are
read from ../shared/bench-data/repo-cisagov-manage.get.gov at run time):

1. Every ADR (docs/architecture/decisions/NNNN-*.md) is split into its `## ` sections.
   Its title is the `# N. Title` line.
2. Facts: the sentences and bullet items of the Decision, Consequences and Context sections
   (markdown links reduced to their text, tables and code skipped), 6 to 60 words each.
   Each fact becomes one memory: Learning = the sentence, Context = "ADR N: Title
   (Section)", type factual, added with the core API (`memory_ops.add_memory(force=True)`,
   the code path of `ncx memory add --force`) into a fresh `ncx init` git repo.
3. Questions, two families:
   - `fact` (one per memory, gold = that memory): a template by section wrapped around the
     ADR title and the two rarest content words of the sentence (document frequency over all
     facts; words of the title excluded), in alphabetical order:
       Decision:     "What did we decide about <title>, regarding <w1> and <w2>?"
       Consequences: "What follows from <title> for <w1> and <w2>?"
       Context:      "Why did <title> come up, given <w1> and <w2>?"
     The question never repeats the sentence; it shares two rare words with it by
     construction, which favours lexical rankers (read the BM25 row with that in mind).
   - `topic` (one per ADR with Decision facts): "What did we decide about <title>?" with
     every Decision fact of that ADR as gold (recall@5 = share of the gold in the top 5,
     capped at 5 gold).
4. Rankers, same memories, same questions, one run: a plain BM25 (k1 0.9, b 0.4, English
   stopwords, Snowball stemming; Lucene idf) over Learning + Context; `ncx retrieve --kind
   memory --batch --json` (BM25F + dense fusion, default weights); the same with
   NCX_W_DENSE=0 (lexical only); dense cosine alone (the stored .npy vectors).

   With --bare, Context is only "ADR N (Section)": no memory carries its ADR's title, so a
   question can reach a memory only through the words of the fact itself.

Usage: .venv/bin/python benchmarks/memory_bench.py [--model PATH] [--bare] [--tune]
The model defaults to the bundled ncx/models/ncx-static-v2 when it exists, else
NCX_EMBEDDING_MODEL (a local model2vec folder) must be set. `--tune` also prints the
cosine distributions behind memory_ops.DUPLICATE_COS.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from common import NCX, data_path  # noqa: E402

ADR_DIR = (
    "bench-data",
    "repo-cisagov-manage.get.gov",
    "corpus",
    "all",
    "docs",
    "architecture",
    "decisions",
)
SECTIONS = ("decision", "consequences", "context")
DAY = date(2026, 1, 15)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]+")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
STOP = set(
    """a an the and or but if then else of to in on at by for with from as is are was were be been
    being it its this that these those we our us you your they them their he she his her i me my
    not no nor so than too very can could will would shall should may might must do does did done
    have has had having which who whom whose what when where why how all any both each few more
    most other some such only own same just also into over under about against between through
    during before after above below up down out off again further once there here per via etc use
    used using one two new""".split()
)


@dataclass(frozen=True)
class Fact:
    adr: int
    title: str
    section: str
    text: str


def _sentences(body: str) -> list[str]:
    out: list[str] = []
    in_code = False
    para: list[str] = []

    def flush() -> None:
        if para:
            text = " ".join(para)
            out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", text))
            para.clear()

    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            flush()
            continue
        if in_code or line.startswith("|") or line.startswith("#"):
            flush()
            continue
        if not line:
            flush()
            continue
        bullet = re.match(r"^(?:[-*+]|\d+[.)])\s+", line)
        if bullet:
            flush()
            para.append(line[bullet.end() :])
            flush()
        else:
            para.append(line)
    flush()
    return out


def load_facts(folder: Path) -> list[Fact]:
    facts: list[Fact] = []
    for md in sorted(folder.glob("*.md")):
        text = md.read_text(encoding="utf-8")
        m = re.search(r"^#\s+(\d+)\.\s*(.+)$", text, re.MULTILINE)
        if not m:
            continue
        adr, title = int(m.group(1)), m.group(2).strip()
        parts = re.split(r"^##\s+(.+)$", text, flags=re.MULTILINE)
        sections = {parts[i].strip().lower(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}
        for name in SECTIONS:
            for s in _sentences(_LINK.sub(r"\1", sections.get(name, ""))):
                s = s.replace("**", "").strip()
                words = len(s.split())
                if 6 <= words <= 60:
                    facts.append(Fact(adr, title, name, s))
    seen: set[str] = set()
    unique = []
    for f in facts:
        if f.text.lower() not in seen:
            seen.add(f.text.lower())
            unique.append(f)
    return unique


def content_words(text: str) -> list[str]:
    return [
        w.lower().strip("'-") for w in _WORD.findall(text) if w.lower() not in STOP and len(w) > 2
    ]


def questions(facts: list[Fact]) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    df = Counter(w for f in facts for w in set(content_words(f.text)))
    fact_q: list[dict[str, object]] = []
    for i, f in enumerate(facts):
        title_words = set(content_words(f.title))
        cands = sorted(
            {w for w in content_words(f.text) if w not in title_words}, key=lambda w: (df[w], w)
        )
        focus = sorted(cands[:2])
        if len(focus) < 2:
            continue
        topic = f.title.rstrip(".")
        pair = f"{focus[0]} and {focus[1]}"
        q = {
            "decision": f"What did we decide about {topic}, regarding {pair}?",
            "consequences": f"What follows from {topic} for {pair}?",
            "context": f"Why did {topic} come up, given {pair}?",
        }[f.section]
        fact_q.append({"qid": f"fact-{i}", "query": q, "gold": [i]})
    topic_q: list[dict[str, object]] = []
    by_adr: dict[int, list[int]] = {}
    for i, f in enumerate(facts):
        if f.section == "decision":
            by_adr.setdefault(f.adr, []).append(i)
    for adr, gold in sorted(by_adr.items()):
        title = facts[gold[0]].title.rstrip(".")
        topic_q.append(
            {"qid": f"topic-{adr}", "query": f"What did we decide about {title}?", "gold": gold}
        )
    return fact_q, topic_q


# --- BM25 baseline ------------------------------------------------------------------------------


class BM25:
    def __init__(self, docs: list[str], k1: float = 0.9, b: float = 0.4):
        import Stemmer

        self.stem = Stemmer.Stemmer("english").stemWord
        self.k1, self.b = k1, b
        self.tf = [Counter(self.terms(d)) for d in docs]
        self.len = [sum(t.values()) for t in self.tf]
        self.avg = sum(self.len) / max(1, len(self.len))
        df = Counter(w for t in self.tf for w in t)
        n = len(docs)
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}

    def terms(self, text: str) -> list[str]:
        return [self.stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]

    def search(self, query: str, k: int) -> list[int]:
        q = set(self.terms(query))
        scores = []
        for i, tf in enumerate(self.tf):
            s = 0.0
            for w in q:
                f = tf.get(w, 0)
                if f:
                    norm = self.k1 * (1 - self.b + self.b * self.len[i] / self.avg)
                    s += self.idf[w] * f * (self.k1 + 1) / (f + norm)
            if s > 0:
                scores.append((-s, i))
        return [i for _, i in sorted(scores)[:k]]


# --- metrics ------------------------------------------------------------------------------------


def score(ranked: dict[str, list[int]], qs: list[dict[str, object]]) -> tuple[float, float, float]:
    """(recall@5, hit@5, MRR@10) over the questions."""
    rec = hit = mrr = 0.0
    for q in qs:
        gold = set(q["gold"])  # type: ignore[call-overload]
        top = ranked.get(str(q["qid"]), [])
        got = len(gold & set(top[:5]))
        rec += got / min(len(gold), 5)
        hit += got > 0
        rank = next((r for r, i in enumerate(top[:10], 1) if i in gold), None)
        mrr += 1 / rank if rank else 0.0
    n = max(1, len(qs))
    return rec / n, hit / n, mrr / n


# --- the run ------------------------------------------------------------------------------------


def context_of(f: Fact, bare: bool) -> str:
    if bare:
        return f"ADR {f.adr} ({f.section.capitalize()})"
    return f"ADR {f.adr}: {f.title} ({f.section.capitalize()})"


def build_tree(facts: list[Fact], model: str, bare: bool) -> tuple[Path, dict[str, int], float]:
    from ncx.config import load_config
    from ncx.memory.ops import NewMemory, add_memory, load_tree_model
    from ncx.query.search import neighbours

    root = Path(tempfile.mkdtemp(prefix="ncx-membench-")) / "repo"
    root.mkdir()
    env = {**os.environ, "NCX_EMBEDDING_MODEL": model}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([NCX, "init", "-q"], cwd=root, check=True, env=env)
    cfg = load_config(env)
    embedder = load_tree_model(root, cfg)
    ids: dict[str, int] = {}
    t = time.perf_counter()
    for i, f in enumerate(facts):
        new = NewMemory(
            learning=f.text,
            context=context_of(f, bare),
            type="factual",
            domain="architecture",
        )
        added = add_memory(
            root, new, embedder=embedder, neighbours=neighbours, today=DAY, force=True
        )
        ids[added.memory.id] = i
    return root, ids, time.perf_counter() - t


def run_ncx(
    root: Path,
    model: str,
    qs: list[dict[str, object]],
    ids: dict[str, int],
    extra_env: dict[str, str],
) -> tuple[dict[str, list[int]], float]:
    lines = "".join(json.dumps({"qid": q["qid"], "query": q["query"], "k": 10}) + "\n" for q in qs)
    env = {**os.environ, "NCX_EMBEDDING_MODEL": model, **extra_env}
    t = time.perf_counter()
    proc = subprocess.run(
        [NCX, "retrieve", "--kind", "memory", "--batch", "--json"],
        cwd=root,
        input=lines,
        capture_output=True,
        text=True,
        env=env,
    )
    dt = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"ncx retrieve failed: {proc.stderr}")
    ranked = {}
    for line in proc.stdout.splitlines():
        rec = json.loads(line)
        ranked[str(rec["qid"])] = [ids[r["id"]] for r in rec["results"] if r["id"] in ids]
    return ranked, dt


def dense_only(
    root: Path, model: str, qs: list[dict[str, object]], ids: dict[str, int]
) -> dict[str, list[int]]:
    import numpy as np

    from ncx.embedder import load_embedder

    order = sorted(ids, key=ids.__getitem__)
    mat = np.stack(
        [np.load(root / ".neocortex" / "memories" / f"{m}.npy").astype(np.float32) for m in order]
    )
    qv = load_embedder(model).embed([str(q["query"]) for q in qs])
    sims = qv @ mat.T
    return {
        str(q["qid"]): [ids[order[j]] for j in np.argsort(-sims[i], kind="stable")[:10]]
        for i, q in enumerate(qs)
    }


def tune(root: Path, facts: list[Fact], ids: dict[str, int], model: str, bare: bool) -> None:
    """Cosine of distinct facts to their nearest other fact vs the same fact reworded lightly."""
    import numpy as np

    from ncx.embedder import load_embedder

    order = sorted(ids, key=ids.__getitem__)
    mat = np.stack(
        [np.load(root / ".neocortex" / "memories" / f"{m}.npy").astype(np.float32) for m in order]
    )
    sims = mat @ mat.T
    np.fill_diagonal(sims, -1)
    nearest = sims.max(axis=1)
    emb = load_embedder(model)
    # Light rewordings a person might type when adding the same learning again: lowercase
    # without punctuation; the first clause only; without the Context line.
    variants = []
    for f, v in zip(facts, mat, strict=True):
        ctx = context_of(f, bare)
        plain = re.sub(r"[^\w\s]", "", f.text.lower())
        first = re.split(r"[,;:]", f.text)[0]
        vecs = emb.embed([f"{plain}\n\n{ctx}", f"{first}\n\n{ctx}", f.text])
        variants.append(vecs @ v)
    var = np.asarray(variants)
    print("\n### Near-duplicate threshold (cosine)\n")
    print("| pair | p5 | p50 | p95 | share >= 0.92 |")
    print("|---|---|---|---|---|")
    rows = [
        ("distinct facts: nearest other fact", nearest),
        ("same fact, lowercased, no punctuation", var[:, 0]),
        ("same fact, first clause only", var[:, 1]),
        ("same fact, without its Context line", var[:, 2]),
    ]
    for name, xs in rows:
        p5, p50, p95 = np.percentile(xs, [5, 50, 95])
        print(f"| {name} | {p5:.3f} | {p50:.3f} | {p95:.3f} | {np.mean(xs >= 0.92):.1%} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--model", help="local model2vec folder (default: bundled, else NCX_EMBEDDING_MODEL)"
    )
    ap.add_argument("--tune", action="store_true", help="also print duplicate-threshold cosines")
    ap.add_argument(
        "--bare",
        action="store_true",
        help="Context = 'ADR N (Section)' without the title: questions cannot match the title",
    )
    args = ap.parse_args()
    bundled = HERE.parent / "ncx" / "models" / "ncx-static-v2"
    model = args.model or (
        str(bundled)
        if (bundled / "model.safetensors").exists()
        else os.environ.get("NCX_EMBEDDING_MODEL")
    )
    if not model:
        sys.exit(
            "no model: the bundled ncx-static-v2 is not built yet; pass --model PATH or set NCX_EMBEDDING_MODEL"
        )

    facts = load_facts(data_path(*ADR_DIR))
    fact_q, topic_q = questions(facts)
    root, ids, t_add = build_tree(facts, model, args.bare)
    sections = Counter(f.section for f in facts)
    print(f"model: {model}; context {'ADR N (Section)' if args.bare else 'ADR N: Title (Section)'}")
    print(
        f"memories: {len(facts)} from {len({f.adr for f in facts})} ADRs "
        f"({', '.join(f'{n} {s}' for s, n in sections.items())}); added in {t_add:.1f}s; tree {root}"
    )
    print(f"questions: {len(fact_q)} fact, {len(topic_q)} topic\n")

    bm25 = BM25([f"{f.text}\n\n{context_of(f, args.bare)}" for f in facts])
    rankers: list[tuple[str, dict[str, list[int]], str]] = []
    allq = fact_q + topic_q
    t = time.perf_counter()
    rankers.append(
        (
            "BM25 (baseline)",
            {str(q["qid"]): bm25.search(str(q["query"]), 10) for q in allq},
            f"{(time.perf_counter() - t) * 1000 / len(allq):.2f} ms/q in-process",
        )
    )
    r, dt = run_ncx(root, model, allq, ids, {})
    rankers.append(
        ("ncx retrieve --kind memory", r, f"{dt * 1000 / len(allq):.1f} ms/q incl. start-up")
    )
    r, dt = run_ncx(root, model, allq, ids, {"NCX_W_DENSE": "0"})
    rankers.append(
        ("ncx retrieve, NCX_W_DENSE=0 (lexical only)", r, f"{dt * 1000 / len(allq):.1f} ms/q")
    )
    rankers.append(
        ("dense cosine only (stored .npy)", dense_only(root, model, allq, ids), "in-process")
    )

    print("| ranker | fact R@5 | fact MRR@10 | topic R@5 | topic hit@5 | topic MRR@10 | time |")
    print("|---|---|---|---|---|---|---|")
    for name, ranked, timing in rankers:
        fr, _, fm = score(ranked, fact_q)
        tr, th, tm = score(ranked, topic_q)
        print(f"| {name} | {fr:.3f} | {fm:.3f} | {tr:.3f} | {th:.3f} | {tm:.3f} | {timing} |")
    if args.tune:
        tune(root, facts, ids, model, args.bare)


if __name__ == "__main__":
    main()
