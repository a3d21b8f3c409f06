"""Large-tree benchmark (issue 13): what ncx costs on a tree of ~40,000 chunks, hooks included.

How the tree is built (`build_tree`): a fresh git repo at WORKDIR/tree (outside any repo) holds
the markdown doc trees of five shared data sets, `bench-data/<set>/corpus/all/`, for
SETS = raydocs, repo-rust-lang-rfcs, repo-pydantic-pydantic-ai, repo-fastapi-en,
repo-cisagov-manage.get.gov, once verbatim under `copy1/<set>/` and once more under
`copy2/<set>/` with every ASCII letter of the body ROT13-ed (a doc's leading frontmatter block is
kept as is). The cipher copy has the same headings, code fences, sizes and token counts as the
original but shares no text with it, so git can neither dedupe nor delta it against copy1 and
the footprint numbers stay honest. Both copies (3,498 docs, 34 MB) give 40,772 chunks
(`--copies 1` gives about 20,000). Three small code files (`src/app.py`, `src/util.py`,
`pyproject.toml`) make a code-only commit possible. Everything is committed with --no-verify.

Then, in one run: floors (A: `python -c "import numpy"` with the ncx venv's python; B: a
code-only `git commit -am` under a pre-commit config whose only hook is `true`), the first
`ncx init` + `ncx sync`, the footprint of committing `.neocortex/` (`git gc --prune=now`, then
`git count-objects -v` before and after), code-only and one-doc commits through the real
`pre-commit` tool with the README's hooks (a `repo: local` config, `language: system`, the
entries, pass_filenames, always_run, require_serial and stages copied from
.pre-commit-hooks.yaml, `ncx` replaced by `--ncx`), a cold and a warm `ncx assemble` in a fresh
`git clone`, `ncx check` and `ncx status`. Times are wall clock of fresh processes: median, min
and max of `--runs` runs (the first sync and the footprint are single runs). Every command has a
timeout; a failure is recorded in its row, never fatal.

    python benchmarks/large_tree.py --ncx /tmp/ncx-before/bin/ncx --shared /work/shared \
        --workdir /tmp/ncx-large --runs 3 --json-out benchmarks/results/large_tree_before.json
    ... --reuse      # keep WORKDIR/tree: skip the build, first sync and footprint (taken from
                     # WORKDIR/state.json) and reset the tree to the `bench-base` tag instead

`pre-commit` is taken from the ncx executable's folder, else from PATH.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common import as_installed  # (and no measured process compiles ncx: common's note)

SETS = [
    "raydocs",
    "repo-rust-lang-rfcs",
    "repo-pydantic-pydantic-ai",
    "repo-fastapi-en",
    "repo-cisagov-manage.get.gov",
]
EDIT_SET = "repo-rust-lang-rfcs"  # the one-doc commits edit rfcs under copy1/
TASK = "make the borrow checker accept two-phase borrows for method calls"
BASE_TAG = "bench-base"
FLOOR_CONFIG = ".pre-commit-floor.yaml"
NCX_CONFIG = ".pre-commit-config.yaml"
HOOK_IDS = ("ncx-sync", "ncx-check")  # what the README's example config enables
HOOK_KEYS = ("name", "entry", "pass_filenames", "always_run", "require_serial", "stages", "files")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
CODE_FILES = {
    "src/app.py": 'def main() -> None:\n    print("hello")\n\n\nCOUNTER = 0\n',
    "src/util.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
    "pyproject.toml": '[project]\nname = "bench-app"\nversion = "0.0.1"\n',
}


@dataclass
class Run:
    seconds: float | None  # None: timed out
    rc: int | None
    stdout: str
    stderr: str


@dataclass
class Row:
    what: str
    times: list[float] = field(default_factory=list)
    floor: str = ""  # "A" or "B": which floor the ratio is against
    notes: str = ""
    attempts: int = 0
    errors: list[str] = field(default_factory=list)

    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None


class Bench:
    """Holds the environment every command runs under and the rows measured so far."""

    def __init__(self, ncx: str, timeout: float, home: Path) -> None:
        self.ncx = ncx
        self.timeout = timeout
        bindir = str(Path(ncx).parent)
        # the hooks and `pre-commit` must resolve to the measured venv, not to whatever is on PATH
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("NCX_")},
            **GIT_ENV,
            "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
            "PRE_COMMIT_HOME": str(home),  # keep pre-commit's cache out of the user's home
            "PRE_COMMIT_COLOR": "never",
        }
        self.python = venv_python(ncx)
        self.pre_commit = shutil.which("pre-commit", path=bindir) or shutil.which("pre-commit")
        self.rows: list[Row] = []
        self.facts: dict[str, object] = {}

    def run(
        self, cmd: Sequence[str], cwd: Path, timeout: float | None = None, stdin: str | None = None
    ) -> Run:
        t = time.perf_counter()
        try:
            p = subprocess.run(
                list(cmd),
                cwd=cwd,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=timeout or self.timeout,
                input=stdin,
            )
        except subprocess.TimeoutExpired as e:
            return Run(None, None, _text(e.stdout), _text(e.stderr))
        return Run(time.perf_counter() - t, p.returncode, p.stdout, p.stderr)

    def must(self, cmd: Sequence[str], cwd: Path, timeout: float | None = None) -> str:
        """Set-up step (not measured): a failure here makes the rest meaningless, so stop."""
        r = self.run(cmd, cwd, timeout)
        if r.rc != 0:
            sys.exit(f"set-up failed: {shlex.join(cmd)} (rc {r.rc})\n{r.stderr[-2000:]}")
        return r.stdout

    def git(self, root: Path, *args: str, timeout: float | None = None) -> str:
        return self.must(["git", "-C", str(root), *args], root, timeout)

    def measure(
        self,
        what: str,
        runs: int,
        once: Callable[[int], Run],
        expect: tuple[int, ...] = (0,),
        floor: str = "",
    ) -> Row:
        """Time `once(i)` `runs` times; a timeout or an unexpected exit code is an error."""
        row = Row(what, floor=floor)
        for i in range(runs):
            r = once(i)
            row.attempts += 1
            if r.seconds is None:
                row.errors.append(f"run {i}: timed out after {self.timeout:.0f} s")
            elif r.rc not in expect:
                tail = (r.stderr.strip() or r.stdout.strip())[-300:]
                row.errors.append(f"run {i}: exit {r.rc}: {tail}")
            else:
                row.times.append(r.seconds)
        self.rows.append(row)
        print(f"  {what}: {fmt_s(row.median())} ({len(row.times)}/{runs} ok)", file=sys.stderr)
        return row


def _text(b: str | bytes | None) -> str:
    return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")


def venv_python(ncx: str) -> str:
    """The interpreter of the ncx install: its venv sibling, else the script's shebang."""
    sibling = Path(ncx).parent / "python"
    if sibling.exists():
        return str(sibling)
    first = Path(ncx).read_text(errors="replace").splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable


