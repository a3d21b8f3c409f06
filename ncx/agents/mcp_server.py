"""mcp_server: `ncx mcp` — the tree's query and capture side as MCP tools over stdio.

Four tools: assemble, retrieve, remember (a *proposed* memory, for review in the PR) and
status. Only this module imports the MCP SDK (the optional extra `ncx[mcp]`), and only
when the server is built.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations at runtime
# (their JSON schemas), and `Field` is imported inside build_server, out of the module's reach.
import re
import threading
from collections.abc import Collection
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from ncx.config import Config
from ncx.controls import strip_controls
from ncx.errors import NcxError

INSTRUCTIONS = (
    "Project knowledge for this repository, kept in its git repo under .neocortex/. "
    "Call `assemble` with the task before you start work on it; `retrieve` to look "
    "something up; `remember` to save one learning a later session should know (it is "
    "saved as proposed, for review); `status` for the tree's size and health."
)


class _Tree:
    """The repo and a Searcher reused across calls (the model loads once per server).

    `problem`: why there is no repository to serve (started outside one); every tool
    answers with it, so the client reads a message instead of a dead process."""

    def __init__(self, root: Path, cfg: Config, problem: NcxError | None = None):
        self.root, self.cfg, self.problem = root, cfg, problem
        self.lock = threading.Lock()  # the SDK runs sync tools in worker threads
        self._searcher: Any = None
        self._model: Any = None

    def ready(self) -> None:
        if self.problem is not None:
            raise self.problem

    def model(self) -> Any:
        from ncx.memory.ops import load_tree_model

        if self._model is None:
            self._model = load_tree_model(self.root, self.cfg)
        return self._model

    def searcher(self, query: str | None = None) -> Any:
        """The searcher for a call (about `query`): the cache is built by the first call
        that needs it, in a fresh clone too, so every call answers from the whole cache
        (docs/decisions.md §44); later calls pick up syncs and new memories."""
        from ncx.query.cache import load_index
        from ncx.query.search import Searcher

        if self._searcher is None:
            self._searcher = Searcher.open(self.root, self.cfg)
        else:
            self._searcher.index = load_index(self.root)  # pick up syncs and new memories
        return self._searcher


_SHELL = re.compile(r"(`ncx [^`]*`)")  # a command for the user's shell: kept as written
_FLAG = re.compile(r"--([a-z][\w-]*)(?:[ =](\"[^\"]*\"|\d+))?")


def mcp_hint(hint: str, args: Collection[str]) -> str:
    """A CLI hint restated for an MCP client: a flag that is also an argument of the tool
    becomes `name=value` (`--force` -> `force=true`, `--budget 200` -> `budget=200`);
    `ncx …` commands stay, marked as the user's to run."""
    parts = _SHELL.split(hint)

    def arg(m: "re.Match[str]") -> str:
        name = m.group(1).replace("-", "_")
        return f"{name}={m.group(2) or 'true'}" if name in args else m.group(0)

    text = "".join(p if i % 2 else _FLAG.sub(arg, p) for i, p in enumerate(parts))
    return text + (" (`ncx …`: ask the user to run it)" if len(parts) > 1 else "")


def _tool_error(exc: NcxError, args: Collection[str] = ()) -> Exception:
    from mcp.server.mcpserver.exceptions import ToolError

    hint = mcp_hint(exc.hint, args) if exc.hint else ""
    return ToolError(strip_controls(f"{exc}" + (f" (hint: {hint})" if hint else "")))


def _safe_dict(value: dict[str, Any]) -> dict[str, Any]:
    return {k: _safe(v) for k, v in value.items()}


def _safe(value: Any) -> Any:
    """A tool's answer with terminal controls taken out of every string in it: a client may
    show it on a terminal, and a doc's or a task's `ESC ]` must not drive that terminal."""
    if isinstance(value, str):
        return strip_controls(value)
    if isinstance(value, dict):
        return {k: _safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_safe(v) for v in value]
    return value


