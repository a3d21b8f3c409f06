"""What two new users' 40 frames of humanize, afero, zustand and env_logger found, each on the
real thing it broke (docs/decisions.md §104): a lead that lost its body to a docstring's own
code fence, a Rust struct the task names never listed, task files read wrong, a query that
left an untracked .neocortex/ behind, status lines that said the wrong thing or said it twice,
`--at` failing inside its cache folder, and a small frame that gave the wrong reason."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_all, git, json_lines, ncx, write

ROLLOVER = '''"""Calculations."""


def rollover_units(value: float, base: int = 1000) -> str:
    """Format a value with rollover of units.

    Examples:
        ```pycon
        >>> rollover_units(999.5)
        '1.0 k'
        ```
    """
    units = ["", "k", "M", "G"]
    i = 0
    while value >= base and i < len(units) - 1:
        value /= base
        i += 1
    return f"{round(value, 1)} {units[i]}".strip()


def other(x):
    return x + 1
'''


def _synced(repo: Path) -> None:
    commit_all(repo)
    ncx("init")
    ncx("sync")


def test_a_lead_whose_docstring_holds_a_code_fence_is_quoted_with_its_body(repo: Path) -> None:
    """humanize's docstrings hold ```pycon examples: the lead fell back to its signature and
    one line in 7 of 10 frames. Its fence is now longer than any the body holds."""
    write(repo, "calc.py", ROLLOVER)
    _synced(repo)
    frame = ncx("assemble", "--task", "fix rollover_units rounding at 1000").stdout
    assert 'units = ["", "k", "M", "G"]' in frame  # the body, whole
    assert "````python\ndef rollover_units(" in frame and "\n````\n" in frame
    # the docstring's own fence is inside the quote, not its end
    quote = frame.split("````python\n", 1)[1].split("\n````\n", 1)[0]
    assert "```pycon" in quote and quote.rstrip().endswith(".strip()")
    data = json.loads(
        ncx("assemble", "--task", "fix rollover_units rounding at 1000", "--json").stdout
    )
    lead = next(z for z in data["zones"] if z["name"] == "code")["items"][0]
    assert (lead["start_line"], lead["end_line"]) == (4, 18)


def test_a_rust_struct_the_task_names_by_a_word_is_named(repo: Path) -> None:
    """env_logger's "implement Clone for Filter": `struct Filter` had no bonus (only a class
    had), and methods named `filter` and `Builder.build` (which returns one) stood for it."""
    from ncx.code.index import load_code_index
    from ncx.code.rank import search_code

    write(
        repo,
        "src/filter.rs",
        "pub struct Builder {\n    directives: Vec<String>,\n}\n\n"
        "impl Builder {\n    /// Build a log filter.\n"
        "    pub fn build(&mut self) -> Filter {\n        Filter { directives: vec![] }\n    }\n\n"
        "    pub fn filter(&mut self, module: &str) -> &mut Self {\n        self\n    }\n}\n\n"
        "/// A log filter.\n#[derive(Debug)]\npub struct Filter {\n    directives: Vec<String>,\n}\n\n"
        "impl Filter {\n    pub fn filter(&self) -> bool {\n        true\n    }\n}\n",
    )
    write(repo, "src/clone.rs", "/// Clone helpers.\npub fn implement_clone() {}\n")
    commit_all(repo)
    hits = search_code(load_code_index(repo), "implement Clone for Filter", files=10)
    named = [h for h in hits if h.why["named"]]
    assert [(h.qualname, h.kind) for h in named] == [("Filter", "struct")]
    # written as a plain word it is only a word, as for a class
    plain = search_code(load_code_index(repo), "implement clone for filter", files=10)
    assert not any(h.why["named"] for h in plain)


def test_task_files_are_read_as_text_is_and_say_when_they_are_empty(repo: Path) -> None:
    write(repo, "calc.py", ROLLOVER)
    _synced(repo)
    empty = repo.parent / "empty.md"
    empty.write_text("\n  \n")
    proc = ncx("assemble", "--task-file", str(empty), ok=False)
    assert proc.returncode == 2 and "empty.md: is empty" in proc.stderr
    # UTF-16 with its byte-order mark is read (as a doc is), a UTF-8 mark dropped
    title = "fix rollover_units rounding at 1000"
    for name, data in (
        ("u16.md", (title + "\n").encode("utf-16")),
        ("bom8.md", b"\xef\xbb\xbf" + title.encode() + b"\n"),
    ):
        f = repo.parent / name
        f.write_bytes(data)
        frame = json.loads(ncx("assemble", "--task-file", str(f), "--json").stdout)
        task = next(z for z in frame["zones"] if z["name"] == "task")["text"]
        assert task == title, name
    plain = repo.parent / "plain.md"
    plain.write_text(title + "\n")
    ids = {
        ncx("assemble", "--task-file", str(repo.parent / n)).stderr for n in ("bom8.md", "plain.md")
    }
    assert len(ids) == 1  # the same frame id: the mark is not part of the task


def test_a_very_long_task_is_shown_by_its_head(repo: Path) -> None:
    """A 27,000-character task was half of its own frame, twice over."""
    write(repo, "calc.py", ROLLOVER)
    _synced(repo)
    task = "rollover_units " + "word " * 6000
    frame = ncx("assemble", "--task", task).stdout
    shown = frame.split("## CRITICAL: Task\n\n", 1)[1].split("\n\n", 1)[0]
    assert len(shown) < 2_100 and shown.endswith(
        f"(the task is {len(task.strip()):,} characters: its first 1,999 here)"
    )


def test_a_code_query_in_a_repository_ncx_is_not_set_up_in_writes_nothing(repo: Path) -> None:
    write(repo, "calc.py", ROLLOVER)
    commit_all(repo)
    out = ncx("retrieve", "--kind", "code", "rollover_units").stdout
    assert "calc.py" in out
    assert not (repo / ".neocortex").exists()
    assert git(repo, "status", "--porcelain") == ""


def test_status_says_a_code_index_is_out_of_date_and_a_reason_once(repo: Path) -> None:
    write(repo, "calc.py", ROLLOVER)
    write(repo, "README.md", "# Calc\n\nRollover of units, explained at length here.\n")
    write(repo, "CHANGELOG.md", "# Changelog\n\n## 1.0\n\n- first\n")
    write(repo, "pkg/CHANGELOG.md", "# Changelog\n\n## 0.1\n\n- first\n")
    _synced(repo)
    ncx("retrieve", "--kind", "code", "rollover_units")  # the index, saved
    out = ncx("status").stdout
    assert "code: 1 source files\n" in out + "\n"
    lines = [ln for ln in out.splitlines() if ln.startswith("not indexed:")]
    assert len(lines) == 1 and lines[0].startswith("not indexed: CHANGELOG.md, pkg/CHANGELOG.md: ")
    write(repo, "calc.py", ROLLOVER + "\n\ndef more():\n    return 2\n")
    out = ncx("status").stdout
    assert (
        "code: 1 source files (index out of date: the next query or `ncx sync` updates it)" in out
    )
    assert json.loads(ncx("status", "--json").stdout)["code"]["stale"] is True


def test_at_a_commit_without_ncx_files_says_so_and_writes_nothing(repo: Path) -> None:
    write(repo, "README.md", "# Calc\n\nRollover of units.\n")
    _synced(repo)  # .neocortex/ made, not committed
    for args in (("assemble", "--task", "rollover"), ("retrieve", "rollover")):
        proc = ncx(*args, "--at", "HEAD", ok=False)
        assert proc.returncode == 2, proc.stderr
        assert "holds no .neocortex/: ncx's files were not committed then" in proc.stderr
        assert "git add .neocortex && git commit" in proc.stderr
        assert "retrieve --kind code" in proc.stderr
    assert not (repo / ".neocortex" / "cache" / "at").exists()


def test_a_frame_the_budget_stops_says_so_and_leaves_no_heading_bare(repo: Path) -> None:
    write(repo, "calc.py", ROLLOVER)
    write(repo, "README.md", "# Calc\n\n## Rounding\n\nHow rollover_units rounds at 1000.\n")
    _synced(repo)
    for n in range(3):  # commits to the lead file: Current State lists them under a heading
        write(repo, "calc.py", ROLLOVER + "\n" * (n + 1))
        git(repo, "commit", "-qam", f"calc: tidy the rounding code, step {n}")
    task = "fix rollover_units rounding at 1000"
    proc = ncx("assemble", "--task", task, "--budget", "200", "--explain")
    assert "stopped: the budget (200 tokens) was reached" in proc.stderr
    for budget in range(200, 420, 10):
        frame = ncx("assemble", "--task", task, "--budget", str(budget)).stdout
        lines = frame.splitlines()
        for a, b in zip(lines, lines[1:], strict=False):
            assert not (a.endswith(":") and a.startswith("- ") and b == "- …"), (budget, frame)


def test_the_release_build_warns_of_no_folder_it_leaves_out(dist: Path) -> None:
    """setuptools printed a "Package would be ignored" banner for ncx/models and the
    templates' github/ folder on every install; both are packages of data now (the `dist`
    fixture fails on the banner), and their files are in the wheel."""
    import zipfile

    names = zipfile.ZipFile(next(dist.glob("ncx-*.whl"))).namelist()
    assert "ncx/models/ncx-static-v2/model.safetensors" in names
    assert "ncx/agents/templates/github/ncx-review.yml" in names


def test_explain_names_the_code_each_rule_left_out_and_not_every_section_below(
    repo: Path,
) -> None:
    """zustand: the definition the fix was in (`findCallerName`) was left out with no word
    why, while 160 doc sections under the code's floor were each listed."""
    write(repo, "calc.py", ROLLOVER)
    write(repo, "fmt.py", "def rounding_note():\n    '''Rounding, said once.'''\n    return 1\n")
    for n in range(8):
        write(repo, f"docs/page{n}.md", f"# Page {n}\n\nA page about units number {n}.\n")
    _synced(repo)
    proc = ncx("assemble", "--task", "fix rollover_units rounding of units at 1000", "--explain")
    lines = proc.stderr.splitlines()
    assert any(
        ln.split()[:2] == ["left", "out"]
        and "fmt.py:rounding_note" in ln
        and "a further file" in ln
        for ln in lines
    ), proc.stderr
    below = [ln for ln in lines if ln.lstrip().startswith("below")]
    assert len(below) <= 5
    if len(below) == 5:
        assert any(ln.strip().startswith("... and ") for ln in lines), proc.stderr


