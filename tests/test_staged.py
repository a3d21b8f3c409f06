"""The index judge and the `vec` id, in process: O(change) hooks, dry runs, upgrades."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, commit_all, git, ncx, write

from ncx.store import dump_frontmatter, parse_frontmatter, vec_of, with_vec

SEC = " ".join(["Every request is authenticated by the gateway before it reaches a service."] * 5)


def doc(*sections: str) -> str:
    return "# Ops\n\n" + SEC + "\n\n" + "".join(f"## {s}\n\n{SEC} {s}.\n\n" for s in sections)


@pytest.fixture
def synced(repo: Path) -> Path:
    write(repo, "docs/ops.md", doc("Deploy", "Monitor"))
    write(repo, "docs/guide.md", doc("Install", "Usage"))
    commit_all(repo, "docs")
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    return repo


@pytest.mark.parametrize(
    "vec", ["0123456789012345", "1234567890123456", "abcdef0123456789", "1234567890123e45"]
)
def test_vec_line_is_what_yaml_writes_and_reads(vec: str) -> None:
    md = dump_frontmatter({"id": "x", "hash": "00aa"}, "body\n").encode()
    full = with_vec(md, vec)
    assert full == dump_frontmatter({"id": "x", "hash": "00aa", "vec": vec}, "body\n").encode()
    assert vec_of(full) == vec
    assert parse_frontmatter(full.decode(), path="x")[0]["vec"] == vec


# Runs `ncx hook NAME` with every way of listing a folder refused, and reports whether numpy,
# yaml, typer, the chunk-file writer or the reader registry were imported: a commit that
# touches no doc needs none of them.
_PROBE = """
import os, runpy, sys
def refuse(*a, **k):
    raise AssertionError(f"tree-wide listing: {a}")
os.scandir = os.listdir = os.walk = refuse
sys.argv = ["ncx", "hook", sys.argv[1]]
try:
    runpy.run_module("ncx", run_name="__main__")
except SystemExit as exc:
    code = exc.code
