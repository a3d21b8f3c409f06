"""staged: does what the next commit holds agree with itself? Staged docs against staged units.

The judge of the pre-commit hooks. It reads only the git index (`git diff --cached`,
`git ls-files -s`, `git cat-file --batch`), never the working tree and never a cache, so a
doc staged without its chunks, chunks staged without their doc, a partial `git add -p`, a
retry that did not stage the hook's output, `git checkout -- .neocortex` or one side of a
conflict taken for a .md and the other for its .npy are all seen. A chunk .md's `vec` is
checked against the blob id git already has for its .npy, so no vector is read and no model
loaded. Cost grows with the change: the units checked are those of the docs, sidecars,
chunk folders and memories the commit touches; a commit touching none costs one git call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ncx import repo
from ncx.config import Config
from ncx.errors import NcxError
from ncx.layout import (
    CHUNKS,
    MANIFEST,
    MEMORIES,
    NCX_DIR,
    chunk_file_paths,
    doc_chunk_file,
    is_inside_ncx,
)
from ncx.sources import format_of
from ncx.tree.touched import SIDECAR_SUFFIX, SOURCES

if TYPE_CHECKING:
    from ncx.manifest import Manifest
    from ncx.sources.includes import Fetch
    from ncx.tree.chunkfile import ChunkBlock

_CHUNKS = f"{NCX_DIR}/{CHUNKS}/"
_MEMORIES = f"{NCX_DIR}/{MEMORIES}/"
_DOC_EXTS = (".md", ".markdown", ".MD", ".Md", ".MARKDOWN")


@dataclass(frozen=True, slots=True)
class Change:
    """One staged change as git reports it (renames detected: `old` is the source path)."""

    status: str  # A, M, D, R, C, T, U
    path: str
    old: str | None = None


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing wrong in the index: the file, what is wrong, and whose doc it is."""

    path: str
    message: str
    doc: str | None = None  # the doc whose chunk files are wrong; None for memories
    syncable: bool = False  # `ncx sync` makes it right (stale units, not broken docs)
    reembed: bool = False  # `ncx sync --reembed` makes it right (another model's vectors)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True, slots=True)
class Scope:
    """What a commit touches, as doc paths and memory stems (candidates; may be absent)."""

    docs: frozenset[str] = frozenset()
    memories: frozenset[str] = frozenset()
    changed_docs: frozenset[str] = frozenset()  # docs (and sidecars' docs) the commit changes
    everything: bool = False  # the manifest changed: every unit is in scope
    leftovers: frozenset[str] = frozenset()  # files of the older chunk format it touches

    @property
    def empty(self) -> bool:
        return not (self.docs or self.memories or self.everything or self.leftovers)


@dataclass
class Verdict:
    findings: list[Finding] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)  # docs in the index that were checked
    units: int = 0  # chunk and memory files checked
    # Memories holding git's conflict markers, and the command that ends it once they are
    # resolved by hand (`ncx sync --reembed` where the merge mixes two models' vectors).
    marked: list[str] = field(default_factory=list)
    after_markers: str = "ncx sync"

    def stale_docs(self) -> list[str]:
        return sorted({f.doc for f in self.findings if f.doc is not None})


def staged_changes(root: Path) -> list[Change]:
    """Every staged change against HEAD (or the empty tree before the first commit)."""
    return changes(root, "--cached")


def changes(root: Path, *revs: str) -> list[Change]:
    """`git diff --name-status -M` between `revs` (e.g. `--cached`, or BASE HEAD), parsed."""
    out = repo.git(root, "diff", "--name-status", "-M", "-z", *revs)
    parts = out.decode("utf-8", "surrogateescape").split("\0")
    found, i = [], 0
    while i < len(parts) - 1 and parts[i]:
        status = parts[i]
        if status[0] in "RC":
            found.append(Change(status[0], parts[i + 2], parts[i + 1]))
            i += 3
        else:
            found.append(Change(status[0], parts[i + 1]))
            i += 2
    return found


