"""read: one source file's bytes -> its CodeFile, by language. Pure.

Every reader and the frame's quoted bodies see the same text (`source_text`): decoded as the
language's own tools decode it, its line breaks made "\\n", so a line number means one line
everywhere (ncx.code.text.LINE_BREAKS)."""

from __future__ import annotations

from ncx.code.model import CodeFile
from ncx.code.text import as_lf


def read_code(language: str, data: bytes) -> CodeFile:
    from ncx.code.guard import guarded

    text = source_text(language, data)
    return guarded(_read(language, text), text)


def _read(language: str, text: str) -> CodeFile:
    if language == "python":
        from ncx.code.python import read_python

        return read_python(text)
    from ncx.code.treesitter import read_tree_sitter

    try:
        return read_tree_sitter(language, text.encode("utf-8", "surrogatepass"))
    except ImportError as e:  # a grammar wheel missing from this install
        return CodeFile(language, text.count("\n") + 1, (), (), error=f"no parser: {e.name}")


def source_text(language: str, data: bytes) -> str:
    """A source file's text: Python's by its BOM or `coding:` cookie (PEP 263, as the
    interpreter reads it), the others' by a UTF-8 or UTF-16 BOM (javac and tsc read both),
    else UTF-8; undecodable bytes replaced, line breaks made "\\n"."""
    if language == "python":
        import io
        import tokenize

        try:
            encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
            text = data.decode(encoding, "replace")
        except (SyntaxError, LookupError):  # a cookie naming no codec, or contradicting a BOM
            text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", "replace")  # the BOM says the byte order, and goes
    else:
        text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    return as_lf(text)