# --- a third reader's mkdocs and javapoet ------------------------------------------------


def _snippet_tree(repo: Path) -> None:
    write(
        repo,
        "docs/plugins.md",
        "# Plugins\n\nHow plugins load.\n\n## Events\n\nThe zebrafish event fires first.\n\n"
        '--8<-- "docs/snip.md"\n\n--8<-- "docs/img/events.svg"\n\n## After\n\n'
        "More text after the include about loading.\n",
    )
    write(repo, "docs/snip.md", "Included text about the zebrafish snippet.\nA second line.\n")
    write(
        repo,
        "docs/img/events.svg",
        '<svg xmlns="http://www.w3.org/2000/svg">'
        + "".join(f'<polygon points="{i},0 {i},9"/>' for i in range(400))
        + "</svg>\n",
    )
    write(repo, "mkdocs.yml", "site_name: x\nmarkdown_extensions:\n  - pymdownx.snippets\n")
    _synced(repo)
    commit_all(repo, "ncx")


def test_at_a_commit_a_chunk_built_from_an_include_keeps_its_lines(repo: Path) -> None:
    """mkdocs' plugins page: `retrieve --at HEAD` gave its include's chunk no line range
    (git asked in the materialised folder answered for the repository around it)."""
    _snippet_tree(repo)

    def spans(*at: str) -> list[tuple[str, int | None]]:
        rows = json_lines("retrieve", "zebrafish", "--k", "2", "--json", *at)
        return sorted((r["source_path"], r["start_line"]) for r in rows)

    here = spans()
    assert ("docs/plugins.md", 1) in here
    assert spans("--at", "HEAD") == here


