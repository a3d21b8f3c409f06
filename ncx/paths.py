"""paths: the one gate every path from outside ncx passes before it is read, joined or written.

Paths reach ncx from a user's arguments, from git's list of tracked files (a doc, a sidecar,
a symlink), from memory ids and from files under .neocortex/. None of them is trusted:
`..` is normalised away lexically and then the path is resolved (symlinks at every level)
and compared with the place it must stay in. Reads refuse a link whose target leaves the
repository, lies inside `.git/` or is ignored by git (a tracked link to `.env` would
otherwise copy a secret into a committed chunk); writes refuse anything that resolves
outside `.neocortex/`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ncx.errors import NcxError, UsageError
from ncx.layout import NCX_DIR

# The longest path ncx accepts from a repo. Linux allows 4096 bytes for a whole path and
# 255 per name; a doc's chunk file adds `.neocortex/chunks/` and `.md`, so a doc path near
# the limit would fail on write with ENAMETOOLONG after its chunks were planned.
MAX_REL_PATH = 1024
MAX_NAME = 255


class UnsafePath(NcxError):
    """A path that would leave the repository (or .neocortex/), or pass through a bad link."""


def lexical_rel(root: Path, user_path: str) -> str:
    """A user-given path (relative to the cwd, or absolute) as a normalised repo-relative POSIX
    path; UnsafePath when it points outside the repository. Lexical: no link is followed."""
    if "\0" in user_path:
        raise UsageError(f"path {user_path!r} holds a NUL byte", hint="give a real file path")
    full = os.path.normpath(os.path.abspath(user_path))
    base = os.path.normpath(os.path.abspath(root))
    real_base = os.path.realpath(base)
    for b in (base, real_base):
        if full == b:
            return "."
        if full.startswith(b.rstrip(os.sep) + os.sep):
            return PurePosixPath(Path(os.path.relpath(full, b)).as_posix()).as_posix()
    raise UnsafePath(
        "is outside the repository",
        path=user_path,
        hint=f"give a path inside {root}",
    )


def is_within(child: Path, parent: Path) -> bool:
    """`child` resolves to `parent` or below it (symlinks at every level followed)."""
    try:
        c, p = child.resolve(), parent.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return False
    return c == p or p in c.parents


# A path none of rel_problem's rules refuses, when it is short and ASCII: one regex search
# instead of a split per path (100,000 docs: 0.15 s of every no-op sync).
_ODD = re.compile(r"[\0\n\r]|(?:^|/)\.{0,2}(?:/|$)")


def rel_problem(rel: str) -> str | None:
    """Why a repo-relative path from git cannot be a source ncx handles, or None."""
    if len(rel) <= MAX_NAME and rel.isascii() and _ODD.search(rel) is None:
        return None
    if "\0" in rel or "\n" in rel or "\r" in rel:
        return "has a control character in its name"
    if len(rel) > MAX_REL_PATH:
        return f"path is {len(rel)} characters, over the {MAX_REL_PATH} ncx handles"
    parts = rel.split("/")
    # (A short ASCII path has no part over MAX_NAME bytes: not encoded part by part, which
    # was a second of a 100,000-doc no-op sync.)
    if not (len(rel) <= MAX_NAME and rel.isascii()) and any(
        len(p.encode("utf-8", "surrogateescape")) > MAX_NAME for p in parts
    ):
        return f"has a file or folder name over {MAX_NAME} bytes"
    if any(p in ("", ".", "..") for p in parts):
        return "is not a normalised path"
    return None


class Links:
    """Which repo-relative paths pass through a symlink at some level. Each folder is
    lstat-ed once per scan, so checking 5,000 docs costs about what their own lstat does."""

    def __init__(self, root: Path):
        self._base = os.fspath(root) + os.sep
        self._seen: dict[str, bool] = {}  # folder or file -> it, or a folder above, is a link

    def has_link(self, rel: str) -> bool:
        known = self._seen.get(rel)
        if known is not None:
            return known
        folder, _, _name = rel.rpartition("/")
        linked = bool(folder) and self.has_link(folder)
        linked = linked or os.path.islink(self._base + rel)
        self._seen[rel] = linked
        return linked


def read_problem(
    root: Path, rel: str, ignored: set[str] | None = None, links: Links | None = None
) -> str | None:
    """Why the working-tree file `rel` must not be read as a source, or None.

    Every level is checked, so a tracked link, a linked parent folder and a link to a link
    are all followed to where they really point. A path with no link at any level needs no
    resolving: the caller's own stat and read report what else can be wrong with it."""
    if links is not None and not links.has_link(rel):
        return None
    full = root / rel
    try:
        real = full.resolve(strict=True)
    except FileNotFoundError:
        return None  # deleted in the working tree: the caller handles a missing file
    except (OSError, RuntimeError):
        return "is a symlink loop"
    real_root = root.resolve()
    if real != real_root and real_root not in real.parents:
        return "is a symlink that leaves the repository; refused"
    target = real.relative_to(real_root).as_posix()
    if ".git" in target.split("/"):  # (a nested repository's .git/config, too)
        return "is a symlink into .git/; refused (it may hold credentials)"
    if target != rel and ignored is not None and target in ignored:
        return f"is a symlink to the git-ignored {target}; refused (it may hold secrets)"
    if not real.is_file():
        return "is not a regular file"
    return None


