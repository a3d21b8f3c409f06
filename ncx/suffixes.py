"""suffixes: which file names are docs, by format. The one home of that table.

A leaf with no imports: the pre-commit hooks ask "does this commit touch a doc?" on every
commit, before anything else is loaded, and the reader registry (ncx.sources, which pulls
in dataclasses, pathlib and the readers) builds its Format records from the same table.
"""

from __future__ import annotations

# format name (what the manifest's `sources.skip_formats` names) -> its file suffixes
BY_FORMAT: dict[str, tuple[str, ...]] = {
    "markdown": (".md", ".markdown"),
    "rst": (".rst", ".rest"),
    "notebook": (".ipynb",),
    "mdx": (".mdx",),
    "asciidoc": (".adoc", ".asciidoc"),
}
# Every suffix ncx reads (the manifest may switch some formats off).
ALL: tuple[str, ...] = tuple(s for group in BY_FORMAT.values() for s in group)


def pathspecs(*formats: str) -> list[str]:
    """git pathspecs for the files of these formats, any case of the suffix (`DOC.MD`)."""
    return [f":(icase)*{s}" for f in formats for s in BY_FORMAT[f]]


# Naming a format, for the manifest's `sources.skip_formats` and `ncx init --skip-format`:
# here, beside the table, so that the manifest needs nothing of the reader registry (which
# needs the manifest's type).
def format_names() -> tuple[str, ...]:
    return tuple(BY_FORMAT)


def resolve_format(name: str) -> str | None:
    """A manifest's way of naming a format (`notebook`, `ipynb`, `.ipynb`) -> its name."""
    key = name.strip().lower()
    for fmt, group in BY_FORMAT.items():
        if key == fmt or "." + key.lstrip(".") in group:
            return fmt
    return None