def fmt_s(s: float | None) -> str:
    if s is None:
        return "failed"
    return f"{s * 1000:.0f} ms" if s < 10 else f"{s:.1f} s"


# ---------------------------------------------------------------- the tree


def rot13_body(text: str) -> str:
    """ROT13 every ASCII letter after a leading frontmatter block (kept so it stays valid YAML)."""
    head = ""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            head, text = text[: end + 5], text[end + 5 :]
    return head + codecs.encode(text, "rot13")


def copy_set(src: Path, dest: Path, cipher: bool) -> int:
    n = 0
    for f in sorted(src.rglob("*")):
        if not f.is_file():
            continue
        out = dest / f.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        if cipher and f.suffix in (".md", ".markdown"):
            out.write_text(rot13_body(f.read_text(encoding="utf-8")), encoding="utf-8")
        else:
            shutil.copyfile(f, out)
        n += 1
    return n


def build_tree(
    b: Bench, shared: Path, root: Path, sets: Sequence[str], copies: int
) -> dict[str, object]:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    files = 0
    for c in range(1, copies + 1):
        for s in sets:
            src = shared / "bench-data" / s / "corpus" / "all"
            if not src.is_dir():
                sys.exit(f"data set not found: {src} (pass --shared)")
            files += copy_set(src, root / f"copy{c}" / s, cipher=c > 1)
    for rel, text in CODE_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    b.git(root, "init", "-q", "-b", "main")
    # no background `gc --auto` after the big commits: it would race the measured gc and steal
    # a core from the timings; packing is done explicitly in packed_bytes()
    b.git(root, "config", "gc.auto", "0")
    b.git(root, "add", "-A")
    b.git(root, "commit", "-q", "--no-verify", "-m", "docs + code", timeout=900)
    docs = [p for p in root.rglob("*") if p.suffix in (".md", ".markdown")]
    return {
        "doc_files": len(docs),
        "doc_bytes": sum(p.stat().st_size for p in docs),
        "files": files + len(CODE_FILES),
        "copies": copies,
        "sets": list(sets),
    }


