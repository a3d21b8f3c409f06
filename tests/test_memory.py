"""`ncx memory …` through the installed entry point, in real git repos.

The tiny model knows only the words in conftest._WORDS (others are dropped), so texts here
are built from those words where a vector must be similar, different or change.
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import commit_all, git, ncx, write

TODAY = date.today().isoformat()
MEM = ".neocortex/memories"


@pytest.fixture
def tree(repo: Path) -> Path:
    write(
        repo, "docs/guide.md", "# Guide\n\n## Install\n\nRun pip install to install the package.\n"
    )
    commit_all(repo)
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(repo, "ncx")
    return repo


def add(*args: str, input: str | None = None) -> str:
    out = ncx("memory", "add", *args, input=input)
    mid = out.stdout.strip()
    assert re.fullmatch(r"MEM-\d{4}-\d{2}-\d{2}-[a-z2-7]{6}", mid), out.stdout
    return mid


def front(root: Path, mid: str) -> dict[str, object]:
    text = (root / MEM / f"{mid}.md").read_text()
    return yaml.safe_load(text.split("---\n")[1])  # type: ignore[no-any-return]


def status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


# --- add -----------------------------------------------------------------------------------


def test_add_writes_the_schema_and_nothing_changes_on_read(tree: Path) -> None:
    mid = add(
        "Token refresh fails when the server clock is not in sync",
        "--context", "login error on the staging server",
        "--type", "experiential", "--domain", "auth", "--confidence", "high",
        "--keywords", "token, refresh,clock", "--task", "T-42",
        "--related-doc", "docs/guide.md", "--related-doc", "README.md",
    )  # fmt: skip
    assert mid.startswith(f"MEM-{TODAY}-")
    md, npy = tree / MEM / f"{mid}.md", tree / MEM / f"{mid}.npy"
    assert np.load(npy).shape == (32,)
    meta = front(tree, mid)
    assert list(meta) == [
        "id", "type", "domain", "confidence", "status", "keywords", "source_task", "related_docs",
        "related", "cites", "created", "updated", "verified", "superseded_by", "usefulness",
        "hash", "vec",
    ]  # fmt: skip
    assert (
        meta["cites"]
        == [  # the tracked doc it names, as it was (README.md is not there)
            {"path": "docs/guide.md", "hash": git(tree, "rev-parse", "HEAD:docs/guide.md")[:12]}
        ]
    )
    assert meta["type"] == "experiential" and meta["domain"] == "auth"
    assert meta["confidence"] == "high" and meta["status"] == "active"
    assert meta["keywords"] == ["token", "refresh", "clock"] and meta["source_task"] == "T-42"
    assert meta["related_docs"] == ["docs/guide.md", "README.md"]
    assert str(meta["created"]) == str(meta["updated"]) == TODAY
    assert meta["verified"] is None and meta["superseded_by"] is None
    assert meta["usefulness"] == 0.5
    text = md.read_text()
    assert "&id" not in text and "*id" not in text  # no YAML aliases for the two dates
    assert "## Learning\n\nToken refresh fails" in text
    assert "## Context\n\nlogin error on the staging server" in text
    commit_all(tree, "memory")
    # Reading, listing, retrieving, syncing and checking never rewrite a memory.
    ncx("memory", "list")
    ncx("memory", "show", mid)
    ncx("retrieve", "token refresh", "--kind", "memory")
    sync = ncx("sync")
    assert sync.stdout == ""
    ncx("check")
    assert status(tree) == ""


def test_add_reads_file_and_stdin(tree: Path) -> None:
    long = "\n".join(f"- the cache index {i} is rebuilt after every commit" for i in range(4000))
    notes = write(tree, "notes.txt", long)
    assert len(long) > 150_000  # past what one argv string may hold on Linux (128 KiB)
    mid = add("--file", str(notes))
    assert (tree / MEM / f"{mid}.md").read_text().count("is rebuilt after every commit") == 4000
    mid2 = add("-", input="Release builds run the tests on linux and windows\n")
    assert "Release builds run the tests" in (tree / MEM / f"{mid2}.md").read_text()
    mid3 = add("--file", "-", input="Deploy the server from the release branch only\n")
    assert mid3 not in (mid, mid2)
    empty = ncx("memory", "add", ok=False)
    assert empty.returncode == 2 and "nothing to remember" in empty.stderr


def test_add_rejects_unknown_values_and_needs_init(repo: Path) -> None:
    no_tree = ncx("memory", "add", "something", ok=False)
    assert no_tree.returncode == 1 and "ncx init" in no_tree.stderr
    ncx("init", "-q")
    bad = ncx("memory", "add", "something", "--type", "opinion", ok=False)
    assert bad.returncode == 2 and "factual, experiential, procedural" in bad.stderr


def test_near_duplicate_is_refused_with_the_existing_id_unless_forced(tree: Path) -> None:
    first = add("Retry the api request after a timeout error", "--context", "client code")
    again = ncx("memory", "add", "retry the API request after a timeout error!",
                "--context", "client code", ok=False)  # fmt: skip
    assert again.returncode == 1
    assert f"near-duplicate of {first}" in again.stderr
    assert f"ncx memory evolve {first}" in again.stderr and "--force" in again.stderr
    same = ncx("memory", "add", "Retry the api request after a timeout error",
               "--context", "client code", "--force", ok=False)  # fmt: skip
    assert "already remembered as" in same.stderr  # same text, same day: same file
    forced = add("retry the API request after a timeout error!", "--context", "client code",
                 "--force")  # fmt: skip
    assert forced != first and len(list((tree / MEM).glob("*.md"))) == 2


def test_related_discovery_writes_into_the_new_memory_only(tree: Path) -> None:
    old = add("token refresh auth login session cookie")
    commit_all(tree, "first memory")
    new = add("token refresh auth login session error")  # cosine 0.83 with the tiny model
    meta = front(tree, new)
    related = {r["id"]: r["similarity"] for r in meta["related"]}  # type: ignore[attr-defined]
    assert old in related and 0.7 <= related[old] < 0.92
    assert f"- {old} ({related[old]:.2f})" in (tree / MEM / f"{new}.md").read_text()
    # The old memory is not rewritten: only the new files appear in git.
    assert status(tree).splitlines() == [f"?? {MEM}/{new}.md", f"?? {MEM}/{new}.npy"]


def test_related_discovery_links_doc_chunks(tree: Path) -> None:
    mid = add("Run pip install to install the package", "--force")
    related = front(tree, mid)["related"]
    assert [r["id"] for r in related] == ["docs/guide.md#guide--install"]  # type: ignore[union-attr, index]
    assert "- docs/guide.md § Guide > Install (" in (tree / MEM / f"{mid}.md").read_text()


# --- evolve ----------------------------------------------------------------------------------


def test_evolve_useful_is_a_small_readable_diff(tree: Path) -> None:
    mid = add("Always run the tests before a release build", "--type", "procedural")
    commit_all(tree, "memory")
    ncx("memory", "evolve", mid, "--useful")
    diff = git(tree, "diff", "-U0", "--no-color")
    changed = [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert changed == [
        "-confidence: medium", "+confidence: high",
        "-verified: null", f"+verified: {TODAY}",
        "-usefulness: 0.5", "+usefulness: 0.6",
    ]  # fmt: skip
    assert git(tree, "diff", "--name-only").split() == [f"{MEM}/{mid}.md"]  # vector untouched
    ncx("memory", "evolve", mid[-6:], "--useful")  # the 6-letter suffix is enough
    meta = front(tree, mid)
    assert meta["usefulness"] == 0.7 and meta["confidence"] == "high"  # capped at high


def test_evolve_incorrect_appends_a_dated_correction_and_reembeds(tree: Path) -> None:
    mid = add("The cache is rebuilt after every commit", "--confidence", "high")
    commit_all(tree, "memory")
    vec = np.load(tree / MEM / f"{mid}.npy")
    ncx("memory", "evolve", mid, "--incorrect", "only the search index is rebuilt, on merge")
    diff = git(tree, "diff", "-U0", "--no-color", "--", "*.md")
    changed = [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert changed[:2] == ["-confidence: high", "+confidence: medium"]
    assert f"+**Correction ({TODAY}):** only the search index is rebuilt, on merge" in changed
    assert len(changed) <= 8  # confidence, hash, the correction (+ its blank line)
    assert not np.allclose(np.load(tree / MEM / f"{mid}.npy"), vec)
    assert ncx("sync").stdout == ""  # hash and vector already agree
    leak = ncx("memory", "evolve", mid, "--incorrect",
               "use password = Tr0ub4dor&3x instead", ok=False)  # fmt: skip
    assert leak.returncode == 1 and "line 1, column 16" in leak.stderr
    assert "looks like a password" in leak.stderr


def test_evolve_supersede_links_both_ways_and_hides_the_old_one(tree: Path) -> None:
    old = add("Deploy the server with the build script")
    other = add("Search queries use the index cache", "--force")
    commit_all(tree, "memories")
    new = add("Deploy the server with the release hook", "--force")
    commit_all(tree, "new memory")
    ncx("memory", "evolve", old, "--supersede-by", new)
    assert sorted(git(tree, "diff", "--name-only").split()) == sorted(
        [f"{MEM}/{old}.md", f"{MEM}/{new}.md"]
    )  # exactly the two linked files; `other` untouched
    assert other not in git(tree, "diff")
    o, n = front(tree, old), front(tree, new)
    assert o["status"] == "superseded" and o["superseded_by"] == new
    assert n["supersedes"] == [old] and n["status"] == "active"
    ids = [json.loads(ln)["id"] for ln in
           ncx("retrieve", "deploy server", "--kind", "memory", "--json").stdout.splitlines()]  # fmt: skip
    assert new in ids and old not in ids
    ids = [json.loads(ln)["id"] for ln in ncx(
        "retrieve", "deploy server", "--kind", "memory", "--json", "--include-superseded"
    ).stdout.splitlines()]  # fmt: skip
    assert old in ids
    again = ncx("memory", "evolve", new, "--supersede-by", old, ok=False)
    assert again.returncode == 2 and "superseded itself" in again.stderr


def test_evolve_needs_exactly_one_action_and_an_existing_id(tree: Path) -> None:
    mid = add("Run the tests")
    both = ncx("memory", "evolve", mid, "--useful", "--incorrect", "x", ok=False)
    assert both.returncode == 2 and "exactly one" in both.stderr
    missing = ncx("memory", "evolve", "MEM-2000-01-01-aaaaaa", "--useful", ok=False)
    assert missing.returncode == 1 and "no memory 'MEM-2000-01-01-aaaaaa'" in missing.stderr


# --- rm, list, show --------------------------------------------------------------------------


def test_rm_deletes_both_files(tree: Path) -> None:
    mid = add("Run the tests")
    out = ncx("memory", "rm", mid)
    assert out.stdout.split("\n")[:2] == [f"removed {MEM}/{mid}.md", f"removed {MEM}/{mid}.npy"]
    assert not list((tree / MEM).glob(f"{mid}.*"))
    assert ncx("memory", "rm", mid, ok=False).returncode == 1


def test_list_filters_and_json_and_show(tree: Path) -> None:
    a = add("Run the tests before a release", "--type", "procedural", "--domain", "build")
    b = add("The auth token expires after one session", "--domain", "auth",
            "--confidence", "low", "--force")  # fmt: skip
    rows = json.loads(ncx("memory", "list", "--json").stdout)
    assert [r["id"] for r in rows] == sorted([a, b])
    assert {r["id"]: r["created"] for r in rows} == {a: TODAY, b: TODAY}
    assert [
        r["id"] for r in json.loads(ncx("memory", "list", "--json", "--type", "procedural").stdout)
    ] == [a]
    assert [
        r["id"] for r in json.loads(ncx("memory", "list", "--json", "--domain", "auth").stdout)
    ] == [b]
    assert json.loads(ncx("memory", "list", "--json", "--status", "proposed").stdout) == []
    low = ncx("memory", "list", "--confidence", "low").stdout.splitlines()
    assert len(low) == 1 and low[0].startswith(b) and "The auth token expires" in low[0]
    shown = ncx("memory", "show", b).stdout
    assert shown == (tree / MEM / f"{b}.md").read_text()
    as_json = json.loads(ncx("memory", "show", b[-6:], "--json").stdout)
    assert as_json["learning"] == "The auth token expires after one session"


# --- extract, approve, reject ----------------------------------------------------------------

NOTES = """\
# Session notes

