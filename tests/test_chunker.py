"""chunker and docs: pure functions, tested by table."""

from __future__ import annotations

import re

import pytest
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st

from ncx.errors import BadFrontmatter, BadSource
from ncx.store import dump_frontmatter, parse_frontmatter
from ncx.tokens import count_tokens
from ncx.tree.chunker import ChunkSettings, chunk_markdown
from ncx.tree.chunkfile import chunk_blocks, load_doc

PARA = " ".join(
    ["This paragraph explains the configuration of the token refresh flow in detail."] * 4
)


def words(text: str) -> list[str]:
    return re.findall(r"\S+", text)


def covered(body: str, chunks: list) -> bool:
    """Every non-blank line of the body appears in some chunk (nothing dropped)."""
    joined = "\n".join(c.text for c in chunks)
    return all(line.strip() in joined for line in body.splitlines() if line.strip())


@pytest.mark.parametrize(
    ("body", "trails"),
    [
        (f"# A\n\n{PARA}\n\n## B\n\n{PARA}\n", [("A",), ("A", "B")]),
        (f"A\n===\n\n{PARA}\n\nB\n---\n\n{PARA}\n", [("A",), ("A", "B")]),
        (f"# A\n\n{PARA}\n\n```sh\n# not a heading\nrun it\n```\n\n{PARA}\n", [("A",)]),
        (f"# A\n\n{PARA}\n\n~~~\n## also not\n~~~\n\n## C\n\n{PARA}\n", [("A",), ("A", "C")]),
        (
            f"# A\n\n{PARA}\n\n### Deep\n\n{PARA}\n\n## Side\n\n{PARA}\n",
            [("A",), ("A", "Deep"), ("A", "Side")],
        ),
        (f"    # indented code, not a heading\n\n{PARA}\n", [()]),
        (f"{PARA}\n\n---\n\n{PARA}\n", [()]),  # a thematic break after a blank line is no heading
    ],
)
def test_headings_and_trails(body: str, trails: list[tuple[str, ...]]) -> None:
    chunks = chunk_markdown(body)
    assert [c.trail for c in chunks] == trails
    assert covered(body, chunks)


def test_short_sections_are_merged_never_dropped() -> None:
    body = "# Tool\n\nA tool.\n\n## Install\n\npip install tool\n\n## Use\n\ntool run\n\n## License\n\nMIT\n"
    chunks = chunk_markdown(body)
    assert len(chunks) == 1
    assert covered(body, chunks)
    assert chunks[0].start_line == 1 and chunks[0].end_line == 15


def test_readme_of_many_short_sections_covers_all_text() -> None:
    body = "\n".join(f"## Section {i}\n\nShort text number {i} here.\n" for i in range(40))
    chunks = chunk_markdown(
        body, settings=ChunkSettings(max_tokens=100, min_tokens=50, overlap_tokens=10)
    )
    assert covered(body, chunks)
    assert all(c.tokens <= 100 for c in chunks)
    assert sum(c.tokens >= 50 for c in chunks) >= len(chunks) - 1


def test_long_paragraph_splits_at_sentences_with_overlap() -> None:
    sentences = [f"Sentence {i} talks about retries and timeouts." for i in range(150)]
    body = "# Long\n\n" + " ".join(sentences) + "\n"
    s = ChunkSettings(max_tokens=120, min_tokens=20, overlap_tokens=30)
    chunks = chunk_markdown(body, settings=s)
    assert len(chunks) > 3
    for c in chunks:
        assert c.tokens <= s.max_tokens + 15
        assert c.text.endswith(".")  # windows end at sentence boundaries
    # consecutive windows overlap by at least one sentence, and no sentence is lost
    assert any(a.text.split(". ")[-1] in b.text for a, b in zip(chunks, chunks[1:]))
    assert all(any(s in c.text for c in chunks) for s in sentences)
    names = [c.name for c in chunks]
    assert names[0] == "long" and names[1] == "long~2" and len(set(names)) == len(names)


