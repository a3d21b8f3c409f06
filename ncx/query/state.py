"""state: the frame's Current State from git: where the work stands, and the recent commits
that touched the files the frame points to.

The repository's last few commits rarely bear on a task (a release bump, a typo fix in another
package); the last commits that touched the files the agent is about to open do: they say
what changed there lately and in whose words. One `git log` over the last WINDOW commits is
read once per process (an eval's many frames share it) and each frame picks its files'
commits from it: a cost bounded by the window, never by the repository's history. No dates,
so frames stay reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ncx import repo
from ncx.errors import NcxError
from ncx.layout import NCX_DIR

WINDOW = 300  # commits searched for the ones that touched a frame's files
SHOWN = 3  # commits a frame shows
SUBJECT_CHARS = 80
CHANGED_SHOWN = 15  # work-in-progress files named
_SEP = "\x1f"  # between a commit's short sha and its subject (`%x1f` in the format)


@dataclass(frozen=True)
class Commit:
    sha: str  # short
    subject: str
    files: frozenset[str]


@dataclass(frozen=True)
class GitState:
    """What git says of a tree, read once: the lines every frame shows (branch, HEAD, the
    work in progress) and the recent commits a frame picks its files' from."""

    head: tuple[str, ...] = ()
    commits: tuple[Commit, ...] = ()  # newest first, at most WINDOW

    def touching(self, files: Sequence[str]) -> list[Commit]:
        """The newest SHOWN commits of the window that touched any of `files`."""
        wanted = set(files)
        return [c for c in self.commits if not c.files.isdisjoint(wanted)][:SHOWN]

    def lines(self, files: Sequence[str]) -> list[str]:
        """The Current State lines of a frame that points to `files` (most important first):
        the head lines, then up to SHOWN of the recent commits that touched them, each naming
        the files it touched. Nothing about commits when none of the window touched them: the
        repository's other history does not bear on the task."""
        wanted = list(dict.fromkeys(files))
        picked = self.touching(wanted)
        if not picked:
            return list(self.head)
        named = [[f for f in wanted if f in c.files] for c in picked]
        if all(n == named[0] for n in named):  # one set of files: named once
            return [
                *self.head,
                f"- recent commits to {_files(named[0])}:",
                *(f"  - {c.sha} {_subject(c)}" for c in picked),
            ]
        return [
            *self.head,
            "- recent commits to these files:",
            *(
                f"  - {c.sha} {_subject(c)} ({_files(n)})"
                for c, n in zip(picked, named, strict=True)
            ),
        ]


def _files(paths: Sequence[str]) -> str:
    return ", ".join(f"`{p}`" for p in paths)


def _subject(c: Commit) -> str:
    """A commit's subject, cut at SUBJECT_CHARS: a pointer to `git show`, not its story."""
    return c.subject if len(c.subject) <= SUBJECT_CHARS else c.subject[: SUBJECT_CHARS - 1] + "…"


def git_state(root: Path, rev: str | None = None) -> GitState:
    """The git state of the work tree at `root`; with `rev`, what a clean checkout of that
    commit says (detached: branch `HEAD`, nothing in progress). Empty outside git."""
    try:
        if rev is not None:
            short = repo.git(root, "rev-parse", "--short", rev).decode().strip()
            return GitState((f"- branch `HEAD` at `{short}`",), _commits(root, rev))
        info = repo.head_info(root)
        if not info.head:
            return GitState(("- git: no commits yet",))
        head = [f"- branch `{info.branch}` at `{info.head}`"]
        # The work in progress, not ncx's own derived files (leaving them out also spares
        # git the stat of every unit file: 0.25 -> 0.16 s on a 40,000-chunk tree).
        status = repo.git(
            root, "status", "--porcelain", "--untracked-files=normal", "--", ".", f":!{NCX_DIR}"
        )
        changed = [ln[3:] for ln in status.decode("utf-8", "replace").splitlines() if ln.strip()]
        if changed:
            extra = len(changed) - CHANGED_SHOWN
            more = f" (+{extra} more)" if extra > 0 else ""
            named = ", ".join(f"`{c}`" for c in changed[:CHANGED_SHOWN])
            head.append(f"- changed files{more}: {named}")
        return GitState(tuple(head), _commits(root, "HEAD"))
    except NcxError:
        return GitState()


def _commits(root: Path, rev: str) -> tuple[Commit, ...]:
    """The last WINDOW commits on `rev`'s first-parent line (a merge's files are those it
    changed against its first parent: what it brought in), each with the files it touched."""
    out = repo.git(
        root,
        "log",
        f"-{WINDOW}",
        "--first-parent",
        "-m",
        "--no-renames",
        "--format=%x1e%h%x1f%s",
        "--name-only",
        "-z",
        rev,
        "--",
    ).decode("utf-8", "replace")
    commits = []
    for record in out.split("\x1e")[1:]:  # each: sha US subject NUL LF file NUL file NUL ...
        header, _, names = record.partition("\0")
        sha, _, subject = header.partition(_SEP)
        files = frozenset(f for f in names.lstrip("\n").split("\0") if f)
        commits.append(Commit(sha, " ".join(subject.split()), files))
    return tuple(commits)
