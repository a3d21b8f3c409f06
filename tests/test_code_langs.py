"""Each language read right: docs through Rust attributes, module docs (Go's package comment,
Rust's `//!`, TSDoc's file comment), signatures without their comments, TypeScript type
shapes, Rust tests inside source files; real sources through the readers and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_all, first_sync, ncx, write

from ncx.code.model import Symbol
from ncx.code.rank import in_scope, task_scope, task_words
from ncx.code.read import read_code

RUST_SEARCHER = b"""//! Line buffers for the searcher.
//! They grow on demand.

use std::io;

/// A line buffer that grows when a line is longer than its capacity.
///
/// Details the summary leaves out.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct LineBuffer {
    capacity: usize,
}

/** Make an empty buffer. */
#[inline]
pub fn new_buffer() -> LineBuffer {
    LineBuffer { capacity: 0 }
}

impl LineBuffer {
    /// Double the capacity,
    /// at most once per call.
    #[inline(always)]
    #[cfg(not(windows))]
    pub fn grow(&mut self) {
        self.capacity *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_the_capacity() {
        let mut b = new_buffer();
        b.grow();
    }
}

#[tokio::test]
async fn reads_lines_async() {}
"""


def _by_qual(language: str, source: bytes) -> dict[str, Symbol]:
    f = read_code(language, source)
    assert not f.error
    return {s.qualname: s for s in f.symbols}


def test_rust_docs_are_kept_through_attributes_and_inner_docs_are_the_module_doc() -> None:
    by = _by_qual("rust", RUST_SEARCHER)
    docs = {q: s.doc for q, s in by.items()}
    assert docs[""] == "Line buffers for the searcher. They grow on demand."
    assert docs["LineBuffer"] == "A line buffer that grows when a line is longer than its capacity."
    assert docs["new_buffer"] == "Make an empty buffer."
    assert docs["LineBuffer.grow"] == "Double the capacity, at most once per call."


def test_a_rust_doc_behind_derive_is_searched(repo: Path) -> None:
    write(repo, "src/lines.rs", RUST_SEARCHER.decode())
    write(repo, "src/main.rs", 'fn main() {\n    println!("hi");\n}\n')
    commit_all(repo)
    out = ncx("retrieve", "--kind", "code", "--json", "buffer longer than its capacity").stdout
    best = json.loads(out.splitlines()[0])
    assert (best["source_path"], best["symbol"]) == ("src/lines.rs", "LineBuffer")
    assert "grows when a line is longer" in best["text"]


GO_ROOT = b"""// Copyright 2013-2023 The Cobra Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.

// Package cobra is a commander providing a simple interface to create powerful
// modern CLI interfaces.
package cobra

import "fmt"

// Command is just that, a command for your application.
type Command struct {
	Use string
}
"""


def test_a_go_files_module_doc_is_its_package_comment_not_the_license() -> None:
    by = _by_qual("go", GO_ROOT)
    assert by[""].doc == (
        "Package cobra is a commander providing a simple interface to create powerful "
        "modern CLI interfaces."
    )
    # a comment a blank line above `package` is no package comment
    detached = GO_ROOT.replace(b"\npackage cobra", b"\n\npackage cobra")
    assert _by_qual("go", detached)[""].doc == ""


TS_ROUTER = b"""/**
 * @module
 * Routers match a request's path to its handlers.
 */

import type { Env } from "./types";

/**
 * @packageDocumentation
 */

/**
 * Match a path against the routes.
 * @param path the request's path
 * @returns the handlers and their params
 */
export function match(path: string): Handler[] {
  return [];
}

/** @deprecated use match() with a method instead */
export function matchAny(path: string): Handler[] {
  return match(path);
}

/** @internal */
export const ROUTES = 1;
"""


def test_tsdoc_tags_are_not_shown_as_the_doc() -> None:
    by = _by_qual("typescript", TS_ROUTER)
    docs = {q: s.doc for q, s in by.items()}
    assert docs[""] == "Routers match a request's path to its handlers."
    assert docs["match"] == "Match a path against the routes."
    assert docs["matchAny"] == "@deprecated use match() with a method instead"


JAVA_READER = b"""package com.google.gson.stream;

/** Reads a JSON encoded value as a stream of tokens. */
public class JsonReader implements Closeable {
  /** Configures this parser to be liberal in what it accepts. */
  public final void setLenient(boolean lenient) // deprecated: use setStrictness
  {
    this.lenient = lenient;
  }