def test_code_block_is_never_split() -> None:
    code = "```python\n" + "\n".join(f"x{i} = compute({i})  # step" for i in range(60)) + "\n```"
    body = f"# Code\n\n{PARA}\n\n{code}\n\n{PARA}\n"
    chunks = chunk_markdown(
        body, settings=ChunkSettings(max_tokens=300, min_tokens=20, overlap_tokens=20)
    )
    holders = [c for c in chunks if "x0 = compute(0)" in c.text]
    assert len(holders) == 1 and code in holders[0].text
    for c in chunks:
        assert c.text.count("```") % 2 == 0


def test_lists_split_at_items_not_mid_line() -> None:
    items = "\n".join(f"- item {i} describes a setting of the server" for i in range(200))
    chunks = chunk_markdown(f"# List\n\n{items}\n", settings=ChunkSettings(200, 20, 20))
    assert len(chunks) > 2
    for c in chunks:
        for line in c.text.splitlines():
            assert line.startswith(("- item", "# List")) or not line.strip()


def test_line_ranges_point_at_the_text() -> None:
    body = f"intro line\n\n# A\n\n{PARA}\n\n## B\n\n{PARA}\n"
    lines = body.splitlines()
    for c in chunk_markdown(body, first_line=5):
        first = c.text.splitlines()[0]
        assert lines[c.start_line - 5] == first
        assert lines[c.end_line - 5] == c.text.splitlines()[-1]


def test_duplicate_headings_get_distinct_names() -> None:
    body = f"# A\n\n## Example\n\n{PARA}\n\n## Example\n\n{PARA}\n"
    names = [c.name for c in chunk_markdown(body)]
    assert len(names) == len(set(names))


def test_empty_and_blank_docs_yield_nothing() -> None:
    assert chunk_markdown("") == []
    assert chunk_markdown("\n\n   \n") == []


def test_unicode_headings_slug_safely() -> None:
    body = f"# Übersicht 🚀\n\n{PARA}\n\n## 設定\n\n{PARA}\n"
    names = [c.name for c in chunk_markdown(body)]
    assert names[0] == "ubersicht"
    assert all(re.fullmatch(r"[a-z0-9_~-]+", n) for n in names)


def test_doc_frontmatter_is_honoured() -> None:
    text = f"---\nid: DOC-AUTH-001\ndomain: AUTH\ntitle: 'Auth: \"tokens\"'\n---\n\n{PARA}\n\n## Refresh\n\n{PARA}\n"
    doc = load_doc("docs/auth.md", text.encode())
    assert (doc.doc_id, doc.domain, doc.title, doc.first_line) == (
        "DOC-AUTH-001",
        "AUTH",
        'Auth: "tokens"',
        6,
    )
    files = chunk_blocks(doc, ChunkSettings())
    assert [f.id for f in files] == [
        "docs/auth.md#auth-tokens",
        "docs/auth.md#auth-tokens--refresh",
    ]
    meta, body, _ = parse_frontmatter(files[0].data.decode(), path="x")
    assert meta["source_doc"] == "DOC-AUTH-001" and meta["domain"] == "AUTH"
    assert meta["source_section"] == ['Auth: "tokens"']  # quotes and colons round-trip
    assert meta["tokens"] == count_tokens(body.strip())


def test_doc_id_found_in_text_and_domain_from_id() -> None:
    doc = load_doc("x.md", b"# Title\n\n**ID:** DOC-API-042\n\nText.\n")
    assert doc.doc_id == "DOC-API-042" and doc.domain == "API"


@pytest.mark.parametrize(
    ("data", "error", "needle"),
    [
        (b"---\ntitle: [unclosed\n---\nbody\n", BadFrontmatter, "line"),
        (b"---\n- a\n- b\n---\nbody\n", BadFrontmatter, "mapping"),
        (b"caf\xe9 au lait\n", BadSource, "UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", BadSource, "binary"),
    ],
)
def test_bad_docs_raise_with_path_and_hint(data: bytes, error: type, needle: str) -> None:
    with pytest.raises(error) as info:
        load_doc("docs/bad.md", data)
    assert info.value.path == "docs/bad.md" and needle in str(info.value) and info.value.hint


def test_bom_and_crlf_are_read() -> None:
    doc = load_doc(
        "w.md", "\ufeff---\r\nid: DOC-W-001\r\n---\r\n# T\r\n\r\nText here.\r\n".encode()
    )
    assert doc.doc_id == "DOC-W-001" and "\r" not in doc.body


