"""dupes: active memories that say the same thing, as a merge can leave them.

`ncx memory add` refuses a near-duplicate of an active memory (ncx.memory.ops); two branches
that each add the same learning each pass that check, and the merge keeps both (their ids
differ by a day or a word). The post-merge hook and `ncx status` name such pairs, with the
command that keeps one, at the cosine `add` uses.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ncx.errors import NcxError
from ncx.layout import memories_dir


@dataclass(frozen=True, slots=True)
class Pair:
    older: str
    newer: str
    cosine: float

    def __str__(self) -> str:
        return (
            f"{self.newer} is a near-duplicate of {self.older} (cosine {self.cosine:.2f}), "
            f"both active; keep one: `ncx memory evolve {self.newer} --supersede-by "
            f"{self.older}`"
        )


def near_duplicates(root: Path, among: Collection[str] | None = None) -> list[Pair]:
    """Pairs of active memories at or above the duplicate cosine of `memory add`; with
    `among` (memory ids), only pairs holding one of them (what a merge brought in)."""
    import numpy as np

    from ncx.memory.file import read_memory
    from ncx.memory.ops import DUPLICATE_COS

    folder = memories_dir(root)
    if not folder.is_dir():
        return []
    ids, vecs = [], []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".md"):
            continue
        try:
            mem = read_memory(folder / name)
            vec = np.load(folder / (name[:-3] + ".npy"), allow_pickle=False)
        except (NcxError, OSError, ValueError):
            continue  # `ncx check` names a broken pair
        if mem.meta.get("status", "active") != "active" or vec.ndim != 1:
            continue
        ids.append(mem.id)
        vecs.append(np.asarray(vec, dtype=np.float32))
    if len(ids) < 2 or len({v.shape for v in vecs}) != 1:
        return []
    raw = np.stack(vecs)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    unit = raw / np.where(norms == 0, 1, norms)
    sims = unit @ unit.T
    pick = set(range(len(ids))) if among is None else {i for i, m in enumerate(ids) if m in among}
    out = []
    for i in sorted(pick):
        for j in range(len(ids)):
            if j == i or (j in pick and j < i) or sims[i, j] < DUPLICATE_COS:
                continue
            a, b = sorted((ids[i], ids[j]))  # ids begin with their day: sorted, older first
            out.append(Pair(a, b, float(sims[i, j])))
    return sorted(set(out), key=lambda p: (p.older, p.newer))
