"""The search cache after a change: patched, not rebuilt (docs/decisions.md §22)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import commit_all, git, ncx, write
from test_lexical import by_term

from ncx.query import build, cache


def _doc(title: str, *sections: str) -> str:
    body = "".join(
        f"## {s}\n\nThe {s.lower()} step of the {title.lower()} service runs nightly "
        f"and writes its report_{s.lower()} file once the queue drains.\n\n"
        for s in sections
    )
    return f"# {title}\n\nWhat the {title.lower()} service does and who owns it.\n\n{body}"


def _parsed_files(repo: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The unit files cache builds parse from now on, repo-relative, as they are parsed."""
    parsed: list[str] = []
    parse_many = build._parse_many

    def counting(root: str, jobs: list[tuple[str, list[str]]], dim: int) -> Any:
        parsed.extend(Path(f).relative_to(repo).as_posix() for _, files in jobs for f in files)
        return parse_many(root, jobs, dim)

    monkeypatch.setattr(build, "_parse_many", counting)
    return parsed


def _same_index(got: cache.Index, want: cache.Index) -> None:
    assert [u.to_json() for u in got.units] == [u.to_json() for u in want.units]
    assert got.vectors.tobytes() == want.vectors.tobytes()
    assert got.group.tolist() == want.group.tolist()
    assert by_term(got.lex) == by_term(want.lex)  # every score, whatever column a term has