def packed_bytes(b: Bench, root: Path) -> int:
    """Bytes of a fully packed, pruned repo (reflogs expired so dead objects do not count)."""
    b.git(root, "reflog", "expire", "--expire=now", "--all")
    b.git(root, "gc", "-q", "--prune=now", timeout=1800)
    out = b.git(root, "count-objects", "-v")
    kv = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return (int(kv["size-pack"]) + int(kv["size"])) * 1024


TOKENS_RE = re.compile(r"^tokens: (\d+)$", re.M)
LINES_RE = re.compile(r"^lines: (\d+)$", re.M)


def chunk_heads(text: str) -> list[str]:
    """The frontmatter of each chunk in a chunk file's text: the blocks of a doc's file
    (format 2: each head's `lines` says how many lines follow it), or the one head of a
    format-1 per-chunk file. Self-contained, so the benchmark reads trees of older ncx too."""
    heads, pos = [], 0
    while text.startswith("---\n", pos):
        end = text.find("\n---\n", pos + 3)
        if end < 0:
            break
        head = text[pos : end + 1]
        heads.append(head)
        m = LINES_RE.search(head)
        if m is None:  # format 1: one chunk per file
            break
        pos = end + 5
        for _ in range(int(m.group(1))):
            pos = text.find("\n", pos) + 1
            if pos == 0:
                return heads
    return heads


def chunk_stats(root: Path) -> dict[str, int]:
    """Files and bytes under .neocortex/ (cache excluded: it is ignored), chunk tokens summed."""
    nc = root / ".neocortex"
    files = [p for p in nc.rglob("*") if p.is_file() and "cache" not in p.relative_to(nc).parts]
    tokens = 0
    for p in files:
        if p.suffix == ".md" and "chunks" in p.relative_to(nc).parts:
            for head in chunk_heads(p.read_text(encoding="utf-8", errors="replace")):
                m = TOKENS_RE.search(head)
                tokens += int(m.group(1)) if m else 0
    return {
        "neocortex_files": len(files),
        "neocortex_bytes": sum(p.stat().st_size for p in files),
        "chunk_tokens": tokens,
    }


def first_sync(b: Bench, root: Path) -> dict[str, object]:
    """ncx init + the first ncx sync (single runs: they only ever happen once), then footprint."""
    st: dict[str, object] = {}
    init = b.run([b.ncx, "init"], root)
    st["init_s"], st["init_rc"] = init.seconds, init.rc
    sync = b.run([b.ncx, "sync", "--json"], root, timeout=max(b.timeout, 1800))
    st["sync_s"], st["sync_rc"] = sync.seconds, sync.rc
    try:
        rep = json.loads(sync.stdout)
        st.update({k: rep[k] for k in ("docs", "chunks", "problems", "written")})
        for k in ("problems", "written"):
            st[k] = len(st[k]) if isinstance(st[k], list) else st[k]
    except (ValueError, KeyError):
        st["sync_error"] = (sync.stderr or sync.stdout)[-500:]
    st.update(chunk_stats(root))
    st["pack_before"] = packed_bytes(b, root)
    b.git(root, "add", "-A", timeout=900)
    b.git(root, "commit", "-q", "--no-verify", "-m", "ncx init + sync", timeout=900)
    st["files_added"] = len(b.git(root, "diff", "--name-only", "HEAD~1", "HEAD").splitlines())
    st["pack_after"] = packed_bytes(b, root)
    return st


