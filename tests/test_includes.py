"""Includes resolved (issue 28): the code and text a doc includes from other files of its
repository are read into its view (what is chunked, ranked and quoted), through the path gate
(tracked files inside the repository only), and a change to an included file re-chunks the
docs that include it, and only those."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, first_sync, git, ncx, write

CODE = "\n".join(
    [
        "from sqlmodel import Field, SQLModel",  # 1
        "",  # 2
        "",  # 3
        "class Hero(SQLModel, table=True):",  # 4
        "    id: int | None = Field(default=None, primary_key=True)",  # 5
        "    name: str = Field(index=True)",  # 6
        "    secret_name: str",  # 7
        "    age: int | None = Field(default=None, index=True)",  # 8
        "",  # 9
        "",  # 10
        "def create_db_and_tables():",  # 11
        "    SQLModel.metadata.create_all(engine)",  # 12
    ]
)
PROSE = "Declare an index on the hero name so that queries that filter by it are fast.\n\n"


def _results(query: str) -> list[dict[str, Any]]:
    out = ncx("retrieve", query, "--json", "--k", "5").stdout
    return [json.loads(line) for line in out.splitlines()]


def _chunk_file(repo: Path, doc: str) -> Path:
    rel = doc if doc.endswith(".md") else doc + ".md"
    return repo / ".neocortex/chunks" / rel


def test_fastapi_include_is_quoted_as_code(repo: Path) -> None:
    write(repo, "docs_src/tutorial/indexes/tutorial002_py310.py", CODE + "\n")
    write(
        repo,
        "docs/tutorial/indexes.md",
        "# Indexes\n\n## Declare Indexes with SQLModel\n\n"
        + PROSE
        + "{* ./docs_src/tutorial/indexes/tutorial002_py310.py ln[4:6,11:12] hl[6] *}\n\n"
        "The whole file:\n\n{* ./docs_src/tutorial/indexes/tutorial002_py310.py *}\n",
    )
    first_sync(repo)
    text = _chunk_file(repo, "docs/tutorial/indexes.md").read_text()
    assert "{*" not in text
    assert "```python\nclass Hero(SQLModel, table=True):" in text
    # ln[4:6,11:12]: lines 4-6, a gap, lines 11-12; line 7 is not in the first quote
    first = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert first.splitlines() == [*CODE.splitlines()[3:6], "...", *CODE.splitlines()[10:12]]
    assert "secret_name: str" in text  # (the whole file, quoted second)
    top = _results("hero name Field index=True")[0]
    assert top["source_path"] == "docs/tutorial/indexes.md"
    assert "name: str = Field(index=True)" in top["text"]
    # cited at the doc's own lines (those of the include lines), not the included file's
    doc_lines = (repo / "docs/tutorial/indexes.md").read_text().count("\n")
    assert top["start_line"] is not None and top["end_line"] <= doc_lines, top
    frame = ncx("assemble", "--task", "declare an index on the hero name field").stdout
    assert "name: str = Field(index=True)" in frame and "{* ./docs_src" not in frame


def test_fastapi_paths_relative_to_the_mkdocs_folder(repo: Path) -> None:
    # FastAPI writes ../../docs_src/... from docs/en/docs/ (relative to docs/en/mkdocs.yml)
    write(repo, "docs_src/python_types/tutorial001.py", "def get_full_name(first, last):\n")
    write(
        repo,
        "docs/en/docs/python-types.md",
        "# Types\n\nA function:\n\n{* ../../docs_src/python_types/tutorial001.py hl[1] *}\n",
    )
    first_sync(repo)
    text = _chunk_file(repo, "docs/en/docs/python-types.md").read_text()
    assert "```python\ndef get_full_name(first, last):\n```" in text


def test_pymdownx_snippets(repo: Path) -> None:
    write(repo, "snippets/warning.md", "**Careful:** the token expires after one hour.\n")
    write(repo, "src/app.py", "a = 1\nb = 2\nc = 3\nd = 4\n")
    write(
        repo,
        "docs/guide.md",
        '# Guide\n\nIntro text.\n\n--8<-- "snippets/warning.md"\n\n'
        '```python\n--8<-- "src/app.py:2:3"\n```\n\n'
        'Escaped:\n\n;--8<-- "src/app.py"\n\n'
        "--8<--\nsnippets/warning.md\n--8<--\n",
    )
    first_sync(repo)
    text = _chunk_file(repo, "docs/guide.md").read_text()
    assert text.count("**Careful:** the token expires after one hour.") == 2
    assert "```python\nb = 2\nc = 3\n```" in text
    assert ';--8<-- "src/app.py"' in text  # the escaped form is left alone
    assert "a = 1" not in text


def test_rest_literalinclude_and_include(repo: Path) -> None:
    write(
        repo,
        "docs/examples/app.py",
        "# setup\nimport flask\n\n# start-app\napp = flask.Flask(__name__)\n"
        "app.config['SECRET_KEY'] = 'dev'\n# end-app\nprint('done')\n",
    )
    write(repo, "docs/shared/intro.rst", "Flask is a lightweight WSGI web application framework.\n")
    write(repo, "docs/conf.py", "project = 'x'\n")
    write(
        repo,
        "docs/api/config.rst",
        "Configuration\n=============\n\n.. include:: ../shared/intro.rst\n\n"
        "Create the app:\n\n.. literalinclude:: ../examples/app.py\n"
        "   :start-after: # start-app\n   :end-before: # end-app\n\n"
        "Lines:\n\n.. literalinclude:: /examples/app.py\n   :lines: 1-2\n   :language: python3\n",
    )
    first_sync(repo)
    text = _chunk_file(repo, "docs/api/config.rst").read_text()
    assert "Flask is a lightweight WSGI web application framework." in text
    assert "```python\napp = flask.Flask(__name__)\napp.config['SECRET_KEY'] = 'dev'\n```" in text
    assert "```python3\n# setup\nimport flask\n```" in text
    assert "print('done')" not in text and "literalinclude" not in text


def test_myst_literalinclude_and_include(repo: Path) -> None:
    write(repo, "examples/config.toml", "[tool]\nname = 'demo'\nlevel = 3\n")
    write(repo, "docs/part.md", "Shared text about **deployment targets**.\n")
    write(
        repo,
        "docs/index.md",
        "# Setup\n\n```{include} part.md\n```\n\n"
        "```{literalinclude} ../examples/config.toml\n:lines: 2-3\n```\n",
    )
    first_sync(repo)
    text = _chunk_file(repo, "docs/index.md").read_text()
    assert "Shared text about **deployment targets**." in text
    assert "```toml\nname = 'demo'\nlevel = 3\n```" in text
    assert "{literalinclude}" not in text and "{include}" not in text


def test_path_gate(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("OUTSIDE_SECRET = 1\n")
    os.symlink(outside, repo / "link.py")  # a tracked link that leaves the repository
    write(repo, "untracked.py", "UNTRACKED_TEXT = 1\n")
    write(
        repo,
        "docs_src/big.bin",
        "version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 9\n",
    )
    forms = {
        "outside": "{* ../outside.py *}",
        "dotdot": '--8<-- "docs/../../outside.py"',
        "absolute": f"{{* {outside} *}}",
        "symlink": "{* ./link.py *}",
        "gitconfig": '--8<-- ".git/config"',
        "untracked": "{* ./untracked.py *}",
        "missing": "{* ./nosuch.py *}",
        "self": '--8<-- "docs/gate.md"',
        "lfs": "{* ./docs_src/big.bin *}",
    }
    body = "".join(f"## {k}\n\nCase {k}.\n\n{v}\n\n" for k, v in forms.items())
    write(repo, "docs/gate.md", "# Gate\n\n" + body)
    write(repo, "gate.rst", "Gate\n====\n\nText.\n\n.. literalinclude:: ../outside.py\n")
    git(repo, "add", "docs", "docs_src", "link.py", "gate.rst")
    git(repo, "commit", "-q", "--no-verify", "-m", "docs")
    ncx("init")
    out = ncx("sync")  # nothing stops the sync
    text = _chunk_file(repo, "docs/gate.md").read_text()
    assert "OUTSIDE_SECRET" not in text and "UNTRACKED_TEXT" not in text
    assert "[core]" not in text and "repositoryformatversion" not in text
    # refused for safety or a limit: one short note each, saying why
    refused = {
        "symlink": "a link",
        "gitconfig": "inside .git/",
        "self": "it includes itself",
        "lfs": "a Git LFS pointer",
    }
    for why in refused.values():
        assert why in text, (why, text)
    assert text.count("[include not read:") == len(refused), text
    # not there to read (outside, untracked, missing): the doc's own line, as written
    for k in ("outside", "dotdot", "absolute", "untracked", "missing"):
        assert forms[k] in text, (k, text)
    rst = _chunk_file(repo, "gate.rst").read_text()
    assert "OUTSIDE_SECRET" not in rst and "include not read" not in rst
    assert "Traceback" not in out.stderr


def test_a_fifo_is_refused_not_waited_on(repo: Path) -> None:
    write(repo, "docs_src/pipe.py", "x = 1\n")
    write(repo, "docs/p.md", "# P\n\nText.\n\n{* ./docs_src/pipe.py *}\n")
    commit_all(repo)
    ncx("init")
    (repo / "docs_src/pipe.py").unlink()
    os.mkfifo(repo / "docs_src/pipe.py")
    ncx("sync")
    assert "not a regular file" in _chunk_file(repo, "docs/p.md").read_text()


def test_changing_an_included_file_rechunks_only_its_docs(repo: Path) -> None:
    write(repo, "docs_src/models.py", CODE + "\n")
    write(repo, "docs/indexes.md", "# Indexes\n\n" + PROSE + "{* ./docs_src/models.py *}\n")
    write(repo, "docs/other.md", "# Other\n\nNothing included here.\n")
    first_sync(repo)
    commit_all(repo, "ncx")
    write(repo, "docs_src/models.py", CODE.replace("index=True)", "index=True, unique=True)"))
    report = ncx("sync")
    assert "unique=True" in _chunk_file(repo, "docs/indexes.md").read_text()
    changed = git(repo, "status", "--porcelain").split("\n")
    assert any(".neocortex/chunks/docs/indexes.md" in c for c in changed)
    assert not any("other.md" in c for c in changed), report.stdout
    # A second sync writes nothing (the state knows the included file's blob).
    commit_all(repo, "edit")
    again = ncx("sync")
    assert git(repo, "status", "--porcelain") == "", again.stdout
    # A sync limited to the included file's path re-chunks the docs that include it.
    write(repo, "docs_src/models.py", CODE.replace("secret_name", "hidden_name"))
    ncx("sync", "docs_src/models.py")
    assert "hidden_name" in _chunk_file(repo, "docs/indexes.md").read_text()


def test_sync_twice_is_clean(repo: Path) -> None:
    write(repo, "docs_src/a.py", "A = 1\n")
    write(repo, "docs/a.md", '# A\n\n{* ./docs_src/a.py *}\n\n--8<-- "docs/b.md"\n')
    write(repo, "docs/b.md", "# B\n\nB includes A too.\n\n{* ./docs_src/a.py *}\n")
    first_sync(repo)
    commit_all(repo, "ncx")
    ncx("sync")
    assert git(repo, "status", "--porcelain") == ""
    # a fresh state (another clone) chunks the same bytes
    for p in (repo / ".neocortex/cache").iterdir():
        if p.is_file():
            p.unlink()
    ncx("sync")
    assert git(repo, "status", "--porcelain") == ""
    assert ncx("check", ok=False).returncode == 0


@pytest.mark.e2e
def test_precommit_with_only_the_included_file_staged(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_hooks import commit, configured

    tool = configured(repo, tmp_path, monkeypatch)
    write(repo, "docs_src/models.py", CODE + "\n")
    write(repo, "docs/indexes.md", "# Indexes\n\n" + PROSE + "{* ./docs_src/models.py *}\n")
    write(repo, "docs/other.md", "# Other\n\nNothing included here.\n")
    first_sync(repo)
    commit_all(repo, "ncx")
    subprocess.run([tool, "install"], cwd=repo, check=True, capture_output=True)
    write(repo, "docs_src/models.py", CODE.replace("secret_name", "alias_name") + "\n")
    git(repo, "add", "docs_src/models.py")
    # an unstaged edit on top: the hook follows what the commit holds, not the working tree
    write(repo, "docs_src/models.py", CODE.replace("secret_name", "unstaged_name") + "\n")
    first = commit(repo)
    assert first.returncode != 0, first.stdout
    assert "ncx: wrote .neocortex/chunks/docs/indexes.md" in first.stdout
    assert "other.md" not in first.stdout
    text = _chunk_file(repo, "docs/indexes.md").read_text()
    assert "alias_name" in text and "unstaged_name" not in text
    git(repo, "add", ".neocortex")
    second = commit(repo)
    assert second.returncode == 0, second.stdout
    assert git(repo, "status", "--porcelain") == " M docs_src/models.py\n"


def test_rest_include_examples_in_code_blocks_stay_quoted(repo: Path) -> None:
    # A guide to Sphinx shows the directive in a code block: quoted as written, not read.
    write(repo, "docs/example.py", "REAL_CODE = 1\n")
    write(
        repo,
        "docs/guide.rst",
        "Guide\n=====\n\nWrite this::\n\n   .. literalinclude:: example.py\n\n"
        ".. code-block:: rst\n\n   .. include:: example.py\n\nDone.\n",
    )
    first_sync(repo)
    text = _chunk_file(repo, "docs/guide.rst").read_text()
    assert "REAL_CODE" not in text and "include not read" not in text
    assert ".. literalinclude:: example.py" in text and ".. include:: example.py" in text


def test_a_doc_cannot_grow_without_bound() -> None:
    # (Pure: the expander with a gate that answers every path with the same large text.)
    from ncx.sources import read_view
    from ncx.sources.includes import MAX_DEPTH, MAX_SPLICED, Got

    big = "x = 1\n" * 80_000  # 480,000 characters, under the gate's cap
    doc = "# Big\n\n" + "{* ./big.py *}\n\n" * 10
    view = read_view("docs/big.md", doc, lambda rel: Got(big, blob="b"))
    assert len(view.text) < MAX_SPLICED + 10_000
    assert "characters included by one doc" in view.text
    # a chain of snippets each including the next stops at MAX_DEPTH
    chain = read_view(
        "docs/a.md",
        '# A\n\n--8<-- "n0.md"\n',
        lambda rel: Got(f'level {rel}\n\n--8<-- "n{int(rel[1:-3]) + 1}.md"\n', blob="c"),
    )
    assert f"nested over {MAX_DEPTH} includes deep" in chain.text
    assert chain.text.count("level ") == MAX_DEPTH


def test_pymdownx_blocks_render_in_the_view(repo: Path) -> None:
    # sqlmodel's and FastAPI's admonitions: `/// tip | Title` ... `///`, options indented
    # under the header; retrieve's text (the chunk) shows them as a frame does.
    write(repo, "snippets/tip.md", "/// warning\n\nThe included block is read too.\n\n///\n")
    write(
        repo,
        "docs/tips.md",
        "# Tips\n\nAbout composite indexes on the hero table.\n\n"
        "/// details | Composite indexes\n    type: tip\n    open: true\n\n"
        "An index on two columns serves queries that filter on both.\n\n///\n\n"
        '--8<-- "snippets/tip.md"\n\n```rust\n/// A doc comment, quoted as is.\nfn f() {}\n```\n',
    )
    first_sync(repo)
    top = _results("composite indexes on two columns")[0]
    text = top["text"]
    assert "**details** Composite indexes" in text and "type: tip" not in text
    assert "An index on two columns" in text
    assert "**warning**" in text and "The included block is read too." in text
    assert "/// A doc comment, quoted as is." in text
    assert not [ln for ln in text.split("\n") if ln.startswith("///") and "doc comment" not in ln]
    assert top["start_line"] == 1


def test_docs_chunked_in_worker_processes_get_their_includes(repo: Path) -> None:
    # Past sync's _PARALLEL_DOCS, docs are chunked in worker processes: what the gate read in
    # the main process travels with each doc (the workers read no file and ask no git).
    write(repo, "docs_src/shared.py", "SHARED_VALUE = 42\n")
    for i in range(210):
        write(repo, f"docs/d{i:03}.md", f"# Doc {i}\n\nPage {i}.\n\n{{* ./docs_src/shared.py *}}\n")
    first_sync(repo)
    for i in (0, 209):
        assert "SHARED_VALUE = 42" in _chunk_file(repo, f"docs/d{i:03}.md").read_text()


@pytest.mark.e2e
def test_a_fresh_clone_rechunks_the_docs_an_included_file_changes(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which docs include a file is found from the tree itself, not only from the cache a
    sync leaves: a teammate's fresh clone has no cache, and its first commit that touches
    only an included file must re-chunk the docs that show it."""
    from test_hooks import commit, configured

    tool = configured(repo, tmp_path, monkeypatch)
    write(repo, "docs_src/models.py", CODE + "\n")
    write(repo, "docs_src/nested.md", 'Nested text.\n\n--8<-- "docs_src/deep.txt"\n')
    write(repo, "docs_src/deep.txt", "deep words\n")
    write(repo, "docs/indexes.md", "# Indexes\n\n" + PROSE + "{* ./docs_src/models.py *}\n")
    write(repo, "docs/outer.md", '# Outer\n\n--8<-- "docs_src/nested.md"\n')
    write(repo, "docs/other.md", "# Other\n\nNothing included here.\n")
    first_sync(repo)
    commit_all(repo, "ncx")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    monkeypatch.chdir(clone)
    assert not (clone / ".neocortex/cache").exists()
    # a sync limited to the included file's path, in the fresh clone
    write(clone, "docs_src/models.py", CODE.replace("secret_name", "hidden_name") + "\n")
    ncx("sync", "docs_src/models.py")
    assert "hidden_name" in _chunk_file(clone, "docs/indexes.md").read_text()
    git(clone, "checkout", "--", ".")
    for p in sorted((clone / ".neocortex/cache").rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    # the commit hook, given only a file included two levels down
    subprocess.run([tool, "install"], cwd=clone, check=True, capture_output=True)
    write(clone, "docs_src/deep.txt", "deeper words\n")
    git(clone, "add", "docs_src/deep.txt")
    first = commit(clone)
    assert first.returncode != 0, first.stdout
    assert "ncx: wrote .neocortex/chunks/docs/outer.md" in first.stdout
    assert "indexes.md" not in first.stdout and "other.md" not in first.stdout
    assert "deeper words" in _chunk_file(clone, "docs/outer.md").read_text()
    git(clone, "add", ".neocortex")
    assert commit(clone).returncode == 0
    assert git(clone, "status", "--porcelain") == ""


def test_mkdocs_admonitions_render_in_the_view(repo: Path) -> None:
    # Python-Markdown's `!!! type "Title"` and pymdownx.details' `??? type` / `???+ type`
    # (pydantic-ai writes 272 of them): read as the `///` blocks are, a bold lead over the
    # body, which loses its 4-space indent (so its code fences are code, its lines citable).
    write(
        repo,
        "docs/agents.md",
        "# Agents\n\nAbout agent reuse.\n\n"
        '!!! tip "Agents are designed for reuse"\n'
        "    You can instantiate one agent and use it globally.\n\n"
        "    ```python\n    agent = Agent('model')\n    ```\n\n"
        "    !!! note\n        A note nested in the tip.\n\n"
        '??? warning inline end ""\n    A collapsed warning with an empty title.\n\n'
        "After the blocks.\n\n"
        '```markdown\n!!! note "An example, quoted as is"\n    its body\n```\n',
    )
    first_sync(repo)
    top = _results("instantiate one agent globally reuse")[0]
    lines = top["text"].split("\n")
    assert "**tip** Agents are designed for reuse" in lines
    assert "You can instantiate one agent and use it globally." in lines
    assert "```python" in lines and "agent = Agent('model')" in lines
    assert "**note**" in lines and "A note nested in the tip." in lines
    assert "**warning**" in lines and "A collapsed warning with an empty title." in lines
    assert "After the blocks." in lines
    assert '!!! note "An example, quoted as is"' in lines and "    its body" in lines
    assert top["start_line"] == 1


@pytest.mark.e2e
def test_a_doc_that_arrives_by_pull_is_rechunked_when_its_included_file_changes(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The map is kept by syncs, but a pull or a checkout brings docs no sync here has read:
    the map knows the commit it was made at and takes in the docs changed since (O(change)),
    so a later commit touching only the file a pulled doc includes re-chunks that doc."""
    from test_hooks import commit, configured

    tool = configured(repo, tmp_path, monkeypatch)
    write(repo, "docs_src/models.py", CODE + "\n")
    write(repo, "docs/indexes.md", "# Indexes\n\n" + PROSE + "{* ./docs_src/models.py *}\n")
    first_sync(repo)
    commit_all(repo, "ncx")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    subprocess.run([tool, "install"], cwd=clone, check=True, capture_output=True)
    monkeypatch.chdir(clone)
    ncx("sync")  # the teammate's clone has its map
    assert (clone / ".neocortex/cache/included-by.json").is_file()
    # upstream, a new doc shows the same file
    monkeypatch.chdir(repo)
    write(repo, "docs/tables.md", "# Tables\n\nThe hero table.\n\n{* ./docs_src/models.py *}\n")
    ncx("sync")
    commit_all(repo, "a new doc")
    monkeypatch.chdir(clone)
    git(clone, "pull", "-q", "--no-rebase")
    # a commit touching only the included file re-chunks both docs, the pulled one too
    write(clone, "docs_src/models.py", CODE.replace("secret_name", "alias_name") + "\n")
    git(clone, "add", "docs_src/models.py")
    first = commit(clone)
    assert first.returncode != 0, first.stdout
    assert "ncx: wrote .neocortex/chunks/docs/tables.md" in first.stdout, first.stdout
    assert "alias_name" in _chunk_file(clone, "docs/tables.md").read_text()
    git(clone, "add", ".neocortex")
    assert commit(clone).returncode == 0
    # ... and a code-only commit after that asks the map, which is current again
    write(clone, "src/app.py", "X = 1\n")
    git(clone, "add", "src/app.py")
    assert commit(clone).returncode == 0
    assert git(clone, "status", "--porcelain") == ""
