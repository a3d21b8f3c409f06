"""Three repositories as a new user meets them (issue 28): flask (reST), sqlmodel (MkDocs),
jotai (MDX), ten tasks each written from their docs (benchmarks/three_repos/*.json).

Usage: python benchmarks/three_repos.py CLONES [--sync] [--repos flask,sqlmodel,jotai]
                                        [--frames OUT.json] [--show REPO:N]

CLONES holds one clone per repository, named as the task files are (flask/, sqlmodel/,
jotai/). `--sync` runs `ncx init` and `ncx sync` in each first (what a new user does). Per
repository and per frame size (no --budget: what a user gets; --budget 4000) it reports the
expected section in the frame (n/10), its median rank in `ncx retrieve` (chunks only, k=50;
a miss counts as 51), the frame's mean tokens and items, and how many frame items are of each
filler kind, found by pattern:

- changelog: a changelog or release notes file
- template: an issue/PR/discussion template (.github/ISSUE_TEMPLATE, pull_request_template)
- nothing: a background quote whose words, less headings, are a bare default or version note
  ("Default: ``None``", "**New in version:** 0.7") or fewer than four words
- heading: a heading (or section trail) with badge, image or HTML markup
- ref: a reST/MyST `:ref:` role left raw, or one with no text whose item does not show the
  target's title (the label's words instead)
- doc: a `:doc:` role left raw, or one with no text whose item does not show the target
  document's title (its path's words instead)
- admonition: an item whose last line is an admonition's title, its body cut off
- include: a literal `{* ... *}` include line
- block: a raw pymdownx `///` block line
- empty code: an empty code block (a quote cut at a fence), not a kind issue 28 names
- raw rst: reST markup left in prose (a role, a `<url>`_ link tail), outside code
- html: a line of prose that is only HTML tags (`<div class="termy">`, `<img ...>`), outside
  code and other than an HTML table's rows; issue 28 names HTML in headings only

The ncx that runs is `python -m ncx` of this interpreter with this checkout first on
PYTHONPATH (so a worktree's code is what is measured). Deterministic: the same clones and
code give the same table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPOS = ("flask", "sqlmodel", "jotai")
BUDGETS: tuple[int | None, ...] = (None, 4000)
KINDS = (
    "changelog",
    "template",
    "nothing",
    "heading",
    "ref",
    "doc",
    "admonition",
    "include",
    "block",
    "empty code",
    "raw rst",
    "html",
)
K = 50


def ncx(root: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    env.pop("NCX_TOKEN_BUDGET", None)  # the defaults a user gets
    r = subprocess.run(
        [sys.executable, "-m", "ncx", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if r.returncode != 0:
        sys.exit(f"ncx {' '.join(args)} failed in {root}: {r.stderr.strip()[-2000:]}")
    return r.stdout


# --- matching the expected section -------------------------------------------------------


def norm(heading: str) -> str:
    """A heading's words, lower case: markup (backticks, bold, tags, badges) does not count."""
    h = re.sub(r"<[^>]*>|!\[[^\]]*\]\([^)]*\)", " ", heading)
    return " ".join(re.sub(r"[`*_]", "", h).lower().split())


def is_expected(item: dict[str, Any], task: dict[str, Any], *, also: bool = False) -> bool:
    """The item is the task's section (with `also`, or one of its alternates: a second page
    of the docs that answers it as well)."""
    answers = [task, *task.get("also", [])] if also else [task]
    if item.get("kind") != "chunk":
        return False
    trail = [norm(s) for s in str(item.get("section") or "").split(" > ")]
    return any(item.get("source_path") == a["doc"] and norm(a["section"]) in trail for a in answers)


# --- filler patterns ---------------------------------------------------------------------

