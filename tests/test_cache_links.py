"""Committed links under `.neocortex/cache/` (forced in with `git add -f`): every clone checks
them out, and ncx must never write or read through one (ncx.paths.cache_folder): each folder
ncx writes through under cache/ is checked, a link in a cache file's place is replaced, never
followed, and `ncx check` names whatever git tracks under cache/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import commit_all, git, ncx, write

AUTH = "# Auth\n\nHow login works.\n\n## Refresh\n\nA refresh token renews the session cookie.\n"
CODE = "def refresh_token(session):\n    return session.renew()\n"


def _synced(root: Path) -> None:
    write(root, "docs/auth.md", AUTH)
    write(root, "src/auth.py", CODE)
    commit_all(root, "docs")
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(root, "sync")


def _commit_link(root: Path, rel: str, target: Path | str) -> None:
    """A link at `.neocortex/cache/REL`, committed past the cache's .gitignore."""
    link = root / ".neocortex/cache" / rel
    if link.is_dir() and not link.is_symlink():
        shutil.rmtree(link)
    elif os.path.lexists(link):
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)
    git(root, "add", "-f", str(link))
    git(root, "commit", "-q", "--no-verify", "-m", f"link {rel}")


def _clone(root: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    git(root, "clone", "-q", str(root), str(clone))
    return clone


def _refused(proc: object, rel: str) -> None:
    err = proc.stderr  # type: ignore[attr-defined]
    assert proc.returncode == 1, err  # type: ignore[attr-defined]
    assert f".neocortex/cache/{rel}: is a symlink" in err and "Traceback" not in err, err
    assert f"git rm -r --cached .neocortex/cache/{rel}" in err, err


def test_a_committed_cache_code_link_is_never_written_through(repo: Path, tmp_path: Path) -> None:
    _synced(repo)
    out = tmp_path / "out"
    out.mkdir()
    _commit_link(repo, "code", out)
    clone = _clone(repo, tmp_path)
    for args in (("sync",), ("retrieve", "refresh token", "--kind", "code")):
        _refused(ncx(*args, cwd=clone, ok=False), "code")
    assert list(out.iterdir()) == []  # (was: index.npz written there by every clone's sync)
    # and `ncx check` names the tracked link, with the fix
    check = ncx("check", cwd=clone, ok=False)
    assert check.returncode == 1
    assert ".neocortex/cache/code: is tracked by git" in check.stdout + check.stderr
    assert "git rm -r --cached .neocortex/cache" in check.stdout + check.stderr


def test_a_committed_cache_at_link_is_never_written_through(repo: Path, tmp_path: Path) -> None:
    _synced(repo)
    out = tmp_path / "out"
    out.mkdir()
    _commit_link(repo, "at", out)
    clone = _clone(repo, tmp_path)
    _refused(ncx("assemble", "--task", "refresh", "--at", "HEAD~1", cwd=clone, ok=False), "at")
    assert list(out.iterdir()) == []  # (was: the commit's files and caches, under out/<tree>/)


def test_a_committed_link_at_a_commits_tree_is_never_read(repo: Path, tmp_path: Path) -> None:
    _synced(repo)
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    # a folder that looks like a materialised commit, elsewhere: it must not be served
    out = tmp_path / "out"
    shutil.copytree(repo, out, ignore=shutil.ignore_patterns(".git"))
    write(out, "docs/auth.md", AUTH + "\nPlanted text.\n")
    _commit_link(repo, f"at/{tree}", out)
    clone = _clone(repo, tmp_path)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    proc = ncx("assemble", "--task", "refresh", "--at", "HEAD~1", cwd=clone, ok=False)
    _refused(proc, f"at/{tree}")
    assert "Planted" not in proc.stdout
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_a_committed_lock_link_never_truncates_its_target(repo: Path, tmp_path: Path) -> None:
    _synced(repo)
    precious = tmp_path / "bashrc"
    precious.write_text("export KEEP=1\n")
    for name in (".lock", "memories.lock", "code-index.lock"):
        _commit_link(repo, name, precious)
    clone = _clone(repo, tmp_path)
    ncx("retrieve", "refresh token", cwd=clone)  # the search cache's build lock (was: truncated)
    ncx("memory", "add", "Refresh tokens renew the session cookie.", cwd=clone)
    ncx("sync", "-q", cwd=clone)
    assert precious.read_text() == "export KEEP=1\n"
    for name in (".lock", "memories.lock", "code-index.lock"):  # each now ncx's own file
        assert not (clone / ".neocortex/cache" / name).is_symlink(), name


def test_a_committed_cache_file_link_is_replaced_never_followed(repo: Path, tmp_path: Path) -> None:
    _synced(repo)
    missing = tmp_path / "made-by-ncx"
    _commit_link(repo, "index.npz", missing)
    _commit_link(repo, "sync-state.json", "/dev/zero")
    clone = _clone(repo, tmp_path)
    assert "Refresh" in ncx("retrieve", "refresh token", cwd=clone).stdout  # (was: an error)
    ncx("sync", "-q", cwd=clone)
    assert not missing.exists()
    for name in ("index.npz", "sync-state.json"):
        assert (clone / ".neocortex/cache" / name).is_file(), name
        assert not (clone / ".neocortex/cache" / name).is_symlink(), name


def test_check_names_tracked_cache_files(repo: Path) -> None:
    _synced(repo)
    assert "tree OK" in ncx("check").stderr
    (repo / ".neocortex/cache/sync-state.json").write_text("{}")
    git(repo, "add", "-f", ".neocortex/cache/sync-state.json")
    proc = ncx("check", ok=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert ".neocortex/cache/sync-state.json: is tracked by git" in text, text
