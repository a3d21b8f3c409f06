"""text: a memory body's sections and the text its vector encodes — pure string rules,
imported by the memory files (ncx.memory.file) and by the search cache's build, which reads
memories as a source and must not import the memory side's writers (no import circle).
"""

from __future__ import annotations

import re

_SECTION = re.compile(r"^##[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def body_sections(body: str) -> dict[str, str]:
    """`## Name` sections of a memory body, keyed by lowercased name."""
    out: dict[str, str] = {}
    matches = list(_SECTION.finditer(body))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        out[m.group(1).strip().lower()] = body[m.end() : end].strip()
    return out


def memory_embed_text(body: str) -> str:
    """What a memory's vector encodes: Learning and Context, not the derived Related list."""
    sections = body_sections(body)
    if not sections:
        return body.strip()
    parts = [sections.get("learning", ""), sections.get("context", "")]
    return "\n\n".join(p for p in parts if p)
