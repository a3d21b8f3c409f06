"""run: ask each question of the evals file through the ranking and the frame agents get.

A question passes when every answer it expects is in the frame `ncx assemble --task ASK`
builds with the default options (and, with `top: N`, among the first N results of
`ncx retrieve ASK`). Reports hold no scores, times or paths of this machine: the same
questions over the same commit give the same bytes anywhere.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.config import Config
from ncx.eval.spec import Evals, Expect, Question

if TYPE_CHECKING:
    from ncx.query.rank import Hit
    from ncx.query.search import Searcher
    from ncx.query.state import GitState

RETRIEVE_K = 50  # how deep a rank is reported; past it an answer is "not in the results"


@dataclass(frozen=True)
class Found:
    """Where one expected answer was found: its rank in the results, whether in the frame."""

    expect: Expect
    rank: int | None
    in_frame: bool


@dataclass(frozen=True)
class Result:
    question: Question
    found: tuple[Found, ...]

    @property
    def passed(self) -> bool:
        top = self.question.top
        return all(f.in_frame and (not top or (f.rank or top + 1) <= top) for f in self.found)

    @property
    def rank(self) -> int | None:
        """The rank of the answer found last (None when one is not in the results)."""
        ranks = [f.rank for f in self.found]
        return None if None in ranks else max(r or 0 for r in ranks)

    @property
    def in_frame(self) -> bool:
        return all(f.in_frame for f in self.found)

    def as_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "rank": self.rank,
            "in_frame": self.in_frame,
            "answers": [
                {"answer": f.expect.label(), "rank": f.rank, "in_frame": f.in_frame}
                for f in self.found
            ],
        }


@dataclass(frozen=True)
class Report:
    at: str  # what was asked: "working tree at <sha>" or "commit <sha>"
    results: tuple[Result, ...]

    def by_id(self) -> dict[str, Result]:
        return {r.question.id: r for r in self.results}


_ATTR = re.compile(r"\s*\{[^{}]*\}\s*$")  # a heading's `{ #anchor }` attributes


def heading_key(text: str) -> str:
    """A heading as compared: case, spacing, leading `#`s and `{#anchor}` ignored."""
    return " ".join(_ATTR.sub("", text.strip().lstrip("#")).split()).casefold()


_MD_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def matches(
    x: Expect,
    kind: str,
    uid: str,
    source_path: str,
    section: Sequence[str],
    symbol: str = "",
    text: Callable[[], str] = str,
) -> bool:
    """Whether a result (a chunk, a memory, a code unit) is the answer `x` expects. A chunk
    may hold several short sections (its trail names the first): a section is also found
    among the headings of the chunk's `text`, read only for a chunk of the expected doc."""
    if x.memory:
        return kind == "memory" and uid == x.memory
    if x.doc:
        if kind == "memory" or source_path != x.doc:
            return False
        if not x.section:
            return True
        want = heading_key(x.section)
        return want in {heading_key(t) for t in section} or want in {
            heading_key(h) for h in _MD_HEADING.findall(text())
        }
    if x.file and source_path != x.file:
        return False
    if x.symbol:
        want = x.symbol.rstrip("()")
        names = {symbol, *section, uid.rsplit(":", 1)[-1], uid.rsplit("#", 1)[-1]}
        return want in {n.rstrip("()") for n in names if n}
    return True


PARALLEL_FROM = 24  # questions: below this, starting workers costs more than it saves


