"""langs: which tracked files are code, and in which language. A leaf: imports nothing, so
the hooks and the docs-only paths can ask without loading a parser."""

from __future__ import annotations

# suffix -> language. Python is read with the standard library's ast; the others with
# tree-sitter and its per-language grammar wheels (ncx/code/treesitter.py).
LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}

# Larger files are generated or vendored far more often than written: bundles, lock data,
# grammar tables. Their symbols would crowd every ranking, and parsing them is the cost.
MAX_CODE_BYTES = 1_000_000


# A `/** ... */` block a blank line above a definition is its doc: commander.js writes every
# method's JSDoc so, and TypeScript, javadoc and rustdoc attach it across the blank line. Not
# in Go (a blank line detaches a doc there, and Go writes `//` docs) nor Python (docstrings).
# Found as a new user (decisions.md §85). False: only a comment on the line right above.
DOC_BLOCK_GAP = True


def doc_block_gap(language: str | None) -> bool:
    """Whether a `/**` block one blank line above a definition is its doc, in this language."""
    return DOC_BLOCK_GAP and language not in (None, "go", "python")


def language_of(path: str) -> str | None:
    """The language of a repository path, or None when ncx does not read it as code."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    lang = LANGUAGES.get(path[dot:].lower())
    if lang is None:
        return None
    name = path.rsplit("/", 1)[-1]
    # minified bundles and declaration-only builds say nothing a task can use
    if name.endswith((".min.js", ".bundle.js")):
        return None
    return lang
