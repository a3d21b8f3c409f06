"""Adversarial review of the fresh-clone included-by map, MkDocs admonitions, dated docs and
bare :ref: titles: each test here failed before its fix."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import commit_all, first_sync, git, ncx, write

MAP = ".neocortex/cache/included-by.json"


def _map(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = json.loads((root / MAP).read_text())["by"]
    return found


def test_a_doc_removed_by_a_scoped_sync_leaves_the_included_by_map(repo: Path) -> None:
    # `git rm` of the only doc that includes a file, then the sync the hook runs for it
    # (limited to that path): the map must not keep naming the gone doc, or every later
    # commit of the included file takes the hook's full path for a doc that is no more.
    write(repo, "src/inc.py", "X = 1\n")
    write(repo, "docs/a.md", "# A\n\nwords\n\n{* ./src/inc.py *}\n")
    write(repo, "docs/b.md", "# B\n\nother words\n")
    first_sync(repo)
    assert _map(repo) == {"src/inc.py": ["docs/a.md"]}
    git(repo, "rm", "-q", "docs/a.md")
    ncx("sync", "docs/a.md")
    assert _map(repo) == {}
    # a rename: the map names the new path only
    write(repo, "docs/c.md", "# C\n\nwords\n\n{* ./src/inc.py *}\n")
    git(repo, "add", "docs/c.md")
    ncx("sync", "docs/c.md")
    assert _map(repo) == {"src/inc.py": ["docs/c.md"]}
    git(repo, "mv", "docs/c.md", "docs/d.md")
    ncx("sync", "docs/c.md", "docs/d.md")
    assert _map(repo) == {"src/inc.py": ["docs/d.md"]}


@pytest.mark.e2e
def test_the_hook_writes_nothing_in_a_repo_without_a_tree(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hooks configured (a shared pre-commit config) but no `ncx init` here: a commit of
    # code must leave no `.neocortex/` behind (git status clean) and pass.
    from test_hooks import commit, configured

    tool = configured(repo, tmp_path, monkeypatch)
    write(repo, "docs/a.md", "# A\n\nwords\n\n{* ./src/inc.py *}\n")
    write(repo, "src/inc.py", "X = 1\n")
    commit_all(repo)
    subprocess.run([tool, "install"], cwd=repo, check=True, capture_output=True)
    write(repo, "src/inc.py", "X = 2\n")
    git(repo, "add", "src/inc.py")
    done = commit(repo)
    assert done.returncode == 0, done.stdout
    assert not (repo / ".neocortex").exists()
    assert git(repo, "status", "--porcelain") == ""
    # a doc's commit too (the hook says it skips)
    write(repo, "docs/b.md", "# B\n\nmore words\n")
    git(repo, "add", "docs/b.md")
    done = commit(repo)
    assert done.returncode == 0, done.stdout
    assert not (repo / ".neocortex").exists()
    assert git(repo, "status", "--porcelain") == ""


def _top(query: str) -> dict[str, object]:
    hit: dict[str, object] = json.loads(ncx("retrieve", query, "--json", "--k", "1").stdout)
    return hit


def test_an_admonition_quoted_in_a_list_items_fence_stays_as_written(repo: Path) -> None:
    # A fence in a list item (or an MkDocs content tab) is indented past 3 spaces: the
    # admonition syntax it quotes is code, as the built page shows it, not a rendered note;
    # an admonition in a list item itself is rendered, its lines cited where they are.
    write(
        repo,
        "docs/howto.md",
        "# Howto\n\nWrite a zebra callout:\n\n"
        "1. Open the page.\n\n"
        '    ```markdown\n    !!! note "Zebra stripes"\n        quoted zebra body\n    ```\n\n'
        '2. Then:\n\n    !!! tip "Zebra tip"\n        real zebra advice here\n',
    )
    first_sync(repo)
    hit = _top("zebra callout stripes advice")
    lines = str(hit["text"]).split("\n")
    assert '    !!! note "Zebra stripes"' in lines and "        quoted zebra body" in lines, lines
    assert "    **tip** Zebra tip" in lines and "    real zebra advice here" in lines, lines
    assert hit["start_line"] == 1 and hit["end_line"] == 15, hit


def test_a_date_no_calendar_has_is_a_frontmatter_problem_not_a_traceback(repo: Path) -> None:
    # YAML reads `2023-02-30` as a timestamp and the calendar refuses it (ValueError): a doc
    # with that typo must be reported as any bad frontmatter is, and the others still answer.
    write(repo, "docs/note.md", "---\ndate: 2023-02-30\n---\n# Note\n\nThe loom weaves flowers.\n")
    write(repo, "docs/garden.md", "---\ndate: 2023-05-08\n---\n# Garden\n\nTomatoes need sun.\n")
    # other values PyYAML's constructors refuse with other exceptions
    write(repo, "docs/flag.md", "---\nflag: !!bool maybe\n---\n# Flag\n\nA flag.\n")
    write(repo, "docs/stamp.md", "---\nwhen: !!timestamp soon\n---\n# Stamp\n\nA stamp.\n")
    commit_all(repo)
    ncx("init")
    proc = ncx("sync", ok=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    for doc in ("docs/note.md", "docs/flag.md", "docs/stamp.md"):
        assert doc in proc.stderr, proc.stderr
    hit = json.loads(ncx("retrieve", "tomatoes sun", "--k", "1", "--json").stdout)
    assert hit["source_path"] == "docs/garden.md" and hit["dated"] == "2023-05-08"
    out = ncx("retrieve", "loom weaves flowers", "--k", "1", "--json", ok=False)
    assert "Traceback" not in out.stderr, out.stderr


def test_git_grep_settings_of_the_user_do_not_blind_the_lookups(repo: Path) -> None:
    # Common settings in a developer's git config (`grep.lineNumber`, `grep.column`, a
    # colour forced on) change what `git grep` prints: the label lookup found no label
    # (a line number before each line) and a fresh clone's included-by map no doc (colour
    # codes around each path).
    for key, value in (
        ("grep.lineNumber", "true"),
        ("grep.column", "true"),
        ("color.grep", "always"),
        ("color.ui", "always"),
    ):
        git(repo, "config", key, value)
    write(repo, "src/inc.py", "X_VALUE = 1\n")
    write(repo, "docs/a.md", "# A\n\nThe included value:\n\n{* ./src/inc.py *}\n")
    write(repo, "docs/replica.rst", "Replicas\n========\n\nPurge first, see :ref:`purge-x1`.\n")
    write(
        repo,
        "docs/purge.rst",
        # (two spaces after `..`: valid reST, found by the lookup's fixed strings too)
        "Guide\n=====\n\n..  _purge-x1:\n\nClearing Stale Entries\n----------------------\n\n"
        "Run the purge.\n",
    )
    first_sync(repo)
    hit = _top("replicas purge first")
    assert hit["source_path"] == "docs/replica.rst"
    assert "see Clearing Stale Entries." in str(hit["text"]), hit
    # a clone with no map: found from the index
    (repo / MAP).unlink()
    write(repo, "src/inc.py", "X_VALUE = 2\n")
    ncx("sync", "src/inc.py")
    assert "X_VALUE = 2" in (repo / ".neocortex/chunks/docs/a.md").read_text()
    assert _map(repo) == {"src/inc.py": ["docs/a.md"]}


def test_a_label_quoted_in_a_code_fence_is_not_the_label(repo: Path) -> None:
    # A MyST guide quotes the label syntax in a fence; the label itself is defined in a
    # later file (path order): the reference reads as the real section's title.
    write(
        repo,
        "docs/a-syntax.md",
        "# Syntax\n\nWrite a label so:\n\n```md\n(purge-y2)=\n# Example Header\n```\n",
    )
    write(repo, "docs/guide.md", "# Guide\n\n(purge-y2)=\n## Real Purge Title\n\nRun it.\n")
    write(repo, "docs/replica.rst", "Replicas\n========\n\nPurge first, see :ref:`purge-y2`.\n")
    first_sync(repo)
    hit = _top("replicas purge first")
    assert hit["source_path"] == "docs/replica.rst"
    assert "see Real Purge Title." in str(hit["text"]), hit


def test_a_doc_named_with_a_newline_does_not_blind_the_map_found_from_the_index(
    repo: Path,
) -> None:
    # The index is asked about each marked doc one line a path (`git cat-file --batch`): a
    # name holding a newline (sync skips it: a control character) took two answers, and
    # every doc after it took the one meant for the doc before, so none of them was read.
    write(repo, "src/inc.py", "X_VALUE = 1\n")
    write(repo, "docs/a\nodd.md", "# Odd\n\n{* ./src/inc.py *}\n")
    write(repo, "docs/b.md", "# B\n\nThe included value:\n\n{* ./src/inc.py *}\n")
    commit_all(repo)
    ncx("init")
    ncx("sync", ok=False)  # (the odd name is reported)
    (repo / MAP).unlink()
    write(repo, "src/inc.py", "X_VALUE = 2\n")
    ncx("sync", "src/inc.py", ok=False)
    assert "X_VALUE = 2" in (repo / ".neocortex/chunks/docs/b.md").read_text()
    assert _map(repo) == {"src/inc.py": ["docs/b.md"]}


def test_a_labelled_doc_over_the_size_cap_is_not_read_for_its_title(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A doc sync refuses for its size (NCX_MAX_DOC_BYTES) is not read whole into memory by
    # every frame that shows a reference to one of its labels (a 1 GB .rst in a hostile
    # tree): the reference keeps its words.
    monkeypatch.setenv("NCX_MAX_DOC_BYTES", "4000")
    write(repo, "docs/replica.rst", "Replicas\n========\n\nPurge first, see :ref:`purge-z3`.\n")
    write(
        repo,
        "docs/purge.rst",
        "Guide\n=====\n\n.. _purge-z3:\n\nClearing Stale Entries\n----------------------\n\n"
        + "Run the purge on the primary.\n" * 300,
    )
    commit_all(repo)
    ncx("init")
    ncx("sync", ok=False)  # (the big doc is reported)
    hit = _top("replicas purge first")
    assert hit["source_path"] == "docs/replica.rst"
    assert "see purge z3." in str(hit["text"]), hit


def test_a_sync_of_a_folder_drops_the_docs_deleted_from_it(repo: Path) -> None:
    # `ncx sync docs/` after `git rm docs/a.md` said "up to date" and kept a.md's chunks (a
    # deleted doc still answered queries) and its entry in the included-by map; only a sync
    # of the whole tree, or of that very path, removed them.
    write(repo, "src/inc.py", "X = 1\n")
    write(repo, "docs/a.md", "# A\n\nThe walrus words.\n\n{* ./src/inc.py *}\n")
    write(repo, "docs/b.md", "# B\n\nOther words.\n")
    write(repo, "notes/c.md", "# C\n\nThe walrus notes.\n")
    first_sync(repo)
    git(repo, "rm", "-q", "docs/a.md", "notes/c.md")
    out = ncx("sync", "docs/")
    assert "removed .neocortex/chunks/docs/a.md" in out.stdout + out.stderr
    assert not (repo / ".neocortex/chunks/docs/a.md").exists()
    assert (repo / ".neocortex/chunks/notes/c.md").exists()  # (not in the folder given)
    assert _map(repo) == {}
    hits = ncx("retrieve", "walrus", "--json").stdout
    assert "docs/a.md" not in hits
