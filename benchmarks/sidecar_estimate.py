"""What would a committed per-doc lexical sidecar cost, and would it make a cold frame cheap?

Usage: python benchmarks/sidecar_estimate.py TREE [--copies N] [--runs 3]

Issue 28 asks that a fresh clone's first frame be the warm one, within 10x `python -c
"import numpy"`. Today a fresh clone of a large tree answers from a quick search, because the
search cache is built by reading and tokenising every chunk (11-20 s on 40,000 chunks). One
design (the note of issue 28, design (a)) commits, beside each doc's chunk file, what the
cache builds from it: each unit's term counts per BM25F field (terms as 64-bit hashes, so no
vocabulary has to be merged) and field lengths. This estimates both sides of that trade on
a synced TREE, from its own search cache:

- size: every doc's sidecar written as a compressed .npz (one file per doc, as the chunk
  files are), against the chunk files' bytes;
- cold cost: reading every sidecar, concatenating them, and building the term-major
  postings the BM25F arrays are computed from (np.unique over the hashes), beside reading
  every chunk file's inline vectors (the dense side) with one regex per file. `--copies N`
  repeats the tree's sidecars N times to reach a larger tree's unit count.

Nothing here is used by ncx; it prints one markdown table.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _hash64(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()

    from ncx.query.cache import _previous, cache_dir

    prev = _previous(cache_dir(a.tree) / "index.npz")
    assert prev is not None, "sync the tree and run a query first (no search cache)"
    post, units = prev.postings, prev.units
    hashes = np.array([_hash64(t) for t in post.vocab], dtype=np.uint64)
    term_of = np.repeat(np.arange(len(post.vocab)), np.diff(post.ptr))
    unit_of = post.seg >> 3
    files = units.column("file")
    by_file: dict[str, list[int]] = {}
    for i, f in enumerate(files):
        by_file.setdefault(f, []).append(i)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        order = np.argsort(unit_of, kind="stable")
        starts = np.searchsorted(unit_of[order], np.arange(len(files) + 1))
        sidecar_bytes = 0
        for k, (_f, rows) in enumerate(sorted(by_file.items())):
            first, last = rows[0], rows[-1] + 1  # a file's units are consecutive rows
            e = order[starts[first] : starts[last]]
            path = out / f"{k}.npz"
            np.savez_compressed(
                path,
                hash=hashes[term_of[e]],
                seg=((unit_of[e] - first) << 3 | (post.seg[e] & 7)).astype(np.int32),
                count=post.count[e].astype(np.int16),
                lens=post.lens[first:last].astype(np.int32),
            )
            sidecar_bytes += path.stat().st_size
        chunk_bytes = sum((a.tree / f).stat().st_size for f in by_file)

        paths = sorted(out.glob("*.npz")) * a.copies
        times = []
        for _ in range(a.runs):
            t = time.perf_counter()
            parts, lens, at = [], [], 0
            for p in paths:
                with np.load(p) as z:
                    h, seg, c, ln = z["hash"], z["seg"], z["count"], z["lens"]
                parts.append((h, (seg >> 3) + at, seg & 7, c))
                lens.append(ln)
                at += len(ln)
            h = np.concatenate([x[0] for x in parts])
            vocab, term = np.unique(h, return_inverse=True)
            order2 = np.argsort(term, kind="stable")
            ptr = np.searchsorted(term[order2], np.arange(len(vocab) + 1))
            _ = (ptr, np.concatenate([x[1] for x in parts])[order2], np.concatenate(lens))
            times.append(time.perf_counter() - t)
        load_s = statistics.median(times)

    vec = re.compile(rb"^vec: f16:(\S+)$", re.MULTILINE)
    vtimes = []
    for _ in range(a.runs):
        t = time.perf_counter()
        n = 0
        for _c in range(a.copies):
            for f in by_file:
                found = vec.findall((a.tree / f).read_bytes())
                if found:
                    raw = base64.b64decode(b"".join(found))
                    n += len(np.frombuffer(raw, dtype=np.float16)) // 256
        vtimes.append(time.perf_counter() - t)
    t = time.perf_counter()
    __import__("subprocess").run([sys.executable, "-c", "import numpy"], check=True)
    floor = time.perf_counter() - t

    n_units = len(files) * a.copies
    print(
        "| units | docs | chunk files | sidecars (npz) | sidecars / chunk files | load + postings | vectors from chunk files | import numpy |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {n_units:,} | {len(by_file) * a.copies:,} | {chunk_bytes * a.copies / 1e6:.1f} MB | "
        f"{sidecar_bytes * a.copies / 1e6:.1f} MB | {sidecar_bytes / chunk_bytes:.0%} | "
        f"{load_s:.2f} s | {statistics.median(vtimes):.2f} s | {floor:.2f} s |"
    )


if __name__ == "__main__":
    main()
