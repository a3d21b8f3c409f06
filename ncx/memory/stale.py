"""stale: which memories cite something that changed, kept where memories are kept up to date.

A memory's staleness (ncx.memory.cites) depends on its own file and on the files it cites: a
cited source file, or a cited section's chunk file. `ncx sync` (and so every hook that
syncs) works out each memory's stale citations and stores them in `cache/stale.json` with
the stat of every file the answer was read from. A frame or a ranking then asks this table
(`Staleness.of`): an entry whose files all stat as recorded is answered from the table, with
no memory read and no code parsed; only an entry whose files changed since (an edit not synced
yet, a memory added since) is worked out again, from the files as they are now, so the answer
is always the work tree's (docs/decisions.md §36). The read path writes nothing; sync does.

A stat is trusted only when the file was last written well before the entry was made (git's
"racily clean" rule): an edit in the same clock tick as the sync that recorded it would
otherwise keep the same stat and go unseen.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ncx.layout import chunk_file_paths, memories_dir
from ncx.memory.cites import (
    Cite,
    Reader,
    StaleCite,
    cites_of,
    stale_cites,
    work_tree_reader,
)

TABLE = "stale.json"  # under cache/
VERSION = 1
RACY_NS = 2_000_000_000  # a file written this close before an entry was made is re-read

Stat = list[int] | None  # (mtime_ns, ctime_ns, size, ino), None: not there / not readable


def _stat(root: Path, rel: str) -> Stat:
    from ncx.paths import rel_problem

    if rel_problem(rel) is not None or rel.startswith("/"):
        return None  # never read (it reads as gone), never stat'ed outside the repository
    try:
        st = os.lstat(root / rel)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino]


def _inputs(cite: Cite) -> str:
    """The file `cite`'s current hash is read from."""
    return chunk_file_paths([cite.path])[cite.path] if cite.section else cite.path


class Staleness:
    """Each memory file's stale citations: the stored table where its files are unchanged,
    worked out again where they changed. One per query (files may change between queries)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._stored = _load(root)
        self._now: dict[str, dict[str, Any]] = {}
        self._read: Reader | None = None

    def of(self, rel: str) -> list[StaleCite]:
        """The stale citations of the memory file `rel` (root-relative), [] for a file that
        does not parse (`ncx check` reports it)."""
        if rel not in self._now:
            entry = self._stored.get(rel)
            try:
                if entry is not None and self._holds(entry):
                    [_from_json(s) for s in entry["stale"]]  # a hand-broken one is redone
                    self._now[rel] = entry
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                pass
            if rel not in self._now:
                fresh = self._work(rel)
                same = entry is not None and all(
                    entry.get(k) == fresh[k] for k in ("inputs", "stale")
                )
                # the same answer from the same files keeps its entry (and so a sync that
                # changed nothing writes the same bytes); its older time trusts it no sooner
                self._now[rel] = entry if same and entry is not None else fresh
        return [_from_json(s) for s in self._now[rel]["stale"]]

    def save(self) -> None:
        """Write the entries looked at (sync: all of them); a read-only cache is skipped."""
        from ncx.errors import NcxError
        from ncx.paths import cache_file
        from ncx.store import write_if_changed

        blob = {"version": VERSION, "memories": dict(sorted(self._now.items()))}
        try:
            data = json.dumps(blob, sort_keys=True).encode()
            write_if_changed(cache_file(self.root, TABLE), data, follow=False)
        except (OSError, NcxError):  # a read-only cache, a link in its place
            pass  # answered the same way next time, only from the files

    def _holds(self, entry: dict[str, Any]) -> bool:
        made = entry.get("made", 0)
        for rel, was in entry.get("inputs", {}).items():
            if _stat(self.root, rel) != was or (was is not None and was[0] + RACY_NS > made):
                return False
        return True

    def _work(self, rel: str) -> dict[str, Any]:
        from ncx.errors import NcxError
        from ncx.memory.file import read_memory

        made = time.time_ns()  # before any stat: a write after this is never trusted
        inputs: dict[str, Stat] = {rel: _stat(self.root, rel)}  # stat before the read
        try:
            mem = read_memory(self.root / rel)
        except (NcxError, OSError):
            return {"made": made, "inputs": inputs, "stale": []}
        cites = cites_of(mem.meta)
        for c in cites:
            inputs.setdefault(_inputs(c), _stat(self.root, _inputs(c)))
        if self._read is None:
            self._read = work_tree_reader(self.root)
        found = stale_cites(self.root, mem.id, cites, self._read)
        return {"made": made, "inputs": inputs, "stale": [_to_json(s) for s in found]}


def refresh(root: Path) -> None:
    """Work out every memory's stale citations now and store them (sync's last step). No
    memories: nothing is written."""
    folder = memories_dir(root)
    files = sorted(folder.glob("*.md")) if folder.is_dir() else []
    if not files:
        return
    table = Staleness(root)
    for md in files:
        table.of(md.relative_to(root).as_posix())
    table.save()


def stale_memories(root: Path, read: Reader | None = None) -> list[StaleCite]:
    """Every stale citation of the live (active or proposed) memories, by memory id."""
    from ncx.memory.ops import list_memories

    read = read or work_tree_reader(root)
    found, _ = list_memories(root)
    out: list[StaleCite] = []
    for mem in found:
        if mem.status in ("active", "proposed"):
            out += stale_cites(root, mem.id, cites_of(mem.meta), read)
    return out


def _load(root: Path) -> dict[str, dict[str, Any]]:
    from ncx.paths import UnsafePath, read_cache

    try:
        blob = json.loads(read_cache(root, TABLE))
    except (OSError, ValueError, UnsafePath):
        return {}
    if not isinstance(blob, dict) or blob.get("version") != VERSION:
        return {}
    got = blob.get("memories")
    return got if isinstance(got, dict) else {}


def _to_json(s: StaleCite) -> dict[str, Any]:
    return {"memory": s.memory, "cite": s.cite.to_meta(), "gone": s.gone}


def _from_json(d: dict[str, Any]) -> StaleCite:
    c = d["cite"]
    cite = Cite(c["path"], c.get("symbol", ""), c.get("section", ""), c["hash"])
    return StaleCite(d["memory"], cite, bool(d["gone"]))