def test_yaml_dump_round_trips_awkward_titles() -> None:
    meta = {"title": "a: b \"c\" 'd' #e", "list": ["x: y", "- z"], "n": None}
    out = dump_frontmatter(meta, "body")
    assert parse_frontmatter(out, path="x")[0] == meta
    assert dump_frontmatter(meta, "body") == out


def test_token_count_is_deterministic_and_sane() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert 8 <= count_tokens("def compute_refresh_token(user_id: int) -> str:") <= 20
    assert count_tokens("設定") == 2


def _tokens_by_rule(text: str) -> int:
    """The estimate as documented, kind by kind (the chunk files' `tokens` depend on it)."""
    words = re.findall(r"[A-Za-z]+", text)
    digits = re.findall(r"\d+", text)
    return (
        sum(1 + (len(w) - 1) // 6 for w in words)
        + sum((len(d) + 2) // 3 for d in digits)
        + len(re.findall(r"[^\sA-Za-z0-9]", text))
    )


@given(
    st.text(
        alphabet=st.sampled_from(
            [*"abcdefXYZ 0123456789\n\t\r\x0b\x1c.-_(){}~é中😀٣۵\u00a0\u2003\ud800"]
        )
    )
)
def test_token_count_follows_its_rule(text: str) -> None:
    assert count_tokens(text) == _tokens_by_rule(text)
    assert count_tokens(text * 3 + "abcdefghijklm 1234567") == _tokens_by_rule(
        text * 3 + "abcdefghijklm 1234567"
    )


_MD_PIECES = st.sampled_from(
    [
        "# Title\n",
        "## Sub section\n",
        "Setext\n======\n",
        "\n",
        "\n\n",
        "```py\n",
        "```\n",
        "- item one\n",
        "1. first\n",
        "Plain words here. ",
        "Another sentence! ",
        "Why? ",
        "extraordinarily_long_identifier ",
        "v1.2.3 ",
        "1234567 ",
        "設定と構成 ",
        "naïve café ",
        "`code span` ",
        "(parenthesised) ",
        "e.g. this ",
        PARA + "\n",
    ]
)


@given(st.lists(_MD_PIECES, max_size=80), st.sampled_from([(500, 50, 50), (40, 10, 8), (25, 5, 5)]))
@settings(max_examples=150, deadline=None)
def test_chunk_token_counts_equal_a_fresh_count(
    pieces: list[str], sizes: tuple[int, int, int]
) -> None:
    # The chunker adds up counts of sections and pieces instead of rescanning each chunk;
    # that is only right if every split falls on whitespace. Small sizes force windows.
    max_t, min_t, overlap = sizes
    cfg = ChunkSettings(max_tokens=max_t, min_tokens=min_t, overlap_tokens=overlap)
    for chunk in chunk_markdown("".join(pieces), settings=cfg):
        assert chunk.tokens == count_tokens(chunk.text)


SHARED_RFCS = SHARED / "bench-data/repo-rust-lang-rfcs/corpus"


@pytest.mark.skipif(not SHARED_RFCS.is_dir(), reason="../shared bench data absent")
def test_chunk_token_counts_on_real_docs() -> None:
    docs = sorted(SHARED_RFCS.rglob("*.md"))[:120]
    for cfg in (ChunkSettings(), ChunkSettings(max_tokens=120, min_tokens=20, overlap_tokens=10)):
        for path in docs:
            for chunk in chunk_markdown(path.read_text(encoding="utf-8"), settings=cfg):
                assert chunk.tokens == count_tokens(chunk.text), (path, chunk.name)


def test_keywords_order_by_count_then_word() -> None:
    from ncx.tree.chunkfile import keywords

    text = "zeta beta beta alpha gamma gamma delta epsilon omega kappa"
    # heading words count double; ties fall to alphabetical order
    assert keywords(text, ("Omega",)) == ["omega", "beta", "gamma", "alpha", "delta", "epsilon"]
    # a non-ASCII letter that lowers to ASCII (the Kelvin sign) does not make a word
    assert keywords("\u212aey keys keys") == ["keys"]
