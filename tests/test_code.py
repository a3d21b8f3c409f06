"""Code as a source: the readers (ast, tree-sitter), the blob-keyed store, ranking, the CLI and
the frame's "Code to Open" zone, through real git repositories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import commit_all, git, json_lines, ncx, write

from ncx.code.python import read_python
from ncx.code.rank import is_test_path, named_identifiers
from ncx.code.read import read_code
from ncx.code.store import git_blob_id

SESSION = '''"""HTTP sessions: connection pooling and retries."""

import time
from .adapters import HTTPAdapter


class Session:
    """A session keeps cookies and a connection pool across requests."""

    def __init__(self):
        self.adapters = {"https://": HTTPAdapter()}

    # Send one prepared request and follow redirects.
    @staticmethod
    def send(request, *, timeout=None, allow_redirects=True):
        """Send a prepared request. Retries are the adapter's job."""
        adapter = self.get_adapter(request.url)
        if timeout is None:
            raise ValueError("a timeout is required")
        return adapter.send(request, timeout=timeout)

    # The adapter for a URL.
    def get_adapter(self, url):
        return self.adapters["https://"]


def backoff_delay(attempt):
    # exponential back-off between retries, capped at one minute
    return min(60, 2 ** attempt)
'''

ADAPTERS = '''class HTTPAdapter:
    """The transport: pools connections per host and retries failed connects."""

    def send(self, request, timeout=None):
        return pool_manager(request).urlopen(request.method, request.url, timeout=timeout)


def pool_manager(request):
    return request