def build_server(root: Path, cfg: Config, *, problem: NcxError | None = None) -> Any:
    """An MCPServer with ncx's four tools, bound to the repository at `root`; with `problem`
    (no repository to serve), each tool answers with that error."""
    from mcp.server.mcpserver import MCPServer
    from pydantic import Field

    from ncx import version

    tree = _Tree(root, cfg, problem)
    instructions = INSTRUCTIONS
    if problem is not None:
        instructions = strip_controls(f"Not serving a repository: {problem}. ") + instructions
    server: Any = MCPServer(
        "ncx", instructions=instructions, version=version(), log_level="WARNING"
    )
    assemble_args, remember_args = ("task", "criteria", "budget"), ("learning", "force")

    def assemble(
        task: Annotated[str, Field(description="What you are about to do, in one line.")],
        criteria: Annotated[
            list[str] | None, Field(description="Acceptance criteria, one per item.")
        ] = None,
        budget: Annotated[
            int, Field(ge=200, le=100_000, description="Hard token budget for the frame.")
        ] = 4000,
    ) -> str:
        from ncx.query.context import FrameRequest, build_frame
        from ncx.query.search import clip_query

        query, note = clip_query(" ".join([task, *(criteria or ())]))
        task = clip_query(task)[0]
        criteria = [clip_query(c)[0] for c in criteria or ()]
        req = FrameRequest(task=task, criteria=tuple(criteria), budget=budget)
        try:
            tree.ready()
            with tree.lock:
                frame = build_frame(tree.root, tree.cfg, req, searcher=tree.searcher(query))
        except NcxError as exc:
            raise _tool_error(exc, assemble_args) from None
        return strip_controls(str(frame.markdown)) + (f"\n<!-- ncx: {note} -->\n" if note else "")

    def retrieve(
        query: Annotated[str, Field(description="What to look for, in words.")],
        k: Annotated[int, Field(ge=1, le=50, description="How many results.")] = 8,
        kind: Annotated[
            Literal["chunk", "memory", "code"] | None,
            Field(description="Only chunks (doc sections), memories, or code definitions."),
        ] = None,
        domain: Annotated[
            str | None, Field(description="Only knowledge of this domain, e.g. auth.")
        ] = None,
    ) -> dict[str, Any]:
        from ncx.query.rank import Filters

        filters = Filters(
            kinds=frozenset({kind} if kind else ()),
            domains=frozenset({domain.lower()} if domain else ()),
        )
        from ncx.query.search import clip_query

        query, note = clip_query(query)
        try:
            tree.ready()
            with tree.lock:
                from ncx.code.search import CodeSearcher
                from ncx.query.fuse import combined

                s = tree.searcher(query)
                results = combined(s, CodeSearcher(tree.root), query, k, filters)
        except NcxError as exc:
            raise _tool_error(exc) from None
        return {"results": _safe(results), **({"note": note} if note else {})}

    def remember(
        learning: Annotated[str, Field(description="The fact, in one or two sentences.")],
        context: Annotated[str, Field(description="Why or where it was learned.")] = "",
        type: Annotated[
            Literal["factual", "experiential", "procedural"],
            Field(
                description="factual (how things are), experiential (what happened), "
                "procedural (how to do something)."
            ),
        ] = "factual",
        domain: Annotated[str | None, Field(description="Area, e.g. auth.")] = None,
        keywords: Annotated[list[str] | None, Field(description="A few keywords.")] = None,
        related_docs: Annotated[
            list[str] | None, Field(description="Repo paths of docs it concerns.")
        ] = None,
        force: Annotated[
            bool,
            Field(description="Save it even if it is close to an existing memory."),
        ] = False,
    ) -> dict[str, Any]:
        from ncx.memory.ops import DuplicateMemory, NewMemory, add_memory
        from ncx.query.search import neighbours

        new = NewMemory(
            learning=learning,
            context=context,
            type=type,
            domain=domain,
            keywords=tuple(keywords or ()),
            related_docs=tuple(related_docs or ()),
            status="proposed",
            provenance="mcp",
        )
        try:
            tree.ready()
            with tree.lock:
                added = add_memory(
                    tree.root,
                    new,
                    embedder=tree.model(),
                    neighbours=neighbours,
                    today=date.today(),
                    force=force,
                )
        except DuplicateMemory as exc:
            from mcp.server.mcpserver.exceptions import ToolError

            raise ToolError(
                strip_controls(f"{exc}")
                + f" (hint: if it says something {exc.existing} does not, call remember "
                f"again with force=true; if {exc.existing} is wrong, tell the user, who can "
                f'correct it with `ncx memory evolve {exc.existing} --incorrect "..."`)'
            ) from None
        except NcxError as exc:
            raise _tool_error(exc, remember_args) from None
        return _safe_dict(
            {
                "id": added.memory.id,
                "status": "proposed",
                "written": list(added.written),
                "related": [{"id": r.id, "similarity": r.similarity} for r in added.related],
            }
        )

    def status() -> dict[str, Any]:
        from ncx.tree.status import tree_status

        try:
            tree.ready()
            with tree.lock:
                return _safe_dict(tree_status(tree.root, tree.cfg).to_json())
        except NcxError as exc:
            raise _tool_error(exc) from None

    server.add_tool(
        assemble,
        name="assemble",
        title="Context frame for a task",
        description="Build a context frame for a task: the task, the most relevant doc "
        "sections (cited as path:lines), past learnings, the current git state and "
        "instructions, within a hard token budget. Call it before starting a task. "
        "Returns markdown.",
    )
    server.add_tool(
        retrieve,
        name="retrieve",
        title="Search project knowledge",
        description="Find the doc sections (chunks) and memories that best match a query "
        "(BM25F plus static embeddings). Each result has id, kind, source_path, start_line, "
        "end_line, section, score and the full text.",
    )
    server.add_tool(
        remember,
        name="remember",
        title="Save a learning (proposed)",
        description="Save one learning a later session should know — a gotcha, a decision "
        "and its reason, a procedure that worked — as a memory with status 'proposed' (a "
        "person approves it in review). One fact per call. Refused if it holds a "
        "credential-shaped value or repeats an existing memory.",
    )
    server.add_tool(
        status,
        name="status",
        title="Tree status",
        description="A short summary of the project's knowledge tree: docs, chunks, "
        "memories, the embedding model, stale docs (run `ncx sync`) and problems "
        "(run `ncx check`).",
    )
    return server


