"""A doc's frontmatter values are searchable (the BM25F field `meta`, docs/decisions.md §19)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import commit_all, git, ncx, write

from ncx.query import cache
from ncx.query.docmeta import meta_text
from ncx.query.lexical import terms

NOTE = """---
id: DOC-WOMBAT-731
author: Ada Lovelace
date: 2023-05-08
tags: [engines, punchcards]
layout: zebrapage
draft: true
weight: 10
build:
  engine: quagga
abstract: {long}
---
# Analytical notes

The machine weaves algebraic patterns the way a loom weaves flowers and leaves.
""".format(long="okapi " * 80)

OTHER = """# Garden

Tomatoes want sun, water in the morning and a stake once the first fruit sets.
"""


@pytest.fixture
def tree(repo: Path) -> Path:
    write(repo, "docs/note.md", NOTE)
    write(repo, "docs/garden.md", OTHER)
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    return repo


def top(query: str) -> str:
    out = ncx("retrieve", query, "--k", "1", "--json").stdout
    return str(json.loads(out.splitlines()[0])["source_path"])


def vocab(root: Path) -> dict[str, int]:
    return cache.load_index(root).lex.vocab


def test_meta_text_keeps_words_and_dates_and_leaves_out_the_rest() -> None:
    got = meta_text(
        {
            "id": "DOC-A-001",
            "author": "Ada",
            "date": dt.date(2023, 5, 8),
            "updated": "2023-10-13T10:00:00Z",
            "when": "1:56 pm on 8 May, 2023",
            "tags": ["x-ray", {"nested": "no"}, ["deeper"], 7, "ok"],
            "draft": True,
            "weight": 10,
            "source": "D1:3",
            "nested": {"a": "b"},
            "hide": ["navigation"],
            "long": "word " * 100,
            "empty": None,
        }
    )
    assert got.split("\n") == [
        "Ada",
        "2023-05-08 8 May 2023",
        "2023-10-13T10:00:00Z 13 October 2023",
        "1:56 pm on 8 May, 2023",
        "x-ray",
        "ok",
    ]


def test_meta_text_leaves_out_a_title_that_heads_the_trail() -> None:
    assert meta_text({"title": "Setup", "by": "Bo"}, heads={"Setup"}) == "Bo"
    assert meta_text({"title": "Setup", "by": "Bo"}, heads={"Install"}) == "Setup\nBo"


def test_may_is_the_month_beside_a_number_and_a_stopword_elsewhere() -> None:
    assert terms("on 8 May, 2023") == ["8", "may", "2023"]
    assert terms("May 23, 2023") == ["may", "23", "2023"]
    assert terms("May I ask? it may rain") == ["ask", "rain"]


def test_a_doc_is_found_by_its_frontmatter_values(tree: Path) -> None:
    # Neither word is in the doc's text, its heading or its path.
    assert top("Lovelace") == "docs/note.md"
    assert top("punchcards") == "docs/note.md"
    # An ISO date is found by the way people write it, and as it is.
    assert top("what happened on May 8, 2023") == "docs/note.md"
    assert top("notes of 8 May 2023") == "docs/note.md"
    assert top("2023-05-08") == "docs/note.md"


def test_what_frontmatter_says_about_rendering_or_identity_is_not_indexed(tree: Path) -> None:
    v = vocab(tree)
    assert terms("Lovelace")[0] in v and terms("punchcards")[0] in v
    for word in ("zebrapage", "quagga", "okapi"):  # layout, a nested mapping, a long value
        assert terms(word)[0] not in v, word
    idx = cache.load_index(tree)
    note = [i for i, u in enumerate(idx.units) if u.source_path == "docs/note.md"]
    for query in ("WOMBAT 731", "true", "10"):  # the DOC-ID, a boolean, a number alone
        assert not idx.lex.score(terms(query))[note].any(), query


def test_frontmatter_stays_out_of_chunk_files_and_the_cache_is_deterministic(
    tree: Path,
) -> None:
    chunk = (tree / ".neocortex/chunks/docs/note.md").read_text()
    assert "Lovelace" not in chunk and "punchcards" not in chunk
    first = cache.load_index(tree, rebuild=True)
    again = cache.load_index(tree, rebuild=True)
    assert first.lex.vocab == again.lex.vocab
    assert np.array_equal(first.lex.data, again.lex.data)
    assert np.array_equal(first.lex.indices, again.lex.indices)


def test_a_frontmatter_edit_reaches_the_index_without_touching_chunk_files(tree: Path) -> None:
    assert top("Lovelace") == "docs/note.md"  # the cache exists now
    chunk = (tree / ".neocortex/chunks/docs/note.md").read_bytes()
    write(tree, "docs/note.md", NOTE.replace("Ada Lovelace", "Grace Hopper"))
    ncx("sync")
    assert (tree / ".neocortex/chunks/docs/note.md").read_bytes() == chunk
    assert top("Hopper") == "docs/note.md"
    v = vocab(tree)
    assert terms("Hopper")[0] in v and terms("Lovelace")[0] not in v
    commit_all(tree, "edit")
    assert git(tree, "status", "--porcelain") == ""


def test_a_sidecars_tags_and_summary_are_searchable(repo: Path) -> None:
    write(repo, "docs/guide.md", "# Guide\n\nCheck the valves weekly and log the pressure.\n")
    write(
        repo,
        "docs/guide.meta.yaml",
        "id: DOC-GUIDE-001\ntitle: Guide\nstatus: active\ntags:\n  - zeppelin\n"
        "summary: airship upkeep\n",
    )
    write(repo, "docs/garden.md", OTHER)
    commit_all(repo)
    ncx("init")
    ncx("sync")
    assert top("zeppelin") == "docs/guide.md"
    assert top("airship") == "docs/guide.md"


def test_a_dated_doc_is_quoted_with_its_date(tree: Path) -> None:
    # A note's date is what a "when" question needs, and its text rarely says it ("recently"):
    # the frontmatter date goes with every quote of the doc, as a session's date goes with
    # its heading. A doc with no date shows none.
    hit = json.loads(ncx("retrieve", "loom weaves flowers", "--k", "1", "--json").stdout)
    assert hit["source_path"] == "docs/note.md" and hit["dated"] == "2023-05-08"
    frame = ncx("assemble", "--task", "how does the machine weave algebraic patterns").stdout
    heads = [ln for ln in frame.splitlines() if ln.startswith("### ")]
    assert any("docs/note.md" in h and h.endswith(" — dated 2023-05-08") for h in heads), heads
    task = "how does the machine weave algebraic patterns"
    items = [
        it
        for z in json.loads(ncx("assemble", "--task", task, "--format", "json").stdout)["zones"]
        for it in z["items"]
    ]
    assert {it.get("dated") for it in items if it["source_path"] == "docs/note.md"} == {
        "2023-05-08"
    }
    other = json.loads(ncx("retrieve", "tomatoes sun stake", "--k", "1", "--json").stdout)
    assert other["source_path"] == "docs/garden.md" and "dated" not in other
    # a free-form date is shown as written; an edit of it reaches frames without a sync
    write(tree, "docs/note.md", NOTE.replace("2023-05-08", "1:56 pm on 8 May, 2023"))
    frame = ncx("assemble", "--task", "how does the machine weave algebraic patterns").stdout
    assert "— dated 1:56 pm on 8 May, 2023" in frame


def test_doc_date_reads_the_first_date_key() -> None:
    from ncx.query.docmeta import doc_date

    assert doc_date({"title": "x", "date": dt.date(2023, 5, 8)}) == "2023-05-08"
    assert doc_date({"lastmod": "2024-01-02", "date": "2020-01-01"}) == "2020-01-01"
    assert doc_date({"updated": " 3 June 2021 "}) == "3 June 2021"
    assert doc_date({"Date": "2021-06-03", "date": "2020-01-01"}) == "2021-06-03"
    for meta in ({"date": True}, {"date": 20230508}, {"date": ""}, {"date": "x" * 200}, {}):
        assert doc_date(meta) is None, meta
