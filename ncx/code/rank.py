"""rank: the files and definitions a task points at. Pure over a loaded CodeIndex.

Definitions are scored by BM25F over their fields (name, signature and docstring, what they
use, their strings and comments, the file's path). Files are ranked by their best
definitions, a definition the task names outright is lifted above mere uses of the name,
test files (and the tests inside a source file) follow the code they test, and the
reference graph, personalised by the task (a repository-map ranking), lifts the files the
best matches lean on or are leaned on by.
Weights: docs/decisions.md §29, chosen on all four code-* development sets together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ncx.code.index import KINDS, CodeIndex, CodeUnit
from ncx.code.pointers import TaskText, read_task
from ncx.query.lexical import WEAK_BELOW, terms

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ncx.history.log import History

K1 = 1.2
UNIT_POOL = 400  # best definitions grouped into files
SECOND_SHARE = 0.5  # a file's second-best definition adds this share of its score
THIRD_SHARE = 0.25
NAMED_BONUS = 1.0  # times the best definition's score, for a definition the task names
# A name many files define points at none of them: its bonus is shared, over the square root
# of the number of files defining it (`plot` names a method in ten of seaborn's files; §72).
NAMED_SPLIT = 0.5
LINK_BONUS = 0.3  # times the best definition's score, for one the task's best docs name
# ... times this for a long task (an issue, a commit with a body): its own names, paths and
# tracebacks point at the code, and the docs its many words match lent their links to code
# the task is not about (xarray's docs' `Dataset.copy` led an issue fixed in variable.py;
# code-swe-dev first code 0.667 -> 0.697, decisions §79). A short subject keeps them: the
# docs lend it the words it lacks.
LINK_LONG = 0.0
TEST_PRIOR = 0.15  # a test file's score is multiplied by this
# A Python stub (`filters.pyi`) beside its module (`filters.py`) repeats the module's
# signatures without the code: a change starts in the module, and the stub, when it changes
# too, ranks after it (attrs: three stubs led the frames of a new user's issue tasks). Not
# measurable on the code-* sets (3 of their 193 trees hold a stub; none is gold).
STUB_PRIOR = 0.5
# Within a file, the definition a change is in is more often a long one than BM25's length
# normalisation, made for choosing among files, makes it (decisions.md §63).
LENGTH_PRIOR = 0.2
# ... and a declaration of data whose methods are written apart from it (a Go `type` and its
# receivers, a Rust `struct` or `enum` and its `impl`) less often than those methods: its
# name is the task's noun, its few lines score high, and the change lands in the code that
# works on it (bat's `PrettyPrinter` struct led a task about `PrettyPrinter::print`). Its key
# times this within its file; one holding definitions (a Java interface with its methods) is
# a container, as a class is, and one without methods in its file (a TypeScript union type)
# is where such a change lands. The files' order is not touched (decisions.md §97; 1: off).
DECLARATION_PRIOR = 0.7
_DECLARED = [KINDS.index(k) for k in ("type", "interface", "enum", "struct")]
SEEDS = 20  # best files that personalise the graph walk
W_GRAPH = 0.1
DAMPING = 0.5
WALK_STEPS = 12
# A long task's parts weigh as the evidence they are (ncx.code.pointers; decisions §46): each
# distinct term counts with the weight of the strongest part it appears in.
# The title says what the task is about; a program's output and a traceback's lines hold
# every word of the code they passed through (swe-dev R@1 0.455 -> 0.576 with the pointers
# below, no set lower; the sweep in §46).
W_TITLE = 1.5
W_PROSE = 1.0
W_CODE = 1.0  # quoted code weighs as prose (0.5 and 0.7 lost)
W_TRACE = 0.3
W_DUMP = 0.3
# Pointers, times the best definition's score: a path the task writes (to its file's module
# unit), a traceback frame in the project's code (to the frame's function). Tried and dropped
# (§46): more for the last frame, dotted names resolved to modules, backticked names as
# named identifiers, names only from the prose.
PATH_BONUS = 1.0
FRAME_BONUS = 0.3
LINE_BONUS = 0.3  # a link's line (`#L377`): the definition there, as a traceback frame's
# An option or setting the task names (`--recursive`, `ignore-paths`): the definitions
# whose words hold all of its words, when few do (a common one points nowhere).
OPTION_BONUS = 0.3
OPTION_MAX_UNITS = 8
# A line the program printed (a message: ncx.code.pointers.PRINTED_WORDS words or more)
# whose terms are all in one definition and in few (MESSAGE_MAX_UNITS): the code that writes
# it ("Tip: There are .env or .flaskenv files present ..." is flask's load_dotenv). A line
# of common words is held by many and lifts none.
MESSAGE_BONUS = 0.3
MESSAGE_MAX_UNITS = 3
# The files whose commit subjects the task's words match (ncx.history.log), their score over
# the best one's times this, added to the file score: for a long task (an issue) only. Its
# many words meet the subjects of the commits that touched its files (swe-dev R@5 0.848 ->
# 0.879 at 0.1, 0.909 at 0.2); a commit subject's few words meet generic ones (every task:
# requests R@5 0.904 -> 0.891 at 0.1 and 0.2; long tasks at 0.2: rich 0.817 -> 0.808). 0.1 on
# long tasks lowers no set (§46).
W_HISTORY = 0.1
HISTORY_SHORT = 0.0  # 1: history for short tasks too
# An identifier as a task writes one: snake_case, camelCase, CamelCase, dotted or called.
IDENTIFIER = re.compile(
    r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b"
    r"|\b[A-Za-z]+_[A-Za-z0-9_]+\b|\b_+[A-Za-z0-9_]+\b"
    r"|\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b"
    r"|\b[A-Za-z_][A-Za-z0-9_]*(?=\(\))"
)
# A class the task writes as a word ("if a Blueprint is given an empty name", "Blueprints"):
# capitalised mid-sentence (after a lowercase word or a comma), so not a sentence's opening.
_WORD_CLASS = re.compile(r"(?<=[a-z,;:(][ \t])[A-Z][a-z0-9]+\b")
CLASS_WORD_BONUS = 0.3  # times the best score: flat from 0.2 to 0.7 on every code set (§52, §74)
# How a task or a commit subject opens says what kind of change it is, not what it changes:
# "fix" matched FixedCompletions and fixed_strings (14 of hono's 30 commit tasks start with
# it). Dropped: a conventional-commit type before `:` or `(scope):` (the scope stays: it names
# the area, `fix(etag):`) and a leading "fix" verb.
_CHANGE_TYPES = (
    "fix",
    "feat",
    "chore",
    "refactor",
    "docs",
    "test",
    "perf",
    "build",
    "ci",
    "style",
    "revert",
)
_CHANGE_KIND = re.compile(
    rf"\s*(?:(?:{'|'.join(_CHANGE_TYPES)})"
    r"(?:\(([^)]*)\))?!?:\s*)?(?:fix(?:e[sd]|ing)?\b)?",
    re.IGNORECASE,
)
# The area a subject names before its colon, Go's `table: NewFilter panics` or a
# conventional commit's `fix(locales): ...`: where it is a folder or a file's stem in the
# tree, the files outside it rank after those in it (their score times SCOPE_PRIOR; 1: off).
# A word before a colon that names no path ("Note: ...") changes nothing. decisions.md §67.
_SCOPED = re.compile(r"\s*(?:[A-Za-z]+\(([\w./-]+)\)!?|([\w./-]+)):\s")
SCOPE_PRIOR = 0.5
# (`test-d/` and `.test-d.ts`: tsd's type tests, the convention of hundreds of npm packages)
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|test-d)/|(^|/)test_[^/]*$|_test\.\w+$"
    r"|\.(test|spec|test-d)\.\w+$"
)
# Code that is not the product though it sits in the tree: docs example code, the docs
# site's own code and a package's own test helpers. It is weighed like tests (issue 38: a
# tutorial's `helloworld.py` and `_pytest/pytester.py` ranked above the code a task changes;
# chi's `_examples/fileserver/main.go` and jotai's `website/src/components/search-modal.js`
# led frames of new users: decisions.md §109).
_HELPER_PATH = re.compile(
    r"(^|/)(docs?|_?examples?|samples?|website|testutils|test_?utils|test_?helpers|fixtures"
    r"|benchmarks?|asv_bench)/"
    r"|(^|/)(conftest|pytester|testutils|test_?utils)\.py$"
)


@dataclass(frozen=True)
class CodeHit:
    unit: int
    path: str
    qualname: str
    kind: str
    start: int
    end: int
    signature: str
    doc: str
    score: float  # the definition's own
    file_score: float
    file_rank: int  # 1-based rank of its file
    confidence: float  # idf-weighted share of the task's terms its file holds
    why: dict[str, float] = field(default_factory=dict)

    def as_json(self, text: str) -> dict[str, Any]:
        return {
            "id": f"{self.path}:{self.qualname}" if self.qualname else self.path,
            "kind": "code",
            "source_path": self.path,
            "path": self.path,
            "start_line": self.start,
            "end_line": self.end,
            "section": self.qualname,
            "symbol": self.qualname,
            "symbol_kind": self.kind,
            "signature": self.signature,
            "score": round(self.score, 6),
            "file_score": round(self.file_score, 6),
            "file_rank": self.file_rank,
            "confidence": round(self.confidence, 3),
            "weak": self.confidence < WEAK_BELOW,  # (its file's share of the query's terms)
            "text": text,
        }


def is_test_path(path: str) -> bool:
    """A test file, or code weighed like one (docs examples, test helpers)."""
    return bool(_TEST_PATH.search(path) or _HELPER_PATH.search(path))


def task_words(task: str) -> str:
    """The task without the words that only say it is a change (`fix(etag): ...` -> `etag ...`)."""
    m = _CHANGE_KIND.match(task)
    if m is None or not m.end():
        return task
    rest = f"{m.group(1) or ''} {task[m.end() :]}".strip()
    return rest or task  # a task of those words alone ("fix") keeps them


def task_scope(task: str) -> str | None:
    """The area the task's subject names before its colon, lowercased (None: none, or a
    change type such as `fix:`)."""
    m = _SCOPED.match(task)
    if m is None:
        return None
    scope = (m.group(1) or m.group(2)).strip("/").lower()
    return None if not scope or scope in _CHANGE_TYPES else scope


def in_scope(paths: list[str], scope: str) -> NDArray[np.bool_]:
    """Per path: whether `scope` (`table`, `v4/core`) is a run of its folders or its
    folders and file stem."""
    import numpy as np

    want = f"/{scope}/"
    out = np.zeros(len(paths), dtype=bool)
    for i, p in enumerate(paths):
        low = p.lower()
        stem = low.rsplit(".", 1)[0] if "." in low.rsplit("/", 1)[-1] else low
        out[i] = want in f"/{low.rsplit('/', 1)[0]}/" or f"/{stem}/".endswith(want)
    return out


def named_identifiers(task: str) -> list[str]:
    """The identifiers a task writes out, last part of a dotted name, lowercased."""
    out = []
    for m in IDENTIFIER.finditer(task):
        out.append(m.group(0).rsplit(".", 1)[-1].lower())
    return list(dict.fromkeys(out))


# "Raise InvalidURL if the host starts with '.'": the code to change raises the exception;
# naming the class only says which (its definition led the frame, with its sibling classes).
# Lifting the units that use it instead was measured and changed no rank (§52).
_RAISED = re.compile(
    r"\brais(?:e|es|ed|ing)\s+(?:an?\s+|the\s+)?`?([\w.]+)"
    r"|`?([\w.]+)`?\s+(?:is|was|are|were|gets?|being|be)\s+raised\b",
    re.IGNORECASE,
)


def _classes(idx: CodeIndex, name: str) -> list[int]:
    """The class units that define `name` (compared lowercased, as `defining` does)."""
    return [u for u in idx.defining(name) if KINDS[int(idx.kind[u])] == "class"]


def _raised(idx: CodeIndex, task: str) -> set[int]:
    """The project's classes the task says are raised (`raise X`, `X is raised`)."""
    out: set[int] = set()
    for m in _RAISED.finditer(task):
        out.update(_classes(idx, (m.group(1) or m.group(2)).rsplit(".", 1)[-1]))
    return out


