"""Ranking behaviour that the suite measures: several chunks per document, the section
named by a heading, the query's words side by side, weak evidence, and frames that quote
chunks without their markup."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import commit_all, ncx, write

from ncx.query.assembler import FrameInput, Item, assemble
from ncx.query.cache import Index, Unit
from ncx.query.lexical import build_index, terms
from ncx.query.quote import is_link_list, lead, tidy
from ncx.query.rank import _overlaps, _proximity
from ncx.tokens import count_tokens

SECTIONS = {
    "Installing": "Download the installer, check its signature and put the binary on your PATH.",
    "Using a PyTorch index": "Point the resolver at an extra wheel source for GPU builds.",
    "Caching": "Downloaded archives are kept in a shared folder and reused across projects.",
    "Workspaces": "Several packages in one repository share a lockfile and a virtual env.",
    "Publishing": "Build a source archive and wheels, then upload them with a token.",
    "Scripts": "Inline metadata at the top of a script declares what it needs to run.",
}


def _guide() -> str:
    parts = ["# Guide\n\nA guide to the package manager and its many features.\n"]
    for name, sentence in SECTIONS.items():
        body = f"This section covers {name.lower()}. " + (sentence + " ") * 12
        if name != "Using a PyTorch index":
            body += (
                "The torch index and the pytorch wheel index come up here too, for torch users. "
            )
        parts.append(f"## {name}\n\n{body}\n")
    return "\n".join(parts)


@pytest.fixture
def tree(repo: Path) -> Path:
    write(repo, "docs/guide.md", _guide())
    write(repo, "docs/other.md", "# Other\n\n## Unrelated\n\nNothing about packages at all here.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    return repo


def results(*args: str) -> list[dict]:
    out = ncx("retrieve", *args, "--json").stdout
    return [json.loads(line) for line in out.splitlines()]


def test_one_document_gives_as_many_results_as_asked(tree: Path) -> None:
    res = results("section covers", "--path", "docs/guide.md", "--k", "5")
    assert len(res) == 5
    assert len({(r["start_line"], r["end_line"]) for r in res}) == 5


def test_the_section_named_by_its_heading_comes_first(tree: Path) -> None:
    # every other section says "torch index" more often; the heading names this one
    top = results("Using a PyTorch index", "--k", "3")[0]
    assert top["section"].endswith("Using a PyTorch index")


def test_weak_evidence_is_flagged(tree: Path) -> None:
    good = results("Using a PyTorch index", "--k", "1")[0]
    assert good["weak"] is False and good["confidence"] > 0.9
    bad = results("kubernetes operator reconcile loop", "--k", "1")
    assert bad == [] or bad[0]["weak"] is True
    human = ncx("retrieve", "guide kubernetes operator reconcile loop")
    assert "weak evidence" in human.stderr


def test_overlapping_windows_are_different_results() -> None:
    assert not _overlaps((1, 17), (17, 22))  # windows sharing one line
    assert _overlaps((1, 17), (3, 15))  # one inside the other
    assert _overlaps((10, 20), (12, 30))


def test_tidy_drops_markup_and_demotes_headings() -> None:
    text = "\n".join(
        [
            "(my-label)=",
            "# Title",
            "<!-- template: fill me in",
            "and more -->",
            "Body text.",
            ":::{note}",
            "A note.",
            ":::",
            "```{toctree}",
            ":maxdepth: 1",
            "page-a",
            "```",
            "```bash",
            "# a shell comment, not a heading",
            "```",
            "### Deep",
            "Deep text.",
        ]
    )
    out = tidy(text)
    assert "my-label" not in out and "template" not in out and "toctree" not in out
    assert "page-a" not in out and ":::" not in out
    assert "**note**\nA note." in out
    assert "#### Title" in out.splitlines() and "###### Deep" in out.splitlines()
    assert "# a shell comment, not a heading" in out.splitlines()
    # the citation line names the section: its heading is not repeated under it
    assert tidy("## Setup\n\nRun it.", ("Guide", "Setup")) == "Run it."
    # a quote never ends on a heading cut from its text (jotai: "###### `waitForAll` util")
    assert tidy("Run it.\n\n#### `waitForAll` util\n") == "Run it."
    assert tidy("```md\n# kept: code\n```") == "```md\n# kept: code\n```"


def test_table_of_contents_is_recognised() -> None:
    toc = "## Contents\n\n- [Install](#install)\n- [Use](#use)\n* [API](api.md)\n"
    assert is_link_list(toc)
    assert not is_link_list(
        "Install it with [pip](https://pip.pypa.io).\n\n- one\n- two\n- three\n"
    )
    refs = "## Links\n\n" + "".join(f"- [RFC {i}](https://a.org/{i})\n" for i in range(3))
    assert not is_link_list(refs)  # references out to the web are content, not navigation


def test_frame_says_when_evidence_is_weak() -> None:
    item = Item("c1", "chunk", "docs/a.md", 1, 3, ("A",), None, 1.0, "Some text about things.")
    weak = assemble(FrameInput(task="t", knowledge=(item,), weak=True), 2000).markdown
    strong = assemble(FrameInput(task="t", knowledge=(item,)), 2000).markdown
    assert "Weak evidence" in weak and "Weak evidence" not in strong


def test_frame_leaves_out_tables_of_contents(tree: Path) -> None:
    toc = "# Index\n\n## Contents\n\n" + "".join(
        f"- [{s}](guide.md#{s.lower()})\n" for s in SECTIONS
    )
    write(tree, "docs/index.md", toc)
    commit_all(tree)
    ncx("sync")
    frame = json.loads(ncx("assemble", "--task", "guide contents index", "--format", "json").stdout)
    paths = [it["source_path"] for z in frame["zones"] for it in z["items"]]
    assert paths and "docs/index.md" not in paths


def test_lead_is_the_opening_within_the_cap() -> None:
    text = "First paragraph, short.\n\nSecond paragraph " + "word " * 200
    assert lead(text, 30) == "First paragraph, short.\n[…]"
    long_first = "A very long opening " + "sentence " * 100
    cut = lead(long_first, 20)
    assert cut.endswith("[…]") and count_tokens(cut) <= 20
    assert lead("```\n" + "code = 1\n" * 50 + "```", 10) == ""  # code is never cut


def _index(texts: list[str]) -> Index:
    """An in-memory index over one-unit documents; the bodies are the texts themselves."""
    units = [Unit(id=f"d{i}", kind="chunk", file=f"d{i}.md") for i in range(len(texts))]
    lex = build_index([{"prose": t} for t in texts])
    index = Index(
        units=units,
        vectors=np.zeros((len(texts), 4), dtype=np.float32),
        lex=lex,
        group=np.arange(len(texts), dtype=np.int32),
        root=Path("/nonexistent"),
    )
    index.memo["bodies"] = dict(enumerate(texts))
    return index


def test_proximity_counts_query_pairs_side_by_side_in_either_order() -> None:
    index = _index(
        [
            "a placement group reserves resources",  # neighbours, as in the query
            "group placement, the other way round",  # neighbours, reversed
            "placement of tables; the group met later on in the evening",  # apart
            "resources reserved by a placement group",  # pair one apart in the query
            "nothing big here",
        ]
    )
    ids = np.arange(5, dtype=np.int64)
    got = _proximity(index, ids, terms("placement group"))
    assert got.tolist() == [1.0, 1.0, 0.0, 1.0, 0.0]
    # words one apart in the query are a pair too: "placement ... group" is found
    # though neither "placement big" nor "big group" is
    apart = _proximity(index, ids, terms("placement of the big group"))
    assert 0 < apart[0] < 1 and apart[0] == apart[3]
    assert apart[2] == 0.0


def test_proximity_does_not_read_units_without_both_words() -> None:
    index = _index(["placement group", "only the word placement", "only group"])
    del index.memo["bodies"][1], index.memo["bodies"][2]  # reading them would fail
    index.memo["bodies"] = _NoRead(index.memo["bodies"])
    got = _proximity(index, np.arange(3, dtype=np.int64), terms("placement group"))
    assert got.tolist() == [1.0, 0.0, 0.0]


class _NoRead(dict):  # type: ignore[type-arg]
    def __missing__(self, key: object) -> str:
        raise AssertionError(f"unit {key} was read")


def test_words_side_by_side_beat_the_same_words_apart(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    filler = "Nothing else of note was said that day by anyone at all. " * 3
    # apart: the shorter text, so BM25F alone puts it first
    write(
        repo, "docs/apart.md", f"# Notes\n\nThe group met at noon. {filler}Placement of chairs.\n"
    )
    write(
        repo,
        "docs/phrase.md",
        f"# Notes\n\nA placement group keeps its bundles together on one node. {filler}\n",
    )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    monkeypatch.setenv("NCX_W_DENSE", "0")  # the lexical ranking alone
    monkeypatch.setenv("NCX_W_PROXIMITY", "0")
    assert results("placement group", "--k", "2")[0]["source_path"] == "docs/apart.md"
    monkeypatch.delenv("NCX_W_PROXIMITY")
    assert results("placement group", "--k", "2")[0]["source_path"] == "docs/phrase.md"


def test_a_call_for_more_than_the_dense_pool_reaches_the_next_nearest() -> None:
    """A frame of a large budget asks for many results: units that share no word with the
    task but are next nearest by meaning come after the dense pool, in cosine order (a
    scope of 200 short notes fits a 15,000-token frame); a call for few is unchanged."""
    from ncx.query.rank import DENSE_POOL, retrieve

    n, dim = DENSE_POOL + 50, 64
    rng = np.random.default_rng(7)
    index = _index([f"filler note number {i}" for i in range(n)])
    near = np.linspace(0.9, 0.1, n)  # unit i's cosine to the query: falls with i
    side = rng.standard_normal((n, dim - 1))
    side /= np.linalg.norm(side, axis=1, keepdims=True)
    vectors = np.hstack([near[:, None], np.sqrt(1 - near**2)[:, None] * side])
    index = Index(index.units, vectors.astype(np.float32), index.lex, index.group, index.root)
    query = np.zeros(dim, dtype=np.float32)
    query[0] = 1.0
    few = [h.unit for h in retrieve(index, "zebra", query, k=10)]
    assert few == list(range(10))
    many = [h.unit for h in retrieve(index, "zebra", query, k=n)]
    assert many == list(range(n))  # past the pool too, nearest first


def _headed(sections: list[tuple[str, str]]) -> Index:
    """An in-memory index over one-section documents: (heading, body) each."""
    index = _index([body for _, body in sections])
    for unit, (heading, _) in zip(index.units, sections, strict=True):
        unit.section = ["Doc", heading]
    return index


def test_a_query_of_stopwords_only_finds_the_section_it_names() -> None:
    """BM25F has no term of "Why should we not do this?": its words meet the headings,
    the same words first, then those sharing most (there was nothing to rank before)."""
    from ncx.query.rank import retrieve

    index = _headed(
        [
            ("Alternatives", "A registry of tokens could be kept instead."),
            ("Why not?", "Publishing from CI needs a token today."),
            ("How do we teach this?", "A guide page and a blog post."),
            ("Why should we not do this?", "Setting up trust with the CI provider is complex."),
            ("Drawbacks", "Why should we do this at all, one could ask."),
        ]
    )
    hits = retrieve(index, "Why should we not do this?", None, k=5)
    assert [h.section[-1] for h in hits] == [
        "Why should we not do this?",
        "How do we teach this?",
        "Why not?",
    ]


def test_a_query_in_another_script_finds_the_section_it_names() -> None:
    from ncx.query.rank import retrieve

    index = _headed(
        [
            ("Обзор RFC", "Совет и его команды."),
            ("Модерация, разногласия и конфликты", "Как Совет решает споры."),
            ("Moderation", "How the council settles disputes."),
        ]
    )
    hits = retrieve(index, "Модерация, разногласия и конфликты", None, k=3)
    assert [h.section[-1] for h in hits] == ["Модерация, разногласия и конфликты"]


def test_heading_words_stay_out_of_a_query_bm25f_can_score() -> None:
    from ncx.query.rank import retrieve

    index = _headed(
        [
            ("Why should we not do this?", "Nothing else of note here."),
            ("Tokens", "A token is scoped to one crate."),
        ]
    )
    hits = retrieve(index, "Why should we not use a token?", None, k=5)
    assert [h.section[-1] for h in hits] == ["Tokens"]


def _documents(docs: list[list[str]]) -> Index:
    """An in-memory index over documents of several chunks: the texts of each, in order."""
    index = _index([text for doc in docs for text in doc])
    group = [g for g, doc in enumerate(docs) for _ in doc]
    for unit, g in zip(index.units, group, strict=True):
        unit.file = f"d{g}.md"
    grouped = Index(
        index.units, index.vectors, index.lex, np.array(group, dtype=np.int32), index.root
    )
    grouped.memo["bodies"] = index.memo["bodies"]
    return grouped


def test_a_third_matching_section_makes_the_better_page() -> None:
    """Two documents whose two best sections match the question alike: the one with a
    third matching section is the better page (§26); the first of the two won the tie."""
    from ncx.query.rank import retrieve

    words = "uploads retry policy timeout backoff attempts failed settings".split()
    filler = "one two three four five six seven eight nine ten".split()

    def text(n: int) -> str:  # the question's first n words, padded to one length
        return " ".join(words[:n] + filler[: 10 - n])

    index = _documents(
        [[text(7), text(4)], [text(7), text(4), text(3)], ["nothing of the kind here"]]
    )
    hits = retrieve(index, " ".join(words), None, k=3)
    assert index.group[hits[0].unit] == 1


def test_a_section_of_the_page_asked_about_comes_before_a_passing_mention() -> None:
    """The second section of the page a question is about carries some of its page's
    evidence: it comes before another page's best section that matches a little better
    on its own (§26). Before, it came after it."""
    from ncx.query.rank import retrieve

    index = _documents(
        [
            [
                "Rotate the signing key with the rotate command: it makes a new signing key "
                "and retires the old key.",
                "The signing key lives in the vault, next to the release scripts and the "
                "deploy notes of each team.",
                "Release notes are written by hand before each release.",
            ],
            ["A key for the cache is derived from the lockfile contents and the platform."],
            ["Signing commits with your own key is optional for contributors."],
            ["Logs rotate every night; old logs are compressed."],
        ]
    )
    hits = retrieve(index, "where is the signing key kept", None, k=4)
    assert [h.unit for h in hits[:3]] == [0, 1, 4]


_HEADINGS = [
    "Why should we not do this?",
    "WHY NOT",
    'The "quoted" why',
    "Back\\slash do",
    "Über uns, warum nicht",
    "\u212aelvin key",  # KELVIN SIGN: lowered, the ASCII "k"
    "Section of note",
]


@pytest.fixture
def headed_tree(repo: Path) -> Path:
    """Docs whose headings share query words in every way a cache row can hold them, and
    many that share none."""
    filler = "Servers start, stop and restart on request from the operator console. " * 4
    for i, head in enumerate(_HEADINGS):
        write(repo, f"docs/h{i}.md", f"# Doc {i}\n\n{filler}\n\n## {head}\n\n{filler}\n")
    for i in range(20):
        write(repo, f"docs/plain{i}.md", f"# Plain {i}\n\n{filler}\n\n## Topic {i}\n\n{filler}\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    return repo


def test_heading_words_decode_only_the_rows_that_may_match(headed_tree: Path) -> None:
    """The heading-word match of a query BM25F cannot score gives what it gave when every
    row was decoded, and decodes only the rows whose heading trail may hold its words."""
    from ncx.query.cache import Units, load_index
    from ncx.query.rank import _WORD, _heading_words, retrieve

    load_index(headed_tree)  # built; each load below reads its rows from the file
    matched = 0
    queries = ["why should we not do this?", "Why not", "über", "do", "key", "section", "of"]
    for query in [*queries, "quoted", "nothing matches", "?"]:
        index = load_index(headed_tree)
        units = index.units
        assert isinstance(units, Units) and all(
            units.unread(i) is not None for i in range(len(units))
        )
        got = _heading_words(index, query)
        decoded = [i for i in range(len(units)) if units.unread(i) is None]
        q = frozenset(_WORD.findall(query.lower()))
        want = np.zeros(len(units), dtype=np.float32)
        for u, unit in enumerate(load_index(headed_tree).units):  # every row, as before
            words = frozenset(_WORD.findall(unit.section[-1].lower())) if unit.section else set()
            if q & words:
                want[u] = len(q & words) / max(len(q), len(words))
        assert got.tolist() == want.tolist(), query
        assert len(decoded) < 20 <= len(units) - 20  # the 20 plain docs' rows stay text
        assert set(np.flatnonzero(want).tolist()) <= set(decoded)
        matched += int(np.count_nonzero(want))
    assert matched >= 12  # each kind of heading met some query
    hits = retrieve(load_index(headed_tree), "why not?", None, k=1)
    assert [h.section[-1] for h in hits] == ["WHY NOT"]