def test_an_svg_snippet_is_a_note_not_its_markup(repo: Path) -> None:
    _snippet_tree(repo)
    chunks = (repo / ".neocortex/chunks/docs/plugins.md").read_text()
    assert "<polygon" not in chunks
    assert "[include not read: docs/img/events.svg: a picture's markup, not text to read]" in chunks


def test_a_sync_of_named_docs_is_not_failed_by_another_doc_s_name(repo: Path) -> None:
    write(repo, "docs/guide.md", "# Guide\n\nHow to use it.\n")
    write(repo, "docs/new\nline.md", "# Odd\n\nA name with a line break.\n")
    commit_all(repo)
    ncx("init")
    whole = ncx("sync", ok=False)
    assert whole.returncode == 1
    # one problem, one line: the name cited escaped, with what to do about it
    err = [ln for ln in whole.stderr.splitlines() if "control character" in ln]
    assert err and "docs/new\\nline.md" in err[0], whole.stderr
    assert "ncx init --exclude PATH" in whole.stderr
    write(repo, "docs/guide.md", "# Guide\n\nHow to use it, now with more words.\n")
    named = ncx("sync", "docs/guide.md")
    assert "control character" not in named.stderr


def test_a_link_ncx_refuses_says_what_to_do(repo: Path) -> None:
    outside = repo.parent / "outside.md"
    outside.write_text("# Out\n\nNot the project's.\n")
    write(repo, "docs/guide.md", "# Guide\n\nHow to use it.\n")
    (repo / "docs/out.md").symlink_to(outside)
    commit_all(repo)
    ncx("init")
    proc = ncx("sync", ok=False)
    assert "is a symlink that leaves the repository; refused" in proc.stderr
    assert "ncx init --exclude PATH" in proc.stderr


