"""benchmark: what ncx saves on this tree — full docs vs wake-up and task frames, and speed.

Measures, never writes to the tree (only the untracked cache may be built).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ncx.config import Config
from ncx.layout import NCX_DIR, cache_dir
from ncx.tokens import count_tokens

CONTEXT_WINDOW = 200_000


@dataclass
class BenchReport:
    docs: int = 0
    doc_tokens: int = 0
    chunks: int = 0
    memories: int = 0
    wakeup_tokens: int = 0
    tasks: list[dict[str, Any]] = field(default_factory=list)
    assemble_cold_ms: float = 0.0
    assemble_warm_ms: float = 0.0
    tree_bytes: int = 0
    cache_bytes: int = 0

    @property
    def mean_frame_tokens(self) -> float:
        return statistics.mean(t["tokens"] for t in self.tasks) if self.tasks else 0.0

    def as_json(self) -> dict[str, Any]:
        frame = self.mean_frame_tokens
        return {
            "docs": self.docs,
            "doc_tokens": self.doc_tokens,
            "chunks": self.chunks,
            "memories": self.memories,
            "wakeup_tokens": self.wakeup_tokens,
            "mean_task_frame_tokens": round(frame, 1),
            "reduction_factor": round(self.doc_tokens / frame, 1) if frame else None,
            "window_share_full_docs": round(self.doc_tokens / CONTEXT_WINDOW, 4),
            "window_share_at_task_start": round((self.wakeup_tokens + frame) / CONTEXT_WINDOW, 4),
            "assemble_cold_ms_median": round(self.assemble_cold_ms, 1),
            "assemble_warm_ms_median": round(self.assemble_warm_ms, 1),
            "tree_bytes": self.tree_bytes,
            "cache_bytes": self.cache_bytes,
            "tasks": self.tasks,
        }


def tasks_from_headings(root: Path, n: int) -> list[str]:
    """Deterministic sample of tasks: second-level headings spread across the tree."""
    from ncx.query.cache import load_index

    index = load_index(root)
    seen: list[str] = []
    for u in index.units:
        sec = u.section or []
        if u.kind == "chunk" and len(sec) >= 2 and sec[-1] not in seen:
            seen.append(str(sec[-1]))
    if not seen:
        return []
    step = max(1, len(seen) // n)
    return [f"Work on: {h}" for h in seen[::step][:n]]


def run_benchmark(root: Path, cfg: Config, tasks: list[str], budget: int, runs: int) -> BenchReport:
    from ncx.manifest import load_manifest
    from ncx.query.context import FrameRequest, build_frame, wakeup
    from ncx.query.search import Searcher
    from ncx.sources import list_sources

    rep = BenchReport()
    sources = list_sources(root, load_manifest(root))
    rep.docs = len(sources)
    for p in sources:
        try:
            rep.doc_tokens += count_tokens((root / p).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    searcher = Searcher.open(root, cfg)
    rep.chunks = searcher.index.column("kind").count("chunk")
    rep.memories = len(searcher.index.units) - rep.chunks
    rep.wakeup_tokens = count_tokens(wakeup(root, cfg))
    warm: list[float] = []
    for task in tasks:
        t = time.perf_counter()
        frame = build_frame(root, cfg, FrameRequest(task=task, budget=budget), searcher)
        warm.append((time.perf_counter() - t) * 1000)
        rep.tasks.append({"task": task, "tokens": frame.tokens, "frame_id": frame.id})
    rep.assemble_warm_ms = statistics.median(warm) if warm else 0.0
    if tasks:
        cold = []
        ncx = str(Path(sys.executable).parent / "ncx")
        cmd = [ncx, "assemble", "--task", tasks[0], "--budget", str(budget)]
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run(cmd, cwd=root, capture_output=True, check=False)
            cold.append((time.perf_counter() - t) * 1000)
        rep.assemble_cold_ms = statistics.median(cold)
    rep.tree_bytes = _size(root / NCX_DIR, skip=cache_dir(root))
    rep.cache_bytes = _size(cache_dir(root))
    return rep


def _size(folder: Path, skip: Path | None = None) -> int:
    total = 0
    for dirpath, dirs, names in os.walk(folder):
        if skip is not None and Path(dirpath) == skip:
            dirs.clear()
            continue
        total += sum((Path(dirpath) / n).stat().st_size for n in names)
    return total


def render_markdown(rep: BenchReport) -> str:
    d = rep.as_json()
    rows = [
        ("docs / chunks / memories", f"{d['docs']} / {d['chunks']} / {d['memories']}"),
        ("tokens of all docs", f"{d['doc_tokens']:,}"),
        ("wake-up frame", f"{d['wakeup_tokens']:,} tokens"),
        (f"task frame (mean of {len(rep.tasks)})", f"{d['mean_task_frame_tokens']:,.0f} tokens"),
        ("reduction (all docs / task frame)", f"{d['reduction_factor']}×"),
        ("200k window used: all docs", f"{d['window_share_full_docs']:.1%}"),
        (
            "200k window used at task start (wake-up + frame)",
            f"{d['window_share_at_task_start']:.1%}",
        ),
        ("assemble, cold process (median)", f"{d['assemble_cold_ms_median']:.0f} ms"),
        ("assemble, warm (median)", f"{d['assemble_warm_ms_median']:.1f} ms"),
        (
            ".neocortex/ size (tracked) / cache",
            f"{d['tree_bytes'] / 1e6:.1f} MB / {d['cache_bytes'] / 1e6:.1f} MB",
        ),
    ]
    out = ["| measure | value |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(out) + "\n"
