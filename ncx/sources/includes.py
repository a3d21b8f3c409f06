"""includes: the code and text a doc takes from other files of its repository, spliced into
the lines its reader reads. Pure: which files a doc names and what their text becomes; the
reading itself (the path gate: tracked, inside the repository, never .git/) is
ncx.tree.includefiles', handed in as a `Fetch`.

Forms (docs/decisions.md §38):
- FastAPI/MkDocs `{* ./docs_src/x.py ln[3:9,12:15] hl[5] *}`: the lines as fenced code;
- pymdownx snippets `--8<-- "path"` (one line, `path:3:9` for lines, or a block of paths
  between two `--8<--` lines): the file's text spliced in raw, as pymdownx does (`;--8<--`
  is an escaped marker and is left alone);
- reST `.. literalinclude:: path` (`:lines:`, `:start-after:`, `:start-at:`, `:end-before:`,
  `:end-at:`, `:language:`) as a code block, `.. include:: path` spliced (`:literal:` or
  `:code:` as a code block);
- MyST ```` ```{literalinclude} path ```` and ```` ```{include} path ````, the same options.

Every spliced line cites the line of the directive that brought it (a citation points at
the doc, where the include is written). An include of a file that is not there to read (not
tracked, missing, outside the repository: a docs-only checkout, a path into another repo)
stays as the doc wrote it, read as it was before includes were; one refused for safety or
a limit (a link, `.git/`, an LFS pointer, itself, too deep, too much) becomes one short
visible line, `[include not read: PATH: why]`. Never an error: the doc is chunked anyway.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from ncx.sources.view import Line
from ncx.suffixes import BY_FORMAT

MAX_DEPTH = 3  # includes inside included files, this deep at most
MAX_FILES = 128  # files one doc may include (found), nested ones counted
MAX_TRIED = 1024  # paths one doc's includes may ask the gate for (most are refused unread)
MAX_BYTES = 512_000  # an included file over this is not read (the gate's cap)
# Text spliced into one doc, all includes together: a doc naming a big file a thousand
# times must not become a gigabyte view.
MAX_SPLICED = 4 * MAX_BYTES


@dataclass(frozen=True, slots=True)
class Got:
    """One file an include names, as the gate found it: its text, or why it was not read."""

    text: str | None
    why: str = ""
    blob: str | None = None  # git's id of the bytes read: what the sync state records
    # Not there to read (untracked, missing, outside the repository): the include stays as
    # written. Why not a note: Ray's docs include 188 files from outside a docs checkout;
    # a note each put words like "outside" and "repository" into their chunks and cost
    # raydocs page MRR@10 (benchmarks/results/includes_2026-11-27.md).
    absent: bool = False


Fetch = Callable[[str], Got]  # a normalised repo-relative path -> what the gate gives

# Substrings every form holds: a doc without any of them is not walked at all.
MARKER_TEXTS = ("{*", "--8<--", "include::", "include}")
MARKERS = tuple(m.encode() for m in MARKER_TEXTS)  # the same, for a doc's bytes


def may_include(text: str) -> bool:
    return any(m in text for m in MARKER_TEXTS)


_STAR = re.compile(r"^(\s*)\{\*\s*(\S+)(.*?)\*\}\s*$")
_LN = re.compile(r"\bln\[([^\]]*)\]")
_SNIPPET = re.compile(r"^(\s*)--8<--\s+(?:\"([^\"]+)\"|'([^']+)'|(\S+))\s*$")
_SNIPPET_BLOCK = re.compile(r"^(\s*)--8<--\s*$")
_SNIPPET_LINES = re.compile(r"^(.*?)((?::-?\d*){1,2})$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_MYST = re.compile(r"^(\s{0,3})(`{3,}|:{3,})\{(literalinclude|include)\}\s*(.*?)\s*$")
_RST = re.compile(r"^(\s*)\.\.\s+(literalinclude|include)::\s*(.*?)\s*$")
# reST whose indented block is quoted, not read: an include written there is an example.
_RST_LITERAL = re.compile(
    r"^\s*\.\.\s+(?:code-block|code|sourcecode|parsed-literal)::|^(?!\s*\.\.\s).*::\s*$"
)
_OPTION = re.compile(r"^:([\w-]+):\s*(.*)$")

_LANGS = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "ts": "typescript",
    "tsx": "tsx",
    "jsx": "jsx",
    "sh": "bash",
    "bash": "bash",
    "yml": "yaml",
    "yaml": "yaml",
    "md": "markdown",
    "rst": "rst",
    "rs": "rust",
    "rb": "ruby",
    "kt": "kotlin",
    "h": "c",
    "hpp": "cpp",
    "cc": "cpp",
    "cs": "csharp",
    "txt": "text",
    "cfg": "ini",
    "conf": "ini",
}


def language(path: str) -> str:
    """The fence language of a file, from its suffix (`py` -> python)."""
    name = path.rpartition("/")[2]
    if "." not in name.lstrip("."):
        return ""
    suffix = name.rpartition(".")[2].lower()
    return _LANGS.get(suffix, suffix)


def candidates(doc: str, target: str, how: str) -> list[str]:
    """The repo-relative paths `target`, written in `doc`, may mean, in the order tried;
    none that leaves the repository. `how`: "mkdocs" (the repository's top, then each folder
    from the doc's up: FastAPI writes `../../docs_src` from docs/en/), "doc" (the doc's own
    folder; a leading `/` is Sphinx's source folder: each folder from the doc's up)."""
    target = target.strip()
    if not target or "://" in target or "\0" in target or target.startswith("<"):
        return []
    folder = posixpath.dirname(doc)
    ups = []
    while folder:
        ups.append(folder)
        folder = posixpath.dirname(folder)
    if how == "mkdocs":
        bases, rel = ["", *ups], target.lstrip("/")
    elif target.startswith("/"):
        bases, rel = [*ups, ""], target.lstrip("/")
    else:
        bases, rel = [posixpath.dirname(doc)], target
    out: list[str] = []
    for base in bases:
        p = posixpath.normpath(posixpath.join(base, rel))
        if p in (".", "..") or p.startswith(("../", "/")) or p in out:
            continue
        out.append(p)
    return out


def _ranges(spec: str, n: int) -> list[tuple[int, int]]:
    """`3:9,12:15` or `1-3,5,8-` (1-based, inclusive) as [(start, end)]; [] for all."""
    out = []
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        a, sep, b = part.replace("-", ":", 1).partition(":")
        try:
            start = int(a) if a else 1
            end = (int(b) if b else n) if sep else start
        except ValueError:
            return []
        if start < 1 or end < start:  # `ln[0]`: the whole file
            return []
        out.append((start, min(end, n)))
    return out


def _pick(lines: list[str], ranges: list[tuple[int, int]]) -> list[str]:
    """The lines of `ranges`, with `...` where lines between them are left out."""
    if not ranges:
        return lines
    out: list[str] = []
    last = 0
    for a, b in ranges:
        if out and a > last + 1:
            out.append("...")
        out.extend(lines[a - 1 : b])
        last = b
        if len(out) >= len(lines):
            break
    # Ranges in order never pick more lines than the file has (a `...` stands for one left
    # out); ranges that repeat (`ln[1:999,1:999,...]`, a thousand times) must not make a
    # doc of one line a view of a thousand files: the budget counts the file once.
    del out[len(lines) :]
    return out


def select(text: str, opts: dict[str, str]) -> list[str]:
    """The lines of an included text that the options keep, in Sphinx's order: start and
    end markers, then `lines` (or MyST's `start-line`/`end-line`, 0-based slice bounds)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for key, after in (("start-after", True), ("start-at", False)):
        mark = opts.get(key)
        if mark:
            at = next((k for k, t in enumerate(lines) if mark in t), None)
            lines = [] if at is None else lines[at + 1 if after else at :]
    for key, before in (("end-before", True), ("end-at", False)):
        mark = opts.get(key)
        if mark:
            at = next((k for k, t in enumerate(lines) if mark in t), None)
            if at is not None:
                lines = lines[: at if before else at + 1]
    if opts.get("start-line") or opts.get("end-line"):
        try:
            a = int(opts.get("start-line") or 0)
            b = int(opts["end-line"]) if opts.get("end-line") else None
            lines = lines[a:b]
        except ValueError:
            pass
    if opts.get("lines"):
        lines = _pick(lines, _ranges(opts["lines"], len(lines)))
    return lines


def _code(lang: str, body: list[str], indent: str, at: int) -> list[Line]:
    """Fenced code, every line citing the directive's line `at`."""
    while body and not body[-1].strip():
        body = body[:-1]
    while body and not body[0].strip():
        body = body[1:]
    longest = max((len(t) - len(t.lstrip("`")) for t in body), default=0)
    fence = "`" * max(3, longest + 1)
    return [
        ("", at),
        (indent + fence + lang, at),
        *((indent + t if t.strip() else "", at) for t in body),
        (indent + fence, at),
        ("", at),
    ]


# Snippets a page inlines to draw, not to say: mkdocs' plugins page inlines a 37 KB SVG,
# which was 40 chunks of `<polygon ...>` ranking third for "how are plugins loaded".
_PICTURES = frozenset({"svg"})


def note(indent: str, target: str, why: str, at: int) -> list[Line]:
    return [("", at), (f"{indent}[include not read: {target[:200]}: {why}]", at), ("", at)]


def _code_language(name: str, opts: dict[str, str], path: str) -> str | None:
    """The language an include is quoted in as code (`literalinclude`, or `include` with
    `:literal:`/`:code:`), else None: its text is spliced in (reST and MyST alike)."""
    if name == "literalinclude" or "literal" in opts or "code" in opts:
        return opts.get("language") or opts.get("code") or language(path)
    return None


def _options(body: list[Line]) -> dict[str, str]:
    out = {}
    for t, _ in body:
        m = _OPTION.match(t.strip())
        if m:
            out[m.group(1).lower()] = m.group(2).strip()
    return out


class Expander:
    """Walks a doc's lines, splicing in what its includes name. `seen` holds every file it
    asked the gate for (found or not): the sync state records them, so that a change to one
    re-reads the docs that include it."""

    def __init__(self, fetch: Fetch):
        self._fetch = fetch
        self.seen: dict[str, Got] = {}
        self._found = 0
        self._spliced = 0  # characters spliced so far

    def get(self, doc: str, target: str, how: str) -> tuple[str, Got]:
        """The first of the target's candidates the gate reads, else the first refusal."""
        first: tuple[str, Got] | None = None
        for path in candidates(doc, target, how):
            got = self.seen.get(path)
            if got is None:
                if len(self.seen) >= MAX_TRIED or self._found >= MAX_FILES:
                    return path, Got(None, f"over {MAX_FILES} files included by one doc")
                got = self.seen[path] = self._fetch(path)
                self._found += got.text is not None
            if got.text is not None:
                return path, got
            first = first or (path, got)
        return first or ("", Got(None, "outside the repository, or not a file path", absent=True))

    def expand(self, doc: str, lines: list[Line], rst: bool) -> list[Line]:
        return self._walk(doc, lines, rst, (doc,))

    def _walk(self, doc: str, lines: list[Line], rst: bool, stack: tuple[str, ...]) -> list[Line]:
        return self._rst(doc, lines, stack) if rst else self._md(doc, lines, stack)

    def _splice(
        self, doc: str, target: str, how: str, at: int, indent: str, stack: tuple[str, ...]
    ) -> tuple[str, list[str]] | list[Line] | None:
        """(path, its lines) of an include, the note saying why there are none, or None for
        a file that is not there to read (the caller keeps the doc's own lines)."""
        if self._spliced > MAX_SPLICED:
            # Spent: the rest stay as written, unread. A note each was the blowup: a 21-byte
            # doc including a file of 50 includes of a file of 50 includes... became 8 MB of
            # notes, however small the budget for text.
            return None
        path, got = self.get(doc, target, how)
        if got.text is None:
            return None if got.absent else self._note(indent, target, got.why, at)
        if path in stack:
            return self._note(indent, target, "it includes itself", at)
        if len(stack) > MAX_DEPTH:
            return self._note(indent, target, f"nested over {MAX_DEPTH} includes deep", at)
        self._spliced += len(got.text)
        if self._spliced > MAX_SPLICED:
            why = f"over {MAX_SPLICED} characters included by one doc"
            return self._note(indent, target, why, at)
        return path, got.text.split("\n")

    def _note(self, indent: str, target: str, why: str, at: int) -> list[Line]:
        """A note, its characters counted in what the doc's includes added."""
        lines = note(indent, target, why, at)
        self._spliced += sum(len(t) + 1 for t, _ in lines)
        return lines

    # -- markdown (MkDocs, pymdownx, MyST) ---------------------------------------------

    def _md(self, doc: str, lines: list[Line], stack: tuple[str, ...]) -> list[Line]:
        out: list[Line] = []
        fence = ""
        i, n = 0, len(lines)
        while i < n:
            t, at = lines[i]
            if "--8<--" in t and not t.lstrip().startswith(";"):
                m = _SNIPPET.match(t)
                block = _SNIPPET_BLOCK.match(t)
                if m:
                    target = m.group(2) or m.group(3) or m.group(4)
                    out += self._snippet(doc, target, m.group(1), at, stack) or [lines[i]]
                    i += 1
                    continue
                if block:
                    j = i + 1
                    while j < n and not _SNIPPET_BLOCK.match(lines[j][0]):
                        j += 1
                    if j < n:  # a block of paths, one a line
                        for p, _ in lines[i + 1 : j]:
                            if p.strip() and not p.lstrip().startswith(";"):
                                got = self._snippet(doc, p.strip(), block.group(1), at, stack)
                                out += got or [(p, at)]
                        i = j + 1
                        continue
            if fence:
                s = t.strip()
                if s and s == fence[0] * len(s) and len(s) >= len(fence):
                    fence = ""
                out.append(lines[i])
                i += 1
                continue
            d = _MYST.match(t)
            if d:
                i = self._myst(doc, lines, i, d, out, stack)
                continue
            f = _FENCE.match(t)
            if f:
                fence = f.group(1)
                out.append(lines[i])
                i += 1
                continue
            star = _STAR.match(t) if "{*" in t else None
            if star:
                out += self._star(doc, star, at, stack)
                i += 1
                continue
            out.append(lines[i])
            i += 1
        return out

    def _star(self, doc: str, m: re.Match[str], at: int, stack: tuple[str, ...]) -> list[Line]:
        indent, target, rest = m.group(1), m.group(2), m.group(3)
        got = self._splice(doc, target, "mkdocs", at, indent, stack)
        if got is None:
            return [(m.string, at)]
        if not isinstance(got, tuple):
            return got
        path, text = got
        if text and text[-1] == "":
            text = text[:-1]
        ln = _LN.search(rest)
        body = _pick(text, _ranges(ln.group(1), len(text))) if ln else text
        return _code(language(path), body, indent, at)

    def _snippet(
        self, doc: str, target: str, indent: str, at: int, stack: tuple[str, ...]
    ) -> list[Line] | None:
        """The snippet's lines, a note, or None (not there: the caller keeps its line)."""
        spec = ""
        m = _SNIPPET_LINES.match(target)
        if m and m.group(1) and any(c.isdigit() for c in m.group(2)):
            target, spec = m.group(1), m.group(2)
        if target.rpartition(".")[2].lower() in _PICTURES:
            return self._note(indent, target, "a picture's markup, not text to read", at)
        got = self._splice(doc, target, "mkdocs", at, indent, stack)
        if got is None or not isinstance(got, tuple):
            return got
        path, text = got
        if text and text[-1] == "":
            text = text[:-1]
        if spec:  # `:3:9`, `:3:`, `:-5` (pymdownx: start and end, 1-based)
            parts = [*spec[1:].split(":"), ""][:2]
            start = int(parts[0]) if parts[0].lstrip("-").isdigit() else 1
            end = int(parts[1]) if parts[1].lstrip("-").isdigit() else len(text)
            text = text[max(start, 1) - 1 : end if end > 0 else len(text) + end]
        spliced = [(indent + t if t.strip() else "", at) for t in text]
        return self._md(path, spliced, (*stack, path))

    def _myst(
        self,
        doc: str,
        lines: list[Line],
        i: int,
        d: re.Match[str],
        out: list[Line],
        stack: tuple[str, ...],
    ) -> int:
        """A ```{literalinclude}``` or ```{include}``` fence at lines[i]; the index after it."""
        fence, name, target, at = d.group(2), d.group(3), d.group(4), lines[i][1]
        j = i + 1
        while j < len(lines):
            s = lines[j][0].strip()
            if s and s == fence[0] * len(s) and len(s) >= len(fence):
                break
            j += 1
        opts = _options(lines[i + 1 : j])
        got = self._splice(doc, target, "doc", at, "", stack)
        if got is None:
            out += lines[i : j + 1]
        elif not isinstance(got, tuple):
            out += got
        else:
            path, text = got
            picked = select("\n".join(text), opts)
            lang = _code_language(name, opts, path)
            if lang is not None:
                out += _code(lang, picked, "", at)
            else:
                out += [("", at)]
                out += self._md(path, [(t, at) for t in picked], (*stack, path))
                out += [("", at)]
        return j + 1

    # -- reStructuredText --------------------------------------------------------------

    def _rst(self, doc: str, lines: list[Line], stack: tuple[str, ...]) -> list[Line]:
        out: list[Line] = []
        i, n = 0, len(lines)
        while i < n:
            t, at = lines[i]
            m = _RST.match(t) if "include::" in t else None
            if m is None:
                out.append(lines[i])
                i += 1
                if "::" in t and _RST_LITERAL.match(t):
                    ind = len(t) - len(t.lstrip())
                    while i < n and (
                        not lines[i][0].strip()
                        or len(lines[i][0]) - len(lines[i][0].lstrip()) > ind
                    ):
                        out.append(lines[i])
                        i += 1
                continue
            indent, name, target = m.group(1), m.group(2), m.group(3)
            j = i + 1
            while j < n and (
                not lines[j][0].strip()
                or len(lines[j][0]) - len(lines[j][0].lstrip()) > len(indent)
            ):
                j += 1
            if target.startswith("<"):  # docutils' own substitution sets (<isonum.txt>)
                i = j
                continue
            opts = _options(lines[i + 1 : j])
            if (
                name == "include"
                and (target.lower().endswith(_MARKDOWN) or "myst" in opts.get("parser", ""))
                and _code_language(name, opts, target) is None  # (`:literal:`: quoted as code)
            ):
                # Markdown spliced into reST (`:parser: myst_parser.sphinx_`) read as reST
                # was garbage: loguru's README, its fences taken for heading underlines, 14
                # chunks all titled "pip install loguru", each a copy of the README's own.
                # The markdown is a doc of its own; here, a note that says so.
                out += self._note(indent, target, "markdown, read as a doc of its own", at)
                i = j
                continue
            got = self._splice(doc, target, "doc", at, indent, stack)
            if got is None:
                out += lines[i:j]
            elif not isinstance(got, tuple):
                out += got
            else:
                path, text = got
                picked = select("\n".join(text), opts)
                lang = _code_language(name, opts, path)
                if lang is not None:
                    # As a code-block the reST reader fences; the blank line first keeps a
                    # code line that looks like `:option:` from being read as one.
                    out += [("", at), (f"{indent}.. code-block:: {lang}".rstrip(), at), ("", at)]
                    out += [(f"{indent}   {c}" if c.strip() else "", at) for c in picked]
                    out += [("", at)]
                else:
                    spliced = [(indent + c if c.strip() else "", at) for c in picked]
                    out += [("", at), *self._rst(path, spliced, (*stack, path)), ("", at)]
            i = j
        return out


_MARKDOWN = (*BY_FORMAT["markdown"], *BY_FORMAT["mdx"])


def expand(doc: str, lines: list[Line], rst: bool, fetch: Fetch) -> tuple[list[Line], Expander]:
    """`lines` with every include of `doc` spliced in; the expander holds what was read."""
    ex = Expander(fetch)
    return ex.expand(doc, lines, rst), ex