def test_code_results_say_whether_they_are_weak(repo: Path) -> None:
    write(repo, "calc.py", ROLLOVER)
    _synced(repo)
    rows = json_lines("retrieve", "--kind", "code", "--json", "rollover units refresh zebra")
    assert rows and all(isinstance(r["weak"], bool) for r in rows)
    strong = json_lines("retrieve", "--kind", "code", "--json", "rollover_units")[0]
    assert strong["weak"] is False


def test_a_go_method_the_task_names_by_its_word_leads_its_file(repo: Path) -> None:
    """afero's "CopyOnWriteFs: Remove returns EPERM": the lead was the long `Open` beside
    it; `Remove`, named by a capitalised word after its type, is now named (its word alone
    names nothing: every Fs has a Remove)."""
    from ncx.code.index import load_code_index
    from ncx.code.rank import search_code

    body = "".join(f"\tstep{i} := open(name, {i})\n\t_ = step{i}\n" for i in range(20))
    write(
        repo,
        "copyOnWriteFs.go",
        "package afero\n\n// CopyOnWriteFs is a union filesystem.\ntype CopyOnWriteFs struct {\n"
        "\tbase  Fs\n\tlayer Fs\n}\n\n"
        f"func (u *CopyOnWriteFs) Open(name string) (File, error) {{\n{body}\treturn nil, nil\n}}\n\n"
        "// Remove removes a file from the layer.\n"
        "func (u *CopyOnWriteFs) Remove(name string) error {\n"
        "\tif u.isBaseFile(name) {\n\t\treturn syscall.EPERM\n\t}\n\treturn u.layer.Remove(name)\n}\n",
    )
    for fs in ("MemMapFs", "OsFs", "BasePathFs"):
        write(
            repo,
            f"{fs.lower()}.go",
            f"package afero\n\ntype {fs} struct{{}}\n\n"
            f"func (m *{fs}) Remove(name string) error {{\n\treturn nil\n}}\n",
        )
    commit_all(repo)
    task = "CopyOnWriteFs: Remove returns EPERM for files in the base layer"
    hits = search_code(load_code_index(repo), task, files=5)
    assert (hits[0].path, hits[0].qualname) == ("copyOnWriteFs.go", "CopyOnWriteFs.Remove")
    assert hits[0].why["named"]
    # the word alone, with no type the task names, is a word
    others = search_code(load_code_index(repo), "Remove returns EPERM for base files", files=5)
    assert not any(h.why["named"] for h in others if h.qualname.endswith(".Remove"))


