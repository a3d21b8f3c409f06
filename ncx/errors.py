"""errors: the one error family. Core code raises these; only cli.py prints them."""

from __future__ import annotations

from pathlib import Path


class NcxError(Exception):
    """A user-facing failure: a message, the file it concerns, and the next step."""

    exit_code = 1

    def __init__(self, message: str, *, path: Path | str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = None if path is None else str(path)
        self.hint = hint

    def __str__(self) -> str:
        return f"{_shown(self.path)}: {self.message}" if self.path else self.message

    def report(self) -> str:
        """How every error reaches a person: `ncx: error: <file>: <what>` and a hint line."""
        return f"ncx: error: {self}" + (f"\n  hint: {self.hint}" if self.hint else "")


def _shown(path: str) -> str:
    """A file's name as a message cites it: a line break or another character that is not
    printable written as its escape (`\\n`), so one problem stays one line."""
    if path.isprintable():
        return path
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


class NotARepo(NcxError):
    """Not inside a git work tree."""


class NotInitialized(NcxError):
    """No .neocortex/ tree here yet."""


class BadFrontmatter(NcxError):
    """A markdown file's YAML frontmatter does not parse or is not a mapping."""


class BadSource(NcxError):
    """A source document cannot be read as UTF-8 markdown."""


class Unreadable(BadSource):
    """A source's bytes are not text ncx can decode (not UTF-8, NUL bytes): a full sync
    lists it as skipped; the run that changed it (the commit hook, a sync naming it) fails
    (docs/decisions.md §43)."""


class ModelMismatch(NcxError):
    """The tree was embedded by another model than the one loaded."""


class ModelUnavailable(NcxError):
    """The embedding model cannot be found or loaded."""


class UsageError(NcxError):
    """Arguments that make no sense together."""

    exit_code = 2