'''


def test_python_reader_keeps_definitions_lines_signatures_docs_and_uses() -> None:
    f = read_python(SESSION)
    by = {s.qualname: s for s in f.symbols}
    assert f.symbols[0].kind == "module" and f.symbols[0].doc.startswith("HTTP sessions")
    assert set(by) == {
        "",
        "Session",
        "Session.__init__",
        "Session.send",
        "Session.get_adapter",
        "backoff_delay",
    }
    send = by["Session.send"]
    assert send.kind == "method" and (send.start, send.end) == (14, 20)  # the decorator is in
    assert send.signature == "def send(request, *, timeout=None, allow_redirects=True)"
    assert send.doc == "Send a prepared request. Retries are the adapter's job."
    assert {"get_adapter", "url", "ValueError", "timeout"} <= set(send.uses)
    assert "a timeout is required" in send.text
    assert by["Session.get_adapter"].doc == "The adapter for a URL."  # its leading comment
    assert "exponential back-off" in by["backoff_delay"].text  # a comment in the body
    assert by["Session"].kind == "class" and "get_adapter" not in by["Session"].uses
    assert f.imports == ("time", ".adapters")


OVERLOADED = """import typing as t
from typing import overload


class Signer:
    @t.overload
    def unsign(self, value: str, stamp: t.Literal[True] = True) -> tuple[bytes, int]: ...

    @overload
    def unsign(self, value: str, stamp: bool = False) -> bytes: ...

    def unsign(self, value, stamp=False):
        \"\"\"Verify the signature and give the value back.\"\"\"
        return check_signature(value, stamp)
"""


def test_python_overload_stubs_are_not_definitions_to_open() -> None:
    """`@overload` stubs are typing, not code: the implementation is the unit (a short
    stub outranked it and led the frame with `...`); the stubs' names count for the class."""
    f = read_python(OVERLOADED)
    units = {s.qualname: s for s in f.symbols if s.qualname}
    assert sorted(units) == ["Signer", "Signer.unsign"]
    impl = units["Signer.unsign"]
    assert (impl.start, impl.end) == (12, 14)
    assert impl.doc == "Verify the signature and give the value back."
    assert "check_signature" in impl.uses
    assert "Literal" in units["Signer"].uses  # a stub's annotation, credited to its class
    # a class's head ends at its colon, not at its first method's decorator
    assert units["Signer"].signature == "class Signer"


def test_python_reader_survives_bad_and_deep_sources() -> None:
    broken = read_python("def f(:\n  pass\n")
    assert broken.error.startswith("syntax error at line 1") and broken.symbols[0].kind == "module"
    deep = read_python("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")  # past the parser's limit
    assert deep.symbols[0].kind == "module"
    chain = read_python("x = " + " + ".join(["a"] * 20000) + "\n")  # deep ast, shallow source
    assert chain.symbols[0].kind == "module"  # a unit all the same, found by its path


@pytest.mark.parametrize(
    ("language", "source", "expected"),
    [
        (
            "go",
            b"package x\n\n// Add adds two numbers.\nfunc Add(a, b int) int { return a + b }\n\ntype T struct{ A int }\n\nfunc (t *T) Get() int { return t.A }\n",
            {
                "Add": ("function", 4, "func Add(a, b int) int", "Add adds two numbers."),
                "T": ("type", 6, None, ""),
                "T.Get": ("method", 8, "func (t *T) Get() int", ""),
            },
        ),
        (
            "rust",
            b"/// A pool of connections.\npub struct Pool { size: u32 }\n\nimpl Pool {\n    /// Make one.\n    pub fn new(size: u32) -> Self { Pool { size } }\n}\n",
            {
                "Pool": ("struct", 2, "pub struct Pool", "A pool of connections."),
                "Pool.new": ("method", 6, "pub fn new(size: u32) -> Self", "Make one."),
            },
        ),
        (
            "typescript",
            b'import { pool } from "./pool";\n\n/** Greets someone. */\nexport function greet(name: string): string {\n  return "hi " + name;\n}\n\nexport const double = (x: number): number => x * 2;\n\nclass Client {\n  send(req: Request): void { pool.send(req); }\n}\n\ninterface Options { retries: number }\n',
            {
                "greet": ("function", 4, "function greet(name: string): string", "Greets someone."),
                "double": ("function", 8, "double = (x: number): number =>", ""),
                "Client": ("class", 10, "class Client", ""),
                "Client.send": ("method", 11, "send(req: Request): void", ""),
                "Options": ("interface", 14, "interface Options", ""),
            },
        ),
        (
            "javascript",
            b"// Retry helper.\nfunction retry(fn, times) { return fn(); }\nclass Queue { push(x) { this.items.push(x); } }\n",
            {
                "retry": ("function", 2, "function retry(fn, times)", "Retry helper."),
                "Queue": ("class", 3, "class Queue", ""),
                "Queue.push": ("method", 3, "push(x)", ""),
            },
        ),
        (
            "java",
            b"package a;\nimport java.util.List;\n\n/** Holds items. */\npublic class Box {\n    public int size(List<String> xs) { return xs.size(); }\n}\n",
            {
                "Box": ("class", 5, "public class Box", "Holds items."),
                "Box.size": ("method", 6, "public int size(List<String> xs)", ""),
            },
        ),
    ],
)
def test_tree_sitter_readers(language: str, source: bytes, expected: dict[str, tuple]) -> None:
    f = read_code(language, source)
    assert not f.error
    got = {s.qualname: s for s in f.symbols if s.qualname}
    assert set(got) == set(expected)
    for qual, (kind, line, sig, doc) in expected.items():
        s = got[qual]
        assert (s.kind, s.start) == (kind, line), qual
        if sig is not None:
            assert s.signature == sig, qual
        assert s.doc == doc, qual


def test_identifiers_a_task_names_and_test_paths() -> None:
    assert named_identifiers(
        "Raise ClientDisconnect in Request.body(); fix read_parquet and getUser()"
    ) == [
        "clientdisconnect",
        "body",
        "read_parquet",
        "getuser",
    ]
    assert named_identifiers("add rate limiting to the login endpoint") == []
    assert is_test_path("tests/test_api.py") and is_test_path("src/api_test.go")
    assert is_test_path("web/app.spec.ts") and not is_test_path("src/latest.py")
    assert is_test_path("test-d/ipc/get-one.test-d.ts") and is_test_path("index.test-d.ts")


def _code_repo(root: Path) -> None:
    write(root, "pkg/sessions.py", SESSION)
    write(root, "pkg/adapters.py", ADAPTERS)
    write(
        root,
        "tests/test_sessions.py",
        "from pkg.sessions import Session\n\ndef test_send_timeout():\n    Session().send(None, timeout=1)\n",
    )
    write(
        root,
        "web/client.ts",
        "/** Fetch with a retry budget. */\nexport function fetchWithRetry(url: string, retries: number) { return fetch(url); }\n",
    )
    write(
        root,
        "docs/guide.md",
        "# Guide\n\n## Timeouts\n\nEvery request needs a timeout; `Session.send` refuses one without it.\n",
    )
    commit_all(root)
    ncx("init")
    ncx("sync")
    commit_all(root, "ncx")


def test_retrieve_kind_code_names_path_lines_and_symbol(repo: Path) -> None:
    _code_repo(repo)
    out = ncx(
        "retrieve",
        "--kind",
        "code",
        "--json",
        "refuse to send a prepared request without a timeout",
    ).stdout
    rows = [json.loads(x) for x in out.splitlines()]
    assert rows and all(r["kind"] == "code" for r in rows)
    best = rows[0]
    assert (best["source_path"], best["symbol"]) == ("pkg/sessions.py", "Session.send")
    assert (best["start_line"], best["end_line"]) == (14, 20)
    assert best["signature"].startswith("def send(")
    # the test of the same thing follows the code it tests
    files = list(dict.fromkeys(r["source_path"] for r in rows))
    assert files.index("tests/test_sessions.py") > files.index("pkg/sessions.py")
    human = ncx("retrieve", "--kind", "code", "fetch with retries").stdout
    assert "web/client.ts:2-2  [code] function fetchWithRetry" in human


def test_a_named_definition_beats_its_uses(repo: Path) -> None:
    _code_repo(repo)
    rows = json_lines("retrieve", "--kind", "code", "--json", "make pool_manager reuse pools")
    assert rows[0]["source_path"] == "pkg/adapters.py" and rows[0]["symbol"] == "pool_manager"


def test_default_retrieve_interleaves_docs_and_code(repo: Path) -> None:
    _code_repo(repo)
    rows = json_lines("retrieve", "--json", "--k", "5", "Session.send timeout")
    kinds = {r["kind"] for r in rows}
    assert kinds == {"chunk", "code"}
    only_docs = json_lines("retrieve", "--json", "--kind", "chunk", "timeouts")
    assert {r["kind"] for r in only_docs} == {"chunk"}
    bad = ncx("retrieve", "--kind", "sourcecode", "x", ok=False)
    assert bad.returncode == 2 and "chunk, memory or code" in bad.stderr


def test_frame_has_a_code_zone_citing_path_lines(repo: Path) -> None:
    _code_repo(repo)
    args = (
        "assemble",
        "--task",
        "make Session.send refuse requests without a timeout",
        "--budget",
        "1500",
    )
    frame = ncx(*args).stdout
    assert "## Code to Open" in frame
    code = frame.split("## Code to Open", 1)[1]
    assert "### `pkg/sessions.py:14-20` — Session.send" in code
    assert 'raise ValueError("a timeout is required")' in code  # the best definition's body
    assert "## Relevant Knowledge" in frame and "docs/guide.md" in frame  # a doc beside the code
    assert ncx(*args).stdout == frame  # same tree, same task: the same bytes
    js = json.loads(ncx(*args, "--format", "json").stdout)
    zone = next(z for z in js["zones"] if z["name"] == "code")
    assert (
        zone["items"][0]["kind"] == "code" and zone["items"][0]["source_path"] == "pkg/sessions.py"
    )
    assert git(repo, "status", "--porcelain") == ""  # the code index lives in the ignored cache


def _same_index(a: object, b: object) -> None:
    import numpy as np

    for name in ("file_of", "start", "end", "kind", "text", "text_at", "name_hashes", "name_units"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for name in ("hashes", "indptr", "indices", "data", "idf"):
        assert getattr(a.lex, name).tobytes() == getattr(b.lex, name).tobytes(), name
    for name in ("src", "dst", "weight"):
        assert getattr(a.graph, name).tobytes() == getattr(b.graph, name).tobytes(), name
    assert a.files == b.files


def test_code_index_follows_the_work_tree_and_a_patch_equals_a_build(repo: Path) -> None:
    from ncx.code.index import build, load_code_index
    from ncx.code.store import listing, parse_sources

    _code_repo(repo)
    ncx("retrieve", "--kind", "code", "backoff")
    # an unstaged edit is seen at once: only that file is read again, the rest patched in
    new = SESSION.replace("def backoff_delay(attempt):", "def jitter_delay(attempt):")
    write(repo, "pkg/sessions.py", new)
    write(repo, "pkg/extra.py", "def pool_size_hint():\n    return 4\n")
    git(repo, "add", "pkg/extra.py")
    (repo / "web/client.ts").unlink()
    rows = json_lines("retrieve", "--kind", "code", "--json", "jitter delay")
    assert rows[0]["symbol"] == "jitter_delay"
    assert "web/client.ts" not in {r["source_path"] for r in rows}
    sources = listing(repo)
    assert {s.path: s.blob for s in sources}["pkg/sessions.py"] == git_blob_id(new.encode())
    patched = load_code_index(repo)
    _same_index(patched, build(sources, parse_sources(repo, sources)))


def test_a_branch_switch_back_parses_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ncx.code import store

    parsed: list[str] = []
    real = store.parse_sources

    def counting(root: Path, sources: list[store.Source]) -> dict:
        parsed.extend(s.path for s in sources)
        return real(root, sources)

    monkeypatch.setattr(store, "parse_sources", counting)
    _code_repo(repo)
    ncx("retrieve", "--kind", "code", "backoff")
    assert sorted(parsed) == [
        "pkg/adapters.py",
        "pkg/sessions.py",
        "tests/test_sessions.py",
        "web/client.ts",
    ]
    git(repo, "checkout", "-q", "-b", "other")
    write(repo, "pkg/adapters.py", ADAPTERS.replace("pool_manager", "connection_pool"))
    commit_all(repo, "rename")
    parsed.clear()
    assert "connection_pool" in ncx("retrieve", "--kind", "code", "connection pool").stdout
    assert parsed == ["pkg/adapters.py"]  # only the file the branch changed
    parsed.clear()
    git(repo, "checkout", "-q", "main")  # back: the spare blocks hold main's version
    assert "pool_manager" in ncx("retrieve", "--kind", "code", "pool manager").stdout
    assert parsed == []


def test_untracked_ignored_and_special_files_are_not_code(repo: Path) -> None:
    _code_repo(repo)
    write(repo, "scratch.py", "def untracked_helper_zebra():\n    pass\n")
    write(repo, ".gitignore", "build/\n")
    write(repo, "build/gen.py", "def generated_zebra():\n    pass\n")
    os.symlink("/etc/hostname", repo / "link.py")
    git(repo, "add", "link.py", ".gitignore")
    git(repo, "commit", "-q", "--no-verify", "-m", "link")
    out = ncx("retrieve", "--kind", "code", "--json", "zebra hostname").stdout
    assert "untracked_helper_zebra" not in out and "generated_zebra" not in out
    assert "link.py" not in out


def test_help_and_docs_queries_do_not_load_parsers(repo: Path) -> None:
    import subprocess
    import sys

    _code_repo(repo)
    probe = (
        "import sys, runpy; sys.argv=['ncx','retrieve','--kind','chunk','timeouts'];"
        "\ntry: runpy.run_module('ncx', run_name='__main__')\nexcept SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('tree_sitter', 'ncx.code.python', 'ncx.code.read'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


def test_a_first_frame_without_a_code_index_builds_it_and_names_the_code(repo: Path) -> None:
    """No code index (a fresh clone): the first frame builds it and names the code to open,
    the frame every later query gives (docs/decisions.md §44)."""
    import shutil

    _code_repo(repo)
    shutil.rmtree(repo / ".neocortex/cache/code")  # as in a fresh clone: no code index
    task = "make Session.send refuse requests without a timeout"
    frame = ncx("assemble", "--task", task).stdout
    assert "## Code to Open" in frame and "pkg/sessions.py:14-20" in frame
    assert "background" not in frame
    assert (repo / ".neocortex/cache/code/index.npz").exists()
    assert ncx("assemble", "--task", task).stdout == frame


@pytest.mark.e2e
def test_prompt_hook_and_mcp_frames_carry_the_code(repo: Path) -> None:
    from conftest import ncx_proc

    _code_repo(repo)
    payload = {"prompt": "make Session.send refuse requests without a timeout", "cwd": str(repo)}
    out = ncx_proc(
        "agent-hook", "prompt", input=json.dumps(payload), env={"NCX_HOOK_TIMEOUT": "60"}
    )
    assert (
        "## Code to Open" in out.stdout and "`pkg/sessions.py:14-20` — Session.send" in out.stdout
    )


def test_docs_and_memories_link_to_the_code_they_name(repo: Path) -> None:
    _code_repo(repo)
    # --explain shows the doc's links: `Session.send` names a definition
    rows = json_lines("retrieve", "--json", "--explain", "--kind", "chunk", "timeouts")
    assert rows[0]["links"] == ["pkg/sessions.py:14-20 Session.send"]
    # a memory naming a file and a helper links to both; a common word links to nothing
    ncx(
        "memory",
        "add",
        "The back-off in pkg/sessions.py is capped by `backoff_delay`; see the guide.",
        "--context",
        "incident",
    )
    mem = json_lines("retrieve", "--json", "--explain", "--kind", "memory", "back-off capped")
    assert mem[0]["links"] == ["pkg/sessions.py:1-29", "pkg/sessions.py:27-29 backoff_delay"]
    # a frame lifts what its best sections name: the doc names Session.send, the task does not
    frame = json.loads(
        ncx("assemble", "--task", "every request needs a timeout", "--format", "json").stdout
    )
    code = next(z for z in frame["zones"] if z["name"] == "code")
    assert code["items"][0]["id"] == "pkg/sessions.py:Session.send"
    # ... a long issue is about what it says: its own words lead, not the doc's link
    issue = repo.parent / "issue.md"
    issue.write_text(
        "Every request needs a timeout\n\nWhen a prepared request goes out through the "
        "transport adapter with no timeout set, the connection pool waits forever on a dead "
        "host; the adapter should send with a default timeout so a pooled connection gives "
        "up after a while.\n"
    )
    frame = json.loads(ncx("assemble", "--task-file", str(issue), "--format", "json").stdout)
    code = next(z for z in frame["zones"] if z["name"] == "code")
    assert code["items"][0]["source_path"] == "pkg/adapters.py"


def test_a_source_file_replaced_by_a_fifo_is_never_waited_on(repo: Path) -> None:
    _code_repo(repo)
    (repo / "pkg/adapters.py").unlink()
    os.mkfifo(repo / "pkg/adapters.py")  # tracked, and now a FIFO no one writes to
    out = ncx("retrieve", "--kind", "code", "--json", "send a prepared request").stdout
    assert "pkg/adapters.py" not in out and "pkg/sessions.py" in out


RETRY = '''def retry_count(response):
    """The retry count of a response."""
    return response.retries