# --- what a review of the change found ------------------------------------------------


def _open_fence(markdown: str) -> str:
    """The code fence a markdown text leaves open at its end ("" when none), as CommonMark
    reads fences: a run of 3+ backticks opens, one of that character at least as long and
    nothing else closes."""
    fence = ""
    for line in markdown.split("\n"):
        s = line.strip()
        if fence:
            if len(s) >= len(fence) and s == fence[0] * len(s):
                fence = ""
        elif s.startswith(("```", "~~~")):
            fence = s[: len(s) - len(s.lstrip(s[0]))]
    return fence


def test_no_budget_leaves_a_fence_open_when_quotes_hold_fences(repo: Path) -> None:
    """A trim took a fence as its first three backticks: an inner ```pycon closed the item's
    ````python, and the rest of the frame read as code."""
    funcs = "".join(
        f'\n\ndef naturalday_{n}(value):\n    """Day {n} of the units, rounded.\n\n'
        "    ```pycon\n    >>> naturalday(1)\n\n    'now'\n\n    >>> naturalday(2)\n"
        '    \'then\'\n    ```\n    """\n    return value + ' + str(n) + "\n"
        for n in range(5)
    )
    write(repo, "time.py", '"""Time."""' + funcs)
    _synced(repo)
    task = "naturalday rounding of units for a day value"
    for budget in range(250, 1000, 50):
        frame = ncx("assemble", "--task", task, "--budget", str(budget)).stdout
        assert _open_fence(frame) == "", (budget, frame)
        assert "\n## Instructions\n" in frame


def test_a_long_task_cut_inside_its_code_block_closes_it(repo: Path) -> None:
    write(repo, "calc.py", ROLLOVER)
    _synced(repo)
    trace = "".join(f'  File "calc.py", line {n}, in rollover_units\n' for n in range(80))
    task = (
        "rollover_units fails at 1000\n\n```\nTraceback (most recent call last):\n"
        + trace
        + "```\n"
    )
    frame = ncx("assemble", "--task", task).stdout
    shown = frame.split("## CRITICAL: Task\n\n", 1)[1].split("\n## ", 1)[0]
    assert "(the task is" in shown and _open_fence(shown) == ""
    assert _open_fence(frame) == "" and "\n## Code to Open\n" in frame


def test_code_alone_is_served_at_a_commit_before_ncx(repo: Path) -> None:
    write(repo, "calc.py", ROLLOVER)
    commit_all(repo)
    ncx("init")
    out = ncx("retrieve", "--kind", "code", "rollover_units", "--at", "HEAD").stdout
    assert "calc.py:4-18" in out


def test_a_cut_state_drops_a_heading_only_when_its_lines_go() -> None:
    from ncx.query.assembler import _fit_lines

    lines = [
        "- recent commits to `calc.py`:",
        "  - abc1234 calc: the rounding, as follows:",
        "  - " + "x " * 400,
    ]
    assert _fit_lines("state", lines, 40).splitlines() == [*lines[:2], "- …"]
    assert _fit_lines("state", ["- branch `main`", *lines[:1], lines[2]], 24).splitlines() == [
        "- branch `main`",
        "- …",
    ]


