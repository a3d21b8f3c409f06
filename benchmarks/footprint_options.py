"""Footprint options (issue 13, item 6): what each chunk-storage format does to the repository.

From a synced tree (a git repo whose HEAD holds docs + a committed `.neocortex/` made by ncx,
clean working tree: e.g. the large tree of benchmarks/large_tree.py), for each variant:

- convert the committed chunk set into the variant's layout (pure, deterministic bytes);
- build a fresh git repo holding the docs + that `.neocortex/` in one commit, pack it the way
  large_tree.py does (`reflog expire`, `gc -q --prune=now`, `count-objects -v`), and count the
  files under `.neocortex/` and the packed bytes (also minus a docs-only repo of the same docs);
- replay EDITS one-section doc edits: the edits are made once, on a copy of the tree, with
  large_tree.py's `edit_section` on the same docs it picks, and the real `ncx sync` writes the
  new chunks; each variant converts the synced state and writes only the files whose bytes
  changed (for a per-unit layout: the affected unit; for a per-doc pack: that doc's pack), then
  commits. Reported: the packed growth per edit commit (gc, as large_tree.py), the thin push pack
  (median) and the `git diff --stat` a reviewer sees for the first edit.

Doc tokens = the sum of `tokens:` in the chunk frontmatter (as large_tree.py: overlaps count
twice). Also measured, for the int8 variant: top-10 overlap of cosine retrieval with int8 vs the
float16 vectors, for 200 random unit query vectors (and, closer to real queries, 200 random
chunk vectors as queries, the chunk itself left out).

Variants (`--variants`, comma-separated; `docs` is always built, it is the subtraction base):
  today       as committed: since format 2 (docs/formats.md), one chunk file per doc, each
              block's vector inline (`vec: f16:<base64>`); a format-1 tree as `pairs`
  pairs       format 1: per chunk `<slug>.md` + `<slug>.npy` (float16, 256-d, .npy v1),
              rebuilt from a format-2 tree's blocks (the "today" of the first study)
  vecmd       no .npy: `vector: <base64 of the float16 little-endian bytes>` as the last
              frontmatter key, `vec:` line dropped (one file per unit)
  int8        the pairs, the .npy holds int8 round(v/|v| * 127); `vec:` names the new bytes
  pack        per doc one `<doc path minus suffix>.md` holding its chunks in doc order, each
              preceded by a line `<!-- ncx:chunk <slug> -->` then its unchanged bytes
              (frontmatter block + body), and one `.npy` of shape (n_chunks, 256) float16
  packvecmd   per doc one `.md` as `pack`, each chunk's frontmatter as in `vecmd`
  packint8    as `pack`, the .npy (n_chunks, 256) int8 round(v * 127/max|v|) per row (cosine
              is scale-free, so no scale is stored; the `vec:` lines are left as they were)

    nice -n 15 python benchmarks/footprint_options.py --tree /tmp/lt --ncx "$(which ncx)" \\
        --workdir /tmp/fp-work --out benchmarks/results/footprint_options.md

The tree is only read: the edits happen in WORKDIR/edit, a copy (with its sync cache).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import itertools
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from large_tree import EDIT_SET, GIT_ENV, TOKENS_RE, edit_section

from ncx.store import decode_vec, inline_vec, split_chunk_file, without_inline_vec

NC = ".neocortex/"
CHUNKS = ".neocortex/chunks/"
DIM = 256
VEC_LINE = re.compile(rb"^vec: '?([0-9a-f]{16})'?\n", re.M)
LINES_LINE = re.compile(rb"^lines: \d+\n", re.M)
ID_LINE = re.compile(rb"^id: '?([^'\n]+)'?$", re.M)
SEP = "<!-- ncx:chunk {} -->\n"  # opens each chunk in a per-doc pack

Tree = dict[str, bytes]  # repo-relative POSIX path -> file bytes


# ---------------------------------------------------------------- git


def git(root: Path, *args: str, stdin: bytes | None = None, timeout: float = 1800) -> bytes:
    env = {**os.environ, **GIT_ENV}
    p = subprocess.run(
        ["git", "-C", str(root), *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=timeout,
    )
    if p.returncode != 0:
        sys.exit(f"git {' '.join(args)} failed in {root}:\n{p.stderr.decode()[-2000:]}")
    return p.stdout


def packed_bytes(root: Path) -> int:
    """As large_tree.packed_bytes: bytes of a fully packed, pruned repo."""
    git(root, "reflog", "expire", "--expire=now", "--all")
    git(root, "gc", "-q", "--prune=now")
    out = git(root, "count-objects", "-v").decode()
    kv = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return (int(kv["size-pack"]) + int(kv["size"])) * 1024


def thin_pack_bytes(root: Path) -> int:
    """As large_tree.thin_pack_bytes: the thin pack a push of HEAD would send."""
    pack = git(root, "pack-objects", "--revs", "--thin", "--stdout", "-q", stdin=b"HEAD\n^HEAD~1\n")
    return len(pack)


def read_tree(root: Path) -> Tree:
    """Every tracked file of the working tree (which must be clean: it is HEAD)."""
    if git(root, "status", "--porcelain", "--untracked-files=no").strip():
        sys.exit(f"{root}: working tree not clean; commit or reset it first")
    names = git(root, "ls-files", "-z").decode().split("\0")
    return {n: (root / n).read_bytes() for n in names if n}


# ---------------------------------------------------------------- units and .npy


def npy_payload(npy: bytes) -> bytes:
    """The raw array bytes of a .npy (v1/v2 header skipped)."""
    if npy[6] == 1:
        hlen = int.from_bytes(npy[8:10], "little")
        return npy[10 + hlen :]
    hlen = int.from_bytes(npy[8:12], "little")
    return npy[12 + hlen :]


def npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, version=(1, 0), allow_pickle=False)
    return buf.getvalue()


def f16_of(npy: bytes) -> np.ndarray:
    v = np.frombuffer(npy_payload(npy), dtype="<f2")
    assert v.shape == (DIM,), v.shape
    return v


def blob_vec(data: bytes) -> str:
    """ncx.store.blob_vec: the first 16 hex of the git blob id."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:16]


