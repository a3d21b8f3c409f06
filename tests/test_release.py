"""The release shape: one version, honest dependencies, help text that shows what the source
says, and a wheel that carries the bundled model and the templates."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, ncx

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
# distribution name -> the top-level module it provides, where they differ
IMPORT_NAME = {"pyyaml": "yaml", "gitpython": "git", "pystemmer": "Stemmer"}


def _dist(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower().replace("-", "_")


def _module(dist: str) -> str:
    return IMPORT_NAME.get(dist, dist)


def _imports() -> dict[str, set[str]]:
    """Top-level third-party modules imported anywhere in ncx/, with the files importing each."""
    found: dict[str, set[str]] = {}
    for path in (REPO / "ncx").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top != "ncx" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(path.relative_to(REPO).as_posix())
    return found


def test_declared_dependencies_are_exactly_the_imported_ones() -> None:
    project = PYPROJECT["project"]
    runtime = {_module(_dist(r)) for r in project["dependencies"]}
    mcp_extra = {_module(_dist(r)) for r in project["optional-dependencies"]["mcp"]}
    imported = _imports()
    # imported only by the MCP server (and the command that starts it): the `mcp` extra
    mcp_files = {"ncx/agents/mcp_server.py", "ncx/cli/agent.py"}
    needed_runtime = {m for m, files in imported.items() if not files <= mcp_files}
    needed_mcp = set(imported) - needed_runtime
    assert needed_runtime - runtime == set(), "imported by ncx/ but not declared"
    assert runtime - set(imported) == set(), "declared but never imported by ncx/"
    assert needed_mcp <= mcp_extra, "imported by the MCP server but not in the mcp extra"
    assert mcp_extra <= set(imported)


def test_version_has_one_source() -> None:
    from importlib.metadata import version

    literal = re.findall(r"\b\d+\.\d+\.\d+\b", (REPO / "ncx" / "__init__.py").read_text())
    assert literal == [], "the version is written only in pyproject.toml"
    out = ncx("--version")
    assert out.stdout == f"ncx {version('ncx')}\n"
    import ncx as pkg

    assert pkg.__version__ == version("ncx")


def test_changelog_names_the_current_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {PYPROJECT['project']['version']}" in changelog


def _commands(cmd: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix]
    if hasattr(cmd, "commands"):  # a group (typer vendors its own click)
        for name, sub in cmd.commands.items():
            out += _commands(sub, (*prefix, name))
    return out


def test_help_shows_bracketed_text_for_every_command() -> None:
    """Rich markup ate '[mcp]' and '[default …]'; help is plain text, and every bracketed
    piece of every docstring and option help reaches the screen."""
    import typer

    from ncx.cli.main import app

    root = typer.main.get_command(app)
    checked = 0
    for path in _commands(root):
        cmd: Any = root
        for name in path:
            cmd = cmd.commands[name]
        shown = " ".join(ncx(*path, "--help").stdout.split())
        texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]
        for text in texts:
            for bracket in re.findall(r"\[[^\]\n]*\]", text):
                assert " ".join(bracket.split()) in shown, (path, bracket)
                checked += 1
    assert checked >= 8  # ncx[mcp] and the [default …] notes at least
    assert "pip install 'ncx[mcp]'" in " ".join(ncx("mcp", "--help").stdout.split())


@pytest.mark.e2e
def test_version_imports_nothing_heavy() -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ncx", "--version"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("ncx ")
    loaded = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()}
    assert loaded & {"numpy", "git", "yaml", "tokenizers", "model2vec"} == set()


@pytest.mark.e2e
def test_wheel_and_sdist_carry_the_model_and_templates(dist: Path) -> None:
    """The release build (CONTRIBUTING.md 'Releasing'; conftest's `dist`), offline."""
    version = PYPROJECT["project"]["version"]
    wheel = dist / f"ncx-{version}-py3-none-any.whl"
    sdist = dist / f"ncx-{version}.tar.gz"
    assert wheel.is_file() and sdist.is_file()
    names = set(zipfile.ZipFile(wheel).namelist())
    model = REPO / "ncx" / "models" / "ncx-static-v2"
    for f in model.rglob("*"):
        if f.is_file():
            assert f.relative_to(REPO).as_posix() in names
    # templates/ ships as the package ncx.agents.templates
    for f in (REPO / "templates").rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts:
            rel = f.relative_to(REPO / "templates").as_posix()
            assert f"ncx/agents/templates/{rel}" in names, rel
    assert f"ncx-{version}.dist-info/entry_points.txt" in names
    if (
        subprocess.run([sys.executable, "-m", "twine", "--version"], capture_output=True).returncode
        == 0
    ):
        check = subprocess.run(
            [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, check.stdout + check.stderr
