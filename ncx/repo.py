"""repo: the git facts ncx needs, via the git command line.

Plain `git` subprocesses, not GitPython, on every hot path: listing staged files costs
22 ms cold this way against 89 ms through GitPython (docs/decisions.md §2), and hooks
run on every commit. Raises NotARepo outside a work tree.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ncx.errors import NcxError, NotARepo

# `git grep` as ncx reads it, whatever the user's git config asks of its output (a line
# number or column before each line, colour codes around paths, paths from the top).
GREP = ("grep", "--no-color", "--no-line-number", "--no-column", "--no-full-name")


def git(root: Path, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args],
            input=input,
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        raise NcxError("git is not installed or not on PATH", hint="install git") from None
    return _checked(root, args, proc.returncode, proc.stdout, proc.stderr, check)


def _checked(
    root: Path, args: Sequence[str], code: int, out: bytes, err: bytes, check: bool
) -> bytes:
    if check and code != 0:
        msg = err.decode("utf-8", "replace").strip().splitlines()
        raise NcxError(f"git {args[0]} failed: {msg[-1] if msg else code}", path=root)
    return out


def later(root: Path, *args: str) -> Callable[[], bytes]:
    """`git(root, *args)` started now; the returned call waits for its output. Independent
    git calls of one command run while Python does other work (a no-op sync of 100,000
    docs waits 0.4 s on `git diff-files` and `git ls-files --others`)."""
    try:
        proc = subprocess.Popen(
            ["git", "-C", str(root), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except FileNotFoundError:
        raise NcxError("git is not installed or not on PATH", hint="install git") from None

    def result() -> bytes:
        out, err = proc.communicate()
        return _checked(root, args, proc.returncode, out, err, True)

    return result


T = TypeVar("T")

# One command's look at the repository (`one_look`): what it asked of git once, it is told
# again, instead of a git process per asking module (an `ncx sync` asked for the top of
# the work tree 4 times and listed the code 3 times: 17 git processes, 8 of them repeats).
_look: dict[tuple[Any, ...], Any] | None = None


@contextlib.contextmanager
def one_look() -> Iterator[None]:
    """Within: `looked` answers a question asked before from its first answer. Entered by
    each CLI command (ncx.cli.app.command), never by a long-lived one (the MCP server sees
    the tree change between requests). ncx writes nothing to git's index, so within one
    command only git itself moves it (a stat refresh): keys that depend on the index name
    `index_stamp`."""
    global _look
    outer = _look
    _look = {} if outer is None else outer
    try:
        yield
    finally:
        _look = outer


def looked(key: tuple[Any, ...], ask: Callable[[], T]) -> T:
    """`ask()`, or inside `one_look` the answer it gave for `key` before."""
    if _look is None:
        return ask()
    if key not in _look:
        _look[key] = ask()
    got: T = _look[key]
    return got


def index_stamp(root: Path) -> tuple[int, ...] | None:
    """The identity of git's index file (inode, size, times), or None where it cannot be
    told without asking git (a linked worktree, a submodule's `.git` file, GIT_DIR or
    GIT_INDEX_FILE set): a key that depends on the index is then not remembered."""
    if "GIT_DIR" in os.environ or "GIT_INDEX_FILE" in os.environ:
        return None
    try:
        st = os.stat(os.path.join(root, ".git", "index"))
    except OSError:  # no index yet, or .git is a file
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def find_root(start: Path) -> Path:
    """The top of the git work tree containing `start` (asked once a command)."""
    return looked(("root", str(start)), lambda: _find_root(start))


def _find_root(start: Path) -> Path:
    try:
        proc = subprocess.run(
            ["git", "-C", str(start), "rev-parse", "--show-toplevel"],
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        raise NcxError("git is not installed or not on PATH", hint="install git") from None
    if proc.returncode != 0:
        raise NotARepo(
            "not inside a git repository",
            path=start,
            hint="run `git init` first, or cd into your project",
        )
    return Path(git_path_out(proc.stdout))


def git_path_out(out: bytes) -> str:
    """A path git printed on one line, as the OS spells it.

    Only the one newline git adds is cut: a folder named "proj " or "proj\n" is a different
    folder from "proj" (`.strip()` made ncx work on the sibling repository). Bytes that are
    not UTF-8 are kept as the OS's own (os.fsdecode), so such a path still opens."""
    import os

    return os.fsdecode(out[:-1] if out.endswith(b"\n") else out)


