"""state: the frame's Current State from git: where the work stands, and the recent commits
that touched the files the frame points to.

The repository's last few commits rarely bear on a task (a release bump, a typo fix in another
package); the last commits that touched the files the agent is about to open do: they say
what changed there lately and in whose words. They are looked for among the last WINDOW
commits only, by one path-limited `git log` per set of files (remembered for the process: an
eval's frames often point to the same files), so the cost is bounded by the window, never by
the repository's history. No dates, so frames stay reproducible (docs/decisions.md §47).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ncx import repo
from ncx.errors import NcxError
from ncx.layout import NCX_DIR

WINDOW = 300  # commits on the first-parent line searched for the ones that touched a file
SHOWN = 3  # commits a frame shows
POOL = 10  # ... of the newest this many that touched its files, those worded like the task:
SHARED = 2  # sharing this many of its words (one is the project's name or "flag" as often)
SUBJECT_CHARS = 80
CHANGED_SHOWN = 15  # work-in-progress files named


@dataclass(frozen=True)
class Commit:
    sha: str  # short
    subject: str
    files: frozenset[str]  # of the files asked about, those it touched


@dataclass(frozen=True)
class GitState:
    """What git says of a tree, read once for many frames: the lines every frame shows
    (branch, HEAD, the work in progress), and where to look for its files' commits."""

    head: tuple[str, ...] = ()
    root: str = ""  # the repository and the revision the history is read from ("": none)
    rev: str = "HEAD"

    def touching(
        self, files: Sequence[str], terms: frozenset[str] | None = None
    ) -> tuple[Commit, ...]:
        """The newest SHOWN commits of the last WINDOW that touched any of `files`; given
        the task's `terms` (ncx.query.lexical), only those among the newest POOL whose
        subject shares SHARED of them: a commit worded like the task bears on it, "Merge
        pull request #2256" or a typo fix there does not (a new user's 30 frames: 3 of 90
        commit lines worth reading, decisions.md §58)."""
        wanted = tuple(sorted(set(files)))
        if not self.root or not wanted:
            return ()
        found = _touching(self.root, self.rev, wanted)
        if terms is None:
            return found[:SHOWN]
        asked = terms - _change_words()
        return tuple(c for c in found if shared_words(asked, c.subject) >= SHARED)[:SHOWN]

    def lines(self, files: Sequence[str], terms: frozenset[str] | None = None) -> list[str]:
        """The Current State lines of a frame that points to `files` (for a task of these
        `terms`: see `touching`)."""
        return state_lines(self.head, self.touching(files, terms), files)


def state_lines(head: Sequence[str], commits: Sequence[Commit], files: Sequence[str]) -> list[str]:
    """The head lines, then the commits that touched `files` (newest first), each naming the
    files it touched (named once when every commit touched the same ones). No commit: no
    history at all, since the repository's other history does not bear on the task."""
    if not commits:
        return list(head)
    wanted = list(dict.fromkeys(files))
    named = [[f for f in wanted if f in c.files] for c in commits]
    if all(n == named[0] for n in named):
        return [
            *head,
            f"- recent commits to {_files(named[0])}:",
            *(f"  - {c.sha} {_subject(c)}" for c in commits),
        ]
    return [
        *head,
        "- recent commits to these files:",
        *(f"  - {c.sha} {_subject(c)} ({_files(n)})" for c, n in zip(commits, named, strict=True)),
    ]


def _files(paths: Sequence[str]) -> str:
    return ", ".join(f"`{p}`" for p in paths)


def _subject(c: Commit) -> str:
    """A commit's subject, cut at SUBJECT_CHARS: a pointer to `git show`, not its story. A
    credential pasted into a commit message is redacted as in every other text a frame
    quotes (before the cut, so no key is split past the scanner)."""
    from ncx.secrets import redact

    text = redact(c.subject)[0]
    return text if len(text) <= SUBJECT_CHARS else text[: SUBJECT_CHARS - 1] + "…"


def git_state(root: Path, rev: str | None = None) -> GitState:
    """The git state of the work tree at `root`; with `rev`, what a clean checkout of that
    commit says (detached, nothing in progress). No history outside git."""
    try:
        if rev is not None:
            short = repo.git(root, "rev-parse", "--short", rev).decode().strip()
            return GitState((f"- detached HEAD at `{short}`",), str(root), rev)
        info = repo.head_info(root)
        if not info.head:
            return GitState(("- git: no commits yet",))
        # (a checkout of a commit, as CI makes: git names no branch, only HEAD)
        where = "detached HEAD" if info.branch == "HEAD" else f"branch `{info.branch}`"
        head = [f"- {where} at `{info.head}`"]
        # The work in progress, not ncx's own derived files (leaving them out also spares
        # git the stat of every unit file: 0.25 -> 0.16 s on a 40,000-chunk tree).
        status = repo.git(
            root, "status", "--porcelain", "--untracked-files=normal", "--", ".", f":!{NCX_DIR}"
        )
        changed = [
            ln[3:]
            for ln in status.decode("utf-8", "replace").splitlines()
            if ln.strip() and not (ln[3:] == ".gitattributes" and _ncx_lines_only(root, ln[:2]))
        ]
        if changed:
            extra = len(changed) - CHANGED_SHOWN
            more = f" (+{extra} more)" if extra > 0 else ""
            named = ", ".join(f"`{c}`" for c in changed[:CHANGED_SHOWN])
            head.append(f"- changed files{more}: {named}")
        # HEAD by its commit: a long-lived process (the MCP server) sees HEAD move, and the
        # remembered answers are per commit
        return GitState(tuple(head), str(root), info.head)
    except NcxError:
        return GitState()