_LOG = re.compile(r"(?:^|/)(?:(?i:change[-_ ]?log|changes|release[-_ ]?notes|history|news)[^/]*)$")
_TEMPLATE = re.compile(
    r"(?:^|/)\.github/(?:ISSUE_TEMPLATE|DISCUSSION_TEMPLATE|PULL_REQUEST_TEMPLATE)/"
    r"|(?:^|/)pull_request_template\.md$",
    re.I,
)
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")
_STUB = re.compile(
    r"^\W*(?:default(?:s| value)?|new in(?: version)?|changed in(?: version)?|"
    r"added in(?: version)?|deprecated(?: since)?(?: version)?|version ?(?:added|changed))"
    r"\W*[:\s]\W*[\w.`'\"-]*\W*$",
    re.I,
)
_MARKUP = re.compile(r"<[A-Za-z/][^>]*>|!\[[^\]]*\]\(|shields\.io|badge\.svg", re.I)
_RAW_REF = re.compile(r":ref:`|\{ref\}`")
_RAW_DOC = re.compile(r":doc:`|\{doc\}`")
_BARE_REF = re.compile(r"(?::ref:|\{ref\})`([^`<>]+)`")
_BARE_DOC = re.compile(r"(?::doc:|\{doc\})`([^`<>]+)`")
_ADMONITION_HEAD = re.compile(
    r"^\s*(?:\*\*(?:note|tip|hint|warning|important|caution|attention|danger|error|"
    r"see also|info|check|example|question|details)\b[^*]*\*\*\s*:?|"
    r"(?:!!!|\?\?\?\+?|///|:::)\s*\w+.*|>\s*\[!\w+\])\s*$",
    re.I,
)
_INCLUDE = re.compile(r"^\s*\{\*.*\*\}\s*$", re.M)
_BLOCK = re.compile(r"^\s*///", re.M)
_RAW_RST = re.compile(r"(?::[a-z]+:`)|(?:>`__?(?:\W|$))|(?:^\s*\.\. [a-z-]+::)")
_TAG_ONLY = re.compile(r"^\s*(?:</?[A-Za-z][^>]*>\s*)+$")
# an HTML table's structure: the rows around its cells (data, not page markup)
_TABLE_TAGS = re.compile(r"^\s*(?:</?(?:table|thead|tbody|tfoot|tr)\b[^>]*>\s*)+$", re.I)


def _prose_lines(text: str) -> list[str]:
    out, fence = [], False
    for ln in text.split("\n"):
        if ln.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence:
            out.append(ln)
    return out


_EMPTY_CODE = re.compile(r"(?:^|\n)\s*```[\w+-]*\n\s*```\s*(?:\n|$)")
_RST_LABEL = re.compile(r"^\.\.\s+_([^:`][^:]*):\s*$")
_MYST_LABEL = re.compile(r"^\(([^()\s]+)\)=\s*$")
_ADORN = re.compile(r"^([=\-~`^\"'*+#:.])\1{2,}\s*$")


def _title_after(lines: list[str], i: int) -> str | None:
    """The section title starting at or after lines[i] (reST underline/overline or ATX)."""
    j = i
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j >= len(lines):
        return None
    s = lines[j].strip()
    if _ADORN.match(s) and j + 1 < len(lines):  # overline
        return lines[j + 1].strip()
    if j + 1 < len(lines) and _ADORN.match(lines[j + 1].strip()):
        return s
    m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", s)
    return m.group(1) if m else None


