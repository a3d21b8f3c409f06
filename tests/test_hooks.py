"""The pre-commit hooks, driven by the real `pre-commit` tool in temp git repos."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import (
    NCX_SHELL,
    REPO,
    Templates,
    commit_all,
    git,
    ncx,
    shared_pre_commit_home,
    write,
)

PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which(
    "pre-commit"
)
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed"),
]

SEC = " ".join(["Every request is authenticated by the gateway before it reaches a service."] * 5)


def doc(*sections: str) -> str:
    return "# Ops\n\n" + SEC + "\n\n" + "".join(f"## {s}\n\n{SEC} {s}.\n\n" for s in sections)


def local_config() -> str:
    """Our .pre-commit-hooks.yaml as a local repo config, run with this venv's ncx.

    language: python would pip-install ncx from the network inside the test; the ids,
    entries and options under test are the manifest's own.
    """
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    for h in hooks:
        h["entry"] = h["entry"].replace("ncx", NCX_SHELL, 1)
        h["language"] = "system"
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False)


def configured(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The real pre-commit, with our hooks in `repo`'s config (installed by the caller, which
    may first commit a tree); skips the test where pre-commit is not installed."""
    if PRE_COMMIT is None:
        pytest.skip("pre-commit is not installed")
    monkeypatch.setenv("PRE_COMMIT_HOME", str(shared_pre_commit_home(tmp_path)))
    write(repo, ".pre-commit-config.yaml", local_config())
    return PRE_COMMIT