def verify_range(root: Path, cfg: Config, base: str, head: str = "HEAD") -> Verdict:
    """Judge what commit `head` holds for everything it changed since its merge base with
    `base`: the pre-commit judgement over a branch, for CI and pre-push. Cost grows with the
    branch's change, not the tree (design.md invariant 8); a base that was itself checked
    when it landed is trusted, the way each commit's hook trusted its parent."""
    for rev in (base, head):
        if not repo.git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False):
            raise NcxError(
                f"{rev!r} is not a commit here",
                path=root,
                hint="name a branch, tag or commit (in CI, fetch it: `git fetch origin main`)",
            )
    if not repo.git(root, "merge-base", base, head, check=False).strip():
        raise NcxError(
            f"{base} and {head} have no common commit here (a shallow clone?)",
            path=root,
            hint="fetch more history (`git fetch --unshallow`, or actions/checkout with "
            "fetch-depth: 0), or check the whole tree with `ncx check`",
        )
    scope = scope_here(root, changes(root, f"{base}...{head}"))
    if not repo.git(
        root, "rev-parse", "--verify", "--quiet", f"{head}:{NCX_DIR}/{MANIFEST}", check=False
    ):
        return Verdict()  # `head` is from before ncx was set up: nothing to judge
    if scope.everything:
        return verify(root, cfg, None, tree=head)
    # The base is trusted, but a commit in it made without the hooks (a teammate's doc
    # edit, pushed as it was) is not what any hook judged: the docs recent commits changed
    # without their chunk files are judged too (issue 36, f64).
    unsynced = {d: c for d, c in unsynced_docs(root, head).items() if d not in scope.docs}
    if scope.empty and not unsynced:
        return Verdict()  # nothing of ncx changed
    scope = with_docs(scope, unsynced)
    return noted(verify(root, cfg, scope, tree=head), unsynced)


# How far back the hooks and `check --since` look for a commit that changed a doc without
# its chunk file (docs/decisions.md §42): the last commits of HEAD's history, not counting
# merges. Older ones are left to pre-push's whole-tree check and CI's `ncx check`.
UNSYNCED_WINDOW = 100


def unsynced_docs(root: Path, rev: str = "HEAD") -> dict[str, str]:
    """{doc: the newest commit that changed it} for the docs that one of the last
    UNSYNCED_WINDOW commits of `rev` changed without changing its chunk file: candidates
    for a stale base (a clone without the hooks), judged by `verify`. Two git calls,
    O(window), whatever the tree's size."""
    from ncx import suffixes

    revs = repo.git(
        root, "rev-list", "--no-merges", f"--max-count={UNSYNCED_WINDOW}", rev, check=False
    )
    if not revs.strip():
        return {}
    specs = [*suffixes.pathspecs(*suffixes.BY_FORMAT), f"{NCX_DIR}/{CHUNKS}/", _MANIFEST]
    raw = repo.git(
        root,
        "diff-tree",
        "--stdin",
        "--root",
        "-r",
        "--name-only",
        "-z",
        "--",
        *specs,
        input=revs,
        check=False,
    )
    found: dict[str, str] = {}
    commit, paths = "", set[str]()

    def close() -> None:
        for p in sorted(paths):
            if not is_inside_ncx(p) and doc_chunk_file(p) not in paths:
                found.setdefault(p, commit)  # (newest first: rev-list's order)

    for part in raw.decode("utf-8", "surrogateescape").split("\0"):
        if _COMMIT_ID.fullmatch(part):
            close()
            if _MANIFEST in paths:
                # The tree was set up or rebuilt whole here (`ncx init`, a model switch):
                # older commits are not the base's story (a project's history before
                # ncx changed every doc without chunk files).
                return found
            commit, paths = part, set()
        elif part:
            paths.add(part)
    close()
    return found


_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def with_docs(scope: Scope, docs: Iterable[str]) -> Scope:
    """`scope` with these docs in it, each judged as one the change made."""
    more = frozenset(docs)
    return replace(scope, docs=scope.docs | more, changed_docs=scope.changed_docs | more)