def send_with_retry(session, request, attempts):
    """Send a request, retrying failed connects."""
    last = None
    for attempt in range(attempts):
        try:
            response = session.send(request)
        except ConnectionError as e:
            last = e
            continue
        if response.status < 500:
            return response
        wait = min(60, 2 ** attempt)
        session.sleep(wait)
    raise last or RuntimeError("no attempt made")


def other(x):
    return x
'''


def test_within_a_file_a_longer_definition_leads_on_close_scores(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LENGTH_PRIOR (decisions.md §63): among one file's matches, a change is more often in
    the long definition than BM25's length normalisation says; the files' order stays."""
    from ncx.code import rank
    from ncx.code.search import CodeSearcher

    write(repo, "net/retry.py", RETRY)
    write(repo, "net/util.py", "def count(items):\n    return len(items)\n")
    write(
        repo,
        "net/log.py",
        'def log_failed(event):\n    """Log a failed event."""\n    print(event)\n',
    )
    commit_all(repo)
    task = "retry failed responses"

    def ranked(prior: float) -> list[tuple[str, str]]:
        monkeypatch.setattr(rank, "LENGTH_PRIOR", prior)
        return [(h.path, h.qualname) for h in CodeSearcher(repo).search(task, per_file=3)]

    kept = rank.LENGTH_PRIOR
    assert kept > 0
    flat, prior = ranked(0.0), ranked(kept)
    assert flat[0] == ("net/retry.py", "retry_count")
    # the same files in the same order, and the same definitions in each
    assert list(dict.fromkeys(p for p, _ in flat)) == list(dict.fromkeys(p for p, _ in prior))
    assert sorted(flat) == sorted(prior)
    assert prior[0] == ("net/retry.py", "send_with_retry")
    assert [p for p, _ in prior][-1] == "net/log.py"


PRINTER_GO = """package printer

// PrettyPrinter prints a file's lines with their style.
type PrettyPrinter struct {
	style   string
	width   int
	colored bool
	tabs    int
	wrap    bool
}

// Print writes one line with the printer's style, padded to its width.
func (p *PrettyPrinter) Print(line string) string {
	out := p.style + line
	for len(out) < p.width {
		out += " "
	}
	return out
}
"""

CONFIG_GO = """package cfg

// Config holds the style and the width of the output.
type Config struct {
	Style string
	Width int
	Tabs  int
}

// Load reads a file into a new value.
func Load(path string) Config {
	return Config{}
}
"""

FILTER_JAVA = """package org.jsoup.select;

/** Filters the nodes of a traversal. */
public interface NodeFilter {
    /** Called when a node is first met: filters it. */
    FilterResult head(Node node, int depth);

    /** Filters the nodes of a traversal when their children have been met. */
    default FilterResult tail(Node node, int depth) {
        return FilterResult.CONTINUE;
    }
}
"""


def test_within_a_file_the_code_leads_its_declaration_of_data(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DECLARATION_PRIOR (decisions.md §97): a Go struct's few lines and its name score
    above its method; the method, where a change lands, leads. A struct with no method in its
    file keeps its key, as does a Java interface holding its methods (a container, as a
    class is)."""
    from ncx.code import rank
    from ncx.code.search import CodeSearcher

    write(repo, "printer/printer.go", PRINTER_GO)
    write(repo, "select/NodeFilter.java", FILTER_JAVA)
    write(repo, "cfg/config.go", CONFIG_GO)
    commit_all(repo)

    def ranked(task: str, prior: float) -> list[tuple[str, str]]:
        monkeypatch.setattr(rank, "DECLARATION_PRIOR", prior)
        return [(h.path, h.qualname) for h in CodeSearcher(repo).search(task, per_file=3)]

    import numpy as np

    idx = CodeSearcher(repo).index
    units = np.flatnonzero(idx.file_of == idx.files.index("printer/printer.go"))
    assert idx.qualnames(units) == [idx.unit(int(u)).qualname.encode() for u in units]
    kept = rank.DECLARATION_PRIOR
    assert kept < 1
    task = "the pretty printer's style and width"
    flat, prior = ranked(task, 1.0), ranked(task, kept)
    assert flat[0] == ("printer/printer.go", "PrettyPrinter")
    assert prior[0] == ("printer/printer.go", "PrettyPrinter.Print")
    assert sorted(flat) == sorted(prior)
    task = "filters the nodes of a traversal"
    assert ranked(task, 1.0)[0] == ("select/NodeFilter.java", "NodeFilter")
    assert ranked(task, 1.0) == ranked(task, 0.3)  # (at 0.3 a declaration would trail)
    task = "config style width"
    flat, low = ([h for h in ranked(task, p) if h[0] == "cfg/config.go"] for p in (1.0, 0.3))
    assert flat[0] == ("cfg/config.go", "Config") and flat == low


def _long_def(name: str, middle: str) -> str:
    """A function of ~400 tokens whose one telling line sits in its middle."""
    pad = "".join(f"    step_{i} = prepare_{i}(state, {i})\n" for i in range(30))
    return (
        f'def {name}(state):\n    """{name.replace("_", " ")}."""\n{pad}'
        f"    before_it = state.ready\n{middle}    after_it = state.done\n{pad}    return state\n"
    )


def test_the_leads_files_next_match_is_quoted_by_its_own_window(repo: Path) -> None:
    """SECOND_SHARE (decisions.md §101): the lead file's second match, too long to show
    whole, is quoted by the lines around its telling one, not by its signature and that
    line alone."""
    write(
        repo,
        "net/replica.py",
        _long_def("purge_replica_cache", "    purge_replica_cache_now(state.replica, cache=True)\n")
        + "\n\n"
        + _long_def("drop_replica", "    replica_cache = purge(state.replica_cache)\n"),
    )
    write(repo, "net/other.py", _long_def("warm_cache", "    warm(state.cache)\n"))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    frame = json.loads(
        ncx("assemble", "--task", "purge the replica cache", "--format", "json").stdout
    )
    code = next(z for z in frame["zones"] if z["name"] == "code")["items"]
    assert [it["section"] for it in code[:2]] == ["purge_replica_cache", "drop_replica"]
    second = code[1]["text"].split("\n")
    assert "    replica_cache = purge(state.replica_cache)" in second
    # its window, not the one telling line a listed definition shows
    assert "    before_it = state.ready" in second and "    after_it = state.done" in second
