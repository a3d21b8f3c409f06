"""Robustness under hostile input (issue 29): crashes, hangs and costs that grow faster than
the input, and the smaller cases (encodings, line ends, LFS pointers, conflict markers).

Every test drives the real CLI (in process, or a subprocess where a hang or a signal is the
point) on a real git repository."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import NCX_CMD, commit_all, ncx, read_only, write

SEC = " ".join(["The service reads its settings from the config file at start."] * 6)
TRACE = "Traceback (most recent call last)"
PROMPT = json.dumps({"prompt": "how does the service read its settings from the config file"})


def _init(repo: Path) -> None:
    write(repo, "docs/guide.md", "# Guide\n\n" + SEC + "\n\n## Install\n\n" + SEC + "\n")
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(repo, "ncx")


def _results(*args: str, cwd: Path | None = None) -> list[dict]:
    out = ncx("retrieve", *args, "--json", cwd=cwd).stdout
    return [json.loads(line) for line in out.splitlines()]


# --- deep nesting -------------------------------------------------------------------------


def _deep_notebook() -> str:
    deep = "[" * 1000 + '"leaf"' + "]" * 1000
    cell = {"cell_type": "markdown", "metadata": {}, "source": ["# Hi\n", "text"]}
    meta = '"metadata": {"deep": ' + deep + '}, "nbformat": 4, "nbformat_minor": 5'
    return '{"cells": [' + json.dumps(cell) + "], " + meta + "}"


def _deep_myst(depth: int = 500) -> str:
    lines = ["# Top", ""]
    lines += [":" * (depth + 3 - i) + "{note}" for i in range(depth)]
    lines.append("the innermost words")
    lines += [":" * (i + 4) for i in range(depth)]
    return "\n".join(lines) + "\n"


def _deep_rst(depth: int = 500) -> str:
    lines = ["Top", "===", ""]
    for i in range(depth):
        lines += ["   " * i + ".. note::", ""]
    lines.append("   " * depth + "the innermost words")
    return "\n".join(lines) + "\n"


def _deep_eval_rst(depth: int = 400) -> str:
    return "# Top\n\n```{eval-rst}\n" + _deep_rst(depth) + "```\n"


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("deep.ipynb", _deep_notebook),
        ("deep.md", _deep_myst),
        ("deep.rst", _deep_rst),
        ("evalrst.md", _deep_eval_rst),
    ],
)
def test_a_deeply_nested_doc_is_one_problem_not_the_whole_repo(
    repo: Path, name: str, make: object
) -> None:
    _init(repo)
    write(repo, f"docs/{name}", make())  # type: ignore[operator]
    commit_all(repo, "deep")
    for args in (("sync",), ("status",), ("check",)):
        proc = ncx(*args, ok=False)
        assert TRACE not in proc.stderr and "too deeply nested to process" not in proc.stderr
        assert "run `ncx check` to find the file" not in proc.stderr  # the circular hint
    # The rest of the repository is synced and answers.
    assert any(r["source_path"] == "docs/guide.md" for r in _results("service settings"))
    proc = ncx("check", ok=False)
    if name.endswith(".ipynb"):
        assert proc.returncode == 1 and f"docs/{name}" in proc.stdout + proc.stderr
    else:
        # Read as far as a real doc nests; deeper content kept as text, so it is searchable.
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert any(r["source_path"] == f"docs/{name}" for r in _results("innermost words"))


# --- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize("var", ["NCX_HOOK_BUDGET", "NCX_HOOK_TIMEOUT"])
def test_infinite_hook_settings_are_a_warning_not_a_traceback(repo: Path, var: str) -> None:
    _init(repo)
    proc = ncx("agent-hook", "prompt", input=PROMPT, env={var: "inf"})
    assert TRACE not in proc.stderr and "Error" not in proc.stderr
    assert f"{var}='inf'" in proc.stderr and "using" in proc.stderr
    assert "service" in proc.stdout.lower()  # answered with the default


@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_non_finite_weights_are_refused_naming_the_variable(repo: Path, value: str) -> None:
    _init(repo)
    proc = ncx("retrieve", "service settings", "--json", env={"NCX_W_DENSE": value}, ok=False)
    assert proc.returncode == 2 and TRACE not in proc.stderr
    assert "NCX_W_DENSE" in proc.stderr and "finite" in proc.stderr
    assert "NaN" not in proc.stdout


# --- encodings and line ends ------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_a_doc_with_a_byte_order_mark_is_read_and_cited(repo: Path, codec: str) -> None:
    _init(repo)
    text = "# Wide\n\nThe frobnicator install guide for wide text.\n"
    data = text.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    (repo / "docs/wide.md").write_bytes(data)
    commit_all(repo, "wide")
    proc = ncx("sync", ok=False)
    assert proc.returncode == 0, proc.stderr
    assert "binary" not in proc.stderr
    top = _results("frobnicator install", "--k", "1")[0]
    assert top["source_path"] == "docs/wide.md" and top["start_line"] == 1


def test_the_binary_hint_names_a_command_that_exists(repo: Path) -> None:
    _init(repo)
    (repo / "docs/blob.md").write_bytes(b"# x\n\x00\x01\x02 binary\n")
    commit_all(repo, "blob")
    # (a run naming it fails; the whole tree's lists it as not indexed: decisions.md §43)
    proc = ncx("sync", "docs/blob.md", ok=False)
    assert proc.returncode == 1 and "docs/blob.md" in proc.stderr
    assert "ncx sync --exclude" not in proc.stderr and "ncx init --exclude" in proc.stderr


def test_a_cr_only_doc_keeps_its_citations(repo: Path) -> None:
    _init(repo)
    lines = ["# Classic", "", "The frobnicator reads its dial at start.", "", "## Other", ""]
    lines += [SEC, ""]
    (repo / "docs/mac.md").write_bytes("\r".join(lines).encode())
    commit_all(repo, "mac")
    ncx("sync")
    top = _results("frobnicator dial", "--k", "1")[0]
    assert top["source_path"] == "docs/mac.md"
    assert (top["start_line"], top["end_line"]) == (1, 7)  # lines as an editor counts them


# --- files that are not docs ----------------------------------------------------------------


# e2e: a fresh process per command (a hang must stay a timeout in a child, not this run's)
@pytest.mark.e2e
def test_a_doc_replaced_by_a_fifo_never_hangs(repo: Path) -> None:
    _init(repo)
    fifo = repo / "docs/guide.md"
    fifo.unlink()
    os.mkfifo(fifo)
    for args in (("sync",), ("check",), ("retrieve", "service settings")):
        proc = subprocess.run(
            [*NCX_CMD, *args], capture_output=True, text=True, timeout=60, cwd=repo
        )
        assert TRACE not in proc.stderr, proc.stderr
        if args[0] != "retrieve":
            assert proc.returncode == 1 and "docs/guide.md" in proc.stderr + proc.stdout
            assert "not a regular file" in proc.stderr + proc.stdout
        else:
            assert proc.returncode == 0 and "docs/guide.md" in proc.stdout


# e2e: a fresh process per command (a hang must stay a timeout in a child, not this run's)
@pytest.mark.e2e
def test_a_unit_file_replaced_by_a_fifo_never_hangs(repo: Path) -> None:
    # The same for what ncx itself wrote: a chunk file or a memory's .npy turned into a FIFO
    # (a hostile checkout, a tool gone wrong) hung retrieve's cache build and check for
    # ever, waiting for a writer.
    import shutil

    _init(repo)
    ncx("memory", "add", "The service settings live in config.toml.")
    npy = next((repo / ".neocortex/memories").glob("*.npy"))
    for path in (repo / ".neocortex/chunks/docs/guide.md", npy):
        path.unlink()
        os.mkfifo(path)
    shutil.rmtree(repo / ".neocortex/cache", ignore_errors=True)
    for args in (("retrieve", "service settings"), ("check",), ("sync",)):
        proc = subprocess.run(
            [*NCX_CMD, *args], capture_output=True, text=True, timeout=60, cwd=repo
        )
        assert TRACE not in proc.stderr, proc.stderr
        if args[0] == "check":
            assert proc.returncode == 1 and "chunks/docs/guide.md" in proc.stdout + proc.stderr


# e2e: a fresh process per command (a hang must stay a timeout in a child, not this run's)
@pytest.mark.e2e
@pytest.mark.parametrize(
    "what",
    [
        ".neocortex/manifest.json",
        ".neocortex/cache/sync-state.json",
        ".neocortex/cache/index.npz",
        ".neocortex/cache/code/index.npz",
    ],
)
def test_a_tree_file_replaced_by_a_fifo_never_hangs(repo: Path, what: str) -> None:
    _init(repo)
    ncx("retrieve", "service settings")  # the search cache and the code index exist
    (repo / what).unlink()
    os.mkfifo(repo / what)
    for args in (("sync",), ("check",), ("retrieve", "service settings")):
        proc = subprocess.run(
            [*NCX_CMD, *args], capture_output=True, text=True, timeout=60, cwd=repo
        )
        assert TRACE not in proc.stderr, proc.stderr
        if what.endswith("manifest.json"):
            assert proc.returncode != 0 and "manifest" in proc.stderr


def test_lfs_pointers_are_listed_as_not_indexed(repo: Path) -> None:
    _init(repo)
    write(
        repo,
        "docs/big.md",
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 12345\n",
    )
    commit_all(repo, "lfs")
    proc = ncx("sync")
    assert "docs/big.md" in proc.stderr and "LFS" in proc.stderr
    assert not (repo / ".neocortex/chunks/docs/big.md").exists()
    assert not _results("sha256 oid version spec") or all(
        r["source_path"] != "docs/big.md" for r in _results("sha256 oid version spec")
    )
    assert "LFS" in ncx("status").stdout


# --- conflict markers -----------------------------------------------------------------------

CONFLICTED = (
    "# Guide\n\n" + SEC + "\n\n## Install\n\n"
    "<<<<<<< HEAD\nRun the installer twice.\n=======\nRun the installer once.\n"
    ">>>>>>> feature\n"
)


def test_a_doc_with_conflict_markers_is_refused_and_keeps_its_chunks(repo: Path) -> None:
    _init(repo)
    chunk_file = repo / ".neocortex/chunks/docs/guide.md"
    before = chunk_file.read_bytes()
    write(repo, "docs/guide.md", CONFLICTED)
    for args in (("sync",), ("check",)):
        proc = ncx(*args, ok=False)
        said = proc.stdout + proc.stderr
        assert proc.returncode == 1, said
        assert "docs/guide.md:7" in said and "conflict" in said and "resolve" in said
    assert chunk_file.read_bytes() == before
    assert "<<<<<<<" not in chunk_file.read_text()
    # The pre-commit hooks refuse it too, when it is staged.
    subprocess.run(["git", "-C", str(repo), "add", "docs/guide.md"], check=True)
    for hook in ("check", "sync"):
        proc = ncx("hook", hook, ok=False)
        assert proc.returncode == 1 and "merge-conflict markers" in proc.stdout + proc.stderr
    assert chunk_file.read_bytes() == before


def test_quoted_conflict_markers_and_rst_underlines_are_not_conflicts(repo: Path) -> None:
    _init(repo)
    write(
        repo,
        "docs/git.md",
        "# Git\n\nA conflict looks like this:\n\n```\n<<<<<<< HEAD\na\n=======\nb\n"
        ">>>>>>> x\n```\n",
    )
    write(repo, "docs/t.rst", "Seven c\n=======\n\nText about >>>>>>> arrows.\n")
    commit_all(repo, "quoted")
    ncx("sync")
    ncx("check")


# --- background builds ----------------------------------------------------------------------


def _big_tree(repo: Path) -> None:
    """A tree whose cache build parses in worker processes (over 6 MB of chunk files)."""
    import random

    rng = random.Random(0)
    words = "install cache index config service token retry deploy commit hook session".split()
    for d in range(60):
        parts = [f"# Doc {d}\n"]
        for s in range(40):
            parts.append(f"\n## Section {d} {s}\n\n" + " ".join(rng.choices(words, k=380)) + "\n")
        write(repo, f"docs/d{d:02d}.md", "".join(parts))
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")


def _lock_free(path: Path, within: float) -> bool:
    import fcntl

    end = time.monotonic() + within
    while time.monotonic() < end:
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            time.sleep(0.2)
        finally:
            os.close(fd)
    return False


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    kids = []
    for x in out.stdout.split():
        try:
            if b"python" in Path(f"/proc/{x}/cmdline").read_bytes():
                kids.append(int(x))
        except OSError:
            continue
    return kids


@pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or not Path("/proc").is_dir(), reason="needs 2 CPUs and /proc"
)
# e2e: a real process and its workers, killed with SIGKILL
@pytest.mark.e2e
def test_a_killed_cache_build_leaves_no_worker_holding_the_lock(repo: Path) -> None:
    import signal

    _big_tree(repo)
    proc = subprocess.Popen(
        [*NCX_CMD, "retrieve", "cache index"],
        cwd=repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    kids: list[int] = []
    end = time.monotonic() + 60
    while time.monotonic() < end and proc.poll() is None and len(kids) < 2:
        kids = _children(proc.pid)
        time.sleep(0.05)
    assert len(kids) >= 2, "the cache build did not start its workers"
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)  # as a hook's deadline (os._exit) or a kill -9 does
    proc.wait()
    try:
        assert _lock_free(repo / ".neocortex/cache/.lock", 10), "cache/.lock held by orphans"
    finally:
        for k in kids:
            with contextlib.suppress(OSError):
                os.kill(k, signal.SIGKILL)
    ncx("retrieve", "cache index")  # a later build is not blocked


def test_warm_does_not_wait_behind_a_build_under_way(repo: Path) -> None:
    import fcntl

    _init(repo)
    lock = repo / ".neocortex/cache/.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a build under way in another process
        t = time.monotonic()
        proc = subprocess.run(
            [*NCX_CMD, "agent-hook", "warm"], cwd=repo, capture_output=True, timeout=20
        )
        assert proc.returncode == 0 and time.monotonic() - t < 15


# --- a read-only tree -----------------------------------------------------------------------


@pytest.mark.parametrize("what", [".neocortex", ".neocortex/cache"])
def test_a_read_only_tree_answers_without_writing(repo: Path, what: str) -> None:
    import shutil

    _init(repo)
    shutil.rmtree(repo / ".neocortex/cache")
    (repo / ".neocortex/cache").mkdir()
    with read_only(repo / what):
        for args in (
            ("retrieve", "service settings"),
            ("retrieve", "service settings", "--json"),
            ("assemble", "--task", "change the service settings"),
            ("wakeup",),
        ):
            proc = ncx(*args, ok=False)
            assert proc.returncode == 0, proc.stderr
            assert "Read-only" not in proc.stderr and "docs/guide.md" in proc.stdout
            # No process can write the cache there: "building it in the background" would
            # promise a next query that searches everything, which never comes.
            assert "background" not in proc.stderr, proc.stderr
            if args[0] != "wakeup":
                assert "without writing a search cache" in proc.stderr, proc.stderr
        if what == ".neocortex":
            write(repo, "docs/guide.md", "# Guide\n\nNew words about the frobnicator.\n")
            proc = ncx("sync", ok=False)
            assert proc.returncode == 1 and "docs/guide.md" in proc.stderr
            assert "up to date" not in proc.stderr.replace("not up to date", "")


# --- costs that grew faster than the input (sizes and times: benchmarks/linear_costs.py) ----


def _timed(*args: str, input: str | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    proc = ncx(*args, input=input)
    return time.perf_counter() - t, proc


def test_a_doc_of_one_line_repeated_builds_its_cache_in_linear_time(repo: Path) -> None:
    _init(repo)
    write(
        repo, "docs/rep.md", "# Rep\n\n" + "The same line about the cache and the index.\n" * 60_000
    )
    commit_all(repo, "rep")
    ncx("sync", "-q")
    took, proc = _timed("retrieve", "cache index", "--json")
    # Every line tried every chunk's key before: 25 s and more here; now about a second.
    assert took < 12, f"cache build took {took:.1f} s"
    assert json.loads(proc.stdout.splitlines()[0])["start_line"] is not None


def test_notebook_cells_saved_one_string_each_are_located_in_linear_time(repo: Path) -> None:
    _init(repo)
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": f"## Cell {i}\n\nText of cell {i}."}
        for i in range(8_000)
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write(repo, "docs/nb.ipynb", json.dumps(nb, indent=1))
    commit_all(repo, "nb")
    took, _ = _timed("sync", "-q")
    assert took < 15, f"sync took {took:.1f} s"  # 40 s and more before
    hit = _results("Text of cell 7999", "--k", "1")[0]
    assert hit["source_path"] == "docs/nb.ipynb" and hit["start_line"] is not None


def test_a_long_heading_is_not_repeated_into_every_chunk(repo: Path) -> None:
    _init(repo)
    heading = " ".join(f"word{i % 50}" for i in range(30_000))[:200_000]
    paras = "".join(
        f"Paragraph {i} says something about the cache and more.\n\n" for i in range(3000)
    )
    write(repo, "docs/h.md", f"# Top\n\n## {heading}\n\n{paras}")
    commit_all(repo, "heading")
    ncx("sync", "-q")
    size = (repo / ".neocortex/chunks/docs/h.md").stat().st_size
    assert size < 2_000_000, f"{size:,} bytes of chunk file (48 MB before)"
    hit = _results("Paragraph 2999 cache", "--k", "1")[0]
    assert hit["source_path"] == "docs/h.md" and len(hit["section"]) < 500


def test_a_huge_query_is_cut_with_a_notice(repo: Path) -> None:
    _init(repo)
    query = " ".join(f"service{i} settings" for i in range(300_000))  # 5 MB
    line = json.dumps({"qid": 1, "query": query, "k": 3}) + "\n"
    took, proc = _timed("retrieve", "--batch", input=line)
    assert "searched with its first" in proc.stderr and "qid 1" in proc.stderr
    assert took < 10, f"took {took:.1f} s"
    assert json.loads(proc.stdout)["results"]


# --- names and markup -----------------------------------------------------------------------


def test_nfc_and_nfd_twins_get_chunk_files_apart_on_any_file_system(repo: Path) -> None:
    import unicodedata

    _init(repo)
    nfc, nfd = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")
    write(repo, f"docs/{nfc}.md", "# Composed\n\nThe composed twin speaks of frobnicators.\n")
    write(repo, f"docs/{nfd}.md", "# Decomposed\n\nThe decomposed twin speaks of widgets.\n")
    commit_all(repo, "twins")
    written = json.loads(ncx("sync", "--json").stdout)["written"]
    chunk_files = [p for p in written if "/chunks/docs/caf" in p]
    assert len(chunk_files) == 2
    # One file on macOS (case and normalization insensitive) unless the names differ there too.
    folded = {unicodedata.normalize("NFD", p.casefold()) for p in chunk_files}
    assert len(folded) == 2, chunk_files


def test_a_heading_inside_an_html_block_starts_no_section(repo: Path) -> None:
    _init(repo)
    write(
        repo,
        "docs/html.md",
        "# Page\n\nThe page speaks of frobnicators. " + SEC + "\n\n"
        "<!--\n## Old section\nHidden notes on frobnicators.\n-->\n\n"
        "<div>\n## Boxed\nBoxed words on frobnicators.\n</div>\n\n"
        "<pre>\n\n# Preformatted\n\n</pre>\n\n"
        "## Real\n\n" + SEC + "\n",
    )
    commit_all(repo, "html")
    ncx("sync", "-q")
    chunk_file = (repo / ".neocortex/chunks/docs/html.md").read_text()
    ids = re.findall(r"^id: (\S+)$", chunk_file, flags=re.M)
    assert ids == ["docs/html.md#page", "docs/html.md#page--real"], ids


# --- no-op cost -----------------------------------------------------------------------------

_OPENED: list[str] | None = None


def _count_opens(event: str, args: tuple[object, ...]) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], str | bytes | Path):
        _OPENED.append(os.fsdecode(args[0]))


@contextlib.contextmanager
def _opens(root: Path, under: str = "docs") -> Iterator[list[str]]:
    """The files under `under` (docs/) this process opens inside the block."""
    global _OPENED
    if not getattr(_count_opens, "installed", False):
        sys.addaudithook(_count_opens)
        _count_opens.installed = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _OPENED = seen
    try:
        yield seen
    finally:
        _OPENED = None
        docs = str(root / under) + os.sep
        seen[:] = [p for p in seen if p.startswith(docs)]


def test_an_unchanged_tree_is_judged_without_reading_its_docs(repo: Path) -> None:
    for i in range(40):
        write(repo, f"docs/d{i}.md", f"# Doc {i}\n\nThe frobnicator note number {i}.\n")
    write(repo, "docs/d0.meta.yaml", "title: First\n")
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(repo, "ncx")
    for args in (("sync",), ("status",), ("check",)):
        with _opens(repo) as seen:
            ncx(*args)
        assert seen == [], f"ncx {args[0]} read {len(seen)} docs: {seen[:3]}"
    with _opens(repo, ".neocortex/chunks") as seen:
        ncx("check")  # its chunk files were judged the model's by the check before
    assert seen == [], f"ncx check read {len(seen)} chunk files: {seen[:3]}"
    # An edit in place (same size), staged or not, and a sidecar edit are seen and synced.
    chunks = repo / ".neocortex/chunks/docs"
    write(repo, "docs/d7.md", "# Doc 7\n\nThe widgetizer note number 7.\n")
    with _opens(repo) as seen:
        ncx("sync", "-q")
    assert seen == [str(repo / "docs/d7.md")]
    assert "widgetizer" in (chunks / "d7.md").read_text()
    git_add = ["git", "-C", str(repo), "add", "docs/d7.md"]
    subprocess.run(git_add, check=True)
    ncx("sync", "-q")
    write(repo, "docs/d0.meta.yaml", "title: Renamed\n")
    ncx("sync", "-q")
    assert "Renamed" in (chunks / "d0.md").read_text()
    # A hand-edited chunk file is put back from its doc.
    (chunks / "d3.md").write_text("garbage\n")
    ncx("sync", "-q")
    assert "frobnicator note number 3" in (chunks / "d3.md").read_text()
    ncx("check")


def test_an_assume_unchanged_doc_is_still_read(repo: Path) -> None:
    _init(repo)
    git_cmd = ["git", "-C", str(repo), "update-index", "--assume-unchanged", "docs/guide.md"]
    subprocess.run(git_cmd, check=True)
    ncx("sync", "-q")
    write(repo, "docs/guide.md", "# Guide\n\nThe widgetizer replaced the service.\n")
    ncx("sync", "-q")  # git's stat check skips the file: ncx reads it
    assert "widgetizer" in (repo / ".neocortex/chunks/docs/guide.md").read_text()