def noted(verdict: Verdict, unsynced: Mapping[str, str]) -> Verdict:
    """The verdict, each finding on an unsynced doc saying which commit left it so. What is
    wrong with such a doc itself (bytes that are not text, bad frontmatter) is dropped: it
    fails the run that changed the doc, not every later one (decisions.md §43)."""
    kept = []
    for f in verdict.findings:
        if f.doc is None and f.path in unsynced:
            continue
        if f.doc is not None and f.doc in unsynced:
            what, sep, fix = f.message.partition("; ")
            note = f" (commit {unsynced[f.doc][:12]} changed it alone: made without the ncx hooks?)"
            f = replace(f, message=what + note + sep + fix)
        kept.append(f)
    verdict.findings = kept
    return verdict


def scope_of(
    changes: Iterable[Change], included: Mapping[str, Sequence[str]] | None = None
) -> Scope:
    """The docs and memories whose files must agree after these changes. Pure.

    `included`: {file: docs that include it} (ncx.tree.includefiles): a changed included
    file puts its docs in scope, as if they had changed themselves."""
    docs: set[str] = set()
    changed: set[str] = set()
    memories: set[str] = set()
    leftovers: set[str] = set()
    everything = False
    for ch in changes:
        for p in (ch.path, ch.old) if ch.old else (ch.path,):
            if included and p in included:
                docs.update(included[p])
                changed.update(included[p])
            if p == f"{NCX_DIR}/{MANIFEST}":
                everything = True
            elif p.startswith(_CHUNKS) and p.endswith(".md"):
                docs.update(_docs_of_folder(p[len(_CHUNKS) : -3]))
            elif p.startswith(_CHUNKS) and p.endswith(".npy"):
                leftovers.add(p)  # the older format's vector: the sync that moved it removes it
            elif (
                p.startswith(_MEMORIES)
                and p.endswith((".md", ".npy"))
                and "/" not in p[len(_MEMORIES) :]
            ):
                memories.add(PurePosixPath(p).stem)
            elif is_inside_ncx(p):
                continue
            elif p.lower().endswith(SOURCES):
                docs.add(p)
                changed.add(p)
            elif p.endswith(SIDECAR_SUFFIX):
                stem = p[: -len(SIDECAR_SUFFIX)]
                docs.update(stem + ext for ext in _DOC_EXTS)
                changed.update(stem + ext for ext in _DOC_EXTS)
    return Scope(
        frozenset(docs), frozenset(memories), frozenset(changed), everything, frozenset(leftovers)
    )


_NpyVec = Callable[[str, dict[str, bytes]], str]


def scope_here(root: Path, found: Iterable[Change]) -> Scope:
    """`scope_of` these changes, with the docs that include a changed file as this tree
    records them (ncx.tree.includefiles, imported only here)."""
    from ncx.tree.includefiles import load_included_by

    return scope_of(found, load_included_by(root))


def docs_of_chunk_file(rel: str) -> list[str]:
    """The docs whose chunk file `rel` (under .neocortex/chunks/, a `.md`) may be."""
    if not (rel.startswith(_CHUNKS) and rel.endswith(".md")):
        return []
    return _docs_of_folder(rel[len(_CHUNKS) : -3])


def _docs_of_folder(folder: str) -> list[str]:
    """The docs whose chunks live in `<chunks>/<folder>`: `folder.md` (any case of the
    suffix) or, for other formats, which keep their suffix (`a.rst` -> `a.rst/`), `folder`."""
    out = []
    # The layout escapes odd name parts (`y.md.md` -> `y%2Emd`) and gives the doc that
    # loses a case clash `~` and 6 hex digits: the doc is looked for under each reading.
    plain = _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), folder)
    for name in dict.fromkeys((folder, plain, _TWIN.sub("", folder), _TWIN.sub("", plain))):
        out += [name + ext for ext in _DOC_EXTS]
        fmt = format_of(name)
        if fmt is not None and fmt.name != "markdown":
            out.append(name)
    return out


