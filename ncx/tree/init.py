"""init: create or complete the .neocortex/ skeleton. Idempotent: re-running writes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ncx.config import Config
from ncx.embedder import BUNDLED_MODEL, ENV_ORIGIN, load_embedder
from ncx.errors import NotInitialized, UsageError
from ncx.layout import NCX_DIR, chunks_dir, manifest_path, memories_dir, ncx_dir
from ncx.manifest import Manifest, load_manifest

# (`as`: ncx.agents.install imports with_block from here)
from ncx.markers import END, START
from ncx.markers import with_block as with_block
from ncx.store import write_if_changed

GITIGNORE = (
    "# derived, rebuilt on demand (ncx)\ncache/\n"
    "# what `git mergetool` leaves beside a file it was offered: never ncx's\n"
    "*.orig\n*_BACKUP_*\n*_BASE_*\n*_LOCAL_*\n*_REMOTE_*\n"
)
# Text under .neocortex/ is LF in every checkout (core.autocrlf=true must not make every
# chunk differ from what sync writes); vectors are binary (no diff, no text merge, no EOL).
# A doc's chunk file never gets a plain text merge (merge=binary): conflict markers in a
# derived file would only be committed (`git rebase --continue` runs no hook); git keeps
# one side and `ncx sync` rewrites it from the doc. `ncx init` also sets up, for its clone,
# a driver that takes git's text merge when it is clean (ncx.tree.merge). Generated chunk
# files collapse in PR views (linguist); memories stay in full view, for reviewers, and
# keep text merges, for people resolving them.
GITATTRIBUTES_BLOCK = (
    f"{START}\n"
    ".neocortex/** text eol=lf\n"
    ".neocortex/**/*.npy binary\n"
    ".neocortex/chunks/**/*.md merge=binary\n"
    ".neocortex/chunks/** linguist-generated=true\n"
    ".neocortex/manifest.json linguist-generated=true\n"
    f"{END}\n"
)


@dataclass
class InitResult:
    written: list[str] = field(default_factory=list)


def init_tree(
    root: Path,
    cfg: Config,
    *,
    model: str | None,
    exclude: list[str],
    skip_formats: Sequence[str] = (),
) -> InitResult:
    from ncx.paths import NCX_LINK_HINT, check_real_folders

    # A committed `.neocortex` link would carry every write below out of the repository,
    # over its own .gitignore (`-> .`) or into .git/ (`-> .git`).
    check_real_folders(root, f"{NCX_DIR}/x", hint=NCX_LINK_HINT)
    result = InitResult()
    skip = _resolve_formats(skip_formats)

    def put(path: Path, data: bytes) -> None:
        # (A linked chunks/ or memories/ inside .neocortex/ is refused the same way.)
        check_real_folders(root, path.relative_to(root).as_posix(), hint=NCX_LINK_HINT)
        if write_if_changed(path, data):
            result.written.append(path.relative_to(root).as_posix())

    try:
        manifest = load_manifest(root)
        if exclude:
            merged = tuple(sorted(set(manifest.exclude) | set(exclude)))
            manifest = replace(manifest, exclude=merged)
        if skip:
            manifest = replace(
                manifest, skip_formats=tuple(sorted(set(manifest.skip_formats) | set(skip)))
            )
    except NotInitialized:
        model_id = model or cfg.model or BUNDLED_MODEL
        origin = ENV_ORIGIN if not model and cfg.model else None
        info = load_embedder(model_id, cache_root=cfg.model_cache, named_in=origin).info
        manifest = Manifest(
            model=info.as_manifest(), exclude=tuple(sorted(set(exclude))), skip_formats=skip
        )
        if cfg.chunk is not None:
            manifest = manifest.with_chunk(cfg.chunk)
    ncx_dir(root).mkdir(exist_ok=True)
    chunks_dir(root).mkdir(exist_ok=True)
    memories_dir(root).mkdir(exist_ok=True)
    put(manifest_path(root), manifest.to_json().encode())
    put(ncx_dir(root) / ".gitignore", GITIGNORE.encode())
    attrs = root / ".gitattributes"
    # Bytes, decoded, keep CRLF as read: in a core.autocrlf checkout the committed file is CRLF,
    # and an LF block put back into it showed as modified in `git status` (issue 31 item 11).
    have = attrs.read_bytes().decode("utf-8") if attrs.exists() else ""
    block = GITATTRIBUTES_BLOCK.replace("\n", "\r\n") if "\r\n" in have else GITATTRIBUTES_BLOCK
    put(attrs, with_block(have, block).encode())
    for keep in (chunks_dir(root) / ".gitkeep", memories_dir(root) / ".gitkeep"):
        if not keep.exists():
            put(keep, b"")
    from ncx.tree.merge import install_driver

    result.written += install_driver(root)
    return result


def _resolve_formats(names: Sequence[str]) -> tuple[str, ...]:
    """`--skip-format` values (`notebook`, `ipynb`) as format names; UsageError if unknown."""
    from ncx.suffixes import format_names, resolve_format

    out = set()
    for n in names:
        name = resolve_format(n)
        if name is None:
            raise UsageError(
                f"unknown source format {n!r}", hint=f"use one of: {', '.join(format_names())}"
            )
        out.add(name)
    return tuple(sorted(out))
