"""Source formats (ncx.sources): reST, notebooks, MDX and MyST read as markdown views
whose citations point at the original file's lines, end to end through sync and retrieve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import commit_all, git, ncx, write

from ncx.errors import BadSource
from ncx.sources import read_view, suffixes
from ncx.sources.mdx import read_mdx
from ncx.sources.myst import read_myst
from ncx.sources.notebook import read_notebook
from ncx.sources.rst import read_rst
from ncx.tree.chunker import ChunkSettings
from ncx.tree.chunkfile import chunk_blocks, load_doc

PROSE = "The scheduler places each task on a node with free resources and retries on failure. " * 5

RST = f"""\
:orphan:

.. _top-label:

=============
Cluster Guide
=============

{PROSE}

.. toctree::
   :maxdepth: 2

   install
   usage

Installing
==========

Install with :ref:`the installer <install-ref>` and call :func:`ray.init` or
:class:`~ray.job.JobConfig`. See `the site <https://example.com>`_.

.. note::
   Nodes need port 6379 open.

.. code-block:: python
   :caption: start.py

   import ray
   ray.init()

Run this::

    ray start --head

.. This is a comment
   that spans two lines.

Tuning
------

{PROSE}
"""


def lines_of(text: str, a: int, b: int) -> str:
    return "\n".join(text.split("\n")[a - 1 : b])


def test_rst_view_sections_roles_code_and_drops() -> None:
    view = read_rst(RST)
    text = view.text
    assert "# Cluster Guide" in text.split("\n")
    assert "## Installing" in text.split("\n") and "### Tuning" in text.split("\n")
    assert "the installer" in text and ":ref:" not in text
    assert "`ray.init`" in text and "`JobConfig`" in text and "the site" in text
    assert "**Note:**" in text and "port 6379" in text
    assert "```python\nimport ray\nray.init()\n```" in text
    assert "Run this:" in text and "```\nray start --head\n```" in text
    assert "toctree" not in text and "maxdepth" not in text and "install\n" not in text
    assert "comment" not in text and "top-label" not in text and ":orphan:" not in text
    assert ":caption:" not in text


def test_rst_adornment_levels_follow_first_appearance() -> None:
    text = "Top\n~~~\n\nbody\n\nSub\n***\n\nbody\n\nSub two\n*******\n\nNext\n~~~~\n"
    heads = [line for line in read_rst(text).text.split("\n") if line.startswith("#")]
    assert heads == ["# Top", "## Sub", "## Sub two", "# Next"]


def test_rst_chunks_cite_the_original_lines() -> None:
    doc = load_doc("docs/guide.rst", RST.encode())
    files = chunk_blocks(doc, ChunkSettings(max_tokens=120, min_tokens=10, overlap_tokens=0))
    assert [f.chunk.trail for f in files][:2] == [
        ("Cluster Guide",),
        ("Cluster Guide", "Installing"),
    ]
    for f in files:
        cited = lines_of(RST, f.chunk.start_line, f.chunk.end_line)
        first_words = f.chunk.text.split("\n")[0].lstrip("# ").split()[:2]
        assert " ".join(first_words) in cited, (f.chunk.name, cited)
    install = next(f for f in files if f.chunk.trail[-1] == "Installing")
    assert "ray start --head" in lines_of(RST, install.chunk.start_line, install.chunk.end_line)


def test_broken_rst_still_reads() -> None:
    broken = (
        ".. code-block::\n\nno indent\n\nTitle\n=\n\n.. note::\n\n``unclosed :ref:`x\n====\n\n"
        "# a shell comment left unindented\n"
    )
    view = read_rst(broken)
    assert "no indent" in view.text and "unclosed" in view.text
    assert "\\# a shell comment" in view.text  # prose, not a markdown heading
    assert len(view.lines or ()) == len(view.text.split("\n"))


def notebook(cells: list[dict[str, object]], **extra: object) -> str:
    nb = {
        "cells": cells,
        "metadata": {"kernelspec": {"language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
        **extra,
    }
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def md_cell(text: str) -> dict[str, object]:
    return {"cell_type": "markdown", "metadata": {}, "source": text.splitlines(keepends=True)}


def code_cell(text: str, outputs: list[object] | None = None) -> dict[str, object]:
    return {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": outputs or [],
        "source": text.splitlines(keepends=True),
    }


NB = notebook(
    [
        md_cell("# Tuning a model\n\n" + PROSE),
        code_cell(
            "import ray\nfrom ray import tune\n",
            [{"output_type": "stream", "name": "stdout", "text": ["SECRET OUTPUT LOG\n"]}],
        ),
        md_cell("## Search spaces\n\n(spaces)=\n\nUse {func}`tune.grid_search` here. " + PROSE),
        code_cell("space = {'lr': tune.loguniform(1e-4, 1e-1)}\nprint(space)"),
    ]
)


def test_notebook_view_keeps_cells_drops_outputs() -> None:
    view = read_notebook(NB, "nb.ipynb")
    assert "# Tuning a model" in view.text and "## Search spaces" in view.text
    assert "```python\nimport ray\nfrom ray import tune\n```" in view.text
    assert "SECRET OUTPUT LOG" not in view.text and "kernelspec" not in view.text
    assert "(spaces)=" not in view.text and "`tune.grid_search`" in view.text


def test_notebook_chunks_cite_stored_lines_and_cells() -> None:
    doc = load_doc("nb.ipynb", NB.encode())
    files = chunk_blocks(doc, ChunkSettings(max_tokens=110, min_tokens=10, overlap_tokens=0))
    assert doc.view is not None
    for f in files:
        cited = lines_of(NB, f.chunk.start_line, f.chunk.end_line)
        last = f.chunk.text.strip("`\n").split("\n")[-1].strip("`")
        assert json.dumps(last.split(" ")[0])[1:-1] in cited, (f.chunk.name, cited)
    spaces = next(f for f in files if "Search spaces" in f.chunk.trail)
    raw_line = NB.split("\n")[spaces.chunk.start_line - 1]
    assert "## Search spaces" in raw_line
    cells = doc.view.cell_span(1, len(doc.view.text.split("\n")))
    assert cells == "1-4"


def test_minified_notebook_cites_the_source_line() -> None:
    text = json.dumps({"cells": [md_cell("# T\n\nSome text here.\n")], "nbformat": 4})
    view = read_notebook(text, "m.ipynb")
    assert "Some text here." in view.text and set(view.lines or ()) == {1}


def test_notebook_not_json_names_the_file_and_the_fix() -> None:
    with pytest.raises(BadSource) as exc:
        read_notebook('{"cells": [', "bad.ipynb")
    assert exc.value.path == "bad.ipynb" and "not JSON" in exc.value.message
    assert "Jupyter" in (exc.value.hint or "")
    with pytest.raises(BadSource, match="no `cells`"):
        read_notebook("[1, 2]", "list.ipynb")


MDX = """\
---
title: Deploying
---
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
export const meta = {
  x: 1,
};

