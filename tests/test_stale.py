"""Memories that know when they went stale: citations recorded at add, checked against the
work tree by `ncx status`, `ncx check --since`, `ncx review`, the frame and the ranking.
Real CLI, real git repos (issue 30 item 3)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import commit_all, git, mcp_session, ncx, write

MEM = ".neocortex/memories"

AUTH = '''"""Auth helpers."""


def refresh_token(session):
    """Refresh the token of a session."""
    return session.renew(retries=3)


def rotate_key(store):
    return store.rotate()
'''

GUIDE = (
    "# Guide\n\n## Install\n\n"
    + "Run pip install to install the package on linux, windows or mac. " * 12
    + "\n\n## Usage\n\n"
    + "Run it with a task and a budget; the frame holds the context. " * 12
    + "\n"
)


@pytest.fixture
def tree(repo: Path) -> Path:
    write(repo, "src/auth.py", AUTH)
    write(repo, "src/other.py", "def unrelated():\n    return 1\n")
    write(repo, "docs/guide.md", GUIDE)
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(repo, "ncx")
    return repo


def add(*args: str) -> str:
    mid = ncx("memory", "add", *args).stdout.strip()
    assert re.fullmatch(r"MEM-\d{4}-\d{2}-\d{2}-[a-z2-7]{6}", mid)
    return mid


def cites(root: Path, mid: str) -> list[dict[str, str]]:
    meta = yaml.safe_load((root / MEM / f"{mid}.md").read_text().split("---\n")[1])
    return meta.get("cites") or []  # type: ignore[no-any-return]


def stale_ids(root: Path) -> set[str]:
    out = json.loads(ncx("status", "--json").stdout)
    return {s["memory"] for s in out["stale_memories"]}


def test_add_records_what_it_cites_and_the_vector_is_untouched(tree: Path) -> None:
    mid = add(
        "The token refresh in `refresh_token` retries three times",
        "--related-doc",
        "docs/guide.md#guide--install",
    )
    got = cites(tree, mid)
    assert [(c["path"], c.get("symbol"), c.get("section")) for c in got] == [
        ("docs/guide.md", None, "guide--install"),
        ("src/auth.py", "refresh_token", None),
    ]
    assert all(re.fullmatch(r"[0-9a-f]{12}", c["hash"]) for c in got)
    commit_all(tree, "mem")
    # recording is deterministic and sync neither re-embeds nor rewrites the memory
    ncx("sync", "-q")
    assert git(tree, "status", "--porcelain") == ""
    assert ncx("check").returncode == 0


def test_a_changed_function_is_flagged_everywhere_and_confirm_clears_it(tree: Path) -> None:
    base = git(tree, "rev-parse", "HEAD").strip()
    stale = add("The token refresh helper `refresh_token` retries on the server")
    fresh = add("The token refresh helper `rotate_key` retries on the client")
    commit_all(tree, "memories")
    assert stale_ids(tree) == set()
    write(tree, "src/auth.py", AUTH.replace("retries=3", "retries=5"))
    commit_all(tree, "code change")

    status = ncx("status").stdout
    assert "1 memory cite" in status
    assert f"{stale}: cites src/auth.py:refresh_token(), changed since (in 1 commit)" in status
    assert stale_ids(tree) == {stale}

    chk = ncx("check", "--since", base)  # a warning, not a failure
    assert f"ncx: warning: {stale}: cites src/auth.py:refresh_token()" in chk.stderr

    review = ncx("review", f"{base}..HEAD").stdout
    assert (
        "### Stale memories" in review
        and stale in review
        and fresh not in review.split("### Stale memories")[1]
    )

    frame = ncx("assemble", "--task", "token refresh helper retries").stdout
    assert f"`ncx memory evolve {stale} --confirm`" in frame
    assert frame.count("changed since: confirm") == 1

    hits = ncx("retrieve", "token refresh helper retries", "--kind", "memory", "--json").stdout
    order = [json.loads(line)["id"] for line in hits.splitlines()]
    assert order.index(fresh) < order.index(stale)

    ncx("memory", "evolve", stale, "--confirm")
    assert stale_ids(tree) == set()
    assert "changed since" not in ncx("assemble", "--task", "token refresh helper retries").stdout
    ncx("memory", "evolve", stale, "--confirm")  # twice: the same bytes
    commit_all(tree, "confirmed")
    ncx("memory", "evolve", stale, "--confirm")
    assert git(tree, "status", "--porcelain") == ""


def test_the_fresh_one_ranks_first_only_because_the_other_is_stale(tree: Path) -> None:
    stale = add("The token refresh helper `refresh_token` retries on the client")
    fresh = add("The token refresh helper `rotate_key` retries on the server")
    q = ("retrieve", "token refresh helper retries", "--kind", "memory", "--json")
    before = [json.loads(x)["id"] for x in ncx(*q).stdout.splitlines()]
    assert before.index(stale) < before.index(fresh)  # fresh, it ranks first
    write(tree, "src/auth.py", AUTH.replace("retries=3", "retries=5"))
    after = [json.loads(x)["id"] for x in ncx(*q).stdout.splitlines()]
    assert after.index(fresh) < after.index(stale)


def test_unchanged_citations_are_never_flagged(tree: Path) -> None:
    mid = add(
        "The token refresh helper `refresh_token` retries three times; see src/auth.py",
        "--related-doc",
        "docs/guide.md#guide--install",
    )
    commit_all(tree, "mem")
    # edits elsewhere: another function of the same file, lines added above, another
    # section of the doc, another file
    write(
        tree,
        "src/auth.py",
        "import os\n\n" + AUTH.replace("store.rotate()", "store.rotate(force=True)"),
    )
    write(tree, "docs/guide.md", GUIDE.replace("Run it.", "Run it twice."))
    write(tree, "src/other.py", "def unrelated():\n    return 2\n")
    ncx("sync", "-q")
    commit_all(tree, "edits")
    assert stale_ids(tree) == set()
    assert "cite code or docs" not in ncx("status").stdout
    assert mid not in ncx("review", "HEAD~1..HEAD").stdout.partition("### Stale")[2]


def test_a_deleted_file_is_flagged(tree: Path) -> None:
    mid = add("The other module src/other.py holds the unrelated helper")
    assert cites(tree, mid) == [{"path": "src/other.py", "hash": cites(tree, mid)[0]["hash"]}]
    commit_all(tree, "mem")
    git(tree, "rm", "-q", "src/other.py")
    commit_all(tree, "rm")
    out = json.loads(ncx("status", "--json").stdout)["stale_memories"]
    assert out == [{"memory": mid, "path": "src/other.py", "hash": out[0]["hash"], "gone": True}]
    assert f"{mid}: cites src/other.py, gone since" in ncx("status").stdout


def test_a_doc_section_edit_is_flagged(tree: Path) -> None:
    mid = add("Install with pip", "--related-doc", "docs/guide.md#guide--install")
    other = add("Usage is one command", "--related-doc", "docs/guide.md#guide--usage")
    commit_all(tree, "mem")
    write(tree, "docs/guide.md", GUIDE.replace("pip install", "uv pip install"))
    ncx("sync", "-q")
    commit_all(tree, "doc edit")
    assert stale_ids(tree) == {mid}
    assert f"{mid}: cites docs/guide.md#guide--install, changed since" in ncx("status").stdout
    assert other not in ncx("status").stdout


def test_a_correction_records_the_citations_again(tree: Path) -> None:
    mid = add("The token refresh helper `refresh_token` retries three times")
    write(tree, "src/auth.py", AUTH.replace("retries=3", "retries=5"))
    assert stale_ids(tree) == {mid}
    ncx("memory", "evolve", mid, "--incorrect", "it retries five times")
    assert stale_ids(tree) == set()


def test_a_hand_broken_cites_list_is_a_check_problem(tree: Path) -> None:
    mid = add("The token refresh helper `refresh_token` retries three times")
    path = tree / MEM / f"{mid}.md"
    text = path.read_text()
    path.write_text(re.sub(r"(?m)^  hash: [0-9a-f]+$", "  hash: [1, 2]", text, count=1))
    proc = ncx("check", ok=False)
    assert proc.returncode == 1 and "cites must be a list" in proc.stdout


def test_a_large_tree_without_a_code_index_reads_only_the_files_named(tree: Path) -> None:
    import shutil

    for i in range(160):  # over QUICK_CODE_FILES: a first code index build is not started
        write(tree, f"pkg/m{i}.py", f"def helper_{i}():\n    return {i}\n")
    commit_all(tree, "many files")
    shutil.rmtree(tree / ".neocortex" / "cache" / "code", ignore_errors=True)
    mid = add("In src/auth.py, `refresh_token` retries; `helper_7` is elsewhere")
    assert [(c["path"], c.get("symbol")) for c in cites(tree, mid)] == [
        ("src/auth.py", "refresh_token")
    ]
    assert not (tree / ".neocortex" / "cache" / "code" / "index.npz").exists()
    write(tree, "src/auth.py", AUTH.replace("retries=3", "retries=5"))
    assert stale_ids(tree) == {mid}


@pytest.mark.e2e
def test_mcp_remember_records_citations_and_a_frame_then_flags_it(tree: Path) -> None:
    got: dict[str, object] = {}

    async def session(s: Any) -> None:
        got["remember"] = await s.call_tool(
            "remember",
            {"learning": "The token refresh helper `refresh_token` retries on the server"},
        )

    mcp_session(tree, session)
    added = got["remember"].structured_content  # type: ignore[attr-defined]
    mid = added["id"]
    assert [(c["path"], c.get("symbol")) for c in cites(tree, mid)] == [
        ("src/auth.py", "refresh_token")
    ]
    ncx("memory", "approve", mid)
    write(tree, "src/auth.py", AUTH.replace("retries=3", "retries=5"))
    assert stale_ids(tree) == {mid}


def test_a_hand_edited_cite_never_reads_outside_the_repository(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def refresh_token():\n    return 1\n")
    (tree / "linked").symlink_to(outside)
    mid = add("The other module src/other.py holds the unrelated helper")
    path = tree / MEM / f"{mid}.md"
    text = path.read_text()
    from ncx.code.store import git_blob_id

    blob = git_blob_id((outside / "secret.py").read_bytes())[:12]
    for bad in ("linked/secret.py", "../outside/secret.py", str(outside / "secret.py")):
        path.write_text(
            re.sub(r"path: src/other\.py\n  hash: \w+", f"path: {bad}\n  hash: {blob}", text)
        )
        assert stale_ids(tree) == {mid}, bad  # read as gone, whatever it holds


def _settled(*paths: Path) -> None:
    """Files written a minute ago: a stat sync records is then trusted (ncx.memory.stale)."""
    import os
    import time

    old = time.time() - 60
    for p in paths:
        os.utime(p, (old, old))


def test_a_frame_reads_the_staleness_sync_stored_and_sees_an_edit_since(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ncx.memory import cites
    from ncx.memory.stale import Staleness

    mid = add("The token refresh helper `refresh_token` retries on the server")
    rel = f"{MEM}/{mid}.md"
    write(tree, "src/auth.py", AUTH.replace("retries=3", "retries=5"))
    _settled(tree / "src/auth.py", tree / rel)
    ncx("sync", "-q")
    table = json.loads((tree / ".neocortex/cache/stale.json").read_text())
    assert [s["cite"]["symbol"] for s in table["memories"][rel]["stale"]] == ["refresh_token"]

    def rehashed(*args: object) -> None:
        raise AssertionError("a frame re-hashed cited code that sync had judged")

    with monkeypatch.context() as m:
        m.setattr(cites, "current", rehashed)
        frame = ncx("assemble", "--task", "token refresh helper retries").stdout
    assert f"`ncx memory evolve {mid} --confirm`" in frame
    # the code put back as the memory cites it, not synced: the frame goes by the files
    write(tree, "src/auth.py", AUTH)
    assert Staleness(tree).of(rel) == []
    assert "changed since" not in ncx("assemble", "--task", "token refresh helper retries").stdout


def test_a_hand_broken_staleness_table_is_worked_out_from_the_files(tree: Path) -> None:
    mid = add("The token refresh helper `refresh_token` retries on the server")
    write(tree, "src/auth.py", AUTH.replace("retries=3", "retries=5"))
    table = tree / ".neocortex/cache/stale.json"
    hand_broken = json.dumps({"version": 1, "memories": {f"{MEM}/{mid}.md": {"inputs": 3}}})
    for broken in ("{", hand_broken):
        table.write_text(broken)
        frame = ncx("assemble", "--task", "token refresh helper retries").stdout
        assert f"`ncx memory evolve {mid} --confirm`" in frame
