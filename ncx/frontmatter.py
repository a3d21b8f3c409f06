"""frontmatter: the YAML block at the head of every unit, parsed and written. Pure text.

Fences are `---` alone on a line, YAML must be a mapping, keys keep their order. The common
shapes (plain keys, scalars, short lists) go through a small reader and writer of their own;
anything else through PyYAML, after `yaml_problem` has refused what must never be loaded.
The files themselves are ncx.store's (which re-exports these names for its callers).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ncx.errors import BadFrontmatter


def _yaml() -> Any:
    import yaml

    return yaml


MAX_YAML_CHARS = 256_000
# YAML aliases expand: nine lines of `&a [*b, *b, ...]` make 10^9 nodes (a "billion laughs").
# ncx never writes an alias; a hand-written sidecar may share a few values. The whole
# document may expand to at most this many nodes, counted before anything is built.
MAX_YAML_NODES = 50_000


def yaml_problem(yaml_text: str) -> str | None:
    """Why a YAML text must not be loaded (too big, alias bomb, recursive alias), or None.

    Walks the parser's events only (no objects are built), so a bomb costs its own size."""
    if len(yaml_text) > MAX_YAML_CHARS:
        return f"YAML is {len(yaml_text):,} characters, over the {MAX_YAML_CHARS:,} limit"
    if "&" not in yaml_text and "*" not in yaml_text:
        return None  # no anchor, no alias: nothing can expand (the common case, no 2nd pass)
    yaml = _yaml()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]  # [anchor, nodes so far] of each open collection
    try:
        for ev in yaml.parse(yaml_text, Loader=loader):
            if isinstance(ev, yaml.AliasEvent):
                if ev.anchor not in sizes:
                    return f"alias *{ev.anchor} refers to itself or to no anchor"
                stack[-1][1] += sizes[ev.anchor]
            elif isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                stack.append([ev.anchor, 1])
            elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                anchor, n = stack.pop()
                if anchor is not None:
                    sizes[anchor] = n
                stack[-1][1] += n
            elif isinstance(ev, yaml.ScalarEvent):
                if ev.anchor is not None:
                    sizes[ev.anchor] = 1
                stack[-1][1] += 1
            if stack[-1][1] > MAX_YAML_NODES or sum(x[1] for x in stack) > MAX_YAML_NODES:
                return f"YAML aliases expand to over {MAX_YAML_NODES:,} values (an alias bomb)"
    except yaml.YAMLError:
        return None  # the real parse reports it with its line
    return None


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Return (yaml_text or None, body, body_start_line) for a markdown text.

    body_start_line is the 1-based line of the source where `body` begins.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if not (text.startswith("---\n") or text == "---" or text.startswith("---\r\n")):
        return None, text, 1
    lines = text.split("\n")
    for i in range(1, len(lines)):
        stripped = lines[i].rstrip("\r")
        if stripped in ("---", "..."):
            yaml_text = "\n".join(line.rstrip("\r") for line in lines[1:i])
            body = "\n".join(lines[i + 1 :])
            return yaml_text, body, i + 2
    return None, text, 1  # an opening fence with no closing fence is just text


# The frontmatter ncx writes itself (chunk files: a dozen `key: scalar` lines and lists of
# scalars) is read without the YAML library: on a 10,916-chunk tree, YAML was 1.7 s of a 7 s
# cache build. Only an unambiguous subset is taken; anything else (quotes with escapes,
# flow or block collections, anchors, scalars YAML would read as bool/float/date, ...)
# returns None and goes through YAML, so the result is always the one YAML gives.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\Z")
# No indicator character first. Beyond ASCII, any character YAML prints (its reader's
# printable set, less U+FEFF) may open a plain scalar, and no YAML rule for a typed scalar
# starts with one: a Korean or Chinese heading (`- 목차`) is a string, read here, not by YAML
# (zod's two translated READMEs were 202 of its 790 chunks through YAML, a quarter of a
# cold cache's parsing there; decisions.md §95). The rest: what YAML prints, less tab and CR
# (a control character YAML refuses, a CR it reads as a line break: both left to YAML).
# Written as what is not allowed: the same set as the ranges YAML's reader lists (every code
# point checked), compiled in 0.7 ms where the ranges took 10 ms of every start.
_PLAIN_OK = re.compile(
    "(?:[A-Za-z0-9_/(]|[^\x00-\x9f\ud800-\udfff\ufeff\ufffe\uffff])"
    "[^\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]*\\Z"
)
_PLAIN_ASCII = re.compile(r"[A-Za-z0-9_./(][\x20-\x7e]*\Z")  # what the fast writer emits
_YAML_BREAK = re.compile("[\x85\u2028\u2029]")  # line breaks to YAML besides \n and \r


