"""Linear costs of issue 18: line attachment on a 50 MB doc, a 2 MB single-line paragraph,
the staged-size check before reading. Old and new side by side, in one process.

Usage: python benchmarks/hostile_costs.py [--mb 50]
"old" line attachment is the previous algorithm (a `str.find` from the start of the doc and
a newline count up to the hit, per chunk), kept here verbatim for the comparison; on the
full doc it is timed on a sample of chunks and extrapolated (it would run for minutes).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ncx.query.lines import locate
from ncx.tree.chunker import ChunkSettings, chunk_markdown


def old_attach(text: str, bodies: list[str]) -> list[tuple[int, int] | None]:
    out: list[tuple[int, int] | None] = []
    for body in bodies:
        pos = text.find(body) if body and text else -1
        out.append(None if pos < 0 else (pos, text.count("\n", 0, pos) + 1))
    return out


def big_doc(mb: int) -> str:
    rng = random.Random(0)
    words = "token refresh cache index commit retry timeout session config deploy".split()
    parts = []
    size = 0
    n = 0
    while size < mb * 1_000_000:
        n += 1
        para = " ".join(rng.choice(words) for _ in range(60)) + f" para {n}."
        block = f"## Section {n}\n\n{para}\n{para}\n\n" if n % 4 == 0 else para + "\n\n"
        parts.append(block)
        size += len(block)
    return "# Big\n\n" + "".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=50)
    args = ap.parse_args()

    text = big_doc(args.mb)
    t = time.perf_counter()
    chunks = chunk_markdown(text)
    t_chunk = time.perf_counter() - t
    bodies = [c.text.strip("\n") for c in chunks]
    print(f"doc: {len(text) / 1e6:.1f} MB, {len(bodies)} chunks (chunked in {t_chunk:.1f} s)")

    t = time.perf_counter()
    new = locate(text, bodies)
    t_new = time.perf_counter() - t
    sample = bodies[:: max(1, len(bodies) // 200)]
    t = time.perf_counter()
    old = old_attach(text, sample)
    t_old_sample = time.perf_counter() - t
    t_old = t_old_sample * len(bodies) / len(sample)
    assert old == [new[bodies.index(b)] for b in sample]
    print(
        f"line attachment, {args.mb} MB doc: old {t_old:.0f} s (extrapolated from "
        f"{len(sample)} chunks: {t_old_sample:.2f} s), new {t_new:.2f} s"
    )

    line = "word " * 400_000  # 2 MB, one line, ~400,000 tokens
    cap = ChunkSettings().max_tokens
    t = time.perf_counter()
    pieces = chunk_markdown("# One line\n\n" + line + "\n")
    t_line = time.perf_counter() - t
    print(
        f"2 MB single-line paragraph: {len(pieces)} chunks, largest "
        f"{max(c.tokens for c in pieces)} tokens (cap {cap}), {t_line:.2f} s"
    )

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / "huge.md").write_bytes(b"# Huge\n\n" + b"y " * 250_000_000)  # 500 MB
        subprocess.run(["git", "-C", str(root), "add", "huge.md"], check=True)
        from ncx import repo

        t = time.perf_counter()
        sizes = repo.staged_sizes(root, ["huge.md"])
        t_size = time.perf_counter() - t
        t = time.perf_counter()
        data = repo.read_staged(root, ["huge.md"])
        t_read = time.perf_counter() - t
        print(
            f"500 MB staged doc: size check {t_size * 1000:.0f} ms ({sizes['huge.md'] / 1e6:.0f} MB)"
            f" vs reading it {t_read:.2f} s ({len(data['huge.md']) / 1e6:.0f} MB)"
        )


if __name__ == "__main__":
    main()