# Deploying

{/* editors: keep this short */}

<Tabs groupId="os">
<TabItem value="mac" label="macOS">

Run `brew install thing` to install it on a Mac.

</TabItem>
</Tabs>

```jsx
import Tabs from '@theme/Tabs';
<Tabs />
```
"""


def test_mdx_drops_imports_and_jsx_keeps_markdown() -> None:
    text = read_mdx(MDX).text
    assert "import Tabs" in text  # only inside the code fence
    assert text.count("import Tabs") == 1 and "export const" not in text
    assert "<TabItem" not in text and "</Tabs>" not in text and "editors" not in text
    assert "**macOS**" in text and "brew install thing" in text
    doc = load_doc("docs/deploy.mdx", MDX.encode())
    assert doc.title == "Deploying"
    files = chunk_blocks(doc, ChunkSettings())
    f = files[0]
    assert "brew install thing" in lines_of(MDX, f.chunk.start_line, f.chunk.end_line)


MYST = """\
(install-label)=
# Install

:::{note}
Needs Python 3.9.
:::

```{code-block} bash
:caption: shell

pip install ray
```

```{toctree}
a
b
```

```{mermaid}
graph LR; A-->B
```

See {ref}`the guide <guide>` and {class}`ray.actor.ActorClass`.

```python
(not_a_label)=
x = {ref}`kept verbatim in code`
```
"""


def test_myst_directives_roles_and_labels() -> None:
    view = read_myst(MYST)
    text = view.text
    assert "(install-label)=" not in text and "**Note:**" in text and "Python 3.9" in text
    assert "```bash\npip install ray\n```" in text and ":caption:" not in text
    assert "toctree" not in text and "\na\n" not in text
    assert "```mermaid\ngraph LR; A-->B\n```" in text
    assert "See the guide and `ray.actor.ActorClass`." in text
    assert "(not_a_label)=" in text and "{ref}`kept verbatim in code`" in text
    for view_no, line in enumerate(text.split("\n"), start=1):
        src = MYST.split("\n")[view.source_span(view_no, view_no)[0] - 1]
        if line.strip() and not line.startswith(("**", "```")):
            assert line.split()[0].strip("`") in src, (line, src)


ADOC = f"""\
= Operator Manual
:toc: left
:icons: font

