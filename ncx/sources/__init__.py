"""sources: which files are docs, and the reader that turns each format into markdown.

Source suffixes live in ncx.suffixes (a leaf the hooks read first); sync lists sources
with `suffixes()`, the pre-commit hook and the workflow template watch the same list, and
the query side reads a source back through `read_view` to cite its lines. Every reader is
pure and stdlib-only (no heavy import on the query path) and returns a View: markdown text
plus a map from each view line to the line of the file as stored.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ncx.errors import BadSource
from ncx.sources.view import View
from ncx.suffixes import BY_FORMAT

if TYPE_CHECKING:
    from ncx.manifest import Manifest
    from ncx.sources.includes import Fetch
    from ncx.sources.view import Line


@dataclass(frozen=True, slots=True)
class Format:
    name: str  # what the manifest's `sources.skip_formats` names
    suffixes: tuple[str, ...]
    label: str  # for people
    frontmatter: bool  # YAML frontmatter may head the file


_LABELS = {  # name -> (label, whether YAML frontmatter may head the file)
    "markdown": ("markdown (MyST included)", True),
    "rst": ("reStructuredText", False),
    "notebook": ("Jupyter notebook", False),
    "mdx": ("MDX", True),
    "asciidoc": ("AsciiDoc", False),
}
# Suffixes come from ncx.suffixes, which the hooks' first question reads without this module.
FORMATS: tuple[Format, ...] = tuple(
    Format(name, group, *_LABELS[name]) for name, group in BY_FORMAT.items()
)
# Doc formats seen in repositories that ncx does not read: reported, never silently passed.
UNREAD: dict[str, str] = {
    ".org": "Org mode is not read by ncx yet",
}
# Part of sync's state key: a reader change re-reads every doc once (MyST docs synced
# before the readers existed are rechunked instead of kept as they were).
# 2: includes read into the view; an admonition's bare label opens its first line of
# text; a bare :doc: is a [words](:target) link; markdown lines of HTML tags only are blank
# 3: MkDocs `!!!`/`???` admonitions read as `///` blocks are; 4: a bare :ref: to another
# file's label is a [words](:#label) link; 5: an SVG snippet is a note, not its markup
# 6: a role marker inside a code span is code (`{userID}` then a backtick: no MyST role);
# 7: a reST include of a markdown file is a note, not the markdown read as reST
READER_VERSION = 7
_BY_SUFFIX = {s: f for f in FORMATS for s in f.suffixes}


def format_of(path: str) -> Format | None:
    # PurePosixPath(path).suffix without building a path (sync asks for every tracked file).
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return _BY_SUFFIX.get(name[dot:].lower()) if 0 < dot < len(name) - 1 else None


def suffixes(skip: Iterable[str] = ()) -> tuple[str, ...]:
    """Suffixes of every format read, less the formats named in `skip`."""
    off = set(skip)
    return tuple(s for f in FORMATS if f.name not in off for s in f.suffixes)


def list_sources(
    root: Path, manifest: Manifest, *, tracked: Sequence[str] | None = None
) -> list[str]:
    """Docs ncx indexes: tracked files of a format it reads (ncx.sources) outside
    .neocortex/, minus excludes and formats switched off in the manifest.

    Tracked means in the git index, which is also what the next commit will hold, so the
    same list serves a working-tree sync and the pre-commit hook's staged one.
    """
    from ncx import repo
    from ncx.layout import is_inside_ncx

    paths = repo.tracked_files(root) if tracked is None else tracked
    wanted = suffixes(manifest.skip_formats)
    return [
        p
        for p in paths
        if p.lower().endswith(wanted)
        and not is_inside_ncx(p)
        and not is_excluded(p, manifest.exclude)
        and (manifest.index_logs or log_reason(p) is None)
        and (manifest.index_fixtures or fixture_reason(p) is None)
    ]


# A project's history, not how it works now: changelogs and release notes. Conventional
# upper-case names only for HISTORY/NEWS (docs/history.md is as often a guide).
_LOG_NAME = re.compile(
    r"(?:^|/)(?:(?i:change[-_ ]?log|changes|release[-_ ]?notes)[^/]*"
    r"|(?:HISTORY|NEWS)(?:\.[^/]*)?|(?i:release[-_ ]?notes|changelog)s?/.*)$"
)
LOG_REASON = (
    "a changelog or release notes: history, not how things work now "
    '(index it with `"index_logs": true` under sources in .neocortex/manifest.json)'
)


def log_reason(path: str) -> str | None:
    """Why a doc is not indexed by default: a changelog or release notes (issue 28: 16 of a
    flask frame's items were CHANGES.rst entries)."""
    return LOG_REASON if _LOG_NAME.search(path) else None


# A test suite's inputs, not the project's docs (issue 36 item 10: sphinx's tests/roots/ holds
# 600 fixture docs, one of them undecodable on purpose). A folder named like a fixture folder
# at any depth, or `roots` right inside a test folder (docs/decisions.md §43).
_FIXTURE_DIR = re.compile(
    r"(?:^|/)(?:(?i:fixtures?|__fixtures__|__snapshots__|testdata|test[-_]data)"
    r"|(?i:(?:tests?|testing)/roots))/"
)
FIXTURE_REASON = (
    "inside a test fixture folder: a test's input, not the project's docs "
    '(index them with `"index_fixtures": true` under sources in .neocortex/manifest.json)'
)


def fixture_reason(path: str) -> str | None:
    """Why a doc is not indexed by default: it is a test's fixture (`tests/roots/`,
    `tests/fixtures/`, `testdata/`...)."""
    # Asked per folder, remembered: the regex per path was 2.7 ms per 1,000 docs of every
    # no-op sync; a tree's docs sit in far fewer folders.
    return _fixture_folder(path.rpartition("/")[0] + "/")


@functools.lru_cache(maxsize=65536)
def _fixture_folder(folder: str) -> str | None:
    return FIXTURE_REASON if _FIXTURE_DIR.search(folder) else None


def is_excluded(path: str, patterns: Iterable[str]) -> bool:
    for pat in patterns:
        pat = pat.rstrip("/")
        if (
            fnmatch.fnmatchcase(path, pat)
            or path.startswith(pat + "/")
            or fnmatch.fnmatchcase(path, pat + "/*")
        ):
            return True
    return False


def describe(counts: dict[str, int]) -> str:
    """`350 rst, 123 markdown, 65 notebook`; empty when every doc is markdown (the old
    summary stands as it was)."""
    if set(counts) <= {"markdown"}:
        return ""
    order = {f.name: i for i, f in enumerate(FORMATS)}
    items = sorted(counts.items(), key=lambda kv: (-kv[1], order.get(kv[0], 99)))
    return ", ".join(f"{n} {name}" for name, n in items if n)


# The block `ncx init --agent` writes into AGENTS.md / CLAUDE.md: ncx's own instructions to
# the agent, not project knowledge. Read back as a source it would come back as retrieved
# "knowledge" in every frame, so the reader blanks it out (lines kept: citations stay right).
AGENT_BLOCK_START, AGENT_BLOCK_END = "<!-- >>> ncx >>> -->", "<!-- <<< ncx <<< -->"


def _without_agent_block(text: str) -> str:
    if AGENT_BLOCK_START not in text:
        return text
    out, inside = [], False
    for line in text.split("\n"):
        if line.strip() == AGENT_BLOCK_START:
            inside = True
        out.append("" if inside else line)
        if inside and line.strip() == AGENT_BLOCK_END:
            inside = False
    return "\n".join(out)


# A line of markdown that is only HTML tags (MkDocs' `<div class="termy">` ... `</div>` around
# console blocks, `<img class="shadow" src=...>` screenshots, `<br>`): markup for a web page,
# nothing an agent reads (sqlmodel: 19 of 263 frame items). Blanked, so lines keep their
# numbers; a tag with text on its line, and anything in a code fence or indented 4+, stays.
# Only where an HTML block would end anyway (the next line is blank): a `<div>` that opens a
# block of lines keeps them markup's, not markdown's (a `## heading` in it starts no section),
# and `<pre>`/`<script>`/`<style>`/`<textarea>`, whose blocks run to their closing tag, stay.
_TAG_LINE = re.compile(r"^ {0,3}(?:</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>[ \t]*)+$", re.MULTILINE)
_RAW_TAG = re.compile(r"</?(?:pre|script|style|textarea)\b", re.IGNORECASE)
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _without_tag_lines(text: str) -> str:
    if "<" not in text or _TAG_LINE.search(text) is None:
        return text
    lines = text.split("\n")
    fence = ""
    for i, line in enumerate(lines):
        f = _FENCE_LINE.match(line)
        if fence:
            if f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence):
                fence = ""
        elif f:
            fence = f.group(1)
        elif (
            _TAG_LINE.match(line)
            and (i + 1 == len(lines) or not lines[i + 1].strip())
            and not _RAW_TAG.search(line)
        ):
            lines[i] = ""
    return "\n".join(lines)