def _ncx_lines_only(root: Path, code: str) -> bool:
    """Whether `.gitattributes`' change is only the block `ncx init` wrote (a clone where
    `ncx init` ran and nothing is committed yet): ncx's own, as `.neocortex/` is, not the
    work the task is about (a new user's 15 frames each named it as the tree's change)."""
    from ncx.markers import END, START, without_block

    try:
        now = (root / ".gitattributes").read_bytes().decode("utf-8")
        # untracked, or staged but not in HEAD yet ("A "): all of it is the change
        before = "" if code[0] in "?A" else repo.git(root, "show", "HEAD:.gitattributes").decode()
    except (OSError, UnicodeDecodeError, NcxError):
        return False
    return without_block(now, START, END).rstrip() == before.rstrip()


@functools.lru_cache(maxsize=512)
def _touching(root: str, rev: str, files: tuple[str, ...]) -> tuple[Commit, ...]:
    """The newest SHOWN commits among the last WINDOW on `rev`'s first-parent line that
    touched `files` (a merge: what it changed against its first parent, what it brought in),
    each with which of them it touched. Nothing when git cannot say (a shallow clone's cut)."""
    try:
        # The window's far end, where the history is that long: bounds the walk of a file
        # untouched for years (xarray's LICENSE: 0.38 s over the whole history, 0.03 s so).
        far = repo.git(Path(root), "rev-parse", "-q", "--verify", f"{rev}~{WINDOW}", check=False)
        span = f"{far.decode().strip()}..{rev}" if far.strip() else rev
        out = repo.git(
            Path(root),
            "log",
            f"-{max(SHOWN, POOL)}",
            "--first-parent",
            "-m",
            "--no-renames",
            "--format=%x1e%h%x1f%s%x1f%b",
            "--name-only",
            "-z",
            span,
            "--",
            *(f":(literal){f}" for f in files),
        ).decode("utf-8", "replace")
    except NcxError:
        return ()
    commits = []
    for record in out.split("\x1e")[1:]:  # each: sha US subject NUL LF file NUL file NUL ...
        header, _, names = record.partition("\0")
        sha, subject, body = [*header.split("\x1f", 2), "", ""][:3]
        touched = frozenset(f for f in names.lstrip("\n").split("\0") if f)
        commits.append(Commit(sha, _said(subject, body), touched))
    return tuple(commits)


# Words that say a change is one, not what it changes: "fix" and "add" open most subjects
# and most tasks, and would make every commit look worded like every task.
_CHANGE_WORDS = (
    "fix fixes fixed add adds added update updated remove removed change changed improve "
    "improved support use make bump release version merge merged feat chore refactor docs "
    "test tests cleanup minor typo pull request branch "
    # what is left of a contraction: a "don't" in the task is no word of the subject's
    "don't doesn't isn't can't won't didn't aren't"
)


def shared_words(asked: frozenset[str], subject: str) -> int:
    """How many words of a commit's subject hold one of the `asked` terms: a word once,
    however many terms it splits into (`WebSocketDisconnectEvent` is web, socket, disconnect
    and event: it matched a task about WebSockets three times over), a word adding no term
    not counted (a term said twice), and a number never (`Drop Python 3.8` shared "3" and
    "8" with an issue quoting versions; h11's "11")."""
    from ncx.query.lexical import terms

    seen: set[str] = set()
    n = 0
    for word in subject.split():
        held = {t for t in terms(word) if t in asked and not t.isdigit()}
        if held - seen:  # (a term said twice is one: "support ... support")
            n += 1
            seen |= held
    return n


@functools.cache
def _change_words() -> frozenset[str]:
    from ncx.query.lexical import terms

    return frozenset(terms(_CHANGE_WORDS))


_FORGE_MERGE = re.compile(
    r"Merge (?:pull request|PR) (#\d+)\b|Merged in \S+ \(pull request (#\d+)\)"
)


def _said(subject: str, body: str) -> str:
    """What a commit says of its change: its subject; for a forge's merge ("Merge pull
    request #2256 from user/branch"), the pull request's title, the body's first line,
    with its number (a first-parent history of merged pull requests is all such subjects)."""
    subject = " ".join(subject.split())
    m = _FORGE_MERGE.match(subject)
    if m is None:
        return subject
    title = next((" ".join(ln.split()) for ln in body.splitlines() if ln.strip()), "")
    return f"{title} ({m.group(1) or m.group(2)})" if title else subject