{PROSE}

// a comment nobody reads

== Installing

See <<tuning,the tuning section>> and link:https://example.com[the site].

NOTE: Port 6379 must be open.

[source,bash]
----
ray start --head
----

[[tuning]]
=== Tuning

{PROSE}
"""


def test_asciidoc_sections_code_and_citations() -> None:
    from ncx.sources.asciidoc import read_asciidoc

    view = read_asciidoc(ADOC)
    lines = view.text.split("\n")
    assert "# Operator Manual" in lines and "## Installing" in lines and "### Tuning" in lines
    assert ":toc:" not in view.text and "comment" not in view.text and "[[tuning]]" not in view.text
    assert "See the tuning section and the site." in view.text
    assert "**Note:** Port 6379 must be open." in view.text
    assert "```bash\nray start --head\n```" in view.text
    doc = load_doc("docs/manual.adoc", ADOC.encode())
    for f in chunk_blocks(doc, ChunkSettings(max_tokens=120, min_tokens=10, overlap_tokens=0)):
        cited = lines_of(ADOC, f.chunk.start_line, f.chunk.end_line)
        assert f.chunk.text.split("\n")[-1].strip("`*")[:20] in cited, (f.chunk.name, cited)


def test_plain_markdown_view_is_the_file() -> None:
    text = "# Title\n\nPlain text with {braces} and a dict {'a': 1}.\n"
    view = read_view("a.md", text)
    assert view.text == text and view.lines is None


def test_workflow_template_watches_every_source_suffix() -> None:
    root = Path(__file__).resolve().parent.parent
    for tpl in ("templates/github/ncx-review.yml",):
        body = (root / tpl).read_text()
        for suffix in suffixes():
            assert f'"**/*{suffix}"' in body, (tpl, suffix)


# --- end to end ---------------------------------------------------------------------------------


def big_notebook(mb: int) -> str:
    blob = "A" * 1_000_000
    outs = [{"output_type": "display_data", "data": {"image/png": blob}, "metadata": {}}] * mb
    return notebook([md_cell("# Heavy\n\nplots"), code_cell("plot()", outs)])


def test_sync_reads_every_format_reports_broken_files_and_goes_on(repo: Path) -> None:
    write(repo, "docs/guide.rst", RST)
    write(repo, "docs/tune.ipynb", NB)
    write(repo, "docs/deploy.mdx", MDX)
    write(repo, "docs/install.md", MYST + "\n" + PROSE + "\n")
    write(repo, "docs/broken.ipynb", '{"cells": [ {"cell_type": "markdown", ')
    write(repo, "docs/heavy.ipynb", big_notebook(50))
    write(repo, "docs/manual.adoc", ADOC)
    write(repo, "docs/notes.org", "* Notes\n\ntext\n")
    commit_all(repo)
    ncx("init")
    proc = ncx("sync", "--json", ok=False)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["formats"]["rst"]["docs"] == 1 and report["formats"]["rst"]["chunks"] >= 1
    assert report["formats"]["notebook"]["docs"] == 3
    assert report["formats"]["notebook"]["chunks"] >= 1  # the good notebook went through
    assert report["formats"]["mdx"]["docs"] == 1 and report["formats"]["markdown"]["docs"] == 1
    problems = {p["path"]: p for p in report["problems"]}
    assert set(problems) == {"docs/broken.ipynb", "docs/heavy.ipynb"}
    assert "not JSON" in problems["docs/broken.ipynb"]["message"]
    assert "--clear-output" in problems["docs/heavy.ipynb"]["hint"]
    assert report["skipped"] == [
        {"path": "docs/notes.org", "reason": "Org mode is not read by ncx yet"}
    ]
    assert report["formats"]["asciidoc"] == {"docs": 1, "chunks": 2}
    assert (repo / ".neocortex/chunks/docs/guide.rst.md").is_file()
    assert (repo / ".neocortex/chunks/docs/tune.ipynb.md").is_file()

    human = ncx("sync", ok=False)
    assert "skipped docs/notes.org: Org mode" in human.stderr
    assert "docs/broken.ipynb" in human.stderr and "docs/heavy.ipynb" in human.stderr
    status = ncx("status").stdout
    assert "1 rst" in status and "3 notebook" in status and "1 mdx" in status
    assert "not indexed: docs/notes.org" in status
    st = json.loads(ncx("status", "--json").stdout)
    assert st["formats"] == {"asciidoc": 1, "markdown": 1, "mdx": 1, "notebook": 3, "rst": 1}
    assert st["skipped"] == [
        {"path": "docs/notes.org", "reason": "Org mode is not read by ncx yet"}
    ]


def test_retrieve_cites_rst_and_notebook_lines(repo: Path) -> None:
    write(repo, "docs/guide.rst", RST)
    write(repo, "docs/tune.ipynb", NB)
    commit_all(repo)
    ncx("init")
    ncx("sync")
    hits = [
        json.loads(x)
        for x in ncx(
            "retrieve", "--json", "-k", "10", "ray start head loguniform"
        ).stdout.splitlines()
    ]
    by_path: dict[str, list[dict[str, object]]] = {}
    for h in hits:
        by_path.setdefault(str(h["path"]), []).append(h)
    assert {"docs/guide.rst", "docs/tune.ipynb"} <= set(by_path)
    files = {"docs/guide.rst": RST, "docs/tune.ipynb": NB}
    for path, rows in by_path.items():
        for h in rows:
            cited = lines_of(files[path], int(h["start_line"]), int(h["end_line"]))  # type: ignore[call-overload]
            first = str(h["text"]).strip("\n").split("\n")[0].lstrip("#` ").split(" ")[0]
            assert first.strip("`") in cited, (path, h["start_line"], first)
    assert all("cell" in h for h in by_path["docs/tune.ipynb"])
    frame = ncx("assemble", "--task", "tune loguniform search spaces", "--budget", "1500").stdout
    assert "docs/tune.ipynb:" in frame and "— cell " in frame


def test_skip_formats_in_the_manifest_switches_a_format_off(repo: Path) -> None:
    write(repo, "docs/guide.rst", RST)
    write(repo, "docs/tune.ipynb", NB)
    commit_all(repo)
    ncx("init")
    ncx("sync")
    manifest = repo / ".neocortex/manifest.json"
    data = json.loads(manifest.read_text())
    data["sources"]["skip_formats"] = ["ipynb"]
    manifest.write_text(json.dumps(data))
    report = json.loads(ncx("sync", "--json").stdout)
    assert set(report["formats"]) == {"rst"}
    assert report["skipped"][0]["path"] == "docs/tune.ipynb"
    assert "switched off" in report["skipped"][0]["reason"]
    assert not (repo / ".neocortex/chunks/docs/tune.ipynb.md").exists()
    data["sources"]["skip_formats"] = ["pdf"]
    manifest.write_text(json.dumps(data))
    bad = ncx("sync", ok=False)
    assert bad.returncode != 0 and "unknown format" in bad.stderr and "notebook" in bad.stderr


def test_sync_of_every_format_is_deterministic(repo: Path) -> None:
    write(repo, "docs/guide.rst", RST)
    write(repo, "docs/tune.ipynb", NB)
    write(repo, "docs/deploy.mdx", MDX)
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    again = ncx("sync").stderr
    assert "nothing written" in again
    assert not subprocess_status(repo)


def subprocess_status(root: Path) -> str:
    import subprocess

    return subprocess.run(
        ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


def chunk_bytes(root: Path, folder: str) -> dict[str, bytes]:
    """{chunk name + ".md": its block} of the doc's chunk file."""
    from ncx.store import split_chunk_file

    data = (root / ".neocortex/chunks" / (folder + ".md")).read_bytes()
    out = {}
    for block in split_chunk_file(data, path=folder):
        cid = block.split(b"\n", 2)[1].decode().removeprefix("id: ")
        out[cid.rpartition("#")[2] + ".md"] = block
    return out