def ignored_targets(root: Path, rels: Iterable[str], links: Links | None = None) -> set[str]:
    """The link targets among `rels`' resolutions that git ignores (one `git check-ignore`)."""
    from ncx import repo

    links = links or Links(root)
    targets = []
    real_root = root.resolve()
    for rel in rels:
        full = root / rel
        if not links.has_link(rel):
            continue
        try:
            real = full.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if real_root in real.parents:
            targets.append(real.relative_to(real_root).as_posix())
    if not targets:
        return set()
    out = repo.git(
        root,
        "check-ignore",
        "--no-index",
        "-z",
        "--stdin",
        input="\0".join(targets).encode("utf-8", "surrogateescape") + b"\0",
        check=False,
    )
    return {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}


def check_real_folders(root: Path, rel: str, *, hint: str) -> None:
    """Refuse (UnsafePath) a write of repo-relative `rel` when a folder on its way from the
    repository's top is a symlink or not a folder: a link to a folder inside the repository
    (`.neocortex -> .`, `.github -> .git`) stays "within" it and would still be written
    through, replacing the repository's own files or writing into `.git/`. Folders that do
    not exist yet are fine (they are made as real folders)."""
    parts = PurePosixPath(rel).parts[:-1]
    here = root
    for part in parts:
        here = here / part
        if os.path.islink(here):
            raise UnsafePath(
                "is a symlink; ncx writes only into real folders inside the repository",
                path=here,
                hint=hint,
            )
        if not os.path.lexists(here):
            return
        if not os.path.isdir(here):
            raise UnsafePath("is not a folder", path=here, hint=hint)


NCX_LINK_HINT = (
    f"replace the {NCX_DIR} symlink with a real folder (`rm {NCX_DIR}` and run `ncx init`), "
    "and commit that"
)


def check_write(root: Path, path: Path) -> None:
    """Refuse a write or delete that would land outside `.neocortex/` (via `..` or a linked
    folder at any level, `.neocortex/` itself included), or through a `.neocortex` that is a
    link to a folder elsewhere in the repository (`-> .`, `-> .git`)."""
    ncx = root / NCX_DIR
    check_real_folders(root, f"{NCX_DIR}/x", hint=NCX_LINK_HINT)
    # Only the folders count: the file itself is replaced by rename or unlinked, and neither
    # follows a link in its place (a linked unit becomes a regular file, its target untouched).
    if not is_within(ncx, root) or not is_within(path.parent, ncx):
        raise UnsafePath(
            "would be written outside .neocortex/ (a symlinked folder or a `..` path); refused",
            path=path,
            hint="replace the symlink under .neocortex/ with a real folder and run `ncx sync`",
        )


CACHE_LINK_HINT = (
    "delete it (`rm -r PATH`, and `git rm -r --cached PATH` if git tracks it, then commit): "
    "the cache is untracked and derived, and ncx makes its folders itself"
)