def run_evals(knowledge: Path, cfg: Config, evals: Evals, *, git: GitState, at: str) -> Report:
    """Ask every question of `evals` of the tree at `knowledge` (a checkout, or a commit
    materialised by ncx.eval.at); `git` is its frames' git state.

    A question costs three searches and a frame (~0.1-0.2 s on a 34,000-chunk tree): many
    are asked in worker processes, one contiguous share each (one cache load per worker),
    and the results come back in the file's order, the same as a serial run's."""
    from ncx.parallel import ordered_map, workers
    from ncx.query.cache import load_index

    questions = evals.questions
    n = min(workers(), len(questions) // (PARALLEL_FROM // 2) or 1)
    if len(questions) < PARALLEL_FROM or n < 2:
        return Report(at, tuple(_ask_all(knowledge, cfg, git, questions)))
    load_index(knowledge)  # built once here, not by every worker at the same time
    size = -(-len(questions) // n)
    shares = [questions[i : i + size] for i in range(0, len(questions), size)]
    ask = functools.partial(_ask_all, knowledge, cfg, git)
    done = ordered_map(ask, shares, at_least=2, chunksize=1)
    return Report(at, tuple(r for share in done for r in share))


def _ask_all(
    knowledge: Path, cfg: Config, git: GitState, questions: Sequence[Question]
) -> list[Result]:
    from ncx.query.context import FrameRequest, build_frame
    from ncx.query.search import Searcher

    searcher = Searcher.open(knowledge, cfg)
    results = []
    for q in questions:
        hits = searcher.search(q.ask, k=RETRIEVE_K)
        frame = build_frame(
            knowledge,
            cfg,
            FrameRequest(task=q.ask, budget=cfg.token_budget),
            searcher,
            git=git,
        )
        placed = [p for zone in frame.zones.values() for p in zone]
        found = []
        for x in q.expect:
            rank = next((i for i, h in enumerate(hits, 1) if _hit_is(x, h, searcher)), None)
            in_frame = any(
                matches(
                    x,
                    p.item.kind,
                    p.item.id,
                    p.item.source_path,
                    p.item.section,
                    str(p.item.meta.get("symbol", "")),
                    functools.partial(str, p.text),
                )
                for p in placed
            )
            found.append(Found(x, rank, in_frame))
        results.append(Result(q, tuple(found)))
    return results


def _hit_is(x: Expect, h: Hit, searcher: Searcher) -> bool:
    unit = searcher.index.units[h.unit]
    symbol = str(getattr(unit, "symbol", "") or "")  # a code unit's (ncx/code), when indexed
    read = functools.partial(searcher.text, h)
    return matches(x, h.kind, h.id, h.source_path, h.section, symbol, read)


def regressions(base: Report | None, now: Report) -> list[str]:
    """Ids of the questions that passed on `base` and fail `now`."""
    if base is None:
        return []
    before = base.by_id()
    return [
        r.question.id
        for r in now.results
        if not r.passed and (b := before.get(r.question.id)) is not None and b.passed
    ]


def _change(base: Result | None, now: Result) -> str:
    if base is None:
        return ""
    if base.passed == now.passed:
        return "still passes" if now.passed else "still fails"
    return "fixed" if now.passed else "BROKEN"


def report_json(now: Report, base: Report | None = None) -> dict[str, Any]:
    before = base.by_id() if base else {}
    questions = []
    for r in now.results:
        entry: dict[str, Any] = {"id": r.question.id, "ask": r.question.ask, **r.as_json()}
        if base is not None:
            b = before.get(r.question.id)
            entry["base"] = b.as_json() if b else None
            entry["change"] = _change(b, r)
        questions.append(entry)
    passed = sum(r.passed for r in now.results)
    out: dict[str, Any] = {
        "at": now.at,
        "questions": questions,
        "passed": passed,
        "failed": len(now.results) - passed,
    }
    if base is not None:
        out["base"] = base.at
        out["broken"] = regressions(base, now)
        out["fixed"] = [q["id"] for q in questions if q["change"] == "fixed"]
    return out


def _where(f: Found) -> str:
    rank = f"rank {f.rank}" if f.rank else f"not in the first {RETRIEVE_K} results"
    return f"{rank}, {'in the frame' if f.in_frame else 'not in the frame'}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report_markdown(now: Report, base: Report | None = None, *, heading: str = "#") -> str:
    data = report_json(now, base)
    total = len(now.results)
    title = f"{heading} ncx eval: {data['passed']} of {total} question(s) pass"
    if base is not None:
        title += f"; {len(data['broken'])} broken, {len(data['fixed'])} fixed since {base.at}"
    out = [title, "", f"Asked of the {now.at}.", ""]
    before = base.by_id() if base else {}
    if base is not None:
        for label, change in (("Broken", "BROKEN"), ("Fixed", "fixed")):
            rows = [r for r in now.results if _change(before.get(r.question.id), r) == change]
            if not rows:
                continue
            out += [f"{heading}# {label} since {base.at}", ""]
            for r in rows:
                b = before[r.question.id]
                out.append(f"- `{r.question.id}`: {_cell(r.question.ask)}")
                for f, fb in zip(r.found, b.found, strict=True):
                    out.append(f"  - {_cell(f.expect.label())}: was {_where(fb)}; now {_where(f)}")
            out.append("")
    cols = ["question", "result", "rank", "in frame", "answer"]
    if base is not None:
        cols.insert(2, "on base")
    out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in now.results:
        was = before.get(r.question.id)
        for i, f in enumerate(r.found):
            row = [
                f"`{r.question.id}`" if i == 0 else "",
                ("pass" if r.passed else "FAIL") if i == 0 else "",
                str(f.rank or "-"),
                "yes" if f.in_frame else "no",
                _cell(f.expect.label()),
            ]
            if base is not None:
                row.insert(
                    2, ("-" if was is None else "pass" if was.passed else "fail") if i == 0 else ""
                )
            out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def ask_commit(root: Path, cfg: Config, evals: Evals, rev: str) -> Report:
    """The questions asked of commit `rev`'s knowledge, built from its own files (ncx.eval.at)
    with its own model; a commit before `ncx init` answers none of them."""
    from ncx.eval.at import materialise
    from ncx.layout import manifest_path
    from ncx.query.state import git_state

    commit = materialise(root, rev, option="--since")
    at = f"commit {commit.sha[:12]}"
    if not manifest_path(commit.root).is_file():
        return Report(
            at,
            tuple(
                Result(q, tuple(Found(x, None, False) for x in q.expect)) for q in evals.questions
            ),
        )
    cfg = dataclasses.replace(cfg, model=None)  # its manifest's model, not one this run names
    return run_evals(commit.root, cfg, evals, git=git_state(root, commit.sha), at=at)