def warm_up(b: Bench, root: Path) -> dict[str, object]:
    """Untimed for the table: a no-change sync (rebuilds the sync state if missing) and a first
    query (builds the index cache), so every measured step sees the warm cache a user has."""
    sync = b.run([b.ncx, "sync", "--json"], root, timeout=max(b.timeout, 1800))
    try:
        written = len(json.loads(sync.stdout).get("written", []))
    except ValueError:
        written = -1
    # --batch: a one-query retrieve on a tree with no cache would answer from the quick
    # search and build the cache in the background, overlapping the timed steps.
    query = b.run(
        [b.ncx, "retrieve", "--batch", "--k", "1"],
        root,
        timeout=max(b.timeout, 1800),
        stdin='{"qid": 1, "query": "warm the cache"}\n',
    )
    return {
        "warm_sync_s": sync.seconds,
        "warm_sync_rc": sync.rc,
        "warm_sync_written": written,
        "warm_query_s": query.seconds,
        "warm_query_rc": query.rc,
    }


# ---------------------------------------------------------------- pre-commit


def hook_defs(hooks_yaml: Path) -> dict[str, dict[str, str]]:
    """The flat `key: value` fields of each hook in .pre-commit-hooks.yaml (no YAML dependency)."""
    hooks: dict[str, dict[str, str]] = {}
    cur: dict[str, str] | None = None
    for line in hooks_yaml.read_text().splitlines():
        if line.startswith("- id:"):
            cur = hooks.setdefault(line.split(":", 1)[1].strip(), {})
        elif cur is not None and line.startswith("  ") and ":" in line:
            k, v = line.strip().split(":", 1)
            cur[k] = v.strip()
    return hooks


def ncx_config(hooks_yaml: Path, ncx: str) -> str:
    defs = hook_defs(hooks_yaml)
    lines = ["repos:", "- repo: local", "  hooks:"]
    for hid in HOOK_IDS:
        d = defs[hid]
        lines += [f"  - id: {hid}", "    language: system"]
        for k in HOOK_KEYS:
            if k not in d:
                continue
            v = d[k]
            if k == "entry":  # `ncx hook sync` -> the measured executable
                v = shlex.join([ncx, *shlex.split(v)[1:]]) if v.startswith("ncx ") else v
                v = json.dumps(v)  # quoted: the path may hold YAML-special characters
            lines.append(f"    {k}: {v}")
    return "\n".join(lines) + "\n"


FLOOR_YAML = (
    "repos:\n- repo: local\n  hooks:\n"
    "  - id: floor\n    name: floor (true)\n    entry: 'true'\n    language: system\n"
    "    always_run: true\n    pass_filenames: false\n"
)


def install_configs(b: Bench, root: Path, hooks_yaml: Path) -> None:
    (root / NCX_CONFIG).write_text(ncx_config(hooks_yaml, b.ncx))
    (root / FLOOR_CONFIG).write_text(FLOOR_YAML)
    b.git(root, "add", NCX_CONFIG, FLOOR_CONFIG)
    b.git(root, "commit", "-q", "--no-verify", "-m", "pre-commit configs")


def use_config(b: Bench, root: Path, config: str) -> None:
    """Point .git/hooks/pre-commit at one config; one untimed run warms pre-commit's store."""
    if not b.pre_commit:
        sys.exit("pre-commit not found next to --ncx nor on PATH")
    b.must([b.pre_commit, "install", "-f", "-c", config], root)
    b.run([b.pre_commit, "run", "-c", config, "--hook-stage", "pre-commit"], root)


def code_commit(b: Bench, root: Path, tag: str) -> Callable[[int], Run]:
    def once(i: int) -> Run:
        app = root / "src" / "app.py"
        app.write_text(app.read_text() + f"COUNTER += {i}  # {tag}\n")
        return b.run(["git", "commit", "-q", "-am", f"code {tag} {i}"], root)

    return once


def edit_section(doc: Path, tag: str) -> None:
    """Append a sentence to one prose line of the doc's second section (one section changes)."""
    lines = doc.read_text(encoding="utf-8").splitlines(keepends=True)
    fence, headings = False, 0
    for n, line in enumerate(lines):
        s = line.strip()
        if s.startswith(("```", "~~~")):
            fence = not fence
        elif not fence and s.startswith("#"):
            headings += 1
        elif not fence and headings >= 2 and s and s[0].isalpha():
            lines[n] = line.rstrip("\n") + f" Benchmark edit {tag}.\n"
            doc.write_text("".join(lines), encoding="utf-8")
            return
    doc.write_text("".join(lines) + f"\nBenchmark edit {tag}.\n", encoding="utf-8")


