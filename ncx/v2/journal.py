"""journal: what `ncx migrate` changed, kept so that `ncx migrate --rollback` can undo it exactly.

Lives in the git directory (`.git/ncx-migrate/`): never committed, never in `git status`, not
wiped with .neocortex/cache/, and local to the clone that ran the migration. It holds a copy
of .neocortex/ as it was before the first migration (or the fact that there was none), the
original bytes of every other file migrate created or rewrote, the folder moves (--archive),
the hashes of the memories migrate wrote (to spot human edits before discarding them), and what
migrate produced from which v2 source (so a re-run leaves alone what you deleted since).
The first run records the pre-migration state; later runs only add files not seen before, so
re-runs (the pre-commit hook runs one per commit) leave one journal, never a pile of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ncx import repo
from ncx.errors import NcxError
from ncx.layout import NCX_DIR, memories_dir, ncx_dir

_NAME = "ncx-migrate"
_FILE = "journal.json"
_VERSION = 2  # 2 added "outputs"; a version-1 journal reads as one with none recorded yet


def journal_dir(root: Path) -> Path:
    git_dir = Path(repo.git(root, "rev-parse", "--git-dir").decode().strip())
    return (git_dir if git_dir.is_absolute() else root / git_dir) / _NAME


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _memory_sha(data: bytes) -> str:
    # Without the `vec` line: sync adds it after migrate wrote the file; it is derived from
    # the text (a person's edit changes the text, and so this sha), not an edit itself.
    from ncx.store import without_vec

    return _sha(without_vec(data))


@dataclass(frozen=True, slots=True)
class Output:
    """A file migrate produced (repo-relative) and the digest of the v2 source it came from."""

    path: str
    source: str


def _outputs(data: object) -> dict[str, Output]:
    if not isinstance(data, dict):
        return {}
    return {
        str(k): Output(str(v["path"]), str(v["source"]))
        for k, v in data.items()
        if isinstance(v, dict) and "path" in v and "source" in v
    }


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _unreadable(path, str(exc)) from exc
    if not isinstance(data, dict):
        raise _unreadable(path, "not a JSON object")
    return data


def _unreadable(path: Path, why: str) -> NcxError:
    return NcxError(
        f"the migrate journal cannot be read: {why}",
        path=path,
        hint=f"restore it from a backup, or move {path.parent} away to start afresh "
        "(the migration can then no longer be rolled back)",
    )


def read_outputs(root: Path) -> dict[str, Output]:
    """What earlier runs produced, by v2 source key; {} without a journal. Reads only."""
    path = journal_dir(root) / _FILE
    return _outputs(_load(path).get("outputs")) if path.is_file() else {}


@dataclass
class Journal:
    root: Path
    folder: Path
    ncx_existed: bool = False
    files: dict[str, str | None] = field(default_factory=dict)  # path -> saved copy or None
    moved: list[tuple[str, str]] = field(default_factory=list)
    memories: dict[str, str] = field(default_factory=dict)  # memory file -> sha written
    outputs: dict[str, Output] = field(default_factory=dict)  # v2 source key -> what it became

    @classmethod
    def open(cls, root: Path) -> Journal:
        """Load the journal, or start one: snapshot .neocortex/ as it is now."""
        folder = journal_dir(root)
        path = folder / _FILE
        if path.is_file():
            data = _load(path)
            if int(data.get("version", 1)) > _VERSION:
                # Saving it again would drop what this version does not know about.
                raise NcxError(
                    f"the migrate journal was written by a newer ncx (version {data['version']})",
                    path=path,
                    hint="upgrade ncx to run migrate or roll back in this clone",
                )
            return cls(
                root,
                folder,
                bool(data["ncx_existed"]),
                dict(data["files"]),
                [(a, b) for a, b in data["moved"]],
                dict(data["memories"]),
                _outputs(data.get("outputs")),
            )
        j = cls(root, folder, ncx_dir(root).is_dir())
        folder.mkdir(parents=True, exist_ok=True)
        if j.ncx_existed:
            shutil.copytree(ncx_dir(root), folder / NCX_DIR, symlinks=True)
        j.save()
        return j

    def remember(self, rel: str) -> None:
        """Keep the original bytes of `rel` (outside .neocortex/) before it is first changed."""
        if rel in self.files:
            return
        src = self.root / rel
        if src.is_file():
            name = f"files/{len(self.files):05d}"
            (self.folder / "files").mkdir(exist_ok=True)
            shutil.copyfile(src, self.folder / name)
            self.files[rel] = name
        else:
            self.files[rel] = None
        self.save()

    def record_move(self, src: str, dst: str) -> None:
        self.moved.append((src, dst))
        self.save()

    def record_memories(self) -> None:
        """Take every memory present as migrate's own. Only right at the end of the run that
        started the journal: nobody else wrote memories between its snapshot and now. On a
        later run it would also take the memories written by hand since, which rollback would
        then discard without asking."""
        folder = memories_dir(self.root)
        for md in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            self.memories.setdefault(md.name, _memory_sha(md.read_bytes()))
        self.save()

    def record_memory(self, name: str, data: bytes) -> None:
        """Before the memory is written: a run that stops halfway still knows it wrote it."""
        self.memories[name] = _memory_sha(data)
        self.save()

    def record_output(self, key: str, output: Output) -> None:
        self.outputs[key] = output

    def save(self) -> None:
        data = {
            "version": _VERSION,
            "ncx_existed": self.ncx_existed,
            "files": self.files,
            "moved": self.moved,
            "memories": self.memories,
            "outputs": {k: {"path": o.path, "source": o.source} for k, o in self.outputs.items()},
        }
        tmp = self.folder / (_FILE + ".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.folder / _FILE)

    def conflicts(self) -> list[str]:
        """Memories that rollback would discard although migrate did not write them as they are."""
        folder = memories_dir(self.root)
        before = self.folder / NCX_DIR / "memories"
        out = []
        for md in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            data = md.read_bytes()
            orig = before / md.name
            if orig.is_file() and orig.read_bytes() == data:
                continue
            if self.memories.get(md.name) == _memory_sha(data):
                continue
            out.append(md.relative_to(self.root).as_posix())
        return out


@dataclass(frozen=True, slots=True)
class RollbackResult:
    restored: tuple[str, ...]  # files put back as they were
    removed: tuple[str, ...]  # files migrate had created
    moved_back: tuple[tuple[str, str], ...]
    ncx: str  # "removed" (there was no .neocortex/ before) or "restored"


def has_journal(root: Path) -> bool:
    return (journal_dir(root) / _FILE).is_file()


def rollback(root: Path, *, force: bool = False) -> RollbackResult:
    """Put the tree back exactly as it was before the first `ncx migrate`, then drop the journal."""
    if not has_journal(root):
        raise NcxError(
            "nothing to roll back: no migration recorded in this clone",
            path=journal_dir(root),
            hint="rollback works in the clone where `ncx migrate` ran",
        )
    j = Journal.open(root)
    conflicts = j.conflicts()
    if conflicts and not force:
        raise NcxError(
            f"{len(conflicts)} memories were added or edited after the migration and would be "
            f"lost: {', '.join(conflicts[:5])}" + (" ..." if len(conflicts) > 5 else ""),
            path=root,
            hint="copy them somewhere safe, then run `ncx migrate --rollback --force`",
        )
    for src, dst in j.moved:
        if (root / src).exists():
            raise NcxError(
                f"cannot move {dst} back: {src} exists again",
                path=root / src,
                hint=f"move or remove {src}, then roll back again",
            )
    moved_back = []
    for src, dst in reversed(j.moved):
        if (root / dst).exists():
            os.rename(root / dst, root / src)
            moved_back.append((dst, src))
    restored, removed = [], []
    for rel, saved in sorted(j.files.items()):
        target = root / rel
        if saved is None:
            if target.is_file():
                target.unlink()
                removed.append(rel)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(j.folder / saved, target)
            restored.append(rel)
    if ncx_dir(root).exists():
        shutil.rmtree(ncx_dir(root))
    if j.ncx_existed:
        shutil.copytree(j.folder / NCX_DIR, ncx_dir(root), symlinks=True)
    shutil.rmtree(j.folder)
    state = "restored" if j.ncx_existed else "removed"
    return RollbackResult(tuple(restored), tuple(removed), tuple(moved_back), state)