@functools.cache
def _implicit() -> dict[str, list[Any]]:
    """YAML's own rules for plain scalars that are not strings (bool, float, date, ...)."""
    return dict(_yaml().resolver.Resolver.yaml_implicit_resolvers)


def _plain(value: str, chars: re.Pattern[str]) -> bool:
    """A plain (unquoted) YAML scalar that reads back as this very string: what the reader
    accepts (`chars`: _PLAIN_OK) and, stricter, what the writer emits (_PLAIN_ASCII)."""
    return bool(
        chars.match(value)
        and value == value.strip()
        and ": " not in value
        and " #" not in value
        and not value.endswith(":")
        and _plain_is_str(value)
    )


def _plain_is_str(raw: str) -> bool:
    return not any(rx.match(raw) for _tag, rx in _implicit().get(raw[0], ()))


@functools.lru_cache(maxsize=1 << 16)  # keywords and headings recur across thousands of files
def _simple_scalar(raw: str) -> tuple[bool, Any]:
    """(understood, value) of one scalar in the simple subset (values are immutable)."""
    if _YAML_BREAK.search(raw):
        # A line break to YAML though not to this line split: YAML writes a value holding
        # U+2028 or U+2029 quoted over two lines ('A\u2028  B' is "A\u2028B"). YAML reads it.
        return False, None
    if raw == "null" or raw == "~":
        return True, None
    if _INT.match(raw):
        return True, int(raw)
    if len(raw) >= 2 and raw[0] == "'" and raw[-1] == "'":
        inner = raw[1:-1]
        if "'" in inner.replace("''", ""):
            return False, None
        return True, inner.replace("''", "'")
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        inner = raw[1:-1]
        return ("\\" not in inner and '"' not in inner), inner
    if _plain(raw, _PLAIN_OK):
        return True, raw
    return False, None


def parse_simple_frontmatter(yaml_text: str) -> dict[str, Any] | None:
    """The mapping of a frontmatter in ncx's own simple subset, or None (use YAML)."""
    meta: dict[str, Any] = {}
    bare: list[str] = []  # `key:` lines: a list follows, or YAML's null if nothing does
    current: list[Any] | None = None
    for line in yaml_text.split("\n"):
        if line.startswith("- "):
            if current is None:
                return None
            ok, value = _simple_scalar(line[2:])
            if not ok:
                return None
            current.append(value)
            continue
        key, sep, rest = line.partition(":")
        if not sep or not _KEY.match(key) or key in meta:
            return None
        if rest == "":
            current = meta[key] = []
            bare.append(key)
            continue
        if rest[0] != " ":
            return None
        current = None
        rest = rest[1:]
        if rest == "[]":
            meta[key] = []
            continue
        ok, value = _simple_scalar(rest)
        if not ok:
            return None
        meta[key] = value
    for key in bare:
        if not meta[key]:
            meta[key] = None
    return meta


_WRITTEN = re.compile(r"([A-Za-z_][\w-]*):[ \t]+(\S.*)")


def _lines_as_written(yaml_text: str) -> dict[str, str] | None:
    """`key: value` lines that YAML refuses only for a `: ` inside a plain value, read as
    their writer meant them: each value the rest of its line. An agent's skill file
    (`description: Triage an advisory ... differs: the report is private`) made every
    sync of zod exit 1; a value YAML would read otherwise (a bracket, a quote, an anchor
    first: `title: [oops`) still does not parse. None when a line is anything else."""
    out: dict[str, str] = {}
    for line in yaml_text.split("\n"):
        if not line.strip():
            continue
        m = _WRITTEN.fullmatch(line.rstrip())
        if m is None or m.group(1) in out or not _PLAIN_OK.match(m.group(2)):
            return None
        out[m.group(1)] = m.group(2)
    return out or None


def parse_frontmatter(text: str, *, path: Path | str) -> tuple[dict[str, Any], str, int]:
    """Parse a markdown text into (metadata, body, body_start_line); raise BadFrontmatter."""
    yaml_text, body, start = split_frontmatter(text)
    if yaml_text is None:
        return {}, body, start
    simple = parse_simple_frontmatter(yaml_text)
    if simple is not None:
        return simple, body, start
    yaml = _yaml()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    bomb = yaml_problem(yaml_text)
    if bomb is not None:
        raise BadFrontmatter(
            f"frontmatter refused: {bomb}",
            path=path,
            hint="write plain `key: value` lines (no &anchors / *aliases); ncx never writes them",
        )
    try:
        meta = yaml.load(yaml_text, Loader=loader)
    except RecursionError:
        raise BadFrontmatter(
            "frontmatter nests too deep", path=path, hint="flatten the YAML"
        ) from None
    except yaml.YAMLError as exc:
        written = _lines_as_written(yaml_text)
        if written is not None:
            return written, body, start
        mark = getattr(exc, "problem_mark", None)
        # A mark past the last YAML line (an unclosed bracket) points at that last line.
        last = yaml_text.count("\n") + 2
        line = f" (line {min(mark.line + 2, last)})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise BadFrontmatter(
            f"frontmatter does not parse{line}: {problem}",
            path=path,
            hint="fix the YAML between the --- lines",
        ) from None
    except Exception as exc:  # (PyYAML's constructors raise what they meet)
        # A value its type refuses: a timestamp no calendar has (`date: 2023-02-30`, a
        # ValueError), `!!bool maybe` (KeyError), `!!timestamp x` (AttributeError).
        why = str(exc) if isinstance(exc, ValueError) else "a value its YAML tag cannot hold"
        raise BadFrontmatter(
            f"frontmatter does not parse: {why}",
            path=path,
            hint="fix the YAML between the --- lines (a date must exist: YYYY-MM-DD)",
        ) from None
    if meta is None:
        return {}, body, start
    if not isinstance(meta, dict):
        raise BadFrontmatter(
            f"frontmatter must be a mapping, found {type(meta).__name__}",
            path=path,
            hint="write `key: value` lines between the --- fences",
        )
    return meta, body, start