def units_of(tree: Tree) -> dict[str, tuple[bytes, bytes]]:
    """Chunk stem (path without suffix) -> (.md bytes, .npy bytes), as the one-file-per-chunk
    format (1) stores them: read from its pairs, or rebuilt from a format-2 tree's chunk files
    (each block: `lines` dropped, its inline vector as the .npy, `vec:` naming that .npy)."""
    out: dict[str, tuple[bytes, bytes]] = {}
    for path, data in tree.items():
        if not (path.startswith(CHUNKS) and path.endswith(".md")):
            continue
        stem = path[:-3]
        if stem + ".npy" in tree:  # format 1
            out[stem] = (data, tree[stem + ".npy"])
            continue
        for block in split_chunk_file(data, path=path):
            b64 = inline_vec(block)
            vec = decode_vec(b64, DIM) if b64 is not None else None
            assert vec is not None, f"{path}: a block without a {DIM}-d vector"
            npy = npy_bytes(np.asarray(vec, dtype="<f2"))
            head, rest = split(without_inline_vec(block))
            head = LINES_LINE.sub(b"", head) + vec_value(blob_vec(npy))
            cid = ID_LINE.search(head)
            assert cid is not None, f"{path}: a block without an id"
            out[f"{stem}/{cid.group(1).decode().rsplit('#', 1)[-1]}"] = (head + rest, npy)
    return out


def split(md: bytes) -> tuple[bytes, bytes]:
    """(frontmatter block without its closing fence, the rest from the closing fence on)."""
    end = md.index(b"\n---\n", 3) + 1
    return md[:end], md[end:]


def with_vector_line(md: bytes, npy: bytes) -> bytes:
    """The .md with `vec:` dropped and `vector: <base64 f16 LE>` as the last frontmatter key."""
    head, rest = split(md)
    head = VEC_LINE.sub(b"", head)
    b64 = base64.b64encode(f16_of(npy).astype("<f2").tobytes())
    return head + b"vector: " + b64 + b"\n" + rest