def test_a_line_of_triple_backtick_code_opens_no_block() -> None:
    """cisagov's runbooks write commands as ```cf ssh getgov-{space}``` on one line: CommonMark
    reads that as inline code (a fence's info string holds no backtick). Taken for a fence,
    it paired with the next such line, or ran to the end of the text and nothing fitted."""
    from ncx.query.quote import trim_to_paragraphs

    text = (
        "#### Step 1: Log in\n```cf login -a api.fr.cloud.gov --sso```\n\n"
        "#### Step 2: SSH in\n```cf ssh getgov-{space}```\n\nExample: `cf ssh getgov-za`\n\n"
        + "\n\n".join(f"A long paragraph {n} " + "word " * 40 for n in range(4))
    )
    got = trim_to_paragraphs(text, 60)
    assert got.startswith("#### Step 1: Log in\n```cf login") and "Step 2" in got
    fenced = "```python\nx = 1\n\ny = 2\n```\n\nAfter.\n\n" + "word " * 200
    assert trim_to_paragraphs(fenced, 30) == "```python\nx = 1\n\ny = 2\n```\n\nAfter.\n[…]"


def test_two_chunks_of_one_section_quoted_whole_do_not_repeat_their_overlap() -> None:
    """mkdocs' `use_directory_urls`: its two chunks share the chunker's overlap, and the
    frame quoted lines 701-704 twice."""
    from ncx.query.assembler import Item, without_overlaps

    def item(n: int, start: int, lines: list[str], path: str = "docs/c.md") -> Item:
        end = start + len(lines) - 1
        return Item(f"c#{n}", "chunk", path, start, end, ("C",), None, 1.0, "\n".join(lines))

    first = item(1, 10, ["intro", "", "**shared: true**", "", "the shared words"])
    second = item(2, 12, ["**shared: true**", "", "the shared words", "", "table row", "end"])
    got = without_overlaps([first, second])
    assert got[0] == first
    assert (got[1].start_line, got[1].end_line, got[1].text) == (16, 17, "table row\nend")
    # lines that differ in text (a tidied quote), another file, or no new line: as they were
    other = item(3, 12, ["**shared: TRUE**", "", "the shared words", "", "table row"])
    elsewhere = item(4, 12, second.text.split("\n"), path="docs/d.md")
    inside = item(5, 12, ["**shared: true**", "", "the shared words"])
    assert without_overlaps([first, other, elsewhere, inside])[1:] == [other, elsewhere, inside]


def test_a_doc_block_too_long_for_the_quote_s_head_leaves_no_opener_behind() -> None:
    """got's `RetryOptions`: its `/**` block is one long paragraph; the head kept the `/**`
    line alone, and the quote went on with the body under an opened comment."""
    from ncx.code.rank import CodeHit
    from ncx.query.zone import fenced_lines, item_text, lead_lines

    doc = ["/**", "An object representing " + "the retry fields and their meaning " * 12, "*/"]
    body = ["export type RetryOptions = {", *[f"\tfield{n}: number;" for n in range(30)], "};"]
    lines = ["// options", *doc, *body]
    start = 2 + len(doc)
    hit = CodeHit(
        unit=1, path="source/options.ts", qualname="RetryOptions", kind="type", start=start,
        end=start + len(body) - 1, signature="export type RetryOptions", doc="", score=1.0,
        file_score=1.0, file_rank=1, confidence=1.0,
    )  # fmt: skip
    quoted = lead_lines(hit, lines, 120, lambda ln: frozenset({"field7"} & set(ln.split(":"))))
    assert quoted[0] == "export type RetryOptions = {" and "/**" not in quoted
    text = item_text(hit, lines, body_tokens=120, task_terms=lambda ln: frozenset())
    assert "/**" not in (fenced_lines(text) or [])
    # a doc that fits the head is quoted with it, as before
    short = ["/**", " * Retry options.", " */"]
    lines2 = ["import x from 'y';", *short, *body]
    hit2 = CodeHit(
        **{**hit.__dict__, "start": 2 + len(short), "end": 2 + len(short) + len(body) - 1}
    )
    assert lead_lines(hit2, lines2, 120)[:3] == short


