"""cites: what a memory cites, recorded as it was, and whether it still is.

A memory names files (a path in its text or its `related_docs`), definitions (what
ncx.code.links finds in its text: `Session.refresh`, `parse_token()`) and doc sections
(`docs/auth.md#token-refresh`, a chunk's id). When it is written, each of those is recorded
with a short hash of what it was: a file by its git blob id, a definition by its own source
lines, a section by its chunk's `hash`. A memory is stale when one of them hashes otherwise
now, or is gone. No clock and no network: the evidence is the files themselves, read from
the work tree (or a commit's materialised files), so the answer is the same on any machine
(docs/decisions.md §36).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HASH_CHARS = 12  # 48 bits: one memory's few citations never collide by chance
MAX_CITES = 20  # a memory is one learning; a pasted file list would swell every frontmatter
DEMOTE = 0.5  # a stale memory's score factor until it is confirmed or corrected

_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]{1,8})(?:#([\w~-]+))?(?![\w/])")

Reader = Callable[[str], bytes | None]  # repo-relative path -> bytes, None when not there


@dataclass(frozen=True, order=True)
class Cite:
    """One thing a memory cites, as it was when the memory was written or confirmed."""

    path: str
    symbol: str = ""  # a definition's qualified name
    section: str = ""  # a doc section: the chunk name after `#` in its id
    hash: str = ""

    def label(self) -> str:
        if self.symbol:
            return f"{self.path}:{self.symbol}()"
        return f"{self.path}#{self.section}" if self.section else self.path

    def to_meta(self) -> dict[str, str]:
        out = {"path": self.path}
        if self.symbol:
            out["symbol"] = self.symbol
        if self.section:
            out["section"] = self.section
        out["hash"] = self.hash
        return out


@dataclass(frozen=True)
class StaleCite:
    memory: str
    cite: Cite
    gone: bool  # the file, definition or section is no longer there

    def line(self, *, advice: bool = True) -> str:
        what = "gone since" if self.gone else "changed since"
        out = f"{self.memory}: cites {self.cite.label()}, {what}"
        return out + (
            f": confirm with `ncx memory evolve {self.memory} --confirm`" if advice else ""
        )


def cites_of(meta: Mapping[str, Any]) -> list[Cite]:
    """The citations a memory's frontmatter records (malformed entries are `ncx check`'s)."""
    out: list[Cite] = []
    raw = meta.get("cites")
    for c in raw if isinstance(raw, list) else []:
        if (
            isinstance(c, dict)
            and isinstance(c.get("path"), str)
            and isinstance(c.get("hash"), str)
        ):
            sym, sec = c.get("symbol") or "", c.get("section") or ""
            out.append(Cite(c["path"], str(sym), str(sec), c["hash"]))
    return out


# --- hashing what a citation points at -----------------------------------------------------


def _short(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:HASH_CHARS]


def file_hash(data: bytes) -> str:
    """The file's git blob id, shortened: `git log --find-object` finds where it changed."""
    from ncx.code.store import git_blob_id

    return git_blob_id(data)[:HASH_CHARS]


def symbol_hash(path: str, data: bytes, qualname: str, memo: Path | None = None) -> str | None:
    """A hash of a definition's own source lines (what moves with it when lines are added
    above it stays equal), or None when the file defines no such name now."""
    return symbol_hashes(path, data, memo).get(qualname)


_MEMO: dict[str, dict[str, str]] = {}  # blob id -> symbol hashes, for this process
MEMO_DIR = "cites"  # under cache/: one small JSON per file version parsed


def memo_folder(root: Path) -> Path | None:
    """`cache/cites/`, or None (no memo on disk) where a link stands on its way: an
    accelerator is skipped, never written through (ncx.paths.cache_folder)."""
    from ncx.paths import UnsafePath, cache_folder

    try:
        return cache_folder(root, MEMO_DIR)
    except UnsafePath:
        return None


