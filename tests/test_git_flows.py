"""Every git flow a team uses ends right (issue 31): separate clones of one origin, the
README's hooks through the real `pre-commit`, and each flow ends with no step at all or with
the one command ncx names, which the test then runs as printed.

The flows and how each ends are listed in docs/design.md, "Git flows".
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import commit_all, git, ncx, write
from test_hook_trust import HOOK_TYPES, install, run_git, tree
from test_hooks import PRE_COMMIT, SEC, commit, doc

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed"),
]

__all__ = ["tree"]  # the fixture, shared with test_hook_trust

CHUNK = ".neocortex/chunks/docs/ops.md"


def named_command(out: str) -> str:
    """The one command ncx named to finish: the sync hook's (`… then commit again`), the
    post-merge hook's (`Commit it: … && git commit …`) or `ncx sync`'s for an unmerged file."""
    found = re.findall(
        r"stage the doc and \.neocortex: `((?:git rm [^`]*? && )?git add [^`]*)`, "
        r"then (?:commit again|`git am)"
        r"|Commit it: `(git add [^`]*? && git commit[^`]*)`"
        r"|mark it resolved: `(git add [^`]*)`",
        out,
    )
    assert found, out
    return next(c for c in found[-1] if c)


def run_named(root: Path, out: str) -> str:
    """Run, through a shell as a user would paste it, the command the hook named."""
    cmd = named_command(out)
    proc = subprocess.run(cmd, shell=True, cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}{proc.stderr}"
    return cmd


def unmerged(root: Path) -> list[str]:
    return git(root, "diff", "--name-only", "--diff-filter=U").split()


def edit(root: Path, old: str, new: str, rel: str = "docs/ops.md") -> None:
    p = root / rel
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new))


def branches_edit_one_section(root: Path, ours: str, theirs: str) -> None:
    """main and `feature` each edit the Deploy section, each with its hooks' chunk files."""
    git(root, "checkout", "-q", "-b", "feature")
    edit(root, f"{SEC} Deploy.", theirs * 12)
    ncx("sync")
    commit_all(root, "feature edit")
    git(root, "checkout", "-q", "main")
    edit(root, f"{SEC} Deploy.", ours * 12)
    ncx("sync")
    commit_all(root, "main edit")


# --- The unnamed step: a chunk file git leaves unmerged ---------------------------------


def test_same_section_conflict_leaves_no_unmerged_chunk_file(tree: Path) -> None:
    """Both branches edit one section: the doc conflicts, and so did its chunk file, which
    the user had to `git add` by hand (no ncx command runs while git refuses the commit)."""
    branches_edit_one_section(tree, "Deploy after the freeze. ", "Deploy with the flag on. ")
    merge = run_git(tree, "merge", "--no-edit", "feature")
    assert merge.returncode != 0
    assert unmerged(tree) == ["docs/ops.md"]  # only the doc: the derived file is ncx's
    assert "<<<<<<<" not in (tree / CHUNK).read_text()
    git(tree, "checkout", "--theirs", "docs/ops.md")
    git(tree, "add", "docs/ops.md")
    first = commit(tree, "merge")
    assert first.returncode != 0
    run_named(tree, first.stdout)
    done = commit(tree, "merge")
    assert done.returncode == 0, done.stdout
    assert "with the flag on" in git(tree, "show", f"HEAD:{CHUNK}")
    ncx("check")
    assert git(tree, "status", "--porcelain") == ""


