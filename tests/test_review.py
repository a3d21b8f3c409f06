"""ncx review: the knowledge diff of a branch, on real git history."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import commit_all, git, ncx, write

from ncx.store import split_chunk_file, without_inline_vec

MEM = """---
id: {id}
type: experiential
domain: AUTH
confidence: {conf}
status: {status}
superseded_by: {by}
---

## Learning

{text}

## Context

Found while fixing login.
"""


def mem(
    root: Path, mid: str, text: str, conf: str = "medium", status: str = "active", by: str = "null"
) -> None:
    write(
        root,
        f".neocortex/memories/{mid}.md",
        MEM.format(id=mid, text=text, conf=conf, status=status, by=by),
    )


def test_review_report(repo: Path) -> None:
    write(
        repo,
        "docs/a.md",
        "# A\n\n"
        + "Alpha text about the login flow. " * 20
        + "\n\n## B\n\n"
        + "Beta text. " * 30
        + "\n",
    )
    commit_all(repo)
    ncx("init")
    mem(repo, "MEM-2026-01-01-aaaaaa", "Old way: retry forever.")
    mem(repo, "MEM-2026-01-01-bbbbbb", "Gone soon.")
    ncx("sync")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    mem(
        repo,
        "MEM-2026-01-01-aaaaaa",
        "Old way: retry forever.",
        status="superseded",
        by="MEM-2026-01-02-cccccc",
    )
    mem(repo, "MEM-2026-01-02-cccccc", "Retry at most 3 times with backoff.", conf="high")
    (repo / ".neocortex/memories/MEM-2026-01-01-bbbbbb.md").unlink()
    write(
        repo,
        "docs/a.md",
        "# A\n\n"
        + "Alpha text about the login flow. " * 20
        + "\n\n## B\n\n"
        + "Beta changed. " * 30
        + "\n",
    )
    ncx("sync")
    commit_all(repo, "feature")
    md = ncx("review", "main..feature").stdout
    assert "**added** `MEM-2026-01-02-cccccc`" in md and "Retry at most 3 times" in md
    assert "**superseded** `MEM-2026-01-01-aaaaaa`" in md and "status active → superseded" in md
    assert "**removed** `MEM-2026-01-01-bbbbbb`" in md and "Gone soon." in md
    # the doc's one chunk file changed; its blocks say only section B did
    assert "| `docs/a.md` | — | A > B | — |" in md
    data = json.loads(ncx("review", "main..feature", "--format", "json").stdout)
    assert {m["change"] for m in data["memories"]} == {"added", "superseded", "removed"}
    assert data["problems"] == []
    # default range: merge base with main; the title names the range as given
    assert ncx("review").stdout.split("\n", 1)[1] == md.split("\n", 1)[1]
    # a broken chunk file fails only when asked to: the range's problems are judged in the
    # commit (what the branch changed), the working tree's with --full-check
    chunk_file = repo / ".neocortex/chunks/docs/a.md"
    text = chunk_file.read_text()
    assert text.count("\nvec: f16:") == 2  # one block per section, the vector inline
    chunk_file.write_text(re.sub(r"(?m)^vec: f16:.*$", "vec: f16:AAAA", text, count=1))
    assert ncx("review", "main..feature", "--fail-on-problems").returncode == 0  # not committed
    full = ncx("review", "main..feature", "--fail-on-problems", "--full-check", ok=False)
    assert full.returncode == 1 and "chunks/docs/a.md" in full.stdout
    commit_all(repo, "break a vector")
    assert ncx("review", "main..feature").returncode == 0
    broken = ncx("review", "main..feature", "--fail-on-problems", ok=False)
    assert broken.returncode == 1 and "chunks/docs/a.md" in broken.stdout
    assert ncx("review", "nope..HEAD", ok=False).returncode == 2


def test_init_writes_gitattributes_block_once(repo: Path) -> None:
    write(repo, ".gitattributes", "*.png binary\n")
    ncx("init")
    ncx("init")
    text = (repo / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n") and text.count("# >>> ncx >>>") == 1
    assert ".neocortex/chunks/** linguist-generated=true" in text


def test_review_follows_git_range_semantics_renames_deletes_and_model(
    repo: Path, other_model: Path
) -> None:
    """A branch that adds, renames, deletes and supersedes, while main moves on: the review
    shows what the branch adds since the merge base, renames as renames, deleted docs as
    deleted; a model switch is shown; the capped report says how many more there are."""
    body = "Alpha text about the login flow. " * 20
    write(repo, "docs/keep.md", "# Keep\n\n" + body + "\n")
    write(
        repo,
        "docs/old-name.md",
        "# Moving\n\n"
        + "Moving text about deploys. " * 20
        + "\n\n## Part\n\n"
        + "Part text. " * 20
        + "\n",
    )
    write(repo, "docs/gone.md", "# Gone\n\n" + "Soon deleted text. " * 20 + "\n")
    commit_all(repo)
    ncx("init")
    mem(repo, "MEM-2026-01-01-aaaaaa", "Old way: retry forever.")
    ncx("sync")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "mv", "docs/old-name.md", "docs/new-name.md")
    (repo / "docs/gone.md").unlink()
    write(repo, "docs/added.md", "# Added\n\n" + "A brand new doc about tokens. " * 20 + "\n")
    mem(
        repo,
        "MEM-2026-01-01-aaaaaa",
        "Old way: retry forever.",
        status="superseded",
        by="MEM-2026-01-02-cccccc",
    )
    mem(repo, "MEM-2026-01-02-cccccc", "Retry at most 3 times with backoff.", conf="high")
    git(repo, "add", "-A")  # sync indexes the docs git knows
    ncx("sync")
    commit_all(repo, "feature")
    git(repo, "checkout", "-q", "main")
    mem(repo, "MEM-2026-01-03-mmmmmm", "Added on main after the branch point.")
    ncx("sync")
    commit_all(repo, "main moves on")

    for spec in ("main..feature", "main...feature"):
        md = ncx("review", spec).stdout
        assert md.startswith(f"## ncx knowledge review `{spec}`")
        assert "MEM-2026-01-03-mmmmmm" not in md  # main's own change is not the branch's
        assert "**added** `MEM-2026-01-02-cccccc`" in md
        assert "**superseded** `MEM-2026-01-01-aaaaaa`" in md
        assert "| `docs/new-name.md` (renamed from `docs/old-name.md`) | — | — | — |" in md
        assert "| `docs/gone.md` (deleted) | — | — | all 1 |" in md
        assert "| `docs/added.md` (added) | Added | — | — |" in md
        assert "docs/old-name.md` |" not in md and "docs/keep.md" not in md
    data = json.loads(ncx("review", "main...feature", "--json").stdout)
    by_path = {d["source_path"]: d for d in data["docs"]}
    assert by_path["docs/new-name.md"]["status"] == "renamed"
    assert by_path["docs/new-name.md"]["renamed_from"] == "docs/old-name.md"
    assert by_path["docs/gone.md"]["status"] == "deleted"

    # bounded: a cap with "… N more", the full report through --out
    capped = ncx(
        "review", "main..feature", "--limit", "1", "--out", str(repo.parent / "full.md")
    ).stdout
    full = (repo.parent / "full.md").read_text()
    assert "… 1 more memories" in capped and "… 2 more docs" in capped
    assert "more memories" not in full and "docs/gone.md" in full and "docs/added.md" in full

    # a model switch re-embeds every unit and changes no text: shown, not "No change"
    git(repo, "checkout", "-q", "feature")
    ncx("model", "use", str(other_model))
    commit_all(repo, "switch model")
    md = ncx("review", "HEAD~1..HEAD").stdout
    assert "No change" not in md
    assert f"→ {other_model} (32d)" in md and "re-embedded with unchanged text" in md
    st = json.loads(ncx("status", "--json").stdout)
    data = json.loads(ncx("review", "HEAD~1..HEAD", "--json").stdout)
    # one per block whose vector changed: all but new-name.md's two, whose words are all
    # outside both tiny models' vocabulary (the same zero vector, the file left as it was)
    assert st["chunks"] == 4 and st["memories"] == 2
    assert data["docs"] == [] and data["reembedded"] == 4


def test_review_names_the_sections_added_changed_and_removed_in_a_chunk_file(
    repo: Path,
) -> None:
    """A doc's chunk file changes as one file; the review still names each section: the
    blocks of both sides, matched by heading trail, compared by text."""

    def doc(*sections: tuple[str, str]) -> str:
        return "# Guide\n\n" + "".join(
            f"## {name}\n\n" + f"{text} " * 30 + "\n\n" for name, text in sections
        )

    write(
        repo,
        "docs/guide.md",
        doc(("Keep", "Kept as is."), ("Edit", "First words."), ("Drop", "Old.")),
    )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "base")
    write(
        repo,
        "docs/guide.md",
        doc(("Keep", "Kept as is."), ("Edit", "Other words."), ("New", "Fresh.")),
    )
    ncx("sync")
    commit_all(repo, "edit")
    data = json.loads(ncx("review", "HEAD~1..HEAD", "--json").stdout)
    assert data["docs"] == [
        {
            "source_path": "docs/guide.md",
            "status": "edited",
            "renamed_from": None,
            "added": ["Guide > New"],
            "changed": ["Guide > Edit"],
            "removed": ["Guide > Drop"],
            "merged": {},
        }
    ]
    assert data["reembedded"] == 0


def test_review_of_unrelated_refs_is_a_usage_error(repo: Path) -> None:
    write(repo, "a.md", "# A\n")
    commit_all(repo)
    git(repo, "checkout", "-q", "--orphan", "other")
    commit_all(repo, "other root")
    out = ncx("review", "main..other", ok=False)
    assert out.returncode == 2 and "share no history" in out.stderr


def test_review_across_the_move_to_format_2_shows_no_section_change(repo: Path) -> None:
    """A range whose base holds a format-1 tree (a `<name>.md` + `<name>.npy` per chunk) and
    whose head the format-2 tree one sync made of it: the files all differ, the sections do
    not; the review says the format moved and names no doc."""
    write(repo, "docs/guide.md", "# Guide\n\n" + "Install the login service. " * 30 + "\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    chunk_file = repo / ".neocortex/chunks/docs/guide.md"
    blocks = split_chunk_file(chunk_file.read_bytes(), path=chunk_file)
    folder = repo / ".neocortex/chunks/docs/guide"
    folder.mkdir()
    for i, block in enumerate(blocks):  # format 1: no `lines`, a hex `vec` naming the .npy
        text = re.sub(r"(?m)^lines: \d+\n", "", without_inline_vec(block).decode())
        (folder / f"c{i}.md").write_text(
            text.replace("\n---\n", "\nvec: 0123456789abcdef\n---\n", 1)
        )
        (folder / f"c{i}.npy").write_bytes(b"\x93NUMPY")
    chunk_file.unlink()
    manifest = repo / ".neocortex/manifest.json"
    manifest.write_text(manifest.read_text().replace('"format": 2', '"format": 1'))
    commit_all(repo, "a format-1 tree")
    ncx("sync")
    commit_all(repo, "moved to format 2")
    assert chunk_file.is_file() and not folder.exists()
    data = json.loads(ncx("review", "HEAD~1..HEAD", "--json").stdout)
    assert data["docs"] == [] and data["memories"] == []
    assert "manifest `format`: 1 → 2" in data["tree"]


def test_review_of_a_head_from_before_ncx_was_set_up(repo: Path) -> None:
    """The range check judges what the head holds: a head without .neocortex/ (a branch
    from before `ncx init`, reviewed from one with it) has nothing to judge, not a git error."""
    write(repo, "docs/a.md", "# A\n\n" + "Alpha text about the login flow. " * 20 + "\n")
    commit_all(repo, "first")
    git(repo, "checkout", "-q", "-b", "old")
    write(repo, "docs/b.md", "# B\n\n" + "Beta text about the deploy. " * 20 + "\n")
    commit_all(repo, "a doc, before ncx")
    git(repo, "checkout", "-q", "-")
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx set up")
    out = ncx("review", "HEAD~1..old", "--fail-on-problems").stdout
    assert "No change to `.neocortex/`" in out
