"""A commit hook that can be trusted (issue 13): every way a commit used to land with chunk
files that disagree with its docs, on a real git repo through the real `pre-commit`.

Each test is one scenario of the issue's list; the note maps scenario -> test name.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import Templates, commit_all, git, ncx, shared_pre_commit_home, write
from test_hooks import PRE_COMMIT, SEC, commit, doc, local_config

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed"),
]

CHUNK = ".neocortex/chunks/docs/ops.md"  # the doc's chunk file
HOOK_TYPES = ["pre-commit", "post-merge", "post-rewrite"]


def install(root: Path) -> None:
    args = [a for t in HOOK_TYPES for a in ("--hook-type", t)]
    subprocess.run([PRE_COMMIT, "install", *args], cwd=root, check=True, capture_output=True)


def _tree(repo: Path) -> None:
    write(repo, ".pre-commit-config.yaml", local_config())
    write(repo, "docs/ops.md", doc("Deploy", "Monitor"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    install(repo)


@pytest.fixture
def tree(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, templates: Templates) -> Path:
    """A synced tree with our hooks installed for every hook type (built once per session,
    then copied)."""
    monkeypatch.setenv("PRE_COMMIT_HOME", str(shared_pre_commit_home(tmp_path)))
    monkeypatch.setenv("GIT_EDITOR", "true")
    return templates.tree("hook-trust-tree", repo, monkeypatch, _tree)


def edit(root: Path, old: str, new: str, rel: str = "docs/ops.md") -> None:
    p = root / rel
    p.write_text(p.read_text().replace(old, new))


def run_git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ},
    )


def test_retry_without_staging_the_hooks_output_fails(tree: Path) -> None:
    write(tree, "docs/ops.md", doc("Deploy", "Monitor", "Scale"))
    git(tree, "add", "docs/ops.md")
    assert commit(tree).returncode != 0  # the hook wrote the chunk files
    retry = commit(tree)  # ... which nobody staged
    assert retry.returncode != 0
    assert f"{CHUNK}: has 3 chunk(s) where there are 4 in the staged docs/ops.md" in retry.stdout
    assert "stage the doc and .neocortex: `git add docs/ops.md .neocortex`" in retry.stdout
    git(tree, "add", ".neocortex")
    assert commit(tree).returncode == 0


def test_sync_then_staging_only_the_doc_fails(tree: Path) -> None:
    edit(tree, f"{SEC} Deploy.", "Deploy only on Tuesdays. " * 10)
    ncx("sync")
    git(tree, "add", "docs/ops.md")
    out = commit(tree)
    assert out.returncode != 0
    assert f"{CHUNK}: has a block for ops--deploy that does not match the staged docs/ops.md" in (
        out.stdout
    )
    # pre-commit stashed the unstaged chunk files, so the hook wrote them again
    assert "stage the doc and .neocortex: `git add docs/ops.md .neocortex`" in out.stdout
    git(tree, "add", ".neocortex")
    assert commit(tree).returncode == 0


def test_staging_chunks_without_their_doc_says_stage_the_doc(tree: Path) -> None:
    edit(tree, f"{SEC} Deploy.", "Deploy only on Tuesdays. " * 10)
    ncx("sync")
    git(tree, "add", ".neocortex")
    out = commit(tree)
    assert out.returncode != 0
    assert "changes docs/ops.md's chunk files but not docs/ops.md: stage the doc too" in out.stdout
    assert "Tuesdays" in (tree / CHUNK).read_text()  # not overwritten
    git(tree, "add", "docs/ops.md")
    assert commit(tree).returncode == 0
    assert git(tree, "status", "--porcelain") == ""


def test_sync_then_add_p_commits_only_staged_text(tree: Path) -> None:
    write(tree, "docs/ops.md", doc("Deploy", "Monitor", "Staged", "Unstaged"))
    ncx("sync")  # chunks for the whole working-tree doc, Unstaged included
    staged = doc("Deploy", "Monitor", "Staged")  # what `git add -p` would stage
    oid = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=tree,
        input=staged,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(tree, "update-index", "--cacheinfo", f"100644,{oid},docs/ops.md")
    git(tree, "add", ".neocortex")
    out = commit(tree)
    assert out.returncode != 0
    assert f"{CHUNK}: has 5 chunk(s) where there are 4 in the staged docs/ops.md" in out.stdout
    git(tree, "add", ".neocortex")
    assert commit(tree).returncode == 0
    assert "ops--unstaged" not in git(tree, "show", f"HEAD:{CHUNK}")


def _conflict(tree: Path, ours: str, theirs: str) -> None:
    git(tree, "checkout", "-q", "-b", "feature")
    edit(tree, f"{SEC} Deploy.", theirs * 12)
    ncx("sync")
    commit_all(tree, "feature edit")
    git(tree, "checkout", "-q", "main")
    edit(tree, f"{SEC} Deploy.", ours * 12)
    ncx("sync")
    commit_all(tree, "main edit")
    assert run_git(tree, "merge", "--no-edit", "feature").returncode != 0


def test_doc_conflict_taken_with_theirs_is_caught_and_sync_fixes_it(tree: Path) -> None:
    _conflict(tree, "Deploy after the freeze. ", "Deploy with the flag on. ")
    # Both sides changed the Deploy block: the merge driver `ncx init` set up keeps ours,
    # without markers, and reports the conflict.
    assert "<<<<<<<" not in (tree / CHUNK).read_text()
    git(tree, "checkout", "--theirs", "docs/ops.md")
    git(tree, "add", "docs/ops.md", ".neocortex")  # the chunk file: ours
    out = commit(tree)
    assert out.returncode != 0
    assert f"{CHUNK}: has a block for ops--deploy that does not match the staged docs/ops.md" in (
        out.stdout
    )
    git(tree, "add", ".neocortex")
    assert commit(tree).returncode == 0
    assert "with the flag on" in git(tree, "show", f"HEAD:{CHUNK}")
    assert "nothing written" in ncx("sync").stderr


def test_state_file_is_not_believed_after_checkout_of_theirs(tree: Path) -> None:
    """`ncx sync` after `git checkout --theirs` on chunk files: the state file says the doc is
    done, the files say otherwise; the files win."""
    edit(tree, f"{SEC} Deploy.", "Deploy on Mondays. " * 12)
    ncx("sync")  # state: docs/ops.md done, with these files
    commit_all(tree, "edit")
    git(tree, "checkout", "HEAD~1", "--", CHUNK)
    out = ncx("sync")
    assert f"wrote {CHUNK}" in out.stdout
    assert git(tree, "diff", "HEAD") == ""  # the working tree is HEAD's again


def test_checkout_of_neocortex_after_a_hook_run_is_caught(tree: Path) -> None:
    edit(tree, f"{SEC} Deploy.", f"{SEC} Deploy on Fridays.")
    git(tree, "add", "docs/ops.md")
    assert commit(tree).returncode != 0
    git(tree, "checkout", "--", ".neocortex")  # throw the hook's edits away
    out = commit(tree)
    assert out.returncode != 0
    assert f"ncx: wrote {CHUNK}" in out.stdout  # written again
    git(tree, "add", ".neocortex")
    assert commit(tree).returncode == 0


def test_md_and_npy_from_different_sides_are_caught(tree: Path) -> None:
    mid = ncx("memory", "add", "The cache is rebuilt after every commit").stdout.strip()
    commit_all(tree, "memory")
    md = f".neocortex/memories/{mid}.md"
    git(tree, "checkout", "-q", "-b", "feature")
    ncx("memory", "evolve", mid, "--incorrect", "It is rebuilt after every merge of a branch")
    commit_all(tree, "feature: correct")
    git(tree, "checkout", "-q", "main")
    ncx("memory", "evolve", mid, "--incorrect", "It is rebuilt only when a doc changes")
    commit_all(tree, "main: correct")
    assert run_git(tree, "merge", "--no-edit", "feature").returncode != 0
    git(tree, "checkout", "--theirs", md)  # the text of one side; the .npy stays ours
    git(tree, "add", ".neocortex")
    out = commit(tree)
    assert out.returncode != 0
    assert f"{md[:-3]}.npy: is not the vector of its .md" in out.stdout
    git(tree, "add", ".neocortex")  # ncx-sync re-embedded it
    assert commit(tree).returncode == 0, commit(tree).stdout
    ncx("check")


def test_markers_in_a_staged_chunk_are_refused(tree: Path) -> None:
    p = tree / CHUNK
    p.write_text(p.read_text() + "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n")
    git(tree, "add", ".neocortex")
    out = commit(tree)
    assert out.returncode != 0
    assert f"{CHUNK}: has merge-conflict markers: it does not follow the staged docs/ops.md" in (
        out.stdout
    )


def test_rebase_continue_commits_no_markers_and_post_rewrite_resyncs(tree: Path) -> None:
    git(tree, "checkout", "-q", "-b", "feature")
    edit(tree, f"{SEC} Deploy.", "Deploy with the flag on. " * 12)
    ncx("sync")
    commit_all(tree, "feature edit")
    git(tree, "checkout", "-q", "main")
    edit(tree, f"{SEC} Deploy.", "Deploy after the freeze. " * 12)
    ncx("sync")
    commit_all(tree, "main edit")
    git(tree, "checkout", "-q", "feature")
    assert run_git(tree, "rebase", "main").returncode != 0
    assert "<<<<<<<" in (tree / "docs/ops.md").read_text()  # the user resolves the doc:
    write(
        tree,
        "docs/ops.md",
        doc("Deploy", "Monitor").replace(
            f"{SEC} Deploy.", "Deploy with the flag, after the freeze. " * 12
        ),
    )
    git(tree, "add", "docs/ops.md", ".neocortex")
    done = run_git(tree, "rebase", "--continue")  # git runs no pre-commit hook here
    assert done.returncode == 0, done.stdout
    assert "<<<<<<<" not in git(tree, "show", f"HEAD:{CHUNK}")
    assert "git add -A .neocortex && git commit -m 'ncx sync'" in done.stdout
    git(tree, "add", "-A", ".neocortex")
    assert commit(tree, "ncx sync").returncode == 0
    assert "with the flag, after the freeze" in git(tree, "show", f"HEAD:{CHUNK}")
    ncx("check")


def test_autocrlf_clone_passes_check_and_sync_rewrites_nothing(tree: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tree, "clone", "-q", "-c", "core.autocrlf=true", str(tree), str(clone))
    assert b"\r\n" in (clone / "docs/ops.md").read_bytes()  # the docs are CRLF here
    install(clone)
    assert "nothing written" in ncx("sync", cwd=clone).stderr
    ncx("check", cwd=clone)
    p = clone / "docs/ops.md"
    p.write_bytes(p.read_bytes() + b"## Scale\r\n\r\n" + SEC.encode() + b" Scale.\r\n")
    git(clone, "add", "docs/ops.md")
    assert commit(clone).returncode != 0
    git(clone, "add", ".neocortex")
    out = commit(clone)
    assert out.returncode == 0, out.stdout
    assert git(clone, "status", "--porcelain") == ""


def test_commit_a_loop_ends_with_stage_the_doc(tree: Path) -> None:
    write(tree, "docs/ops.md", doc("Deploy", "Monitor", "Scale"))
    first = run_git(tree, "commit", "-a", "-m", "edit")
    assert first.returncode != 0
    # The doc's chunk file is tracked: -a stages what the hook wrote, and the retry passes.
    assert run_git(tree, "commit", "-a", "-m", "edit").returncode == 0
    write(tree, "docs/new.md", doc("Fresh"))
    git(tree, "add", "docs/new.md")
    assert run_git(tree, "commit", "-a", "-m", "new doc").returncode != 0
    again = run_git(tree, "commit", "-a", "-m", "new doc")  # -a does not add a new chunk file
    assert again.returncode != 0
    assert "stage the doc and .neocortex: `git add docs/new.md .neocortex`" in again.stdout
    assert "`git commit -a` does not stage new files" in again.stdout
    git(tree, "add", ".neocortex")
    assert run_git(tree, "commit", "-a", "-m", "new doc").returncode == 0


def test_hook_sync_from_a_subdirectory(tree: Path) -> None:
    write(tree, "docs/ops.md", doc("Deploy", "Monitor", "Scale"))
    git(tree, "add", "docs/ops.md")
    out = ncx("hook", "sync", cwd=tree / "docs", ok=False)
    assert out.returncode == 1
    assert f"ncx: wrote {CHUNK}" in out.stdout
    assert "ops--scale" in (tree / CHUNK).read_text()


def test_a_many_doc_commit_prints_a_summary(tree: Path) -> None:
    for i in range(25):
        write(tree, f"notes/n{i:02}.md", doc(f"Topic {i}"))
    git(tree, "add", "notes")
    out = commit(tree)
    assert out.returncode != 0
    wrote = [ln for ln in out.stdout.splitlines() if ln.startswith("ncx: wrote")]
    assert len(wrote) == 5 and "… and 20 more (25 in all)" in out.stdout
    git(tree, "add", ".neocortex")
    assert commit(tree).returncode == 0


def test_code_only_commit_passes_and_merge_of_other_sections_stays_clean(tree: Path) -> None:
    write(tree, "src/app.py", "x = 1\n")
    git(tree, "add", "src/app.py")
    assert commit(tree).returncode == 0
    git(tree, "checkout", "-q", "-b", "feature")
    edit(tree, f"{SEC} Deploy.", f"{SEC} Deploy fast.")
    ncx("sync")
    commit_all(tree, "feature")
    git(tree, "checkout", "-q", "main")
    edit(tree, f"{SEC} Monitor.", f"{SEC} Monitor more.")
    ncx("sync")
    commit_all(tree, "main")
    merged = run_git(tree, "merge", "--no-edit", "feature")  # post-merge: nothing to fix
    assert merged.returncode == 0 and "ncx sync'" not in merged.stdout
    assert git(tree, "status", "--porcelain") == ""


@pytest.mark.parametrize("how", [[], ["--cached"]])
def test_a_commit_without_the_manifest_but_with_its_chunks_fails(
    tree: Path, how: list[str]
) -> None:
    """`git rm [--cached] .neocortex/manifest.json` used to pass both hooks; a clone of that
    commit answers every ncx command with 'no .neocortex/ here' and skips all later hooks."""
    git(tree, "rm", "-q", *how, ".neocortex/manifest.json")
    out = commit(tree)
    assert out.returncode != 0
    assert ".neocortex/manifest.json: is not in the commit" in out.stdout
    git(tree, "checkout", "HEAD", "--", ".neocortex/manifest.json")
    git(tree, "rm", "-r", "-q", ".neocortex")  # removing the whole tree stays allowed
    assert commit(tree).returncode == 0


def test_a_manifest_edit_that_breaks_the_model_fails_the_commit(tree: Path) -> None:
    path = tree / ".neocortex/manifest.json"
    manifest = json.loads(path.read_text())
    manifest["model"]["dim"] = int(manifest["model"]["dim"]) * 2  # a hand edit (review finding)
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    git(tree, "add", ".neocortex/manifest.json")
    out = commit(tree)
    assert out.returncode != 0
    assert ".neocortex/manifest.json" in out.stdout and "ncx model use" in out.stdout


def test_ci_range_check_judges_only_what_the_branch_changed(tree: Path) -> None:
    """`pre-commit run ncx-check --from-ref BASE --to-ref HEAD` (CI on a pull request): the
    branch's docs and chunks, judged in its commit; not the whole tree."""
    git(tree, "checkout", "-q", "-b", "feature")
    edit(tree, f"{SEC} Deploy.", f"{SEC} Deploy fast.")
    commit_all(tree, "doc edit, hooks skipped")  # --no-verify: its chunks are stale
    args = ["run", "ncx-check", "--from-ref", "main", "--to-ref", "HEAD"]
    bad = subprocess.run([PRE_COMMIT, *args], cwd=tree, capture_output=True, text=True)
    assert bad.returncode == 1
    assert f"{CHUNK}: has a block for ops--deploy that does not match" in bad.stdout
    assert "problem(s) in what" in bad.stdout
    ncx("sync")
    commit_all(tree, "ncx sync")
    good = subprocess.run([PRE_COMMIT, *args], cwd=tree, capture_output=True, text=True)
    assert good.returncode == 0, good.stdout