print("exit", code, *(m in sys.modules for m in ("numpy", "yaml", "typer", "ncx.tree.chunkfile", "ncx.sources")))
"""


@pytest.mark.parametrize("hook", ["sync", "check"])
def test_code_only_commit_hook_does_no_tree_wide_work(synced: Path, hook: str) -> None:
    write(synced, "src/app.py", "x = 1\n")
    git(synced, "add", "src/app.py")
    env = {**os.environ, "GIT_INDEX_FILE": ".git/index", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, hook], cwd=synced, env=env, capture_output=True, text=True
    )
    assert out.stdout.strip() == "exit 0 False False False False False", out.stdout + out.stderr


def test_hook_check_in_a_commit_reads_only_the_staged_doc(synced: Path) -> None:
    """A broken chunk of another doc is not this commit's business (CI's full check sees it)."""
    (synced / ".neocortex/chunks/docs/guide.md").write_text("junk\n")
    git(synced, "add", "-A")
    commit_all(synced, "break guide (no hook)")
    write(synced, "docs/ops.md", doc("Deploy", "Monitor", "Scale"))
    ncx("sync", "docs/ops.md")
    git(synced, "add", "-A")
    env = {"GIT_INDEX_FILE": ".git/index"}
    assert ncx("hook", "check", env=env).returncode == 0
    full = ncx("hook", "check", "--all", env=env, ok=False)
    assert ".neocortex/chunks/docs/guide.md: not a chunk file" in full.stdout


def test_dry_run_lists_exactly_what_sync_writes(synced: Path) -> None:
    write(
        synced,
        "docs/ops.md",
        doc("Deploy", "Scale").replace(f"{SEC} Deploy.", f"{SEC} Deploy now."),
    )
    (synced / ".neocortex/chunks/docs/guide.md").unlink()
    mid = ncx("memory", "add", "The cache is rebuilt after every commit").stdout.strip()
    md = synced / f".neocortex/memories/{mid}.md"
    md.write_text(md.read_text().replace("after every commit", "after every merge"))
    dry = json.loads(ncx("sync", "--dry-run", "--json").stdout)
    real = json.loads(ncx("sync", "--json").stdout)
    assert (dry["written"], dry["removed"]) == (real["written"], real["removed"])
    assert f".neocortex/memories/{mid}.md" in real["written"]
    assert ".neocortex/chunks/docs/guide.md" in real["written"]


def test_a_tree_from_before_vec_is_upgraded_by_one_sync(synced: Path) -> None:
    mid = ncx("memory", "add", "The cache is rebuilt after every commit").stdout.strip()
    commit_all(synced, "memory")
    # (A chunk's vector is inside its block since format 2; memories keep their .npy.)
    units = sorted((synced / ".neocortex/memories").glob("MEM-*.md"))
    npys = {p: p.read_bytes() for p in (synced / ".neocortex").rglob("*.npy")}
    for p in units:
        p.write_text(
            "".join(
                ln for ln in p.read_text().splitlines(keepends=True) if not ln.startswith("vec: ")
            )
        )
    assert "stale" in ncx("check", ok=False).stdout
    out = json.loads(ncx("sync", "--json").stdout)
    assert out["embedded"] == 0 and all(p.endswith(".md") for p in out["written"])
    assert f".neocortex/memories/{mid}.md" in out["written"]
    assert {p: p.read_bytes() for p in npys} == npys  # no vector changed
    ncx("check")
    assert git(synced, "status", "--porcelain") == ""


def test_sync_does_not_believe_its_state_file(synced: Path) -> None:
    chunk = synced / ".neocortex/chunks/docs/ops.md"
    good = chunk.read_bytes()
    chunk.write_bytes(good.replace(b"Deploy.", b"Deploy by hand."))
    out = ncx("sync")
    assert "wrote .neocortex/chunks/docs/ops.md" in out.stdout
    assert chunk.read_bytes() == good


def test_the_staged_judge_knows_the_sidecar_suffix() -> None:
    from ncx.tree import sidecar, staged

    assert staged.SIDECAR_SUFFIX == sidecar.SUFFIX


def test_check_since_judges_only_the_branch_in_its_commits(synced: Path) -> None:
    """`ncx check --since BASE`: what HEAD changed since its merge base, judged in HEAD."""
    git(synced, "checkout", "-q", "-b", "feature")
    # A broken chunk of a doc the branch does not touch, committed on main before the branch
    # point, is trusted (main's own check saw it); the branch's unsynced doc edit is not.
    write(synced, "docs/ops.md", doc("Deploy", "Monitor", "Scale"))
    commit_all(synced, "doc edited, chunks not synced (no hook)")
    out = ncx("check", "--since", "main", ok=False)
    assert out.returncode == 1
    assert (
        ".neocortex/chunks/docs/ops.md: has 3 chunk(s) where there are 4 in the committed "
        "docs/ops.md" in out.stdout
    )
    assert "guide" not in out.stdout
    ncx("sync")
    commit_all(synced, "synced")
    ok = ncx("check", "--since", "main")
    assert "OK: what HEAD changed since main (1 doc(s)" in ok.stderr


def test_check_since_reads_the_commit_not_the_working_tree(synced: Path) -> None:
    git(synced, "checkout", "-q", "-b", "feature")
    write(synced, "docs/ops.md", doc("Deploy", "Monitor", "Scale"))
    ncx("sync")
    commit_all(synced, "synced edit")
    # A later unsynced edit in the working tree, and an edit staged but not committed,
    # change nothing: the branch's commits are what is judged.
    write(synced, "docs/ops.md", doc("Deploy"))
    write(synced, "docs/guide.md", doc("Install"))
    git(synced, "add", "docs/guide.md")
    ncx("check", "--since", "main")
    assert ncx("check", ok=False).returncode == 1  # the working tree's check sees them


def test_check_since_a_branch_that_dropped_a_doc_but_kept_its_chunks(synced: Path) -> None:
    git(synced, "checkout", "-q", "-b", "feature")
    git(synced, "rm", "-q", "docs/guide.md")
    git(synced, "commit", "-q", "--no-verify", "-m", "drop guide, keep its chunks")
    out = ncx("check", "--since", "main", ok=False)
    assert "is the chunk file of docs/guide.md, which the commit does not hold" in out.stdout


def test_check_since_names_a_bad_revision_and_the_fix(synced: Path) -> None:
    out = ncx("check", "--since", "origin/main", ok=False)
    assert out.returncode != 0
    assert "'origin/main' is not a commit here" in out.stderr
    assert "git fetch origin main" in out.stderr
    git(synced, "checkout", "-q", "--orphan", "island")
    commit_all(synced, "unrelated history")
    far = ncx("check", "--since", "main", ok=False)
    assert "no common commit" in far.stderr and "fetch-depth: 0" in far.stderr


def test_check_since_a_manifest_change_judges_every_doc(synced: Path) -> None:
    git(synced, "checkout", "-q", "-b", "feature")
    manifest = synced / ".neocortex/manifest.json"
    data = json.loads(manifest.read_text())
    data["chunker"]["max_tokens"] = 60
    manifest.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    commit_all(synced, "smaller chunks, not re-synced")
    out = ncx("check", "--since", "main", ok=False)
    # Both docs' chunks are judged against the committed manifest's settings.
    assert "docs/ops" in out.stdout and "docs/guide" in out.stdout


def _as_format_1(root: Path) -> None:
    """Rewrite a synced tree as the older format: a .md + .npy per chunk, manifest format 1."""
    import io

    import numpy as np

    from ncx.store import blob_vec, decode_vec, inline_vec, split_chunk_file, without_inline_vec

    for f in sorted((root / ".neocortex/chunks").rglob("*.md")):
        folder = f.with_suffix("")
        for block in split_chunk_file(f.read_bytes(), path=f):
            name = block.split(b"\n", 2)[1].decode().rpartition("#")[2]
            buf = io.BytesIO()
            np.save(buf, np.asarray(decode_vec(inline_vec(block), 32)), allow_pickle=False)
            md = with_vec(without_inline_vec(block).replace(b"lines:", b"x-lines:"), "0" * 16)
            folder.mkdir(parents=True, exist_ok=True)
            vec = blob_vec(buf.getvalue()).encode()
            (folder / f"{name}.md").write_bytes(md.replace(b"0" * 16, vec))
            (folder / f"{name}.npy").write_bytes(buf.getvalue())
        f.unlink()
    manifest = root / ".neocortex/manifest.json"
    manifest.write_text(manifest.read_text().replace('"format": 2', '"format": 1'))


def test_a_format_1_tree_is_named_and_moved_by_one_sync(synced: Path) -> None:
    """One .md + .npy per chunk (format 1) -> one chunk file per doc: check and the hooks
    name the one command; `ncx sync` moves every doc and removes every old file."""
    want = {
        p.relative_to(synced).as_posix(): p.read_bytes()
        for p in (synced / ".neocortex/chunks").rglob("*.md")
    }
    _as_format_1(synced)
    commit_all(synced, "a tree of the older format")
    assert len(list((synced / ".neocortex/chunks").rglob("*.npy"))) >= 4
    out = ncx("check", ok=False)
    assert "manifest.json: is format 1" in out.stdout and "`ncx sync` once" in out.stdout
    write(synced, "docs/ops.md", doc("Deploy", "Monitor", "Scale"))
    git(synced, "add", "docs/ops.md")
    hook = ncx("hook", "check", env={"GIT_INDEX_FILE": ".git/index"}, ok=False)
    assert "is format 1" in hook.stdout
    git(synced, "reset", "-q")
    git(synced, "checkout", "--", ".")
    moved = json.loads(ncx("sync", "docs/ops.md", "--json").stdout)
    assert moved["embedded"] == 0  # a path-limited run moves the whole tree all the same
    got = {
        p.relative_to(synced).as_posix(): p.read_bytes()
        for p in (synced / ".neocortex/chunks").rglob("*")
        if p.is_file() and p.name != ".gitkeep"
    }
    assert got == want  # the very bytes; every old .md and .npy removed
    assert '"format": 2' in (synced / ".neocortex/manifest.json").read_text()
    ncx("check")
    assert "nothing written" in ncx("sync").stderr


def test_a_query_on_a_format_1_tree_says_what_to_run(synced: Path) -> None:
    _as_format_1(synced)
    for args in (("retrieve", "deploy"), ("assemble", "--task", "deploy the gateway")):
        out = ncx(*args, ok=False)
        assert out.returncode != 0 and "is format 1" in out.stderr
        assert "`ncx init` and `ncx sync` once" in out.stderr
    ncx("init")
    ncx("sync")
    assert "docs/ops.md" in ncx("retrieve", "deploy").stdout


def test_a_doc_that_shows_conflict_markers_can_be_committed(synced: Path) -> None:
    """A doc about merging quotes `<<<<<<< HEAD` lines: its chunk file holds them because
    the doc does, which is no conflict; the commit's judge and a second sync agree."""
    fence = "```\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n```\n"
    write(synced, "docs/ops.md", doc("Deploy", "Monitor") + "## Conflicts\n\n" + fence)
    ncx("sync")
    git(synced, "add", "-A")
    assert ncx("hook", "check", env={"GIT_INDEX_FILE": ".git/index"}).returncode == 0
    commit_all(synced, "a doc quoting conflict markers")
    ncx("check", "--since", "HEAD~1")
    (synced / ".neocortex/cache/sync-state.json").unlink()
    assert json.loads(ncx("sync", "--json").stdout)["embedded"] == 0


