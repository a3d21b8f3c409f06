"""What `ncx eval` and `--at` take from outside: the questions file (read by the docs' rule:
no link out, no FIFO or device, a size limit before the read), its keys (a typo is an error
that names the question and the near key), a revision (one commit, never a range), and the
commit `--at REV` materialises (a checkout's bytes, whatever `export-*` attributes say)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NCX_CMD, commit_all, git, ncx, write

AUTH = """# Auth

How login works for users of the api.

## Refresh

A refresh token renews the session cookie before the timeout; the client sends the
refresh token to the auth server and gets a new session. Built from $Format:%H$.
"""
EVALS = """questions:
  - id: refresh
    ask: how does the client refresh the session token
    expect:
      - doc: docs/auth.md
        section: Refresh
"""
CREDENTIALS = "[default]\naws_access_key_id = AKIAQYLPMN5HHHFPZAM2\n"


def _tree(root: Path, attributes: str = "") -> None:
    write(root, "docs/auth.md", AUTH)
    write(root, "src/auth.py", "def refresh_token(session):\n    return session.renew()\n")
    if attributes:
        write(root, ".gitattributes", attributes)
    commit_all(root, "docs")
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(root, "sync")


def _eval_proc(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`ncx eval` in its own process, bounded: a FIFO or /dev/zero must end it fast (before:
    it blocked forever, or grew past 11 GB)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [*NCX_CMD, "eval", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit if sys.platform != "win32" else None,
    )


def _evals_link(root: Path, target: str | Path) -> None:
    path = root / ".neocortex/evals.yaml"
    if os.path.lexists(path):
        path.unlink()
    os.symlink(target, path)


# --- S3: the questions file is read by the docs' rule -----------------------------------------


def test_an_evals_link_out_of_the_repo_is_refused_and_never_quoted(
    repo: Path, tmp_path: Path
) -> None:
    _tree(repo)
    creds = tmp_path / "home/.aws/credentials"
    creds.parent.mkdir(parents=True)
    creds.write_text(CREDENTIALS)
    _evals_link(repo, creds)
    for args in ((), ("--if-present",), ("--file", str(creds))):
        proc = ncx("eval", *args, ok=False)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert "AKIA" not in proc.stderr + proc.stdout, (args, proc.stderr)
    assert "is a symlink that leaves the repository" in ncx("eval", ok=False).stderr
    outside = ncx("eval", "--file", str(creds), ok=False).stderr
    assert "is outside the repository" in outside


def test_an_evals_link_to_dev_zero_or_a_fifo_ends_at_once(repo: Path) -> None:
    _tree(repo)
    _evals_link(repo, "/dev/zero")
    proc = _eval_proc(repo)
    assert proc.returncode == 1 and "symlink that leaves the repository" in proc.stderr
    assert "outside the repository" in _eval_proc(repo, "--file", "/dev/zero").stderr
    (repo / ".neocortex/evals.yaml").unlink()
    os.mkfifo(repo / ".neocortex/evals.yaml")
    for args in ((), ("--if-present",)):  # (the pre-push hook's: not silently passed either)
        proc = _eval_proc(repo, *args)
        assert proc.returncode == 1 and "is not a regular file" in proc.stderr, proc.stderr


def test_an_evals_file_over_the_limit_is_refused_by_its_size(repo: Path) -> None:
    _tree(repo)
    with open(repo / ".neocortex/evals.yaml", "wb") as f:
        f.truncate(1 << 30)  # sparse: 1 GB that costs nothing until read
    proc = _eval_proc(repo)
    assert proc.returncode == 1, proc.stderr
    assert "1,073,741,824 bytes, over the 256,000-byte limit" in proc.stderr, proc.stderr


def test_a_yaml_error_names_its_line_and_quotes_nothing(repo: Path) -> None:
    _tree(repo)
    write(repo, "docs/q.md", CREDENTIALS)
    _evals_link(repo, "../docs/q.md")  # a link inside the repository is read ...
    proc = ncx("eval", ok=False)
    assert "not YAML (line 2, column 1)" in proc.stderr, proc.stderr
    assert "AKIA" not in proc.stderr  # ... and its lines are never printed


# --- U2: unknown keys ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ("    tops: 1\n", "question 1 (refresh): unknown key `tops:` (did you mean `top:`?)"),
        ("    expects: []\n", "unknown key `expects:` (did you mean `expect:`?)"),
        ("    asks: x\n", "unknown key `asks:` (did you mean `ask:`?)"),
        ("    zzz: 1\n", "unknown key `zzz:`\n"),
    ],
)
def test_an_unknown_question_key_names_the_question_and_the_near_key(
    repo: Path, extra: str, said: str
) -> None:
    _tree(repo)
    write(repo, ".neocortex/evals.yaml", EVALS + extra)
    proc = ncx("eval", ok=False)
    assert proc.returncode == 1 and said in proc.stderr, proc.stderr


def test_an_unknown_expect_key_suggests_the_near_key(repo: Path) -> None:
    _tree(repo)
    write(repo, ".neocortex/evals.yaml", EVALS.replace("section:", "sectoin:"))
    proc = ncx("eval", ok=False)
    assert "unknown key `sectoin:` (did you mean `section:`?)" in proc.stderr, proc.stderr


# --- U3: one commit, not a range ---------------------------------------------------------------


@pytest.mark.parametrize("rev", ["HEAD~1..HEAD", "HEAD~1...HEAD", "HEAD^!", "HEAD^-"])
def test_a_revision_range_is_named_as_one(repo: Path, rev: str) -> None:
    _tree(repo)
    write(repo, ".neocortex/evals.yaml", EVALS)
    for args, opt in (
        (("assemble", "--task", "refresh token", "--at", rev), "--at"),
        (("retrieve", "refresh token", "--at", rev), "--at"),
        (("eval", "--since", rev), "--since"),
    ):
        proc = ncx(*args, ok=False)
        assert proc.returncode == 2, (args, proc.stderr)
        assert f"{opt} takes one commit, not a range: '{rev}'" in proc.stderr, proc.stderr
        assert "hint: give one commit" in proc.stderr and "usage" not in proc.stderr


# --- D1: `--at REV` is a checkout of REV --------------------------------------------------------


def _files(folder: Path) -> dict[str, tuple[str, bytes | str, bool]]:
    """Every entry under `folder` but .git/ and the cache: (kind, bytes or link, executable)."""
    out = {}
    for dirpath, dirs, names in os.walk(folder):
        here = Path(dirpath)
        dirs[:] = [d for d in dirs if d != ".git" and here / d != folder / ".neocortex/cache"]
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(dirpath, d)))]:
            p = Path(dirpath) / name
            rel = p.relative_to(folder).as_posix()
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p), False)
            else:
                out[rel] = ("file", p.read_bytes(), os.access(p, os.X_OK))
    return out


ATTRIBUTES = (
    "docs/** export-ignore\n.neocortex/** export-ignore\ndocs/auth.md export-subst\n"
    "*.txt eol=crlf\n"
)


def test_at_rev_is_a_checkout_of_rev_whatever_export_attributes_say(
    repo: Path, tmp_path: Path
) -> None:
    write(repo, "notes.txt", "one\ntwo\n")  # CRLF in a checkout (eol=crlf)
    write(repo, "run.sh", "#!/bin/sh\necho hi\n")
    os.chmod(repo / "run.sh", 0o755)
    os.symlink("docs/auth.md", repo / "auth.link")
    _tree(repo, ATTRIBUTES)
    sha = git(repo, "rev-parse", "HEAD").strip()
    task = "how does the client refresh the session token"
    at = ncx("assemble", "--task", task, "--at", sha)  # (was: "no .neocortex/ here")
    clone = tmp_path / "clone"
    git(repo, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "--detach", sha)
    there = ncx("assemble", "--task", task, cwd=clone)
    assert at.stdout == there.stdout
    assert "`docs/auth.md:1-" in at.stdout, at.stdout  # line citations: the doc is there
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    got = _files(repo / ".neocortex/cache/at" / tree)
    want = _files(clone)
    assert got == want
    assert got["docs/auth.md"][1] == AUTH.encode()  # `$Format:%H$` as committed
    assert got["notes.txt"][1] == b"one\r\ntwo\r\n" and got["run.sh"][2]
    assert got["auth.link"] == ("link", "docs/auth.md", False)
    assert git(repo, "status", "--porcelain") == ""