def test_a_long_line_comment_doc_is_quoted_by_its_head(repo: Path) -> None:
    """walkdir's `filter_entry` has a 47-line `///` doc, its example inside: the lead was
    quoted without any of it (over DOC_ABOVE, it was left out whole)."""
    doc = ["    /// Yields only entries which satisfy the given predicate.", "    ///"]
    doc += [f"    /// Detail {n} of how the predicate skips hidden directories." for n in range(30)]
    write(
        repo,
        "src/lib.rs",
        "//! The crate.\n\npub struct IntoIter {}\n\nimpl IntoIter {\n"
        + "\n".join(doc)
        + "\n    pub fn filter_entry<P>(self, predicate: P) -> FilterEntry<Self, P> {\n"
        "        FilterEntry { it: self, predicate }\n    }\n}\n",
    )
    commit_all(repo)
    ncx("init")
    frame = json.loads(
        ncx("assemble", "--task", "skip hidden directories with filter_entry", "--json").stdout
    )
    lead = next(z for z in frame["zones"] if z["name"] == "code")["items"][0]
    text = lead["text"].split("\n")
    assert text[1] == doc[0] and "    /// ..." in text
    assert text.index("    /// ...") == 1 + 4  # the doc's first DOC_HEAD lines
    assert any(ln.strip().startswith("pub fn filter_entry") for ln in text)
    assert lead["start_line"] == 6  # cited from the doc's first line


def test_a_mixed_list_says_its_scores_are_two_orders(repo: Path) -> None:
    write(repo, "calc.py", ROLLOVER)
    write(repo, "README.md", "# Calc\n\n## Rounding\n\nHow rollover_units rounds at 1000.\n")
    _synced(repo)
    mixed = ncx("retrieve", "rollover_units rounding")
    assert "[code]" in mixed.stdout and "[chunk]" in mixed.stdout
    assert "docs and code interleaved, each best first by its own score" in mixed.stderr
    assert "interleaved" not in ncx("retrieve", "--kind", "code", "rollover_units").stderr


def test_a_message_filled_in_with_paths_points_at_the_code_that_writes_it(repo: Path) -> None:
    """walkdir: "File system loop found: /home/me/a/b points to an ancestor /home/me/a",
    pasted in an issue, lifted nothing: no definition holds "home" and "me"; the code writes
    `"File system loop found: {} points to an ancestor {}"`."""
    from ncx.code.index import load_code_index
    from ncx.code.pointers import read_task
    from ncx.code.rank import search_code

    write(
        repo,
        "src/error.rs",
        "pub enum ErrorInner { Loop { ancestor: PathBuf, child: PathBuf } }\n\n"
        "impl fmt::Display for Error {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n"
        '        write!(f, "File system loop found: {} points to an ancestor {}", c, a)\n'
        "    }\n}\n",
    )
    write(
        repo,
        "src/lib.rs",
        "/// Follow symbolic links while walking.\npub fn follow_links(yes: bool) -> bool {\n"
        "    yes\n}\n",
    )
    commit_all(repo)
    task = (
        "Error on symlink loop with follow_links\n\nWith `follow_links(true)` walking my home "
        "directory fails with\n\n    File system loop found: /home/me/a/b points to an "
        "ancestor /home/me/a\n\nHow can I detect this error and keep walking instead of stopping?"
    )
    assert read_task(task).printed == ("File system loop found: points to an ancestor",)
    hits = search_code(load_code_index(repo), task, files=5)
    assert any(h.path == "src/error.rs" and h.why["pointed"] > 0 for h in hits)
