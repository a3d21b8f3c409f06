"""model: the records code reading produces. Plain frozen values, JSON both ways."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Symbol:
    """One definition: a module, class, function, method, type or interface."""

    name: str  # as written: "send"
    qualname: str  # with its enclosing definitions: "Session.send"
    kind: str  # module | class | function | method | type | interface | ...
    start: int  # 1-based first line (decorators and the leading comment not included)
    end: int  # 1-based last line, inclusive
    signature: str  # the definition's head on one line: "def send(self, request, **kwargs)"
    doc: str  # docstring or leading comment, whitespace collapsed, capped
    uses: tuple[str, ...]  # identifiers the body names (calls, attributes, types), distinct
    text: str = ""  # words of the body's string literals and comments, capped
    # test code inside a source file (Rust's `#[cfg(test)] mod tests`, a `#[test]` fn): ranked
    # as a test file is, whatever the file's path says
    test: bool = False

    def to_json(self) -> list[Any]:
        row = [
            self.name,
            self.qualname,
            self.kind,
            self.start,
            self.end,
            self.signature,
            self.doc,
            list(self.uses),
            self.text,
        ]
        return [*row, True] if self.test else row

    @classmethod
    def from_json(cls, row: list[Any]) -> Symbol:
        name, qual, kind, start, end, sig, doc, uses, text, *test = row
        return cls(name, qual, kind, int(start), int(end), sig, doc, tuple(uses), text, bool(test))


@dataclass(frozen=True)
class CodeFile:
    """What ncx keeps of one source file: its imports and its definitions (the first symbol
    is the module itself: its docstring and what the top level names)."""

    language: str
    lines: int
    imports: tuple[str, ...]  # dotted module names or paths as written in the import
    symbols: tuple[Symbol, ...]
    error: str = ""  # why it could not be read (a syntax error): the file is still a unit
    # (line, kind) of each credential in it (ncx.code.guard): redacted from every text above
    secrets: tuple[tuple[int, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "language": self.language,
            "lines": self.lines,
            "imports": list(self.imports),
            "symbols": [s.to_json() for s in self.symbols],
        }
        if self.error:
            out["error"] = self.error
        if self.secrets:
            out["secrets"] = [list(x) for x in self.secrets]
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> CodeFile:
        return cls(
            language=obj["language"],
            lines=int(obj["lines"]),
            imports=tuple(obj["imports"]),
            symbols=tuple(Symbol.from_json(r) for r in obj["symbols"]),
            error=obj.get("error", ""),
            secrets=tuple((int(n), str(k)) for n, k in obj.get("secrets", ())),
        )