  public JsonReader(Reader in, /* the source */ int bufferSize, // in chars
      boolean strict) {
    this.in = in;
  }
}
"""


def test_a_java_signature_keeps_its_code_not_its_trailing_comment() -> None:
    by = _by_qual("java", JAVA_READER)
    lenient = by["JsonReader.setLenient"]
    assert lenient.signature == "public final void setLenient(boolean lenient)"
    assert lenient.doc == "Configures this parser to be liberal in what it accepts."
    ctor = by["JsonReader.JsonReader"]
    assert ctor.signature == ("public JsonReader(Reader in, int bufferSize, boolean strict)")


TS_TYPES = b"""import type { Context } from "./context";

/** What a handler returns. */
export type HandlerResponse<O> = Response | TypedResponse<O> | Promise<Response | TypedResponse<O>>;

export type Env = {
  Bindings?: object; // the worker's bindings
  Variables?: object;
};

type Handler<E extends Env = any> = (c: Context<E>, next: Next) => HandlerResponse<any>;

type Huge = { a0: string; a1: string; a2: string; a3: string; a4: string; a5: string; a6: string; a7: string; a8: string; a9: string; b0: string; b1: string; b2: string; b3: string; b4: string; b5: string; b6: string };
"""


def test_a_typescript_type_alias_shows_its_shape() -> None:
    by = _by_qual("typescript", TS_TYPES)
    sigs = {q: s.signature for q, s in by.items()}
    assert sigs["HandlerResponse"] == (
        "type HandlerResponse<O> = Response | TypedResponse<O> | Promise<Response | TypedResponse<O>>"
    )
    assert sigs["Env"] == "type Env = { Bindings?: object; Variables?: object; }"
    assert sigs["Handler"] == (
        "type Handler<E extends Env = any> = (c: Context<E>, next: Next) => HandlerResponse<any>"
    )
    assert sigs["Huge"].startswith("type Huge = { a0: string;") and sigs["Huge"].endswith("…")
    assert len(sigs["Huge"]) < 180  # a line or two, not the whole type


def test_rust_tests_inside_source_files_are_tests() -> None:
    tests = {q: s.test for q, s in _by_qual("rust", RUST_SEARCHER).items()}
    assert tests == {
        "": False,
        "LineBuffer": False,
        "new_buffer": False,
        "LineBuffer.grow": False,
        "tests": True,
        "tests.grows_the_capacity": True,
        "reads_lines_async": True,
    }


def test_a_rust_files_own_tests_rank_as_tests(repo: Path) -> None:
    write(
        repo,
        "src/net.rs",
        "/// Retry a request with exponential backoff until the timeout.\n"
        "pub fn retry_request(timeout: Duration) -> Result<()> {\n    Ok(())\n}\n",
    )
    write(
        repo,
        "src/cli.rs",
        "/// Parse the command line.\npub fn parse_args() -> Args {\n    Args::default()\n}\n\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
        "    /// The retry backoff respects the request timeout.\n"
        "    #[test]\n    fn retry_request_backoff_respects_the_timeout() {\n"
        '        assert!(parse_args().retry, "retry with backoff until the timeout");\n    }\n}\n',
    )
    commit_all(repo)
    out = ncx("retrieve", "--kind", "code", "--json", "retry request backoff timeout").stdout
    files = list(dict.fromkeys(json.loads(x)["source_path"] for x in out.splitlines()))
    assert files == ["src/net.rs", "src/cli.rs"]


def test_retrieve_kind_code_json_prints_at_most_k_lines(repo: Path) -> None:
    for i in range(4):  # each file with several definitions that match
        write(
            repo,
            f"src/pool{i}.rs",
            "".join(
                f"/// Grow the connection pool by {j}.\npub fn grow_pool_{j}() {{}}\n\n"
                for j in range(4)
            ),
        )
    first_sync(repo)  # (a batch opens the docs index too)
    for k in ("1", "3"):
        out = ncx("retrieve", "--kind", "code", "--json", "--k", k, "grow the pool").stdout
        rows = [json.loads(x) for x in out.splitlines()]
        assert len(rows) == int(k)
        assert len({r["source_path"] for r in rows}) == int(k)  # k files, each's best
    batch = ncx(
        "retrieve", "--kind", "code", "--batch", input='{"qid": 1, "query": "grow pool", "k": 2}\n'
    ).stdout
    assert len(json.loads(batch)["results"]) == 2
    # `--task`, as `ncx assemble` takes it (a new user typed it), is the query argument
    as_task = ncx("retrieve", "--kind", "code", "--json", "--task", "grow the pool").stdout
    assert as_task == ncx("retrieve", "--kind", "code", "--json", "grow the pool").stdout
    twice = ncx("retrieve", "grow", "--task", "pool", ok=False)
    assert twice.returncode == 2 and "give the query once" in twice.stderr


def test_a_tasks_change_kind_is_not_taken_for_identifiers(repo: Path) -> None:
    write(
        repo,
        "src/completions.ts",
        "/** Completions whose list never changes. */\n"
        "export class FixedCompletions {\n"
        "  fixedStrings(): string[] { return this.fixed_strings; }\n}\n",
    )
    write(
        repo,
        "src/etag.ts",
        "/** Compare two entity tags, weakly or strongly. */\n"
        "export function etagMatches(a: string, b: string, weak: boolean): boolean {\n"
        "  return a === b;\n}\n",
    )
    commit_all(repo)
    for task in ("fix(etag): compare weak tags", "Fix weak tag comparison", "fix: weak tags"):
        out = ncx("retrieve", "--kind", "code", "--json", task).stdout
        files = [json.loads(x)["source_path"] for x in out.splitlines()]
        assert files == ["src/etag.ts"], task  # "fix" named no file
    assert task_words("chore(deps)!: bump tokio") == "deps bump tokio"
    assert task_words("feat: add a router") == "add a router"
    # only the opening change kind goes: a word that starts like one, or one later, stays
    assert task_words("fixture loading is slow") == "fixture loading is slow"
    assert task_words("fixed_strings drops the last") == "fixed_strings drops the last"
    assert task_words("Add a fix for x") == "Add a fix for x"
    assert task_words("fix") == "fix"


def test_the_area_a_subject_names_before_its_colon_ranks_first(repo: Path) -> None:
    """`table: ...` (Go's style) or `fix(table): ...` names the folder the change is in: of
    two files defining the same names, the one in that folder ranks first (decisions.md
    §67); a word before a colon that names no folder or file changes nothing."""
    src = (
        "package {pkg}\n\n// Filter applies a filter on some data.\n"
        "type Filter struct {{\n\tdata Children\n\tfilter func(index int) bool\n}}\n\n"
        "// NewFilter initializes a new Filter.\n"
        "func NewFilter(data Children) *Filter {{\n\treturn &Filter{{data: data}}\n}}\n"
    )
    # tree/ holds every word of the tasks (table, panics too): it ranks first on the words
    tree = src.format(pkg="tree").replace(
        "// NewFilter initializes",
        "// NewFilter panics on an empty table of children; it initializes",
    )
    write(repo, "tree/children.go", tree)
    write(repo, "table/rows.go", src.format(pkg="table"))
    commit_all(repo)

    def first(task: str) -> str:
        out = ncx("retrieve", "--kind", "code", "--json", task).stdout
        return json.loads(out.splitlines()[0])["source_path"]

    unscoped = first("NewFilter panics when Filter is never called")
    for task in ("table: NewFilter panics", "fix(table): NewFilter panics"):
        assert first(task) == "table/rows.go", task
    assert first("tree: NewFilter panics") == "tree/children.go"
    assert first("Note: NewFilter panics when Filter is never called") == unscoped
    assert task_scope("feat(v4/core)!: x") == "v4/core" and task_scope("fix: x") is None
    assert in_scope(["a/v4/core/api.ts", "a/v4/core.ts", "a/v3/types.ts"], "v4/core").tolist() == [
        True,
        True,
        False,
    ]


def test_two_rust_trait_impls_of_one_name_are_both_found(repo: Path) -> None:
    # `impl From<A> for u64` and `impl From<B> for u64` both define `u64.from`: distinct
    # definitions (their signatures differ), where a file of copies of one is shown once
    write(
        repo,
        "src/units.rs",
        "pub struct Kibibytes(u64);\npub struct Mebibytes(u64);\n\n"
        "impl From<Kibibytes> for u64 {\n    /// Kibibytes as bytes.\n"
        "    fn from(k: Kibibytes) -> u64 {\n        k.0 * 1024\n    }\n}\n\n"
        "impl From<Mebibytes> for u64 {\n    /// Mebibytes as bytes.\n"
        "    fn from(m: Mebibytes) -> u64 {\n        m.0 * 1024 * 1024\n    }\n}\n"
        + "".join(f"\nfn copy() -> u64 {{\n    {i}\n}}\n" for i in range(3)),
    )
    write(repo, "src/main.rs", 'fn main() {\n    println!("hi");\n}\n')
    commit_all(repo)
    from ncx.code.index import load_code_index
    from ncx.code.rank import search_code

    hits = search_code(
        load_code_index(repo), "convert kibibytes and mebibytes from u64", per_file=5
    )
    froms = [h.signature for h in hits if h.qualname == "u64.from"]
    assert sorted(froms) == ["fn from(k: Kibibytes) -> u64", "fn from(m: Mebibytes) -> u64"]
    copies = search_code(load_code_index(repo), "copy", per_file=5)
    assert [h.qualname for h in copies].count("copy") == 1  # the same definition three times


GO_GENERIC = b"""package cli

// FlagBase is a flag of any value type.
type FlagBase[T any, C any, VC ValueCreator[T, C]] struct {
	Name string
}

// PostParse runs after the flags are parsed.
func (f *FlagBase[T, C, VC]) PostParse() error {
	return nil
}
"""


def test_a_go_method_of_a_generic_type_is_named_by_the_type() -> None:
    # urfave/cli's `func (f *FlagBase[T, C, VC]) PostParse()` read as `VC.PostParse`
    by = _by_qual("go", GO_GENERIC)
    assert "FlagBase.PostParse" in by and "VC.PostParse" not in by
    assert by["FlagBase"].signature.startswith("type FlagBase[T any, C any, VC ValueCreator")


def test_a_typescript_union_alias_on_its_own_lines_has_one_equals_sign() -> None:
    # zod's `export type Target =\n  | "draft-2020-12"\n  | ...` read as `type Target = = | ...`
    by = _by_qual("typescript", b'export type Target =\n  | "draft-2020-12"\n  | "draft-7";\n')
    assert by["Target"].signature == 'type Target = | "draft-2020-12" | "draft-7"'


TS_DIRECTIVES = b"""// eslint-disable-next-line complexity
export function mergeHeaders(source: Headers, extra: Headers): Headers {
	return new Headers([...source, ...extra]);
}

// TODO: Make this strongly-typed (no `any`).
// It still takes every shape.
export const deepMerge = (...sources: any[]): any => sources[0];

// @ts-expect-error: the DOM type lacks it
// Duplex streams need the half option.
export function duplex(): object {
	return {half: true};
}

// Regions of the page are painted in order.
export function paintRegions(): void {}
"""


def test_a_tools_directive_or_a_todo_is_not_shown_as_the_doc() -> None:
    """A linter's switch or a note to the maintainers above a definition says nothing of
    what it does: listed after the lead it printed `eslint-disable-next-line complexity` as
    the definition's one-line doc (a new user's ky frames, decisions.md §68)."""
    docs = {q: s.doc for q, s in _by_qual("typescript", TS_DIRECTIVES).items()}
    assert docs["mergeHeaders"] == ""
    assert docs["deepMerge"] == ""
    assert docs["duplex"] == "Duplex streams need the half option."
    assert docs["paintRegions"] == "Regions of the page are painted in order."


def test_a_head_written_a_parameter_a_line_reads_as_one_would_write_it() -> None:
    from ncx.code.text import MAX_SIGNATURE, one_line

    assert one_line("def field(\n    *,\n    default=None,\n    alias=None,\n)") == (
        "def field(*, default=None, alias=None)"
    )
    assert one_line("fn job(\n    results: Receiver,\n    config: &Config,\n) -> ExitCode") == (
        "fn job(results: Receiver, config: &Config) -> ExitCode"
    )
    long = one_line("def attrs(" + ", ".join(f"p{i}=None" for i in range(60)) + ")")
    assert len(long) <= MAX_SIGNATURE and long.endswith("=None, …")  # a whole parameter last


JS_COMMAND = b"""/**
 * Licensed under MIT.
 */

const EventEmitter = require('node:events').EventEmitter;

class Command extends EventEmitter {
  /**
   * The default output goes to stdout and stderr. You can customise this for special
   * applications.
   *
   * @param {object} [configuration] - configuration options
   * @return {(Command | object)} `this` command for chaining, or stored configuration
   */

