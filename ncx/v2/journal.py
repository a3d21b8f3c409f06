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
_LOG = "journal.log"  # records of the run in progress, folded into journal.json at its end
_VERSION = 2  # 2 added "outputs"; a version-1 journal reads as one with none recorded yet


def journal_dir(root: Path) -> Path:
    git_dir = Path(repo.git_path_out(repo.git(root, "rev-parse", "--git-dir")))
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
    return Journal.open(root).outputs if path.is_file() else {}


@dataclass
class Journal:
    root: Path
    folder: Path
    ncx_existed: bool = False
    files: dict[str, str | None] = field(default_factory=dict)  # path -> saved copy or None
    moved: list[tuple[str, str]] = field(default_factory=list)
    memories: dict[str, str] = field(default_factory=dict)  # memory file -> sha written
    outputs: dict[str, Output] = field(default_factory=dict)  # v2 source key -> what it became
    # file (outside .neocortex/) -> sha of the bytes migrate left there: rollback restores a
    # file only while it still holds them, so an edit made since is never overwritten
    written: dict[str, str | None] = field(default_factory=dict)

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
            j = cls(
                root,
                folder,
                bool(data["ncx_existed"]),
                dict(data["files"]),
                [(a, b) for a, b in data["moved"]],
                dict(data["memories"]),
                _outputs(data.get("outputs")),
                dict(data.get("written") or {}),
            )
            j._replay()
            return j
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
        self._log({"file": rel, "copy": self.files[rel]})

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
        self._log({"memory": name, "sha": self.memories[name]})

    def record_output(self, key: str, output: Output) -> None:
        """After the file exists: an output recorded but never written would read, on the next
        run, as a file you deleted, and would never be written."""
        self.outputs[key] = output
        self._log({"output": key, "path": output.path, "source": output.source})

    def record_written(self, rel: str) -> None:
        """What migrate left in `rel` (outside .neocortex/), after writing it."""
        target = self.root / rel
        self.written[rel] = _sha(target.read_bytes()) if target.is_file() else None
        self._log({"written": rel, "sha": self.written[rel]})

    # Every record is appended to journal.log, flushed, before the change it describes, and
    # folded into journal.json by save() at the end of a run: re-writing the whole journal per
    # record made a 10,000-entry migration quadratic (354 s against a 4.8 s dry run).
    def _log(self, record: dict[str, Any]) -> None:
        with open(self.folder / _LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
            f.flush()

    def _replay(self) -> None:
        """Apply the records of a run that stopped before save() (a torn last line is skipped)."""
        try:
            lines = (self.folder / _LOG).read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        for line in lines:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # the line a kill cut short: its change never happened
            if "file" in r:
                self.files.setdefault(r["file"], r["copy"])
            elif "memory" in r:
                self.memories[r["memory"]] = r["sha"]
            elif "output" in r:
                self.outputs[r["output"]] = Output(r["path"], r["source"])
            elif "written" in r:
                self.written[r["written"]] = r["sha"]

    def save(self) -> None:
        data = {
            "version": _VERSION,
            "ncx_existed": self.ncx_existed,
            "files": self.files,
            "moved": self.moved,
            "memories": self.memories,
            "outputs": {k: {"path": o.path, "source": o.source} for k, o in self.outputs.items()},
            "written": self.written,
        }
        tmp = self.folder / (_FILE + ".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.folder / _FILE)
        (self.folder / _LOG).unlink(missing_ok=True)  # folded in

    def edited_since(self) -> list[str]:
        """Files outside .neocortex/ that no longer hold what migrate left in them."""
        out = []
        for rel, sha in sorted(self.written.items()):
            target = self.root / rel
            now = _sha(target.read_bytes()) if target.is_file() else None
            if now != sha:
                out.append(rel)
        return out

    def conflicts(self) -> list[str]:
        """Files under .neocortex/ that rollback would discard although migrate did not write
        them as they are: memories, and files of yours such as state.md (chunk files, the cache,
        the manifest and .gitignore are ncx's own, rebuilt from the docs)."""
        folder = memories_dir(self.root)
        before = self.folder / NCX_DIR / "memories"
        out = []
        ncx = ncx_dir(self.root)
        ncx_own = {"chunks", "cache", "memories", "manifest.json", ".gitignore"}
        for path in sorted(ncx.rglob("*")) if ncx.is_dir() else []:
            rel = path.relative_to(ncx)
            if rel.parts[0] in ncx_own or not path.is_file():
                continue
            orig = self.folder / NCX_DIR / rel
            if not (orig.is_file() and orig.read_bytes() == path.read_bytes()):
                out.append(path.relative_to(self.root).as_posix())
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
    edited = j.edited_since()
    if (conflicts or edited) and not force:
        what = [f"memory {c}" for c in conflicts] + [f"{e} (edited since)" for e in edited]
        raise NcxError(
            f"{len(what)} files were added or edited after the migration: "
            + ", ".join(what[:5])
            + (" ..." if len(what) > 5 else ""),
            path=root,
            hint="copy them somewhere safe, then run `ncx migrate --rollback --force` "
            "(files outside .neocortex/ edited since are kept as they are, even then)",
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
        if rel in edited:
            continue  # your work since the migration: never overwritten
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
