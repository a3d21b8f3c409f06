"""Shared fixtures: real temp git repos, a tiny model2vec model built on the spot, the CLI."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# The checkout's ncx as a command, for what must run in its own process (pre-commit hooks,
# the MCP server, start-up): `python -m ncx` with the checkout first on PYTHONPATH, so an
# edit is tested without reinstalling. Everything else runs in process (see `ncx`).
NCX_CMD = [sys.executable, "-m", "ncx"]
NCX_SHELL = f"{sys.executable} -m ncx"

_WORDS = sorted(
    set(
        re.findall(
            r"[a-z]+",
            """the a of to and in is it for on with as be by this that from at or an are not was
            install installation run pip python package config configuration setting settings token
            refresh auth authentication login password user users session cookie api request response
            error errors retry timeout cache database query index search retrieve retrieval embed
            vector chunk chunks memory memories doc docs document section heading code block test
            tests git commit branch merge hook hooks model models deploy server client build release
            version update usage example examples license intro overview guide setup linux windows mac
            fast slow speed performance budget frame context task agent learning learned fix bug bugs
            jwt http https url path file files folder read write delete rename move data schema field""",
        )
    )
)


def build_tiny_model(folder: Path, *, dim: int = 32, seed: int = 0) -> Path:
    """A real model2vec model (WordLevel vocabulary, random vectors), saved to `folder`."""
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocab = {"[UNK]": 0, "[PAD]": 1}
    for w in _WORDS:
        vocab[w] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    vectors = np.random.default_rng(seed).standard_normal((len(vocab), dim)).astype(np.float32)
    StaticModel(vectors=vectors, tokenizer=tok, normalize=True).save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def other_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("other-model"), seed=1)


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(var, "ncx test")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(var, "test@ncx.invalid")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # The checkout's modules compiled once, not by every `python -m ncx` the tests start: a
    # shell with PYTHONDONTWRITEBYTECODE set made each such process compile ~100 modules
    # (~0.1-0.3 s a process; an installed wheel has its bytecode from the install).
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    # as after an install: this environment's console scripts (ncx, pre-commit) on PATH
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NCX_MODEL_CACHE", str(tmp_path / "model-cache"))
    for var in list(os.environ):
        if var.startswith("NCX_") and var != "NCX_MODEL_CACHE":
            monkeypatch.delenv(var)


@pytest.fixture(autouse=True)
def _no_detached_warming(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process commands do not start the detached build that `ncx sync` and the git
    and agent hooks start (ncx.query.warming): one racing a test's own builds and edits makes
    what the test compares depend on timing. Tests of warming itself are marked `warm`."""
    if request.node.get_closest_marker("warm") is None:
        import ncx.query.warm as warm

        monkeypatch.setattr(warm, "warm_in_background", warm.cache_writable)


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def commit_all(root: Path, msg: str = "commit") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", msg)


def first_sync(root: Path) -> None:
    """Commit what the test wrote, then a user's first `ncx init` and `ncx sync` (in the
    current folder: the `repo` fixture's)."""
    commit_all(root)
    ncx("init")
    ncx("sync")


def shared_pre_commit_home(tmp_path: Path) -> Path:
    """One PRE_COMMIT_HOME for the session (beside the tests' own tmp_path folders, under
    pytest's base folder): pre-commit's store (its sqlite db, the environments of non-local
    hooks) is a cache keyed by config that every test may share; one per test cost each
    test its own store set-up and tested nothing more."""
    home = tmp_path.parent / "pre-commit-home-shared"
    home.mkdir(exist_ok=True)
    return home


