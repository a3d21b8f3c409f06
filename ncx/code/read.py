"""read: one source file's bytes -> its CodeFile, by language. Pure."""

from __future__ import annotations

from ncx.code.model import CodeFile


def read_code(language: str, data: bytes) -> CodeFile:
    if language == "python":
        from ncx.code.python import read_python

        return read_python(data.decode("utf-8", "replace"))
    from ncx.code.treesitter import read_tree_sitter

    try:
        return read_tree_sitter(language, data)
    except ImportError as e:  # a grammar wheel missing from this install
        return CodeFile(language, data.count(b"\n") + 1, (), (), error=f"no parser: {e.name}")