# What a task names as a thing by a capitalised word: a class, or its kin in the languages
# without classes (a Rust struct, enum or trait, a Go or TypeScript type or interface). A
# new user's "implement Clone for Filter" listed env_logger's `struct Filter` nowhere, its
# methods and `Builder.build` (which returns one) in its place (decisions.md §104).
_TYPE_KINDS = frozenset(
    KINDS.index(k) for k in ("class", "struct", "enum", "trait", "interface", "type")
)


def _word_classes(idx: CodeIndex, task: str) -> list[int]:
    """The type units (_TYPE_KINDS) the task names as capitalised words, in the type's own
    case (a plural's `s` dropped where the singular is the type)."""
    out: list[int] = []
    owners = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", task))
    for w in dict.fromkeys(_WORD_CLASS.findall(task)):
        for name in (w, w[:-1]) if w.endswith("s") else (w,):
            same = [
                u for u in idx.defining(name) if idx.unit(u).qualname.rsplit(".", 1)[-1] == name
            ]
            got = [u for u in same if int(idx.kind[u]) in _TYPE_KINDS]
            if not got and WORD_FUNCTIONS:
                # a Go method the task names by its word: of a type the task names too
                # ("CopyOnWriteFs: Remove returns EPERM"), or a name few files define
                owned = [u for u in same if idx.unit(u).qualname.rsplit(".", 1)[0] in owners]
                files = {int(idx.file_of[u]) for u in same}
                got = owned or (same if len(files) <= WORD_FUNCTIONS else [])
            if got:
                out.extend(got)
                break
    return out


