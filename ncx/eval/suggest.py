"""suggest: questions to start an evals file from, taken from the docs' headings and the
memories (`ncx eval --suggest`). A start for a team to edit, not a test suite by itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ncx.eval.spec import EVALS_PATH

PER_DOC = 2  # headings asked per doc: the first sections say what a doc is for
_SLUG = re.compile(r"[^a-z0-9]+")
_HEADING = re.compile(r"^ {0,3}#{2,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def _slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")[:48] or "q"


def _q(text: str) -> str:
    # A JSON string is a YAML double-quoted scalar: any text, one line, no YAML surprises.
    return json.dumps(text, ensure_ascii=False)


def suggest(root: Path, *, limit: int = 100) -> str:
    """An evals file (YAML) of up to `limit` questions, deterministic for a tree."""
    from ncx.memory.file import body_sections
    from ncx.query.cache import load_index
    from ncx.query.floor import is_log

    index = load_index(root)
    per_doc: dict[str, list[tuple[str, ...]]] = {}
    memories: list[tuple[str, str]] = []
    for i, u in enumerate(index.units):
        if u.kind == "memory":
            if (u.status or "active") == "active":
                body = index.body(i)
                learning = " ".join((body_sections(body).get("learning") or body).split())
                if learning:
                    memories.append((u.id, learning))
        elif u.kind == "chunk" and u.section and not is_log(u.source_path):
            got = per_doc.setdefault(u.source_path, [])
            if len(got) >= PER_DOC:
                continue
            # A chunk may hold several short sections: its trail names the first, its
            # body's headings the others (read only while the doc needs more).
            title = str(u.section[0])
            heads = list(u.section[1:]) + [h for h in _HEADING.findall(index.body(i)) if h != title]
            for h in heads:
                if len(got) < PER_DOC and h not in {t[-1] for t in got}:
                    got.append((title, h))
    picks: list[tuple[str, str, list[str]]] = []  # (id, ask, expect lines)
    for path in sorted(per_doc):
        for trail in per_doc[path]:
            ask = f"{trail[-1]} ({trail[0]})" if trail[0] != trail[-1] else trail[-1]
            picks.append(
                (
                    _slug(f"{Path(path).stem}-{trail[-1]}"),
                    ask,
                    [f"doc: {_q(path)}", f"section: {_q(trail[-1])}"],
                )
            )
    for mid, learning in sorted(memories):
        words = learning.split()
        ask = " ".join(words[:14]) + (" ..." if len(words) > 14 else "")
        picks.append((_slug(mid), ask, [f"memory: {_q(mid)}"]))
    # Spread over the tree when there are more than `limit`: every n-th, in a fixed order.
    if len(picks) > limit:
        step = len(picks) / limit
        picks = [picks[int(i * step)] for i in range(limit)]
    out = [
        f"# {EVALS_PATH}: questions the knowledge must answer (`ncx eval`; docs/formats.md).",
        "# Suggested from the docs' headings and the memories: keep the ones that matter,",
        "# reword `ask:` as a teammate or an agent would ask it.",
        "questions:",
    ]
    seen: set[str] = set()
    for qid, ask, expect in picks:
        base, n = qid, 2
        while qid in seen:
            qid, n = f"{base}-{n}", n + 1
        seen.add(qid)
        out += [f"  - id: {qid}", f"    ask: {_q(ask)}", "    expect:"]
        out.append(f"      - {expect[0]}")
        out += [f"        {line}" for line in expect[1:]]
    return "\n".join(out) + "\n"
