"""scope: which tracked source files are the project's own code, and why the others are not.

Vendored libraries, build output, generated copies and minified bundles are tracked in many
repositories, and each holds more definitions than the project's own files: a `dist/` bundle
of 2,000 copies of one function filled every result, a vendored `static/jquery.js` ranked
first on its one-letter names (docs/decisions.md §41). They are left out of the code index,
each with its reason, which `ncx status` and `ncx sync` name. Rules on the path come first
(free), then git's own attributes (`linguist-vendored`, `linguist-generated`, as GitHub's
linguist reads them; `-linguist-vendored` keeps a folder the path rules would leave out),
then the file's bytes (size, minified) when it is read.
"""

from __future__ import annotations

from pathlib import Path

from ncx.code.langs import MAX_CODE_BYTES

EXCLUDED = "excluded by sources.exclude in the manifest"
VENDORED = "in a vendored folder"
BUILT = "in a build output folder"
GENERATED_COPY = "in a generated copy folder"
ATTR_VENDORED = "marked linguist-vendored in .gitattributes"
ATTR_GENERATED = "marked linguist-generated in .gitattributes"
TOO_LARGE = f"over the {MAX_CODE_BYTES // 1_000_000} MB code size limit"
MINIFIED = "minified (long lines)"
# Reasons found when a file is read (not from its path): the code index keeps them.
READ_REASONS = (TOO_LARGE, MINIFIED)

# Folder names that hold other projects' code, at any depth (`vendor/` in Go, `_vendor/` in
# pip, `extern/` in astropy, `third_party/` in C-family and Python trees). Not `external/`
# or `lib/`: projects name their own code so too. Build output: `dist/` at any depth
# (packages/x/dist/ in a monorepo), `build/` only at the top (pip's own
# `operations/build/` is its code), and the frameworks' output folders. A folder named like
# a generated copy of the code for another runtime: `deno_dist/`, `esm-dist/`. Sets of
# folder names, not a regex: a listing of 2,000 files asks 2,000 times a query.
_VENDORED = frozenset(
    "vendor vendors vendored _vendor third_party third-party thirdparty 3rdparty extern"
    " node_modules bower_components jspm_packages site-packages".split()
)
# Inside a Python package, `packages/` is where a library vendors others (requests'
# `requests/packages/urllib3`, urllib3's own `urllib3/packages/six.py`, with a README asking
# for changes to go upstream); at the top of a tree it is a monorepo's own packages.
_PY_VENDORED = "packages"
_BUILT = frozenset("dist .next .nuxt .svelte-kit .output".split())
_TOP_BUILT = frozenset(("build", "_build"))


def path_reason(path: str, excludes: tuple[str, ...]) -> str:
    """Why a tracked source is not the project's code, from its path alone; "" if it is."""
    if excludes:
        from ncx.sources import is_excluded

        if is_excluded(path, excludes):
            return EXCLUDED
    folders = path.split("/")[:-1]
    if not folders:
        return ""
    if folders[0] in _TOP_BUILT:
        return BUILT
    for i, name in enumerate(folders):
        if name in _VENDORED:
            return VENDORED
        if name == _PY_VENDORED and i > (folders[0] == "src") and path.endswith(".py"):
            return VENDORED
        if name in _BUILT:
            return BUILT
        if name.endswith(("_dist", "-dist")):
            return GENERATED_COPY
    return ""


KEPT = ""  # what linguist_marks says of a path `.gitattributes` unmarks


def linguist_marks(root: Path, paths: list[str], attr_files: list[str]) -> dict[str, str]:
    """path -> why `.gitattributes` says it is not the project's code (linguist-vendored,
    linguist-generated), or KEPT where it unmarks it (`-linguist-vendored`,
    `linguist-vendored=false`: kept although a path rule would leave it out, as linguist
    keeps it). git is asked only when an attributes file names linguist at all: most trees
    never do, and a listing runs on every query. `attr_files`: the tracked .gitattributes."""
    if not paths or not _names_linguist(root, attr_files):
        return {}
    from ncx import repo

    req = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
    attrs = ("linguist-vendored", "linguist-generated")
    # check=False: a commit `--at REV` materialised is no work tree of its own; git answers
    # from the enclosing one, or not at all (then no marks)
    out = repo.git(root, "check-attr", "-z", "--stdin", *attrs, input=req, check=False)
    got: dict[str, str] = {}
    parts = out.split(b"\0")
    for i in range(0, len(parts) - 2, 3):  # path \0 attribute \0 value \0
        path, attr, value = parts[i : i + 3]
        p = path.decode("utf-8", "surrogateescape")
        if value in (b"set", b"true"):
            got[p] = ATTR_VENDORED if attr == b"linguist-vendored" else ATTR_GENERATED
        elif value in (b"unset", b"false") and p not in got:
            got[p] = KEPT
    return got


def _names_linguist(root: Path, attr_files: list[str]) -> bool:
    """Whether an attributes file of this tree names a linguist attribute."""
    files = [root / ".git" / "info" / "attributes", *(root / p for p in attr_files)]
    for f in files:
        try:
            if b"linguist-" in f.read_bytes()[:1_000_000]:
                return True
        except OSError:
            continue
    return False


# Minified: written code keeps its lines short (in the code-* sets' trees no source file
# averages over 90 bytes a line); a minifier joins a whole library into a few lines. A
# JavaScript or TypeScript file is minified when it is long enough to matter and its lines
# average over MINIFIED_AVG bytes, or one line alone is over MINIFIED_LINE bytes and holds
# most of the file (docs/decisions.md §41). Other languages are not minified in practice;
# their long lines are data (rich's tests hold rendered output in 28,000-byte strings).
MINIFIED_MIN_BYTES = 2_000
MINIFIED_AVG = 300
MINIFIED_LINE = 10_000


MINIFIABLE = ("javascript", "typescript", "tsx")


def content_reason(data: bytes, language: str) -> str:
    """Why a source's bytes are not the project's code (minified); "" if they are."""
    if len(data) > MAX_CODE_BYTES:
        return TOO_LARGE
    if language not in MINIFIABLE or len(data) < MINIFIED_MIN_BYTES:
        return ""
    lines = data.count(b"\n") + 1
    if len(data) / lines > MINIFIED_AVG:
        return MINIFIED
    longest = max(map(len, data.split(b"\n")))
    if longest > MINIFIED_LINE and longest * 2 > len(data):
        return MINIFIED
    return ""


def summary(left_out: list[tuple[str, str]], shown: int = 3) -> str:
    """The left-out files in one line: a count per reason, then the first few names."""
    counts = by_reason(left_out)
    parts = ", ".join(f"{n} {why}" for why, n in sorted(counts.items(), key=lambda c: -c[1]))
    names = ", ".join(p for p, _ in left_out[:shown])
    more = f", … {len(left_out) - shown} more" if len(left_out) > shown else ""
    return f"{len(left_out)} left out ({parts}): {names}{more}"


def by_reason(left_out: list[tuple[str, str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _path, why in left_out:
        counts[why] = counts.get(why, 0) + 1
    return dict(sorted(counts.items()))