def cache_folder(root: Path, sub: str = "") -> Path:
    """`.neocortex/cache/` or the folder `sub` below it (`code`, `at`, `at/<tree>`), refused
    (UnsafePath) when it or any folder on its way is a symlink or not a folder (as
    check_write refuses a linked `.neocortex/`). git ignores the cache's files, but a link
    committed with `git add -f` is checked out in every clone: `cache -> x`, `cache/code -> x`
    or `cache/at -> x` would otherwise have the code index, a lock file or a whole commit's
    files written wherever it points. A folder not there yet is fine: ncx makes it real."""
    check_write(root, root / NCX_DIR / "x")
    rel = f"{NCX_DIR}/cache/{sub}/x" if sub else f"{NCX_DIR}/cache/x"
    parts = PurePosixPath(rel).parts[:-1]
    here = root
    for part in parts:
        here = here / part
        if os.path.islink(here) or (os.path.lexists(here) and not os.path.isdir(here)):
            what = "a symlink" if os.path.islink(here) else "not a folder"
            shown = here.relative_to(root).as_posix()
            raise UnsafePath(
                f"is {what}; ncx writes its cache only into real folders it makes",
                path=here,
                hint=CACHE_LINK_HINT.replace("PATH", shown),
            )
        if not os.path.lexists(here):
            break
    return root / NCX_DIR / "cache" / sub if sub else root / NCX_DIR / "cache"


def cache_file(root: Path, rel: str) -> Path:
    """The cache file `rel` (`index.npz`, `code/index.npz`), every folder on its way checked
    by cache_folder. The file itself may be anything: it is read with read_cache and written
    by rename (write_atomic), and neither follows a link in its place."""
    folder, _, name = rel.rpartition("/")
    return cache_folder(root, folder) / name


def read_cache(root: Path, rel: str) -> bytes:
    """The bytes of cache file `rel`: its folders checked (cache_folder), the file opened
    without following a link (a committed `cache/x.json -> /dev/zero` or `-> ~/.ssh/id_rsa`
    reads as missing, an OSError, and the next write replaces it) and only when regular
    (never waiting on a FIFO)."""
    from ncx.store import read_regular

    return read_regular(cache_file(root, rel), follow=False)


def read_repo_file(root: Path, path: Path | str, *, limit: int, what: str) -> bytes:
    """The bytes of a file a user or a commit names inside the repository (a questions file),
    by the docs' rule: inside the repository, not a symlink that leaves it, leads into
    `.git/` or to a git-ignored file, a regular file (never a FIFO or a device, which would
    block or never end) and at most `limit` bytes, refused by its size before it is read.
    FileNotFoundError when it is missing; UnsafePath or BadSource naming it otherwise."""
    from ncx.errors import BadSource
    from ncx.store import NotRegular, open_regular

    rel = lexical_rel(root, os.fspath(path))
    if rel == "." or (why := rel_problem(rel)) is not None:
        raise UnsafePath(why or "is the repository itself", path=path, hint=f"give {what}")
    bad = read_problem(root, rel, ignored_targets(root, [rel]))
    if bad is not None:
        linked = Links(root).has_link(rel)
        fix = f"give {what} itself, not a link to it" if linked else f"give {what}: a plain file"
        raise UnsafePath(bad, path=path, hint=fix)
    try:
        with open_regular(root / rel) as f:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise BadSource(
                    f"is {size:,} bytes, over the {limit:,}-byte limit",
                    path=path,
                    hint=f"keep {what} under {limit:,} bytes",
                )
            return f.read(limit + 1)  # (a file growing as it is read stops here)
    except NotRegular:
        raise BadSource(
            "is not a regular file (a FIFO or a device?)",
            path=path,
            hint=f"give {what}: a plain file",
        ) from None


_MEM_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")


def memory_ref(ref: str) -> str:
    """A memory id or a part of one, checked before it is ever joined to a folder."""
    ref = ref.strip().removesuffix(".md")
    if not _MEM_REF.match(ref):
        raise UsageError(
            f"{ref[:80]!r} is not a memory id",
            hint="give an id of the form MEM-YYYY-MM-DD-xxxxxx (or its 6-letter end); "
            "see `ncx memory list`",
        )
    return ref
