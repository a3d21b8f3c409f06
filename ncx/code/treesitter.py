"""treesitter: JavaScript, TypeScript, Go, Rust and Java read with tree-sitter.

Each language's grammar comes from its own wheel (tree-sitter-javascript, ...), compiled,
so nothing is downloaded or built at run time. One walk per file, with an explicit stack of
frames: a node whose type is a definition of its language opens a symbol (and a frame);
identifier leaves are credited to the innermost open symbol, comment and string leaves give
it words (docs/decisions.md §70).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ncx.code.langs import doc_block_gap
from ncx.code.model import CodeFile, Symbol
from ncx.code.text import MAX_DEPTH, MAX_DOC, collapse, one_line, words_of

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


@dataclass(frozen=True)
class Grammar:
    defs: dict[str, str]  # node type -> symbol kind
    imports: frozenset[str]  # node types whose text is an import
    # declarations that define a function or class only through their value
    # (`const f = () => ...`): the declarator's node type
    bound: frozenset[str] = frozenset()
    bound_values: frozenset[str] = frozenset()
    # a module-level value made by a call that is handed a function (`export const $ZodEmail
    # = $constructor("$ZodEmail", (inst, def) => {...})`, `const useStore = create((set) =>
    # ...)`): the function is the definition's body (ncx read zod's schemas as their
    # interfaces only, the implementations as the module's loose words)
    bound_calls: frozenset[str] = frozenset()
    # a package-level table (Go's `var methodMap = map[string]methodTyp{...}`): the spec's
    # node type, and the literal values that make it one (a scalar is no definition: §108)
    tables: frozenset[str] = frozenset()
    table_values: frozenset[str] = frozenset()
    # blocks that only name what their members belong to (Rust's `impl Pool { ... }`)
    scopes: frozenset[str] = frozenset()
    # what may stand between a doc comment and its item (Rust's `#[derive(..)]`, `#[inline]`)
    attributes: frozenset[str] = frozenset()
    # an attribute that makes the item it wears test code (Rust's `#[test]`, `#[cfg(test)]`)
    test_attribute: re.Pattern[bytes] | None = None
    test_modules: frozenset[str] = frozenset()  # `mod tests`


_JS_DEFS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "method_definition": "method",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "abstract_method_signature": "method",
    "internal_module": "module",
}
_JS = Grammar(
    defs=_JS_DEFS,
    imports=frozenset({"import_statement"}),
    bound=frozenset({"variable_declarator"}),
    bound_values=frozenset(
        {"arrow_function", "function_expression", "function", "class", "generator_function"}
    ),
    bound_calls=frozenset({"call_expression"}),
)
GRAMMARS: dict[str, Grammar] = {
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "go": Grammar(
        defs={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_spec": "type",
        },
        imports=frozenset({"import_spec"}),
        tables=frozenset({"var_spec"}),  # (a Go const cannot be a composite literal)
        table_values=frozenset({"composite_literal"}),
    ),
    "rust": Grammar(
        defs={
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "struct",
            "trait_item": "trait",
            "mod_item": "module",
            "type_item": "type",
            "macro_definition": "macro",
        },
        imports=frozenset({"use_declaration"}),
        tables=frozenset({"const_item", "static_item"}),
        table_values=frozenset({"array_expression", "struct_expression", "tuple_expression"}),
        scopes=frozenset({"impl_item"}),
        attributes=frozenset({"attribute_item"}),
        # `#[test]`, `#[tokio::test]`, `#[cfg(test)]`, `#[cfg(all(test, unix))]`; not
        # `#[test_case(..)]`'s helpers, nor `#[cfg(not(test))]`
        test_attribute=re.compile(
            rb"#\[\s*(?:(?:[A-Za-z_]\w*::)*test\s*[\](]|cfg\s*\(\s*(?:all\s*\(\s*)?test\b)"
        ),
        test_modules=frozenset({"tests", "test"}),
    ),
    "java": Grammar(
        defs={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "class",
            "annotation_type_declaration": "interface",
            "method_declaration": "method",
            "constructor_declaration": "method",
        },
        imports=frozenset({"import_declaration"}),
    ),
}
_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
_BODY_FIELDS = ("body", "value")


@functools.cache
def _parser(language: str) -> Parser:
    from tree_sitter import Language, Parser

    if language == "javascript":
        import tree_sitter_javascript as mod

        lang: Any = mod.language()
    elif language in ("typescript", "tsx"):
        import tree_sitter_typescript as ts

        lang = ts.language_tsx() if language == "tsx" else ts.language_typescript()
    elif language == "go":
        import tree_sitter_go as go

        lang = go.language()
    elif language == "rust":
        import tree_sitter_rust as rs

        lang = rs.language()
    elif language == "java":
        import tree_sitter_java as jv

        lang = jv.language()
    else:  # pragma: no cover - langs.LANGUAGES and GRAMMARS are one table's two halves
        raise ValueError(language)
    return Parser(Language(lang))


def read_tree_sitter(language: str, source: bytes) -> CodeFile:
    grammar = GRAMMARS[language]
    if b"\r" in source:  # a lone CR ends a line too (ncx.code.text.as_lf); tree-sitter
        source = source.replace(b"\r\n", b"\n").replace(b"\r", b"\n")  # counts "\n" only
    tree = _parser(language).parse(source)
    n_lines = source.count(b"\n") + (0 if source.endswith(b"\n") or not source else 1)
    syms: list[dict[str, Any]] = [
        {
            "name": "",
            "qual": "",
            "kind": "module",
            "node": tree.root_node,
            "uses": {},
            "text": [],
            "depth": 0,
        }
    ]
    tests = [False]  # each symbol's: test code (what a test holds is test code too)
    imports: dict[str, None] = {}
    acts = _actions(language)
    # Depth first, in source order, with one frame per open definition or scope: a node that
    # opens nothing (most of a tree) puts its children on its frame's own list, so the walk
    # makes no record per child (a third of a TypeScript file's reading, before). Named
    # nodes only: the anonymous ones are the grammar's literal tokens (punctuation, keywords),
    # leaves that say nothing, half of a tree's nodes (a TypeScript `string` type keyword was
    # read as a word, for the "string" in its type's name; code index v16).
    frames: list[tuple[list[Node], int, str]] = [([tree.root_node], 0, "")]
    while frames:
        kids, owner, prefix = frames.pop()
        uses, text = syms[owner]["uses"], syms[owner]["text"]
        while kids:
            node = kids.pop()
            t = node.type
            act = acts.get(t) or _classify(grammar, acts, t)
            if act[0]:  # a type that may open a definition or a scope, or an import
                opened = _opened(grammar, node, t, source, syms, tests, owner, prefix)
                if opened is not None:
                    frames.append((kids, owner, prefix))
                    frames.append(opened)
                    break
                if t in grammar.imports:
                    target = node.child_by_field_name("source") or node.child_by_field_name("path")
                    imports[collapse(_text(source, target or node)).strip("\"'`;")] = None
            if node.child_count == 0:
                if act[1] == _USE:
                    uses[_text(source, node)] = None
                elif act[1] == _WORDS:
                    text.append(_text(source, node)[:200])
            elif act[2] == _INTO:
                children = node.named_children
                children.reverse()
                kids += children
            else:  # a comment with children (Rust's doc blocks), a string's fragment
                text.append(_text(source, node)[: 400 if act[2] == _COMMENT else 200])
    symbols = tuple(_symbols(language, syms, tests, source, n_lines))
    return CodeFile(language, n_lines, tuple(imports), symbols)


# What the walk does with a node, by its type: (may it open a definition or a scope, or be
# an import; as a leaf: a use, words or nothing; with children: walked into, or words whole).
_USE, _WORDS = 1, 2
_INTO, _COMMENT, _FRAGMENT = 0, 1, 2
_ACTIONS: dict[str, dict[str, tuple[bool, int, int]]] = {}


def _actions(language: str) -> dict[str, tuple[bool, int, int]]:
    return _ACTIONS.setdefault(language, {})


def _classify(
    grammar: Grammar, acts: dict[str, tuple[bool, int, int]], t: str
) -> tuple[bool, int, int]:
    special = (
        t in grammar.defs
        or t in grammar.bound
        or t in grammar.scopes
        or t in grammar.imports
        or t in grammar.tables
    )
    if t.endswith("identifier"):
        leaf = _USE
    elif t in _COMMENTS or "string" in t:
        leaf = _WORDS
    else:
        leaf = 0
    if t in _COMMENTS:
        inner = _COMMENT
    elif "string" in t and t.endswith(("fragment", "content")):
        inner = _FRAGMENT
    else:
        inner = _INTO
    acts[t] = got = (special, leaf, inner)
    return got


def _opened(
    grammar: Grammar,
    node: Node,
    t: str,
    source: bytes,
    syms: list[dict[str, Any]],
    tests: list[bool],
    owner: int,
    prefix: str,
) -> tuple[list[Node], int, str] | None:
    """The frame a node opens: a scope (Rust's `impl Pool`: its members' prefix), or a
    definition (a new symbol, its children walked without its name); None for neither."""
    kind = grammar.defs.get(t)
    name_node = None
    if kind is not None:
        name_node = node.child_by_field_name("name") or node.child_by_field_name("type")
    elif t in grammar.bound:
        value = node.child_by_field_name("value")
        if value is not None and value.type in grammar.bound_values:
            kind = "class" if value.type == "class" else "function"
            name_node = node.child_by_field_name("name")
        elif (
            value is not None
            and value.type in grammar.bound_calls
            and syms[owner]["kind"] == "module"  # (not a local `const xs = ys.map(...)`)
            and _handed_function(grammar, value) is not None
        ):
            kind = "function"
            name_node = node.child_by_field_name("name")
            if name_node is not None and name_node.type != "identifier":
                name_node = None  # (`const { a, b } = f(() => ...)` names no one thing)
    elif t in grammar.tables and syms[owner]["kind"] == "module":
        value = node.child_by_field_name("value")
        if value is not None and value.type == "expression_list" and value.named_child_count == 1:
            value = value.named_children[0]  # (Go: `var x = ...` holds a list of one)
        if value is not None and value.type == "reference_expression":
            value = value.child_by_field_name("value")  # (Rust: `&["a", "b"]`, the usual table)
        if value is not None and value.type in grammar.table_values:
            kind = "constant"
            name_node = node.child_by_field_name("name")
    if t in grammar.scopes and (target := node.child_by_field_name("type")) is not None:
        scope = _text(source, target).split("<", 1)[0]
        return [c for c in reversed(node.named_children) if c != target], owner, scope
    depth = syms[owner]["depth"]
    if kind is None or name_node is None or depth >= MAX_DEPTH:
        return None
    name = _text(source, name_node)
    in_type = owner and syms[owner]["kind"] in ("class", "trait", "interface", "struct")
    in_scope = prefix and syms[owner]["qual"] != prefix  # an impl block's prefix
    if kind == "function" and (in_type or in_scope):
        kind = "method"
    if t == "method_declaration" and (recv := _receiver(node, source)):
        prefix = recv  # Go: `func (t *T) Get()` is T.Get
    qual = f"{prefix}.{name}" if prefix else name
    syms.append(
        {
            "name": name,
            "qual": qual,
            "kind": kind,
            "node": node,
            "uses": {},
            "text": [],
            "depth": depth + 1,
        }
    )
    tests.append(tests[owner] or _is_test(grammar, node, name, source))
    # the name itself is defined here, not used
    return [c for c in reversed(node.named_children) if c != name_node], len(syms) - 1, qual


def _handed_function(grammar: Grammar, call: Node) -> Node | None:
    """The function a call is handed (`f("name", (x) => ...)`, `create()((set) => ...)`):
    its first argument that is one, or None."""
    args = call.child_by_field_name("arguments")
    if args is None:
        return None
    callee = call.child_by_field_name("function")
    if callee is not None and callee.type == "member_expression":
        prop = callee.child_by_field_name("property")
        if prop is not None and prop.text in _COMPUTING:
            return None  # (`const xs = [1, 2].map((v) => ...)`: a value, not a definition)
    for arg in args.named_children:
        if arg.type in grammar.bound_values:
            return arg
    return None


# array and promise methods: a call of one computes a value from the function it is handed
_COMPUTING = frozenset(
    b"map filter reduce flatMap forEach find some every sort then catch finally".split()
)


def _symbols(
    language: str, syms: list[dict[str, Any]], tests: list[bool], source: bytes, n_lines: int
) -> list[Symbol]:
    out = []
    for i, s in enumerate(syms):
        node = s["node"]
        text = words_of(_strip_comment(" ".join(s["text"])).split())
        if i == 0:
            doc = _module_doc(language, node, source)
            out.append(
                Symbol("", "", "module", 1, max(1, n_lines), "", doc, tuple(s["uses"]), text)
            )
            continue
        out.append(
            Symbol(
                name=s["name"],
                qualname=s["qual"],
                kind=s["kind"],
                start=node.start_point[0] + 1,
                end=node.end_point[0] + 1,
                signature=_signature(node, source),
                doc=_leading_comment(node, source, GRAMMARS[language], gap=doc_block_gap(language)),
                uses=tuple(s["uses"]),
                text=text,
                test=tests[i],
            )
        )
    return out


def _is_test(grammar: Grammar, node: Node, name: str, source: bytes) -> bool:
    """Whether a definition is test code by what it wears (`#[test]`, `#[cfg(test)]` above
    it) or what it is named (`mod tests`)."""
    if grammar.test_attribute is None:
        return False
    if node.type == "mod_item" and name in grammar.test_modules:
        return True
    prev = node.prev_sibling
    while prev is not None and (prev.type in grammar.attributes or prev.type in _COMMENTS):
        if prev.type in grammar.attributes and grammar.test_attribute.match(
            source, prev.start_byte, prev.end_byte
        ):
            return True
        prev = prev.prev_sibling
    return False


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _receiver(node: Node, source: bytes) -> str:
    recv = node.child_by_field_name("receiver")
    if recv is None:
        return ""
    names = [c for c in _leaves(recv) if c.type == "type_identifier"]
    return _text(source, names[0]) if names else ""  # `*FlagBase[T, VC]`: the base type


def _leaves(node: Node) -> list[Node]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.child_count == 0:
            out.append(n)
        stack.extend(reversed(n.children))
    return out


def _signature(node: Node, source: bytes) -> str:
    if node.type == "var_spec":  # a Go table: its first line, with its keyword
        first = source[node.start_byte : node.end_byte].split(b"\n", 1)[0]
        return one_line(f"var {first.decode('utf-8', 'replace')}")
    value = node.child_by_field_name("value")
    if node.type == "variable_declarator" and value is not None:
        # `const f = (x) => ...`: the head runs to the arrow function's body, its `=>` kept
        # (without it `quoteString = escapedArgument` read as an assignment: a new user);
        # `const S = make("S", (inst) => ...)`: to the body of the function it is handed
        handed = _handed_function(_JS, value) if value.type in _JS.bound_calls else None
        body = (handed or value).child_by_field_name("body")
        end = body.start_byte if body is not None else value.end_byte
        return one_line(_head(node, source, end).rstrip(" {\n"))
    if node.type == "type_alias_declaration" and value is not None:
        # `type Handler = (c: Context) => Response`: the alias is its shape, a line or two
        shape = collapse(_head(value, source, value.end_byte))
        if len(shape) > SHAPE_CHARS:
            shape = shape[: SHAPE_CHARS - 1] + "…"
        name = _head(node, source, value.start_byte).rstrip().rstrip("=").rstrip()
        return one_line(f"{name} = {shape}")  # (a union may start on the next line: `=\n  |`)
    body = None
    for f in _BODY_FIELDS:
        if (body := node.child_by_field_name(f)) is not None:
            break
    end = body.start_byte if body is not None else node.end_byte
    head = one_line(_head(node, source, end).rstrip(" {=\n"))
    if node.type == "type_spec" and not head.startswith("type "):
        head = f"type {head}"  # Go's `type` keyword is its declaration's, not the spec's
    return head


SHAPE_CHARS = 160  # of a type alias's right-hand side in its signature


def _head(node: Node, source: bytes, end: int) -> str:
    """node's source up to byte `end` with its comments cut out: on one line, the rest of
    `void setLenient(boolean on) // deprecated` would read as part of the comment."""
    cuts: list[tuple[int, int]] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.start_byte >= end:
            continue
        if n.type in _COMMENTS:
            cuts.append((n.start_byte, n.end_byte))
            continue
        stack.extend(n.children)
    out, at = [], node.start_byte
    for a, z in sorted(cuts):
        out.append(source[at:a])
        at = z
    out.append(source[at:end])
    return b" ".join(out).decode("utf-8", "replace")


def _leading_comment(node: Node, source: bytes, grammar: Grammar, gap: bool = False) -> str:
    """The comments right above a definition (or above the export/decorator wrapping it),
    through the attributes between them (`/// doc` then `#[derive(Debug)]` then the item);
    `gap`: also a `/**` block a blank line above (ncx.code.langs.doc_block_gap)."""
    at = node
    while at.parent is not None and at.parent.type in (
        "export_statement",
        "decorated_definition",
        "variable_declarator",
        "lexical_declaration",
        "variable_declaration",
        "type_declaration",
        "var_declaration",
    ):
        at = at.parent
    got: list[str] = []
    prev = at.prev_sibling
    line = at.start_point[0]
    if (
        prev is not None
        and gap
        and prev.end_point[0] == line - 2
        and source[prev.start_byte : prev.start_byte + 3] == b"/**"
    ):
        line -= 1  # a JSDoc/Javadoc/rustdoc block a blank line above (langs.doc_block_gap)
    while prev is not None and prev.end_point[0] >= line - 1:
        if prev.type in _COMMENTS and not _inner_doc(source, prev):
            got.append(_text(source, prev).rstrip("\n"))
        elif prev.type not in grammar.attributes:
            break
        line = prev.start_point[0]
        prev = prev.prev_sibling
    return _doc_of("\n".join(reversed(got)))


def _inner_doc(source: bytes, node: Node) -> bool:
    """A Rust `//!` or `/*! */` comment: the doc of what holds it, not of the next item."""
    return source[node.start_byte : node.start_byte + 3] in (b"//!", b"/*!")


def _module_doc(language: str, root: Node, source: bytes) -> str:
    """A file's doc: Go's package comment (right above `package x`, not the license header
    at the top), Rust's inner docs (`//!`), else the file's first comment, or the one of its
    leading comments that TSDoc/JSDoc tags as the file's (`@packageDocumentation`)."""
    kids = root.children
    if language == "go":
        clause = next((c for c in kids if c.type == "package_clause"), None)
        return _leading_comment(clause, source, GRAMMARS[language]) if clause else ""
    leading = []
    for c in kids:
        if c.type in _COMMENTS:
            leading.append(c)
        elif c.type not in ("attribute_item", "inner_attribute_item"):
            break
    if language == "rust":
        inner = [_text(source, c).rstrip("\n") for c in leading if _inner_doc(source, c)]
        return _doc_of("\n".join(inner))
    texts = [_text(source, c) for c in leading]
    tagged = [t for t in texts if _FILE_TAG.search(t)]
    return _doc_of((tagged or texts or [""])[0])


