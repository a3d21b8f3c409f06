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
        # (a name with a line break cited escaped: one problem stays one line)
        return f"{escaped(self.path)}: {self.message}" if self.path else self.message

    def report(self) -> str:
        """How every error reaches a person: `ncx: error: <file>: <what>` and a hint line."""
        return f"ncx: error: {self}" + (f"\n  hint: {self.hint}" if self.hint else "")


def escaped(text: str, also: str = "") -> str:
    """`text` with each character that is not printable, and each of `also`, written as its
    escape (`\\n`, `\\x1b`, `\\u2028`): a name a message or a frame cites can neither
    break its line nor (with `also`) close the markup around it. Here, at the bottom of the
    imports, so the error family and the frames (ncx.code.text.shown_path) share it."""
    if text.isprintable() and not any(c in text for c in also):
        return text
    return "".join(c if c.isprintable() and c not in also else _escape(c) for c in text)


def _escape(c: str) -> str:
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if c in named:
        return named[c]
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


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
