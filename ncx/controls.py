"""controls: the one place text is made safe to print where a terminal may read it.

Docs, memories, prompts and paths are hostile input: an `ESC ] 52` in a committed doc, shown
by a hook or an MCP answer, writes the user's clipboard; a `CSI 2 J` clears the screen; a
C1 control (U+009B) starts a sequence without an ESC. The CLI edge (ncx.cli.app), the agent
hooks and the MCP tools all print through `strip_controls`. Pure.
"""

from __future__ import annotations

import re

# What a terminal would act on instead of print: CSI (`ESC [ ... m`, cursor moves, screen
# clears), OSC (`ESC ] ... BEL`: window titles, hyperlinks, clipboard writes), DCS/PM/APC
# strings, other two-byte escapes, and the C0/C1 control characters (tab and newline stay).
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"
    r"|\x1b.?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def strip_controls(text: str) -> str:
    """`text` without terminal controls; newlines and tabs kept."""
    return _CONTROL.sub("", text) if text else text