def thin_pack_bytes(b: Bench, root: Path) -> int:
    """Bytes of the thin pack a push of HEAD would send (objects new in HEAD, deltas allowed)."""
    r = subprocess.run(
        ["git", "pack-objects", "--revs", "--thin", "--stdout", "-q"],
        cwd=root,
        input=b"HEAD\n^HEAD~1\n",
        capture_output=True,
        env=b.env,
        timeout=300,
    )
    return len(r.stdout)


def doc_commits(b: Bench, root: Path, runs: int, nonce: str) -> dict[str, object]:
    """Per run: edit one section of one doc, stage it, commit (hook writes and fails), stage
    .neocortex, commit again, then ask a question. The attempts and the query (the first
    after the change: it brings the search cache up to date) are timed."""
    docs = sorted((root / "copy1" / EDIT_SET / "text").glob("*.md"))
    docs = docs or sorted((root / "copy1").rglob("*.md"))  # --sets without rfcs
    first = Row("one-doc commit, 1st attempt (hook writes chunks, fails)", floor="B")
    second = Row("one-doc commit, 2nd attempt (after git add .neocortex)", floor="B")
    query = Row("ncx assemble --budget 4000, first after that commit (cache updated)", floor="A")
    written: list[int] = []
    packs: list[int] = []
    pack0 = packed_bytes(b, root)
    for i in range(runs):
        doc = docs[(17 * i + 5) % len(docs)]  # spread the edits over different docs
        edit_section(doc, f"{nonce} run {i}")
        b.git(root, "add", str(doc.relative_to(root)))
        r1 = b.run(["git", "commit", "-q", "-m", f"doc edit {i}"], root)
        changed = b.git(root, "status", "--porcelain", "--", ".neocortex").splitlines()
        written.append(len(changed))
        _record(first, r1, i, expect_fail=True)
        b.git(root, "add", ".neocortex")
        r2 = b.run(["git", "commit", "-q", "-m", f"doc edit {i}"], root)
        _record(second, r2, i, expect_fail=False)
        if r2.rc == 0:
            packs.append(thin_pack_bytes(b, root))
        else:  # leave a clean tree for the next run whatever happened
            b.run(["git", "commit", "-q", "--no-verify", "-m", f"doc edit {i} (forced)"], root)
        cmd = [b.ncx, "assemble", "--task", TASK, "--budget", "4000"]
        _record(query, b.run(cmd, root), i, expect_fail=False)
    growth = (packed_bytes(b, root) - pack0) / runs
    first.notes = f"files written under .neocortex (median): {_med(written)}"
    second.notes = (
        f"packed repo growth per commit (gc): {growth / 1024:.1f} KiB; "
        f"thin push pack (median): {_med(packs) / 1024:.1f} KiB"
    )
    b.rows += [first, second, query]
    for row in (first, second, query):
        print(f"  {row.what}: {fmt_s(row.median())}", file=sys.stderr)
    return {"files_written": written, "thin_pack_bytes": packs, "gc_growth_per_commit": growth}


def _f(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) else None