WORD_FUNCTIONS = 2


def search_code(
    idx: CodeIndex,
    query: str,
    *,
    files: int = 10,
    per_file: int = 3,
    path_globs: tuple[str, ...] = (),
    linked: tuple[int, ...] = (),
    history: History | None = None,
) -> list[CodeHit]:
    """The best files for `query`, each with its best definitions (up to per_file).
    `linked`: units the query's best docs and memories name (ncx.code.links), lifted a
    little: the docs lend the code their words. `history`: the repository's commits
    (ncx.history.log), evidence for the files they touched."""
    import numpy as np

    if idx.empty or files <= 0:
        return []
    scope = task_scope(query) if SCOPE_PRIOR < 1 else None
    query = task_words(query)
    tt = read_task(query)
    q = terms(query)
    unit = _weighted_score(idx, tt)
    named = named_identifiers(query)
    best = float(unit.max()) if len(unit) else 0.0
    # a class the task says is raised: where it is raised is named, not its definition
    raised = _raised(idx, query) if best > 0 else set()
    lifted: dict[int, float] = {}  # a unit named twice is lifted once, by its best share
    for n in named:
        got = [u for u in idx.defining(n) if u not in raised]
        if got:
            w = NAMED_BONUS / len({int(idx.file_of[u]) for u in got}) ** NAMED_SPLIT
            for u in got:
                lifted[u] = max(lifted.get(u, 0.0), w)
    named_units = list(lifted)
    if lifted and best > 0:
        unit[np.array(named_units, dtype=np.int64)] += (
            np.array(list(lifted.values()), dtype=np.float32) * best
        )
    worded = _word_classes(idx, query) if CLASS_WORD_BONUS and best > 0 else []
    for u in worded:
        unit[u] += CLASS_WORD_BONUS * best
    pointed = _pointed(idx, tt) if best > 0 else {}
    for u, w in pointed.items():
        unit[u] += w * best
    link = LINK_BONUS * (LINK_LONG if tt.long else 1.0)
    if linked and best > 0 and link > 0:
        unit[np.array(linked, dtype=np.int64)] += link * best
    # test code inside a source file (a Rust `mod tests`) weighs as a test file does, so the
    # file ranks by its own code, not by the tests that call it (a test file's own tests are
    # weighed once, with the file, below)
    in_source = [
        u
        for u in np.flatnonzero(idx.test & (unit > 0)).tolist()
        if not is_test_path(idx.files[int(idx.file_of[u])])
    ]
    if in_source:
        unit[np.array(in_source, dtype=np.int64)] *= TEST_PRIOR
    file_of = idx.file_of.astype(np.int64)
    fscore = _file_scores(unit, file_of, len(idx.files))
    # only scored files are asked whether they are tests: a path regex per file of a large
    # tree would cost more than the query
    scored = np.flatnonzero(fscore > 0).tolist()
    for f in scored:
        if is_test_path(idx.files[f]):
            fscore[f] *= TEST_PRIOR
    stubs = [f for f in scored if idx.files[f].endswith(".pyi")]
    if stubs:
        have = set(idx.files)
        for f in stubs:
            if idx.files[f][:-1] in have:
                fscore[f] *= STUB_PRIOR
    if scope is not None:
        inside = in_scope(idx.files, scope)
        if inside.any():
            fscore[~inside] *= SCOPE_PRIOR
    if path_globs:
        import fnmatch

        keep = np.fromiter(
            (any(fnmatch.fnmatch(p, g) for g in path_globs) for p in idx.files),
            dtype=bool,
            count=len(idx.files),
        )
        fscore[~keep] = 0.0
    lexical = fscore.copy()
    walk = _walk(idx, fscore) if W_GRAPH > 0 else np.zeros_like(fscore)
    top_lex = float(lexical.max()) or 1.0
    final = lexical / top_lex + W_GRAPH * walk
    with_past = history is not None and W_HISTORY > 0 and (tt.long or HISTORY_SHORT)
    past = _history_scores(idx, history, q) if history is not None and with_past else None
    if past is not None:
        final += W_HISTORY * past
    # a file the task's words miss entirely is not listed, whatever its graph or its past
    # lift (it would be shown by a definition scoring 0: 14 of 1,930 files listed on the
    # code-* sets, none of them gold); nor one outside the path globs (its lexical score is 0)
    final[lexical <= 0] = 0.0
    order = [int(f) for f in np.argsort(-final, kind="stable")[:files] if final[f] > 0]
    conf = _coverage(idx, q, file_of, order)
    hits: list[CodeHit] = []
    for rank, f in enumerate(order, start=1):
        mine = np.flatnonzero(idx.file_of == f)
        ranked = _in_file(idx, unit, mine)
        for cu, u in _distinct_names(idx, [u for u in ranked if unit[u] > 0], per_file):
            hits.append(
                CodeHit(
                    unit=u,
                    path=cu.path,
                    qualname=cu.qualname,
                    kind=cu.kind,
                    start=cu.start,
                    end=cu.end,
                    signature=cu.signature,
                    doc=cu.doc,
                    score=float(unit[u]),
                    file_score=float(final[f]),
                    file_rank=rank,
                    confidence=conf.get(f, 0.0),
                    why={
                        "lexical": round(float(lexical[f] / top_lex), 4),
                        "graph": round(float(walk[f]), 4),
                        "named": float(u in named_units or u in worded),
                        "linked": float(u in linked),
                        "pointed": round(pointed.get(u, 0.0), 4),
                        "history": round(float(past[f]), 4) if past is not None else 0.0,
                    },
                )
            )
    return hits