def int8_npy(npy: bytes) -> bytes:
    return npy_bytes(quantize(f16_of(npy).astype(np.float32)[None, :])[0])


def quantize(m: np.ndarray, scale: str = "unit") -> np.ndarray:
    """int8 per row: "unit" = round(v/|v| * 127) (the stored variant); "maxabs" = round(v *
    127/max|v|), which uses the whole int8 range and costs nothing for cosine (scale-free)."""
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    unit = m / np.where(norms == 0, 1, norms)
    if scale == "maxabs":
        peak = np.abs(unit).max(axis=1, keepdims=True)
        unit = unit / np.where(peak == 0, 1, peak)
    return np.clip(np.rint(unit * 127), -127, 127).astype(np.int8)


def vec_value(vec: str) -> bytes:
    # the YAML dumper quotes a scalar that would read as a number (all digits, or `1e5`-like)
    quoted = re.fullmatch(r"[0-9]+(e[0-9]+)?", vec) is not None
    return (f"vec: '{vec}'\n" if quoted else f"vec: {vec}\n").encode()


# ---------------------------------------------------------------- the variants


def non_chunk(tree: Tree) -> Tree:
    """Docs, code and the rest of .neocortex/ (manifest, .gitignore, memories): kept as is."""
    return {p: d for p, d in tree.items() if not p.startswith(CHUNKS)}


def v_docs(tree: Tree) -> Tree:
    return {p: d for p, d in tree.items() if not p.startswith(NC)}


def v_today(tree: Tree) -> Tree:
    return dict(tree)


def v_pairs(tree: Tree) -> Tree:
    out = non_chunk(tree)
    for stem, (md, npy) in units_of(tree).items():
        out[stem + ".md"], out[stem + ".npy"] = md, npy
    return out


def v_vecmd(tree: Tree) -> Tree:
    out = non_chunk(tree)
    for stem, (md, npy) in units_of(tree).items():
        out[stem + ".md"] = with_vector_line(md, npy)
    return out


def v_int8(tree: Tree) -> Tree:
    out = non_chunk(tree)
    for stem, (md, npy) in units_of(tree).items():
        q = int8_npy(npy)
        head, rest = split(md)
        out[stem + ".md"] = VEC_LINE.sub(vec_value(blob_vec(q)), head) + rest
        out[stem + ".npy"] = q
    return out


SOURCE_PATH = re.compile(rb"^source_path: (.+)$", re.M)


def doc_order_key(md: bytes, doc_text: bytes) -> int:
    """Where the chunk starts in its doc: the offset of its first prose line (a heading if it has
    none). An approximation of the chunker's order, good enough to lay a pack out."""
    _, rest = split(md)
    body = rest[4:].splitlines()
    lines = [ln.strip() for ln in body if ln.strip()]
    prose = [ln for ln in lines if not ln.startswith(b"#")]
    for ln in prose[:1] or lines[:1]:
        at = doc_text.find(ln)
        if at >= 0:
            return at
    return len(doc_text)


def packs(tree: Tree, vector_in_md: bool, int8: bool = False) -> Tree:
    out = non_chunk(tree)
    by_doc: dict[str, list[tuple[str, bytes, bytes]]] = {}
    for stem, (md, npy) in units_of(tree).items():
        folder, slug = stem.rsplit("/", 1)
        by_doc.setdefault(folder, []).append((slug, md, npy))
    for folder, chunks in by_doc.items():
        m = SOURCE_PATH.search(chunks[0][1])
        doc_text = tree.get(m.group(1).decode().strip("'\""), b"") if m else b""
        chunks.sort(key=lambda c: (doc_order_key(c[1], doc_text), c[0]))
        parts = []
        for slug, md, npy in chunks:
            body = with_vector_line(md, npy) if vector_in_md else md
            parts.append(SEP.format(slug).encode() + body)
        out[folder + ".md"] = b"\n".join(parts)
        if not vector_in_md:
            rows = np.stack([f16_of(c[2]) for c in chunks])
            rows = quantize(rows.astype(np.float32), "maxabs") if int8 else rows
            out[folder + ".npy"] = npy_bytes(rows)
    return out