# What the release build's copy of the checkout leaves out: git's and the caches' folders, and
# a build/ whose stale files setuptools would pack into the wheel (a package removed from the
# find rules would then still be shipped, and the installed tier would pass where a user's
# install fails).
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
    ".hypothesis", "bench-results",
)  # fmt: skip


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release build, once per session: `python -m build` (the sdist, then the wheel
    built from that sdist, as CONTRIBUTING.md "Releasing" makes them), offline, from a copy
    of the checkout. The folder holds exactly one `ncx-*.whl` and one `ncx-*.tar.gz`; the
    release tests read them and the installed tier installs the wheel (building it twice
    cost a build and tested nothing more)."""
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    src = tmp_path_factory.mktemp("dist-src") / "ncx"
    shutil.copytree(REPO, src, ignore=NOT_SOURCE, symlinks=True)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), "."],
        cwd=src,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    # setuptools' banner for a folder of package data it is not told is a package
    assert "would be ignored" not in proc.stdout + proc.stderr
    return out


class Templates:
    """Trees a fixture sets up the same way for every test (commits, `ncx init` and `ncx
    sync`, `pre-commit install`): built once, in the first test that asks, then copied.

    A copy is what `cp -a` of the project makes: the same commits, index, config, hooks and
    `.neocortex/` (caches included, which then see new inodes and re-check by content, as
    they must after any copy). Nothing of the tree names its folder (the hooks and the
    merge driver name the interpreter only), so a copy works where it lands."""

    def __init__(self, store: Path) -> None:
        self._store = store
        self._built: dict[str, Path] = {}

    def tree(
        self,
        key: str,
        root: Path,
        monkeypatch: pytest.MonkeyPatch,
        build: Callable[[Path], object],
    ) -> Path:
        """`root` (the `repo` fixture's empty repository, the cwd) as `build(root)` leaves
        it; `key` names the recipe (one key, one `build`)."""
        saved = self._built.get(key)
        if saved is None:
            build(root)
            saved = self._store / key
            shutil.copytree(root, saved, symlinks=True)
            self._built[key] = saved
            return root
        shutil.rmtree(root)
        shutil.copytree(saved, root, symlinks=True)
        monkeypatch.chdir(root)  # the old folder is gone: the cwd is the copy
        # The index's stat data are the original's: refreshed, git sees the copy's files as
        # the clean checkout they are (stale, git takes them for edits, and e.g. a sparse
        # checkout keeps them where it would have removed them).
        subprocess.run(["git", "-C", str(root), "update-index", "-q", "--refresh"], check=False)
        return root


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Templates:
    return Templates(tmp_path_factory.mktemp("templates"))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_model: Path) -> Iterator[Path]:
    """An empty git repo as the cwd, with NCX_EMBEDDING_MODEL set to the tiny model."""
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "-c", "init.defaultBranch=main", "init", "-q")
    monkeypatch.chdir(root)
    monkeypatch.setenv("NCX_EMBEDDING_MODEL", str(tiny_model))
    yield root


@functools.cache
def _click_command() -> Any:
    """The typer app as the click command typer's own test runner builds on every call: built
    once (turning 28 commands' signatures into click parameters took a quarter of the
    in-process tests' time)."""
    import typer.main

    from ncx.cli.main import app

    return typer.main.get_command(app)


def _in_process(
    args: tuple[str, ...], cwd: Path | None, input: str | None, env: dict[str, str] | None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI of the checkout in this process: typer's runner, cwd and env set for the call.

    An exception that escapes the CLI's error edge is a traceback a user would see: it is put
    on stderr with exit code 1, as the console script would."""
    import traceback

    from click.testing import CliRunner

    before = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(
            _click_command(), list(args), input=input, env=env, catch_exceptions=True
        )
    finally:
        os.chdir(before)
    stderr = result.stderr
    code = result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        exc = result.exception
        stderr += "Traceback (most recent call last):\n" + "".join(
            traceback.format_exception(type(exc), exc, exc.__traceback__)
        )
        code = 1
    return subprocess.CompletedProcess(["ncx", *args], code, result.stdout, stderr)


def ncx(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
    ok: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run `ncx ARGS` from the checkout, in process; assert success unless ok=False."""
    proc = _in_process(args, cwd, input, env)
    if ok:
        assert proc.returncode == 0, (
            f"ncx {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def json_lines(*args: str, cwd: Path | None = None) -> list[dict[str, Any]]:
    """What `ncx ARGS` prints as JSON lines (`retrieve --json`), a dict a line."""
    return [json.loads(x) for x in ncx(*args, cwd=cwd).stdout.splitlines()]


def ncx_proc(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
    ok: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m ncx ARGS` from the checkout in a new process (start-up, signals, concurrency)."""
    proc = subprocess.run(
        [*NCX_CMD, *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if ok:
        assert proc.returncode == 0, (
            f"ncx {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def mcp_session(
    cwd: Path,
    body: Callable[[Any], Awaitable[None]],
    *,
    command: tuple[str, list[str]] | None = None,
    env: dict[str, str] | None = None,
) -> None:
    """Start `ncx mcp` (or `command`) in `cwd` with the official MCP client over stdio,
    initialise the session and run `body(session)` in it; skipped without the SDK."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    cmd, args = command or (NCX_CMD[0], [*NCX_CMD[1:], "mcp"])
    params = StdioServerParameters(
        command=cmd, args=args, cwd=str(cwd), env=dict(os.environ) if env is None else env
    )

    async def run() -> None:
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write_),
                ClientSession(read, write_) as s,
            ):
                await s.initialize()
                await body(s)

    anyio.run(run)


def run_script(script: Path, text: str, *, cwd: Path | None = None, timeout: int = 300) -> None:
    """Write `text` to `script` and run it in a new interpreter, the checkout first on the path
    (so worker processes it starts by spawning import this ncx too); it must exit 0."""
    script.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, f"{script.name} -> {proc.returncode}\n{proc.stderr[-2000:]}"


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` read-only as a user meets it: a read-only bind mount where this runs as root
    (root writes through modes), the write bits off otherwise."""
    if os.geteuid() == 0:
        done = subprocess.run(
            ["mount", "--bind", "-o", "ro", str(folder), str(folder)], capture_output=True
        )
        if done.returncode != 0:
            pytest.skip("root, and no read-only bind mount to be had here")
        try:
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
        return
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
    for p in modes:
        p.chmod(modes[p] & ~0o222)
    try:
        yield
    finally:
        for p, m in modes.items():
            p.chmod(m)


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


# --- tiers --------------------------------------------------------------------------------------
# The default run is in process and fast. The end-to-end tier (`-m e2e` tests, run with --e2e)
# drives ncx the way users meet it: the real pre-commit through `git commit`, the MCP server
# over stdio, a fresh interpreter's start-up. CI runs both.


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--e2e", action="store_true", help="also run the end-to-end tier (e2e marker)")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject's addopts): the fast tier on every core; a run with `--e2e`
    (both tiers, CI's) serially, since under a parallel run's load one MCP test once got no
    reply (CONTRIBUTING.md). An explicit `-n 2` runs either tier on two workers."""
    return 0 if config.getoption("--e2e") else os.cpu_count() or 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--e2e"):
        return
    keep = [i for i in items if i.get_closest_marker("e2e") is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i.get_closest_marker("e2e")])
        items[:] = keep