def _in_file(idx: CodeIndex, unit: NDArray[np.float32], mine: NDArray[np.int64]) -> list[int]:
    """A file's definitions `mine` in their order among themselves: by score times length in
    lines to the LENGTH_PRIOR (a module's by its score: its lines are the whole file's), then
    by unit. A class counts its methods' lines, where a change to the class lands (its own
    lines only: 2.5-7.5 points less often the changed definition first, on each of four
    sets; decisions §63); a declaration of data whose methods stand apart from it times
    the DECLARATION_PRIOR (§97)."""
    import numpy as np

    key = unit[mine].astype(np.float64)
    if LENGTH_PRIOR:
        span = (idx.end[mine].astype(np.float64) - idx.start[mine] + 1).clip(min=1)
        span[idx.kind[mine] == KINDS.index("module")] = 1.0
        key *= span**LENGTH_PRIOR
    declared = np.flatnonzero(np.isin(idx.kind[mine], _DECLARED)).tolist()
    if DECLARATION_PRIOR != 1 and declared:
        # the names that own a definition (`A` and `A.B` of `A.B.c`) gathered once, so a file
        # of thousands of types (a generated `.pb.go`) costs one pass, not one per type
        quals = idx.qualnames(mine)
        owners = set()
        for q in quals:
            k = q.find(b".")
            while k > 0:
                owners.add(q[:k])
                k = q.find(b".", k + 1)
        # (one without a method of it in its file is where such a change lands)
        apart = np.array([i for i in declared if quals[i] in owners], dtype=np.int64)
        if len(apart):
            # ... and one holding definitions (a Java interface, its methods) is a class: the
            # definitions starting within its lines counted by bisection, itself among them
            starts, ends = idx.start[mine], idx.end[mine]
            inner = np.sort(starts[idx.kind[mine] != KINDS.index("module")])
            held = np.searchsorted(inner, ends[apart], "right") - np.searchsorted(
                inner, starts[apart], "left"
            )
            key[apart[held <= 1]] *= DECLARATION_PRIOR
    return [int(u) for u in mine[np.lexsort((mine, -key))]]


