"""Hostile and broken input (issue 18): nothing outside .neocortex/ is touched, no file takes
the tree down, every failure is one message. One test per defect class, then a property test
that drives random small trees and arguments through the commands.

`HOSTILE` collects (category, case, handled well) for the table printed at the end of the run
(`pytest tests/test_hostile.py -s`)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import NCX_CMD, commit_all, git, ncx, write

HOSTILE: list[tuple[str, str, bool]] = []
TIMINGS: list[tuple[str, float, float]] = []

SEC = " ".join(["The service reads its settings from the config file at start."] * 6)
TRACE = "Traceback (most recent call last)"


# NCX_HOSTILE_TALLY=1 records a bad case and goes on (to tally an older ncx against the suite).
_TALLY = bool(os.environ.get("NCX_HOSTILE_TALLY"))


def record(category: str, case: str, ok: bool, detail: str = "") -> None:
    HOSTILE.append((category, case, ok))
    assert ok or _TALLY, f"{category}: {case}\n{detail[-3000:]}"


def clean_fail(proc: subprocess.CompletedProcess[str], *, code: set[int] | None = None) -> bool:
    """A refusal a user can act on: a non-zero exit in {1, 2}, one `ncx: error` or usage
    line, no traceback, no internal error."""
    return (
        proc.returncode in (code or {1, 2})
        and TRACE not in proc.stderr
        and "internal error" not in proc.stderr
    )


def flat(text: str) -> str:
    """stderr with typer's box drawing and line wrapping undone."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())


def no_trace(proc: subprocess.CompletedProcess[str]) -> bool:
    return (
        proc.returncode in (0, 1, 2)
        and TRACE not in proc.stderr
        and "internal error" not in proc.stderr
    )


