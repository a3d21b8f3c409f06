"""The code index's bytes (the saved blocks and the ranked arrays) do not depend on how fast it
is built: pinned digests of the index of fixed sets of sources that exercise every path of the
readers' walks, Python's (decorators, bases and keywords, nested and deep definitions,
docstrings, imports, f-strings, match, lambdas, `**` in dicts, operators) and tree-sitter's
(Rust, Go, TypeScript, JavaScript, Java), each computed before its walk was rewritten."""

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

LANGS = {
    "py": "python",
    "rs": "rust",
    "go": "go",
    "ts": "typescript",
    "js": "javascript",
    "java": "java",
}

# sha256 over every array of the index, in a fixed order (pinned at 27a09b9, before the
# walk's rewrite and blocks_of's Counter)
GOLDEN = "190d36d09765e5eedb1b140684437a106404ecb41102881ea1edbec428e980e4"


def index_digest(sources: dict[str, str] = SOURCES) -> str:
    srcs, recs = [], {}
    for path, text in sorted(sources.items()):
        data = text.encode()
        blob = git_blob_id(data)
        lang = LANGS[path.rsplit(".", 1)[1]]
        srcs.append(Source(path, blob, lang))
        recs[blob] = read_code(lang, data)
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


# The tree-sitter languages' walk (ncx.code.treesitter), every branch: a Rust impl block's
# scope and a generic one, doc comments with children, `#[test]` and `mod tests`, a Go method's
# receiver, a TS arrow function bound to a name, a class's methods, template strings and
# their fragments, the `string` type keyword, imports of each kind, a Java class.
TREE_SITTER_SOURCES = {
    "src/pool.rs": """//! The pool.
use std::collections::HashMap;
use crate::conn::{Conn, Kind as K};

/// A pool of connections.
#[derive(Debug, Clone)]
pub struct Pool<T> { conns: HashMap<String, T>, size: usize }

impl<T: Conn> Pool<T> {
    /** Make one. */
    pub fn new(size: usize) -> Self { Pool { conns: HashMap::new(), size } }
    fn get(&self, key: &str) -> Option<&T> { self.conns.get(key) /* fast */ }
}

pub trait Conn { fn open(&self) -> bool; }
macro_rules! ready { ($e:expr) => { $e.open() }; }

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn opens() { assert!(ready!(Pool::<u8>::new(2)), "opened {}", 1); }
}
""",
    "cmd/serve.go": """// Package cmd serves.
package cmd

import (
\t"fmt"
\tnet "net/http"
)

// Server holds the handler.
type Server struct{ Addr string }

// Serve starts it.
func (s *Server) Serve(h net.Handler) error {
\treturn net.ListenAndServe(s.Addr, h) // blocks
}

func helper[T any](v T) string { return fmt.Sprintf("%v", v) }
""",
    "src/client.ts": """/** The client. */
import { Options, type Hook } from "./options";
import * as path from 'node:path';

export interface Request { url: string; retries?: number }
export type Handler = (req: Request) => Promise<string>;

/** Fetch with retries. */
export const fetchWith = async (req: Request, hooks: Hook[] = []): Promise<string> => {
  const where = `${req.url}/${path.sep}?n=${req.retries ?? 0}`;
  return hooks.reduce((acc, h) => h(acc), where);
};

export class Client {
  // the base URL
  constructor(private base: string) {}
  get(url: string): string { return "GET " + this.base + url; }
}
namespace Legacy { export function old(): void {} }
enum Mode { Fast = "fast", Slow = "slow" }
""",
    "lib/util.js": """const parse = function (text) { return JSON.parse(text); };
class Cache { put(key, value) { this[key] = value; } }
function* ids() { yield 1; }
export default { parse, Cache, ids };
""",
    "src/main/java/Cache.java": """package app;

import java.util.Map;

/** A cache. */
public class Cache<K, V> {
    private final Map<K, V> map; // the entries

    public Cache(Map<K, V> map) { this.map = map; }

    /** The value of a key. */
    public V get(K key) { return map.get(key); }

    interface Loader { String load(String key); }
    enum State { EMPTY, FULL }
    record Entry(String key, int size) {}
}
""",
}

# pinned at 406302a, before the walk kept one frame per definition instead of one record per
# node; again when an arrow function's head kept its `=>` (decisions.md §87), and when the
# walk read named nodes only (the `string` type keyword no word of the text: §94)
TREE_SITTER_GOLDEN = "74024a71c0bffbdd68463c9a22023aa68a0c9775887abc3f463d3a270e319dd6"


def test_the_tree_sitter_index_bytes_are_the_pinned_ones() -> None:
    assert index_digest(TREE_SITTER_SOURCES) == TREE_SITTER_GOLDEN
