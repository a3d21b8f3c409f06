"""Which tracked files are the project's code: the size limit checked before a byte is read,
vendored / built / generated / minified / excluded files left out with their reason (named by
`ncx status` and `ncx sync`), helpers weighed like tests, one result per name and file, and a
sparse checkout's code read from its blobs (hostile C4, R1; issue 38; git flows B, R13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import commit_all, git, ncx, write

from ncx.code.rank import is_test_path
from ncx.code.scope import (
    ATTR_GENERATED,
    ATTR_VENDORED,
    BUILT,
    EXCLUDED,
    GENERATED_COPY,
    MINIFIED,
    TOO_LARGE,
    VENDORED,
    content_reason,
    path_reason,
)
from ncx.code.store import code_listing

APP = "export function parseOrder(o) { return o }\n"


def _code(root: Path) -> list[dict[str, object]]:
    out = ncx("retrieve", "--kind", "code", "--json", "--k", "20", "parse order").stdout
    return [json.loads(line) for line in out.splitlines()]


def _status_code(root: Path) -> dict[str, object]:
    got: dict[str, object] = json.loads(ncx("status", "--json").stdout)["code"]
    return got


def test_a_source_over_the_limit_is_neither_read_nor_hashed(repo: Path) -> None:
    write(repo, "src/app.js", APP)
    write(repo, "huge.ts", "export function keep() {}\n")
    write(repo, "big.py", "def big_committed():\n    pass\n" + "# filler line\n" * 80_000)
    commit_all(repo)
    ncx("init")
    with open(repo / "huge.ts", "r+b") as f:
        f.truncate(300_000_000)  # sparse: no disk, but a read would take 300 MB
    listed = code_listing(repo)
    assert [s.path for s in listed.sources] == ["src/app.js"]
    assert dict(listed.left_out) == {"big.py": TOO_LARGE, "huge.ts": TOO_LARGE}
    sync = json.loads(ncx("sync", "--json").stdout)
    assert {"path": "huge.ts", "reason": TOO_LARGE} in sync["code"]["left_out"]
    status = _status_code(repo)
    assert status["files"] == 1 and status["left_out_by_reason"] == {TOO_LARGE: 2}
    text = ncx("status").stdout
    assert (
        "code: 1 source files; 2 left out (2 over the 1 MB code size limit): big.py, huge.ts"
        in text
    )
    assert "big_committed" not in ncx("retrieve", "--kind", "code", "--json", "big").stdout


@pytest.mark.e2e
def test_sync_of_a_300_mb_source_stays_small(repo: Path) -> None:
    """The RSS of a fresh process: in process, the test runner's own memory would hide it."""
    write(repo, "huge.ts", "export function keep() {}\n")
    commit_all(repo)
    ncx("init")
    with open(repo / "huge.ts", "r+b") as f:
        f.truncate(300_000_000)
    code = (
        "import resource, runpy, sys; sys.argv = ['ncx', 'sync', '--quiet']\n"
        "try:\n    runpy.run_module('ncx', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    peak_kb = int(out.stdout.split()[-1])
    assert peak_kb < 200_000, f"peak RSS {peak_kb} kB for a file that is not indexed"


def test_generated_bundles_and_excludes_leave_the_code(repo: Path) -> None:
    write(repo, "src/app.js", APP)
    write(repo, "dist/bundle.js", "function parseOrder(o){return o};\n" * 2000)
    write(repo, "lib/vendor/jquery.js", "function parseOrder(o){return o}\n")
    write(repo, "deno_dist/app.ts", APP)
    write(repo, "web/app.min.js", APP)
    write(repo, "static/packed.js", "function parseOrder(o){return o};" * 200)
    write(repo, "gen/order_pb.js", "function parseOrder(o){return o}\n")
    write(repo, "third/keep.js", "function parseOrder(o){return o}\n")
    write(repo, "old/legacy.js", "function parseOrder(o){return o}\n")
    write(repo, ".gitattributes", "gen/** linguist-generated\nthird/** linguist-vendored\n")
    commit_all(repo)
    ncx("init", "--exclude", "old/**")
    ncx("sync")
    paths = {h["path"] for h in _code(repo)}
    assert paths == {"src/app.js"}
    left = {d["path"]: d["reason"] for d in _status_code(repo)["left_out"]}  # type: ignore[union-attr]
    assert left == {
        "dist/bundle.js": BUILT,
        "lib/vendor/jquery.js": VENDORED,
        "deno_dist/app.ts": GENERATED_COPY,
        "static/packed.js": MINIFIED,
        "gen/order_pb.js": ATTR_GENERATED,
        "third/keep.js": ATTR_VENDORED,
        "old/legacy.js": EXCLUDED,
    }
    text = ncx("status").stdout
    assert "code: 1 source files; 7 left out (" in text and "1 minified (long lines)" in text


def test_gitattributes_keeps_a_folder_the_rules_would_leave_out(repo: Path) -> None:
    write(repo, "vendor/ours.go", "package vendor\n\nfunc ParseOrder() {}\n")
    write(repo, ".gitattributes", "vendor/** -linguist-vendored\n")
    commit_all(repo)
    assert [s.path for s in code_listing(repo).sources] == ["vendor/ours.go"]
    (repo / ".gitattributes").unlink()
    commit_all(repo, "rules again")
    assert code_listing(repo).left_out == [("vendor/ours.go", VENDORED)]


def test_the_path_and_content_rules() -> None:
    assert path_reason("pkg/_vendor/six.py", ()) == VENDORED
    assert path_reason("astropy/extern/configobj/validate.py", ()) == VENDORED
    assert path_reason("packages/ui/dist/index.js", ()) == BUILT
    # a Python package's packages/ is what it vendors (requests/packages/urllib3); the top
    # folder packages/ (and src/packages/) is a monorepo's own
    assert path_reason("requests/packages/urllib3/exceptions.py", ()) == VENDORED
    assert path_reason("packages/core/src/index.ts", ()) == ""
    assert path_reason("packages/ncx_core/api.py", ()) == ""
    assert path_reason("src/packages/app/main.py", ()) == ""
    assert path_reason("src/requests/packages/chardet/big5freq.py", ()) == VENDORED
    assert path_reason("web/packages/ui/button.ts", ()) == ""
    assert path_reason("build/lib/pkg/mod.py", ()) == BUILT
    # pip's own code lives in a folder named build; a project's external/ is its own too
    assert path_reason("src/pip/_internal/operations/build/wheel.py", ()) == ""
    assert path_reason("seaborn/external/husl.py", ()) == ""
    assert path_reason("src/distance.py", ()) == ""
    assert path_reason("docs/x.py", ("docs",)) == EXCLUDED
    written = b"export function f(a) {\n  return a + 1;\n}\n" * 200
    assert content_reason(written, "javascript") == ""
    assert content_reason(b"var a=1;" * 1000, "javascript") == MINIFIED
    # long lines in Python are data (rendered output in a test), not minified code
    assert content_reason(b"X = '" + b"x" * 30_000 + b"'\n", "python") == ""


def test_docs_examples_and_test_helpers_weigh_like_tests(repo: Path) -> None:
    assert is_test_path("doc/tutorial/example_plot.py") and is_test_path("examples/hello.py")
    assert is_test_path("src/_pytest/pytester.py") and is_test_path("pylint/testutils/lint.py")
    assert is_test_path("pkg/conftest.py") and is_test_path("tests/fixtures/x.py")
    assert not is_test_path("src/docstring.py") and not is_test_path("pkg/example.py")
    body = "def render_helloworld(page):\n    return page\n"
    write(repo, "examples/helloworld.py", body)
    write(repo, "pkg/render.py", body)
    commit_all(repo)
    ncx("init")
    hits = ncx("retrieve", "--kind", "code", "--json", "render helloworld").stdout.splitlines()
    assert json.loads(hits[0])["path"] == "pkg/render.py"


def test_one_result_per_definition_name_and_file(repo: Path) -> None:
    # not minified, in no generated folder: a file of 2,000 copies still shows each name once
    write(repo, "src/orders.js", "function parseOrder(o) {\n  return o\n}\n" * 2000)
    write(repo, "src/app.js", APP)
    commit_all(repo)
    ncx("init")
    hits = _code(repo)
    assert [h["id"] for h in hits].count("src/orders.js:parseOrder") == 1
    assert "src/app.js" in {h["path"] for h in hits}


@pytest.mark.parametrize("index_sparse", [False, pytest.param(True, marks=pytest.mark.e2e)])
def test_a_sparse_checkout_indexes_the_code_outside_its_cone(
    repo: Path, tmp_path: Path, index_sparse: bool
) -> None:
    """R13: the frame of a sparse clone is a full clone's (the index is keyed by blob id)."""
    write(
        repo,
        "src/gate/timeout.py",
        "def gateway_timeout(ms: int) -> int:\n"
        '    """The gateway answers within this many ms before the operator restarts it."""\n'
        "    return ms\n",
    )
    write(repo, "lib/util.py", "def helper():\n    return 0\n")
    write(repo, "docs/ops.md", "# Ops\n\nThe operator restarts the gateway.\n")
    commit_all(repo)
    ncx("init")
    commit_all(repo, "ncx")
    frames = {}
    for name in ("full", "sparse"):
        clone = tmp_path / name
        git(tmp_path, "clone", "-q", "--no-local", str(repo), str(clone))
        if name == "sparse":
            args = ["--sparse-index"] if index_sparse else []
            git(clone, "sparse-checkout", "set", "--cone", *args, "docs", "lib", ".neocortex")
            assert not (clone / "src").exists()
        task = "change the gateway timeout the operator restarts it after"
        out = ncx("assemble", "--task", task, "--budget", "3000", cwd=clone).stdout
        frames[name] = out
    assert "src/gate/timeout.py:1-3" in frames["sparse"]
    assert "return ms" in frames["sparse"]
    assert frames["sparse"] == frames["full"]
