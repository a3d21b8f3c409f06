"""What a code-only commit's hooks cost: they decide from git alone, in as few git calls as
the included-by map allows (each hook runs them on every commit)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, first_sync, git, write

import ncx.tree.touched as touched


def _synced_doc_and_code(repo: Path) -> None:
    """A doc naming a source file, synced (which records the included-by map at this HEAD)
    and committed with its .neocortex/."""
    write(repo, "docs/guide.md", "# Guide\n\nSee `src/app.py`.\n")
    write(repo, "src/app.py", "x = 1\n")
    first_sync(repo)
    commit_all(repo, "ncx")


def test_a_code_only_commit_is_judged_in_two_git_calls(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _synced_doc_and_code(repo)
    write(repo, "src/app.py", "x = 2\n")
    commit_all(repo, "code")  # HEAD moved past the map's commit, as after every commit
    write(repo, "src/app.py", "x = 3\n")
    git(repo, "add", "src/app.py")
    calls: list[list[str]] = []
    real = subprocess.run

    def counted(args: list[str], **kw: Any) -> Any:
        calls.append(list(args))
        return real(args, **kw)

    monkeypatch.setattr(touched.subprocess, "run", counted)
    assert not touched.index_concerns_ncx()  # nothing for either hook to judge
    # the staged diff, and one diff of the docs since the map was made (no `rev-parse`)
    assert [c[:2] for c in calls] == [["git", "diff"], ["git", "diff"]]
    write(repo, "docs/new.md", '# New\n\n--8<-- "src/app.py"\n')
    commit_all(repo, "a doc that includes it, committed without the hooks")
    git(repo, "add", "src/app.py")
    write(repo, "src/app.py", "x = 4\n")
    git(repo, "add", "src/app.py")
    assert touched.index_concerns_ncx()  # docs moved since the map: the full path decides


def test_the_code_only_path_imports_only_what_it_needs(repo: Path) -> None:
    """Each hook starts a Python process on every commit: the code-only decision imports
    neither ncx.store (its imports cost a hook ~25 ms) nor typing, nor numpy."""
    import os
    import sys

    _synced_doc_and_code(repo)
    write(repo, "src/app.py", "x = 2\n")
    git(repo, "add", "src/app.py")
    probe = (
        "import sys; import ncx.tree.touched as t; assert not t.index_concerns_ncx(); "
        "print(' '.join(sorted(m for m in sys.modules if m in "
        "('ncx.store', 'typing', 'numpy', 'ncx.tree.staged'))))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "index")},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def _one_doc_staged(repo: Path) -> dict[str, str]:
    """A synced doc, edited and staged; the environment `git commit` gives its hooks."""
    import os

    _synced_doc_and_code(repo)
    write(repo, "docs/guide.md", "# Guide\n\nSee `src/app.py`, and the new section.\n")
    git(repo, "add", "docs/guide.md")
    return {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "index")}


def test_the_check_hook_takes_the_sync_hooks_verdict_once(repo: Path) -> None:
    """Both hooks judge one index; the check hook reads what the sync hook found (handover.py)
    and says exactly what its own judgement says."""
    from conftest import ncx_proc

    env = _one_doc_staged(repo)
    left = repo / ".neocortex" / "cache" / "verdict.json"
    synced = ncx_proc("hook", "sync", env=env, ok=False)
    assert synced.returncode == 1 and "ncx: wrote" in synced.stdout
    assert left.is_file()
    handed = ncx_proc("hook", "check", env=env, ok=False)
    assert not left.exists()  # read once
    judged = ncx_proc("hook", "check", env=env, ok=False)  # nothing left: verify again
    assert handed.returncode == judged.returncode == 1
    assert "ncx-sync wrote it" in handed.stdout
    assert (handed.stdout, handed.stderr) == (judged.stdout, judged.stderr)


def test_a_verdict_on_another_index_is_not_taken(repo: Path) -> None:
    """Staging what the sync hook wrote changes the index: the check hook judges it anew
    (and passes) instead of repeating the verdict on the index before."""
    from conftest import ncx_proc

    env = _one_doc_staged(repo)
    assert ncx_proc("hook", "sync", env=env, ok=False).returncode == 1
    git(repo, "add", ".neocortex")
    checked = ncx_proc("hook", "check", env=env, ok=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert not (repo / ".neocortex" / "cache" / "verdict.json").exists()


def test_the_handover_key_follows_everything_verify_reads(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from ncx.config import load_config
    from ncx.tree import handover
    from ncx.tree.staged import Finding, Scope

    env = _one_doc_staged(repo)
    cfg, scope = load_config(), Scope(frozenset({"docs/guide.md", "docs/a.md", "docs/b.md"}))
    assert handover.key(repo, cfg, scope) is None  # not inside `git commit`: nothing kept
    monkeypatch.setenv("GIT_INDEX_FILE", env["GIT_INDEX_FILE"])
    k = handover.key(repo, cfg, scope)
    assert k is not None and handover.key(repo, cfg, scope) == k
    assert handover.key(repo, cfg, Scope(frozenset({"docs/guide.md"}))) != k
    assert handover.key(repo, cfg, None) != k
    # a frozenset's order is per process: the key is not
    probe = (
        "import sys; from pathlib import Path; from ncx.config import load_config; "
        "from ncx.tree.handover import key; from ncx.tree.staged import Scope; "
        "print(key(Path('.'), load_config(), "
        "Scope(frozenset({'docs/guide.md', 'docs/a.md', 'docs/b.md'}))))"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            env={**env, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2", "3")
    }
    assert len(keys) == 1  # (children of this process: their parent is not the test's)
    manifest = repo / ".neocortex" / "manifest.json"
    was = manifest.read_bytes()
    manifest.write_bytes(was.replace(b"{", b"{ ", 1))
    assert handover.key(repo, cfg, scope) != k
    manifest.write_bytes(was)
    found = [Finding("a.md", "is stale; run `ncx sync a.md`", "a.md", True)]
    handover.leave(repo, k, found)
    assert handover.take(repo, "another key") is None
    assert handover.take(repo, k) is None  # the first take removed it
    handover.leave(repo, k, found)
    assert handover.take(repo, k) == found
    write(repo, "docs/guide.md", "# Guide\n\nstaged again\n")
    git(repo, "add", "docs/guide.md")
    assert handover.key(repo, cfg, scope) != k  # the index moved