_ESCAPED = re.compile(r"%(2E|25)")
_TWIN = re.compile(r"~[0-9a-f]{6}\Z")


@dataclass(frozen=True, slots=True)
class _Entry:
    oid: str
    stage: int


def _ls_files(
    root: Path, pathspecs: Sequence[str] | None, tree: str | None = None
) -> dict[str, _Entry]:
    """{path: entry} of the index, or of commit `tree` when given, limited to `pathspecs`
    (literal) unless None."""
    if pathspecs is not None and not pathspecs:
        return {}
    specs = [] if pathspecs is None else ["--", *pathspecs]
    if tree is not None:
        # ls-tree matches its paths literally, by whole components (`d/auth` is not `d/auth.md`).
        out = repo.git(root, "ls-tree", "-r", "-z", "--full-tree", tree, *specs)
    elif pathspecs is not None:
        out = repo.git(root, "--literal-pathspecs", "ls-files", "-s", "-z", *specs)
    else:
        out = repo.git(root, "ls-files", "-s", "-z")
    entries: dict[str, _Entry] = {}
    for rec in out.decode("utf-8", "surrogateescape").split("\0"):
        if not rec:
            continue
        head, _, path = rec.partition("\t")
        if tree is not None:
            _mode, kind, oid = head.split(" ")
            if kind == "blob":  # not a submodule's commit
                entries[path] = _Entry(oid, 0)
            continue
        _mode, oid, stage = head.split(" ")
        prev = entries.get(path)
        if prev is None or int(stage) > prev.stage:
            entries[path] = _Entry(oid, int(stage))
    return entries


def _read_blobs(root: Path, oids: Iterable[str]) -> dict[str, bytes]:
    return repo.cat_file_batch(root, sorted(set(oids)))


_MANIFEST = f"{NCX_DIR}/{MANIFEST}"


def _model_problem(cfg: Config, model: dict[str, Any]) -> str | None:
    """Why the manifest's model block does not describe a model that loads as recorded."""
    from ncx.embedder import load_embedder, model_mismatch

    try:
        info = load_embedder(str(model.get("id", "")), cache_root=cfg.model_cache).info
    except NcxError as exc:
        return f"its model cannot be loaded here ({exc.message}); hint: `ncx model use` to switch"
    why = model_mismatch(info, model)
    if why is None:
        return None
    return why + "; undo the edit, or switch models with `ncx model use MODEL` (re-embeds all)"


def _merging(root: Path) -> bool:
    """Whether the commit being made concludes a merge (git keeps MERGE_HEAD until then)."""
    rel = repo.git_path_out(repo.git(root, "rev-parse", "--git-path", "MERGE_HEAD", check=False))
    return bool(rel) and (Path(rel) if Path(rel).is_absolute() else root / rel).is_file()


def _foreign_findings(
    root: Path, cfg: Config, manifest: Manifest, dim: int, files: dict[str, bytes]
) -> list[Finding]:
    """The chunk files whose sampled vector another model made (ncx.tree.attribution)."""
    from ncx.embedder import load_tree_model
    from ncx.tree.attribution import foreign_files, foreign_message

    try:
        embedder = load_tree_model(root, manifest.model, None, cfg.model_cache, check_sha=False)
    except NcxError:
        return []  # a model that does not load is its own finding (_model_problem)
    return [
        Finding(rel, foreign_message(doc), doc, False, reembed=True)
        for rel, doc in foreign_files(files, embedder, dim)
    ]