@functools.cache
def _dumper() -> Any:
    yaml = _yaml()
    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class NoAliasDumper(base):  # type: ignore[misc, valid-type]
        # Never `&id001` / `*id001`: one date object used for created and updated is
        # written twice, as a person would, not as a YAML alias.
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return NoAliasDumper


# The writing half of the fast path: a chunk file's frontmatter is rendered without the YAML
# library when every value is one YAML itself would write plain (so the bytes are the ones
# yaml.dump gives, which a property test checks); anything else goes through YAML. Rendering
# 40,000 chunk files through yaml.dump was ~8 s of a first sync or a full check.


def _simple_scalar_text(value: Any) -> str | None:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _str_text(value)
    return None


@functools.lru_cache(maxsize=1 << 16)  # keywords, paths and headings recur across chunks
def _plain_ascii(value: str) -> bool:
    return _plain(value, _PLAIN_ASCII)


# One line of printable ASCII (a heading "Step 1: Install", a keyword "true", a hash of
# digits) is written by YAML plain or single-quoted, quotes doubled, by the rules of its
# emitter (analyze_scalar / choose_scalar_style, for a block mapping value or list item):
# a quarter of a large tree's chunk headings are quoted, each one a yaml.dump before.
# Longer ones are left to YAML, which folds lines past its width.
_ONE_LINE = re.compile(r"[\x20-\x7e]{1,1000}\Z")
_BLOCK_INDICATOR = re.compile(r"---|\.\.\.|[#,\[\]{}&*!|>'\"%@`]|[-?:](?: |\Z)|.*(?::(?: |\Z)| #)")


@functools.lru_cache(maxsize=1 << 16)
def _str_text(value: str) -> str | None:
    if _plain_ascii(value):
        return value
    if not _ONE_LINE.match(value):
        return None
    if value == value.strip() and _plain_is_str(value) and not _BLOCK_INDICATOR.match(value):
        return value
    return "'" + value.replace("'", "''") + "'"


@functools.lru_cache(maxsize=256)
def _plain_key(key: str) -> bool:
    return bool(_KEY.match(key)) and _plain_ascii(key)


def dump_simple_frontmatter(meta: Mapping[str, Any]) -> str | None:
    """The YAML block yaml.dump writes for `meta`, or None when it is not simple enough."""
    # Called once per chunk of a tree (40,000 times): the common values (strings, and lists
    # of strings) go straight to the cached _str_text, the rest through _simple_scalar_text.
    out: list[str] = []
    for key, value in meta.items():
        if not (isinstance(key, str) and _plain_key(key)):
            return None
        if isinstance(value, list):
            if not value:
                out.append(f"{key}: []")
                continue
            if set(map(type, value)) == {str}:
                # Keywords and heading trails: mapped in C onto the cached renderings.
                texts: list[str | None] = list(map(_str_text, value))
            else:
                texts = list(map(_simple_scalar_text, value))
            if None in texts:
                return None
            out.append(f"{key}:\n- " + "\n- ".join(texts))  # type: ignore[arg-type]
            continue
        text = _str_text(value) if type(value) is str else _simple_scalar_text(value)
        if text is None:
            return None
        out.append(f"{key}: {text}")
    return "\n".join(out) + "\n" if out else None


def dump_frontmatter(meta: Mapping[str, Any], body: str) -> str:
    """Render metadata + body as markdown with a YAML block; same input, same bytes."""
    head = dump_simple_frontmatter(meta)
    if head is None:
        head = _yaml().dump(
            dict(meta),
            Dumper=_dumper(),
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=10_000,
        )
    body = body if body.endswith("\n") else body + "\n"
    return f"---\n{head}---\n\n{body.lstrip(chr(10))}"