@pytest.mark.parametrize(
    ("twin", "loser", "file"),
    [
        ("docs/Ops.md", "docs/ops.md", "docs/ops~"),  # a case twin (Ops.md sorts first)
        ("docs/x.rst.md", "docs/x.rst", "docs/x.rst~"),  # an rst doc and a .md of its name
    ],
)
def test_a_commit_editing_the_doc_that_lost_a_name_clash_passes(
    synced: Path, twin: str, loser: str, file: str
) -> None:
    """Two docs whose chunk files would share a name: the second by the layout's order gets
    `~` + hash. A commit touching only that doc is judged against that file, not its twin's."""
    write(synced, loser, doc("Deploy") if loser.endswith(".md") else "Ops\n===\n\n" + SEC + "\n")
    write(synced, twin, doc("Install"))
    commit_all(synced, "twins")
    ncx("sync")
    commit_all(synced, "synced twins")
    assert list((synced / ".neocortex/chunks").glob(file + "*.md"))
    with open(synced / loser, "a") as f:
        f.write("\nOne more paragraph about the gateway.\n")
    ncx("sync", loser)
    git(synced, "add", "-A")
    assert ncx("hook", "check", env={"GIT_INDEX_FILE": ".git/index"}).returncode == 0
    commit_all(synced, "edit the twin that lost")
    ncx("check", "--since", "HEAD~1")


