"""Frames an agent reads whole (issue 37): the code zone's lead quote, which further code
earns a place, and the evidence floor docs are held to on a code task."""

from __future__ import annotations

import dataclasses

from ncx.code.rank import CodeHit
from ncx.query import context, floor, zone
from ncx.query.assembler import Item
from ncx.query.lexical import terms


def _hit(
    path: str, qual: str, start: int, end: int, file_score: float, score: float = 1.0
) -> CodeHit:
    return CodeHit(
        unit=0,
        path=path,
        qualname=qual,
        kind="function",
        start=start,
        end=end,
        signature=f"def {qual}()",
        doc="",
        score=score,
        file_score=file_score,
        file_rank=1,
        confidence=1.0,
    )


def _task_terms(task: str):  # type: ignore[no-untyped-def]
    q = frozenset(terms(task))
    return lambda line: frozenset(terms(line)) & q


def test_a_long_lead_is_quoted_by_its_head_and_the_lines_the_task_names() -> None:
    body = ["def resolve_redirects(self, resp, req):", '    """Follow the redirects."""']
    body += [f"    step_{i} = compute_value({i})" for i in range(200)]
    body[120] = "    prepared_request = req.copy()  # copies the original request"
    body += ["    return prepared_request"]
    hit = _hit("requests/sessions.py", "resolve_redirects", 1, len(body), 1.0)
    out = zone.lead_lines(hit, body, 200, _task_terms("resolve redirects copies original request"))
    assert out[0] == body[0] and '"""Follow the redirects."""' in out[1]
    assert body[120] in out  # the line the task is about, from the middle of the body
    assert "    ..." in out
    assert len(out) < 40


def test_a_long_brace_lead_shows_its_signature_then_where_the_tasks_rare_words_are() -> None:
    """decisions.md §84: fd's 600-line option struct led "Accept `--mindepth` like
    `--maxdepth`" with its first forty lines of fields as its head (no line ends a Rust
    signature the way a Python one ends), and the window went to the line with the most task
    words (`min`, `max`, `depth`, on every other line), not to `alias("maxdepth")`."""
    src = ["#[derive(Parser)]", "pub struct Opts {"]
    for i in range(60):
        src += [
            f"    /// Option {i}: how the walk treats depth at level {i}, hidden or not.",
            "    #[arg(long, hide_short_help = true)]",
            f"    pub depth_rule_{i}: Option<usize>,",
            "",
        ]
    src[150:150] = [
        "    /// Limit the traversal to a given depth.",
        "    #[arg(long, short = 'd', alias(\"maxdepth\"))]",
        "    max_depth: Option<usize>,",
    ]
    src.append("}")
    task = "Accept --mindepth like --maxdepth: a hidden alias for the min depth option"
    hit = _hit("src/cli.rs", "Opts", 2, len(src), 1.0)
    weights = {t: (6.0 if t == "maxdepth" else 1.0) for t in terms(task)}
    out = zone.lead_lines(hit, src, 300, _task_terms(task), weights)
    assert out[:2] == src[:2]  # the attribute above, then the signature: the head ends there
    assert out[2].strip() == "..."
    assert "    #[arg(long, short = 'd', alias(\"maxdepth\"))]" in out


GO_TIMEOUT = [
    "package gate",
    "",
    "// Timeout is how long the gateway waits.",
    "// It is never zero.",
    "func Timeout(ms int) int {",
    "\treturn ms",
    "}",
]


def test_a_short_lead_is_quoted_whole_with_the_doc_comment_above_it() -> None:
    src = GO_TIMEOUT
    hit = _hit("gate/timeout.go", "Timeout", 5, 7, 1.0)
    out = zone.lead_lines(hit, src, 400, None)
    assert out == src[2:]  # the doc comment, then the body whole