def test_rst_and_notebook_edits_rewrite_only_their_section(repo: Path) -> None:
    sections = "".join(f"Part {n}\n======\n\n{PROSE} Part {n}.\n\n" for n in range(1, 5))
    write(repo, "docs/guide.rst", "Guide\n#####\n\n" + PROSE + "\n\n" + sections)
    cells = [md_cell(f"## Step {n}\n\n{PROSE} Step {n}.") for n in range(1, 5)]
    write(repo, "docs/nb.ipynb", notebook([md_cell("# Notebook\n\n" + PROSE), *cells]))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    rst_before, nb_before = chunk_bytes(repo, "docs/guide.rst"), chunk_bytes(repo, "docs/nb.ipynb")
    assert len(rst_before) == 5 and len(nb_before) == 5
    write(
        repo,
        "docs/guide.rst",
        "Guide\n#####\n\n" + PROSE + "\n\n" + sections.replace("Part 3.", "Part 3 edited."),
    )
    # A new cell on top and an edit in one: cell numbers move, chunk files must not.
    write(
        repo,
        "docs/nb.ipynb",
        notebook(
            [
                code_cell("import ray"),
                md_cell("# Notebook\n\n" + PROSE),
                *cells[:2],
                md_cell(f"## Step 3\n\n{PROSE} Step 3 edited."),
                cells[3],
            ]
        ),
    )
    ncx("sync")
    rst_after, nb_after = chunk_bytes(repo, "docs/guide.rst"), chunk_bytes(repo, "docs/nb.ipynb")
    assert [k for k in rst_before if rst_before[k] != rst_after.get(k)] == ["guide--part-3.md"]
    changed_nb = [k for k in nb_after if nb_before.get(k) != nb_after[k]]
    # The new code cell joins the intro (too small to stand alone); steps 1, 2 and 4 stay.
    assert sorted(changed_nb) == ["notebook--step-3.md", "notebook.md"]
    assert set(nb_after) == set(nb_before)