def _history_scores(idx: CodeIndex, history: History, q: list[str]) -> NDArray[np.float64]:
    """Each file's commit-subject score over the best file's (0..1)."""
    import numpy as np

    out = np.zeros(len(idx.files))
    got = history.scores(q)
    if got:
        where = {p: i for i, p in enumerate(idx.files)}
        for p, s in got.items():
            if p in where:
                out[where[p]] = s
    top = float(out.max()) if len(out) else 0.0
    return out / top if top > 0 else out


def _weighted_score(idx: CodeIndex, tt: TaskText) -> NDArray[np.float32]:
    """BM25 of the task's terms, each weighted by the strongest part it appears in."""
    import numpy as np

    weight: dict[str, float] = {}
    for text, w in (
        (tt.dump, W_DUMP),
        (tt.trace, W_TRACE),
        (tt.code, W_CODE),
        (tt.prose, W_PROSE),
        (tt.title, W_TITLE),
    ):
        for t in terms(text):
            weight[t] = max(w, weight.get(t, 0.0))
    lx = idx.lex
    scores = np.zeros(lx.n_units, dtype=np.float32)
    for t, w in weight.items():
        col = lx.term_id(t)
        if col is None or w <= 0:
            continue
        a, b = lx.indptr[col], lx.indptr[col + 1]
        x = lx.data[a:b]
        scores[lx.indices[a:b]] += np.float32(w) * lx.idf[col] * x * (K1 + 1) / (x + K1)
    return scores