# TSDoc/JSDoc tags that mark a comment as the file's own doc
_FILE_TAG = re.compile(r"@(?:packageDocumentation|module|file|fileoverview|overview)\b")
_BLOCK_TAG = re.compile(r"@[A-Za-z]")
_TAG_WITH_PROSE = re.compile(r"@[\w-]+\s+\S+\s+\S")  # `@deprecated use x`, not `@module a`


# Comments for tools, not readers: a linter's or formatter's switch, a coverage tool's, a
# compiler's directive (Go's `//go:generate`), an editor's fold. Never a definition's doc.
_DIRECTIVE = re.compile(
    r"(?:eslint[- :]|eslint$|@ts-(?:ignore|expect-error|nocheck|check)|prettier-ignore"
    r"|(?:istanbul|c8|v8) ignore|biome-ignore|deno-(?:lint|fmt)-ignore|tslint:|jshint "
    r"|go:\w|nolint|lint:ignore|\+build |noinspection|NOSONAR|CHECKSTYLE[: ]|noqa\b"
    r"|type: ?ignore|pylint: ?disable|#(?:end)?region\b|<editor-fold|[#@]__PURE__)"
)
_ASIDE = re.compile(r"(?:TODO|FIXME|XXX|HACK)\b")


def _doc_of(comment: str) -> str:
    """A doc comment's summary: its first paragraph of prose. Tag lines (`@module`,
    `@param x the x`, `@returns`) are not prose: skipped before it, and one ends it; a doc
    of tags alone keeps its first tag that says something (`@deprecated use send()`)."""
    prose: list[str] = []
    tags: list[str] = []
    aside = False  # in a TODO's paragraph
    for s in _strip_comment(comment).splitlines():
        if _DIRECTIVE.match(s) or (aside and s):
            continue  # a tool's directive says nothing of the definition
        if _ASIDE.match(s):
            aside = True  # a note to the maintainers: not what the definition does
            continue
        aside = False
        if _BLOCK_TAG.match(s):
            if prose:
                break
            if _TAG_WITH_PROSE.match(s):
                tags.append(s)
        elif s:
            prose.append(s)
        elif prose:
            break  # the first paragraph
    return collapse(" ".join(prose or tags[:1]))[:MAX_DOC]


def _strip_comment(text: str) -> str:
    out = []
    for line in text.splitlines():
        s = line.strip()
        for mark in ("/**", "/*!", "/*", "*/", "///", "//!", "//", "*"):
            if s.startswith(mark):
                s = s[len(mark) :]
                break
        out.append(s.removesuffix("*/").strip())
    return "\n".join(out)
