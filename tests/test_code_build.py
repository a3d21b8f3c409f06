"""The code index's bytes (the saved blocks and the ranked arrays) do not depend on how fast it is built: a pinned digest of the
index of a fixed set of Python sources that exercise every path of the reader's walk
(decorators, bases and keywords, nested and deep definitions, docstrings, imports, f-strings,
match, lambdas, `**` in dicts, operators), computed before the walk was rewritten."""

from __future__ import annotations

import hashlib

from ncx.code.index import _BLOCK_ARRAYS, blocks_of, index_of
from ncx.code.read import read_code
from ncx.code.store import Source, git_blob_id

_DEEP = "".join(f"{'    ' * i}def f{i}(x{i}):\n" for i in range(30)) + "    " * 30 + "return x0\n"

SOURCES = {
    "pkg/core.py": '''"""Core: the session and its pool."""
import os, sys as system
from .adapters import HTTPAdapter as Adapter, retry
from .. import util


@register("core", level=2)
@cache
class Session(Base, metaclass=Meta, flag=True):
    """A session keeps a pool.

    Second paragraph."""

    timeout: int = 30  # seconds to wait

    def send(self, request, *args, retries: int = 3, **kwargs) -> Response:
        """Send one request."""
        # try the pool first
        conn = self.pool.get(request.url, default={**kwargs, "a": 1})
        total = retries + len(args) * 2 if not conn else -retries
        return conn.urlopen(f"{request.method} {request.url!r:>10}", lambda q: q.strip())

    async def close(self, *, force=False):
        async with self.lock as held:
            await held.release()
        for k, v in sorted(self.items()):
            yield k, v

    class Inner:
        def deep(self): return [i for i in range(3) if i % 2]


def backoff_delay(attempt):
    # exponential, capped
    match attempt:
        case {"n": n, **rest}:
            return min(2 ** n, 60)
        case Point(x=0, y=yy) | [1, 2, *others]:
            return yy
        case _:
            global STATE
            return None
    try:
        pass
    except (OSError, ValueError) as err:
        raise RuntimeError("no") from err
    finally:
        del attempt
''',
    "pkg/deep.py": _DEEP,
    "pkg/bad.py": "def broken(:\n    pass\n",
    "pkg/empty.py": "",
    "tests/test_core.py": """import pytest
from pkg.core import Session

@pytest.mark.parametrize("n", [1, 2])
def test_send(n):
    assert Session().send(n) is not None, "sent"
""",
}

# sha256 over every array of the index, in a fixed order (pinned at 27a09b9, before the
# walk's rewrite and blocks_of's Counter)
GOLDEN = "190d36d09765e5eedb1b140684437a106404ecb41102881ea1edbec428e980e4"


def index_digest() -> str:
    srcs, recs = [], {}
    for path, text in sorted(SOURCES.items()):
        data = text.encode()
        blob = git_blob_id(data)
        srcs.append(Source(path, blob, "python"))
        recs[blob] = read_code("python", data)
    blocks = blocks_of(srcs, recs)  # what cache/code/index.npz saves, and the index of it
    idx = index_of(blocks)
    h = hashlib.sha256()
    for name in _BLOCK_ARRAYS:
        a = getattr(blocks, name)
        h.update(name.encode() + str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    h.update(repr((blocks.files, blocks.blobs, blocks.notes, blocks.secrets)).encode())
    arrays = [
        idx.file_of, idx.start, idx.end, idx.kind, idx.test, idx.text, idx.text_at,
        idx.lex.hashes, idx.lex.order, idx.lex.indptr, idx.lex.indices, idx.lex.data,
        idx.lex.idf, idx.graph.src, idx.graph.dst, idx.graph.weight, idx.name_hashes,
        idx.name_units,
    ]  # fmt: skip
    for a in arrays:
        h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    h.update(repr((idx.files, idx.secrets)).encode())
    return h.hexdigest()


def test_the_code_index_bytes_are_the_pinned_ones() -> None:
    assert index_digest() == GOLDEN