VARIANTS: dict[str, tuple[str, Callable[[Tree], Tree]]] = {
    "docs": ("docs only (no .neocortex/): the subtraction base", v_docs),
    "today": ("as committed (format 2: one .md per doc, vectors in it)", v_today),
    "pairs": ("format 1: .md + .npy (f16) per chunk", v_pairs),
    "vecmd": ("vector in the .md (base64 f16), one file per chunk", v_vecmd),
    "int8": ("int8 .npy per chunk", v_int8),
    "pack": ("one .md + one .npy (n x 256 f16) per doc", lambda t: packs(t, False)),
    "packvecmd": ("one .md per doc, vectors in it", lambda t: packs(t, True)),
    "packint8": ("as pack, .npy int8 max-abs scaled", lambda t: packs(t, False, int8=True)),
}


# ---------------------------------------------------------------- edits (real ncx sync)


def make_edits(tree_root: Path, work: Path, ncx: str, edits: int) -> list[Tree]:
    """States after each one-section edit + `ncx sync`, made on a copy of the tree."""
    base = read_tree(tree_root)
    copy = work / "edit"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(tree_root, copy, symlinks=True)  # the sync cache too: sync stays O(change)
    docs = sorted((copy / "copy1" / EDIT_SET / "text").glob("*.md"))
    docs = docs or sorted(p for p in copy.rglob("*.md") if NC not in str(p))
    states, cur = [base], dict(base)
    for i in range(edits):
        doc = docs[(17 * i + 5) % len(docs)]  # large_tree.doc_commits' choice
        edit_section(doc, f"footprint {i}")
        p = subprocess.run([ncx, "sync", "--json"], cwd=copy, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"ncx sync failed in {copy}:\n{p.stderr[-2000:]}")
        git(copy, "add", "-A")
        git(copy, "commit", "-q", "--no-verify", "-m", f"edit {i}")
        fields = (
            git(copy, "diff", "--no-renames", "--name-status", "-z", "HEAD~1", "HEAD")
            .decode()
            .split("\0")
        )
        for status, path in zip(fields[0::2], fields[1::2], strict=False):
            if status == "D":
                cur.pop(path, None)
            elif path:
                cur[path] = (copy / path).read_bytes()
        states.append(dict(cur))
        print(f"  edit {i}: {doc.relative_to(copy)} -> {len(fields) // 2} files", file=sys.stderr)
    shutil.rmtree(copy)
    return states


# ---------------------------------------------------------------- measuring one variant


def write_delta(root: Path, old: Tree, new: Tree) -> None:
    """Write only the files whose bytes changed; remove the ones that went away."""
    for path in old.keys() - new.keys():
        (root / path).unlink()
    for path, data in new.items():
        if old.get(path) != data:
            f = root / path
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(data)


def measure(name: str, convert: Callable[[Tree], Tree], states: list[Tree], work: Path) -> dict:
    t0 = time.time()
    root = work / f"repo-{name}"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "gc.auto", "0")
    trees = [convert(s) for s in states]
    write_delta(root, {}, trees[0])
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "docs + .neocortex")
    res: dict = {
        "nc_files": sum(1 for p in trees[0] if p.startswith(NC)),
        "nc_bytes": sum(len(d) for p, d in trees[0].items() if p.startswith(NC)),
        "pack": packed_bytes(root),
    }
    thin, stats, numstats = [], [], []
    for old, new in itertools.pairwise(trees):
        write_delta(root, old, new)
        git(root, "add", "-A")
        git(root, "commit", "-q", "--no-verify", "-m", "one-section edit")
        thin.append(thin_pack_bytes(root))
        stats.append(git(root, "diff", "--stat=200,150", "HEAD~1", "HEAD").decode())
        numstats.append(git(root, "diff", "--numstat", "HEAD~1", "HEAD").decode())
    edits = len(trees) - 1
    if edits:
        res["edit_growth"] = (packed_bytes(root) - res["pack"]) / edits
        res["thin_pack_median"] = statistics.median(thin)
        res["edit_stat"] = stats[0]
        res["edit_lines"] = [nc_lines(ns) for ns in numstats]
        res["edit_files"] = [len(ns.splitlines()) for ns in numstats]
    res["seconds"] = time.time() - t0
    shutil.rmtree(root)
    return res