def _hooked(repo: Path) -> None:
    write(repo, ".pre-commit-config.yaml", local_config())
    write(repo, "docs/ops.md", doc("Deploy", "Monitor"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    subprocess.run([PRE_COMMIT, "install"], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def hooked(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, templates: Templates
) -> Path:
    """A synced tree with our hooks installed (built once per session, then copied)."""
    monkeypatch.setenv("PRE_COMMIT_HOME", str(shared_pre_commit_home(tmp_path)))
    return templates.tree("hooked", repo, monkeypatch, _hooked)


def commit(root: Path, msg: str = "change") -> subprocess.CompletedProcess[str]:
    """git commit through the installed pre-commit hook; stdout carries all of its output."""
    return subprocess.run(
        ["git", "commit", "-m", msg],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ},
    )


def test_manifest_entries_resolve_to_real_commands() -> None:
    for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text()):
        args = h["entry"].split()[1:]
        out = ncx(*args, "--help")
        assert "Usage" in out.stdout
        assert h["id"] in (REPO / "README.md").read_text()


def test_add_doc_hook_writes_fails_then_passes(hooked: Path) -> None:
    write(hooked, "docs/new.md", doc("Alerts"))
    git(hooked, "add", "docs/new.md")
    first = commit(hooked)
    assert first.returncode != 0
    assert "ncx: wrote .neocortex/chunks/docs/new.md" in first.stdout
    assert "git add" in first.stdout
    git(hooked, "add", ".neocortex")
    second = commit(hooked)
    assert second.returncode == 0, second.stdout
    assert git(hooked, "status", "--porcelain") == ""


def test_commit_without_docs_is_a_no_op(hooked: Path) -> None:
    write(hooked, "src/app.py", "print('hi')\n")
    git(hooked, "add", "src/app.py")
    out = commit(hooked)
    assert out.returncode == 0, out.stdout


def test_edit_delete_and_rename(hooked: Path) -> None:
    write(hooked, "docs/ops.md", doc("Deploy", "Monitor", "Scale"))
    git(hooked, "add", "docs/ops.md")
    assert commit(hooked).returncode != 0
    git(hooked, "add", ".neocortex")
    assert commit(hooked).returncode == 0
    git(hooked, "mv", "docs/ops.md", "docs/operations.md")
    out = commit(hooked)
    assert out.returncode != 0
    assert "removed .neocortex/chunks/docs/ops.md" in out.stdout
    assert "wrote .neocortex/chunks/docs/operations.md" in out.stdout
    git(hooked, "add", "-A", ".neocortex")
    assert commit(hooked).returncode == 0
    git(hooked, "rm", "-q", "docs/operations.md")  # a delete-only commit
    out = commit(hooked)
    assert out.returncode != 0 and "removed .neocortex/chunks/docs/operations.md" in out.stdout
    git(hooked, "add", "-A", ".neocortex")
    assert commit(hooked).returncode == 0
    assert not (hooked / ".neocortex/chunks/docs").exists()


def test_partially_staged_doc_follows_the_index(hooked: Path) -> None:
    write(hooked, "docs/ops.md", doc("Deploy", "Monitor", "Staged"))
    git(hooked, "add", "docs/ops.md")
    write(hooked, "docs/ops.md", doc("Deploy", "Monitor", "Staged", "Unstaged"))
    write(hooked, "src/wip.py", "x = 1\n")  # unrelated unstaged change
    out = commit(hooked)
    assert out.returncode != 0
    assert "ncx: wrote .neocortex/chunks/docs/ops.md" in out.stdout
    git(hooked, "add", ".neocortex")
    assert commit(hooked).returncode == 0
    # the unstaged edit survived pre-commit's stash, and stayed out of the commit
    assert "## Unstaged" in (hooked / "docs/ops.md").read_text()
    committed = git(hooked, "show", "HEAD:.neocortex/chunks/docs/ops.md")
    assert "ops--staged" in committed and "ops--unstaged" not in committed


def test_many_files(hooked: Path) -> None:
    for i in range(60):
        write(hooked, f"notes/n{i:02}.md", doc(f"Topic {i}"))
    git(hooked, "add", "notes")
    assert commit(hooked).returncode != 0
    git(hooked, "add", ".neocortex")
    out = commit(hooked)
    assert out.returncode == 0, out.stdout
    assert len(list((hooked / ".neocortex/chunks/notes").iterdir())) == 60  # a file per doc


def test_check_hook_fails_on_a_broken_tree(hooked: Path, tmp_path: Path) -> None:
    chunk = hooked / ".neocortex/chunks/docs/ops.md"
    chunk.write_text(chunk.read_text().replace("vec: f16:", "vec: f16:AAAA", 1))
    out = subprocess.run(
        [PRE_COMMIT, "run", "ncx-check", "--all-files"], cwd=hooked, capture_output=True, text=True
    )
    assert out.returncode == 1
    assert "chunks/docs/ops.md: chunk 1 has no vector of 32 values" in out.stdout


def test_merge_of_different_sections_and_memories_has_no_conflict(hooked: Path) -> None:
    git(hooked, "checkout", "-q", "-b", "feature")
    write(
        hooked,
        "docs/ops.md",
        doc("Deploy", "Monitor").replace(f"{SEC} Deploy.", f"{SEC} Deploy fast."),
    )
    ncx("sync")
    commit_all(hooked, "feature edit")
    git(hooked, "checkout", "-q", "main")
    write(
        hooked,
        "docs/ops.md",
        doc("Deploy", "Monitor").replace(f"{SEC} Monitor.", f"{SEC} Monitor more."),
    )
    ncx("sync")
    commit_all(hooked, "main edit")
    merged = subprocess.run(
        ["git", "merge", "--no-edit", "feature"], cwd=hooked, capture_output=True, text=True
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    out = ncx("sync")
    assert "nothing written" in out.stderr  # both sides' chunks are already right


def test_same_section_conflict_is_fixed_by_sync(hooked: Path) -> None:
    git(hooked, "checkout", "-q", "-b", "feature")
    write(
        hooked,
        "docs/ops.md",
        doc("Deploy", "Monitor").replace(
            f"{SEC} Deploy.", "Deploy with the feature flag on. " * 12
        ),
    )
    ncx("sync")
    commit_all(hooked, "feature edit")
    git(hooked, "checkout", "-q", "main")
    write(
        hooked,
        "docs/ops.md",
        doc("Deploy", "Monitor").replace(f"{SEC} Deploy.", "Deploy after the freeze ends. " * 12),
    )
    ncx("sync")
    commit_all(hooked, "main edit")
    merged = subprocess.run(
        ["git", "merge", "--no-edit", "feature"], cwd=hooked, capture_output=True, text=True
    )
    assert merged.returncode != 0
    # the user resolves the doc; ncx regenerates its derived files
    write(
        hooked,
        "docs/ops.md",
        doc("Deploy", "Monitor").replace(
            f"{SEC} Deploy.", "Deploy with the flag, after the freeze. " * 12
        ),
    )
    ncx("sync")
    chunk = (hooked / ".neocortex/chunks/docs/ops.md").read_text()
    assert "<<<<<<<" not in chunk and "after the freeze" in chunk
    git(hooked, "add", "-A")
    ncx("check")