def serve_stdio(server: Any) -> None:
    """Run `server` over stdio, answering what is not a JSON-RPC message.

    The SDK's stdio transport drops such a line without a word, so a client that sent it
    waits forever; JSON-RPC 2.0 wants an error: -32700 for text that is not JSON, -32600 for
    JSON that is not a request, notification or response (`screen` says which)."""
    import anyio

    anyio.run(_serve_stdio, server)


def screen(line: str) -> Any:
    """The error reply a stdin line gets instead of reaching the SDK, or None (it goes on).

    What the SDK would misread: a request whose `params` is not an object (its error went out
    with id null, so the client waited on its own id forever); an id that is null, an object,
    a float or a boolean (MCP: a string or an integer; the SDK read the message as a
    notification and answered nothing); a batch (MCP has none: one message a line)."""
    import json

    from mcp import types
    from pydantic import ValidationError

    def error(code: int, message: str, ident: Any = None) -> Any:
        data = types.ErrorData(code=code, message=message)
        return types.JSONRPCError(jsonrpc="2.0", id=ident, error=data)

    try:
        data = json.loads(line)
    except ValueError:
        return error(types.PARSE_ERROR, "Parse error: not JSON")
    if isinstance(data, list):
        return error(
            types.INVALID_REQUEST,
            "Invalid Request: a batch (JSON array); MCP has no batches: send one message a line",
        )
    if not isinstance(data, dict):
        return error(types.INVALID_REQUEST, "Invalid Request: not a JSON object")
    ident = data.get("id")
    good_id = isinstance(ident, str | int) and not isinstance(ident, bool)
    if "method" in data and "id" in data and not good_id:
        return error(
            types.INVALID_REQUEST, "Invalid Request: the id must be a string or an integer"
        )
    try:
        types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError:
        params_ok = isinstance(data.get("params", {}), dict)
        return error(
            types.INVALID_REQUEST,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
            + ("" if params_ok else " (params must be an object)"),
            ident if good_id and "method" in data else None,
        )
    return None


class _ScreenedLines:
    """The lines of `lines` that `screen` passes; each other one is answered through `reject`."""

    def __init__(self, lines: Any, reject: Any) -> None:
        self._lines, self._reject = lines, reject

    def __aiter__(self) -> Any:
        return self._pass()

    async def _pass(self) -> Any:
        async for line in self._lines:
            reply = screen(line)
            if reply is None:
                yield line
            else:
                await self._reject(reply)


def _claimed_stdin() -> Any:
    """stdin for the transport, from a private copy of fd 0; fd 0 itself then reads
    /dev/null, so no tool or child process can consume the client's bytes (what the SDK does
    when it opens stdin itself)."""
    import io
    import os
    import sys

    import anyio

    try:
        wire = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        raw: Any = os.fdopen(wire, "rb")
    except OSError:
        raw = sys.stdin.buffer
    return anyio.wrap_file(io.TextIOWrapper(raw, encoding="utf-8", errors="replace"))


async def _serve_stdio(server: Any) -> None:
    import anyio
    from mcp import types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async serves too
    rejected, to_answer = anyio.create_memory_object_stream[Any](16)
    stdin = _ScreenedLines(_claimed_stdin(), rejected.send)
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type,unused-ignore]
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def answer() -> None:
            async with to_answer:
                async for reply in to_answer:
                    await write_stream.send(SessionMessage(reply))

        async def forward() -> None:
            async with send, rejected:
                async for item in read_stream:
                    if not isinstance(item, Exception):
                        await send.send(item)
                        continue
                    # `screen` passed it and the SDK did not: answered all the same
                    error = types.ErrorData(
                        code=types.INVALID_REQUEST,
                        message="Invalid Request: not a JSON-RPC 2.0 request, notification or "
                        "response",
                    )
                    reply = types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
                    await write_stream.send(SessionMessage(reply))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer)
            tasks.start_soon(forward)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