def files_outside_ncx(root: Path) -> dict[str, str]:
    """Hashes of every file outside .neocortex/ and .git/ (links by their target text)."""
    out = {}
    for dirpath, dirs, names in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        if rel_dir.split("/")[0] in (".git", ".neocortex"):
            dirs[:] = []
            continue
        for n in [*names, *(d for d in dirs if (Path(dirpath) / d).is_symlink())]:
            p = Path(dirpath) / n
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            else:
                out[rel] = hashlib.sha1(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def tree(repo: Path) -> Path:
    write(repo, "docs/guide.md", "# Guide\n\n" + SEC + "\n\n## Install\n\n" + SEC + "\n")
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(repo, "ncx")
    return repo


def add_memory(text: str) -> str:
    return ncx("memory", "add", text).stdout.strip()


# --- 1. outside the repository ------------------------------------------------------------------


def test_sync_of_a_path_outside_the_repo_deletes_nothing(tree: Path, tmp_path: Path) -> None:
    victim = write(tree, "docs/x/keep.md", "# Keep\n\nmine\n")
    (tree / "docs/x/keep.npy").write_bytes(b"user data")
    outside = write(tmp_path, "docs/x.md", "# Outside\n")
    before = files_outside_ncx(tree)
    proc = ncx("sync", "../../docs/x.md", ok=False)
    record("paths", "sync ../../docs/x.md", clean_fail(proc) and "outside" in proc.stderr)
    proc = ncx("sync", str(outside), ok=False)
    record("paths", "sync /abs/outside.md", clean_fail(proc))
    record("paths", "nothing outside .neocortex changed", files_outside_ncx(tree) == before)
    assert victim.read_text() == "# Keep\n\nmine\n"


def test_memory_ids_are_ids_not_paths(tree: Path) -> None:
    contributing = write(tree, "CONTRIBUTING.md", "# Contributing\n")
    mid = add_memory("Release builds run the tests on linux and windows")
    for args in (
        ("memory", "evolve", "../../CONTRIBUTING", "--useful"),
        ("memory", "evolve", mid, "--supersede-by", "../../CONTRIBUTING"),
        ("memory", "show", "../../../../etc/passwd"),
        ("memory", "rm", "../../CONTRIBUTING"),
        ("memory", "approve", "/etc/hostname"),
        ("memory", "reject", "..%2F..%2FREADME"),
    ):
        proc = ncx(*args, ok=False)
        record("paths", " ".join(args[:2]) + " <path as id>", clean_fail(proc))
        assert "not a memory id" in proc.stderr or "no memory" in proc.stderr
    assert contributing.read_text() == "# Contributing\n"


def test_chunk_folders_never_collide_nor_point_at_ncx(repo: Path) -> None:
    names = [
        "docs/x.md",
        "...md",
        "..md",
        "guide.md",
        "guide.markdown",
        "guide.MD",
        "Guide.md",
        "docs.md",
        "docs/..md",
        "a.md",
        "a/x.md.md",
    ]
    for i, n in enumerate(names):
        write(repo, n, f"# Doc {i}\n\nunique words number {i} " + SEC + "\n")
    commit_all(repo)
    ncx("init", "-q")
    state = write(repo, ".neocortex/state.md", "# State\n\nhandoff\n")
    first = ncx("sync", ok=False)
    record("paths", "11 colliding/dotted doc names sync", no_trace(first) and first.returncode == 0)
    second = ncx("sync")
    record("paths", "second sync writes nothing", "nothing written" in second.stderr)
    assert state.read_text() == "# State\n\nhandoff\n"
    assert (repo / ".neocortex/manifest.json").is_file()
    # every source owns a distinct chunk file, inside chunks/, holding only its chunks
    seen: dict[str, str] = {}
    for md in (repo / ".neocortex/chunks").rglob("*.md"):
        srcs = {ln for ln in md.read_text().splitlines() if ln.startswith("source_path:")}
        assert len(srcs) == 1, f"{md} holds chunks of {srcs}"
        rel = md.relative_to(repo).as_posix().casefold()
        assert rel not in seen, f"{rel} shared by {srcs} and {seen[rel]}"
        seen[rel] = srcs.pop()
    assert len(set(seen.values())) == len(names)
    # an ordinary doc keeps the path it always had
    assert (repo / ".neocortex/chunks/docs/x.md").is_file()
    # of the case twins, the first `.md` by path keeps the plain name
    assert "source_path: Guide.md" in (repo / ".neocortex/chunks/Guide.md").read_text()


def test_symlinks_are_not_followed_out_or_into_secrets(repo: Path, tmp_path: Path) -> None:
    secret = "ghp_" + "A1b2C3d4" * 5
    write(repo, ".gitignore", ".env\n")
    write(repo, ".env", f"TOKEN={secret}\n")
    outside = write(tmp_path, "outside.md", f"# Outside\n\n{secret}\n")
    write(repo, "docs/ok.md", "# Ok\n\n" + SEC + "\n")
    git(repo, "config", "remote.origin.url", f"https://x:{secret}@example.com/r.git")
    links = {
        "docs/config.md": "../.git/config",
        "docs/env.md": "../.env",
        "docs/out.md": str(outside),
        "docs/loop.md": "loop2.md",
        "docs/loop2.md": "loop.md",
    }
    for name, target in links.items():
        os.symlink(target, repo / name)
    os.symlink(tmp_path, repo / "linked")  # a linked folder: git tracks the link itself
    commit_all(repo)
    ncx("init", "-q")
    proc = ncx("sync", ok=False)
    record("symlinks", "sync with 5 hostile links", clean_fail(proc, code={1}))
    for name in ("docs/config.md", "docs/env.md", "docs/out.md", "docs/loop.md"):
        record("symlinks", f"refused {name}", name in proc.stderr)
    blob = b"".join(p.read_bytes() for p in (repo / ".neocortex").rglob("*") if p.is_file())
    record("symlinks", "no secret in .neocortex", secret.encode() not in blob)
    assert (repo / ".neocortex/chunks/docs/ok.md").is_file()  # the rest still syncs
    for cmd in (("status",), ("check",)):
        record("symlinks", f"{cmd[0]} with link loop", no_trace(ncx(*cmd, ok=False)))

    # a memory file that is a link to a file outside: never served
    os.symlink(outside, repo / ".neocortex/memories/MEM-2026-01-01-aaaaaa.md")
    hits = ncx("retrieve", "Outside", "--json", ok=False)
    record("symlinks", "linked memory not served", secret not in hits.stdout and no_trace(hits))
    # a state note linked to a secret: never quoted into a frame
    os.symlink("../.env", repo / ".neocortex/state.md")
    frame = ncx("assemble", "--task", "change the settings", ok=False)
    record("symlinks", "linked state.md not quoted", secret not in frame.stdout and no_trace(frame))
    (repo / ".neocortex/state.md").unlink()
    # a chunk folder linked outside: sync writes nothing there
    (repo / ".neocortex/memories/MEM-2026-01-01-aaaaaa.md").unlink()
    chunks = repo / ".neocortex/chunks/docs"
    subprocess.run(["rm", "-rf", str(chunks)], check=True)
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.symlink(target, chunks)
    proc = ncx("sync", ok=False)
    record("symlinks", "chunk folder linked outside", not any(target.iterdir()) and no_trace(proc))
    chunks.unlink()
    ncx("sync", "-q", ok=False)
    # a chunk file replaced by a link to an outside file: the link is replaced, never written
    unit = repo / ".neocortex/chunks/docs/ok.md"
    unit.unlink()
    os.symlink(outside, unit)
    ncx("sync", "-q", ok=False)
    record("symlinks", "linked chunk file: target untouched", secret in outside.read_text())
    # memories/ linked outside: memory add refuses to write there
    mem = repo / ".neocortex/memories"
    subprocess.run(["rm", "-rf", str(mem)], check=True)
    os.symlink(target, mem)
    proc = ncx("memory", "add", "Release builds run on linux", ok=False)
    record("symlinks", "memories/ linked outside", clean_fail(proc) and not any(target.iterdir()))
    # a linked CLAUDE.md read by `init --agent`
    os.symlink(outside, repo / "CLAUDE.md")
    proc = ncx("init", "--agent", "claude", ok=False)
    record("symlinks", "init --agent with CLAUDE.md linked outside", clean_fail(proc))
    assert secret in outside.read_text() and "ncx" not in outside.read_text()


# --- 2. one file never takes the tree down ------------------------------------------------------


def test_odd_paths_and_bytes_are_reported_and_skipped(tree: Path) -> None:
    write(tree, "a.md", "# A\n\n## X\n\n" + SEC + "\n")
    write(tree, "a/x.md.md", "# X\n\n" + SEC + "\n")
    # over MAX_REL_PATH (1,024) and as long as the file system allows below this tree (a
    # parallel run's folders are longer: the whole path must stay under 4,096 bytes)
    room = 4000 - len(str(tree))
    deep = "/".join(["d" * 200] * (room // 201)) + "/long.md"
    write(tree, deep, "# Long\n\n" + SEC + "\n")
    write(tree, "docs/nul.md", "# Nul\n\n" + "x " * 5000 + "\0 after 8 KB\n")
    commit_all(tree)
    for cmd in (("sync",), ("status",), ("check",), ("sync",)):
        proc = ncx(*cmd, ok=False)
        record("crash", f"{cmd[0]} with a.md + a/x.md.md + 3,800-char path + NUL", no_trace(proc))
    proc = ncx("sync", ok=False)
    assert "docs/nul.md" in proc.stderr and "NUL" in proc.stderr
    assert "characters" in proc.stderr  # the long path, named
    assert (tree / ".neocortex/chunks/a.md").is_file()
    assert (tree / ".neocortex/chunks/a/x%2Emd.md").is_file()


def test_damaged_units_are_flagged_and_skipped(tree: Path) -> None:
    import numpy as np

    mid = add_memory("Release builds run the tests on linux and windows")
    md = tree / f".neocortex/memories/{mid}.md"
    # Two chunks' vectors (inside their doc's chunk file): one all NaN, one cut short.
    f = max((tree / ".neocortex/chunks").rglob("*.md"), key=lambda p: p.read_bytes().count(b"vec:"))
    nan = base64.b64encode(np.full(32, np.nan, dtype="<f2").tobytes())
    data = f.read_bytes()
    first = data.index(b"vec: f16:") + len(b"vec: f16:")
    last = data.rindex(b"vec: f16:") + len(b"vec: f16:")
    assert first < last
    cut = data[:first] + nan + data[data.index(b"\n", first) : last]
    f.write_bytes(cut + nan[:-12] + data[data.index(b"\n", last) :])
    text = md.read_text()
    md.write_text(text.replace("## Learning\n", "## Learning\n\n<<<<<<< HEAD\nours\n=======\n"))
    proc = ncx("check", ok=False)
    record("crash", "check flags NaN vector", "NaN" in proc.stdout)
    record("crash", "check flags truncated vector", "no vector of 32 values" in proc.stdout)
    record("crash", "check flags conflict markers", "conflict" in proc.stdout)
    hits = ncx("retrieve", "settings config", "--json")
    rows = [json.loads(x) for x in hits.stdout.splitlines()]
    record("crash", "retrieve with NaN vector", all(r["score"] == r["score"] for r in rows))


def test_yaml_bombs_and_cycles_are_refused(tree: Path) -> None:
    bomb = "lol: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    mem = tree / ".neocortex/memories"
    (mem / "MEM-2026-01-01-bbbbbb.md").write_text(f"---\n{bomb}---\n\n## Learning\n\nboom\n")
    (mem / "MEM-2026-01-01-cccccc.md").write_text("---\nloop: &l [*l]\n---\n\n## Learning\n\nx\n")
    t = time.perf_counter()
    check = ncx("check", ok=False)
    record("yaml", "check flags alias bomb", "alias bomb" in check.stdout)
    record("yaml", "check flags self-referencing alias", "refers to itself" in check.stdout)
    hits = ncx("retrieve", "settings", ok=False)
    record("yaml", "retrieve survives a bomb", hits.returncode == 0)
    show = ncx("memory", "show", "bbbbbb", ok=False)
    record("yaml", "memory show of a bomb", no_trace(show))
    frame = ncx("assemble", "--task", "change the settings", ok=False)
    record("yaml", "assemble survives a bomb", frame.returncode == 0)
    record("yaml", "all of it under 10 s", time.perf_counter() - t < 10)
    # a sidecar bomb: the doc is chunked without its metadata, the sidecar named
    write(tree, "docs/guide.meta.yaml", "id: DOC-X-001\n" + bomb)
    commit_all(tree)
    proc = ncx("sync", ok=False)
    record("yaml", "sidecar bomb refused", clean_fail(proc) and "guide.meta.yaml" in proc.stderr)


def test_cli_edges_are_messages_not_tracebacks(tree: Path) -> None:
    latin = tree / "task.txt"
    latin.write_bytes("Caf\xe9 settings task\n".encode("latin-1"))
    cases = {
        "assemble --task-file latin-1": ("assemble", "--task-file", str(latin)),
        "assemble --out missing folder": ("assemble", "-t", "x", "--out", "no/such/dir/f.md"),
        "assemble --budget 0": ("assemble", "-t", "settings", "--budget", "0"),
        "assemble --budget -5": ("assemble", "-t", "settings", "--budget", "-5"),
        "wakeup --budget -10": ("wakeup", "--budget", "-10"),
        "review HEAD:path": ("review", "HEAD~1..HEAD:docs/guide.md", "--no-check"),
    }
    for name, args in cases.items():
        record("cli", name, clean_fail(ncx(*args, ok=False)))
    for k in ("1e309", "0", "-3", '"many"', "2.5"):
        proc = ncx("retrieve", "--batch", input=f'{{"qid": 1, "query": "x", "k": {k}}}\n', ok=False)
        record(
            "cli",
            f"batch k={k}",
            clean_fail(proc) and "must be a whole number" in flat(proc.stderr),
            proc.stderr,
        )
    # a damaged manifest, the cache as a folder, chunks/ replaced by a file
    man = tree / ".neocortex/manifest.json"
    good = man.read_text()
    man.write_text(good.replace('"dim": 32', '"dim": "wide"'))
    for cmd in ("sync", "status", "check", "retrieve"):
        args = (cmd, "x") if cmd == "retrieve" else (cmd,)
        record("cli", f"{cmd} with manifest dim 'wide'", clean_fail(ncx(*args, ok=False)))
    man.write_text(good)
    cache = tree / ".neocortex/cache/index.npz"
    cache.unlink(missing_ok=True)
    cache.mkdir(parents=True)
    proc = ncx("retrieve", "x", ok=False)
    record("cli", "cache/index.npz is a folder", clean_fail(proc) and "index.npz" in proc.stderr)
    cache.rmdir()
    chunks = tree / ".neocortex/chunks"
    subprocess.run(["rm", "-rf", str(chunks)], check=True)
    chunks.write_text("not a folder")
    for cmd in ("sync", "status", "check"):
        record("cli", f"{cmd} with chunks/ a file", no_trace(ncx(cmd, ok=False)))
    record("cli", "retrieve with chunks/ a file", no_trace(ncx("retrieve", "x", ok=False)))


def test_limits_on_memory_size(tree: Path) -> None:
    big = write(tree, "big.txt", "word " * 2_100_000)  # 10 MB
    proc = ncx("memory", "add", "--file", str(big), ok=False)
    record("limits", "memory add of 10 MB", clean_fail(proc, code={2}))
    from ncx.agents.mcp_server import build_server  # the MCP route is the same function

    del build_server
    from ncx.errors import UsageError
    from ncx.memory.ops import NewMemory, _validate

    with pytest.raises(UsageError):
        _validate(NewMemory(learning="x" * 10_000_000))
    record("limits", "MCP remember of 10 MB (same validation)", True)


def test_terminal_controls_are_stripped(tree: Path) -> None:
    evil = "\x1b]0;pwned\x07\x1b[31mRed\x1b[0m \x1b]8;;http://x\x1b\\link"
    write(tree, "docs/evil.md", f"# Evil {evil}\n\n" + SEC + "\n")
    commit_all(tree)
    ncx("sync", "-q")
    for args in (
        ("retrieve", "settings config file"),
        ("assemble", "--task", f"fix {evil} settings"),
        ("status",),
    ):
        proc = ncx(*args)
        record("terminal", f"{args[0]} output", "\x1b" not in proc.stdout + proc.stderr)
    proc = ncx("memory", "show", f"MEM-{evil}", ok=False)
    record("terminal", "error quoting an escape", "\x1b" not in proc.stderr and clean_fail(proc))


# --- 4. concurrency -----------------------------------------------------------------------------


def test_concurrent_evolves_all_count(tree: Path) -> None:
    from datetime import date

    from ncx.memory.file import read_memory
    from ncx.memory.ops import mark_useful

    mid = add_memory("Release builds run the tests on linux and windows")
    md = tree / f".neocortex/memories/{mid}.md"
    text = md.read_text().replace("usefulness: 0.5", "usefulness: 0.0")
    md.write_text(text)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(4):
                mark_useful(tree, mid, today=date(2026, 1, 2))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    useful = read_memory(md).meta["usefulness"]
    record("concurrency", "20 concurrent evolve --useful", not errors and useful == 1.0)


def test_racing_near_duplicate_adds_write_one(tree: Path) -> None:
    from datetime import date

    from ncx.config import load_config
    from ncx.memory.ops import DuplicateMemory, NewMemory, add_memory, load_tree_model
    from ncx.query.search import neighbours

    model = load_tree_model(tree, load_config())
    texts = [
        "The cache index is rebuilt after every commit.",
        "the cache index is rebuilt after every commit",
    ]
    results: list[object] = []

    def worker(text: str) -> None:
        try:
            results.append(
                add_memory(
                    tree,
                    NewMemory(learning=text),
                    embedder=model,
                    neighbours=neighbours,
                    today=date(2026, 1, 2),
                )
            )
        except DuplicateMemory as exc:
            results.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    written = list((tree / ".neocortex/memories").glob("MEM-*.md"))
    record("concurrency", "racing near-duplicate adds", len(written) == 1)


@pytest.mark.e2e
def test_concurrent_processes_lose_nothing(tree: Path) -> None:
    """The issue's own scenario with real processes (flock across processes): five
    `memory evolve --useful` at once, and a `memory add` racing a `sync`."""
    mid = add_memory("Release builds run the tests on linux and windows")
    md = tree / f".neocortex/memories/{mid}.md"
    md.write_text(md.read_text().replace("usefulness: 0.5", "usefulness: 0.0"))
    env = {**os.environ}
    procs = [
        subprocess.Popen([*NCX_CMD, "memory", "evolve", mid, "--useful"], cwd=tree, env=env)
        for _ in range(5)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert "usefulness: 0.5" in md.read_text()
    for text in (
        "the cache index is rebuilt after every commit",
        "deploy the server from the release branch only",
        "login sessions expire after the token refresh timeout",
    ):
        add = subprocess.Popen(
            [*NCX_CMD, "memory", "add", text],
            cwd=tree,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        sync = subprocess.Popen([*NCX_CMD, "sync", "-q"], cwd=tree, env=env)
        out, _ = add.communicate(timeout=120)
        assert sync.wait(timeout=120) == 0 and add.returncode == 0
        new = tree / f".neocortex/memories/{out.strip()}.md"
        assert new.is_file() and new.with_suffix(".npy").is_file()
    record("concurrency", "5 evolve processes + 3 add/sync races", True)


def test_sweeps_spare_live_temp_files(tree: Path) -> None:
    chunk_dir = tree / ".neocortex/chunks/docs"
    live = chunk_dir / f".tmp-{os.getpid()}-abc.md"
    live_mem = tree / f".neocortex/memories/.tmp-{os.getpid()}-abc.npy"
    dead_pid = 2**22 + 12345  # above pid_max on most systems: no such process
    dead = chunk_dir / f".tmp-{dead_pid}-abc.md"
    dead_mem = tree / f".neocortex/memories/.tmp-{dead_pid}-abc.npy"
    for p in (live, live_mem, dead, dead_mem):
        p.write_bytes(b"half-written")
    # a memory's vector written a moment before its markdown (an add in progress)
    ncx("sync")
    record("concurrency", "live temp file in a chunk folder kept", live.exists())
    record("concurrency", "live temp file in memories kept", live_mem.exists())
    record(
        "concurrency",
        "dead process's temp files swept",
        not dead.exists() and not dead_mem.exists(),
    )


# --- 5. linear costs ----------------------------------------------------------------------------


def test_line_attachment_is_linear() -> None:
    from ncx.query.lines import locate

    lines = [f"line {i} of the big doc says something about topic {i % 97}." for i in range(80_000)]
    text = "\n".join(lines)  # ~4.4 MB
    bodies = ["\n".join(lines[i : i + 12]) for i in range(0, len(lines) - 12, 40)]  # 2,000 chunks
    t = time.perf_counter()
    got = locate(text, bodies)
    took = time.perf_counter() - t
    assert got[10] == (text.find(bodies[10]), 401)
    TIMINGS.append(("locate 2,000 chunks in a 4.4 MB doc", took, 0.0))
    # The old find-from-the-start plus newline count took 5.3 s here (this one: 0.08 s).
    record("linear", "line attachment of 2,000 chunks in 4.4 MB < 2 s", took < 2)


def test_single_line_paragraph_is_split() -> None:
    from ncx.tree.chunker import ChunkSettings, chunk_markdown

    body = "# Big\n\n" + "word " * 100_000 + "\n\n```\n" + "x=1;" * 30_000 + "\n```\n"
    t = time.perf_counter()
    chunks = chunk_markdown(body)
    took = time.perf_counter() - t
    cap = ChunkSettings().max_tokens
    prose = [c for c in chunks if not c.text.startswith("```") and "x=1;" not in c.text]
    code = [c for c in chunks if "x=1;" in c.text]
    TIMINGS.append(("chunk a 500 KB one-line paragraph + 120 KB one-line code", took, 0.0))
    record(
        "linear",
        "500 KB (100k-token) single line split into capped chunks",
        max(c.tokens for c in prose) <= cap,
    )
    record("linear", "one-line code block capped at 4x", max(c.tokens for c in code) <= 4 * cap)
    assert all(c.text in body for c in chunks)  # still verbatim slices


def test_staged_size_checked_before_reading(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ncx import repo as repo_mod

    write(tree, "docs/huge.md", "# Huge\n\n" + "y " * 600_000)
    git(tree, "add", "docs/huge.md")
    asked: list[str] = []
    real = repo_mod.read_staged

    def spy(root: Path, paths: object) -> dict[str, bytes]:
        wanted = list(paths)  # type: ignore[call-overload]
        asked.extend(wanted)
        return real(root, wanted)

    monkeypatch.setattr(repo_mod, "read_staged", spy)
    proc = ncx("sync", "--staged", env={"NCX_MAX_DOC_BYTES": "1000000"}, ok=False)
    record("linear", "hook sync refuses a big doc unread", "docs/huge.md" not in asked)
    assert "over the 1.0 MB limit" in proc.stderr


# --- 6. property test ---------------------------------------------------------------------------


DAMAGE: list[bytes | None] = [
    b"",  # replaced by an inf vector in the test
    b"",
    b"\x93NUMPY\x01\x00garbage",
    b"---\ntokens: abc\nsource_section: 5\nid: [1, 2]\ndomain: 2024-01-01\n---\n\nx\n",
    b"---\na: &a [*a]\n---\n\n## Learning\n\nx\n",
    b"\xff\xfe\x00\x01",
    b'{"model": {"dim": "x"}, "chunker": {}}',
    b"---\nstatus: [\n---\n",
    None,
]


def test_random_trees_and_arguments(repo: Path) -> None:
    import numpy as np
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ncx("init", "-q")
    commit_all(repo, "init")
    manifest = repo / ".neocortex/manifest.json"
    good_manifest = manifest.read_bytes()
    base = repo.parent / "outside-sentinel.md"
    base.write_text("untouched")

    part = st.sampled_from(
        ["docs", "Docs", "a", "a.md", "..", ".", "...", "x.MD", "guide", "é", "\x1b[1m", " ", "-"]
    )
    name = (
        st.lists(part, min_size=1, max_size=3)
        .map("/".join)
        .map(lambda p: p + st_suffix[len(p) % len(st_suffix)])
    )
    body = st.sampled_from(
        [
            "# T\n\nplain text about settings\n",
            "---\na: &a [*a]\n---\n# Y\n",
            "\0binary",
            "# \x1b]0;t\x07x\n\ntext\n",
            "<<<<<<< HEAD\n# a\n=======\n# b\n>>>>>>> x\n",
            "\xff\xfe",
            "word " * 3000,
        ]
    )
    args = st.sampled_from(
        [
            ("sync",),
            ("sync", "../outside-sentinel.md"),
            ("sync", "docs"),
            ("sync", "--dry-run"),
            ("status",),
            ("check",),
            ("retrieve", "settings"),
            ("retrieve", "\x1b[2J"),
            ("assemble", "--task", "settings", "--budget", "50"),
            ("memory", "show", "../../README"),
        ]
    )

    @settings(
        max_examples=int(os.environ.get("NCX_HOSTILE_EXAMPLES", "15")),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        files=st.lists(st.tuples(name, body), max_size=4),
        link=st.sampled_from([None, "../outside-sentinel.md", "docs", ".git/config", "self"]),
        cmds=st.lists(args, min_size=1, max_size=2),
        damage=st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(DAMAGE)), max_size=2),
    )
    def run(
        files: list[tuple[str, str]],
        link: str | None,
        cmds: list[tuple[str, ...]],
        damage: list[tuple[int, bytes | None]],
    ) -> None:
        # Damage what earlier examples built under .neocortex/ (the repo lives across them);
        # the manifest is restored first, or one damaged manifest would end all exploration.
        subprocess.run(["rm", "-rf", str(manifest)], check=True)
        manifest.write_bytes(good_manifest)
        units = sorted(
            p for p in (repo / ".neocortex").rglob("*") if p.is_file() and "cache" not in p.parts
        )
        for pick, payload in damage if units else []:
            victim = units[pick % len(units)]
            if not victim.is_file():
                continue  # the same victim drawn twice: already a folder
            if payload is None:  # a folder where a file was
                victim.unlink()
                victim.mkdir()
            else:
                victim.write_bytes(payload)
        for rel, text in files:
            p = repo / rel
            if any(x in ("..", ".") for x in rel.split("/")) or rel.startswith(".git"):
                continue
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
                if not p.is_dir():
                    p.write_bytes(text.encode("utf-8", "surrogateescape"))
            except OSError:
                continue
        if link is not None and not (repo / "ln.md").is_symlink():
            os.symlink("ln.md" if link == "self" else link, repo / "ln.md")
        git(repo, "add", "-A")
        before = files_outside_ncx(repo)
        for cmd in cmds:
            proc = ncx(*cmd, ok=False)
            assert no_trace(proc), f"ncx {cmd}: {proc.returncode}\n{proc.stderr[-2000:]}"
        assert files_outside_ncx(repo) == before
        assert base.read_text() == "untouched"

    st_suffix = [".md", ".markdown", ".MD", "", ".md.md", ".rst", ".ipynb", ".mdx"]
    nan = io.BytesIO()
    np.save(nan, np.full(32, np.inf, dtype=np.float16))
    DAMAGE[0] = nan.getvalue()
    t = time.perf_counter()
    run()
    record("fuzz", "15 random trees x random commands", True)
    TIMINGS.append(("property test, 15 examples", time.perf_counter() - t, 0.0))


# --- table --------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _table() -> Iterator[None]:
    yield
    if not HOSTILE:
        return
    cats: dict[str, list[bool]] = {}
    for cat, _case, ok in HOSTILE:
        cats.setdefault(cat, []).append(ok)
    lines = ["", "category      tried  well  badly"]
    for cat, oks in cats.items():
        lines.append(f"{cat:<12} {len(oks):>6} {sum(oks):>5} {len(oks) - sum(oks):>6}")
    for what, took, _ in TIMINGS:
        lines.append(f"timing: {what}: {took:.2f} s")
    print("\n".join(lines))


def test_a_committed_cache_link_is_never_written_through(repo: Path, tmp_path: Path) -> None:
    """`cache/` in .neocortex/.gitignore ignores a folder only: a link named `cache` can be
    committed, and the index, the sync state and the lock files used to land where it
    pointed (an existing `.lock` there truncated)."""
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".lock").write_text("precious")
    cache = repo / ".neocortex/cache"
    shutil.rmtree(cache)  # (it holds folders too: the code index's `code/`)
    os.symlink(outside, cache)
    git(repo, "add", ".neocortex/cache")  # not ignored: a link is no folder to `cache/`
    for cmd in (
        ["retrieve", "config"],
        ["sync"],
        ["memory", "add", "The config file is read once at start."],
    ):
        proc = ncx(*cmd, ok=False)
        record(
            "symlinks", f"{cmd[0]} with a linked cache/", clean_fail(proc, code={1}), proc.stderr
        )
    record(
        "symlinks",
        "nothing written through cache/",
        sorted(p.name for p in outside.iterdir()) == [".lock"]
        and (outside / ".lock").read_text() == "precious",
    )


def test_temp_sweeps_stay_inside_neocortex(repo: Path, tmp_path: Path) -> None:
    """A linked memories/ (committed) must not let sync's sweep of dead temp files delete
    matching names in the folder it points to."""
    write(repo, "docs/a.md", f"# A\n\n{SEC}\n")
    commit_all(repo)
    ncx("init")
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / ".tmp-victim.npy"
    victim.write_bytes(b"keep me")
    os.utime(victim, (0, 0))  # old: a dead writer's leftover to the sweep
    mem = repo / ".neocortex/memories"
    for p in sorted(mem.iterdir()):
        p.unlink()
    mem.rmdir()
    os.symlink(outside, mem)
    proc = ncx("sync", ok=False)
    record("symlinks", "sync with a linked memories/", clean_fail(proc, code={1}), proc.stderr)
    record("symlinks", "no sweep through memories/", victim.exists())