def verify(root: Path, cfg: Config, scope: Scope | None, *, tree: str | None = None) -> Verdict:
    """Check the index: each in-scope doc's staged chunk file against its staged text, each
    in-scope memory's text against its hash and its .npy. `scope` None: the whole index.
    `tree` (a commit): judge what that commit holds instead of the index."""
    from ncx.manifest import load_manifest, older_format
    from ncx.sources import list_sources
    from ncx.store import blob_vec
    from ncx.tree.sidecar import sidecar_path

    manifest = load_manifest(root) if tree is None else _manifest_at(root, tree)
    verdict = Verdict()
    if (older := older_format(manifest)) is not None:
        verdict.findings.append(Finding(_MANIFEST, older, None, True))
        return verdict
    if scope is None or scope.everything:
        index = _ls_files(root, None, tree)
        docs = {p for p in index if p.lower().endswith(SOURCES) and not is_inside_ncx(p)}
        docs |= {
            d
            for p in index
            if p.startswith(_CHUNKS) and p.endswith(".md")
            for d in _docs_of_folder(p[len(_CHUNKS) : -3])
        }
        memories = {
            PurePosixPath(p).stem
            for p in index
            if p.startswith(_MEMORIES) and "/" not in p[len(_MEMORIES) :]
        }
        # The manifest changed (a model or chunk setting): every doc is this commit's doc.
        changed: frozenset[str] = frozenset(docs)
        # the manifest is in this commit (or the whole index is judged): is its model real?
        why = _model_problem(cfg, manifest.model)
        if why is not None:
            verdict.findings.append(Finding(_MANIFEST, why))
    else:
        docs, memories, changed = set(scope.docs), set(scope.memories), scope.changed_docs
        specs = set(docs) | {doc_chunk_file(d) for d in docs}
        specs |= {sc for d in docs if (sc := sidecar_path(d)) is not None}
        specs |= {f"{_MEMORIES}{m}{ext}" for m in memories for ext in (".md", ".npy")}
        specs |= scope.leftovers
        index = _ls_files(root, sorted(specs), tree)

    def npy_vec(oid: str, blobs: dict[str, bytes]) -> str:
        return oid[:16] if len(oid) == 40 else blob_vec(blobs.get(oid, b""))

    sha256_repo = any(len(e.oid) != 40 for e in index.values())
    for path, e in sorted(index.items()):
        if e.stage:
            verdict.findings.append(
                Finding(path, "has an unresolved merge conflict; resolve the docs, then `ncx sync`")
            )

    # Which chunk file belongs to which live doc; one with no live doc is an orphan.
    live = sorted(
        d
        for d in list_sources(root, manifest, tracked=sorted(docs))
        if d in index and index[d].stage == 0
    )
    # The layout's own mapping (it escapes odd names and splits case-insensitive clashes).
    # A clash is between docs of one folder, so the sources beside the docs in scope are
    # read too (a listing of those folders, not of the tree): the doc that lost a clash to
    # a twin the commit does not touch is judged against its own file, not the twin's.
    known = live
    if scope is not None and not scope.everything and live:
        known = sorted(
            set(live) | set(list_sources(root, manifest, tracked=_siblings(root, live, tree)))
        )
    file_all = chunk_file_paths(known)
    file_of = {d: file_all[d] for d in live}
    file_doc = {file_of[d]: d for d in live}
    held = {p for p in index if p.startswith(_CHUNKS) and p.endswith(".md")}
    want_files = {doc_chunk_file(d) for d in docs if d.lower().endswith(SOURCES)}
    want_files |= set(file_doc)
    if scope is None or scope.everything:
        want_files |= held
    to_read = [index[d].oid for d in live]
    sidecars: dict[str, str] = {}
    for d in live:
        sc = sidecar_path(d)
        if sc is not None and sc in index:
            sidecars[d] = sc
            to_read.append(index[sc].oid)
    to_read += [index[f].oid for f in file_doc if f in index]
    mem_md = {m: f"{_MEMORIES}{m}.md" for m in memories}
    to_read += [index[p].oid for p in mem_md.values() if p in index]
    if sha256_repo:
        to_read += [
            index[f"{_MEMORIES}{m}.npy"].oid for m in memories if f"{_MEMORIES}{m}.npy" in index
        ]
    blobs = _read_blobs(root, to_read)
    verdict.docs = live

    dim = int(manifest.model.get("dim", 0))
    right: dict[str, bytes] = {}  # chunk files found to follow their doc
    from ncx.tree.includefiles import Staged

    # A doc's includes as the commit holds them (the index, or `tree`), never the work tree.
    fetch = Staged(root, tree=tree or "")
    for d in live:
        rel = file_of[d]
        expected = _expected(
            d, blobs[index[d].oid], sidecars.get(d), blobs, index, manifest, verdict, fetch
        )
        if expected is None:
            continue  # the doc itself is broken: reported; its chunks are left as they are
        verdict.units += len(expected)
        how = _how(d, d in changed, tree)
        entry = index.get(rel)
        if entry is None:
            if expected:
                verdict.findings.append(Finding(rel, f"is missing from the commit; {how}", d, True))
            continue
        data = blobs.get(entry.oid, b"")
        why = _chunk_file_problem(data, expected, dim, rel)
        if why is not None:
            kept = "staged" if tree is None else "committed"  # the index, or a commit's tree
            verdict.findings.append(Finding(rel, f"{why} the {kept} {d}; {how}", d, True))
            # Only a file that is not what sync writes can hold a credential (sync redacts
            # them): said by name, so the commit is not taken for a mere stale chunk file.
            verdict.findings.extend(_chunk_secrets(rel, data, d))
        elif rel in index:
            right[rel] = blobs.get(entry.oid, b"")
    if right and (scope is None or scope.everything or tree is not None or _merging(root)):
        # Vectors another model made pass every check above (a chunk's hash is of its text):
        # where two histories meet (a merge, a range, a manifest change) they are sampled.
        verdict.findings.extend(_foreign_findings(root, cfg, manifest, dim, right))
    for rel in sorted(want_files - set(file_all.values())):
        if rel not in index:
            continue
        gone = _gone_doc(rel, changed)
        verdict.findings.append(
            Finding(
                rel,
                f"is the chunk file of {gone}, which the commit does not hold; "
                f"run `ncx sync {gone}` (it removes it) and `git add -A {NCX_DIR}`",
                gone,
                True,
            )
        )
    for rel in sorted(p for p in index if p.startswith(_CHUNKS) and p.endswith(".npy")):
        verdict.findings.append(
            Finding(
                rel,
                "is a vector of the older one-file-per-chunk format; run `ncx sync` "
                f"(it removes it) and `git add -A {NCX_DIR}`",
                None,
                True,
            )
        )
    for m in sorted(memories):
        _check_memory(m, index, blobs, npy_vec, verdict)
    if verdict.marked:
        # A memory's vector and `vec:` line are derived: when the sides of the merge had
        # two models (f25b: both switched), the side kept by hand may hold either model's
        # vector, so only a re-embed ends it; said here, so the hooks name one ending.
        mixed = any(f.reembed for f in verdict.findings) or (
            tree is None and _merge_mixes_models(root)
        )
        verdict.after_markers = "ncx sync --reembed" if mixed else "ncx sync"
        verdict.findings.extend(
            Finding(
                p,
                "has merge-conflict markers: resolve them by hand, then "
                f"`{verdict.after_markers}` and stage it",
            )
            for p in verdict.marked
        )
    return verdict


