"""directives: what a reST or MyST directive becomes in the markdown view. Pure.

One table for both syntaxes: code directives become fenced code, admonitions a bold label
and their text, navigation and media (toctree, image, include) are dropped, and anything
else keeps its title and its content: an unknown directive never loses text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ncx.sources.view import Line, dedent, fenced, trim_blank

CODE = frozenset(
    """code-block code sourcecode testcode testoutput doctest ipython jupyter-execute
    code-cell literal-block""".split()
)
# Diagrams and formulas: kept whole as code in their own language, never reflowed as prose.
NAMED_CODE = frozenset("mermaid graphviz plantuml math".split())
DROP = frozenset(
    """toctree contents include literalinclude image raw index meta highlight testsetup
    testcleanup currentmodule module default-role role sectnum header footer title youtube
    tabularcolumns program-output video iframe bibliography""".split()
)
ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "hint": "Hint",
    "warning": "Warning",
    "important": "Important",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
    "todo": "To do",
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
}
# Their argument is a condition or a layout, not a title a reader wants.
NO_TITLE = frozenset("only container grid tab-set ifconfig rst-class class div".split())
API = re.compile(
    r"^(?:py:|auto)?(?:function|class|method|attribute|module|data|exception|decorator)$"
)
_OPTION = re.compile(r"^:[\w-]+:")

Render = Callable[[list[Line]], list[Line]]
# A line that starts a paragraph of prose (not code, a list, a table, a quote or a heading).
_BLOCK_LEAD = re.compile(r"^\s*(?:[-*+|>#]|\d+[.)]\s|`{3}|~{3}|\.\.\s|:\w)")


def _runs_on(head: str, first: str) -> bool:
    """Whether an admonition's label can open its first line: a bare label ("**Note:**"),
    and a first line of prose."""
    return head.endswith(":**") and bool(first.strip()) and not _BLOCK_LEAD.match(first)


def split_options(body: list[Line]) -> list[Line]:
    """The directive's content without its leading `:option: value` lines (or `---` yaml)."""
    body = dedent(body)
    i = 0
    if body and body[0][0].strip() == "---":  # MyST yaml options block
        j = next((k for k in range(1, len(body)) if body[k][0].strip() == "---"), None)
        if j is not None:
            return body[j + 1 :]
    while i < len(body) and _OPTION.match(body[i][0]):
        i += 1
        while i < len(body) and body[i][0].startswith((" ", "\t")):
            i += 1  # an option's value continued on indented lines
    return body[i:]


def directive(
    name: str, arg: str, body: list[Line], at: int, render: Render, inline: Callable[[str], str]
) -> list[Line]:
    """View lines for one directive; `at` is its line in the source, `render` the content."""
    name = name.lower()
    short = name.rsplit(":", 1)[-1]
    if short in DROP or name in DROP:
        return []
    content = split_options(body)
    if short in CODE or name in CODE:
        lang = arg.split()[0] if arg and short != "testoutput" else ""
        if short in ("ipython", "doctest", "jupyter-execute", "testcode") and not lang:
            lang = "python"
        return fenced(lang, content, at)
    if short in NAMED_CODE:
        return fenced(short, content or [(arg, at)], at)
    inner = trim_blank(render(content)) if content else []
    if short in ADMONITIONS:
        label = ADMONITIONS[short]
        head = f"**{label}:** {inline(arg)}".rstrip() if arg else f"**{label}:**"
    elif short == "admonition":
        head = f"**{inline(arg)}**" if arg else ""
    elif API.match(short):
        head = f"`{arg}`" if arg else ""
    elif arg and short not in NO_TITLE and name not in NO_TITLE:
        head = f"**{inline(arg)}**"
    else:
        head = ""
    out: list[Line] = [("", at)]
    if head and inner and _runs_on(head, inner[0][0]):
        # The label opens its first paragraph ("**Note:** Do not ..."), as Sphinx's text
        # builder writes it: on a line of its own a chunk or a quoted passage could end on
        # the label and leave its text to the next one (issue 28).
        out.append((f"{head} {inner[0][0].lstrip()}", at))
        inner = inner[1:]
    elif head:
        out.append((head, at))
        if inner:
            out.append(("", at))
    out.extend(inner)
    out.append(("", (inner[-1][1] if inner else at)))
    return out if head or inner else []
