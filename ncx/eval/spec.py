"""spec: the questions file, `.neocortex/evals.yaml` (format: docs/formats.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ncx.errors import NcxError
from ncx.layout import NCX_DIR

EVALS = "evals.yaml"
EVALS_PATH = f"{NCX_DIR}/{EVALS}"
_KEYS = ("doc", "section", "memory", "file", "symbol")
_QUESTION_KEYS = ("id", "ask", "top", "expect")
_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,79}$")


class EvalsError(NcxError):
    """The questions file cannot be read as questions."""


@dataclass(frozen=True)
class Expect:
    """What must answer a question: a doc (and one of its headings), a memory, or a source
    file (and a symbol in it, for code units)."""

    doc: str = ""
    section: str = ""
    memory: str = ""
    file: str = ""
    symbol: str = ""

    def label(self) -> str:
        if self.memory:
            return self.memory
        path = self.doc or self.file
        tail = self.section or self.symbol
        return f"{path}#{tail}" if path and tail else path or tail


@dataclass(frozen=True)
class Question:
    id: str
    ask: str
    expect: tuple[Expect, ...]
    top: int = 0  # 0: in the frame is enough; N: each answer also within the first N results


@dataclass(frozen=True)
class Evals:
    questions: tuple[Question, ...]


def load_evals(root: Path, path: Path) -> Evals:
    """The questions of `path` (an EvalsError naming the question and the fix otherwise).
    Read by the docs' rule (ncx.paths.read_repo_file): a committed `evals.yaml` that is a
    link to `~/.aws/credentials`, `/dev/zero` or a FIFO is refused, never read."""
    from ncx.paths import read_repo_file
    from ncx.store import MAX_YAML_CHARS

    try:
        data = read_repo_file(root, path, limit=MAX_YAML_CHARS, what="a questions file")
    except FileNotFoundError:
        raise EvalsError(
            "no questions file", path=path, hint="write one (`ncx eval --suggest > FILE` starts it)"
        ) from None
    except OSError as exc:
        raise EvalsError(f"cannot be read: {exc.strerror}", path=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalsError("not UTF-8", path=path, hint="re-save it as UTF-8") from None
    return parse_evals(text, path)


def _yaml_error(exc: Exception) -> str:
    """A YAML error by its place and problem only: never the lines it quotes (the file may
    be a link to a file that is not the project's, or hold a credential)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None)
    return f"not YAML{where}: {str(problem or type(exc).__name__)[:100]}"


def parse_evals(text: str, path: Path | str = EVALS_PATH) -> Evals:
    from ncx.store import _yaml, yaml_problem

    if (why := yaml_problem(text)) is not None:
        raise EvalsError(why, path=path, hint="fix the YAML")
    try:
        data = _yaml().safe_load(text)
    except Exception as exc:  # yaml's own errors carry the line
        raise EvalsError(_yaml_error(exc), path=path, hint="fix the YAML") from None
    items = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise EvalsError(
            "no `questions:` list", path=path, hint="see docs/formats.md, `.neocortex/evals.yaml`"
        )
    out: list[Question] = []
    seen: set[str] = set()
    for n, item in enumerate(items, 1):
        q = _question(item, n, path)
        if q.id in seen:
            raise EvalsError(f"question {q.id!r} appears twice", path=path, hint="rename one")
        seen.add(q.id)
        out.append(q)
    return Evals(tuple(out))


def _question(item: Any, n: int, path: Path | str) -> Question:
    label = [f"question {n}"]  # and its id, once that is known to be one

    def bad(why: str) -> EvalsError:
        return EvalsError(
            f"{label[0]}: {why}", path=path, hint="see docs/formats.md, `.neocortex/evals.yaml`"
        )

    if not isinstance(item, dict):
        raise bad("is not a mapping (id, ask, expect)")
    qid, ask = item.get("id", f"q{n}"), item.get("ask")
    if not isinstance(qid, str) or not _ID.match(qid):
        raise bad(f"id {qid!r} is not a short name (letters, digits, `.`, `-`, `_`)")
    label[0] = f"question {n} ({qid})"
    for key in item:
        if key not in _QUESTION_KEYS:  # (a typo such as `tops:` would be ignored silently)
            raise bad(f"unknown key {_key_text(key, _QUESTION_KEYS)}")
    if not isinstance(ask, str) or not ask.strip():
        raise bad("`ask:` (the question or task) is missing")
    top = item.get("top", 0)
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise bad(f"`top: {top!r}` is not a whole number of results")
    raw = item.get("expect")
    raw = [raw] if isinstance(raw, dict) else raw
    if not isinstance(raw, list) or not raw:
        raise bad("`expect:` (what must answer it) is missing")
    expects = []
    for e in raw:
        if not isinstance(e, dict) or not e:
            raise bad(f"expect {e!r}: use the keys {', '.join(_KEYS)}")
        for key in e:
            if key not in _KEYS:
                raise bad(
                    f"expect has the unknown key {_key_text(key, _KEYS)}; "
                    f"use the keys {', '.join(_KEYS)}"
                )
        if any(not isinstance(v, str) or not v.strip() for v in e.values()):
            raise bad(f"expect {e!r}: every value is a non-empty string")
        x = Expect(**{k: str(v).strip() for k, v in e.items()})
        if sum(bool(v) for v in (x.doc, x.memory, x.file or x.symbol)) != 1:
            raise bad(f"expect {e!r}: give one of doc, memory, file (or symbol)")
        if x.section and not x.doc:
            raise bad(f"expect {e!r}: section goes with doc")
        expects.append(x)
    return Question(qid, " ".join(ask.split()), tuple(expects), top)


def _key_text(key: Any, known: tuple[str, ...]) -> str:
    """`key` as an error names it, with the known key it is nearest to."""
    import difflib

    shown = f"`{str(key)[:40]}:`"
    near = difflib.get_close_matches(str(key).lower(), known, n=1, cutoff=0.6)
    return f"{shown} (did you mean `{near[0]}:`?)" if near else shown