def _merge_mixes_models(root: Path) -> bool:
    """Whether the merge being concluded joins two sides whose manifests name two models."""
    if not _merging(root):
        return False
    import json

    models = []
    for rev in ("HEAD", "MERGE_HEAD"):
        raw = repo.git(root, "cat-file", "blob", f"{rev}:{_MANIFEST}", check=False)
        try:
            model = json.loads(raw or b"{}").get("model") or {}
        except (ValueError, AttributeError):
            return True  # not a manifest this ncx reads: take the safe ending
        models.append((model.get("id"), model.get("sha256"), model.get("dim")))
    return models[0] != models[1]


def _siblings(root: Path, docs: Iterable[str], tree: str | None) -> list[str]:
    """The files directly in the folders of `docs` (any case of the folder's name in the
    index), in the index or in commit `tree`."""
    folders = sorted({PurePosixPath(d).parent.as_posix() for d in docs})
    if tree is not None:
        out = []
        for f in folders:
            spec = [] if f == "." else ["--", f + "/"]
            raw = repo.git(root, "ls-tree", "-z", "--full-tree", tree, *spec)
            for rec in raw.decode("utf-8", "surrogateescape").split("\0"):
                head, _, path = rec.partition("\t")
                if head.split(" ")[1:2] == ["blob"]:
                    out.append(path)
        return out
    specs = [":(glob,icase)" + ("" if f == "." else _glob_escape(f) + "/") + "*" for f in folders]
    return repo.tracked_files(root, specs)


