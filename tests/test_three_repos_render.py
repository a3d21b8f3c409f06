"""Frames of real docs read as their sites do (issue 28, the three-repository study in
benchmarks/three_repos.py): reST roles as the reader sees them, admonition labels never quoted
without their text. Each test goes through `ncx sync` and `ncx assemble` in a temp git repo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import _WORDS, commit_all, first_sync, ncx, write


def _items(*args: str) -> list[dict[str, Any]]:
    frame = json.loads(ncx("assemble", *args, "--format", "json").stdout)
    return [it for z in frame["zones"] for it in z["items"]]


def _last_line(text: str) -> str:
    return next((ln.strip() for ln in reversed(text.split("\n")) if ln.strip()), "")


def _long_section(answer: str, after: str, n: int = 30) -> str:
    """n lines of preamble, the answer, then what follows it."""
    pre = "".join(f"Line {w} says nothing of interest here about {w}.\n" for w in _WORDS[:n])
    return pre + answer + "\n" + after


def _strong(repo: Path) -> None:
    write(
        repo,
        "docs/best.md",
        "# Replica\n\n## Purge the replica cache\n\nPurge the replica cache with "
        "`replica purge --cache`: the replica cache is purged on every replica.\n",
    )


# flask: "For a gentle introduction ... refer to the :ref:`app-factories` pattern" read as
# "app factories", the label's words; the site shows the title the label stands before.
def test_a_bare_ref_reads_as_the_title_it_points_at_in_the_same_file(repo: Path) -> None:
    write(
        repo,
        "docs/replica.rst",
        "Replicas\n========\n\nTo purge the replica cache, follow :ref:`purge-steps-x1`.\n\n"
        ".. _purge-steps-x1:\n\nClearing Stale Entries\n----------------------\n\n"
        "Run the purge command on the primary.\n",
    )
    first_sync(repo)
    texts = [it["text"] for it in _items("--task", "purge the replica cache")]
    assert any("follow Clearing Stale Entries." in t for t in texts), texts
    assert not any("purge steps x1" in t for t in texts), texts


# flask: 17 of its 22 bare `:ref:` roles name a label of another file ("see
# :ref:`deploying-index`"); the site shows that section's title. So does the frame, from
# the labels of the tree (reST `.. _label:` and MyST `(label)=`), read where chunks are read.
def test_a_bare_ref_to_another_file_reads_as_its_title(repo: Path) -> None:
    write(
        repo,
        "docs/replica.rst",
        "Replicas\n========\n\nTo purge the replica cache, follow :ref:`Purge-Steps-X1`, "
        "then :ref:`myst-check-x2`; never :ref:`nowhere-label-x3`.\n",
    )
    write(
        repo,
        "docs/guide/purge.rst",
        "Guide\n=====\n\n.. _purge-steps-x1:\n\n``Clearing`` Stale Entries\n"
        "--------------------------\n\nRun the purge command on the primary.\n",
    )
    write(
        repo,
        "docs/guide/check.md",
        "# Checks\n\n(myst-check-x2)=\n## Verifying the {code}`purge`\n\nCheck it.\n",
    )
    first_sync(repo)
    line = (
        "To purge the replica cache, follow ``Clearing`` Stale Entries, then Verifying the "
        "`purge`; never nowhere label x3."
    )
    texts = [" ".join(it["text"].split()) for it in _items("--task", "purge the replica cache")]
    assert any(line in t for t in texts), texts
    hits = ncx("retrieve", "purge the replica cache", "--json", "--kind", "chunk").stdout
    assert "follow ``Clearing`` Stale Entries" in hits and "](:" not in hits


def test_a_reference_target_is_neither_indexed_nor_embedded(repo: Path) -> None:
    # `[words](:target)` keeps the target for the query side only: its words (the folder
    # `okapiland`, the label's words a second time) would weigh in ranking.
    from ncx.query import cache
    from ncx.query.lexical import terms
    from ncx.tree.chunkfile import embed_text_for

    write(
        repo,
        "docs/replica.rst",
        "Replicas\n========\n\nSee :doc:`/okapiland/admin` and :ref:`zebra-steps`.\n",
    )
    write(repo, "docs/guide.rst", "Guide\n=====\n\n.. _zebra-steps:\n\nSteps\n-----\n\nRun.\n")
    first_sync(repo)
    vocab = cache.load_index(repo).lex.vocab
    assert terms("okapiland")[0] not in vocab and terms("zebra")[0] in vocab
    assert embed_text_for((), "See [admin](:/okapiland/admin).") == "See admin."
    texts = " ".join(it["text"] for it in _items("--task", "replicas admin zebra steps"))
    assert "See admin and Steps." in " ".join(texts.split()), texts


# sqlmodel: a background quote ended on "**note**", its text left out of the frame. A quoted
# passage stops where its token allowance does: it must not stop on a label.
def test_a_quoted_passage_never_ends_on_a_pymdownx_block_title(repo: Path) -> None:
    body = " ".join(f"{w} unrelated words here" for w in _WORDS[40:70])
    write(
        repo,
        "docs/long.md",
        "# Guide\n\n## Everything\n\n"
        + _long_section(
            "To purge the replica cache, run `replica purge --cache` on the primary.\n",
            f"/// note\n\n{body}\n\n///\n",
        ),
    )
    _strong(repo)
    first_sync(repo)
    long = [it for it in _items("--task", "purge the replica cache") if "long" in it["id"]]
    assert long and "replica purge --cache" in long[0]["text"], long
    assert _last_line(long[0]["text"]) not in ("**note**", "///"), long[0]["text"]


# The same cut in reST: the label on a line of its own, its text on the next; now the label
# opens its text ("**Warning:** ..."), as Sphinx's text output has it.
def test_a_rest_admonition_label_opens_its_text(repo: Path) -> None:
    body = " ".join(f"{w} unrelated words here" for w in _WORDS[40:70])
    pre = _long_section(
        "To purge the replica cache, run ``replica purge --cache`` on the primary.\n",
        f".. warning::\n\n   {body}\n\n.. note::\n\n   Short note text.\n",
    )
    write(repo, "docs/long.rst", "Guide\n=====\n\nEverything\n----------\n\n" + pre)
    _strong(repo)
    first_sync(repo)
    items = _items("--task", "purge the replica cache")
    long = [it for it in items if it["source_path"] == "docs/long.rst"]
    assert long and "replica purge --cache" in long[0]["text"], long
    assert _last_line(long[0]["text"]) != "**Warning:**", long[0]["text"]
    # the whole section, quoted where it is short enough, keeps label and text on one line
    whole = ncx("retrieve", "short note text", "--json", "--kind", "chunk").stdout
    assert "**Note:** Short note text." in whole


# flask: "refer to the :doc:`/blueprints` chapter" read "refer to the blueprints chapter"; the
# site shows the title of the doc it names. A reader of one file cannot know it: the query
# side reads it from the target's chunk file; a target that names no doc keeps its words.
def test_a_bare_doc_reference_reads_as_the_title_of_the_doc_it_names(repo: Path) -> None:
    write(
        repo,
        "docs/replica.rst",
        "Replicas\n========\n\nTo purge the replica cache, see the :doc:`/guide/cache-admin` "
        "chapter, the :doc:`steps <guide/cache-admin>` and :doc:`/nowhere/purge-notes`.\n",
    )
    write(
        repo,
        "docs/guide/cache-admin.rst",
        "Administering the Cache Layer\n=============================\n\nRun the tool.\n",
    )
    first_sync(repo)
    line = (
        "To purge the replica cache, see the Administering the Cache Layer chapter, "
        "the steps and purge notes."
    )
    texts = [it["text"] for it in _items("--task", "purge the replica cache")]
    assert any(line in " ".join(t.split()) for t in texts), texts
    hits = ncx("retrieve", "purge the replica cache", "--json", "--kind", "chunk").stdout
    assert "Administering the Cache Layer chapter" in hits and "](:" not in hits


# flask and jotai: a quoted passage that stopped on a code block's opening fence (or started
# on its closing one) quoted an empty code block, "```\n```": tokens for nothing.
def test_a_quoted_passage_never_holds_an_empty_code_block(repo: Path) -> None:
    code = "replica.configure(" + ", ".join(f"{w}=True" for w in _WORDS[40:65]) + ")"
    write(
        repo,
        "docs/long.md",
        "# Guide\n\n## Everything\n\n"
        + _long_section(
            "To purge the replica cache, run `replica purge --cache` on the primary:\n",
            f"\n```python\n{code}\n```\n",
            n=15,
        ),
    )
    _strong(repo)
    first_sync(repo)
    long = [it for it in _items("--task", "purge the replica cache") if "long" in it["id"]]
    assert long and "replica purge --cache" in long[0]["text"], long
    lines = [ln.strip() for ln in long[0]["text"].split("\n") if ln.strip()]
    empty = [
        k for k in range(len(lines) - 1) if lines[k].startswith("```") and lines[k + 1] == "```"
    ]
    assert not empty, long[0]["text"]


# The same in MyST markdown: `{ref}`label`` to a `(label)=` of the file reads as its heading,
# `{doc}`path`` as the title of the doc it names.
def test_myst_bare_ref_and_doc_read_as_titles(repo: Path) -> None:
    write(
        repo,
        "docs/replica.md",
        "# Replicas\n\nTo purge the replica cache, follow {ref}`purge-steps-x1` and read "
        "{doc}`guide/cache-admin`.\n\n(purge-steps-x1)=\n## Clearing Stale Entries\n\n"
        "Run the purge command on the primary.\n",
    )
    write(repo, "docs/guide/cache-admin.md", "# Administering the Cache Layer\n\nRun the tool.\n")
    first_sync(repo)
    texts = " ".join(it["text"] for it in _items("--task", "purge the replica cache"))
    assert "follow Clearing Stale Entries and read Administering the Cache Layer." in texts, texts


# flask's installation page: "**Windows**" over its commands; a quote that stops after the
# label quotes a label for nothing (as the pymdownx title above, once readers render it bold).
def test_a_quoted_passage_never_ends_on_a_bold_label(repo: Path) -> None:
    body = " ".join(f"{w} unrelated words here" for w in _WORDS[40:70])
    write(
        repo,
        "docs/long.md",
        "# Guide\n\n## Everything\n\n"
        + _long_section(
            "To purge the replica cache, run `replica purge --cache` on the primary.\n",
            f"**Windows**\n\n{body}\n",
        ),
    )
    _strong(repo)
    first_sync(repo)
    long = [it for it in _items("--task", "purge the replica cache") if "long" in it["id"]]
    assert long and "replica purge --cache" in long[0]["text"], long
    assert _last_line(long[0]["text"]) != "**Windows**", long[0]["text"]


# jotai: a background passage ended on "###### `waitForAll` util", a heading whose text the
# passage left out. A quote never ends on a heading, as it never ends on a bold label.
def test_a_quoted_passage_never_ends_on_a_heading(repo: Path) -> None:
    body = " ".join(f"{w} unrelated words here" for w in _WORDS[40:70])
    write(
        repo,
        "docs/long.md",
        "# Guide\n\n## Everything\n\n"
        + _long_section(
            "To purge the replica cache, run `replica purge --cache` on the primary.\n",
            f"###### `waitFor` util\n\n{body}\n",
        ),
    )
    _strong(repo)
    first_sync(repo)
    long = [it for it in _items("--task", "purge the replica cache") if "long" in it["id"]]
    assert long and "replica purge --cache" in long[0]["text"], long
    assert not _last_line(long[0]["text"]).startswith("#"), long[0]["text"]


# flask: "`PyPI\n<https://pypi.org/project/Flask-SQLAlchemy/>`_." left the URL and the
# backticks in the frame; a role or link broken over lines reads as one on one line does.
def test_a_rest_link_or_role_broken_over_lines_reads_as_text(repo: Path) -> None:
    write(
        repo,
        "docs/replica.rst",
        "Replicas\n========\n\nTo purge the replica cache, download the tool from `PyPI\n"
        "<https://pypi.org/project/replica-tool/>`_ and read :ref:`the purge\n"
        "steps <purge-steps-x1>` first.\n",
    )
    first_sync(repo)
    texts = " ".join(it["text"] for it in _items("--task", "purge the replica cache"))
    assert "https://pypi.org" not in texts and "`" not in texts, texts
    assert "from PyPI" in texts and "read the purge\nsteps first." in texts, texts


# sqlmodel: `<div class="termy">` / `</div>` around console blocks and `<img ...>` screenshots
# were quoted as lines of their own: markup for a web page, nothing an agent reads.
def test_markdown_lines_of_html_tags_only_are_not_quoted(repo: Path) -> None:
    write(
        repo,
        "docs/replica.md",
        "# Replicas\n\n## Purge the replica cache\n\nPurge the replica cache from a shell:\n\n"
        '<div class="termy">\n\n```console\n$ replica purge --cache\n<div>as printed</div>\n'
        '```\n\n</div>\n\n<img class="shadow" src="/img/purge.png">\n\n'
        "The replica cache is empty afterwards, <b>on every replica</b>.\n",
    )
    first_sync(repo)
    items = _items("--task", "purge the replica cache")
    text = next(it["text"] for it in items if it["source_path"] == "docs/replica.md")
    assert "termy" not in text and "<img" not in text, text
    assert "<div>as printed</div>" in text and "<b>on every replica</b>" in text, text
    assert text.count("\n\n\n") == 0, text


# The title is read from the target's chunk file: a link in its place is not followed (it
# may point anywhere); the reference keeps its words.
def test_a_doc_reference_never_follows_a_link(repo: Path) -> None:
    write(
        repo,
        "docs/replica.rst",
        "Replicas\n========\n\nTo purge the replica cache, see :doc:`secret-notes`.\n",
    )
    write(repo, "docs/secret-notes.rst", "Secret Notes\n============\n\nText.\n")
    first_sync(repo)
    ncx("retrieve", "purge the replica cache")  # the cache, built before the link
    target = repo / ".neocortex" / "chunks" / "docs" / "secret-notes.rst.md"
    outside = repo.parent / "outside.md"
    outside.write_text("---\nid: x\nsource_section:\n- Leaked Title\n---\n\nx\n")
    target.unlink()
    target.symlink_to(outside)
    r = ncx("retrieve", "purge the replica cache", "--json", "--kind", "chunk")
    assert "Leaked" not in r.stdout + r.stderr, r.stdout


# Reading a file's labels is one pass: a doc of 20,000 targets in a row took 47 s (each
# target looked ahead over the rest of the run), now well under a second.
def test_a_long_run_of_label_targets_is_read_in_linear_time(repo: Path) -> None:
    import time

    targets = "".join(f".. _label-{i}:\n" for i in range(20_000))
    write(
        repo,
        "docs/labels.rst",
        f"Top\n===\n\nSee :ref:`label-7`.\n\n{targets}\nClearing Stale Entries\n"
        "----------------------\n\nRun the purge.\n",
    )
    commit_all(repo)
    ncx("init")
    start = time.perf_counter()
    ncx("sync")
    assert time.perf_counter() - start < 15
    hits = ncx("retrieve", "see clearing stale entries", "--json", "--kind", "chunk").stdout
    assert "See Clearing Stale Entries." in hits