def _files_at(idx: CodeIndex, path: str) -> list[int]:
    """The index's files a written path names: the longest tail of its folders that some
    file ends with (`site-packages/requests/models.py` -> `requests/models.py`). A path of
    several folders that only its file name matches is someone else's file (the stdlib's
    `socket.py`)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p and p not in (".", "..", "~")]
    if not parts:
        return []
    for n in range(len(parts), 0, -1):
        tail = "/".join(parts[-n:])
        got = [f for f, p in enumerate(idx.files) if p == tail or p.endswith("/" + tail)]
        if got:
            return got if (n > 1 or len(parts) == 1) else []
    return []


def _unit_at(idx: CodeIndex, f: int, line: int) -> int:
    """File f's innermost unit whose lines hold `line` (the module's when none does)."""
    import numpy as np

    best = idx.file_unit(f)
    span = None
    for u in np.flatnonzero(idx.file_of == f).tolist():
        s, e = int(idx.start[u]), int(idx.end[u])
        if s <= line <= e and (span is None or e - s < span):
            best, span = int(u), e - s
    return best


def _unit_named(idx: CodeIndex, f: int, qual: str) -> int:
    """File f's unit whose qualified name ends with `qual` (the module's when none does)."""
    import numpy as np

    want = qual.lower()
    best = idx.file_unit(f)
    for u in np.flatnonzero(idx.file_of == f).tolist():
        q = idx.unit(u).qualname.lower()
        if q and (q == want or q.endswith("." + want) or want.endswith("." + q)):
            return int(u)
    return best


def _pointed(idx: CodeIndex, tt: TaskText) -> dict[int, float]:
    """Units the task's pointers name, with their bonus (times the best score)."""
    out: dict[int, float] = {}

    def lift(u: int, w: float) -> None:
        if w > 0:
            out[u] = max(out.get(u, 0.0), w)

    cache: dict[str, list[int]] = {}

    def files(path: str) -> list[int]:
        if path not in cache:
            cache[path] = _files_at(idx, path)
        return cache[path]

    for p in tt.paths:
        got = files(p)
        for f in got:
            lift(idx.file_unit(f), PATH_BONUS / len(got))
    frames = [(files(p), fn) for p, fn in tt.frames]
    mine = [(fs, fn) for fs, fn in frames if len(fs) == 1]
    for fs, fn in mine:
        lift(_unit_named(idx, fs[0], fn) if fn else idx.file_unit(fs[0]), FRAME_BONUS)
    for p, line in tt.lines:
        got = files(p)
        if len(got) == 1:
            lift(_unit_at(idx, got[0], line), LINE_BONUS)
    # an option or a message: the few definitions holding all its words (a common one is
    # held by many and points nowhere)
    for said, most, w in (
        *((o, OPTION_MAX_UNITS, OPTION_BONUS) for o in tt.options),
        *((m, MESSAGE_MAX_UNITS, MESSAGE_BONUS) for m in tt.printed),
    ):
        held = _holding_all(idx, terms(said))
        if 0 < len(held) <= most:
            for u in held:
                lift(u, w)
    return out