def nc_lines(numstat: str) -> dict[str, int]:
    """Lines added+deleted under .neocortex/ and in the docs, binary files counted apart."""
    out = {"nc_lines": 0, "doc_lines": 0, "binary_files": 0}
    for line in numstat.splitlines():
        added, deleted, path = line.split("\t", 2)
        if added == "-":
            out["binary_files"] += 1
        elif path.startswith(NC):
            out["nc_lines"] += int(added) + int(deleted)
        else:
            out["doc_lines"] += int(added) + int(deleted)
    return out


# ---------------------------------------------------------------- int8 retrieval impact


def topk(scores: np.ndarray, k: int) -> np.ndarray:
    idx = np.argpartition(-scores, k, axis=1)[:, :k]
    return idx


def int8_overlap(tree: Tree, queries: int = 200, k: int = 10, seed: int = 13) -> dict[str, float]:
    """Mean overlap@k of cosine top-k, float16 vectors vs their int8 copies (renormalised)."""
    units = units_of(tree)
    m = np.stack([f16_of(npy) for _, npy in units.values()]).astype(np.float32)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    queries = min(queries, len(m))  # a small tree (a smoke run) has fewer chunks
    rng = np.random.default_rng(seed)
    rand = rng.standard_normal((queries, m.shape[1])).astype(np.float32)
    rand /= np.linalg.norm(rand, axis=1, keepdims=True)
    picks = rng.choice(len(m), size=queries, replace=False)
    out = {"chunks": float(len(m))}
    for scale in ("unit", "maxabs"):
        q8 = quantize(m, scale).astype(np.float32)
        q8 /= np.maximum(np.linalg.norm(q8, axis=1, keepdims=True), 1e-12)

        def overlap(qs: np.ndarray, exclude: np.ndarray | None, q8: np.ndarray = q8) -> float:
            a, b = qs @ m.T, qs @ q8.T
            if exclude is not None:  # a chunk as its own query: leave itself out
                a[np.arange(len(qs)), exclude] = -np.inf
                b[np.arange(len(qs)), exclude] = -np.inf
            ta, tb = topk(a, k), topk(b, k)
            return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(ta, tb, strict=True)]))

        out[f"{scale}_random_unit_queries"] = overlap(rand, None)
        out[f"{scale}_chunk_vector_queries"] = overlap(m[picks], picks)
    return out


# ---------------------------------------------------------------- report


def tokens_of(tree: Tree) -> int:
    total = 0
    for md, _npy in units_of(tree).values():
        m = TOKENS_RE.search(md[:4000].decode("utf-8", "replace"))
        total += int(m.group(1)) if m else 0
    return total


