"""asciidoc: AsciiDoc (.adoc) -> markdown view, line by line. Pure, stdlib only.

`=`-prefixed titles become headings; `----`/`....` blocks fenced code (in the language of
a `[source,LANG]` line above); `NOTE:` paragraphs and `[NOTE]` blocks a bold label;
header attributes, comments, anchors, includes and images are dropped; cross references
and links read as their text. Other delimited blocks (examples, sidebars, quotes) keep
their content.
"""

from __future__ import annotations

import re

from ncx.sources.view import Line, View, build, fenced, numbered

_TITLE = re.compile(r"^(={1,6})\s+(\S.*?)\s*=*\s*$")
_ATTR = re.compile(r"^:!?[\w-]+!?:(\s.*)?$")
_BLOCK_ATTR = re.compile(r"^\[(.*)\]\s*$")
_MACRO_DROP = re.compile(r"^(include|image|ifdef|ifndef|ifeval|endif|toc)::.*\]\s*$")
_ADMONITION = re.compile(r"^(NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s+(.*)$")
_DELIM = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|/{4,}|\+{4,}|--)\s*$")
_XREF = re.compile(r"<<[^,>]+,\s*([^>]+)>>|<<([^>]+)>>")
_LINK = re.compile(r"(?:xref:|link:)?(?:https?://|\S+?\.adoc|(?<=link:))[^\s\[]*\[([^\]]*)\]")


def read_asciidoc(text: str) -> View:
    return build(_block(numbered(text)))


def _inline(line: str) -> str:
    if "<<" in line:
        line = _XREF.sub(lambda m: (m.group(1) or m.group(2) or "").strip(), line)
    if "[" in line:
        line = _LINK.sub(lambda m: m.group(1), line)
    return line


def _block(lines: list[Line]) -> list[Line]:
    out: list[Line] = []
    n = len(lines)
    i = 0
    lang = ""
    label = ""
    while i < n:
        t, ln = lines[i]
        s = t.strip()
        if not s:
            out.append(("", ln))
            i += 1
            continue
        d = _DELIM.match(s)
        if d:
            fence = d.group(1)
            j = i + 1
            while j < n and lines[j][0].strip() != fence:
                j += 1
            body = lines[i + 1 : j]
            if fence[0] in "-." and fence != "--":
                out.extend(fenced(lang, body, ln))
            elif fence[0] == "/":
                pass  # a comment block
            elif fence[0] == "+":
                out.extend(fenced("", body, ln))  # passthrough: markup as written
            else:
                if label:
                    out.append((f"**{label}:**", ln))
                out.extend(_block(body))
            lang = label = ""
            i = j + 1
            continue
        if s.startswith("//"):
            i += 1
            continue
        m = _TITLE.match(s)
        if m:
            out.append(("#" * len(m.group(1)) + " " + _inline(m.group(2)), ln))
            i += 1
            continue
        if _ATTR.match(s):  # an attribute entry sets a value; it shows nothing
            i += 1
            continue
        b = _BLOCK_ATTR.match(s)
        if b:
            parts = [p.strip() for p in b.group(1).split(",")]
            if parts and parts[0] in ("source", "listing") and len(parts) > 1:
                lang = parts[1]
            elif parts and parts[0] in ("NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"):
                label = parts[0].capitalize()
            i += 1
            continue
        if _MACRO_DROP.match(s):
            i += 1
            continue
        if s.startswith(".") and len(s) > 1 and s[1] not in ". ":
            out.append((f"**{_inline(s[1:])}**", ln))  # a block title
            i += 1
            continue
        a = _ADMONITION.match(s)
        if a:
            out.append((f"**{a.group(1).capitalize()}:** {_inline(a.group(2))}", ln))
            i += 1
            continue
        if label:  # `[NOTE]` over a plain paragraph
            out.append((f"**{label}:**", ln))
            label = ""
        out.append((_inline(t.rstrip()), ln))
        i += 1
    return out