def titles(root: Path, paths: Iterable[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Labels -> the title they point at; doc paths (no suffix, from the repo root) -> their
    first title. What a reader of the built site would see for a bare :ref: or :doc:."""
    labels: dict[str, str] = {}
    docs: dict[str, str] = {}
    for p in paths:
        if not p.endswith((".rst", ".md")):
            continue
        try:
            lines = (root / p).read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            continue
        first = next(
            (t for k in range(len(lines)) if (t := _title_after(lines, k)) is not None), None
        )
        if first:
            docs[p.rsplit(".", 1)[0]] = first
        for k, line in enumerate(lines):
            m = _RST_LABEL.match(line) or _MYST_LABEL.match(line)
            if m:
                t = _title_after(lines, k + 1)
                if t:
                    labels[m.group(1).strip().lower()] = t
    return labels, docs


def _doc_target(source: str, target: str) -> str:
    base = source.rsplit("/", 1)[0] if "/" in source else ""
    if target.startswith("/"):
        # Sphinx: from the source dir; the docs/ folder here
        top = source.split("/", 1)[0] if "/" in source else ""
        return f"{top}/{target.lstrip('/')}" if top else target.lstrip("/")
    parts = (base.split("/") if base else []) + target.split("/")
    out: list[str] = []
    for part in parts:
        if part == "..":
            if out:
                out.pop()
        elif part and part != ".":
            out.append(part)
    return "/".join(out)


def filler(
    item: dict[str, Any], zone: str, root: Path, maps: tuple[dict[str, str], dict[str, str]]
) -> list[str]:
    """The filler kinds one frame item is (usually none)."""
    path = str(item.get("source_path") or "")
    text = str(item.get("text") or "")
    found: list[str] = []
    if _LOG.search(path):
        found.append("changelog")
    if _TEMPLATE.search(path):
        found.append("template")
    if item.get("kind") != "chunk":
        return found
    if zone == "background":
        body = " ".join(
            ln.strip() for ln in text.split("\n") if ln.strip() and not _HEADING_LINE.match(ln)
        )
        if len(re.findall(r"\w+", body)) < 4 or _STUB.match(body):
            found.append("nothing")
    heads = [ln for ln in text.split("\n") if _HEADING_LINE.match(ln)]
    if any(_MARKUP.search(h) for h in [*heads, str(item.get("section") or "")]):
        found.append("heading")
    src = _source_lines(root, path, item)
    labels, docs = maps
    quoted = norm(text)

    def shows_label(m: re.Match[str], title: str | None) -> bool:
        """A bare role of the item's lines quoted as its label's or path's words where the
        target has another title (a passage cites its chunk's lines, not only the ones it
        quotes: the role counts where its words stand beside the words next to it)."""
        words = norm(m.group(1).strip().rstrip("/").rsplit("/", 1)[-1].replace("-", " "))
        words = words.replace("_", " ")
        shown = norm(title or "")
        if not title or shown == words or shown in quoted:
            return False
        return _quotes(src, m, words, quoted)

    if _RAW_REF.search(text) or any(
        shows_label(m, labels.get(m.group(1).strip().lstrip("~").lower()))
        for m in _BARE_REF.finditer(src)
    ):
        found.append("ref")
    if _RAW_DOC.search(text) or any(
        shows_label(m, docs.get(_doc_target(path, m.group(1).strip())))
        for m in _BARE_DOC.finditer(src)
    ):
        found.append("doc")
    last = next((ln for ln in reversed(text.split("\n")) if ln.strip()), "")
    if _ADMONITION_HEAD.match(last):
        found.append("admonition")
    if _INCLUDE.search(text):
        found.append("include")
    if _BLOCK.search(text):
        found.append("block")
    if _EMPTY_CODE.search(text):
        found.append("empty code")
    prose = _prose_lines(text)
    if any(_RAW_RST.search(ln) for ln in prose):
        found.append("raw rst")
    if any(_TAG_ONLY.match(ln) and not _TABLE_TAGS.match(ln) for ln in prose):
        found.append("html")
    return found


def _quotes(src: str, m: re.Match[str], words: str, quoted: str) -> bool:
    """Whether the item's normalized text holds `words` (the role as its label's words) next
    to the two words before or after the role on its line."""
    line_start = src.rfind("\n", 0, m.start()) + 1
    line_end = src.find("\n", m.end())
    before = norm(re.sub(r":\w+:`[^`]*`", " ", src[line_start : m.start()])).split()[-2:]
    after = norm(re.sub(r":\w+:`[^`]*`", " ", src[m.end() : None if line_end < 0 else line_end]))
    padded = f" {quoted} "
    return any(
        f" {' '.join(w)} " in padded
        for w in ([*before, words], [words, *after.split()[:2]])
        if len(w) >= 2
    )


_SOURCES: dict[Path, list[str]] = {}


def _source_lines(root: Path, path: str, item: dict[str, Any]) -> str:
    f = root / path
    if f not in _SOURCES:
        try:
            _SOURCES[f] = f.read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            _SOURCES[f] = []
    lines = _SOURCES[f]
    a, b = int(item.get("start_line") or 1), int(item.get("end_line") or 0)
    return "\n".join(lines[a - 1 : b])


# --- one repository ----------------------------------------------------------------------


def frame_items(frame: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(z["name"], it) for z in frame["zones"] for it in z["items"]]


def measure(root: Path, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    maps = titles(root, tracked)
    batch = "".join(
        json.dumps({"qid": str(i), "query": t["task"], "k": K}) + "\n" for i, t in enumerate(tasks)
    )
    ranks: list[int] = []
    ranks_also: list[int] = []
    for line in ncx(root, "retrieve", "--batch", "--kind", "chunk", stdin=batch).splitlines():
        res = json.loads(line)["results"]
        t = tasks[int(json.loads(line)["qid"])]
        ranks.append(next((r + 1 for r, it in enumerate(res) if is_expected(it, t)), K + 1))
        ranks_also.append(
            next((r + 1 for r, it in enumerate(res) if is_expected(it, t, also=True)), K + 1)
        )
    out: dict[str, Any] = {"ranks": ranks, "ranks_also": ranks_also, "frames": {}}
    for budget in BUDGETS:
        rows = []
        for t in tasks:
            args = ["assemble", "--task", t["task"], "--format", "json"]
            if budget is not None:
                args += ["--budget", str(budget)]
            frame = json.loads(ncx(root, *args))
            items = frame_items(frame)
            kinds: dict[str, int] = {}
            flagged = []
            for zone, it in items:
                for k in filler(it, zone, root, maps):
                    kinds[k] = kinds.get(k, 0) + 1
                    flagged.append({"kind": k, "zone": zone, "id": it.get("id")})
            rows.append(
                {
                    "task": t["task"],
                    "found": any(is_expected(it, t) for _, it in items),
                    "found_also": any(is_expected(it, t, also=True) for _, it in items),
                    "tokens": frame["tokens"],
                    "items": len(items),
                    "filler": kinds,
                    "flagged": flagged,
                    "frame": frame,
                }
            )
        out["frames"][str(budget)] = rows
    return out


def table(results: dict[str, dict[str, Any]]) -> str:
    head = (
        "| repo | budget | expected in frame | (or alternate) | median rank | (or alternate) "
        "| mean tokens | items/frame | " + " | ".join(KINDS) + " |"
    )
    lines = [head, "|" + "---|" * (8 + len(KINDS))]
    for repo, res in results.items():
        for budget, rows in res["frames"].items():
            n = len(rows)
            counts = [sum(r["filler"].get(k, 0) for r in rows) for k in KINDS]
            lines.append(
                f"| {repo} | {'default' if budget == 'None' else budget} "
                f"| {sum(r['found'] for r in rows)}/{n} "
                f"| {sum(r['found_also'] for r in rows)}/{n} "
                f"| {statistics.median(res['ranks']):g} "
                f"| {statistics.median(res['ranks_also']):g} "
                f"| {statistics.mean(r['tokens'] for r in rows):,.0f} "
                f"| {statistics.mean(r['items'] for r in rows):.1f} | "
                + " | ".join(str(c) for c in counts)
                + " |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("clones", type=Path)
    ap.add_argument("--sync", action="store_true", help="ncx init + ncx sync in each first")
    ap.add_argument("--repos", default=",".join(REPOS))
    ap.add_argument("--frames", type=Path, help="write every frame and its flags here (JSON)")
    ap.add_argument("--misses", action="store_true", help="list tasks whose frame misses")
    a = ap.parse_args()
    results: dict[str, dict[str, Any]] = {}
    for repo in a.repos.split(","):
        root = a.clones / repo
        tasks = json.loads((HERE / "three_repos" / f"{repo}.json").read_text())["tasks"]
        if a.sync:
            ncx(root, "init")
            ncx(root, "sync")
        results[repo] = measure(root, tasks)
        if a.misses:
            for b, rows in results[repo]["frames"].items():
                for r, rank in zip(rows, results[repo]["ranks"], strict=True):
                    if not r["found"]:
                        print(f"miss {repo} budget={b} rank={rank}: {r['task']}", file=sys.stderr)
    print(table(results))
    if a.frames:
        a.frames.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