def test_review_and_hook_follow_rst_docs(repo: Path) -> None:
    write(repo, "docs/guide.rst", RST)
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write(
        repo,
        "docs/guide.rst",
        RST.replace("Nodes need port 6379 open.", "Nodes need port 6380 open."),
    )
    git(repo, "add", "docs/guide.rst")
    hook = ncx("hook", "sync", ok=False)
    assert (
        hook.returncode == 1 and ".neocortex/chunks/docs/guide.rst.md" in hook.stdout + hook.stderr
    )
    commit_all(repo, "feature")
    review = ncx("review", "main..feature").stdout
    assert "`docs/guide.rst`" in review and "Cluster Guide > Installing" in review


def test_init_skip_format_switches_notebooks_off(repo: Path) -> None:
    write(repo, "docs/guide.rst", RST)
    write(repo, "docs/tune.ipynb", NB)
    commit_all(repo)
    ncx("init", "--skip-format", "ipynb")
    manifest = json.loads((repo / ".neocortex/manifest.json").read_text())
    assert manifest["sources"]["skip_formats"] == ["notebook"]
    report = json.loads(ncx("sync", "--json").stdout)
    assert set(report["formats"]) == {"rst"} and report["skipped"][0]["path"] == "docs/tune.ipynb"
    bad = ncx("init", "--skip-format", "pdf", ok=False)
    assert (
        bad.returncode != 0
        and "unknown source format 'pdf'" in bad.stderr
        and "notebook" in bad.stderr
    )