  configureOutput(configuration) {
    return this;
  }

  /* a plain block comment a line apart is not a doc */

  helpOption(flags) {
    return this;
  }

  // a line comment a line apart is not a doc either

  usage(str) {
    return this;
  }
}
"""

GO_GAP = b"""package mux

/** not Go's way of writing a doc */

func Route() {}
"""


def test_a_jsdoc_block_a_blank_line_above_is_the_definitions_doc() -> None:
    """decisions.md §85: commander.js writes every method's JSDoc a blank line above it; the
    index and the lead quote lost it (a new user's 5 of 5 commander frames). Only a `/**`
    block crosses the blank line, and not in Go, where a blank line detaches a doc."""
    from ncx.query import zone

    by = _by_qual("javascript", JS_COMMAND)
    assert by["Command.configureOutput"].doc.startswith("The default output goes to stdout")
    assert by["Command.helpOption"].doc == by["Command.usage"].doc == ""
    assert _by_qual("go", GO_GAP)["Route"].doc == ""
    lines = JS_COMMAND.decode().split("\n")
    at = next(i for i, ln in enumerate(lines) if "configureOutput(configuration) {" in ln)
    assert lines[zone.doc_above(lines, at, gap=True)] == "  /**"  # the whole block
    assert zone.doc_above(lines, at, gap=False) == at
    for name in ("helpOption(flags) {", "usage(str) {"):
        k = next(i for i, ln in enumerate(lines) if name in ln)
        assert zone.doc_above(lines, k, gap=True) == k


def test_an_arrow_functions_head_keeps_its_arrow() -> None:
    """`const quoteString = escapedArgument => {` was listed as `quoteString = escapedArgument`,
    an assignment to a reader (a new user's execa frames)."""
    src = b"const quoteString = escapedArgument => {\n\treturn escapedArgument;\n};\n"
    src += b"const getSpecialCharRegExp = () => {\n\treturn /x/;\n};\n"
    by = _by_qual("javascript", src)
    assert by["quoteString"].signature == "quoteString = escapedArgument =>"
    assert by["getSpecialCharRegExp"].signature == "getSpecialCharRegExp = () =>"


def test_a_typescript_type_keyword_is_no_word_of_the_definitions_text() -> None:
    """The walk read every node, and TypeScript's `string` type keyword (a literal token whose
    type holds "string") went into the text of every definition it annotates; a string
    literal's words stay (code index v16, decisions.md §94)."""
    src = (
        b"export function greet(name: string, times: number): string {\n"
        b'  return "hello there " + name;\n'
        b"}\n"
    )
    text = _by_qual("typescript", src)["greet"].text.split()
    assert "hello" in text and "there" in text
    assert "string" not in text, text


TS_MADE_BY_CALLS = b"""export interface $ZodEmail extends $ZodType {
  _zod: $ZodEmailInternals;
}

export const $ZodEmail: core.$constructor<$ZodEmail> = /*@__PURE__*/ core.$constructor(
  "$ZodEmail",
  (inst, def): void => {
    def.pattern ??= regexes.email;
    $ZodStringFormat.init(inst, def);
  }
);

export const useBearStore = create<BearState>()((set) => ({
  bears: 0,
}));

const { left, right } = split(() => 1);

function double(items: number[]) {
  const twice = items.map((x) => x * 2);
  return twice;
}
"""


def test_a_value_made_by_a_call_handed_a_function_is_a_definition() -> None:
    """zod's schemas are `export const $ZodEmail = $constructor("$ZodEmail", (inst, def) =>
    {...})`: ncx read only their interfaces, the implementations were the module's loose
    words, and a task about email validation led with `isValidCIDRv6` for the file (code
    index v17). A module-level value made by a call handed a function is a definition; a
    local `const` inside a function and a destructuring are not."""
    syms = read_code("typescript", TS_MADE_BY_CALLS).symbols
    made = {(s.qualname, s.kind): s for s in syms}
    impl = made[("$ZodEmail", "function")]
    assert (impl.start, impl.end) == (5, 11)
    assert impl.signature == (
        '$ZodEmail: core.$constructor<$ZodEmail> = core.$constructor("$ZodEmail", '
        "(inst, def): void =>"
    )
    assert "regexes" in impl.uses and "init" in impl.uses
    assert ("$ZodEmail", "interface") in made
    assert ("useBearStore", "function") in made
    names = {s.qualname for s in syms}
    assert not names & {"twice", "double.twice", "left", "right", "{ left, right }"}, names
    # a value an array or promise method computes is no definition
    computed = b"export const doubled = [1, 2].map((v) => v * 2);\n"
    assert [s.kind for s in read_code("typescript", computed).symbols] == ["module"]


def test_a_python_modules_constant_table_is_a_definition() -> None:
    """uvicorn's `LOGGING_CONFIG = {...}` (the answer to an access-log question) and
    `HTTP_PROTOCOLS = {...}` (where a new `--http` value lands) were the module's loose
    words. A module-level upper-case name given a dict, list, set or tuple is a definition
    (kind "constant", code index v18); a scalar (`DEFAULT_PORT = 8000`: file recall fell on
    three sets with those), a lower-case name or a local is not."""
    src = b'''"""Config."""
import logging

# The protocols --http accepts.
HTTP_PROTOCOLS: dict[str, str] = {
    "auto": "uvicorn.protocols.http.auto:AutoHTTPProtocol",
    "h11": "uvicorn.protocols.http.h11_impl:H11Protocol",
}
LOGGING_CONFIG = {"formatters": {"access": {"fmt": "%(client_addr)s - %(status_code)s"}}}
DEFAULT_PORT = 8000
logger = logging.getLogger("uvicorn.error")


def run():
    LEVELS = ["info", "debug"]
    return LEVELS
'''
    syms = _by_qual("python", src)
    table = syms["HTTP_PROTOCOLS"]
    assert (table.kind, table.start, table.end) == ("constant", 5, 8)
    assert table.signature == "HTTP_PROTOCOLS: dict[str, str] = {"
    assert table.doc == "The protocols --http accepts."
    assert "h11_impl:H11Protocol" in table.text
    assert (
        syms["LOGGING_CONFIG"].kind == "constant" and "client_addr" in syms["LOGGING_CONFIG"].text
    )
    assert not {"DEFAULT_PORT", "logger", "LEVELS", "run.LEVELS"} & set(syms)


def test_a_go_package_level_table_is_a_definition() -> None:
    """chi's `var methodMap = map[string]methodTyp{...}` (where a commit adding the QUERY
    method lands) was the file's loose words. A package-level var given a composite
    literal is a definition (kind "constant", its doc the comment above, code index v19); a
    scalar (`const mSTUB = 1 << iota`) or a local is not."""
    src = b"""package chi

// methodMap maps a method name to its type.
var methodMap = map[string]methodTyp{
\thttp.MethodGet: mGET,
}

var (
\t// Names lists things.
\tNames = []string{"x",
\t\t"y"}
\tb = 3
)

const mSTUB = 1 << iota

func f() {
\tvar local = map[string]int{"a": 1}
\t_ = local
}
"""
    syms = _by_qual("go", src)
    table = syms["methodMap"]
    assert (table.kind, table.start, table.end) == ("constant", 4, 6)
    assert table.signature == "var methodMap = map[string]methodTyp{"
    assert table.doc == "methodMap maps a method name to its type."
    assert "MethodGet" in table.uses
    assert syms["Names"].kind == "constant" and syms["Names"].doc == "Names lists things."
    assert not {"b", "mSTUB", "local", "f.local"} & set(syms)


def test_a_rust_const_table_is_a_definition() -> None:
    """As Go's and Python's tables: a Rust `const`/`static` given an array, struct or tuple,
    in a module or at the top, is a definition (kind "constant", its `///` doc kept); a scalar
    or one inside a function is not (code index v20)."""
    src = b"""/// Languages bat knows by name.
pub const NAMES: [&str; 3] = [
    "rust",
    "go",
    "ts",
];
const MAX: usize = 10;
mod inner {
    static DEFAULTS: Config = Config { a: 1 };
}
fn f() { const LOCAL: [u8; 2] = [1, 2]; }
"""
    syms = _by_qual("rust", src)
    names = syms["NAMES"]
    assert (names.kind, names.start, names.end) == ("constant", 2, 6)
    assert names.signature == "pub const NAMES: [&str; 3]"
    assert names.doc == "Languages bat knows by name."
    assert syms["inner.DEFAULTS"].kind == "constant"
    assert not {"MAX", "LOCAL", "f.LOCAL"} & set(syms)
    # the usual way to write a static table: a reference to an array
    (keywords,) = [
        s for s in read_code("rust", b'pub const KW: &[&str] = &["a", "b"];\n').symbols if s.name
    ]
    assert (keywords.qualname, keywords.kind) == ("KW", "constant")
