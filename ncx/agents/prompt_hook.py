"""agent_hook: the text an agent's hooks add — a frame for a prompt, the wakeup at session start.

Parsing and clipping are pure; `prompt_context` / `session_context` compose the frame. The
deadline and the fail-open exit belong to the CLI edge (cli_agent.py), not here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ncx.config import Config

# Claude Code keeps hook output over 10,000 characters only as a short preview, so the whole
# frame must fit below that, whatever the token budget says.
MAX_CHARS = 9_500
MIN_WORDS = 3  # "yes", "go on", "/compact": no frame, it would only cost tokens
TASK_CHARS = 400  # the agent already has the prompt; the frame only needs its gist
WAKEUP_BUDGET = 600


@dataclass(frozen=True, slots=True)
class HookInput:
    prompt: str
    cwd: Path | None
    event: str


def parse_hook_input(raw: str) -> HookInput:
    """The hook's stdin: Claude Code's JSON ({"prompt", "cwd", "hook_event_name", ...}), or
    plain text taken as the prompt (other agents, or a person trying the hook by hand)."""
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return HookInput(raw.strip(), None, "")
    if not isinstance(data, dict):
        return HookInput(raw.strip(), None, "")
    cwd = data.get("cwd")
    return HookInput(
        str(data.get("prompt") or "").strip(),
        Path(cwd) if isinstance(cwd, str) and cwd else None,
        str(data.get("hook_event_name") or ""),
    )


def wants_frame(prompt: str) -> bool:
    """A prompt worth a frame: a few words, not a slash command."""
    return len(prompt.split()) >= MIN_WORDS and not prompt.lstrip().startswith("/")


def task_line(prompt: str) -> str:
    text = " ".join(prompt.split())
    return text if len(text) <= TASK_CHARS else text[: TASK_CHARS - 1].rsplit(" ", 1)[0] + "…"


def clip(text: str, max_chars: int = MAX_CHARS) -> str:
    """`text` cut at a line boundary to at most `max_chars` characters, saying so."""
    if len(text) <= max_chars:
        return text
    note = f"\n<!-- ncx: cut at {max_chars} characters -->\n"
    head = text[: max_chars - len(note)]
    cut = head.rfind("\n")
    return (head[:cut] if cut > 0 else head) + note


def prompt_context(root: Path, cfg: Config, prompt: str, budget: int) -> str:
    """The frame for a prompt ('' for a prompt not worth one)."""
    if not wants_frame(prompt):
        return ""
    from ncx.query.context import FrameRequest, build_frame

    frame = build_frame(root, cfg, FrameRequest(task=task_line(prompt), budget=budget))
    return clip(frame.markdown)


def session_context(root: Path, cfg: Config, budget: int) -> str:
    from ncx.query.context import wakeup

    return clip(wakeup(root, cfg, min(budget, WAKEUP_BUDGET)))