def test_a_teammates_clone_gets_the_merge_driver_from_the_hooks(tree: Path, tmp_path: Path) -> None:
    """A clone that never ran `ncx init` (README: only the first person does): the hooks set
    up the merge driver, so two edits of different sections of a doc merge cleanly there."""
    origin = tmp_path / "origin.git"
    git(tree, "clone", "-q", "--bare", str(tree), str(origin))
    mate = tmp_path / "mate"
    git(tree, "clone", "-q", str(origin), str(mate))
    install(mate)  # what every teammate does: `pre-commit install`
    write(mate, "src/app.py", "x = 1\n")
    git(mate, "add", "src/app.py")
    assert commit(mate, "code").returncode == 0
    assert "merge-chunks" in git(mate, "config", "--get", "merge.ncx-chunks.driver")
    # and the driver does its work: different sections, merged without a step
    git(mate, "checkout", "-q", "-b", "feature")
    edit(mate, f"{SEC} Deploy.", f"{SEC} Deploy fast.")
    ncx("sync", cwd=mate)
    commit_all(mate, "feature")
    git(mate, "checkout", "-q", "main")
    edit(mate, f"{SEC} Monitor.", f"{SEC} Monitor more.")
    ncx("sync", cwd=mate)
    commit_all(mate, "main")
    merged = run_git(mate, "merge", "--no-edit", "feature")
    assert merged.returncode == 0, merged.stdout
    assert git(mate, "status", "--porcelain") == ""
    ncx("check", cwd=mate)


def test_a_clone_without_the_driver_is_resolved_by_ncx_sync(tree: Path) -> None:
    """No driver at all (no hook has run yet): git leaves the chunk file unmerged; `ncx sync`
    rewrites it from the resolved doc and names the one command that resolves it."""
    branches_edit_one_section(tree, "Deploy after the freeze. ", "Deploy with the flag on. ")
    git(tree, "config", "--unset", "merge.ncx-chunks.driver")
    (tree / ".git/info/attributes").write_text("")
    assert run_git(tree, "merge", "--no-edit", "feature").returncode != 0
    assert CHUNK in unmerged(tree)
    git(tree, "checkout", "--theirs", "docs/ops.md")
    git(tree, "add", "docs/ops.md")
    out = ncx("sync")
    assert f"{CHUNK}" in out.stderr and "unmerged" in out.stderr
    run_named(tree, out.stderr)
    assert unmerged(tree) == []
    done = commit(tree, "merge")
    assert done.returncode == 0, done.stdout
    assert "with the flag on" in git(tree, "show", f"HEAD:{CHUNK}")


# --- Item 8: the command the hook names works for renames, deletes and large changes ----


def test_named_command_works_after_a_rename(tree: Path) -> None:
    git(tree, "mv", "docs/ops.md", "docs/operations.md")
    out = commit(tree)
    assert out.returncode != 0
    cmd = run_named(tree, out.stdout)
    assert "docs/ops.md" not in cmd.split()
    done = commit(tree)
    assert done.returncode == 0, done.stdout
    assert git(tree, "status", "--porcelain") == ""


def test_named_command_works_after_a_delete(tree: Path) -> None:
    write(tree, "docs/other.md", doc("Alerts"))
    ncx("sync")
    commit_all(tree, "other")
    git(tree, "rm", "-q", "docs/ops.md")
    out = commit(tree)
    assert out.returncode != 0
    run_named(tree, out.stdout)
    assert commit(tree).returncode == 0
    assert not (tree / CHUNK).exists()


def test_named_command_is_short_on_a_300_doc_change(tree: Path) -> None:
    for i in range(300):
        write(tree, f"notes/topic-{i:03}.md", doc(f"Topic {i}"))
    ncx("sync")
    commit_all(tree, "notes")
    for i in range(300):
        git(tree, "mv", f"notes/topic-{i:03}.md", f"notes/renamed-topic-{i:03}.md")
    out = commit(tree)
    assert out.returncode != 0
    cmd = run_named(tree, out.stdout)
    assert len(cmd) < 200, cmd
    done = commit(tree)
    assert done.returncode == 0, done.stdout
    assert git(tree, "status", "--porcelain") == ""


_ = HOOK_TYPES


# --- Item 1: vectors of two models, mixed by a merge -------------------------------------