def _glob_escape(path: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in path)


def _chunk_secrets(rel: str, data: bytes, doc: str) -> list[Finding]:
    from ncx.secrets import find_secrets

    return [
        Finding(
            f"{rel}:{f.line}:{f.column}",
            f"{f.reason} A chunk file is committed and served to agents: run `ncx sync "
            f"{doc}` (it redacts credentials) and rotate the credential.",
            doc,
            True,
        )
        for f in find_secrets(data.decode("utf-8", "replace"))
    ]


def _chunk_file_problem(data: bytes, expected: list[ChunkBlock], dim: int, rel: str) -> str | None:
    """What is wrong with a staged chunk file, said so that "<why> the staged DOC" reads
    well; None when each block is the expected one with a vector of the tree's size."""
    from ncx.errors import BadFrontmatter
    from ncx.store import has_markers, inline_vec, split_chunk_file, without_inline_vec

    # A doc that quotes conflict markers (a guide to merging) has them in its blocks too.
    if has_markers(data) and not any(has_markers(e.data) for e in expected):
        return "has merge-conflict markers: it does not follow"
    try:
        blocks = split_chunk_file(data, path=rel)
    except BadFrontmatter:
        return "is not a chunk file this ncx writes: it does not follow"
    if len(blocks) != len(expected):
        return f"has {len(blocks)} chunk(s) where there are {len(expected)} in"
    want = _b64_len(dim)
    for block, exp in zip(blocks, expected, strict=True):
        vec = inline_vec(block)
        if vec is None or len(vec) != want:
            return f"has no vector of {dim} values for {exp.name}: it does not follow"
        if without_inline_vec(block) != exp.data:
            return f"has a block for {exp.name} that does not match"
    return None