def render(args: argparse.Namespace, facts: dict, results: dict[str, dict]) -> str:
    tok = facts["tokens"]
    docs = results["docs"]
    k = tok / 1000
    head = [
        "| variant | files under .neocortex | files / 1k tokens | packed .git | "
        "minus docs-only | KiB packed / 1k tokens | one-edit packed growth (gc) | "
        "docs-only growth | thin push pack | files / lines changed per edit |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = []
    for name, r in results.items():
        extra = r["pack"] - docs["pack"]
        lines = r.get("edit_lines", [{}])[0]
        changed = (
            f"{r['edit_files'][0]} files; .neocortex {lines.get('nc_lines', 0)} lines"
            f" + {lines.get('binary_files', 0)} binary; doc {lines.get('doc_lines', 0)} lines"
            if "edit_files" in r
            else ""
        )
        growth = r.get("edit_growth", 0.0)
        rows.append(
            f"| {name}: {VARIANTS[name][0]} | {r['nc_files']:,} | {r['nc_files'] / k:.2f} | "
            f"{r['pack'] / 1e6:.1f} MB | {extra / 1e6:.1f} MB | {extra / 1024 / k:.2f} | "
            f"{growth / 1024:.1f} KiB | "
            f"{(growth - docs.get('edit_growth', 0.0)) / 1024:+.1f} KiB vs docs | "
            f"{r.get('thin_pack_median', 0) / 1024:.1f} KiB | {changed} |"
        )
    stats = [
        f"### `git diff --stat` of the first edit: {name}\n\n```\n{r['edit_stat'].rstrip()}\n```"
        for name, r in results.items()
        if "edit_stat" in r
    ]
    ov = facts.get("int8_overlap")
    return "\n".join(
        [
            f"- tree: {args.tree} (HEAD {facts['head']}); {facts['chunks']:,} chunks; doc tokens ="
            f" sum of `tokens:` in chunk frontmatter = {tok:,}",
            f"- one-section edits replayed: {facts['edits']} (large_tree.py's edit_section on its"
            f" doc choice, real `ncx sync`); growth = (packed after all edits - packed before)"
            f" / edits",
            *([] if ov is None else [int8_line(ov)]),
            "",
            *head,
            *rows,
            "",
            *stats,
            "",
        ]
    )


def int8_line(ov: dict[str, float]) -> str:
    return (
        f"- int8 vs float16, mean overlap@10 of cosine top-10 over {ov['chunks']:,.0f}"
        f" chunks, 200 random unit queries / 200 random chunk vectors as queries (itself left"
        f" out): round(v/|v|*127) (the measured variant) "
        f"{ov['unit_random_unit_queries']:.3f} / {ov['unit_chunk_vector_queries']:.3f};"
        f" per-vector max-abs scaling round(v*127/max|v|) "
        f"{ov['maxabs_random_unit_queries']:.3f} / {ov['maxabs_chunk_vector_queries']:.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True, help="synced git repo (only read)")
    ap.add_argument("--ncx", default=shutil.which("ncx"), help="ncx for the edit's sync")
    ap.add_argument("--workdir", type=Path, required=True, help="scratch (repos built here)")
    ap.add_argument("--variants", default="today,pairs,vecmd,int8,pack,packvecmd")
    ap.add_argument("--edits", type=int, default=3)
    ap.add_argument("--out", type=Path, help="write the markdown report here too")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()
    if not args.ncx:
        sys.exit("pass --ncx PATH")
    names = ["docs", *[v for v in args.variants.split(",") if v and v != "docs"]]
    for v in names:
        if v not in VARIANTS:
            sys.exit(f"unknown variant {v!r}; known: {', '.join(VARIANTS)}")
    work = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    t0, load0 = time.time(), os.getloadavg()
    print("edits on a copy ...", file=sys.stderr)
    states = make_edits(args.tree.resolve(), work, args.ncx, args.edits)
    facts: dict = {
        "head": git(args.tree, "rev-parse", "--short", "HEAD").decode().strip(),
        "chunks": len(units_of(states[0])),
        "tokens": tokens_of(states[0]),
        "edits": args.edits,
    }
    if "int8" in names:
        facts["int8_overlap"] = int8_overlap(states[0])
        print(f"  int8 overlap: {facts['int8_overlap']}", file=sys.stderr)
    results: dict[str, dict] = {}
    for name in names:
        results[name] = measure(name, VARIANTS[name][1], states, work)
        r = results[name]
        print(
            f"  {name}: {r['nc_files']} files, pack {r['pack']} B, {r['seconds']:.0f} s",
            file=sys.stderr,
        )
    load1 = os.getloadavg()
    text = "\n".join(
        [
            f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}, {git(work, 'version').decode().strip()}; load average "
            f"(1/5/15 min) at start {'/'.join(f'{x:.2f}' for x in load0)}, at end "
            f"{'/'.join(f'{x:.2f}' for x in load1)}; wall {time.time() - t0:.0f} s",
            "",
            render(args, facts, results),
        ]
    )
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    if args.json_out:
        args.json_out.write_text(json.dumps({"facts": facts, "results": results}, indent=1))


if __name__ == "__main__":
    main()
