"""The first query on a clone with no search cache: a quick answer, and the cache built
in the background (ncx.query.cache.quick_index, `ncx retrieve` / `ncx assemble`)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from conftest import commit_all, git, ncx, write

from ncx.config import load_config
from ncx.query import cache
from ncx.query.search import Searcher
from ncx.repo import grep_fixed, grep_hits

TOPICS = {
    "billing": "Invoices are issued monthly; a failed card payment retries three times.",
    "refunds": "A refund returns the payment to the original card within five days.",
    "search": "The catalogue search ranks products by text relevance and stock.",
    "shipping": "Parcels leave the warehouse daily; tracking numbers arrive by email.",
    "accounts": "An account is locked after five failed password attempts.",
}


@pytest.fixture
def cloned(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed, synced tree cloned fresh: no cache, as a teammate gets it."""
    for name, text in TOPICS.items():
        write(
            repo,
            f"docs/{name}.md",
            f"# {name.title()}\n\n{text}\n\n## Limits of {name}\n\nAt most ten {name} calls "
            "per minute per user; the retry_policy backs off exponentially.\n",
        )
    return _synced_clone(repo, tmp_path, monkeypatch)


def _synced_clone(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`repo`'s docs synced and committed, then cloned fresh and entered (no cache)."""
    ncx("init")
    commit_all(repo)
    ncx("sync")
    commit_all(repo, "chunks")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    monkeypatch.chdir(clone)
    monkeypatch.setattr(cache, "QUICK_FROM", 1)  # the test tree is small; the rule is not
    return clone


def test_first_query_is_quick_and_warms_the_cache(cloned: Path) -> None:
    assert not cache.has_cache(cloned)
    got = ncx(
        "assemble", "--task", "how are refund payments returned to the card", "--budget", "2000"
    )
    assert "Quick search" in got.stdout
    assert "docs/refunds.md" in got.stdout
    assert "building the cache in the background" in got.stderr
    # The cache is being built by a detached `ncx agent-hook warm`.
    deadline = time.monotonic() + 60
    while not cache.has_cache(cloned) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cache.has_cache(cloned)
    again = ncx(
        "assemble", "--task", "how are refund payments returned to the card", "--budget", "2000"
    )
    assert "Quick search" not in again.stdout
    assert "background" not in again.stderr
    assert git(cloned, "status", "--short") == ""


def test_quick_answer_matches_the_full_index(cloned: Path) -> None:
    cfg = load_config()
    full = Searcher(cloned, cfg, cache.load_index(cloned))
    for q in ("failed card payment retries", "locked account password", "warehouse tracking"):
        quick = cache.quick_index(cloned, q)
        assert quick is not None and quick.quick
        top_quick = Searcher(cloned, cfg, quick).search(q, k=3)
        top_full = full.search(q, k=3)
        assert top_quick[0].source_path == top_full[0].source_path
        # Cited by line, like the full index, and the quick idf is the whole tree's.
        assert top_quick[0].start_line == top_full[0].start_line
        for term, (pattern, _whole) in cache.query_patterns(q).items():
            if pattern != term:
                continue  # a shorter prefix counts more files: compared where it is the stem
            col, full_col = quick.lex.vocab[term], full.index.lex.vocab[term]
            assert quick.lex.idf[col] == pytest.approx(full.index.lex.idf[full_col], rel=0.3)


def test_retrieve_quick_then_batch_builds_the_full_cache(cloned: Path) -> None:
    got = ncx("retrieve", "refund to the original card", "--json")
    first = json.loads(got.stdout.splitlines()[0])
    assert first["source_path"] == "docs/refunds.md"
    assert "background" in got.stderr
    shutil.rmtree(cloned / ".neocortex" / "cache", ignore_errors=True)
    # Many queries: the real cache is built in place, never a quick index per query.
    ncx("retrieve", "--batch", input=json.dumps({"qid": 1, "query": "card refund"}) + "\n")
    assert cache.has_cache(cloned)


def test_small_tree_builds_the_cache_at_once(cloned: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "QUICK_FROM", 10_000)
    assert cache.quick_index(cloned, "card refund") is None
    got = ncx("retrieve", "card refund")
    assert cache.has_cache(cloned) and "background" not in got.stderr


def test_session_start_on_a_fresh_clone_starts_the_cache(cloned: Path) -> None:
    got = ncx("agent-hook", "session-start", input=json.dumps({"cwd": str(cloned)}))
    assert got.stdout.startswith("<!-- ncx wakeup -->") and "being built" in got.stdout
    deadline = time.monotonic() + 60
    while not cache.has_cache(cloned) and time.monotonic() < deadline:
        time.sleep(0.2)
    got = ncx("agent-hook", "session-start", input=json.dumps({"cwd": str(cloned)}))
    assert "docs/refunds.md" in got.stdout and "being built" not in got.stdout


def test_quick_search_takes_odd_and_long_queries(cloned: Path) -> None:
    odd = '-e --all "refund" \\ [card]* ünïcode ; $(rm -rf /) ' + " ".join(
        f"word{i}" for i in range(300)
    )
    got = ncx("retrieve", "--json", "--", odd)
    assert got.returncode == 0  # patterns go to git as -e arguments, never as options
    quick = cache.quick_index(cloned, odd)
    assert quick is not None and any(u.source_path == "docs/refunds.md" for u in quick.units)
    assert cache.quick_index(cloned, "the and of") is None  # stopwords only: nothing to look for


def test_query_patterns() -> None:
    pats = cache.query_patterns("Configuring the retry_policy for Ray? parseHTTPHeaders")
    assert pats["configur"] == ("configur", False)  # configure, configuring, configuration
    assert pats["polici"] == ("polic", False)  # policy, policies
    assert cache.query_patterns("retries")["retri"] == ("retr", False)  # and retry
    assert pats["ray"] == ("ray", True)  # short: the whole word, not "array"
    assert "the" not in pats and "for" not in pats  # stopwords
    assert "header" in pats and "pars" in pats  # camelCase split like the index


def test_grep_hits(repo: Path) -> None:
    write(repo, "a b/ünï.md", "Ray and ray and RAY; an array.\nconfigure, configuring\n")
    write(repo, "c.md", "nothing here\n")
    write(repo, "d.txt", "ray\n")
    commit_all(repo)
    write(repo, "new.md", "ray is untracked here\n")
    got = grep_hits(repo, [("ray", True), ("configur", False), ("zzz", False)], ["*.md"])
    assert got[0] == {"a b/ünï.md": [1, 1, 1], "new.md": [1]}  # whole word, any case, untracked
    assert got[1] == {"a b/ünï.md": [2, 2]}
    assert got[2] == {}


def test_grep_lines_hold_unicode_line_breaks(repo: Path) -> None:
    """git grep ends a record at "\n" only: a line holding U+2028 or U+0085 is one line,
    not two records (the second of which would read as a path)."""
    write(repo, "a.md", "head\nlines: 1\u2028 and\x85 more\nlines: 2\n")
    commit_all(repo)
    assert grep_fixed(repo, "lines: ", ["*.md"])() == {
        "a.md": [(2, "lines: 1\u2028 and\x85 more"), (3, "lines: 2")]
    }


LONG = " ".join(["Each warehouse keeps its own stock ledger, reconciled every night."] * 8)


def test_quick_search_finds_the_section_inside_a_docs_chunk_file(cloned: Path) -> None:
    """Hits are counted per block of a doc's chunk file (the `lines:` key says where each
    block ends), so the section that holds the words is the one parsed and ranked."""
    write(
        cloned,
        "docs/stock.md",
        f"# Stock\n\n{LONG}\n\n## Returns desk\n\n{LONG} Refund parcels go to the "
        f"returns desk.\n\n## Audits\n\n{LONG} Auditors sample pallets.\n",
    )
    commit_all(cloned, "doc")
    ncx("sync")
    commit_all(cloned, "chunks")
    blocks = cache.unit_blocks(cloned, cache._unit_specs(cloned))()
    assert len(blocks[".neocortex/chunks/docs/stock.md"]) == 3
    quick = cache.quick_index(cloned, "auditors sample pallets")
    assert quick is not None
    mine = [u for u in quick.units if u.source_path == "docs/stock.md"]
    assert [(u.section, u.block) for u in mine] == [(["Stock", "Audits"], 2)]
    assert quick.body(quick.units.index(mine[0])).strip().endswith("Auditors sample pallets.")


def test_a_lines_key_inside_a_sections_text_does_not_split_it(repo: Path) -> None:
    write(
        repo,
        "docs/a.md",
        f"# A\n\n{LONG}\n\n```yaml\nlines: 1\n```\n\n## B\n\n{LONG} Beta.\n",
    )
    ncx("init")
    commit_all(repo)
    ncx("sync")
    commit_all(repo, "chunks")
    ends = cache.unit_blocks(repo, cache._unit_specs(repo))()[".neocortex/chunks/docs/a.md"]
    text = (repo / ".neocortex/chunks/docs/a.md").read_text().splitlines()
    assert len(ends) == 2 and ends[-1] == len(text)
    assert text[ends[0]] == "---" and text[ends[0] + 1].startswith("id: docs/a.md#")


def test_post_merge_brings_an_existing_cache_up_to_date(cloned: Path) -> None:
    from ncx.query.cache import cache_is_current

    ncx("retrieve", "card refund")  # quick; the background build makes the cache
    deadline = time.monotonic() + 60
    while not cache.has_cache(cloned) and time.monotonic() < deadline:
        time.sleep(0.2)
    git(cloned, "checkout", "-q", "-b", "feature")
    write(cloned, "docs/gifts.md", "# Gifts\n\nGift cards never expire and can be topped up.\n")
    commit_all(cloned, "doc")
    ncx("sync")
    commit_all(cloned, "chunks")
    git(cloned, "checkout", "-q", "-")
    ncx("retrieve", "card refund")  # the cache matches this branch again
    assert cache_is_current(cloned)
    git(cloned, "merge", "-q", "--no-edit", "feature")
    assert not cache_is_current(cloned)
    ncx("hook", "post-merge")
    deadline = time.monotonic() + 60
    while not cache_is_current(cloned) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cache_is_current(cloned)


def test_the_mcp_servers_first_call_is_quick_and_warms_the_cache(cloned: Path) -> None:
    """The MCP server (one process, many calls) answers its first call on a fresh clone from
    the quick search too, starts the cache build once, and uses the cache when it is there."""
    from ncx.agents.mcp_server import _Tree

    tree = _Tree(cloned, load_config())
    s = tree.searcher("how are refund payments returned to the card")
    assert s.index.quick and tree._warming
    hits = s.search("how are refund payments returned to the card", k=3)
    assert hits and hits[0].source_path == "docs/refunds.md"
    deadline = time.monotonic() + 60
    while not cache.has_cache(cloned) and time.monotonic() < deadline:
        time.sleep(0.2)
    later = tree.searcher("card refund")
    assert not later.index.quick and len(later.index.units) == len(cache.load_index(cloned).units)


def test_a_chunks_body_is_read_at_its_offset_or_found_again(cloned: Path) -> None:
    """The cache records each block's bytes in its doc's chunk file; a body is read there,
    and when the file moved under it (an offset that no longer starts that block), the file
    is split again and the block taken by its place."""
    import dataclasses

    index = cache.load_index(cloned)
    i = next(n for n, u in enumerate(index.units) if u.kind == "chunk")
    unit = index.units[i]
    assert unit.at >= 0 and unit.size > 0
    body = index.body(i)
    assert body and body in (cloned / unit.file).read_text()
    moved = dataclasses.replace(unit, at=unit.at + 1)
    assert cache.unit_body(cloned, moved).strip() == body


def test_quick_hits_get_their_line_ranges_when_returned(cloned: Path) -> None:
    """A quick index skips finding line ranges for its few hundred units; the ones a query
    returns get them, as a full index would give."""
    import dataclasses

    query = "how are refund payments returned to the card"
    quick = Searcher.open(cloned, dataclasses.replace(load_config(), quick_cold=True), query=query)
    assert quick.index.quick
    assert all(u.start_line is None for u in quick.index.units if u.kind == "chunk")
    got = quick.search(query, k=3)
    full = Searcher(cloned, load_config(), cache.load_index(cloned, rebuild=True))
    want = {h.id: (h.start_line, h.end_line) for h in full.search(query, k=10)}
    assert got and all(h.start_line is not None for h in got)
    assert all((h.start_line, h.end_line) == want[h.id] for h in got if h.id in want)


def test_a_stale_offset_never_serves_a_neighbours_text() -> None:
    """`docs/ops.md#ops` is not `docs/ops.md#ops--deploy`: a block read at an old offset is
    taken only when its id line names exactly this unit (plain or YAML-quoted)."""
    assert cache._names(b"---\nid: docs/ops.md#ops\n", "docs/ops.md#ops")
    assert not cache._names(b"---\nid: docs/ops.md#ops--deploy\n", "docs/ops.md#ops")
    assert cache._names(b"---\nid: 'docs/a: b.md#it''s'\n", "docs/a: b.md#it's")


def test_quick_search_finds_a_doc_by_a_query_in_chinese(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run of Han characters is its character pairs (lexical §24): each pair is grepped, so
    # such a query gets a quick answer (it had no pattern at all: a cold build instead).
    for name, text in TOPICS.items():
        write(repo, f"docs/{name}.md", f"# {name.title()}\n\n{text}\n")
    write(
        repo, "docs/tokyo.md", "# 東京\n\n東京都の設定を変更する方法。設定ファイルを編集します。\n"
    )
    clone = _synced_clone(repo, tmp_path, monkeypatch)
    assert set(cache.query_patterns("設定を変更")) == {"設定", "定を", "を変", "変更"}
    quick = cache.quick_index(clone, "東京都の設定を変更する")
    assert quick is not None and quick.quick
    hits = Searcher(clone, load_config(), quick).search("東京都の設定を変更する", k=3)
    assert hits and hits[0].source_path == "docs/tokyo.md"


def test_a_cache_another_ncx_wrote_is_as_good_as_none(cloned: Path) -> None:
    """After an upgrade the old cache cannot be patched, only rebuilt whole: the first query
    answers quickly and rebuilds it in the background, as in a fresh clone."""
    import numpy as np

    ncx("retrieve", "--batch", input='{"qid": 1, "query": "refunds"}\n')
    assert cache.has_cache(cloned)
    path = cloned / ".neocortex/cache/index.npz"
    members = dict(np.load(path))
    head = json.loads(bytes(members["head"]).decode())
    members["head"] = np.frombuffer(json.dumps({**head, "version": 1}).encode(), dtype=np.uint8)
    np.savez(path, **members)
    assert not cache.has_cache(cloned)
    got = ncx("assemble", "--task", "how are refund payments returned to the card")
    assert "Quick search" in got.stdout and "docs/refunds.md" in got.stdout
    deadline = time.monotonic() + 60
    while not cache.has_cache(cloned) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cache.has_cache(cloned)