def test_a_listed_definition_shows_the_body_line_that_holds_the_tasks_terms() -> None:
    """TELLING_LINES (decisions.md §64): a definition after the lead is its signature and the
    one line of its body that holds the most of the task's terms (two or more), in place,
    with `...` for the rest; its docstring is not that line, and a body with no such line
    is the signature alone."""
    src = [
        "class HTTPAdapter:",
        "    @retry",
        "    def send(self, request, stream=False, timeout=None):",
        '        """Send a request: add headers, then pool."""',
        "        conn = self.get_connection(request.url)",
        "        self.add_headers(request)",
        "        return conn.urlopen(request)",
        "    def close(self):",
        "        self.poolmanager.clear()",
    ]
    send = _hit("requests/adapters.py", "HTTPAdapter.send", 2, 7, 1.0)
    send = dataclasses.replace(
        send, signature="def send(self, request, stream=False, timeout=None)"
    )
    text = zone.item_text(
        send, src, brief=True, task_terms=_task_terms("pass kwargs from send to add_headers")
    )
    assert text.split("\n")[:5] == [
        "```python",
        "def send(self, request, stream=False, timeout=None)",
        "    ...",
        "    self.add_headers(request)",
        "    ...",
    ]
    close = _hit("requests/adapters.py", "HTTPAdapter.close", 8, 9, 1.0)
    text = zone.item_text(
        close, src, brief=True, task_terms=_task_terms("pass kwargs to add_headers")
    )
    assert text == "```python\ndef HTTPAdapter.close()\n```"
    # the file now ends before the indexed definition did (edited since): no line, no error
    gone = _hit("requests/adapters.py", "HTTPAdapter.retry", 20, 30, 1.0)
    assert zone.telling_lines(gone, src, _task_terms("retry add_headers")) == []


def test_a_long_class_does_not_lead_its_best_method_does() -> None:
    """CLASS_LEAD_LINES (decisions.md §65): a class too long to read leads by its best
    method among the hits, and follows it; a short class, or one with no method among the
    hits, leads as ranked."""
    big = dataclasses.replace(_hit("z/types.ts", "ZodObject", 10, 480, 1.0, 5.0), kind="class")
    method = _hit("z/types.ts", "ZodObject.strip", 300, 306, 1.0, 2.0)
    other = _hit("z/types.ts", "mergeValues", 600, 640, 1.0, 3.0)
    assert zone.pick([big, other, method])[:3] == [method, big, other]
    small = dataclasses.replace(big, end=10 + zone.CLASS_LEAD_LINES - 2)  # one line short
    assert zone.pick([small, other, method])[0] == small
    assert zone.pick([big, other])[0] == big


def test_a_further_file_needs_evidence_close_to_the_leads_and_more_than_one_word() -> None:
    lead = _hit("a.py", "lead", 1, 5, 1.0)
    tie = _hit("a.py", "tie", 7, 9, 1.0, score=0.5)
    close = _hit("b.py", "close", 1, 5, 0.9)
    one_word = _hit("c.py", "one_word", 1, 5, 0.8)
    far = _hit("d.py", "far", 1, 5, 0.1)
    held = {"a.py": 4, "b.py": 3, "c.py": 1, "d.py": 4}
    got = zone.pick([lead, tie, close, one_word, far], shared=lambda h: held[h.path])
    assert [h.qualname for h in got] == ["lead", "tie", "close"]


def test_a_further_file_after_the_evidence_falls_by_half_is_left_out() -> None:
    """FILE_STEP (decisions.md §98): each further file holds half the score of the file
    before it at least (the first: the lead's); where the scores fall off, the files below
    are left out, even those above the FILE_GAP of the lead's."""
    lead = _hit("a.py", "lead", 1, 5, 1.0)
    near = _hit("b.py", "near", 1, 5, 0.9)
    step = _hit("c.py", "step", 1, 5, 0.5)  # half of b.py's 0.9 at least
    cliff = _hit("c.py", "cliff", 1, 5, 0.4)  # above FILE_GAP, under half of b.py's 0.9
    assert cliff.file_score >= zone.FILE_GAP * lead.file_score
    assert [h.qualname for h in zone.pick([lead, near, step])] == ["lead", "near", "step"]
    assert [h.qualname for h in zone.pick([lead, near, cliff])] == ["lead", "near"]
    # the first further file is held to the lead's own score
    assert [h.qualname for h in zone.pick([lead, _hit("b.py", "b", 1, 5, 0.45)])] == ["lead"]
    # ... a later one to the file's before it: under half of the lead's, over half of b.py's
    b, c = _hit("b.py", "b", 1, 5, 0.6), _hit("c.py", "c", 1, 5, 0.35)
    got = zone.picked([lead, b, c])
    assert [h.qualname for h, _ in got] == ["lead", "b", "c"]
    assert got[2][1] == "a further file: 35% of the lead file's score, 58% of the file before it"


def _doc(i: int, score: float, confidence: float) -> Item:
    return Item(
        f"d{i}", "chunk", f"docs/{i}.md", 1, 2, ("S",), None, score, "text", confidence=confidence
    )


