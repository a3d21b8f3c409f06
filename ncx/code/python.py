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
from typing import Any

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
_TABLES = (ast.Assign, ast.AnnAssign)
_Node = (
    ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign
)
_COMMENT = re.compile(r"#\s*(.*)$")
# A module's named table (`HTTP_PROTOCOLS = {...}`): where a change to a table lands, and
# what a task names (uvicorn's LOGGING_CONFIG, the answer to an access-log question, was the
# module's loose words). Only a dict, list, set or tuple: with scalars (`DEFAULT_PORT =
# 8000`) file recall fell on three sets (decisions.md §108).
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_TABLE_VALUES = (ast.Dict, ast.List, ast.Set, ast.Tuple)


@dataclass
class _Open:
    """A definition being read: what the walk credits to it."""

    node: _Node
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
    _walk(tree.body, 0, "", symbols, imports)
    comments = _comments(lines)
    return CodeFile(
        "python",
        len(lines),
        tuple(imports),
        tuple(_symbols(symbols, lines, comments)),
    )


# Fields that never hold a node (identifiers, numbers, flags) or hold only nodes the walk
# ignores (`ctx`: Load/Store/Del, `op`/`ops`: operators; Import's aliases are read by their
# owner): skipping them keeps the walk to the nodes that matter (a third of a tree's nodes
# are ctx). Not `name`: Python 3.12's `type X = ...` (TypeAlias) holds a Name there.
_SKIP_FIELDS = frozenset(
    ("ctx", "op", "ops", "id", "attr", "arg", "asname", "module", "level", "names", "kind",
     "conversion", "is_async", "simple", "tag", "type_comment", "kwd_attrs", "type_ignores")
)  # fmt: skip
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(t: type) -> tuple[str, ...]:
    got = _FIELDS.get(t)
    if got is None:
        fields: tuple[str, ...] = getattr(t, "_fields", ())
        got = _FIELDS[t] = tuple(f for f in reversed(fields) if f not in _SKIP_FIELDS)
    return got


def _walk(
    nodes: list[Any], owner: int, prefix: str, symbols: list[_Open], imports: dict[str, None]
) -> None:
    """Credit every name under `nodes` (walked in order, depth first, each node before its
    children) to `owner`, opening a symbol for each definition met. A definition's parts are
    walked at once, in the order the earlier one-stack walk met them (its body, then its
    returns and arguments, or its keywords and bases, last first, then its decorators, last
    first), so the uses and texts come out in the same order and the index bytes are the same
    (tests/test_code_build.py). One recursion per open definition (at most MAX_DEPTH deep);
    inside one, an explicit stack."""
    me = symbols[owner]
    uses, text = me.uses, me.text
    stack = list(reversed(nodes))
    pop, push, extend = stack.pop, stack.append, stack.extend
    deep = me.depth >= MAX_DEPTH
    name_t, attr_t, const_t, arg_t = ast.Name, ast.Attribute, ast.Constant, ast.arg
    func_t, afunc_t, class_t = ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef
    import_t, from_t = ast.Import, ast.ImportFrom
    assign_t, ann_t = ast.Assign, ast.AnnAssign
    at_module = owner == 0
    while stack:
        node = pop()
        t = type(node)
        if t is name_t:
            uses[node.id] = None
            continue
        if t is attr_t:
            uses[node.attr] = None
            push(node.value)
            continue
        if t is const_t:
            v = node.value
            if type(v) is str and v and len(v) < 200:
                text.append(v)
            continue
        if t is arg_t:
            uses[node.arg] = None
            if node.annotation is not None:
                push(node.annotation)
            continue
        if (t is func_t or t is afunc_t) and _is_overload(node):
            # A typing stub of the definition that follows it (`@overload`): not a
            # definition to open. Its names count for the definition around it; the
            # implementation is the unit (a stub, short, outranked it: itsdangerous'
            # `TimestampSigner.unsign` led frames with its first `@t.overload`).
            extend(reversed([*node.decorator_list, node.args]))
            if node.returns is not None:
                push(node.returns)
            continue
        if (t is func_t or t is afunc_t or t is class_t) and not deep:
            qual = f"{prefix}.{node.name}" if prefix else node.name
            symbols.append(_Open(node, qual, owner, me.depth + 1))
            body = node.body
            if _docstring_node(node) is not None:
                body = body[1:]
            parts = list(body)
            if t is class_t:
                parts += reversed(node.keywords)
                parts += reversed(node.bases)
            else:
                if node.returns is not None:
                    parts.append(node.returns)
                parts.append(node.args)
            parts += reversed(node.decorator_list)
            _walk(parts, len(symbols) - 1, qual, symbols, imports)
            continue
        if at_module and (t is assign_t or t is ann_t) and (name := _constant(node)):
            symbols.append(_Open(node, name, owner, me.depth + 1))
            parts = [node.value] if node.value is not None else []
            if t is ann_t:
                parts.append(node.annotation)
            _walk(parts, len(symbols) - 1, name, symbols, imports)
            continue
        if t is import_t:
            for a in node.names:
                imports[a.name] = None
                uses[(a.asname or a.name).split(".")[0]] = None
            continue
        if t is from_t:
            imports["." * node.level + (node.module or "")] = None
            for a in node.names:
                uses[a.asname or a.name] = None
            continue
        # (what is not a node, a None in Dict.keys among them, has no fields: popped, it
        # does nothing, which is cheaper than sorting it out here)
        for f in _FIELDS.get(t) or _child_fields(t):
            v = getattr(node, f, None)
            if type(v) is list:
                extend(reversed(v))
            elif v is not None:
                push(v)


def _constant(node: ast.Assign | ast.AnnAssign) -> str:
    """The name of the module-level table this assignment defines, or "": one target, a
    bare upper-case name, given a dict, list, set or tuple (`X: int` alone declares
    nothing, `X = 5` is no table)."""
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1:
            return ""
        target = node.targets[0]
    else:
        if node.value is None:
            return ""
        target = node.target
    if type(target) is not ast.Name or not _CONSTANT.fullmatch(target.id):
        return ""
    if type(node.value) not in _TABLE_VALUES:
        return ""
    return target.id


def _is_overload(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated `@overload`, `@typing.overload` or `@t.overload`."""
    for d in node.decorator_list:
        if (isinstance(d, ast.Name) and d.id == "overload") or (
            isinstance(d, ast.Attribute) and d.attr == "overload"
        ):
            return True
    return False


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
        if isinstance(node, _TABLES):
            out.append(
                Symbol(
                    name=r.qual,
                    qualname=r.qual,
                    kind="constant",
                    start=a,
                    end=b,
                    signature=one_line(lines[a - 1]),  # (its first line: `X = {`)
                    doc=_leading_comment(lines, a),
                    uses=uses,
                    text=text,
                )
            )
            continue
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
    if isinstance(node, _TABLES):
        return node.lineno, node.end_lineno or node.lineno
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
    # (a decorated first statement starts at its decorator: `class C:` then `@overload`
    # over its first method read as the class's head `class C: @overload`)
    doc_or_body = min([body0.lineno, *(d.lineno for d in getattr(body0, "decorator_list", ()))])
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
