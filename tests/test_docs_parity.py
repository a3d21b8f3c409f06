"""Docs parity: every citation of docs/ in the code, tests and project files resolves.

Code comments cite `docs/decisions.md §N`, `docs/design.md invariant N` and `v2-format §N`
(§0.N for the rules of docs/v2-format.md §0); each must name a file and a section that exist,
and no comment may cite a file a clone does not have (the research notes it came from).
"""

from __future__ import annotations

import re

from conftest import REPO

DOCS = REPO / "docs"
CITED_IN = ["ncx", "tests", "benchmarks", "training"]
CITED_FILES = ["pyproject.toml", "README.md", "CONTRIBUTING.md", ".ci/run"]
# `docs/<name>.md` followed by a section or an invariant: a citation, not an example path
# like the `docs/guide.md` of a test repository.
_CITE = re.compile(
    r"docs/([\w-]+\.md)`?\s*(?:(§\s*[\d.]+(?:\s*,\s*§\s*[\d.]+)*)|invariants?\s+(\d+))"
)
_V2 = re.compile(r"v2-format(?:\.md)?\s+(§\s*[\d.]+(?:\s*,\s*§\s*[\d.]+)*)")
_SECTION = re.compile(r"§\s*([\d.]+)")
_GONE = re.compile(r"research/[\w-]+\.md|\bDESIGN\.md|\bspec §")


def _texts() -> list[tuple[str, str]]:
    files = [
        p for d in CITED_IN for p in sorted((REPO / d).rglob("*")) if p.suffix in (".py", ".md")
    ]
    files += [REPO / f for f in CITED_FILES]
    files += sorted(DOCS.glob("*.md"))
    return [
        (p.relative_to(REPO).as_posix(), p.read_text(encoding="utf-8"))
        for p in files
        if p.is_file()
    ]


def _headings(name: str) -> set[str]:
    """Section numbers a docs file defines: `## §N …` headings, and `§0.N` for §0's rules."""
    text = (DOCS / name).read_text(encoding="utf-8")
    found = set(re.findall(r"^## §(\d+)\b", text, re.MULTILINE))
    rules = re.search(r"^## §0\b.*?(?=^## )", text, re.MULTILINE | re.DOTALL)
    if rules:
        found |= {f"0.{n}" for n in re.findall(r"^(\d+)\. ", rules.group(0), re.MULTILINE)}
    return found


def _invariants() -> set[str]:
    text = (DOCS / "design.md").read_text(encoding="utf-8")
    part = text.split("## Invariants", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^(\d+)\. \*\*", part, re.MULTILINE))


def citations() -> list[tuple[str, str, str]]:
    """(citing file, docs file, section or 'invariant N') for every citation found."""
    out = []
    for where, text in _texts():
        for m in _CITE.finditer(text):
            if m.group(3):
                out.append((where, m.group(1), f"invariant {m.group(3)}"))
            else:
                out += [(where, m.group(1), s) for s in _SECTION.findall(m.group(2))]
        for m in _V2.finditer(text):
            out += [(where, "v2-format.md", s) for s in _SECTION.findall(m.group(1))]
    return out


def test_every_docs_citation_resolves() -> None:
    found = citations()
    # the citations this test exists for are really found (a broken regex would pass vacuously)
    assert {
        ("ncx/repo.py", "decisions.md", "2"),
        ("ncx/tree/chunkfile.py", "design.md", "invariant 2"),
    } <= set(found)
    assert sum(1 for _, name, _ in found if name == "v2-format.md") >= 15
    invariants = _invariants()
    for where, name, section in found:
        assert (DOCS / name).is_file(), f"{where} cites docs/{name}, which does not exist"
        if section.startswith("invariant "):
            assert name == "design.md" and section.split()[1] in invariants, (
                f"{where}: {name} {section}"
            )
        else:
            assert section.rstrip(".") in _headings(name), (
                f"{where} cites docs/{name} §{section}, not a section there"
            )


def test_no_citation_of_files_outside_the_repository() -> None:
    stale = [
        f"{where}: {m.group(0)}"
        for where, text in _texts()
        if not where.startswith("docs/") and where != "tests/test_docs_parity.py"
        for m in _GONE.finditer(text)
    ]
    assert not stale, "cite docs/ instead:\n" + "\n".join(stale)
