"""assembler: pack ranked material into a position-optimized frame under a hard budget. Pure.

Zones, in order: task (primacy) → relevant knowledge → code to open → background (the weak
middle) →
past learnings → current state → instructions (recency, with the task restated). The
frame never exceeds the budget: items that do not fit are trimmed at a paragraph
boundary (never inside a fenced code block) or left out. Same input, same bytes; the
frame id is a hash of the body, and nothing in it reads the clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ncx.query.quote import cut_words, lead, shown_trail, trim_to_paragraphs
from ncx.tokens import count_tokens

# Share of the budget each zone may use; what a zone leaves unused flows to knowledge.
SHARES = {
    "task": 0.10,
    "relevant": 0.45,
    "code": 0.25,  # of what the fixed zones leave; unused, it flows to knowledge
    "background": 0.17,
    "learnings": 0.12,
    "state": 0.10,
    "instructions": 0.06,
}
CODE_SHARE_ALONE = 0.7

ZONE_TITLES = {
    "task": "CRITICAL: Task",
    "relevant": "Relevant Knowledge",
    "code": "Code to Open",
    "background": "Background",
    "learnings": "Past Learnings",
    "state": "Current State",
    "instructions": "Instructions",
}
WEAK_NOTE = (
    "> Weak evidence: the best match shares few of the task's terms; the answer may not "
    "be in the docs (look in the code)."
)
VAGUE_NOTE = (
    "> Vague task: it names little to search by, so the evidence is weak and this frame holds "
    "the best few matches only; name what you are working on (a command, a setting, a "
    "module) for a fuller frame."
)
_MIN_ITEM_TOKENS = 40
# Background items are quoted by their lead only: past the strongest results, a pointer
# and an opening line serve more questions per token than whole chunks (frame_recall.py).
BACKGROUND_ITEM_TOKENS = 80  # a trimmed item shorter than this is not worth its citation line
_ID_SLACK = 8  # a 12-hex frame id costs at most 12 tokens; its placeholder costs 5


@dataclass(frozen=True)
class Item:
    """One piece of retrieved material offered to the frame."""

    id: str
    kind: str  # chunk | memory | code
    source_path: str
    start_line: int | None
    end_line: int | None
    section: tuple[str, ...]
    doc_id: str | None
    score: float
    text: str
    meta: dict[str, Any] = field(default_factory=dict)  # memory type/confidence etc.
    # The same chunk as a short quote: its best-matching lines, cited by their own lines.
    # Placed instead of the whole text when the item earns a place but not its full size.
    passage: Item | None = None
    # The chunk that completes this one (its example or admonition body, when this one ends
    # "...:"): quoted right after it whenever this one is quoted whole.
    follow: Item | None = None
    # idf-weighted share of the task's terms the unit holds (Hit.confidence): with the score,
    # the evidence a zone's floor holds the item to (floor.evidence_floor)
    confidence: float = 1.0
    why: str = ""  # why it is offered, or held back (`--explain`)

    def citation(self, brief: bool = False) -> str:
        """`path:lines` — section trail — doc id; `brief`: the innermost heading only (a
        passage's citation is a pointer: a long trail and id cost more than its quote)."""
        where = self.source_path
        if self.start_line is not None:
            # One line is cited as one line number (a note is often a single line: the range
            # would cost two tokens of every such item).
            same = self.end_line in (None, self.start_line)
            where += f":{self.start_line}" if same else f":{self.start_line}-{self.end_line}"
        parts = [f"`{where}`"]
        if self.meta.get("cell"):  # a notebook: the cell a person looks for when it opens
            parts.append(f"cell {self.meta['cell']}")
        trail = shown_trail(self.section)
        if trail:
            parts.append(trail[-1] if brief else " > ".join(trail))
        if self.doc_id and not brief:
            parts.append(self.doc_id)
        if self.meta.get("dated"):  # when the doc was written: what "recently" means
            parts.append(f"dated {self.meta['dated']}")
        return " — ".join(parts)


@dataclass(frozen=True)
class Placed:
    item: Item
    zone: str
    text: str  # possibly trimmed
    tokens: int
    trimmed: bool


@dataclass(frozen=True)
class Decision:
    id: str
    zone: str
    score: float
    outcome: str  # placed | trimmed | no room | too small after trim
    why: str = ""  # the item's reason to be in the frame, or to stay out


@dataclass(frozen=True)
class Frame:
    id: str
    budget: int
    tokens: int
    markdown: str
    zones: dict[str, list[Placed]]
    decisions: list[Decision]
    stop: str = ""  # why the frame holds no more knowledge (evidence ran out, or the budget)
    fixed: dict[str, str] = field(default_factory=dict)  # task, state, instructions: as shown

    def as_json(self) -> dict[str, Any]:
        return {
            "frame_id": self.id,
            "budget": self.budget,
            "tokens": self.tokens,
            "stop": self.stop,
            "zones": [
                {
                    "name": name,
                    "title": ZONE_TITLES[name],
                    **({"text": self.fixed[name]} if self.fixed.get(name) else {}),
                    "tokens": sum(p.tokens for p in placed)
                    or count_tokens(self.fixed.get(name, "")),
                    "items": [
                        {
                            "id": p.item.id,
                            "kind": p.item.kind,
                            "source_path": p.item.source_path,
                            "start_line": p.item.start_line,
                            "end_line": p.item.end_line,
                            "section": " > ".join(shown_trail(p.item.section)),
                            "doc_id": p.item.doc_id,
                            "score": round(p.item.score, 6),
                            "tokens": p.tokens,
                            "trimmed": p.trimmed,
                            "text": p.text,
                            **({"dated": p.item.meta["dated"]} if p.item.meta.get("dated") else {}),
                        }
                        for p in placed
                    ],
                }
                for name, placed in self.zones.items()
            ],
        }


@dataclass(frozen=True)
class FrameInput:
    task: str
    criteria: tuple[str, ...] = ()
    knowledge: tuple[Item, ...] = ()  # chunks, best first
    learnings: tuple[Item, ...] = ()  # memories, best first
    state: tuple[str, ...] = ()  # current-state lines (git, handoff)
    where: str = ""  # ... or, when that is all they would say, its HEAD line (the first line)
    instructions: tuple[str, ...] = ()
    code: tuple[Item, ...] = ()  # definitions to open, best first (ncx.query.zone)
    below: tuple[Item, ...] = ()  # sections under the evidence floor (for --explain)
    code_out: tuple[Item, ...] = ()  # the first code the zone left out, and why (--explain)
    weak: bool = False  # the best knowledge is weak evidence: say so in the frame
    vague: bool = False  # the task names at most VAGUE_TERMS terms: say so, quote little


# The budget is a ceiling, not a target: knowledge earns a place by its score relative to
# the best candidate's. The best sections are quoted whole (depth), further candidates by a
# short passage of their best-matching lines (breadth), and the frame stops where the scores
# fall off. Rule and values decided on the whole development suite (benchmarks/frame_suite.py,
# decisions §34): a strong first answer gives a short frame, spread evidence a wider one.
WHOLE_RATIO = 0.8  # quoted whole: within this share of the best score ...
WHOLE_MAX = 3  # ... and at most this many sections
PASSAGE_RATIO = 0.25  # quoted by a passage: within this share of the best score ...
# ... and a passage of more than SHORT_PASSAGE tokens within LONG_RATIO of it. A floor trades
# an item's tokens against its chance of holding the answer: a 75-token passage at a third of
# the best score rarely holds it (known-item trees: frames 15-25% shorter, quoted recall the
# same), while a note or a one-line answer costs a third as much and often does (LoCoMo
# notes: one floor for all lost 0.03 of frame recall). docs/decisions.md §48.
LONG_RATIO = 0.35
SHORT_PASSAGE = 40
PASSAGE_ROOM = 2000  # ... and at most this many tokens of passages, citations included
# ... and with evidence (share of the best score times confidence, the idf-weighted share of
# the task's terms it holds) of at least this: Background exists only for items above it.
PASSAGE_FLOOR = 0.0
# A weak best match (Hit.weak) gets the short plan of a vague task: what the frame says
# about weak evidence it acts on.
WEAK_SHORT = False
# Passages one document may give before the other documents' (breadth first); 0: passages in
# rank order. Rank order: raydocs section quoted recall 0.664 -> 0.708, page 0.861 either way,
# every other dev set the same or better (decisions §34): a section's answer is often the
# next section of the page that answers best, which breadth first held back.
PASSAGE_PER_DOC = 0
# Share of a small budget's knowledge room the whole sections may take when the passages
# want more than the rest (the zones' old split, relevant 0.45 : background 0.17).
WHOLE_SHARE = SHARES["relevant"] / (SHARES["relevant"] + SHARES["background"])
# Concentrated evidence: when the second candidate scores under this share of the best, the
# first answer stands out and the passages get CONCENTRATED_ROOM of their room (0: off).
CONCENTRATED = 0.7
CONCENTRATED_ROOM = 0.5
PASSAGE_TOKENS = 75  # a passage's size: the scorer's "quote" is 60 tokens of the answer
PASSAGE_MIN_TOKENS = 60  # a passage shorter than this (after tidying) is grown
# A vague task (it names at most VAGUE_TERMS searchable terms: "how does it work" is `work`):
# every section using the word matches it about as well as the next, so a full frame of them
# is tokens spent on guesses. The frame holds the best SHORT_WHOLE sections whole and the
# next SHORT_PASSAGES by a passage, and says the evidence is weak. 11: of the dev sets' vague
# questions ("How do I get started?", one-word headings) only get.gov's "What Developers Do"
# (gold 27th) loses its answer; with 3, the gold ranked 9th and 12th is lost too. A weak best
# match (Hit.weak) keeps the full plan: 9% of raydocs questions are flagged weak and still
# answered (a short frame for them: page recall 0.887 -> 0.861).
VAGUE_TERMS = 1
SHORT_WHOLE = 1
SHORT_PASSAGES = 11


@dataclass(frozen=True)
class Plan:
    """Which knowledge earns a place, and how: whole, or as a passage; and why it stops."""

    whole: tuple[Item, ...]
    passages: tuple[Item, ...]
    below: tuple[Item, ...]  # candidates the evidence does not support
    stop: str


def plan(knowledge: Sequence[Item], short: bool = False) -> Plan:
    """Size the knowledge by the evidence: a pure function of the ranked candidates; `short`:
    the task is too vague to rank by (the best few only)."""
    if not knowledge:
        return Plan((), (), (), "no knowledge matched the task")
    if short:
        return _short(knowledge)
    best = knowledge[0].score
    whole: list[Item] = []
    supported: list[tuple[int, Item, float]] = []  # (rank, item, share) above PASSAGE_RATIO
    below: tuple[Item, ...] = ()
    stop = f"every knowledge candidate ({len(knowledge)}) placed"
    seen: set[str] = set()  # near-duplicates (same words) never spend the budget twice
    held_long = 0  # passages held to LONG_RATIO

    def share_of(it: Item) -> float:
        return it.score / best if best > 0 else 0.0

    for i, it in enumerate(knowledge):
        share = share_of(it)
        key = " ".join(it.text.lower().split())
        if key in seen or it.id in seen:
            continue
        seen.add(key)
        if not whole or (share >= WHOLE_RATIO and len(whole) < WHOLE_MAX and not supported):
            why = f"{share:.0%} of the best score: quoted whole" if whole else "the best match"
            if it.why:  # (why the floor let it in: the docs' best, under the code's evidence)
                why = f"{why}; {it.why}"
            whole.append(replace(it, why=why))
            if it.follow is not None and it.follow.id not in seen:
                whole.append(replace(it.follow, why=f"completes {it.id}"))
                seen |= {it.follow.id, " ".join(it.follow.text.lower().split())}
        elif share < PASSAGE_RATIO:
            stop = f"scores fell below {PASSAGE_RATIO:.0%} of the best ({share:.0%})"
            below = (
                *below,
                *(
                    replace(
                        x, why=f"{share_of(x):.0%} of the best score, under {PASSAGE_RATIO:.0%}"
                    )
                    for x in knowledge[i:]
                ),
            )
            break
        elif share < LONG_RATIO and _quote_tokens(it) > SHORT_PASSAGE:
            why = f"{share:.0%} of the best score, under {LONG_RATIO:.0%} for a passage this long"
            below = (*below, replace(it, why=why))
            held_long += 1
        elif share * it.confidence < PASSAGE_FLOOR:
            # a passage's evidence: its share times its confidence
            ev = share * it.confidence
            below = (*below, replace(it, why=f"evidence {ev:.2f}, under {PASSAGE_FLOOR}"))
        else:
            supported.append(
                (i, replace(it, why=f"{share:.0%} of the best score: a passage"), share)
            )
    if held_long:
        stop = (
            f"{stop}; {held_long} passage{'s' * (held_long != 1)} over {SHORT_PASSAGE} "
            f"tokens under {LONG_RATIO:.0%} of the best score left out"
        )
    # In rank order (or, with PASSAGE_PER_DOC, breadth first: that many passages per document,
    # its sections near the best score all, then the further sections of documents already
    # quoted, in rank order, while room is left).
    per_doc: dict[str, int] = {}
    first: list[tuple[int, Item]] = []
    later: list[tuple[int, Item]] = []
    for rank, it, share in supported:
        n = per_doc.get(it.source_path, 0)
        held = 0 < PASSAGE_PER_DOC <= n and share < WHOLE_RATIO
        (later if held else first).append((rank, it))
        per_doc[it.source_path] = n + 1
    chosen: list[tuple[int, Item]] = []
    spent = 0
    room = PASSAGE_ROOM
    if len(knowledge) > 1 and best > 0 and knowledge[1].score / best < CONCENTRATED:
        room = int(room * CONCENTRATED_ROOM)
    for rank, it in [*first, *later]:
        quote = replace(it.passage, why=it.why) if it.passage else it
        cost = count_tokens(quote.text) + count_tokens(quote.citation(brief=True)) + 6
        if spent + cost > room:
            stop = f"{len(chosen)} passages quoted ({room} tokens of passages)"
            break
        spent += cost
        chosen.append((rank, quote))
    kept = {rank for rank, _ in chosen}
    left = tuple(
        replace(it, why=f"{it.why}, past the passages' {room} tokens")
        for rank, it, _ in supported
        if rank not in kept
    )
    passages = tuple(q for _, q in sorted(chosen, key=lambda rq: rq[0]))
    return Plan(tuple(whole), passages, left + below, stop)


def _quote_tokens(it: Item) -> int:
    """The tokens of what the frame would quote of `it` as a passage."""
    return count_tokens((it.passage or it).text)


def _short(knowledge: Sequence[Item]) -> Plan:
    """The plan for a vague task: the best SHORT_WHOLE candidates whole (with their follow-up)
    and the next SHORT_PASSAGES by a passage."""
    taken = 0  # candidates placed (a follow-up is part of its section)
    whole: list[Item] = []
    passages: list[Item] = []
    seen: set[str] = set()
    for i, it in enumerate(knowledge):
        key = " ".join(it.text.lower().split())
        if key in seen or it.id in seen:
            continue
        seen.add(key)
        if taken < SHORT_WHOLE:
            whole.append(replace(it, why="a vague task: the best match"))
            if it.follow is not None:  # its example, never quoted twice
                whole.append(replace(it.follow, why=f"completes {it.id}"))
                seen |= {it.follow.id, " ".join(it.follow.text.lower().split())}
            taken += 1
        elif len(passages) < SHORT_PASSAGES:
            passages.append(replace(it.passage or it, why=f"a vague task: match {taken + 1}"))
            taken += 1
        else:
            stop = f"a vague task: the best {taken} matches only"
            why = f"a vague task: past the best {taken}"
            rest = tuple(replace(x, why=why) for x in knowledge[i:])
            return Plan(tuple(whole), tuple(passages), rest, stop)
    return Plan(
        tuple(whole), tuple(passages), (), f"every knowledge candidate ({len(knowledge)}) placed"
    )


def assemble(inp: FrameInput, budget: int) -> Frame:
    """Build the frame. Guarantees count_tokens(frame.markdown) <= budget (or an empty frame)."""
    task_block = _task_block(inp)
    tail = _instructions_block(inp)
    state_block = _fit_lines("state", inp.state, int(budget * SHARES["state"]))
    # (the HEAD line on the first line, when it is all the state says, is planned for too)
    fixed = count_tokens(task_block) + count_tokens(tail) + count_tokens(state_block or inp.where)
    fixed += 40
    room = max(0, budget - fixed)
    decisions: list[Decision] = []

    learn_cap = min(room, int(budget * SHARES["learnings"]))
    learnings, used_l = _pack("learnings", inp.learnings, learn_cap, decisions)
    chosen = plan(inp.knowledge, short=inp.vague or (inp.weak and WEAK_SHORT))
    chosen = replace(chosen, whole=tuple(without_overlaps(chosen.whole)))
    need = sum(
        count_tokens(q.text) + count_tokens(q.citation(brief=True)) + 6 for q in chosen.passages
    )
    # Code takes its share beside the docs, and what the docs' plan leaves of the room; where
    # the docs have little to say (none, or weak evidence) the code is what the task is
    # about, and takes most of it. The zone itself is sized by the evidence (ncx.query.zone).
    docs_need = need + sum(
        count_tokens(it.text) + count_tokens(it.citation()) + 6 for it in chosen.whole
    )
    code_share = SHARES["code"] if inp.knowledge and not inp.weak else CODE_SHARE_ALONE
    code_cap = max(int((room - used_l) * code_share), room - used_l - docs_need)
    code, used_c = _pack("code", inp.code, code_cap, decisions)
    knowledge_room = room - used_l - used_c
    # Whole sections may take what the passages leave, but never all of a small budget:
    # breadth keeps its share of it.
    rel_cap = max(int(knowledge_room * WHOLE_SHARE), knowledge_room - need)
    relevant, used_r = _pack("relevant", chosen.whole, rel_cap, decisions)
    rest = [it for it in chosen.whole if it.id not in {q.item.id for q in relevant}]
    rest_ids = {d.id for d in decisions if d.zone == "relevant" and d.outcome != "placed"}
    decisions = [d for d in decisions if not (d.zone == "relevant" and d.id in rest_ids)]
    background, _ = _pack(
        "background",
        [*(replace(it.passage, why=it.why) if it.passage else it for it in rest), *chosen.passages],
        knowledge_room - used_r,
        decisions,
        item_cap=max(BACKGROUND_ITEM_TOKENS, 2 * PASSAGE_TOKENS + 10),
    )
    decisions += [
        Decision(it.id, "background", it.score, "below evidence", it.why) for it in chosen.below
    ]
    # (a section under the floor may still be quoted: as the one a placed section completes)
    quoted = {p.item.id for p in (*relevant, *background)}
    held = [it for it in inp.below if it.id not in quoted]
    decisions += [Decision(it.id, "relevant", it.score, "below floor", it.why) for it in held]
    decisions += [Decision(it.id, "code", it.score, "left out", it.why) for it in inp.code_out]
    stop = chosen.stop
    # The knowledge's room is the budget's; the code's and the learnings' are shares of it,
    # and one full says the budget was reached only when not even the code's lead fitted
    # (a 200-token frame said the evidence floor stopped it).
    full = any(
        d.outcome == "no room"
        and (d.zone in ("relevant", "background") or (d.zone == "code" and not code))
        for d in decisions
    )
    if full:
        stop = f"the budget ({budget} tokens) was reached"
    if held:  # docs held to the code lead's evidence (floor.evidence_floor)
        floor = (
            f"{len(held)} sections under the evidence floor the code sets "
            f"(the next: {held[0].id}: {held[0].why})"
        )
        stop = f"{stop}; {floor}" if inp.knowledge or full else floor

    zones = {
        "task": [],
        "relevant": relevant,
        "code": code,
        "background": background,
        "learnings": learnings,
        "state": [],
        "instructions": [],
    }
    # Beside code no note: the docs placed there passed the floor the code lead sets (or are
    # the docs' best at half of it), and a long issue's terms are few in any one section, so
    # the note stood on 9 of a new user's 10 frames, above the doc that answered (§108).
    notes = [
        WEAK_NOTE if inp.weak and relevant and not code else "",
        VAGUE_NOTE if inp.vague and not inp.weak and relevant else "",
    ]
    note = "\n\n".join(n for n in notes if n)
    where = inp.where
    body = _render(task_block, zones, state_block, tail, note, where)
    # The zone estimates are sums; the rendered whole is authoritative. Drop the weakest
    # placed item until the frame fits (rarely more than once). _ID_SLACK covers the frame
    # id that replaces its placeholder after hashing.
    while count_tokens(body) + _ID_SLACK > budget:
        victim = _weakest(zones)
        if victim is None:
            break
        zone, idx = victim
        p = zones[zone].pop(idx)
        decisions.append(Decision(p.item.id, zone, p.item.score, "no room", p.item.why))
        stop = f"the budget ({budget} tokens) was reached"
        body = _render(task_block, zones, state_block, tail, note, where)
    if count_tokens(body) + _ID_SLACK > budget:
        # A budget too small even for the task: cut state, instructions, then the task.
        for part in ("state", "tail", "task"):
            if count_tokens(body) + _ID_SLACK <= budget:
                break
            if part == "state":
                state_block = where = ""
            elif part == "tail":
                tail = ""
            else:
                over = count_tokens(body) + _ID_SLACK - budget
                task_block = cut_words(task_block, max(0, count_tokens(task_block) - over))
            body = _render(task_block, zones, state_block, tail, note, where)
    frame_id = hashlib.sha256(body.encode()).hexdigest()[:12]
    markdown = body.replace("{frame_id}", frame_id, 1)
    decisions.sort(key=lambda d: (-d.score, d.id))
    shown = {"task": task_block, "state": state_block or where, "instructions": tail}
    return Frame(frame_id, budget, count_tokens(markdown), markdown, zones, decisions, stop, shown)


# The agent has the task it gave: the frame repeats it so that its top and its end hold it
# (the position rule), not to hand it back whole. A 27,000-character task was half of a new
# user's frame; past this many characters the task is shown by its head.
TASK_SHOWN = 2_000


def without_overlaps(items: Sequence[Item]) -> list[Item]:
    """The items, each quoted from its first line that an item before it of the same file
    has not quoted: two chunks of one long section share the chunker's overlap, and both
    quoted whole repeated it (mkdocs' `use_directory_urls`: lines 701-704 twice). Only
    where the shared lines are the same text at both ends (a quote tidied apart keeps its
    lines), and never a whole item (that is a duplicate, which the plan drops)."""
    out: list[Item] = []
    for it in items:
        for prev in out:
            if it.source_path != prev.source_path:
                continue
            a, b = prev.start_line, it.start_line
            if a is None or b is None or prev.end_line is None or it.end_line is None:
                continue
            shared = prev.end_line - b + 1  # the source lines both cite
            if not (a < b and shared > 0 and prev.end_line < it.end_line):
                continue
            head, tail = it.text.split("\n"), prev.text.rstrip("\n").split("\n")
            if shared < len(head) and head[:shared] == tail[-shared:]:
                rest = head[shared:]
                blank = next((i for i, ln in enumerate(rest) if ln.strip()), len(rest))
                if blank < len(rest):  # (lines of its own left to quote)
                    start = prev.end_line + 1 + blank
                    it = replace(it, text="\n".join(rest[blank:]), start_line=start)
        out.append(it)
    return out


def _task_block(inp: FrameInput) -> str:
    lines = [_shown_task(inp.task.strip())]
    if inp.criteria:
        lines += ["", "Acceptance criteria:"] + [f"- {c.strip()}" for c in inp.criteria]
    return "\n".join(lines)


def _instructions_block(inp: FrameInput) -> str:
    lines = list(inp.instructions)
    lines.append(f"Remember the task: {_first_line(inp.task)}")
    return "\n".join(f"- {ln}" for ln in lines)


def _shown_task(task: str) -> str:
    if len(task) <= TASK_SHOWN:
        return task
    head = task[:TASK_SHOWN]
    space = head.rfind(" ")
    head = head[:space] if space > TASK_SHOWN // 2 else head
    said = f"… (the task is {len(task):,} characters: its first {len(head):,} here)"
    closed = _closed(head)
    return closed + ("\n" if closed != head else " ") + said


def _closed(head: str) -> str:
    """A cut task's head with the code block or HTML comment it leaves open closed: the rest
    of the frame must not be read as its code (a traceback cut at 2,000 characters), nor
    hidden in its comment."""
    from ncx.sources.view import closes, fence_opened

    fence, comment = "", False
    for line in head.split("\n"):
        s = line.strip()
        if comment:
            comment = "-->" not in s
        elif fence:
            fence = "" if closes(s, fence) else fence
        elif opened := fence_opened(s):
            fence = opened
        elif "<!--" in s:
            comment = "-->" not in s[s.index("<!--") + 4 :]
    if comment:
        return head + " -->"
    return f"{head}\n{fence}" if fence else head


def _first_line(text: str) -> str:
    """The task's first line, to 200 characters, a long one cut at a word ("without
    retryin..." read as a typo to a new user)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    if len(line) <= 200:
        return line
    head = line[:197]
    if line[197] != " " and " " in head:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip() + "..."


def _fit_lines(zone: str, lines: Sequence[str], cap: int) -> str:
    out: list[str] = []
    used = 0
    for ln in lines:
        t = count_tokens(ln) + 1
        if used + t > cap:
            if out and out[-1].startswith("- ") and out[-1].endswith(":") and ln.startswith(" "):
                out.pop()  # a heading whose lines are all cut ("- recent commits to `x`:")
            out.append("- …")
            break
        out.append(ln)
        used += t
    return "\n".join(out)


def _pack(
    zone: str,
    items: Sequence[Item],
    cap: int,
    decisions: list[Decision],
    item_cap: int = 0,
) -> tuple[list[Placed], int]:
    """Place items best first; item_cap > 0 quotes each at most that long (its lead)."""
    placed: list[Placed] = []
    used = 0
    for it in items:
        head = count_tokens(it.citation(brief=zone == BRIEF_ZONE)) + 6
        full = count_tokens(it.text)
        if item_cap and full > item_cap:
            text = lead(it.text, item_cap)
            n = count_tokens(text)
            if text and used + head + n <= cap:
                placed.append(Placed(it, zone, text, n, True))
                used += head + n
                decisions.append(Decision(it.id, zone, it.score, "trimmed", it.why))
            else:
                decisions.append(Decision(it.id, zone, it.score, "no room", it.why))
            continue
        if used + head + full <= cap:
            placed.append(Placed(it, zone, it.text, full, False))
            used += head + full
            decisions.append(Decision(it.id, zone, it.score, "placed", it.why))
            continue
        room = cap - used - head
        text = trim_to_paragraphs(it.text, room) if room >= _MIN_ITEM_TOKENS else ""
        # A trim that keeps little more than a heading is noise with a citation on top.
        if text and count_tokens(text) >= _MIN_ITEM_TOKENS:
            n = count_tokens(text)
            placed.append(Placed(it, zone, text, n, True))
            used += head + n
            decisions.append(Decision(it.id, zone, it.score, "trimmed", it.why))
        else:
            decisions.append(Decision(it.id, zone, it.score, "no room", it.why))
    return placed, used


def _weakest(zones: dict[str, list[Placed]]) -> tuple[str, int] | None:
    best: tuple[float, str, int] | None = None
    for zone in ("background", "learnings", "relevant", "code"):
        for i, p in enumerate(zones[zone]):
            key = (p.item.score, zone, i)
            if best is None or key[0] < best[0]:
                best = key
    return None if best is None else (best[1], best[2])


ZONE_ORDER = ("relevant", "code", "background", "learnings")  # quoted zones, in frame order
BRIEF_ZONE = "background"  # its items are passages: cited briefly


def render_zone(zone: str, placed: Sequence[Placed], note: str = "") -> list[str]:
    """One quoted zone's lines: its title, an optional note, then each item under its
    citation (a memory under its id and tags)."""
    if not placed:
        return []
    out = [f"## {ZONE_TITLES[zone]}", ""]
    if note:
        out += [note, ""]
    for p in placed:
        if p.item.kind == "memory":
            m = p.item.meta
            tags = ", ".join(str(m[k]) for k in ("type", "confidence") if m.get(k))
            out += [f"### {p.item.id}" + (f" ({tags})" if tags else ""), "", p.text, ""]
        else:
            out += [f"### {p.item.citation(brief=zone == BRIEF_ZONE)}", "", p.text, ""]
    return out


def _render(
    task: str,
    zones: dict[str, list[Placed]],
    state: str,
    tail: str,
    note: str = "",
    where: str = "",
) -> str:
    # (where HEAD is, when that is all the Current State would say: decisions.md §96)
    at = f" · {where.removeprefix('- ')}" if where else ""
    first = "<!-- ncx frame {frame_id}" + at + " -->"
    out = [first, f"## {ZONE_TITLES['task']}", "", task, ""]
    if note and not zones["relevant"]:  # nothing to quote: the note still says why
        out += [f"## {ZONE_TITLES['relevant']}", "", note, ""]
    for zone in ZONE_ORDER:
        out += render_zone(zone, zones[zone], note if zone == "relevant" else "")
    if state:
        out += [f"## {ZONE_TITLES['state']}", "", state, ""]
    if tail:
        out += [f"## {ZONE_TITLES['instructions']}", "", tail, ""]
    return "\n".join(out).rstrip() + "\n"