def symbol_hashes(path: str, data: bytes, memo: Path | None = None) -> dict[str, str]:
    """qualname -> hash of every definition of a source file (the first of a name wins).

    Parsing is most of a check's cost (7 ms a starlette module: 170 ms a query over 27
    memories), so the result is kept by the file's blob id, in this process and, given the
    folder `memo` (memo_folder), on disk: a file version is parsed once per clone."""
    import json

    from ncx.code.langs import MAX_CODE_BYTES, language_of
    from ncx.code.store import git_blob_id

    language = language_of(path)
    if language is None or len(data) > MAX_CODE_BYTES:
        return {}
    key = f"{git_blob_id(data)}-{language}"
    if key in _MEMO:
        return _MEMO[key]
    file = memo / f"{key}.json" if memo is not None else None
    if file is not None:
        from ncx.store import read_regular

        try:
            got = json.loads(read_regular(file, follow=False))
        except (OSError, ValueError):
            got = None
        if isinstance(got, dict):
            _MEMO[key] = {str(k): str(v) for k, v in got.items()}
            return _MEMO[key]
    out = _parse_hashes(language, data)
    _MEMO[key] = out
    if file is not None:
        from ncx.store import write_atomic

        try:
            write_atomic(file, json.dumps(out, sort_keys=True).encode())
        except OSError:
            pass  # a read-only cache: the answer is the same, only slower next time
    return out


def _parse_hashes(language: str, data: bytes) -> dict[str, str]:
    from ncx.code.read import read_code

    try:
        code = read_code(language, data)
    except Exception:  # a parser's failure on a hand-broken file: nothing defined
        return {}
    lines = data.split(b"\n")
    out: dict[str, str] = {}
    for sym in code.symbols:
        if sym.kind != "module" and sym.qualname not in out:
            body = lines[sym.start - 1 : sym.end]
            out[sym.qualname] = _short(b"\n".join(line.rstrip(b"\r") for line in body))
    return out


def section_hash(root: Path, read: Reader, doc: str, section: str) -> str | None:
    """A hash of the `hash` of the chunk(s) named `section` in `doc`'s chunk file (a long
    section's windows `name~2`, `name~3`… count with it), or None when there is none."""
    from ncx.errors import NcxError
    from ncx.layout import chunk_file_paths
    from ncx.store import parse_frontmatter, split_chunk_file

    data = read(chunk_file_paths([doc])[doc])
    if data is None:
        return None
    try:
        blocks = split_chunk_file(data, path=doc)
    except NcxError:
        return None
    found: list[str] = []
    for block in blocks:
        head = block.split(b"\n---\n", 1)[0] + b"\n---\n"
        try:
            meta, _, _ = parse_frontmatter(head.decode("utf-8", "replace"), path=doc)
        except NcxError:
            continue
        name = str(meta.get("id") or "").partition("#")[2]
        if name == section or name.startswith(section + "~"):
            found.append(str(meta.get("hash") or ""))
    return _short("\n".join(found).encode()) if found else None


def current(root: Path, read: Reader, cite: Cite) -> str | None:
    """What `cite` hashes to now, or None when it is gone."""
    if cite.section:
        return section_hash(root, read, cite.path, cite.section)
    data = read(cite.path)
    if data is None:
        return None
    if cite.symbol:
        return symbol_hash(cite.path, data, cite.symbol, memo_folder(root))
    return file_hash(data)


def work_tree_reader(root: Path) -> Reader:
    """Read repo files from the work tree; a link or anything not a plain file is 'gone'
    (a link could lead out of the repository), and each file is read once."""
    from ncx.code.store import _read
    from ncx.paths import Links, rel_problem

    seen: dict[str, bytes | None] = {}
    links = Links(root)

    def read(path: str) -> bytes | None:
        # a hand-edited `cites` path is no way out of the repository: not normalised, or
        # through a link at any level, it reads as gone
        if path not in seen:
            bad = rel_problem(path) is not None or path.startswith("/") or links.has_link(path)
            seen[path] = None if bad else _read(root / path)
        return seen[path]

    return read


# --- recording --------------------------------------------------------------------------------