@pytest.mark.parametrize(
    ("docs", "edited"),
    [
        (("docs/y.md.md",), "docs/y%2Emd.md"),  # an escaped name
        (("docs/Ops.md", "docs/ops.md"), "docs/ops~"),  # the twin that lost the clash
    ],
)
def test_a_hand_edit_of_an_escaped_chunk_file_is_judged_against_its_doc(
    synced: Path, docs: tuple[str, ...], edited: str
) -> None:
    for d in docs:
        write(synced, d, doc("Install", d))
    commit_all(synced, "odd names")
    ncx("sync")
    commit_all(synced, "synced")
    (f,) = (synced / ".neocortex/chunks").glob(edited + "*")
    f.write_bytes(f.read_bytes().replace(b"## Install", b"## Installing", 1))
    git(synced, "add", "-A")
    out = ncx("hook", "check", env={"GIT_INDEX_FILE": ".git/index"}, ok=False)
    assert out.returncode == 1
    assert "has a block for" in out.stdout and "does not match" in out.stdout, out.stdout


def test_check_since_a_head_that_holds_no_ncx_yet(repo: Path) -> None:
    """ncx set up in the working tree, not yet committed: the branch's commits hold nothing
    of ncx to judge (it crashed on the missing manifest in HEAD)."""
    write(repo, "docs/a.md", doc("Deploy", "Monitor"))
    commit_all(repo, "a doc")
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, "docs/a.md", doc("Deploy", "Monitor", "Scale"))
    commit_all(repo, "edited, no ncx in the repo yet")
    ncx("init")
    ncx("sync")
    out = ncx("check", "--since", "main")
    assert "OK: what HEAD changed since main" in out.stderr


def test_moving_a_format_1_tree_embeds_a_vector_of_the_wrong_size_again(synced: Path) -> None:
    """A format-1 `.npy` of another size (a hand edit, another model) is not carried into the
    chunk file (where `ncx check` would then trust it as sync's own): it is embedded again."""
    import io

    import numpy as np

    want = {
        p.relative_to(synced).as_posix(): p.read_bytes()
        for p in (synced / ".neocortex/chunks").rglob("*.md")
    }
    _as_format_1(synced)
    npy = sorted((synced / ".neocortex/chunks").rglob("*.npy"))[0]
    buf = io.BytesIO()
    np.save(buf, np.ones(16, dtype=np.float16), allow_pickle=False)
    npy.write_bytes(buf.getvalue())
    moved = json.loads(ncx("sync", "--json").stdout)
    assert moved["embedded"] == 1
    got = {
        p.relative_to(synced).as_posix(): p.read_bytes()
        for p in (synced / ".neocortex/chunks").rglob("*")
        if p.is_file() and p.name != ".gitkeep"
    }
    assert got == want
    ncx("check")


def test_staged_sizes_pair_each_path_with_its_own_line(repo: Path) -> None:
    """`git cat-file --batch-check` echoes a missing path; one holding U+2028 is still one
    line, so the paths after it keep their own sizes."""
    from ncx.repo import staged_sizes

    write(repo, "docs/real.md", "# Real\n\nText.\n")
    git(repo, "add", "docs/real.md")
    assert staged_sizes(repo, ["docs/gone\u2028x.md", "docs/real.md"]) == {"docs/real.md": 14}