def _b64_len(dim: int) -> int:
    return 4 * ((2 * dim + 2) // 3)


def _manifest_at(root: Path, tree: str) -> Manifest:
    """The manifest commit `tree` holds (its chunker settings and model decide its chunks)."""
    from ncx.manifest import parse_manifest

    raw = repo.git(root, "cat-file", "blob", f"{tree}:{_MANIFEST}")
    return parse_manifest(raw.decode("utf-8", "replace"), root / _MANIFEST)


def _how(doc: str, changed: bool, tree: str | None = None) -> str:
    if tree is not None:
        # A commit's (a range's, pre-push's) chunk files: what ends it is a commit, named
        # whole, so a push has one command to run (issue 36).
        return f"run `{sync_and_commit([doc])}`"
    if changed:
        return f"run `ncx sync {doc}`, then stage the doc and .neocortex: `git add {doc} {NCX_DIR}`"
    return (
        f"the commit changes {doc}'s chunk files but not {doc}: stage the doc too "
        f"(`git add {doc}`), or `ncx sync {doc}` and `git add {doc} {NCX_DIR}`"
    )


def sync_and_commit(
    docs: Sequence[str],
    *,
    reembed: Sequence[str] = (),
    whole: bool = False,
    root: Path | None = None,
) -> str:
    """The one command that makes `.neocortex/` follow these docs and commits it (for a
    push or a branch: a committed tree is what they judge). `whole`: every doc (`ncx sync`
    of the tree, `git add -A .neocortex`). With `root`, a doc that is gone from the working
    tree is not named to `git add` (git refuses a path that matches nothing)."""
    import shlex

    steps = []
    plain = [] if whole else [d for d in docs if d not in set(reembed)]
    if whole:
        steps.append("ncx sync")
    elif plain:
        steps.append("ncx sync " + " ".join(shlex.quote(d) for d in plain))
    if reembed:
        steps.append("ncx sync --reembed " + " ".join(shlex.quote(d) for d in reembed))
    named = sorted(d for d in set(plain) | set(reembed) if root is None or (root / d).exists())
    quoted = " ".join(shlex.quote(d) for d in named)
    short = not whole and 0 < len(named) <= 5 and len(quoted) <= 120
    steps.append(f"git add -- {quoted} {NCX_DIR}" if short else f"git add -A {NCX_DIR}")
    return " && ".join([*steps, "git commit -m 'ncx sync'"])


def _gone_doc(rel: str, changed: frozenset[str]) -> str:
    """The doc a chunk file belonged to: the removed doc the commit names, else its path's."""
    named = sorted(d for d in changed if doc_chunk_file(d) == rel)
    return named[0] if named else rel[len(_CHUNKS) :]


def _expected(
    doc: str,
    data: bytes,
    sidecar: str | None,
    blobs: dict[str, bytes],
    index: dict[str, _Entry],
    manifest: Manifest,
    verdict: Verdict,
    fetch: Fetch | None = None,
) -> list[ChunkBlock] | None:
    from ncx.tree.chunkfile import chunk_blocks, load_doc
    from ncx.tree.sidecar import read_doc_meta

    meta = None
    if sidecar is not None:
        meta, errors = read_doc_meta(sidecar, blobs[index[sidecar].oid])
        verdict.findings.extend(Finding(sidecar, f"{e.message}; {e.hint}") for e in errors)
    try:
        loaded = load_doc(doc, data, meta, fetch)
    except NcxError as exc:
        verdict.findings.append(Finding(doc, f"{exc.message}; {exc.hint or 'fix it'}"))
        return None
    return chunk_blocks(loaded, manifest.chunk)


def _check_memory(
    m: str, index: dict[str, _Entry], blobs: dict[str, bytes], npy_vec: _NpyVec, verdict: Verdict
) -> None:
    from ncx.memory.file import memory_hash, memory_problems
    from ncx.secrets import find_secrets
    from ncx.store import decode_source, has_markers, parse_frontmatter

    md_path, npy_path = f"{_MEMORIES}{m}.md", f"{_MEMORIES}{m}.npy"
    md, npy = index.get(md_path), index.get(npy_path)
    add = verdict.findings.append
    if md is None:
        if npy is not None:
            add(
                Finding(
                    npy_path,
                    f"vector without a .md; `git rm --cached {npy_path}` or restore the .md",
                )
            )
        return
    verdict.units += 1
    data = blobs.get(md.oid, b"")
    if has_markers(data):
        verdict.marked.append(md_path)  # the finding, with its ending: `verify`
        return
    try:
        text = decode_source(data, path=md_path)
        meta, body, _ = parse_frontmatter(text, path=md_path)
    except NcxError as exc:
        add(Finding(md_path, f"{exc.message}; {exc.hint or 'fix it'}"))
        return
    add_all = [Finding(md_path, msg) for msg in memory_problems(meta, body, m)]
    add_all += [
        Finding(
            f"{md_path}:{s.line}:{s.column}",
            f"{s.reason} Secrets never belong in memories: remove it and rotate the credential.",
        )
        for s in find_secrets(text)
    ]
    verdict.findings.extend(add_all)
    fix = f"run `ncx sync` and `git add {md_path} {npy_path}`"
    if meta.get("hash") != memory_hash(body):
        add(Finding(md_path, f"stale: its text changed since it was embedded; {fix}", None, True))
    elif npy is None:
        add(Finding(npy_path, f"is missing from the commit; {fix}", None, True))
    elif meta.get("vec") != npy_vec(npy.oid, blobs):
        add(Finding(npy_path, f"is not the vector of its .md; {fix}", None, True))