def _holding_all(idx: CodeIndex, words: list[str]) -> list[int]:
    """The units whose fields hold every one of these terms."""
    import numpy as np

    lx = idx.lex
    held: NDArray[np.int32] | None = None
    for t in dict.fromkeys(words):
        col = lx.term_id(t)
        if col is None:
            return []
        got = lx.indices[lx.indptr[col] : lx.indptr[col + 1]]
        held = got if held is None else np.intersect1d(held, got, assume_unique=True)
    return [] if held is None else [int(u) for u in held]


def _distinct_names(idx: CodeIndex, ranked: list[int], n: int) -> list[tuple[CodeUnit, int]]:
    """The first n units of a file that are distinct definitions: one result per name and
    signature in a file, so a file of 2,000 copies of one function shows it once, while
    two definitions that share a name and differ (Rust's `impl From<A> for u64` and
    `impl From<B> for u64`, both `u64.from`) are both found."""
    out: list[tuple[CodeUnit, int]] = []
    seen: set[tuple[str, str]] = set()
    for u in ranked:
        cu = idx.unit(u)
        key = (cu.qualname, cu.signature)
        if key in seen:
            continue
        seen.add(key)
        out.append((cu, u))
        if len(out) == n:
            break
    return out


def _file_scores(
    unit: NDArray[np.float32], file_of: NDArray[np.int64], n_files: int
) -> NDArray[np.float64]:
    """Each file's best definition plus shares of its second and third."""
    import numpy as np

    out = np.zeros(n_files, dtype=np.float64)
    scored = np.flatnonzero(unit > 0)
    shares = (1.0, SECOND_SHARE, THIRD_SHARE)
    # The pool is the best UNIT_POOL definitions that count (at most three a file): a
    # file of 2,000 copies of one matching function fills three places, not all of them.
    size = UNIT_POOL
    while True:
        pool = scored
        if len(scored) > size:
            pool = scored[np.argpartition(-unit[scored], size)[:size]]
        seen: dict[int, int] = {}
        counted: list[tuple[int, int]] = []
        for u in sorted(pool.tolist(), key=lambda u: (-float(unit[u]), u)):
            f = int(file_of[u])
            k = seen.get(f, 0)
            if k < len(shares):
                counted.append((u, k))
                seen[f] = k + 1
                if len(counted) == UNIT_POOL:
                    break
        if len(counted) == UNIT_POOL or len(pool) == len(scored):
            break
        size *= 4
    for u, k in counted:
        out[int(file_of[u])] += shares[k] * float(unit[u])
    return out


