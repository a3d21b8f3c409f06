"""context: gather what a frame needs (retrieval, memories, git state) and assemble it.

The composition layer behind `ncx assemble` and `ncx wakeup`: it does the I/O, the
assembler and retriever stay pure.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ncx.config import DEFAULT_TOKEN_BUDGET, Config
from ncx.errors import UsageError
from ncx.layout import ncx_command_name, ncx_dir
from ncx.query import assembler
from ncx.query.assembler import Frame, FrameInput, Item, assemble
from ncx.query.floor import evidence_floor, is_log, is_release_note
from ncx.query.lexical import terms as lexical_terms
from ncx.query.quote import (
    best_lines,
    ends_in_comment,
    is_link_list,
    lead,
    says_nothing,
    tidy,
)
from ncx.query.rank import Filters, Hit
from ncx.query.search import Searcher, clip_query
from ncx.query.state import GitState, git_state
from ncx.tokens import count_tokens

if TYPE_CHECKING:
    from ncx.code.rank import CodeHit
    from ncx.query.cache import Unit

MIN_BUDGET = 200
# Chunks one document may put in a frame: none by default (0). The fixed cap of 4 below a
# 5,000-token budget left answers out that were their document's 5th section (issue 28); the
# evidence plan (assembler.plan) now decides how many sections a document gives: whole while
# they score near the best, then PASSAGE_PER_DOC passages. FRAME_PER_DOC > 0 restores a cap
# of max(FRAME_PER_DOC, budget // FRAME_DOC_TOKENS) for a sweep.
FRAME_PER_DOC = 0
FRAME_DOC_TOKENS = 1000
INSTRUCTIONS = (
    "Cite the sources above as `path:lines` when you rely on them.",
    "If the knowledge above disagrees with the code, trust the code and record the "
    'correction: `ncx memory add "..." --type factual`.',
    'When you learn something worth keeping, save it: `ncx memory add "..." --context "..."`.',
)
LINKING_ITEMS = 3  # the best sections whose named code the frame's code search lifts
# A memory earns a place in a frame when it holds this idf-weighted share of the task's terms
# (Hit.confidence). benchmarks/memory_threshold.py: at 0.4 the gold memory of 98.9% of the
# ADR fact questions stays, and 7% of unrelated tasks (raydocs questions) still get one
# (every frame carried every active memory before: 100%).
MEMORY_MIN_CONFIDENCE = 0.4
STATE_FILE = "state.md"  # optional handoff/state note: .neocortex/state.md


@dataclass(frozen=True)
class FrameRequest:
    task: str
    criteria: tuple[str, ...] = ()
    budget: int = DEFAULT_TOKEN_BUDGET
    state_file: Path | None = None
    filters: Filters = Filters()
    # the rest of a task file (an issue's body): searched with the task, not quoted
    body: str = ""


def build_frame(
    root: Path,
    cfg: Config,
    req: FrameRequest,
    searcher: Searcher | None = None,
    *,
    git: GitState | None = None,
) -> Frame:
    """The frame for `req` from the tree at `root`; `git` replaces git_state(root) (a
    commit's own, for `--at`; read once for many frames by `ncx eval`)."""
    if req.budget < MIN_BUDGET:
        raise UsageError(
            f"a budget of {req.budget} tokens is too small for a frame",
            hint=f"give --budget {MIN_BUDGET} or more",
        )
    if not req.task.strip():
        raise UsageError("the task is empty", hint='give --task "what you are about to do"')
    # one line each, so the code ranking can tell an issue's title, words and dumps apart
    query = clip_query("\n".join([req.task, *req.criteria, req.body]))[0]
    if searcher is None:
        from ncx.query.beside import code_index_beside

        with code_index_beside(root):  # (a fresh clone: the code index built meanwhile)
            searcher = Searcher.open(root, cfg)
    s = searcher
    chunk_filters = Filters(frozenset({"chunk"}), req.filters.domains, req.filters.path_globs)
    knowledge = _fitting(s, query, chunk_filters, req.budget)
    memories = [
        h
        for h in s.search(query, k=12, filters=Filters(frozenset({"memory"}), req.filters.domains))
        if h.confidence >= MEMORY_MIN_CONFIDENCE
    ]
    q_terms = frozenset(lexical_terms(query))
    items = [_with_passage(s, h, _item(s, h), q_terms) for h in knowledge]
    # Only the best few can be quoted whole (assembler.plan): only they look for a follow-up.
    items[: assembler.WHOLE_MAX + 1] = [
        _with_follow(s, h, it)
        for h, it in zip(knowledge, items[: assembler.WHOLE_MAX + 1], strict=False)
    ]
    # A table of contents points at sections the ranking can name itself; quoted, it is
    # budget spent on links. Chunks that are nothing but markup after tidying go too.
    items = [
        it
        for it in items
        if it.text.strip() and not is_link_list(it.text) and not says_nothing(it.text)
    ]
    code, code_ev, code_out = code_items(
        root, query, req.filters.path_globs, items[:LINKING_ITEMS], budget=req.budget
    )
    items, below = evidence_floor(items, code_ev, with_code=bool(code), asked=q_terms)
    # The files the frame points to first: its code's, else the best sections' docs.
    lead = [it.source_path for it in code or items[: assembler.WHOLE_MAX]]
    at = git_state(root) if git is None else git
    state = at.lines(lead, asked_terms(req)) + _state_note(root, req.state_file)
    # Where HEAD is, and nothing else to say (no work in progress, no commit that touched the
    # frame's files, no note): the frame's first line says it, not a zone of its own (§96);
    # not a branch name holding `--`, which would end that HTML comment early.
    lone = len(state) == 1 and tuple(state) == at.head and "--" not in state[0]
    where = state[0] if lone else ""
    inp = FrameInput(
        code=tuple(code),
        task=req.task,
        criteria=req.criteria,
        knowledge=tuple(items),
        below=tuple(below),
        code_out=code_out,
        learnings=tuple(_item(s, h) for h in memories),
        state=() if where else tuple(state),
        where=where,
        instructions=_named(INSTRUCTIONS, ncx_command_name(root)),
        weak=bool(knowledge) and knowledge[0].weak,
        vague=is_vague(query),
    )
    return assemble(inp, req.budget)


def asked_terms(req: FrameRequest) -> frozenset[str]:
    """The terms of what the task asks (its text and criteria, not a task file's body: an
    issue's logs share a word with every commit): what Current State's commits are held to."""
    return frozenset(lexical_terms("\n".join([req.task, *req.criteria])))


def is_vague(query: str) -> bool:
    """The task names at most assembler.VAGUE_TERMS searchable terms ("how does it work":
    `work`): every section that uses the word matches it as well as the next."""
    return len(set(lexical_terms(query))) <= assembler.VAGUE_TERMS


def code_items(
    root: Path,
    query: str,
    path_globs: tuple[str, ...] = (),
    best_docs: Sequence[Item] = (),
    *,
    budget: int = DEFAULT_TOKEN_BUDGET,
) -> tuple[list[Item], float, tuple[Item, ...]]:
    """The frame's code to open: the best files' definitions (ncx.query.zone), cited
    path:lines with the symbol; the best definition with its body when it is short. A tree
    with no code index yet (a fresh clone) builds it first: a first frame holds the code
    every later one does (docs/decisions.md §44). Also the first hit each of the zone's
    rules left out, with why (for `--explain`: the next item below each floor)."""
    from ncx.code.index import has_code_index
    from ncx.code.search import CodeSearcher
    from ncx.code.text import shown_path
    from ncx.query import zone
    from ncx.query.zone import BRIEF, item_text, judged
    from ncx.slow import slow

    code = CodeSearcher(root)
    if not has_code_index(root):
        with slow("building the code index (once a clone)"):
            code.index  # noqa: B018 (loaded here, under the notice)
    linked = tuple(dict.fromkeys(link.unit for it in best_docs for link in code.links(it.text)))
    found = code.search(
        query, files=10, path_globs=path_globs, linked=linked, per_file=max(3, 1 + zone.TIES)
    )
    held = code.held_terms(query, list(dict.fromkeys(h.path for h in found)))
    mine = code.own_terms(query, [h for h in found if h.path == found[0].path])  # the ties'
    weighed = judged(found, shared=lambda h: held.get(h.path, 0), own=lambda h: mine[h.unit])
    chosen = [(h, why) for h, why, taken in weighed if taken]
    hits = [h for h, _ in chosen]
    left_out = _left_out(weighed)
    q_terms = frozenset(lexical_terms(query))

    def task_terms(line: str) -> frozenset[str]:
        return frozenset(lexical_terms(line)) & q_terms

    weights = code.term_weights(q_terms)  # the window of a long lead goes by them

    items: list[Item] = []
    read: dict[str, list[str] | None] = {}  # each file's lines, read once
    whole: list[CodeHit] = []  # the definitions quoted whole so far
    quoted: set[str] = set()  # the lead's quoted lines, stripped
    seen: dict[str, set[str]] = {}  # every item's quoted lines so far, stripped, by file
    kept: list[CodeHit] = []  # the definitions listed so far
    quote_tokens = zone.quote_tokens(budget, [h for h, _ in chosen])
    for i, (h, why) in enumerate(chosen):
        if any(zone.inside(h, w) for w in whole):
            continue  # inside a definition quoted whole above (a method, a nested def)
        if items and zone.inside(h, chosen[0][0]) and _head_quoted(root, h, read, quoted):
            continue  # its head is in the lead's quote already (a method of a class lead)
        short = zone.SHORT_WHOLE if i else 0
        if i == 0 or (short and h.kind != "module"):
            if h.path not in read:
                read[h.path] = _source_lines(root, h.path)
            lines = read[h.path]
        else:
            lines = None
        shown = shown_path(h.path)  # a file's name never writes the frame's markdown
        ident = f"{shown}:{h.qualname}" if h.qualname else shown
        if any(it.id == ident for it in items):  # one name, two definitions (an if/else)
            ident = f"{ident}:{h.start}"
        text = item_text(
            h,
            lines,
            body_tokens=quote_tokens[i] if i < len(quote_tokens) else 0,
            brief=i >= BRIEF,
            task_terms=task_terms,
            short=short,
            weights=weights,
        )
        if _repeats(text, seen.get(h.path, set())) and any(zone.nested(h, o) for o in kept):
            continue  # the class around an item, or a def inside it, quoting what it quotes
        seen.setdefault(h.path, set()).update(_code_lines(text, head=True))
        kept.append(h)
        items.append(
            Item(
                id=ident,
                kind="code",
                source_path=shown,
                start_line=_first_quoted(h, lines, text),
                end_line=h.end,
                section=(h.qualname,) if h.qualname else (),
                doc_id=None,
                score=h.file_score,
                text=text,
                why=why,
            )
        )
        if _quoted_whole(items[-1].text, h):
            whole.append(h)
        elif i == 0:
            quoted = {ln.strip() for ln in items[-1].text.split("\n") if ln.strip()}
    # the lead's evidence on the scale docs are held to (fuse.interleave)
    from ncx.query.fuse import CODE_IN_LIST

    return items, (CODE_IN_LIST * hits[0].confidence if hits else 0.0), left_out


def _left_out(weighed: Sequence[tuple[CodeHit, str, bool]]) -> tuple[Item, ...]:
    """The first hit the zone left out of the lead's file, and the first further file it
    left out, as items with why (`--explain` says them; the frame holds neither)."""
    from ncx.code.text import shown_path

    out: list[Item] = []
    lead = weighed[0][0].path if weighed else ""
    for same in (True, False):
        h, why = next(
            ((h, w) for h, w, t in weighed if not t and (h.path == lead) == same), (None, "")
        )
        if h is None:
            continue
        shown = shown_path(h.path)
        out.append(
            Item(
                id=f"{shown}:{h.qualname}" if h.qualname else shown,
                kind="code",
                source_path=shown,
                start_line=h.start,
                end_line=h.end,
                section=(h.qualname,) if h.qualname else (),
                doc_id=None,
                score=h.file_score,
                text="",
                why=why,
            )
        )
    return tuple(out)


def _first_quoted(h: CodeHit, lines: list[str] | None, text: str) -> int:
    """The first line an item cites: the first of the doc comment above the definition where
    the item quotes it (a Go item cited its `func` line and showed the comment above it),
    else the definition's first."""
    from ncx.code.langs import language_of
    from ncx.query.zone import fenced_lines, quoted_doc

    quoted = fenced_lines(text) if text.startswith("```") else None
    if lines is None or not quoted or not 0 < h.start <= len(lines):
        return h.start
    top = quoted_doc(lines, h.start - 1, language_of(h.path))[0]
    return top + 1 if top < h.start - 1 and quoted[0].strip() == lines[top].strip() else h.start


def _code_lines(text: str, *, head: bool = False) -> list[str]:
    """A code item's quoted lines, stripped, without the `...` that stand for lines left out;
    past its head (its signature or first line) unless `head`."""
    from ncx.query.zone import fenced_lines

    body = (fenced_lines(text) or [])[0 if head else 1 :]
    return [ln.strip() for ln in body if ln.strip() and ln.strip() != "..."]


def _repeats(text: str, shown: set[str]) -> bool:
    """Whether every body line a listed item quotes is quoted above already (a `class Ky`
    stub whose one line is inside the `Ky.create` lead's quote: decisions.md §68)."""
    body = _code_lines(text)
    return bool(body) and all(ln in shown for ln in body)


def _quoted_whole(text: str, lead: CodeHit) -> bool:
    """Whether the lead's item quotes its definition whole: fenced body lines, as many as
    the definition has, none of them a `...` that stands for lines left out."""
    from ncx.query.zone import fenced_lines

    lines = fenced_lines(text) if text.startswith("```") else None
    return (
        lead.kind != "module"
        and lines is not None
        and len(lines) >= lead.end - lead.start + 1
        and not any(ln.strip() == "..." for ln in lines)
    )


def _head_quoted(
    root: Path, h: CodeHit, read: dict[str, list[str] | None], quoted: set[str]
) -> bool:
    """Whether the line that opens h (past its decorators and attributes: `@property`
    stands above many) is among the lead's quoted lines: the lead's window shows it."""
    if h.path not in read:
        read[h.path] = _source_lines(root, h.path)
    lines = read[h.path] or []
    k = h.start - 1
    while 0 <= k < min(h.end, len(lines)) - 1 and lines[k].lstrip().startswith(("@", "#[")):
        k += 1
    if not 0 <= k < len(lines):
        return False
    head = lines[k].strip()
    return len(head) >= 8 and head in quoted


def _source_lines(root: Path, rel: str) -> list[str] | None:
    from ncx.code.langs import language_of
    from ncx.code.read import source_text
    from ncx.code.store import source_bytes

    data = source_bytes(root, rel)  # (outside a sparse checkout: its blob)
    # the text the code index read (its decoding, its line breaks), so the lines it cites
    return None if data is None else source_text(language_of(rel) or "", data).split("\n")


def _fitting(s: Searcher, query: str, filters: Filters, budget: int) -> list[Hit]:
    """The ranked chunks that could fit the budget, by their stored sizes (only those are
    read). The ranking is asked for more until they fill it: how many fit depends on the
    tree's unit sizes (a 4,000-token frame holds ~100 short notes but ~10 long sections),
    and a fixed count left notes the budget had room for out of the frame."""
    k = max(60, budget // 50)
    while True:
        hits = s.search(query, k=k, filters=filters, per_doc=frame_per_doc(budget))
        fitting: list[Hit] = []
        room, logs = budget, set[str]()
        for h in hits:
            if room <= 0:
                return fitting
            if is_release_note(h.source_path, h.section):
                # One entry per changelog: the next version's notes are more of the same.
                if h.source_path in logs:
                    continue
                logs.add(h.source_path)
            fitting.append(h)
            room -= min(h.tokens, assembler.BACKGROUND_ITEM_TOKENS or h.tokens) + 15
        if len(hits) < k:
            return fitting
        k *= 2


def frame_per_doc(budget: int) -> int:
    """How many chunks one document may put in a frame of `budget` tokens."""
    if not FRAME_PER_DOC:
        return 0
    return max(FRAME_PER_DOC, budget // FRAME_DOC_TOKENS) if FRAME_DOC_TOKENS else FRAME_PER_DOC


# What a frame item shows of its unit beside the text: a memory's type, confidence and
# status, a notebook chunk's cell, a dated doc's date (Item.citation).
_SHOWN = ("type", "confidence", "status", "cell", "dated")


def _shown(unit: Unit) -> dict[str, Any]:
    return {k: v for k in _SHOWN if (v := getattr(unit, k))}


def _item(s: Searcher, h: Hit) -> Item:
    unit = s.index.units[h.unit]
    meta = _shown(unit)
    return Item(
        id=h.id,
        kind=h.kind,
        source_path=h.source_path,
        start_line=h.start_line,
        end_line=h.end_line,
        section=h.section,
        doc_id=h.doc_id,
        score=h.score,
        text=_quoted(s, h) if h.kind == "chunk" else _learning(s.text(h)) + _stale_note(s, h),
        meta=meta,
        confidence=h.confidence,
        why=f"holds {h.confidence:.0%} of the task's terms" if h.kind == "memory" else "",
    )


def _with_passage(s: Searcher, h: Hit, it: Item, q_terms: frozenset[str]) -> Item:
    """The item with its passage: the lines of the chunk that share the most of the task's
    terms, about PASSAGE_TOKENS long, cited by their own line numbers where the chunk's text
    maps line for line onto its source (else by the chunk's)."""
    if count_tokens(it.text) <= assembler.PASSAGE_TOKENS * 1.5:
        return it
    raw = s.text(h).split("\n")
    terms = [frozenset(lexical_terms(ln)) & q_terms for ln in raw]
    # Grown until its quote, tidied, is worth a citation (PASSAGE_MIN_TOKENS): markup that
    # tidying drops (directive fences, labels) left some windows a pointer.
    for grow in (1.0, 1.5, 2.0):
        i, j = best_lines(raw, terms, int(assembler.PASSAGE_TOKENS * grow))
        i, j = _no_empty_code(raw, i, j)
        window = raw[i:j]
        if sum(1 for ln in raw[:i] if ln.lstrip().startswith("```")) % 2:
            window = ["```", *window]  # the window starts inside a code block: open it
        if sum(1 for ln in window if ln.lstrip().startswith("```")) % 2:
            window = [*window, "```"]  # ... or ends inside one: close it
        if ends_in_comment("\n".join(raw[:i])):
            window = ["<!--", *window]  # starts inside an HTML comment: tidy drops it whole
        text = tidy("\n".join(window), h.section if i == 0 else ())
        if count_tokens(text) >= assembler.PASSAGE_MIN_TOKENS:
            break
    if not text.strip():
        return it
    start, end = it.start_line, it.end_line
    if start is not None and end is not None and end - start + 1 == len(raw):
        start, end = start + i, start + j - 1
    return dataclasses.replace(
        it, passage=dataclasses.replace(it, text=text, start_line=start, end_line=end)
    )


_CLOSING = re.compile(r"[\s)\]}>;,]*\Z")  # a code line that only closes brackets


def _no_empty_code(raw: list[str], i: int, j: int) -> tuple[int, int]:
    """The window [i, j) less a code fence at its edge with none of its block's code inside
    the window (a window that starts on a block's closing fence, or ends on an opening one,
    quoted an empty code block: 21 of 531 flask and jotai frame items, issue 28), and less
    the code lines at its start that only close brackets it does not show opening."""

    def fence(k: int) -> bool:
        return raw[k].lstrip().startswith("```")

    def in_code(k: int) -> bool:
        return sum(1 for ln in raw[:k] if ln.lstrip().startswith("```")) % 2 == 1

    while i < j and (not raw[i].strip() or fence(i) or (_CLOSING.match(raw[i]) and in_code(i))):
        if fence(i) and not in_code(i):
            break  # an opening fence: its code follows
        i += 1  # (a `});` whose opening the window left out says nothing: 2 of a ky frame's 3)
    while j > i and (not raw[j - 1].strip() or fence(j - 1)):
        if fence(j - 1) and in_code(j - 1):
            break  # a closing fence: its code precedes
        j -= 1
    return i, j


def _with_follow(s: Searcher, h: Hit, it: Item) -> Item:
    """A section that ends by announcing what follows ("This is a simple example:") brings
    the next chunk of its document: without it the frame quotes the lead-in, not the answer."""
    if not it.text.rstrip().endswith(":"):
        return it
    unit = s.index.units[h.unit]
    files = s.index.column("file")
    same = {s.index.units[i].block: i for i, f in enumerate(files) if f == unit.file}
    # the next block with words: a heading alone (the chunker's lead of a long section)
    # names the section, it is not its content
    for block in (unit.block + 1, unit.block + 2):
        nxt = same.get(block)
        if nxt is None:
            return it
        u = s.index.units[nxt]
        text = tidy(s.index.shown(nxt, s.index.body(nxt)), tuple(u.section))
        if text.strip():
            break
    else:
        return it
    follow = Item(
        id=u.id,
        kind="chunk",
        source_path=u.source_path,
        start_line=u.start_line,
        end_line=u.end_line,
        section=tuple(u.section),
        doc_id=u.doc_id,
        score=h.score,
        text=text,
        meta=_shown(u),
    )
    return dataclasses.replace(it, follow=follow)


def _stale_note(s: Searcher, h: Hit) -> str:
    """A stale memory says so in the frame: the agent weighs it, and the fix is one command."""
    found = s.stale(h.unit)
    if not found:
        return ""
    what = ", ".join(c.cite.label() + (" (gone)" if c.gone else "") for c in found[:3]) + (
        " …" if len(found) > 3 else ""
    )
    return (
        f"\n\n_Cites {what}, changed since: confirm with "
        f"`ncx memory evolve {found[0].memory} --confirm`._"
    )


def _quoted(s: Searcher, h: Hit) -> str:
    text = tidy(s.text(h), h.section)
    # A changelog entry is history (what changed in one release), not how things work now:
    # quoted, it is a pointer with its opening line. On fastapi's questions the release
    # notes took 6-7% of every frame's tokens, in 84% of the 4,000-token frames.
    return (
        lead(text, assembler.BACKGROUND_ITEM_TOKENS)
        if is_release_note(h.source_path, h.section)
        else text
    )


def _learning(body: str) -> str:
    from ncx.memory.file import body_sections

    sec = body_sections(body)
    text = sec.get("learning") or body
    if sec.get("context"):
        text += "\n\n_Context:_ " + sec["context"]
    return text


_MAX_STATE_BYTES = 200_000  # a handoff note, not a document; the frame budget cuts it anyway


def _state_note(root: Path, given: Path | None) -> list[str]:
    from ncx.paths import ignored_targets, read_problem

    path = given or ncx_dir(root) / STATE_FILE
    if not path.is_file():
        if given is not None:
            raise UsageError("state file not found", path=given, hint="give an existing file")
        return []
    if given is None:
        # The default note is a committed file anyone can replace by a link: never follow one
        # out of the repository, into .git/ or to an ignored file (a frame goes to an agent).
        rel = f"{ncx_dir(root).name}/{STATE_FILE}"
        if read_problem(root, rel, ignored_targets(root, [rel])) is not None:
            return []
    with path.open("rb") as f:
        data = f.read(_MAX_STATE_BYTES + 1)
    text = data[:_MAX_STATE_BYTES].decode("utf-8", errors="replace").strip()
    return [
        "",
        f"From `{path.relative_to(root) if path.is_relative_to(root) else path}`:",
        "",
        text,
    ]


def wakeup(root: Path, cfg: Config, budget: int = 600) -> str:
    """The session-start frame: identity, domains and their main docs, key memories."""
    ncx = ncx_command_name(root)  # the command that runs here (the launcher, if any)
    from ncx.query.cache import load_index

    index = load_index(root)
    out = ["<!-- ncx wakeup -->", "## Project", ""]
    # (A folder name that is not UTF-8 is shown with U+FFFD: a frame is text for an agent.)
    name = os.fsencode(root.name).decode("utf-8", "replace")
    out.append(_identity(root) or f"Repository `{name}`.")
    docs: Counter[str] = Counter()
    domains: dict[str, Counter[str]] = {}
    memories = []  # active memories (units are read from the columns; only these decoded)
    columns = zip(
        *(index.column(c) for c in ("kind", "source_path", "domain", "status")), strict=True
    )
    for i, (kind, path, domain, status) in enumerate(columns):
        if kind == "chunk":
            docs[path] += 1
            domains.setdefault(str(domain or "-"), Counter())[path] += 1
        elif (status or "active") == "active":
            memories.append((i, index.units[i]))
    out += ["", "## Knowledge map", ""]
    for dom in sorted(domains, key=lambda d: (-sum(domains[d].values()), d))[:8]:
        # the docs with the most sections, changelogs only when there is nothing else: their
        # length is history, not what the project is
        ranked = sorted(domains[dom].items(), key=lambda kv: (-kv[1], kv[0]))
        ranked = [kv for kv in ranked if not is_log(kv[0])] or ranked
        main = ", ".join(f"`{p}`" for p, _ in ranked[:4])
        label = "docs" if dom == "-" else f"domain {dom}"
        out.append(f"- {label} ({len(domains[dom])} docs): {main}")
    rank = {"high": 0, "medium": 1, "low": 2}
    memories.sort(
        key=lambda m: (rank.get(str(m[1].confidence), 3), -(m[1].usefulness or 0), m[1].id)
    )
    if memories:
        out += ["", "## Key memories", ""]
        from ncx.memory.file import body_sections

        for i, u in memories[:8]:
            body = index.body(i)
            first = " ".join((body_sections(body).get("learning") or body).split())
            out.append(f"- {first[:200]} ({u.id})")
    out += [
        "",
        f'Next: `{ncx} assemble --task "..."` for a task; `{ncx} retrieve "..."` to look '
        "things up.",
    ]
    text = "\n".join(out) + "\n"
    while count_tokens(text) > budget and len(out) > 4:
        out.pop(-3)
        text = "\n".join(out) + "\n"
    return text


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def _named(lines: tuple[str, ...], ncx: str) -> tuple[str, ...]:
    """`lines` naming ncx as the command that runs in this tree (see ncx_command_name)."""
    return lines if ncx == "ncx" else tuple(ln.replace("`ncx ", f"`{ncx} ") for ln in lines)


def _is_prose(block: str) -> bool:
    """A paragraph of sentences, not a list (a table of contents, badges), table or code."""
    first = block.lstrip()
    if first.startswith(("- ", "* ", "+ ", "|", "```", "~~~", ">")) or re.match(r"\d+[.)] ", first):
        return False
    return len(_LINK.sub(r"\1", block).split()) >= 3


def _identity(root: Path) -> str:
    for name in ("AGENTS.md", "CLAUDE.md", "README.md", "readme.md"):
        p = root / name
        if not p.is_file():
            continue
        from ncx.store import split_frontmatter

        body = split_frontmatter(p.read_text(encoding="utf-8", errors="replace"))[1]
        # the block `ncx init --agent` writes says how to use ncx, not what the project is
        body = re.sub(r"<!-- >>> ncx >>> -->.*?<!-- <<< ncx <<< -->", "", body, flags=re.S)
        paras = [
            b.strip()
            for b in body.split("\n\n")
            if b.strip() and not b.lstrip().startswith(("<", "[!", "!["))
        ]
        title = next((b.lstrip("# ").strip() for b in paras if b.startswith("# ")), "")
        prose = [b for b in paras if not b.startswith("#") and _is_prose(b)][:2]
        text = " ".join(" ".join(b.split()) for b in prose)
        if not title and not text:
            continue
        if len(text) > 600:
            text = text[:597] + "..."
        return (f"**{title}** — " if title else "") + text + f" (from `{name}`)"
    return ""
