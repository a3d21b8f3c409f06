"""python: a Python source file read with the standard library's ast (exact, no wheel).

One pass over the tree with an explicit stack (a deeply nested expression must not exhaust
the interpreter's recursion): every name and attribute is credited to the innermost
definition that holds it, so a class's uses are its own lines, not all of its methods'.
Comments are not in the ast; they are read from the lines, cheaply, because a commit message
often says in words what only a comment says in the code.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ncx.code.model import CodeFile, Symbol
from ncx.code.text import (
    MAX_DEPTH,
    MAX_DOC,
    as_lf,
    first_paragraph,
    one_line,
    words_of,
)

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMMENT = re.compile(r"#\s*(.*)$")


@dataclass
class _Open:
    """A definition being read: what the walk credits to it."""

    node: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    qual: str
    parent: int = 0
    depth: int = 0  # definitions it is nested in
    uses: dict[str, None] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)


def read_python(source: str) -> CodeFile:
    source = as_lf(source)
    lines = source.split("\n")  # Python's own line breaks (ncx.code.text.as_lf)
    if lines[-1] == "":
        lines.pop()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        # Not Python this interpreter reads (a Python 2 file, a template): the file is still
        # a unit, found by its path and words, with no definitions.
        return CodeFile("python", len(lines), (), (_module(lines, "", ()),), error=_why(e))
    symbols = [_Open(tree, "")]
    imports: dict[str, None] = {}
    stack: list[tuple[ast.AST, int, str]] = [(c, 0, "") for c in reversed(tree.body)]
    while stack:
        node, owner, prefix = stack.pop()
        if isinstance(node, _DEFS) and symbols[owner].depth < MAX_DEPTH:
            qual = f"{prefix}.{node.name}" if prefix else node.name
            symbols.append(_Open(node, qual, owner, symbols[owner].depth + 1))
            me = len(symbols) - 1
            for d in node.decorator_list:  # decorators are used by the definition they wear
                stack.append((d, me, prefix))
            if isinstance(node, ast.ClassDef):
                for b in (*node.bases, *node.keywords):
                    stack.append((b, me, prefix))
            else:
                stack.append((node.args, me, qual))
                if node.returns is not None:
                    stack.append((node.returns, me, qual))
            body = node.body
            if _docstring_node(node) is not None:
                body = body[1:]
            stack.extend((c, me, qual) for c in reversed(body))
            continue
        uses = symbols[owner].uses
        if isinstance(node, ast.Name):
            uses[node.id] = None
        elif isinstance(node, ast.Attribute):
            uses[node.attr] = None
        elif isinstance(node, ast.arg):
            uses[node.arg] = None
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value and len(node.value) < 200:
                symbols[owner].text.append(node.value)
            continue
        elif isinstance(node, ast.Import):
            for a in node.names:
                imports[a.name] = None
                uses[(a.asname or a.name).split(".")[0]] = None
        elif isinstance(node, ast.ImportFrom):
            mod = "." * node.level + (node.module or "")
            imports[mod] = None
            for a in node.names:
                uses[a.asname or a.name] = None
        stack.extend((c, owner, prefix) for c in reversed(list(ast.iter_child_nodes(node))))
    comments = _comments(lines)
    return CodeFile(
        "python",
        len(lines),
        tuple(imports),
        tuple(_symbols(symbols, lines, comments)),
    )


def _symbols(raw: list[_Open], lines: list[str], comments: dict[int, str]) -> list[Symbol]:
    # each comment line goes to the innermost definition holding it (ranges nest; a later
    # definition in `raw` is never an ancestor of an earlier one)
    spans = [_span(r.node, len(lines)) for r in raw]
    owner = [0] * (len(lines) + 2)
    for i, (a, b) in enumerate(spans[1:], start=1):
        owner[a : b + 1] = [i] * (b - a + 1)
    words: list[list[str]] = [[] for _ in raw]
    for ln, c in comments.items():
        words[owner[ln] if ln < len(owner) else 0].append(c)
    out = []
    for i, r in enumerate(raw):
        node = r.node
        text = words_of([*r.text, *words[i]])
        uses = tuple(r.uses)
        if isinstance(node, ast.Module):
            out.append(_module(lines, _doc(node), uses, text))
            continue
        a, b = spans[i]
        doc = _doc(node) or _leading_comment(lines, a)
        parent = raw[r.parent].node
        if isinstance(node, ast.ClassDef):
            kind = "class"
        else:
            kind = "method" if isinstance(parent, ast.ClassDef) else "function"
        out.append(
            Symbol(
                name=node.name,
                qualname=r.qual,
                kind=kind,
                start=a,
                end=b,
                signature=_signature(node, lines),
                doc=doc,
                uses=uses,
                text=text,
            )
        )
    return out


def _module(lines: list[str], doc: str, uses: tuple[str, ...], text: str = "") -> Symbol:
    return Symbol("", "", "module", 1, max(1, len(lines)), "", doc, uses, text)


def _span(node: ast.AST, n_lines: int) -> tuple[int, int]:
    if isinstance(node, ast.Module):
        return 1, max(1, n_lines)
    assert isinstance(node, _DEFS)
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return start, node.end_lineno or node.lineno


def _docstring_node(node: ast.AST) -> ast.Constant | None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr):
        v = body[0].value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return v
    return None


def _doc(node: ast.AST) -> str:
    d = _docstring_node(node)
    return first_paragraph(str(d.value))[:MAX_DOC] if d is not None else ""


def _signature(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, lines: list[str]
) -> str:
    """The definition's head as written, from `def`/`class` to the colon, on one line."""
    first = node.lineno
    body0 = node.body[0]
    doc_or_body = body0.lineno
    if doc_or_body == first:  # `def f(): return 1` on one line
        # (col_offset counts UTF-8 bytes)
        line = lines[first - 1].encode("utf-8", "surrogatepass")
        head = line[: body0.col_offset].decode("utf-8", "replace")
    else:
        head = "\n".join(lines[first - 1 : doc_or_body - 1])
    return one_line(head.rstrip().removesuffix(":")) if head else node.name


def _leading_comment(lines: list[str], start: int) -> str:
    got: list[str] = []
    i = start - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        got.append(lines[i].lstrip().lstrip("#").strip())
        i -= 1
    return first_paragraph(" ".join(reversed(got)))[:MAX_DOC] if got else ""


def _comments(lines: list[str]) -> dict[int, str]:
    """Line number -> comment text, for lines whose `#` is not inside a string (a line
    holding a quote before the `#` is skipped: a cheap guess, not a tokenizer)."""
    out: dict[int, str] = {}
    for i, line in enumerate(lines, start=1):
        h = line.find("#")
        if h < 0 or "'" in line[:h] or '"' in line[:h]:
            continue
        if m := _COMMENT.match(line, h):
            if (c := m.group(1).strip()) and not c.startswith(("!", "type:", "noqa", "pragma")):
                out[i] = c
    return out


def _why(e: BaseException) -> str:
    if isinstance(e, SyntaxError):
        return f"syntax error at line {e.lineno}: {e.msg}"
    return type(e).__name__