def _walk(idx: CodeIndex, fscore: NDArray[np.float64]) -> NDArray[np.float64]:
    """A personalised walk over the reference graph from the best files, both ways along
    each edge (a file that uses the match, and the file the match uses): scaled to 0..1."""
    import numpy as np

    n = len(idx.files)
    seeds = np.argsort(-fscore, kind="stable")[:SEEDS]
    seeds = seeds[fscore[seeds] > 0]
    if not len(seeds):
        return np.zeros(n)
    p = np.zeros(n)
    p[seeds] = fscore[seeds]
    p /= p.sum()
    g = idx.graph
    if not len(g.src):
        return np.zeros(n)
    # both ways along each edge: a file that uses the match, and the file the match uses
    src = np.concatenate([g.src, g.dst]).astype(np.int64)
    dst = np.concatenate([g.dst, g.src]).astype(np.int64)
    w = np.concatenate([g.weight, g.weight])
    out_deg = np.bincount(src, weights=w, minlength=n)
    out_deg[out_deg == 0] = 1.0
    r = p.copy()
    for _ in range(WALK_STEPS):
        r = (1 - DAMPING) * p + DAMPING * np.bincount(
            dst, weights=w * (r / out_deg)[src], minlength=n
        )
    res: NDArray[np.float64] = (r - p).clip(min=0)  # what the walk adds, not the seeds' own
    return res / (res.max() or 1.0)


def _coverage(
    idx: CodeIndex, q: list[str], file_of: NDArray[np.int64], files: list[int]
) -> dict[int, float]:
    import numpy as np

    lx = idx.lex
    qs = [t for t in dict.fromkeys(q)]
    cols = {t: lx.term_id(t) for t in qs}
    total = sum(float(lx.idf[c]) if c is not None else 1.0 for c in cols.values()) or 1.0
    want = np.array(files, dtype=np.int64)
    got = np.zeros(len(files))
    for col in cols.values():
        if col is None:
            continue
        holders = np.unique(file_of[lx.indices[lx.indptr[col] : lx.indptr[col + 1]]])
        got += np.isin(want, holders) * float(lx.idf[col])
    return {f: float(g / total) for f, g in zip(files, got, strict=True)}


def held_terms(idx: CodeIndex, query: str, paths: list[str]) -> dict[str, int]:
    """How many of the query's distinct terms each of these files holds anywhere (the frame's
    test that a further file shares more than one word with the task)."""
    import numpy as np

    where = {p: i for i, p in enumerate(idx.files)}
    want = np.array([where[p] for p in paths if p in where], dtype=np.int64)
    got = np.zeros(len(want), dtype=np.int64)
    lx = idx.lex
    for t in dict.fromkeys(terms(query)):
        col = lx.term_id(t)
        if col is None:
            continue
        holders = idx.file_of[lx.indices[lx.indptr[col] : lx.indptr[col + 1]]]
        got += np.isin(want, holders)
    return {idx.files[int(f)]: int(n) for f, n in zip(want, got, strict=True)}


def own_terms(idx: CodeIndex, query: str, units: list[int]) -> dict[int, tuple[int, float]]:
    """How many of the query's distinct terms each of these definitions holds itself (its
    name, signature, doc and body, as the index reads them), and their idf-weighted share of
    the query's (a term the index lacks weighs 1, as `_coverage` counts it): the frame's test
    that an item is about the task and not about one of its words."""
    import numpy as np

    want = np.array(sorted(set(units)), dtype=np.int64)
    n = np.zeros(len(want), dtype=np.int64)
    got = np.zeros(len(want))
    lx = idx.lex
    total = 0.0
    for t in dict.fromkeys(terms(query)):
        col = lx.term_id(t)
        if col is None:
            total += 1.0
            continue
        idf = float(lx.idf[col])
        total += idf
        held = np.isin(want, lx.indices[lx.indptr[col] : lx.indptr[col + 1]])
        n += held
        got += held * idf
    share = got / (total or 1.0)
    return {int(u): (int(k), float(s)) for u, k, s in zip(want, n, share, strict=True)}