def record(root: Path, text: str, related_docs: Sequence[str]) -> list[Cite]:
    """What `text` and `related_docs` cite, hashed as the work tree has it now: sorted,
    at most MAX_CITES. Only tracked files count (a scratch file is no evidence)."""
    from ncx import repo
    from ncx.layout import NCX_DIR

    tracked = {p for p in repo.tracked_files(root) if not p.startswith(NCX_DIR + "/")}
    read = work_tree_reader(root)
    named: dict[str, set[str]] = {}  # path -> sections named ("" for the whole file)
    for source in (text, *related_docs):
        for m in _PATH.finditer(source):
            path = m.group(1).removeprefix("./")
            if path in tracked:
                named.setdefault(path, set()).add(m.group(2) or "")
    out: set[Cite] = set()
    defined = _definitions(root, text, set(named))
    for path, qual in defined:
        data = read(path)
        h = symbol_hash(path, data, qual, memo_folder(root)) if data is not None else None
        if h is not None:
            out.add(Cite(path, symbol=qual, hash=h))
    located = {p for p, _ in defined}
    for path, sections in named.items():
        if len(sections) > 1:
            sections.discard("")  # a doc named and one of its sections: the section is cited
        for section in sorted(sections):
            if section:
                h = section_hash(root, read, path, section)
            elif path in located:
                # a file named only to say where a cited definition is: the definition is
                # the finer evidence, and any edit of the file would flag it for nothing
                continue
            else:
                data = read(path)
                h = file_hash(data) if data is not None else None
            if h is not None:
                out.add(Cite(path, section=section, hash=h))
    return sorted(out)[:MAX_CITES]


def _definitions(root: Path, text: str, named_files: set[str]) -> list[tuple[str, str]]:
    """(path, qualname) of the definitions `text` names (ncx.code.links). A name defined in
    several files, one of which the text names, is taken as that file's."""
    from ncx.code.index import has_code_index, load_code_index
    from ncx.code.links import links
    from ncx.code.search import QUICK_CODE_FILES
    from ncx.code.store import listing

    sources = listing(root)
    if not sources:
        return []
    if not has_code_index(root) and len(sources) > QUICK_CODE_FILES:
        # A first build would read every file (minutes on a large tree) inside `memory add`:
        # until the index exists, only the files the text names are read for definitions.
        found = _named_definitions(root, text, named_files)
    else:
        idx = load_code_index(root)
        found = [(lk.path, lk.qualname) for lk in links(idx, text) if lk.qualname]
    by_name: dict[str, list[tuple[str, str]]] = {}
    for path, qual in found:
        by_name.setdefault(qual.rsplit(".", 1)[-1], []).append((path, qual))
    out: list[tuple[str, str]] = []
    for group in by_name.values():
        mine = [g for g in group if g[0] in named_files]
        out += mine or group
    return out


def _named_definitions(root: Path, text: str, named_files: set[str]) -> list[tuple[str, str]]:
    """The definitions of the named files whose name (or dotted tail) `text` writes."""
    from ncx.code.rank import IDENTIFIER

    # as ncx.code.links reads a text: names written as code, or identifiers no word looks like
    quoted = {m.strip().removesuffix("()") for m in re.findall(r"`([^`\n]{2,120})`", text)}
    words = quoted | set(IDENTIFIER.findall(text))
    read = work_tree_reader(root)
    out = []
    for path in sorted(named_files):
        data = read(path)
        for qual in symbol_hashes(path, data, memo_folder(root)) if data is not None else {}:
            if qual in words or qual.rsplit(".", 1)[-1] in words:
                out.append((path, qual))
    return out


def cites_meta(cites: Iterable[Cite]) -> list[dict[str, str]]:
    return [c.to_meta() for c in cites]


# --- checking ---------------------------------------------------------------------------------


def stale_cites(root: Path, memory_id: str, cites: Iterable[Cite], read: Reader) -> list[StaleCite]:
    out = []
    for c in cites:
        now = current(root, read, c)
        if now != c.hash:
            out.append(StaleCite(memory_id, c, gone=now is None))
    return out


def commits_since(root: Path, memory_id: str, path: str) -> int | None:
    """How many commits changed `path` since the memory's file was last committed (None:
    the memory is not committed yet). Only for the few lines a person reads."""
    from ncx import repo
    from ncx.layout import MEMORIES, NCX_DIR

    mem = f"{NCX_DIR}/{MEMORIES}/{memory_id}.md"
    last = repo.git(root, "log", "-1", "--format=%H", "--", mem, check=False).decode().strip()
    if not last:
        return None
    out = repo.git(root, "rev-list", "--count", f"{last}..HEAD", "--", path, check=False)
    try:
        return int(out.decode().strip() or 0)
    except ValueError:
        return None


def by_memory(stale: Iterable[StaleCite]) -> dict[str, list[StaleCite]]:
    out: dict[str, list[StaleCite]] = {}
    for s in stale:
        out.setdefault(s.memory, []).append(s)
    return out