def test_docs_on_a_code_task_are_held_to_the_codes_evidence(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(floor, "DOCS_VS_CODE", 0.5)
    monkeypatch.setattr(floor, "DOC_FLOOR", 0.1)
    docs = [_doc(0, 1.0, 0.9), _doc(1, 0.9, 0.2), _doc(2, 0.5, 0.9)]
    keep, below = floor.evidence_floor(docs, code_ev=0.6)
    assert [d.id for d in keep] == ["d0", "d2"] and [d.id for d in below] == ["d1"]
    keep, _ = floor.evidence_floor(docs, code_ev=0.0)  # no code: the absolute floor only
    assert [d.id for d in keep] == ["d0", "d1", "d2"]


def test_a_weak_section_can_be_held_out_of_a_code_tasks_frame(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """DOCS_WITH_CODE (decisions.md §66, off by default): beside code, a section holding few
    of the task's terms stays out whatever its rank among the docs; with no code, the docs'
    floors decide."""
    monkeypatch.setattr(floor, "DOCS_WITH_CODE", 0.3)
    docs = [_doc(0, 1.0, 0.2), _doc(1, 0.9, 0.8)]
    keep, below = floor.evidence_floor(docs, code_ev=0.0, with_code=True)
    assert [d.id for d in keep] == ["d1"] and [d.id for d in below] == ["d0"]
    assert "20% of the task's terms" in below[0].why
    keep, below = floor.evidence_floor(docs, code_ev=0.0)
    assert [d.id for d in keep] == ["d0", "d1"] and not below


def test_an_empty_module_item_does_not_stand_for_its_file() -> None:
    """A module item with no doc names its file and nothing else (decisions.md §66): its
    file's best definition stands for the file instead; a file found by its module only
    keeps it; a module with a doc is an item like any other."""
    mod = dataclasses.replace(_hit("a.py", "", 1, 50, 1.0, 3.0), kind="module")
    fn = _hit("a.py", "parse", 10, 20, 1.0, 2.0)
    only = dataclasses.replace(_hit("b.py", "", 1, 30, 0.9, 2.5), kind="module")
    assert zone.pick([mod, fn, only]) == [fn, only]
    documented = dataclasses.replace(mod, doc="Parsing of the config file.")
    assert zone.pick([documented, fn]) == [documented, fn]
    # after its file's lead, a module item repeats the open file (a new user's execa
    # frames; decisions.md §87); another file's module still stands for its file
    assert zone.pick([fn, documented, only]) == [fn, only]


def test_a_code_task_frame_is_the_code_and_says_why_the_docs_stayed_out(repo) -> None:  # type: ignore[no-untyped-def]
    """A task naming a definition gets its body first; docs that share a word or two with it
    stay out, and --explain says they were under the floor the code set."""
    from conftest import commit_all, ncx, write

    body = "\n".join(f"    step_{i} = compute({i})" for i in range(120))
    write(
        repo,
        "pkg/redirects.py",
        "def resolve_redirects(resp, req):\n"
        '    """Follow the redirect chain of a response."""\n'
        f"{body}\n    prepared_request = req.copy()  # copies the original request\n"
        "    return prepared_request\n",
    )
    write(repo, "pkg/other.py", "def unrelated_helper():\n    return 'request'\n")
    write(
        repo, "docs/history.md", "# History\n\n## 2.0\n\nThe original release of the request API.\n"
    )
    write(
        repo,
        "docs/guide.md",
        "# Guide\n\n## Sessions\n\nA session keeps its cookies per request.\n",
    )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    proc = ncx("assemble", "--task", "resolve_redirects copies the original request", "--explain")
    frame = proc.stdout
    assert "## Code to Open" in frame and "prepared_request = req.copy()" in frame
    assert "docs/history.md" not in frame and "docs/guide.md" not in frame
    assert "## Background" not in frame
    assert "under the evidence floor the code sets" in proc.stderr
    # per item, why it is in or out
    explain = proc.stderr.splitlines()
    lead = next(ln for ln in explain if "pkg/redirects.py:resolve_redirects" in ln)
    assert lead.split()[0] == "placed" and "(the best match: quoted with its body)" in lead
    held = next(ln for ln in explain[2:] if "docs/guide.md" in ln)  # (past the stop line)
    assert held.split()[:2] == ["below", "floor"]
    assert "(evidence " in held and "under the floor" in held
    # a release's notes stay out beside code whatever their evidence (decisions.md §107)
    note = next(ln for ln in explain[2:] if "docs/history.md" in ln)
    assert note.split()[:2] == ["below", "floor"] and "(a release's notes, beside code)" in note


def test_the_plan_says_why_each_section_is_quoted_or_held_back() -> None:
    from ncx.query import assembler

    def item(i: int, score: float) -> Item:
        text = f"Section {i} says something different about topic {i}. " * 8
        return Item(f"d.md#s{i}", "chunk", "d.md", 1, 2, (f"S{i}",), None, score, text)

    p = assembler.plan([item(0, 1.0), item(1, 0.9), item(2, 0.5), item(3, 0.1)])
    assert [it.why for it in p.whole] == ["the best match", "90% of the best score: quoted whole"]
    assert [it.why for it in p.passages] == ["50% of the best score: a passage"]
    assert [it.why for it in p.below] == ["10% of the best score, under 25%"]


def test_a_long_passage_needs_more_evidence_than_a_short_one() -> None:
    """Background passages over SHORT_PASSAGE tokens need LONG_RATIO of the best score; a
    note-sized one the old PASSAGE_RATIO: it costs a third as much (docs/decisions.md §48)."""
    from ncx.query import assembler

    def item(i: int, score: float, words: int) -> Item:
        text = " ".join(f"word{i}x{k}" for k in range(words))
        return Item(f"d.md#s{i}", "chunk", "d.md", i, i, (f"S{i}",), None, score, text)

    long_low, short_low, long_mid = item(2, 0.3, 120), item(3, 0.3, 8), item(1, 0.4, 120)
    p = assembler.plan([item(0, 1.0, 50), long_mid, long_low, short_low, item(4, 0.1, 8)])
    assert [it.id for it in p.passages] == [long_mid.id, short_low.id]
    held = {it.id: it.why for it in p.below}
    assert held[long_low.id] == "30% of the best score, under 35% for a passage this long"
    assert held["d.md#s4"] == "10% of the best score, under 25%"
    assert "1 passage over 40 tokens under 35% of the best score left out" in p.stop


def test_a_class_quoted_whole_is_not_followed_by_its_own_methods(repo) -> None:  # type: ignore[no-untyped-def]
    """The lead quotes a short class whole: its methods are in that quote, so the frame does
    not list them again (they were, as signatures, after the class's own body); a class
    quoted by a window of its lines keeps them."""
    from conftest import commit_all, ncx, write

    write(
        repo,
        "pkg/fields.py",
        "class TimeDelta:\n"
        '    """A field that holds a timedelta; fractional seconds are kept."""\n\n'
        "    def _serialize(self, value):\n"
        '        """The timedelta as a number of seconds, fractional seconds kept."""\n'
        "        return value.total_seconds()\n\n"
        "    def _deserialize(self, value):\n"
        '        """A timedelta from a number of seconds."""\n'
        "        return value\n",
    )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    task = "TimeDelta loses fractional seconds when it serializes a timedelta"
    frame = ncx("assemble", "--task", task).stdout
    code = frame.split("## Code to Open", 1)[1].split("\n## ", 1)[0]
    assert "class TimeDelta:" in code and "return value.total_seconds()" in code
    assert "### `pkg/fields.py" in code and code.count("### `pkg/fields.py") == 1, code
    lead = _hit("pkg/fields.py", "TimeDelta", 1, 4, 1.0)
    whole = "```python\nclass TimeDelta:\n    x = 1\n    y = 2\n    z = 3\n```"
    assert context._quoted_whole(whole, lead)
    windowed = "```python\nclass TimeDelta:\n    ...\n    z = 3\n```"
    assert not context._quoted_whole(windowed, lead)
    assert not context._quoted_whole("module pkg/fields.py", lead)


def test_a_method_whose_head_the_lead_window_shows_is_not_listed_again(repo) -> None:  # type: ignore[no-untyped-def]
    """A class lead quoted by a window of its lines: a method whose `def` line (past its
    decorators: `@property` stands above many) is in the window is not listed after it (a
    new user's zod frame quoted `ZodObject` with `strip` inside, then listed `strip`)."""
    from conftest import commit_all, write

    write(
        repo,
        "pkg/obj.py",
        "class Obj:\n"
        "    @property\n"
        "    def strip(self):\n"
        "        return 1\n\n"
        "    @property\n"
        "    def passthrough(self):\n"
        "        return 2\n",
    )
    commit_all(repo)
    window = "```python\nclass Obj:\n    @property\n    def strip(self):\n    ...\n```"
    quoted = {ln.strip() for ln in window.split("\n") if ln.strip()}
    strip = _hit("pkg/obj.py", "Obj.strip", 2, 4, 1.0)
    passthrough = _hit("pkg/obj.py", "Obj.passthrough", 6, 8, 1.0)
    assert context._head_quoted(repo, strip, {}, quoted)
    assert not context._head_quoted(repo, passthrough, {}, quoted)  # its `@property` is, not it


def test_a_definition_quoted_whole_is_not_followed_by_what_it_holds(repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """After the lead, a short definition is quoted whole (§58): a function nested in it is in
    that quote and not listed again; two definitions of one name (an if/else) keep two ids."""
    import json

    # (the second `split_what` holds one task word: every match of the lead's file listed)
    monkeypatch.setattr(zone, "TIE_RATIO", 0.0)

    from conftest import commit_all, ncx, write

    write(
        repo,
        "pkg/filters.py",
        "import sys\n\n\n"
        "def include(*what):\n"
        '    """A filter that includes the attributes named by what."""\n\n'
        "    def include_(attribute, value):\n"
        "        return attribute.name in what\n\n"
        "    return include_\n\n\n"
        "def exclude(*what):\n"
        '    """A filter that excludes the attributes named by what."""\n'
        "    return lambda attribute, value: attribute.name not in what\n\n\n"
        "if sys.version_info >= (3, 10):\n\n"
        "    def split_what(what):\n"
        '        """Split the attributes a filter names by type."""\n'
        "        return what\n\n"
        "else:\n\n"
        "    def split_what(what, legacy=True):\n"
        '        """Split the attributes a filter names by type, the old way."""\n'
        "        return what\n",
    )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    task = "the include filter and the exclude filter drop attributes named by what"
    frame = json.loads(ncx("assemble", "--task", task, "--json").stdout)
    code = next(z for z in frame["zones"] if z["name"] == "code")["items"]
    ids = [it["id"] for it in code]
    assert len(ids) == len(set(ids)), ids
    assert "pkg/filters.py:include" in ids and "pkg/filters.py:include.include_" not in ids, ids
    assert sum(i.startswith("pkg/filters.py:split_what") for i in ids) == 2, ids


def test_a_jsdoc_block_is_quoted_whole_or_not_at_all() -> None:
    """ky writes JSDoc without a `*` on its inner lines, and a Markdown example inside it:
    the quote began at the block's closing `*/` (13 items of a new user's 30 frames,
    decisions.md §68). The block is quoted whole; one longer than DOC_BLOCK lines not at all
    (one of 22 lines is: commander.js's JSDoc, §85)."""
    src = [
        "import {NetworkError} from './errors.js';",
        "",
        "/**",
        "Type guard to check if an error is a `NetworkError`.",
        "",
        "@example",
        "```",
        "if (isNetworkError(error)) {}",
        "```",
        "*/",
        "export function isNetworkError(error: unknown): error is NetworkError {",
        "\treturn error instanceof NetworkError;",
        "}",
    ]
    hit = _hit("source/utils/type-guards.ts", "isNetworkError", 11, 13, 1.0)
    assert zone.lead_lines(hit, src, 400, None) == src[2:]
    long_doc = [*src[:3], *[f"line {i} of a long doc" for i in range(45)], *src[9:]]
    hit = _hit("source/utils/type-guards.ts", "isNetworkError", 50, 52, 1.0)
    assert zone.lead_lines(hit, long_doc, 400, None) == long_doc[49:]
    doc22 = [*src[:3], *[f"line {i} of a long doc" for i in range(20)], *src[9:]]
    hit = _hit("source/utils/type-guards.ts", "isNetworkError", 25, 27, 1.0)
    assert zone.lead_lines(hit, doc22, 400, None) == doc22[2:]
    starred = ["/**", " * Type guard.", " */", *src[10:]]
    hit = _hit("source/utils/type-guards.ts", "isNetworkError", 4, 6, 1.0)
    assert zone.lead_lines(hit, starred, 400, None) == starred


def test_a_listed_definition_shows_its_doc_above_its_code_and_a_big_type_by_its_first_line() -> (
    None
):
    """A listed definition's one-line doc stands above its fence (after it, it read as stray
    text); a type whose flattened signature was cut short is shown by the line that opens it
    (`export type Options = {`), not 250 characters of its fields on one line."""
    fields = [f"\t{name}?: number;" for name in ("limit", "backoffLimit", "delay", "jitter")]
    src = ["export type RetryOptions = {", *fields, "};"]
    flat = "type RetryOptions = { " + " ".join(f.strip() for f in fields)
    hit = dataclasses.replace(
        _hit("source/types/retry.ts", "RetryOptions", 1, len(src), 1.0),
        kind="type",
        signature=flat[:40] + "…",
        doc="Options for retrying a request.",
    )
    text = zone.item_text(hit, src, brief=True)
    assert text == "Options for retrying a request.\n\n```ts\nexport type RetryOptions = {\n```"
    whole = dataclasses.replace(hit, signature="type RetryOptions = { limit?: number }")
    assert zone.item_text(whole, src, brief=True).endswith(
        "```ts\ntype RetryOptions = { limit?: number }\n```"
    )


def test_the_class_around_the_lead_is_not_listed_for_a_line_the_lead_shows(repo) -> None:  # type: ignore[no-untyped-def]
    """A listed definition around an item already in the frame (the class of a method lead)
    or inside it, whose one quoted line the frame shows already, adds only its signature: a
    new user's ky frame listed `class Ky` and `Ky.create.function_`, both quoting the
    `throwHttpErrors` line inside the `Ky.create` lead (decisions.md §68)."""
    from conftest import commit_all, ncx, write

    steps = "".join(f"        step_{i} = self.prepare_step({i}, request)\n" for i in range(300))
    write(
        repo,
        "pkg/client.py",
        "class Client:\n"
        '    """A client that sends requests; raises HTTPError on error responses."""\n\n'
        "    def __init__(self, throw_http_errors=True):\n"
        "        self.throw_http_errors = throw_http_errors\n\n"
        "    def send(self, request):\n"
        '        """Send one request."""\n'
        f"{steps}"
        "        response = self.transport.handle(request)\n"
        "        if self.throw_http_errors and response.status_code >= 400:\n"
        "            raise HTTPError(response)\n"
        "        return response\n",
    )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    task = "send raises HTTPError on a 204 response when throw_http_errors is set"
    frame = ncx("assemble", "--task", task).stdout
    code = frame.split("## Code to Open", 1)[1].split("\n## ", 1)[0]
    assert code.strip().split("\n", 1)[0].endswith("— Client.send"), code
    assert "if self.throw_http_errors and response.status_code >= 400:" in code
    assert "— Client\n" not in code, code


def test_an_item_cites_the_doc_comment_it_quotes() -> None:
    """A Go lead quoted with the comment above its `func` line is cited from the comment's
    line (it was cited from the `func` line, two lines below what it showed)."""
    src = GO_TIMEOUT
    hit = _hit("gate/timeout.go", "Timeout", 5, 7, 1.0)
    quoted = zone.item_text(hit, src, body_tokens=400)
    assert quoted.split("\n")[1] == "// Timeout is how long the gateway waits."
    assert context._first_quoted(hit, src, quoted) == 3
    listed = zone.item_text(hit, None)  # a signature alone: cited from the definition
    assert context._first_quoted(hit, src, listed) == 5


def test_a_quote_cut_inside_an_html_comment_leaves_no_comment_open(repo) -> None:  # type: ignore[no-untyped-def]
    """A PR template's guidance is an HTML comment; a passage window ending inside it kept
    its `<!--`, and a markdown reader then hid every zone after it (Current State and
    Instructions). A window starting inside one showed the comment's text as the doc's."""
    from conftest import commit_all, ncx, write

    guidance = "\n".join(
        f"Line {i} of the guidance: every news fragment names its towncrier changelog entry."
        for i in range(40)
    )
    filler = "\n".join(f"Step {i}: run the suite before you push." for i in range(30))
    write(
        repo,
        ".github/PULL_REQUEST_TEMPLATE.md",
        f"# Pull Request Check List\n\n{filler}\n\n<!--\n{guidance}\n-->\n\n"
        "- [ ] Added a news fragment.\n",
    )
    write(repo, "docs/guide.md", "# Guide\n\nHow to write a news fragment for the changelog.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    frame = ncx("assemble", "--task", "add a towncrier news fragment changelog entry").stdout
    body = frame.split("\n", 1)[1]  # (past the frame's own id comment)
    assert body.rfind("<!--") <= body.rfind("-->"), body  # no comment left open
    assert "## Instructions" in body
    assert "Line 7 of the guidance" not in body  # a comment is not the doc's text


def test_a_listed_summary_is_not_cut_at_an_abbreviation() -> None:
    """A new user's marshmallow frame: `String`'s summary ended "(e.g." (cut at its stop)."""
    doc = "A string field (e.g. a name, i.e. text). It is validated. More."
    assert zone._first_sentence(doc) == "A string field (e.g. a name, i.e. text)."
    assert zone._first_sentence("E.g. this one. Not that.") == "E.g. this one."


def test_a_heading_that_is_only_markup_is_no_part_of_the_citation() -> None:
    """chi's README is titled by an `<img>`: its sections were cited `—  > Benchmarks`."""
    title = '<img alt="chi" src="https://example.com/chi.svg" width="220" />'
    it = Item("README.md#b", "chunk", "README.md", 5, 9, (title, "Benchmarks"), None, 1.0, "x")
    assert it.citation() == "`README.md:5-9` — Benchmarks"
    assert it.citation(brief=True) == "`README.md:5-9` — Benchmarks"


def test_a_long_leads_window_does_not_open_inside_a_list() -> None:
    """A new user's marshmallow frame: `URL`'s quote opened on `r"localhost",`, in the middle
    of the list it belongs to; it now opens on the line that opens the list."""
    body = ["class URL(Validator):", '    """Validate a URL."""', ""]
    body += [f"    step_{i} = compute_value({i})" for i in range(120)]
    body += [
        "    def _regex_generator(self, relative, absolute, require_tld):",
        "        hostname_variants = [",
        "            # a normal domain name",
        '            r"(?:[A-Z0-9]+\\.)+",',
        "            # or the special string 'localhost'",
        '            r"localhost",  # the hostname variants for a dotless host',
        "        ]",
        "        return hostname_variants",
    ]
    body += [f"    other_{i} = compute_value({i})" for i in range(60)]
    hit = _hit("src/marshmallow/validate.py", "URL", 1, len(body), 1.0)
    task = "localhost hostname variants for a dotless host"
    out = zone.lead_lines(hit, body, 150, _task_terms(task))
    assert "        hostname_variants = [" in out
    first = out.index("        hostname_variants = [")
    assert out[first - 1].strip() == "..."
    assert '            r"localhost",  # the hostname variants for a dotless host' in out


def test_a_long_leads_window_does_not_open_inside_a_block() -> None:
    """A new user's Go frame quoted the body of an `if` without its condition; the window
    now opens on the block's line."""
    body = ["func (m *Mux) Handle(pattern string, handler Handler) {"]
    body += [f"\tstep{i} := compute(pattern, {i})" for i in range(120)]
    body += [
        "\tif m.inline && len(m.middlewares) > 0 {",
        '\t\tpanic("chi: all middlewares must be defined before routes on a mux")',
        "\t}",
    ]
    body += [f"\tother{i} := compute(pattern, {i})" for i in range(60)]
    body += ["}"]
    hit = _hit("mux.go", "Mux.Handle", 1, len(body), 1.0)
    task = "all middlewares must be defined before routes on a mux panic"
    out = zone.lead_lines(hit, body, 150, _task_terms(task))
    opens = "\tif m.inline && len(m.middlewares) > 0 {"
    assert opens in out, out
    assert out[out.index(opens) - 1].strip() == "..."


def test_a_window_moved_to_its_block_keeps_its_line_and_its_room() -> None:
    """A review of §93: moved up to a block's line 12 lines higher, the window gave up lines
    at its end, the one it was chosen for among them, and ran past its room (321 tokens for
    150). It moves only when it still fits with that line in."""
    from ncx.tokens import count_tokens

    body = ["def handle(self, items):", '    """Handle the items."""']
    body += [f"    pre_{i} = compute_value(items, {i})" for i in range(60)]
    body += ["    for item in items:"]
    body += [
        f"        filler_number_{i} = some_long_function_name(item, argument_{i}, other_{i})"
        for i in range(11)
    ]
    body += ["        raise ValueError('duplicate webhook signature rejected')"]
    body += [f"        after_{i} = compute_value(item, {i})" for i in range(40)]
    hit = _hit("m.py", "handle", 1, len(body), 1.0)
    out = zone.lead_lines(hit, body, 150, _task_terms("duplicate webhook signature rejected"))
    assert "        raise ValueError('duplicate webhook signature rejected')" in out
    assert count_tokens("\n".join(out)) <= 150


def test_a_further_match_of_the_leads_file_needs_a_fifth_of_its_score() -> None:
    """decisions.md §90: two new users' readings found 2 of 20 matches of the lead's file
    under a fifth of its score worth reading."""
    lead = _hit("a.py", "parse", 1, 10, 1.0, 1.0)
    close = _hit("a.py", "parse_value", 12, 20, 1.0, 0.3)
    faint = _hit("a.py", "render", 22, 30, 1.0, 0.1)
    assert zone.pick([lead, close, faint]) == [lead, close]


def test_the_leads_files_next_match_gets_a_share_of_the_leads_quote() -> None:
    """SECOND_SHARE (decisions.md §101): a quarter of the lead's tokens for the match right
    after it in its file; a further file's item is listed by its head, as before."""
    lead, tie = _hit("a.py", "lead", 1, 50, 1.0), _hit("a.py", "tie", 60, 90, 1.0, 0.5)
    other = _hit("b.py", "other", 1, 50, 0.9)
    full = zone.body_tokens(15000)
    assert zone.quote_tokens(15000, [lead, tie, other]) == [full, full // 4]
    assert zone.quote_tokens(15000, [lead, other, tie]) == [full]
    assert zone.quote_tokens(2500, [lead, tie]) == [zone.body_tokens(2500), 125]
    assert zone.quote_tokens(15000, []) == []
    around = _hit("a.py", "Around", 1, 95, 1.0, 0.5)  # the class the lead is a method of
    assert zone.quote_tokens(15000, [lead, around]) == [full]


def test_a_further_match_of_the_leads_file_must_hold_the_task_not_one_of_its_words() -> None:
    """decisions.md §92: in 30 hand-read frames 1 of 30 items holding one of the task's terms
    was worth reading; a further match of the lead's file needs two of them, a tenth of the
    task's idf, in its own text."""
    lead = _hit("a.py", "parse", 1, 10, 1.0, 1.0)
    about = dataclasses.replace(_hit("a.py", "parse_value", 12, 20, 1.0, 0.5), unit=1)
    word = dataclasses.replace(_hit("a.py", "render", 22, 30, 1.0, 0.5), unit=2)
    faint = dataclasses.replace(_hit("a.py", "check", 32, 40, 1.0, 0.5), unit=3)
    own = {0: (4, 0.9), 1: (2, 0.4), 2: (1, 0.5), 3: (3, 0.05)}
    assert zone.pick([lead, about, word, faint], own=lambda h: own[h.unit]) == [lead, about]
    assert zone.pick([lead, about, word, faint]) == [lead, about, word, faint]  # not asked


def test_a_long_issue_asks_a_further_match_no_more_of_its_terms_than_the_lead_holds() -> None:
    """decisions.md §93: a long issue's hundreds of terms put a tenth of their weight out of
    any one definition's reach, the lead's too: a further match of the lead's file is asked
    for the lead's own share where that is less (still two terms)."""
    lead = _hit("a.py", "resolve_redirects", 1, 10, 1.0, 1.0)
    near = dataclasses.replace(_hit("a.py", "rebuild_method", 12, 20, 1.0, 0.5), unit=1)
    word = dataclasses.replace(_hit("a.py", "close", 22, 30, 1.0, 0.5), unit=2)
    fainter = dataclasses.replace(_hit("a.py", "mount", 32, 40, 1.0, 0.5), unit=3)
    own = {0: (9, 0.06), 1: (3, 0.07), 2: (1, 0.08), 3: (2, 0.02)}
    got = zone.pick([lead, near, word, fainter], own=lambda h: own[h.unit])
    assert got == [lead, near], got
    own[0] = (9, 0.5)  # a short task's lead: the tenth is asked
    assert zone.pick([lead, near, word, fainter], own=lambda h: own[h.unit]) == [lead]


def test_a_definitions_own_terms_are_counted_from_its_own_text(repo) -> None:  # type: ignore[no-untyped-def]
    """`own_terms` counts the task's distinct terms a definition holds itself (name, doc,
    body), not its file's: what §92's test reads."""
    from conftest import commit_all, write

    from ncx.code.search import CodeSearcher

    write(
        repo,
        "pkg/timeouts.py",
        "def parse_timeout(value):\n"
        '    """Parse a timeout in seconds from a config value."""\n'
        "    return float(value)\n\n\n"
        "def render_banner():\n"
        '    """The banner shown at start."""\n'
        '    return "timeout"\n',
    )
    commit_all(repo)
    code = CodeSearcher(repo)
    task = "parse the timeout seconds of a config value"
    hits = [h for h in code.search(task, files=3, per_file=4) if h.path == "pkg/timeouts.py"]
    by = {h.qualname: h for h in hits}
    own = code.own_terms(task, hits)
    parse, banner = own[by["parse_timeout"].unit], own[by["render_banner"].unit]
    assert parse[0] >= 4 and parse[1] > 0.5, parse
    assert banner[0] == 1 and banner[1] < parse[1], banner