def _med(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def _record(row: Row, r: Run, i: int, expect_fail: bool) -> None:
    row.attempts += 1
    if r.seconds is None:
        row.errors.append(f"run {i}: timed out")
    elif (r.rc != 0) != expect_fail:
        want = "to fail" if expect_fail else "to succeed"
        row.errors.append(f"run {i}: expected {want}, exit {r.rc}: {(r.stderr or r.stdout)[-300:]}")
        row.times.append(r.seconds)  # still a commit attempt: keep its time, flag it
    else:
        row.times.append(r.seconds)


# ---------------------------------------------------------------- assemble in a fresh clone


def clone_assemble(b: Bench, root: Path, runs: int) -> None:
    """A fresh clone has no search cache: its first assemble builds it and answers from it
    (docs/decisions.md §44); the cache file's appearance is timed from the command's start
    too, and anything still running is let finish before the warm run, so no build overlaps
    a timing."""
    cold = Row(
        "ncx assemble --budget 4000, fresh clone (builds the cache, then answers)", floor="A"
    )
    ready = Row("search cache file written, from the first assemble's start")
    warm = Row("ncx assemble --budget 4000, same clone again (warm cache)", floor="A")
    cmd = [b.ncx, "assemble", "--task", TASK, "--budget", "4000"]
    for i in range(runs):
        with tempfile.TemporaryDirectory(prefix="ncx-clone-") as tmp:
            clone = Path(tmp) / "clone"
            b.must(["git", "clone", "-q", str(root), str(clone)], Path(tmp), timeout=1800)
            start = time.monotonic()
            _record(cold, b.run(cmd, clone), i, expect_fail=False)
            ready.attempts += 1
            cache = clone / ".neocortex" / "cache" / "index.npz"
            while not cache.exists() and time.monotonic() - start < b.timeout:
                time.sleep(0.05)
            if cache.exists():
                ready.times.append(time.monotonic() - start)
            else:
                ready.errors.append(f"run {i}: no cache after {b.timeout:.0f} s")
            time.sleep(1.0)  # the builder exits after its rename
            _record(warm, b.run(cmd, clone), i, expect_fail=False)
    b.rows += [cold, ready, warm]
    for row in (cold, ready, warm):
        print(f"  {row.what}: {fmt_s(row.median())}", file=sys.stderr)


# ---------------------------------------------------------------- report


def ratio(row: Row, floors: dict[str, float | None]) -> str:
    f = floors.get(row.floor)
    m = row.median()
    return f"{m / f:.1f}x {row.floor}" if f and m else ""


def render(b: Bench, floors: dict[str, float | None]) -> str:
    out = [
        "| step | median | min | max | ok/runs | vs floor | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in b.rows:
        lo = fmt_s(min(row.times)) if row.times else ""
        hi = fmt_s(max(row.times)) if row.times else ""
        notes = "; ".join([row.notes, *row.errors]) if row.errors else row.notes
        out.append(
            f"| {row.what} | {fmt_s(row.median())} | {lo} | {hi} | "
            f"{len(row.times)}/{row.attempts} | {ratio(row, floors)} | "
            f"{notes.replace('|', '/').replace(chr(10), ' ')} |"
        )
    return "\n".join(out)


def footprint_lines(st: dict[str, object]) -> list[str]:
    def num(key: str) -> float:
        v = st.get(key)
        return float(v) if isinstance(v, (int, float)) else 0.0

    tokens = num("chunk_tokens") or 1.0
    added = num("pack_after") - num("pack_before")
    sync_s = st.get("sync_s")
    return [
        f"- tree: {st.get('doc_files')} docs ({num('doc_bytes') / 1e6:.1f} MB) in "
        f"{st.get('copies')} copies of {', '.join(map(str, st.get('sets') or []))}; first sync: {st.get('docs')} docs, "
        f"{st.get('chunks')} chunks, {st.get('problems')} problems",
        f"- ncx init: {num('init_s') * 1000:.0f} ms (exit {st.get('init_rc')}); first ncx sync: "
        f"{fmt_s(sync_s if isinstance(sync_s, float) else None)} (exit {st.get('sync_rc')})",
        f"- .neocortex/: {st.get('neocortex_files')} files, {num('neocortex_bytes') / 1e6:.1f} MB "
        f"on disk (cache excluded); its commit added {st.get('files_added')} files",
        f"- packed .git (gc --prune=now): {num('pack_before') / 1e6:.1f} MB before, "
        f"{num('pack_after') / 1e6:.1f} MB after (+{added / 1e6:.1f} MB); doc tokens = sum of "
        f"`tokens:` in chunk frontmatter = {tokens:,.0f} (chunk overlaps counted twice); "
        f"per 1,000 doc tokens: {num('files_added') * 1000 / tokens:.2f} files, "
        f"{added * 1000 / tokens / 1024:.2f} KiB packed",
    ]


def main() -> None:
    here = Path(__file__).resolve()
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--ncx", default=shutil.which("ncx"), help="the ncx executable to measure")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir", type=Path, help="keep the tree here (default: a temp dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse WORKDIR/tree if it is complete")
    ap.add_argument("--copies", type=int, default=2, help="copies of the doc sets (2: ~40k chunks)")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated data sets")
    ap.add_argument(
        "--shared",
        type=Path,
        default=Path(os.environ.get("NCX_SHARED", here.parents[2] / "shared")),
    )
    ap.add_argument("--hooks-yaml", type=Path, default=here.parents[1] / ".pre-commit-hooks.yaml")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per measured command")
    ap.add_argument("--json-out", type=Path)
    ap.add_argument(
        "--hooks-only",
        action="store_true",
        help="measure the floors and the commits only (no check, status or fresh clone)",
    )
    args = ap.parse_args()
    if not args.ncx:
        sys.exit("pass --ncx PATH")
    ncx = str(Path(args.ncx).absolute())
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="ncx-large-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    root, state_file = workdir / "tree", workdir / "state.json"
    b = Bench(ncx, args.timeout, workdir / "pre-commit-home")
    as_installed(b.python)
    t0, load = time.time(), os.getloadavg()[0]

    reused = args.reuse and state_file.exists() and (root / ".git").exists()
    if reused:
        st = json.loads(state_file.read_text())
        b.git(root, "reset", "-q", "--hard", BASE_TAG)
        # -x too: .neocortex/cache describes the tree as the last run left it, not bench-base;
        # warm_up() below rebuilds it (ncx trusts that cache: a stale one hides stale chunks)
        b.git(root, "clean", "-qfdx")
        if (root / NCX_CONFIG).read_text() != ncx_config(args.hooks_yaml, ncx):
            # The hooks run the ncx measured now, not the one the tree was built with.
            install_configs(b, root, args.hooks_yaml)
            b.git(root, "tag", "-f", BASE_TAG)
        print(f"reusing {root} (built {st.get('built_at')})", file=sys.stderr)
    else:
        print(f"building the tree in {root} ...", file=sys.stderr)
        st = {
            **build_tree(b, args.shared, root, args.sets.split(","), args.copies),
            "built_at": time.ctime(),
        }
        st["build_s"] = time.time() - t0
        print("ncx init + first sync + footprint ...", file=sys.stderr)
        st.update(first_sync(b, root))
        install_configs(b, root, args.hooks_yaml)
        b.git(root, "tag", "-f", BASE_TAG)
        state_file.write_text(json.dumps(st, indent=1))

    warm = warm_up(b, root)
    print(f"warm-up: {warm}", file=sys.stderr)
    print("measuring ...", file=sys.stderr)
    runs = args.runs
    fa = b.measure(
        'floor A: python -c "import numpy" (ncx venv)',
        runs,
        lambda i: b.run([b.python, "-c", "import numpy"], root),
    )
    use_config(b, root, FLOOR_CONFIG)
    fb = b.measure(
        "floor B: code-only commit, bare `true` hook", runs, code_commit(b, root, "floor")
    )
    use_config(b, root, NCX_CONFIG)
    b.measure(
        "code-only commit, ncx-sync + ncx-check hooks", runs, code_commit(b, root, "ncx"), floor="B"
    )
    doc = doc_commits(b, root, runs, nonce=f"{t0:.0f}")
    if not args.hooks_only:
        b.measure("ncx check (full)", runs, lambda i: b.run([b.ncx, "check"], root), expect=(0, 1))
        b.measure("ncx status", runs, lambda i: b.run([b.ncx, "status"], root), floor="A")
        clone_assemble(b, root, runs)

    floors = {"A": fa.median(), "B": fb.median()}
    header = [
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
        f"; load average at start {load:.2f}, at end {os.getloadavg()[0]:.2f} (other processes "
        f"on the machine inflate every row; floors are measured in the same run); ncx: {ncx}; "
        f"runs: {runs}"
        + ("; tree reused (build, first sync and footprint from its first run)" if reused else ""),
        "",
        *footprint_lines(st),
        f"- warm-up before the table (untimed there): ncx sync with nothing to do "
        f"{fmt_s(_f(warm['warm_sync_s']))} ({warm['warm_sync_written']} files written), "
        f"first ncx retrieve (builds the index cache) {fmt_s(_f(warm['warm_query_s']))}",
        "",
    ]
    text = "\n".join([*header, render(b, floors), ""])
    print(text)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(
            json.dumps(
                {
                    "ncx": ncx,
                    "runs": runs,
                    "reused": reused,
                    "tree": st,
                    "warm_up": warm,
                    "floors": floors,
                    "doc_commits": doc,
                    "wall_s": time.time() - t0,
                    "rows": [
                        {
                            "what": r.what,
                            "times": r.times,
                            "median": r.median(),
                            "floor": r.floor,
                            "ratio": ratio(r, floors),
                            "notes": r.notes,
                            "errors": r.errors,
                        }
                        for r in b.rows
                    ],
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