def _switch_and_add(tree: Path, other_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`switch` moves the tree to another model of the same size; main adds a doc meanwhile,
    embedded by the old model."""
    monkeypatch.delenv("NCX_EMBEDDING_MODEL")  # the manifest's model, as in a real clone
    git(tree, "checkout", "-q", "-b", "switch")
    ncx("model", "use", str(other_model))
    commit_all(tree, "switch models")
    git(tree, "checkout", "-q", "main")
    write(tree, "docs/new.md", doc("Alerts", "Pager"))
    git(tree, "add", "docs/new.md")
    assert commit(tree, "new doc").returncode != 0
    git(tree, "add", ".neocortex")
    assert commit(tree, "new doc").returncode == 0


def test_a_merge_that_mixes_two_models_is_caught_and_fixed(
    tree: Path, other_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _switch_and_add(tree, other_model, monkeypatch)
    merged = run_git(tree, "merge", "--no-edit", "switch")  # clean: no pre-commit hook
    assert merged.returncode == 0, merged.stdout
    new_chunks = ".neocortex/chunks/docs/new.md"
    # The post-merge hook re-embedded main's doc with the manifest's (new) model ...
    assert f"wrote {new_chunks}" in merged.stdout
    # ... and every judge of the merge commit sees what it holds.
    fixed = (tree / new_chunks).read_bytes()
    git(tree, "checkout", "HEAD", "--", new_chunks)
    check = ncx("check", ok=False)
    assert check.returncode == 1 and f"{new_chunks}: holds vectors another model made" in (
        check.stdout + check.stderr
    )
    since = ncx("check", "--since", "HEAD^2", ok=False)
    assert since.returncode == 1 and "another model" in since.stdout + since.stderr
    review = ncx("review", "HEAD^1..HEAD", "--fail-on-problems", ok=False)
    assert review.returncode == 1 and "another model" in review.stdout
    (tree / new_chunks).write_bytes(fixed)
    run_named(tree, merged.stdout)
    assert git(tree, "status", "--porcelain") == ""
    ncx("check")
    assert "nothing written" in ncx("sync").stderr


def test_a_branch_that_merged_another_models_doc_fails_pre_push(
    tree: Path, other_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _switch_and_add(tree, other_model, monkeypatch)
    git(tree, "checkout", "-q", "switch")
    git(tree, "merge", "-q", "--no-verify", "--no-edit", "main")
    # pre-push / CI on the pull request: what the branch changed since main
    args = ["run", "ncx-check", "--from-ref", "main", "--to-ref", "HEAD"]
    bad = subprocess.run([PRE_COMMIT, *args], cwd=tree, capture_output=True, text=True)
    assert bad.returncode == 1
    assert "docs/new.md: holds vectors another model made" in bad.stdout
    ncx("sync", "--reembed", "docs/new.md")
    commit_all(tree, "re-embed")
    good = subprocess.run([PRE_COMMIT, *args], cwd=tree, capture_output=True, text=True)
    assert good.returncode == 0, good.stdout


# --- Item 4: a merge that brings a manifest change ---------------------------------------


def test_post_merge_follows_a_manifest_change_into_every_doc(tree: Path) -> None:
    """main changes a chunker setting; a branch adds a long doc and merges main: the
    merge's post-merge hook re-chunks the branch's doc too (it judged only main's docs)."""
    git(tree, "checkout", "-q", "-b", "feature")
    long = "# Long\n\n" + "".join(f"## Part {i}\n\n{SEC} {SEC} Part {i}.\n\n" for i in range(6))
    write(tree, "docs/long.md", long)
    ncx("sync")
    commit_all(tree, "long doc")
    git(tree, "checkout", "-q", "main")
    ncx("sync", env={"NCX_CHUNK_SIZE": "300", "NCX_CHUNK_MIN": "250"})
    commit_all(tree, "bigger chunks")
    git(tree, "checkout", "-q", "feature")
    merged = run_git(tree, "merge", "--no-edit", "main")
    assert merged.returncode == 0, merged.stdout
    assert "wrote .neocortex/chunks/docs/long.md" in merged.stdout
    run_named(tree, merged.stdout)
    assert git(tree, "status", "--porcelain") == ""
    ncx("check")


# --- Item 7: what `git mergetool` leaves under .neocortex/ -------------------------------


def test_mergetool_backups_are_never_committed(tree: Path) -> None:
    backup = tree / ".neocortex/chunks/docs/ops.md.orig"
    backup.write_text((tree / CHUNK).read_text())  # what `git mergetool` leaves behind
    edit(tree, f"{SEC} Deploy.", f"{SEC} Deploy on Fridays.")
    git(tree, "add", "docs/ops.md")
    out = commit(tree)
    assert out.returncode != 0
    run_named(tree, out.stdout)
    assert commit(tree).returncode == 0
    assert "ops.md.orig" not in git(tree, "ls-files", ".neocortex")
    git(tree, "add", "-f", str(backup))  # forced past the ignore: the hook refuses it
    refused = commit(tree)
    assert refused.returncode != 0
    assert ".neocortex/chunks/docs/ops.md.orig: a merge tool's backup" in refused.stdout


# --- Item 11: `ncx init` in a core.autocrlf clone ----------------------------------------


def test_init_in_an_autocrlf_clone_changes_nothing(tree: Path, tmp_path: Path) -> None:
    clone = tmp_path / "crlf"
    git(tree, "clone", "-q", "-c", "core.autocrlf=true", str(tree), str(clone))
    assert b"\r\n" in (clone / ".gitattributes").read_bytes()
    ncx("init", cwd=clone)
    assert git(clone, "status", "--porcelain") == ""
    assert b"\r\n" in (clone / ".gitattributes").read_bytes()


# --- Item 5: a stale main, pushed by a clone without hooks -------------------------------


def stale_base(tree: Path, tmp_path: Path) -> None:
    """A teammate without hooks pushes a doc edit with stale chunks to main; `tree` (with
    pre-push installed too) fetches it and starts `feature` from it."""
    origin = tmp_path / "origin.git"
    git(tree, "clone", "-q", "--bare", str(tree), str(origin))
    git(tree, "remote", "add", "origin", str(origin))
    git(tree, "fetch", "-q", "origin")
    mate = tmp_path / "mate"  # no hooks installed: the doc edit goes out with stale chunks
    git(tree, "clone", "-q", str(origin), str(mate))
    edit(mate, f"{SEC} Deploy.", "Deploy only from the release branch. " * 10)
    commit_all(mate, "doc edit, no hooks")
    git(mate, "push", "-q", "origin", "main")
    subprocess.run(
        [PRE_COMMIT, "install", "--hook-type", "pre-push"],
        cwd=tree,
        check=True,
        capture_output=True,
    )
    git(tree, "fetch", "-q", "origin")
    git(tree, "checkout", "-q", "-b", "feature", "origin/main")


# The one command pre-push names, which ends in the commit a push needs (issue 36).
PUSH_FIX = re.compile(r"`(ncx sync [^`]*&& git commit -m 'ncx sync')`")


def run_push_fix(root: Path, out: str) -> str:
    found = PUSH_FIX.findall(out)
    assert found, out
    proc = subprocess.run(found[-1], shell=True, cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, f"{found[-1]}\n{proc.stdout}{proc.stderr}"
    return str(found[-1])


def test_pre_push_sees_a_stale_base(tree: Path, tmp_path: Path) -> None:
    stale_base(tree, tmp_path)
    write(tree, "src/app.py", "x = 1\n")
    git(tree, "add", "src/app.py")
    assert commit(tree, "code").returncode == 0  # a code-only commit: no look at the base
    push = run_git(tree, "push", "origin", "feature")  # pre-push: the range is "code"
    assert push.returncode != 0, push.stdout
    assert f"{CHUNK}: " in push.stdout
    run_push_fix(tree, push.stdout)  # the one command it names, commit included
    assert git(tree, "status", "--porcelain") == ""
    assert run_git(tree, "push", "origin", "feature").returncode == 0


def test_check_since_sees_a_stale_base(tree: Path, tmp_path: Path) -> None:
    """f64: `check --since` trusted its base, so a teammate's hook-less doc edit there
    passed it (and `review`), though `ncx status` said 1 stale."""
    stale_base(tree, tmp_path)
    write(tree, "src/app.py", "x = 1\n")
    commit_all(tree, "code")
    since = ncx("check", "--since", "origin/main", ok=False)
    said = since.stdout + since.stderr
    assert since.returncode == 1, said
    assert f"{CHUNK}: " in said and "made without the ncx hooks" in said, said
    assert "ncx sync docs/ops.md && git add" in said, said


def test_a_doc_commit_on_a_stale_base_brings_it_in_step(tree: Path, tmp_path: Path) -> None:
    """f64: the commit hooks passed a doc commit on a base whose other doc was stale."""
    stale_base(tree, tmp_path)
    write(tree, "docs/other.md", doc("Alerts"))
    git(tree, "add", "docs/other.md")
    first = commit(tree, "other doc")
    assert first.returncode != 0
    assert "docs/ops.md: its chunk files were stale before this commit" in first.stdout
    assert f"ncx: wrote {CHUNK}" in first.stdout, first.stdout
    run_named(tree, first.stdout)
    done = commit(tree, "other doc")
    assert done.returncode == 0, done.stdout
    assert "release branch" in git(tree, "show", f"HEAD:{CHUNK}")
    assert git(tree, "status", "--porcelain") == ""
    ncx("check")
    assert run_git(tree, "push", "origin", "feature").returncode == 0


def test_pre_push_names_the_commit_a_push_needs(tree: Path, tmp_path: Path) -> None:
    """c17: a `--no-verify` doc commit on a branch; the push stopped naming `ncx sync`
    and a `git add`, but not the commit a push needs."""
    origin = tmp_path / "origin.git"
    git(tree, "clone", "-q", "--bare", str(tree), str(origin))
    git(tree, "remote", "add", "origin", str(origin))
    subprocess.run(
        [PRE_COMMIT, "install", "--hook-type", "pre-push"],
        cwd=tree,
        check=True,
        capture_output=True,
    )
    git(tree, "checkout", "-q", "-b", "feature")
    edit(tree, f"{SEC} Monitor.", "Monitor the queue depth, not the CPU. " * 10)
    git(tree, "commit", "-q", "--no-verify", "-am", "doc, no hooks")
    push = run_git(tree, "push", "origin", "feature")
    assert push.returncode != 0, push.stdout
    cmd = run_push_fix(tree, push.stdout)
    assert cmd.startswith("ncx sync docs/ops.md && git add "), cmd
    assert git(tree, "status", "--porcelain") == ""
    assert "queue depth" in git(tree, "show", f"HEAD:{CHUNK}")
    done = run_git(tree, "push", "origin", "feature")
    assert done.returncode == 0, done.stdout


# --- Item 6: `git am` of a doc-only patch ------------------------------------------------


def test_git_am_of_a_doc_patch_stops_like_a_commit(tree: Path, tmp_path: Path) -> None:
    git(tree, "checkout", "-q", "-b", "patch")
    edit(tree, f"{SEC} Deploy.", "Deploy only from the release branch. " * 10)
    git(tree, "commit", "-q", "--no-verify", "-am", "doc only")  # a mailed patch: doc only
    git(tree, "format-patch", "-q", "-1", "-o", str(tmp_path / "patches"))
    git(tree, "checkout", "-q", "main")
    patch = str(next((tmp_path / "patches").iterdir()))
    am = run_git(tree, "am", patch)
    assert am.returncode != 0, am.stdout  # stopped before the commit, like a pre-commit hook
    assert f"ncx: wrote {CHUNK}" in am.stdout
    run_named(tree, am.stdout)
    done = run_git(tree, "am", "--continue")
    assert done.returncode == 0, done.stdout
    assert "release branch" in git(tree, "show", f"HEAD:{CHUNK}")
    assert git(tree, "status", "--porcelain") == ""
    ncx("check")


# --- Item 9: a case-only rename where git ignores case -----------------------------------


def test_case_only_rename_with_ignorecase_converges(tree: Path) -> None:
    git(tree, "config", "core.ignorecase", "true")  # macOS' and Windows' default
    git(tree, "mv", "docs/ops.md", "docs/Ops.md")
    out = commit(tree)
    assert out.returncode != 0
    run_named(tree, out.stdout)
    done = commit(tree)
    assert done.returncode == 0, done.stdout
    assert ".neocortex/chunks/docs/Ops.md" in git(tree, "ls-files", ".neocortex")
    assert git(tree, "status", "--porcelain") == ""
    ncx("check")


# --- Also: docs inside a git submodule ---------------------------------------------------


def test_status_names_a_submodule_whose_docs_are_not_indexed(tree: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "-c", "init.defaultBranch=main", "init", "-q")
    write(lib, "docs/lib.md", doc("Library"))
    commit_all(lib, "lib")
    git(tree, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    commit_all(tree, "submodule")
    out = ncx("status")
    assert "vendor/lib: a git submodule: the docs in it are not indexed" in out.stdout + out.stderr


# --- Also: the same learning added on two branches ---------------------------------------


def test_the_same_learning_added_on_two_branches_is_flagged_after_the_merge(tree: Path) -> None:
    git(tree, "checkout", "-q", "-b", "feature")
    ncx("memory", "add", "The deploy job retries three times before it pages on call")
    commit_all(tree, "feature: memory")
    git(tree, "checkout", "-q", "main")
    ncx("memory", "add", "The deploy job retries three times before it pages the on call")
    commit_all(tree, "main: memory")
    merged = run_git(tree, "merge", "--no-edit", "feature")
    assert merged.returncode == 0, merged.stdout  # two files: no conflict
    assert "is a near-duplicate of" in merged.stdout and "--supersede-by" in merged.stdout
    status = ncx("status")
    assert "near-duplicate memories: MEM-" in status.stdout
    keep = re.search(r"`(ncx memory evolve [^`]*)`", status.stdout)
    assert keep is not None
    ncx(*keep.group(1).split()[1:])
    assert "near-duplicate" not in ncx("status").stdout


# --- Item 12: a rebase with a conflict keeps every commit right --------------------------

# The recipe docs/design.md ("Git flows") and the README give for a clean history.
REBASE_EXEC = "ncx sync -q && git add -A .neocortex && git commit -q --amend --no-edit"


def test_rebase_with_exec_keeps_every_rewritten_commit_right(tree: Path) -> None:
    git(tree, "checkout", "-q", "-b", "feature")
    edit(tree, f"{SEC} Deploy.", "Deploy with the flag on. " * 12)
    ncx("sync")
    commit_all(tree, "feature edit")
    edit(tree, f"{SEC} Monitor.", f"{SEC} Monitor the queue.")
    ncx("sync")
    commit_all(tree, "feature second edit")
    git(tree, "checkout", "-q", "main")
    edit(tree, f"{SEC} Deploy.", "Deploy after the freeze. " * 12)
    ncx("sync")
    commit_all(tree, "main edit")
    git(tree, "checkout", "-q", "feature")
    assert run_git(tree, "rebase", "-x", REBASE_EXEC, "main").returncode != 0
    resolved = doc("Deploy", "Monitor").replace(
        f"{SEC} Deploy.", "Deploy with the flag, after the freeze. " * 12
    )
    write(tree, "docs/ops.md", resolved)
    git(tree, "add", "docs/ops.md")
    done = run_git(tree, "rebase", "--continue")
    assert done.returncode == 0, done.stdout
    assert "git commit -m 'ncx sync'" not in done.stdout  # nothing left for the tip's fix
    for rev in git(tree, "rev-list", "main..HEAD").split():
        review = ncx("review", f"{rev}^..{rev}", "--fail-on-problems", ok=False)
        assert review.returncode == 0, review.stdout + review.stderr
    assert git(tree, "status", "--porcelain") == ""


# --- Item 2: a sparse checkout that leaves .neocortex/ out -------------------------------


def test_sparse_checkout_without_the_tree_names_the_command(tree: Path) -> None:
    git(tree, "sparse-checkout", "set", "--cone", "docs")
    assert not (tree / ".neocortex").exists()
    edit(tree, f"{SEC} Deploy.", f"{SEC} Deploy on Fridays.")
    git(tree, "add", "docs/ops.md")
    out = commit(tree)
    assert out.returncode != 0  # it passed, and stale chunks were committed
    cmd = re.search(r"`(git sparse-checkout add [^`]*)`", out.stdout)
    assert cmd is not None, out.stdout
    git(tree, *cmd.group(1).split()[1:])
    again = commit(tree)
    assert again.returncode != 0
    run_named(tree, again.stdout)
    done = commit(tree)
    assert done.returncode == 0, done.stdout
    assert "Fridays" in git(tree, "show", f"HEAD:{CHUNK}")


# --- Item 10: usefulness votes on two branches -------------------------------------------


def test_two_same_day_votes_on_two_branches_both_count(tree: Path) -> None:
    mid = ncx("memory", "add", "The cache is rebuilt after every commit").stdout.strip()
    commit_all(tree, "memory")
    md = tree / f".neocortex/memories/{mid}.md"
    git(tree, "checkout", "-q", "-b", "feature")
    ncx("memory", "evolve", mid, "--useful")
    commit_all(tree, "feature: useful")
    git(tree, "checkout", "-q", "main")
    ncx("memory", "evolve", mid, "--useful")
    commit_all(tree, "main: useful")  # the very same bytes as the feature's
    merged = run_git(tree, "merge", "--no-edit", "feature")
    assert merged.returncode == 0, merged.stdout
    assert "usefulness: 0.7" in md.read_text(), merged.stdout
    run_named(tree, merged.stdout)
    assert "usefulness: 0.7" in git(tree, "show", f"HEAD:.neocortex/memories/{mid}.md")
    assert git(tree, "status", "--porcelain") == ""
    ncx("check")


# --- Issue 36 (E): a merge or pull that brings a rename runs sync on no gone path --------


def test_a_merge_that_brings_a_rename_passes_the_post_merge_hook(tree: Path) -> None:
    """R15: a branch renames the doc, main edits it; the merge is clean (the driver carries
    the edit into the renamed chunk file), and the post-merge hook failed with "no such doc"
    for the gone path, naming an `ncx sync` that found nothing to do."""
    git(tree, "checkout", "-q", "-b", "feature")
    git(tree, "mv", "docs/ops.md", "docs/operations.md")
    assert commit(tree, "rename").returncode != 0
    git(tree, "add", "-A")
    assert commit(tree, "rename").returncode == 0
    git(tree, "checkout", "-q", "main")
    edit(tree, f"{SEC} Deploy.", "Deploy only from the release branch. " * 10)
    git(tree, "add", "docs/ops.md")
    assert commit(tree, "edit").returncode != 0
    git(tree, "add", "-A")
    assert commit(tree, "edit").returncode == 0
    merged = run_git(tree, "merge", "--no-edit", "feature")
    assert merged.returncode == 0, merged.stdout
    assert "no such doc" not in merged.stdout and "Failed" not in merged.stdout, merged.stdout
    assert "release branch" in (tree / ".neocortex/chunks/docs/operations.md").read_text()
    assert git(tree, "status", "--porcelain") == ""
    assert "nothing written" in ncx("sync").stderr
    ncx("check")


def test_a_teammate_with_ignorecase_pulls_a_case_only_rename(tree: Path, tmp_path: Path) -> None:
    """R14: the author's case-only rename converges; a teammate whose clone has
    core.ignorecase=true pulls it, and the post-merge hook failed with "no such doc"."""
    origin = tmp_path / "origin.git"
    git(tree, "clone", "-q", "--bare", str(tree), str(origin))
    clones = []
    for name in ("author", "mate"):
        clone = tmp_path / name
        git(tree, "clone", "-q", "-c", "core.ignorecase=true", str(origin), str(clone))
        install(clone)
        clones.append(clone)
    author, mate = clones
    ncx("sync", cwd=mate)  # the teammate has used ncx here before
    git(author, "mv", "docs/ops.md", "docs/Ops.md")
    out = commit(author, "case")
    assert out.returncode != 0
    run_named(author, out.stdout)
    assert commit(author, "case").returncode == 0
    git(author, "push", "-q", "origin", "main")
    pulled = run_git(mate, "pull", "-q", "--no-rebase", "origin", "main")
    assert pulled.returncode == 0, pulled.stdout
    assert "no such doc" not in pulled.stdout and "Failed" not in pulled.stdout, pulled.stdout
    assert git(mate, "status", "--porcelain") == ""
    assert "nothing written" in ncx("sync", cwd=mate).stderr
    ncx("check", cwd=mate)


# --- Issue 36 (D): two branches switch to two different models, then merge --------------


def _take_ours(path: Path) -> None:
    """Resolve git's conflict markers in `path` by hand, this side's lines kept."""
    keep, side = [], None
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            side = "ours"
        elif line.startswith("=======") and side == "ours":
            side = "theirs"
        elif line.startswith(">>>>>>> ") and side == "theirs":
            side = None
        elif side != "theirs":
            keep.append(line)
    path.write_text("".join(keep))


def test_two_branches_that_switch_to_two_models_merge_without_a_loop(
    tree: Path, other_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """f25b: both branches run `ncx model use`, each to another model; the merge leaves git's
    markers in the memories (their derived `vec:` line). The sync hook called them a YAML
    error and named only `git add -A .neocortex`, which changed nothing however often run."""
    from conftest import build_tiny_model

    third = build_tiny_model(tmp_path / "third-model", seed=2)
    mid = ncx("memory", "add", "The deploy job retries three times before it pages").stdout.strip()
    commit_all(tree, "memory")
    monkeypatch.delenv("NCX_EMBEDDING_MODEL")  # the manifest's model, as in a real clone
    git(tree, "checkout", "-q", "-b", "switch")
    ncx("model", "use", str(other_model))
    commit_all(tree, "switch to other")
    git(tree, "checkout", "-q", "main")
    ncx("model", "use", str(third))
    commit_all(tree, "switch to third")
    assert run_git(tree, "merge", "--no-edit", "switch").returncode != 0
    md = tree / f".neocortex/memories/{mid}.md"
    assert "<<<<<<< " in md.read_text()
    git(tree, "checkout", "--theirs", ".neocortex/manifest.json")
    git(tree, "add", "-A")
    first = commit(tree, "merge")
    assert first.returncode != 0
    assert f"{mid}.md: has merge-conflict markers: resolve them by hand" in first.stdout, (
        first.stdout
    )
    assert "frontmatter does not parse" not in first.stdout, first.stdout
    # What ends it is named: the markers by hand, then one command.
    ending = re.search(r"then `(ncx sync --reembed && git add [^`]*)`", first.stdout)
    assert ending is not None, first.stdout
    again = commit(tree, "merge")  # the loop: nothing changes until the markers go
    assert again.returncode != 0 and ending.group(1) in again.stdout
    _take_ours(md)
    done = subprocess.run(ending.group(1), shell=True, cwd=tree, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    last = commit(tree, "merge")
    assert last.returncode == 0, last.stdout
    assert git(tree, "status", "--porcelain") == ""
    ncx("check")
    assert "nothing written" in ncx("sync").stderr


# --- Issue 36 item 10: an undecodable doc fails the commit that stages it, no later one ---


def test_an_undecodable_doc_fails_only_the_commit_that_stages_it(tree: Path) -> None:
    (tree / "docs/undecodable.rst").write_bytes(b"Bad\n===\n\n\x82 should be undecodable\n")
    git(tree, "add", "docs/undecodable.rst")
    first = commit(tree, "bad doc")
    assert first.returncode != 0
    assert "docs/undecodable.rst: is not UTF-8" in first.stdout, first.stdout
    git(tree, "commit", "-q", "--no-verify", "-m", "bad doc, on purpose (a test's input)")
    assert ncx("sync").returncode == 0  # a run of the whole tree: listed, not failed
    ncx("check")
    write(tree, "docs/other.md", doc("Alerts"))
    git(tree, "add", "docs/other.md")
    assert commit(tree, "other doc").returncode != 0  # the sync hook's usual write
    git(tree, "add", "-A")
    done = commit(tree, "other doc")
    assert done.returncode == 0, done.stdout