def tracked_files(root: Path, pathspecs: Sequence[str] = ()) -> list[str]:
    """Repo-relative paths in the index (what the next commit will contain)."""
    out = git(root, "ls-files", "-z", "--cached", "--", *pathspecs)
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})


def index_blobs(root: Path) -> dict[str, str | None]:
    """{repo-relative path: its blob id in the index} for every tracked file; None for a
    path in conflict (several stages), not a regular file (a link, a submodule), or one git
    does not stat-check (assume-unchanged, skip-worktree: `git diff-files` never lists it)."""
    out = git(root, "ls-files", "-z", "--stage", "-v")
    found: dict[str, str | None] = {}
    for rec in out.decode("utf-8", "surrogateescape").split("\0"):
        if not rec:
            continue
        head, _, path = rec.partition("\t")
        tag, mode, blob, stage = head.split(" ")
        plain = tag == "H" and mode in ("100644", "100755") and stage == "0"
        found[path] = blob if plain and path not in found else None
    return found


def modified_files(root: Path) -> set[str]:
    """Tracked paths whose working-tree file may differ from the index (git's own stat
    check against the index, as `git status` makes it; deleted ones included)."""
    return modified_files_later(root)()


def modified_files_later(root: Path) -> Callable[[], set[str]]:
    """`modified_files`, started now (`later`)."""
    run = later(root, "diff-files", "--name-only", "-z", "--no-renames")
    return lambda: {p for p in run().decode("utf-8", "surrogateescape").split("\0") if p}


def blob_id(data: bytes) -> str:
    """The id git gives a file of these bytes (`git hash-object`, SHA-1 repositories)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def untracked_files(root: Path, pathspecs: Sequence[str] = ()) -> list[str]:
    return untracked_files_later(root, pathspecs)()


def untracked_files_later(root: Path, pathspecs: Sequence[str] = ()) -> Callable[[], list[str]]:
    """`untracked_files`, started now (`later`)."""
    run = later(root, "ls-files", "-z", "--others", "--exclude-standard", "--", *pathspecs)
    return lambda: sorted(p for p in run().decode("utf-8", "surrogateescape").split("\0") if p)


def cat_file_batch(root: Path, names: Iterable[str]) -> dict[str, bytes]:
    """The content of each object name (`:path` for the staged copy, a blob id, `rev:path`),
    in one `git cat-file --batch` call; a name git does not find is left out."""
    wanted = list(names)
    if not wanted:
        return {}
    req = "".join(f"{n}\n" for n in wanted).encode("utf-8", "surrogateescape")
    out = git(root, "cat-file", "--batch", input=req)
    result: dict[str, bytes] = {}
    pos = 0
    for n in wanted:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split()
        pos = nl + 1
        if len(header) != 3:  # "<name> missing" / "<name> ambiguous": no content follows
            continue
        size = int(header[2])
        result[n] = out[pos : pos + size]
        pos += size + 1
    return result


def read_staged(root: Path, paths: Iterable[str]) -> dict[str, bytes]:
    """The staged (index) content of each path, in one `git cat-file --batch` call."""
    got = cat_file_batch(root, (f":{p}" for p in paths))
    return {name[1:]: data for name, data in got.items()}


def staged_sizes(root: Path, paths: Iterable[str]) -> dict[str, int]:
    """The size of each path's staged blob (`git cat-file --batch-check`): nothing is read,
    so a 500 MB doc is refused before its bytes cross the pipe."""
    wanted = list(paths)
    if not wanted:
        return {}
    req = "".join(f":{p}\n" for p in wanted).encode("utf-8", "surrogateescape")
    out = git(root, "cat-file", "--batch-check", input=req).decode("utf-8", "replace")
    sizes: dict[str, int] = {}
    # One line per path, ended by "\n" only (splitlines would also cut at a U+2028 in the
    # echoed path of a missing one, and every later path would take another's size).
    for p, line in zip(wanted, out.split("\n"), strict=False):
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            sizes[p] = int(parts[2])
    return sizes


@dataclass(frozen=True, slots=True)
class Head:
    """Branch and short HEAD; both empty before the first commit."""

    branch: str
    head: str


def head_info(root: Path) -> Head:
    branch = git(root, "rev-parse", "--abbrev-ref", "HEAD", check=False).decode().strip()
    head = git(root, "rev-parse", "--short", "HEAD", check=False).decode().strip()
    return Head(branch=branch if head else "", head=head)
