"""manifest: .neocortex/manifest.json — format version, model, chunker and source settings.

Sorted, indented JSON with a trailing newline, rewritten only when a setting changes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ncx.config import ChunkSettings
from ncx.errors import NcxError, NotInitialized
from ncx.layout import FORMAT_VERSION, manifest_path
from ncx.store import NotRegular, read_regular, write_if_changed


@dataclass(frozen=True, slots=True)
class Manifest:
    model: dict[str, Any]  # {"id", "dim", "sha256"}
    chunk: ChunkSettings = field(default_factory=ChunkSettings)
    exclude: tuple[str, ...] = ()
    format: int = FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, kept on rewrite
    skip_formats: tuple[str, ...] = ()  # source formats switched off (ncx.sources names)
    index_logs: bool = False  # changelogs / release notes indexed too (ncx.sources.log_reason)
    # docs in test fixture folders indexed too (ncx.sources.fixture_reason)
    index_fixtures: bool = False

    def to_json(self) -> str:
        data: dict[str, Any] = dict(self.extra)
        data.update(
            {
                "format": self.format,
                "model": self.model,
                "chunker": {
                    "max_tokens": self.chunk.max_tokens,
                    "min_tokens": self.chunk.min_tokens,
                    "overlap_tokens": self.chunk.overlap_tokens,
                },
                "sources": {
                    "exclude": list(self.exclude),
                    # Written only when set, so trees that never switch a format off keep
                    # their manifest bytes.
                    **({"skip_formats": list(self.skip_formats)} if self.skip_formats else {}),
                    **({"index_logs": True} if self.index_logs else {}),
                    **({"index_fixtures": True} if self.index_fixtures else {}),
                },
            }
        )
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def with_chunk(self, chunk: ChunkSettings) -> Manifest:
        return replace(self, chunk=chunk)


def load_manifest(root: Path) -> Manifest:
    path = manifest_path(root)
    try:
        raw = read_regular(path).decode("utf-8")
    except UnicodeDecodeError:
        raw = "\x00"  # reported as damaged below
    except (IsADirectoryError, NotADirectoryError, NotRegular):  # (a FIFO: never waited on)
        raise NcxError(
            "manifest is not a file",
            path=path,
            hint="restore it with `git checkout -- .neocortex/`",
        ) from None
    except FileNotFoundError:
        raise NotInitialized(
            "no .neocortex/ here",
            path=root,
            hint="run `ncx init` in the repository first",
        ) from None
    return parse_manifest(raw, path)


def parse_manifest(raw: str, path: Path) -> Manifest:
    """The manifest in `raw` (the text of `path`, on disk or in a commit); NcxError if damaged."""
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        fmt = int(data.get("format", 0))
        model = data["model"]
        if not isinstance(model, dict):
            raise ValueError("model is not an object")
        dim = model.get("dim", 0)
        if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim <= 65_536:
            raise ValueError(f"model dim {dim!r} is not a whole number")
        ch = data.get("chunker", {})
        chunk = ChunkSettings(
            int(ch["max_tokens"]), int(ch["min_tokens"]), int(ch["overlap_tokens"])
        )
        if (
            not 20 <= chunk.max_tokens <= 100_000
            or not 0 <= chunk.overlap_tokens < chunk.max_tokens
        ):
            raise ValueError(f"chunker settings {ch!r} make no sense")
        if chunk.min_tokens < 0:
            raise ValueError(f"chunker min_tokens {chunk.min_tokens} is negative")
        exclude = tuple(str(p) for p in data.get("sources", {}).get("exclude", []))
        skip = _skip_formats(data.get("sources", {}).get("skip_formats", []), path)
        index_logs = data.get("sources", {}).get("index_logs", False) is True
        index_fixtures = data.get("sources", {}).get("index_fixtures", False) is True
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        raise NcxError(
            f"manifest is damaged ({exc})",
            path=path,
            hint="restore it with `git checkout -- .neocortex/manifest.json`",
        ) from None
    if fmt > FORMAT_VERSION:
        raise NcxError(
            f"made by a newer ncx (format {fmt}, this ncx reads {FORMAT_VERSION})",
            path=path,
            hint="upgrade ncx: pip install -U ncx",
        )
    extra = {k: v for k, v in data.items() if k not in ("format", "model", "chunker", "sources")}
    return Manifest(
        model=model,
        chunk=chunk,
        exclude=exclude,
        format=fmt,
        extra=extra,
        skip_formats=skip,
        index_logs=index_logs,
        index_fixtures=index_fixtures,
    )


def _skip_formats(raw: Any, path: Path) -> tuple[str, ...]:
    """`sources.skip_formats`: format names (`notebook`) or suffixes (`.ipynb`), checked."""
    from ncx.suffixes import format_names, resolve_format

    if not isinstance(raw, list):
        raw = [raw]
    out = []
    for item in raw:
        name = resolve_format(str(item))
        if name is None:
            raise NcxError(
                f"sources.skip_formats names an unknown format {item!r}",
                path=path,
                hint=f"use one of: {', '.join(format_names())}",
            )
        out.append(name)
    return tuple(sorted(set(out)))


def save_manifest(root: Path, manifest: Manifest) -> bool:
    return write_if_changed(manifest_path(root), manifest.to_json().encode())


def older_format(manifest: Manifest) -> str | None:
    """What to do about a tree of an older chunk-file format (None: it is current). The
    judge and `ncx check` both say it, instead of a finding per chunk file."""
    if manifest.format >= FORMAT_VERSION:
        return None
    return (
        f"is format {manifest.format}; this ncx keeps one chunk file per doc (format "
        f"{FORMAT_VERSION}): run `ncx init` and `ncx sync` once (they move every doc's "
        "chunks, re-embedding nothing) and commit .gitattributes and .neocortex"
    )