## Tests

- Ran the tests, got error: ModuleNotFoundError: No module named 'yaml'
- Fixed by adding pyyaml to the requirements; verified the tests pass now.

## Deploy

- Remember this: deploy only from the release branch.

## Staging

- Remember: the staging token is API_TOKEN=9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c

## Practice

- Always run the database migrations before the seed script.
"""


def test_extract_writes_proposals_and_skips_secrets(tree: Path) -> None:
    write(tree, "notes.md", NOTES)
    out = ncx("memory", "extract", "notes.md", "--json")
    result = json.loads(out.stdout)
    added = {a["learning"]: a for a in result["added"]}
    assert len(added) == 3 and all(a["status"] == "proposed" for a in added.values())
    assert [a["confidence"] for a in result["added"]] == ["high", "high", "medium"]
    assert "pyyaml" in result["added"][0]["learning"]
    assert "release branch" in result["added"][1]["learning"]
    (skipped,) = result["skipped"]
    assert skipped["lines"] == [14, 14] and "line 14, column 44" in skipped["reason"]
    assert "skipped the proposal from lines 14-14: holds a secret" in out.stderr
    assert "9f8a7b6c" not in json.dumps(result["added"])  # not even in a context
    for a in result["added"]:
        assert front(tree, a["id"])["provenance"].startswith("extract:")  # type: ignore[union-attr]
    # Proposals never reach retrieval until approved.
    hits = ncx("retrieve", "release branch deploy", "--kind", "memory", "--json").stdout
    assert hits == ""
    # A second run proposes nothing new.
    again = json.loads(ncx("memory", "extract", "notes.md", "--json").stdout)
    assert again["added"] == [] and len(again["skipped"]) == 4


def test_extract_from_stdin_with_auto_save(tree: Path) -> None:
    out = ncx("memory", "extract", "--auto-save", "--json", input=NOTES)
    added = json.loads(out.stdout)["added"]
    assert [(a["confidence"], a["status"]) for a in added] == [
        ("high", "active"), ("high", "active"), ("medium", "proposed")
    ]  # fmt: skip


def test_approve_and_reject_are_reviewed_changes(tree: Path) -> None:
    write(tree, "notes.md", NOTES)
    added = json.loads(ncx("memory", "extract", "notes.md", "--json").stdout)["added"]
    keep, drop = added[0]["id"], added[1]["id"]
    commit_all(tree, "proposals")
    ncx("memory", "approve", keep)
    diff = git(tree, "diff", "-U0", "--no-color")
    changed = [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert changed == ["-status: proposed", "+status: active"]  # created the same day
    assert ncx("memory", "approve", keep, ok=False).returncode == 2
    ncx("memory", "reject", drop)
    assert not (tree / MEM / f"{drop}.md").exists() and not (tree / MEM / f"{drop}.npy").exists()
    not_proposed = ncx("memory", "reject", keep, ok=False)
    assert not_proposed.returncode == 2 and "ncx memory rm" in not_proposed.stderr


# --- branches --------------------------------------------------------------------------------


def test_memories_added_on_two_branches_the_same_day_merge_cleanly(tree: Path) -> None:
    base = add("Run the tests before every commit")
    commit_all(tree, "base")
    git(tree, "checkout", "-q", "-b", "feature")
    ours = [add("The search index is rebuilt on merge", "--force"),
            add("Login needs a session cookie", "--force")]  # fmt: skip
    ncx("memory", "evolve", base, "--useful")
    commit_all(tree, "feature memories")
    git(tree, "checkout", "-q", "main")
    theirs = [add("Deploy from the release branch only", "--force"),
              add("The api timeout is set in the config file", "--force")]  # fmt: skip
    commit_all(tree, "main memories")
    git(tree, "merge", "-q", "--no-edit", "--no-gpg-sign", "feature")  # asserts exit 0
    assert git(tree, "diff", "--name-only", "--diff-filter=U") == ""
    ids = {p.stem for p in (tree / MEM).glob("*.md")}
    assert ids == {base, *ours, *theirs} and len(ids) == 5
    assert all(i.startswith(f"MEM-{TODAY}-") for i in ids)
    assert front(tree, base)["usefulness"] == 0.6
    ncx("check")
    assert ncx("sync").stdout == ""


# --- secrets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "why"),
    [
        ("Use the key AKIAZ3QW7RTX2M5KP9VB for uploads", "line 1, column 13", "AWS access key"),
        (
            "ci uses ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            "line 1, column 9",
            "GitHub token",
        ),
        ("connect to postgres://app:s3cr3tPw9@db.internal/app", "line 1, column 27", "password"),
        ("notes\nAPI_SECRET = 'Zx9fQ2LmA7pR4tW8yK3n'", "line 2, column 15", "a secret"),
        (
            "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7QqG5m2vXy9ZzT3a\n-----END RSA PRIVATE KEY-----",
            "line 2, column 1",
            "private key",
        ),
    ],
)
def test_secret_guard_refuses_credentials_with_reason_and_position(
    tree: Path, text: str, where: str, why: str
) -> None:
    out = ncx("memory", "add", text, ok=False)
    assert out.returncode == 1
    assert f"learning {where}" in out.stderr and why in out.stderr
    assert not list((tree / MEM).glob("*.md")) if (tree / MEM).exists() else True
    ctx = ncx("memory", "add", "how we connect", "--context", text, ok=False)
    assert f"context {where}" in ctx.stderr


@pytest.mark.parametrize(
    "text",
    [
        "Rotate the API token weekly",
        "The password must be at least 12 characters",
        "Set GITHUB_TOKEN in the CI secrets, never in the workflow file",
        "token = os.environ['API_TOKEN']",
        "password: ${DB_PASSWORD}",
        "Compose uses postgres://postgres:password@localhost/dev for local runs",
        "Commit 3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345 fixed the token refresh",
        "The secret_name is prod/api-key in the vault",
    ],
)
def test_secret_guard_lets_prose_about_secrets_through(tree: Path, text: str) -> None:
    mid = add(text, "--force")
    assert (tree / MEM / f"{mid}.md").exists()


# --- hand edits ------------------------------------------------------------------------------


def test_hand_edited_memory_is_reembedded_on_sync(tree: Path) -> None:
    mid = add("The cache is rebuilt after every commit")
    commit_all(tree, "memory")
    md = tree / MEM / f"{mid}.md"
    vec = np.load(md.with_suffix(".npy"))
    md.write_text(md.read_text().replace("after every commit", "after every merge of a branch"))
    stale = ncx("check", ok=False)
    assert f"{MEM}/{mid}.md: stale" in stale.stdout
    out = ncx("sync")
    assert f"wrote {MEM}/{mid}.npy" in out.stdout and f"wrote {MEM}/{mid}.md" in out.stdout
    assert not np.allclose(np.load(md.with_suffix(".npy")), vec)
    ncx("check")
    assert ncx("sync").stdout == ""
    hits = ncx("retrieve", "merge branch", "--kind", "memory", "--json").stdout
    assert json.loads(hits.splitlines()[0])["id"] == mid


def test_check_reports_malformed_frontmatter_with_file_and_line(tree: Path) -> None:
    mid = add("The cache is rebuilt after every commit")
    md = tree / MEM / f"{mid}.md"
    md.write_text(md.read_text().replace("keywords: []", "keywords: [cache, commit"))
    out = ncx("check", ok=False)
    assert out.returncode == 1
    assert f"{MEM}/{mid}.md: frontmatter does not parse (line 8)" in out.stdout
    listed = ncx("memory", "list", ok=False)  # never silently dropped
    assert listed.returncode == 1 and f"{mid}.md" in listed.stderr


def test_check_validates_hand_edited_fields_and_scans_for_secrets(tree: Path) -> None:
    mid = add("The cache is rebuilt after every commit")
    md = tree / MEM / f"{mid}.md"
    text = md.read_text().replace("type: factual", "type: opinion")
    text = text.replace("created: ", "created: last tuesday #")
    text += "\nDB password = 'Tr0ub4dor&3x'\n"
    md.write_text(text)
    out = ncx("check", ok=False).stdout
    assert f"{MEM}/{mid}.md: type 'opinion' is not one of factual, experiential, procedural" in out
    assert f"{MEM}/{mid}.md: created 'last tuesday' is not a date (YYYY-MM-DD)" in out
    line = text.splitlines().index("DB password = 'Tr0ub4dor&3x'") + 1
    assert f"{MEM}/{mid}.md:{line}:16: " in out and "looks like a password" in out


@pytest.mark.parametrize("option", ["--domain", "--task", "--related-doc"])
def test_secret_guard_covers_every_field_written_to_the_file(tree: Path, option: str) -> None:
    token = "ghp_" + "R4nd0mL00k1ngT0kenV4lue" + "1234567890123"  # assembled: fake, well shaped
    out = ncx("memory", "add", "Deploys go through the release pipeline", option, token, ok=False)
    assert out.returncode == 1 and "github" in out.stderr.lower()
    mem = tree / MEM
    assert not mem.exists() or not any(token in p.read_text() for p in mem.glob("*.md"))


def test_a_learning_that_repeats_a_doc_section_is_not_a_duplicate_memory(tree: Path) -> None:
    # near-duplicates are other memories; a doc chunk saying the same is related, not a duplicate
    add("Run pip install to install the package.")


def test_wakeup_lists_active_memories_only(tree: Path) -> None:
    old = add("Deploys go through the staging cluster first", "--domain", "ops")
    new = add("Deploys go through the canary pool, then production", "--domain", "ops", "--force")
    ncx("memory", "evolve", old, "--supersede-by", new)
    wake = ncx("wakeup").stdout
    assert new in wake and old not in wake


def test_add_decodes_only_the_units_near_it(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Duplicate and related checks stop at their thresholds: a memory add must not decode
    # every unit of a large tree's cache (it did: most of an add's time on 40,000 chunks).
    import ncx.query.cache as cache

    for i in range(40):
        write(tree, f"docs/far{i:02}.md", f"# Zebra {i}\n\nQuokka xylophone marmalade {i}.\n")
    commit_all(tree)
    ncx("sync", "-q")
    commit_all(tree, "ncx")
    cache.load_index(tree)  # built and written; the add reads it back
    decoded: list[str] = []
    import ncx.query.units as units

    real = units._unit_of
    monkeypatch.setattr(units, "_unit_of", lambda row: decoded.append(row["id"]) or real(row))
    add("Run pip install to install the package", "--type", "experiential")
    assert len(cache.load_index(tree).units) > 40
    assert decoded and not any(d.startswith("docs/far") for d in decoded)