def read_view(path: str, text: str, includes: Fetch | None = None) -> View:
    """The markdown view of a source's decoded text; BadSource naming `path` if unreadable.

    `includes`: how the files its includes name are read (ncx.tree.includefiles); None
    leaves include lines as they are."""
    try:
        return _read_view(path, text, includes)
    except RecursionError:
        # The readers stop nesting at view.MAX_NESTING; this is the net under them, so one
        # pathological doc is one problem named by its path, never the whole run's failure.
        raise BadSource(
            "is nested too deeply to read",
            path=path,
            hint="flatten its nesting, or exclude it (`ncx init --exclude PATH`)",
        ) from None


def _read_view(path: str, text: str, includes: Fetch | None = None) -> View:
    text = _without_agent_block(text)
    fmt = format_of(path)
    name = fmt.name if fmt else "markdown"
    if name == "markdown":
        text = _without_tag_lines(text)
    if name in ("markdown", "rst"):
        lines = _spliced(path, text, name, includes)
        if lines is not None:
            if name == "rst":
                from ncx.sources.rst import read_rst

                return read_rst(text, lines)
            from ncx.sources.myst import read_myst

            return read_myst(text, lines)
    if name == "rst":
        from ncx.sources.rst import read_rst

        return read_rst(text)
    if name == "notebook":
        from ncx.sources.notebook import read_notebook

        return read_notebook(text, path)
    if name == "asciidoc":
        from ncx.sources.asciidoc import read_asciidoc

        return read_asciidoc(text)
    if name == "mdx":
        from ncx.sources.mdx import read_mdx

        return read_mdx(text)
    from ncx.sources.myst import read_myst

    return read_myst(text)


def _spliced(path: str, text: str, name: str, includes: Fetch | None) -> list[Line] | None:
    """The doc's lines with its includes read in (ncx.sources.includes) and, in markdown,
    pymdownx `///` blocks and `!!!`/`???` admonitions rendered (ncx.sources.blocks); None
    when it has neither (most docs: a few substring scans)."""
    from ncx.sources.blocks import has_blocks
    from ncx.sources.includes import may_include

    expand_them = includes is not None and may_include(text)
    blocks = name == "markdown" and has_blocks(text)
    if not expand_them and not blocks:
        return None
    from ncx.sources.view import numbered

    lines = numbered(text)
    if expand_them and includes is not None:
        from ncx.sources.includes import expand

        lines, _ = expand(path, lines, name == "rst", includes)
    if name == "markdown" and (blocks or has_blocks("\n".join(t for t, _ in lines))):
        from ncx.sources.blocks import render_blocks

        lines = render_blocks(lines)
    return lines


__all__ = ["FORMATS", "UNREAD", "BadSource", "Format", "View", "format_of", "read_view", "suffixes"]