def test_a_patched_cache_equals_a_full_rebuild_and_parses_only_what_changed(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("alpha", "bravo", "charlie", "delta"):
        write(repo, f"docs/{name}.md", _doc(name.title(), "Ingest", "Export", "Audit"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    cache.load_index(repo)  # the cache a later build patches

    write(repo, "docs/charlie.md", _doc("Charlie", "Ingest", "Rollback", "Audit"))
    git(repo, "rm", "-q", "docs/delta.md")
    write(repo, "docs/echo.md", _doc("Echo", "Ingest"))
    git(repo, "add", "docs/echo.md")
    ncx("sync")
    write(
        repo,
        ".neocortex/memories/MEM-2026-01-01-aaaaaa.md",
        "---\nid: MEM-2026-01-01-aaaaaa\ntype: factual\n---\n\n## Learning\n\n"
        "The charlie rollback needs the audit lock.\n",
    )
    # A second chunk file naming alpha as its source, first in walk order, with another
    # title: the title field of alpha's own (unchanged) units changes with it, so they are
    # parsed again too.
    chunks = repo / ".neocortex/chunks/docs"
    (chunks / "0copy.md").write_bytes(
        (chunks / "alpha.md").read_bytes().replace(b"Alpha", b"Omega")
    )

    parsed = _parsed_files(repo, monkeypatch)
    patched = cache.load_index(repo)
    assert sorted(parsed) == [
        ".neocortex/chunks/docs/0copy.md",
        ".neocortex/chunks/docs/alpha.md",
        ".neocortex/chunks/docs/charlie.md",
        ".neocortex/chunks/docs/echo.md",
        ".neocortex/memories/MEM-2026-01-01-aaaaaa.md",
    ]  # not bravo's: it did not change
    assert "omega" in patched.lex.vocab and "delta" not in patched.lex.vocab
    assert patched.lex.score(["rollback"]).max() > 0

    # What was returned is what was written, and what a build from nothing makes.
    _same_index(cache.load_index(repo), patched)
    _same_index(cache.load_index(repo, rebuild=True), patched)
    (repo / ".neocortex/cache/index.npz").unlink()
    _same_index(cache.load_index(repo), patched)


def test_a_stale_cache_is_told_from_its_head(repo: Path) -> None:
    write(repo, "docs/alpha.md", _doc("Alpha", "Ingest"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    cache.load_index(repo)
    assert cache.cache_is_current(repo)
    z = np.load(repo / ".neocortex/cache/index.npz")
    head = json.loads(bytes(z["head"]).decode())
    assert head["sources"] == ["docs/alpha.md"] and "units" not in head
    write(repo, "docs/alpha.md", _doc("Alpha", "Ingest", "Export"))
    assert not cache.cache_is_current(repo)


def test_a_cache_whose_postings_do_not_add_up_is_built_afresh(repo: Path) -> None:
    write(repo, "docs/alpha.md", _doc("Alpha", "Ingest", "Export"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    want = cache.load_index(repo)
    path = repo / ".neocortex/cache/index.npz"
    members = dict(np.load(path))
    members["p_seg"] = members["p_seg"] + (1 << 20)  # units the cache does not have
    np.savez(path, **members)
    write(repo, "docs/alpha.md", _doc("Alpha", "Ingest", "Export", "Audit"))
    ncx("sync")
    got = cache.load_index(repo)  # no IndexError from the patch: a fresh build
    assert "audit" in got.lex.vocab and "audit" not in want.lex.vocab
    _same_index(got, cache.load_index(repo, rebuild=True))


def test_a_query_decodes_only_the_units_it_reads(repo: Path) -> None:
    from ncx.config import load_config
    from ncx.query.search import Searcher

    # More units than a query's candidates (lexical matches and the 100 nearest vectors).
    write(repo, "docs/charlie.md", _doc("Charlie", "Ingest", "Export", "Audit"))
    for i in range(160):
        write(repo, f"docs/garden{i:03}.md", f"# Bed {i}\n\nTomatoes want sun and a stake.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    cache.load_index(repo)
    index = cache.load_index(repo)  # read back from the file
    units = index.units
    assert isinstance(units, cache.Units) and len(units) > 160
    for c in cache.COLUMNS:  # the columns say what the rows say
        assert units.column(c) == [getattr(u, c) for u in cache.load_index(repo).units]
    hits = Searcher(repo, load_config(), index).search("the charlie audit step", k=3)
    assert hits and index.units[hits[0].unit].source_path == "docs/charlie.md"
    decoded = sum(not isinstance(r, str) for r in units._rows)
    assert 0 < decoded < len(units)  # a filter over all units read the columns only


def test_a_rebuild_builds_from_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # rebuild=True is the way out of a cache that is wrong although its stats match (and
    # what tests compare a patched cache against): it must not patch the old one.
    for name in ("alpha", "bravo"):
        write(repo, f"docs/{name}.md", _doc(name.title(), "Ingest", "Export"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    cache.load_index(repo)
    parsed = _parsed_files(repo, monkeypatch)
    cache.load_index(repo, rebuild=True)
    assert sorted(parsed) == [".neocortex/chunks/docs/alpha.md", ".neocortex/chunks/docs/bravo.md"]


@pytest.mark.parametrize(
    "member", ["vectors", "stats", "vectors_dim"], ids=["vectors", "stats", "vectors_dim"]
)
def test_a_cache_whose_vectors_or_stats_do_not_fit_is_built_afresh(repo: Path, member: str) -> None:
    # Like postings that do not add up (above): a damaged or foreign cache is not patched.
    write(repo, "docs/alpha.md", _doc("Alpha", "Ingest", "Export"))
    write(repo, "docs/bravo.md", _doc("Bravo", "Ingest"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    cache.load_index(repo)
    path = repo / ".neocortex/cache/index.npz"
    members = dict(np.load(path))
    if member == "vectors":
        members["vectors"] = members["vectors"][:, :1]  # fewer units than the rows
    elif member == "vectors_dim":
        members["vectors"] = members["vectors"][:3]  # another width than the model's
    else:
        members["stats"] = np.frombuffer(b"[]", dtype=np.uint8)
    np.savez(path, **members)
    from ncx.config import load_config
    from ncx.query.search import Searcher

    if member != "vectors_dim":  # (a width is told from the manifest, read by a build only)
        index = cache.load_index(repo)  # not stale: read as it is, or rebuilt if it cannot be
        assert Searcher(repo, load_config(), index).search("the alpha export step", k=3)
    write(repo, "docs/alpha.md", _doc("Alpha", "Ingest", "Export", "Audit"))
    ncx("sync")
    got = cache.load_index(repo)  # no IndexError / AttributeError from the patch
    assert "audit" in got.lex.vocab
    _same_index(got, cache.load_index(repo, rebuild=True))


def test_the_own_block_reader_builds_the_cache_the_generic_reader_builds(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold build reads sync's own chunk blocks without the generic frontmatter pass
    (build._own_block); the cache it writes is the same, byte for byte, member by member,
    on blocks it reads and on blocks it hands to the generic reader (a hand-edited head)."""
    write(repo, "docs/a.md", _doc("Alpha", "Ingest", "Export"))
    write(
        repo,
        "docs/b.md",
        "---\ntitle: 'Bravo: the guide'\ntags: [ops, 'it''s']\ndate: 2024-05-01\n---\n\n"
        + _doc("Bravo", "Rollback 'quoted'", "Ünïcode – “dashes”"),
    )
    write(repo, "docs/c.md", "# Cee\n\n```yaml\n---\nkey: value\n...\n```\n\nText after.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    edited = repo / ".neocortex/chunks/docs/c.md"
    text = edited.read_text()
    edited.write_text(text.replace("kind: chunk\n", "kind: chunk\nnote: {by: hand}\n", 1))  # YAML
    builds = []
    for fast in (True, False):
        monkeypatch.setattr(build, "_FAST_BLOCKS", fast)
        builds.append(build._build(repo, None)[0])
    fast_members, generic = builds
    assert fast_members.keys() == generic.keys()
    for name, want in generic.items():
        got = fast_members[name]
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), name
    from ncx.store import split_chunk_file

    for block in split_chunk_file((repo / ".neocortex/chunks/docs/a.md").read_bytes(), path="a"):
        assert build._own_block(block) is not None  # sync's own blocks: all read fast
    assert build._own_block(b"---\r\nid: x\r\n---\r\nbody\r\n") is None  # CRLF: generic
    assert build._own_block(b"---\nid: x\n...\nkind: chunk\n---\nbody\n") is None
