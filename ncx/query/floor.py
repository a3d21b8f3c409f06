"""floor: which doc sections enter a frame beside the code it found. Pure.

A section's evidence is its score over the best section's, times its confidence (the
idf-weighted share of the task's terms it holds). Where the task found code, sections are
held to the code lead's evidence, the docs' best to half of it, and a release's notes and the
project's process docs stay out (docs/decisions.md §40, §107, §109).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ncx.query.lexical import terms as lexical_terms

if TYPE_CHECKING:
    from ncx.query.assembler import Item

# A doc section's evidence is its score over the best section's, times its confidence (the
# idf-weighted share of the task's terms it holds): the scale fuse.interleave merges docs
# and code on. A section enters a frame only at DOC_FLOOR or more, and where the task found
# code, at DOCS_VS_CODE of the code lead's evidence or more (a doc that is about the task as
# much as the code is; a section sharing a word or two with an issue is not). Chosen on the
# docs and code development sets together (benchmarks/code_frames.py, frame_suite.py;
# docs/decisions.md §40).
DOC_FLOOR = 0.0
DOCS_VS_CODE = 1.0
# ... and, where the task found code, a section that holds under DOCS_WITH_CODE of the
# task's terms (its confidence, idf-weighted) could be held back whatever its rank: off (0).
# At 0.3 (WEAK_BELOW) gold share rose on every code set, but read by hand it dropped as many
# useful sections (the settings a new option joins, a readme's Retry-After rules: 13-26% of an
# issue's many terms) as filler (12-18%): decisions.md §66.
DOCS_WITH_CODE = 0.0
# ... but the docs' best section (of the most evidence) is held to BEST_DOC_VS_FLOOR of that
# floor: a file holds more of a task's words than any section can (CODE_IN_LIST), and on
# three new users' 30 frames the best section held back was the answer in 10 of the 13 frames
# the floor left without docs (the settings a how-to issue asks about, the readme section of
# the API a commit changes: decisions.md §107).
BEST_DOC_VS_FLOOR = 0.5


def evidence_floor(
    items: list[Item], code_ev: float, with_code: bool = False, asked: frozenset[str] = frozenset()
) -> tuple[list[Item], list[Item]]:
    """The sections above the evidence floor, in rank order, and those below it; `asked`:
    the task's terms (a process doc the task names is not held back)."""
    if not items:
        return [], []
    best = items[0].score or 1.0
    floor = max(DOC_FLOOR, DOCS_VS_CODE * code_ev)
    evidence = [it.score / best * it.confidence for it in items]
    held = [_held_beside_code(it, asked) if with_code else "" for it in items]
    # the docs' best is the section of the most evidence (not the first by score: uvicorn's
    # server-header issue, HTTP Headers first at 0.16, the settings that answer it at 0.18)
    top = max((k for k in range(len(items)) if not held[k]), key=evidence.__getitem__, default=-1)
    keep: list[Item] = []
    below: list[Item] = []
    for k, it in enumerate(items):
        ev = evidence[k]
        if held[k]:
            below.append(dataclasses.replace(it, why=held[k]))
        elif k == top and with_code and floor > ev >= BEST_DOC_VS_FLOOR * floor:
            why = f"the docs' best: evidence {ev:.2f}, {ev / floor:.0%} of the code lead's"
            keep.append(dataclasses.replace(it, why=why))
        elif with_code and it.confidence < DOCS_WITH_CODE:
            why = (
                f"holds {it.confidence:.0%} of the task's terms, under the "
                f"{DOCS_WITH_CODE:.0%} a section needs beside code"
            )
            below.append(dataclasses.replace(it, why=why))
        elif ev >= floor:
            keep.append(it)
        else:
            why = f"evidence {ev:.2f}, under the floor {floor:.2f} the code lead sets"
            below.append(dataclasses.replace(it, why=why))
    return keep, below


def _held_beside_code(it: Item, asked: frozenset[str]) -> str:
    """Why a section stays out of a frame that found code whatever its evidence, or "": a
    release's notes are history, not how the code works (changelogs are not indexed by
    default, ncx.sources.log_reason; requests' updates.rst led 5 of 40 commit frames), and a
    process doc is how the project is run, unless the task names it."""
    if is_release_note(it.source_path, it.section):
        return "a release's notes, beside code"
    if is_process_doc(it.source_path) and not _named_by(it.source_path, asked):
        return "a process doc (how to contribute, conduct, templates), beside code"
    return ""


def is_release_note(path: str, section: Sequence[str]) -> bool:
    """A release's entry: under a release heading ("0.4.1 (2011-05-22)") in a log, or under
    a heading that names the history (requests' docs/community/updates.rst: "Release and
    Version History > Release History > 0.4.1 (2011-05-22)")."""
    if not any(RELEASE.match(t.strip()) for t in section):
        return False
    return is_log(path) or any(_HISTORY_HEADING.search(t) for t in section)


def is_process_doc(path: str) -> bool:
    """How the project is run, not how its code works: the contributing guide, the code of
    conduct, the security policy, the forge's templates (`.github/`). jotai's CONTRIBUTING
    "Committing" section led a commit frame by its `fix(react):` prefix (issue 37: no code of
    conduct, PR template or changelog-like item on a code task)."""
    return bool(_PROCESS_DOC.search(path))


# at the root, in docs/ or in .github/ (where the forges look for them), not a product page
# deeper down (Django's docs/topics/security.txt), and never a README (a `.github/README.md`
# is the repository's front page)
_PROCESS_DOC = re.compile(
    r"^(?:docs/|\.github/)?(?i:CONTRIBUTING|CODE[_-]OF[_-]CONDUCT|SECURITY|SUPPORT)(?:\.[^/]*)?$"
    r"|^\.github/(?!(?i:readme)(?:\.[^/]*)?$)"
)


def _named_by(path: str, asked: frozenset[str]) -> bool:
    """The task names the doc ("update CONTRIBUTING for the new test command"): every word
    of its name (a task saying "code" names no code of conduct)."""
    words = set(lexical_terms(path.rsplit("/", 1)[-1].split(".", 1)[0].replace("_", " ")))
    return bool(words) and words <= asked


_HISTORY_HEADING = re.compile(r"\b(?:release|change\s*log|changes|history|news)\b", re.I)


def is_log(path: str) -> bool:
    """A changelog's name: a log of releases, or one by another name (history, news)."""
    return bool(_LOG.search(path))


_LOG = re.compile(
    r"(?:^|/)(?:change[-_ ]?log|changes|history|news|releases?|release[-_ ]notes)[^/]*$", re.I
)


# A release's heading: a version (`0.95.1`, `v2.0.0b7`, `[1.2.0] - …`), a date, Unreleased.
RELEASE = re.compile(
    r"^\[?v?\d+\.\d+[\w.+-]*\]?\s*(?:$|[-–—(:{])|^\d{4}-\d{2}-\d{2}\b|^unreleased\b", re.I
)
