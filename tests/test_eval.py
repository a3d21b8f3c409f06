"""ncx eval: the team's questions about its knowledge as regression tests, through the real
CLI on real git history; and `--at REV`, the knowledge of a commit without a checkout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import _WORDS, SHARED, commit_all, git, ncx, write

AUTH = """# Auth

How login works for users of the api.

## Refresh

A refresh token renews the session cookie before the timeout; the client sends the
refresh token to the auth server and gets a new session.

## Password

A user changes the password on the settings page; every session is closed after it.
"""
DEPLOY = """# Deploy

## Release

Build the release, tag the version, deploy to the server with the deploy hook.

## Rollback

A rollback deploys the previous release version to the server again.
"""
EVALS = """questions:
  - id: refresh
    ask: how does the client refresh the session token
    expect:
      - doc: docs/auth.md
        section: Refresh
  - id: rollback
    ask: rollback a release on the server
    expect:
      - doc: docs/deploy.md
        section: Rollback
"""


def _tree(root: Path, evals: str = EVALS) -> None:
    write(root, "docs/auth.md", AUTH)
    write(root, "docs/deploy.md", DEPLOY)
    commit_all(root, "docs")
    ncx("init", "-q")
    write(root, ".neocortex/evals.yaml", evals)
    ncx("sync", "-q")
    commit_all(root, "docs")


def _eval(
    *args: str, ok: bool = True, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    proc = ncx("eval", "--json", *args, ok=ok, env=env)
    return proc.returncode, json.loads(proc.stdout)


def _passed(report: dict[str, Any]) -> dict[str, bool]:
    return {q["id"]: q["passed"] for q in report["questions"]}


def _change(root: Path, edit: Any, msg: str) -> None:
    edit()
    ncx("sync", "-q")
    commit_all(root, msg)


def test_questions_pass_with_rank_and_frame_and_the_report_is_deterministic(repo: Path) -> None:
    _tree(repo)
    code, report = _eval()
    assert code == 0 and _passed(report) == {"refresh": True, "rollback": True}
    refresh = report["questions"][0]
    assert refresh["rank"] == 1 and refresh["in_frame"] is True
    md1 = ncx("eval").stdout
    md2 = ncx("eval").stdout
    assert md1 == md2 and "| `refresh` | pass | 1 | yes | docs/auth.md#Refresh |" in md1
    assert ncx("eval", "--json").stdout == ncx("eval", "--json").stdout
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    "change",
    ["doc renamed", "section split", "heading reworded", "doc deleted"],
)
def test_a_change_that_loses_the_answer_fails_the_eval_since_the_base(
    repo: Path, change: str
) -> None:
    _tree(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    auth = repo / "docs/auth.md"
    if change == "doc renamed":
        git(repo, "mv", "docs/auth.md", "docs/login.md")
    elif change == "section split":
        # the section's text goes to two new sections; `## Refresh` is no more
        auth.write_text(
            AUTH.replace(
                "## Refresh\n\nA refresh token renews the session cookie before the timeout; "
                "the client sends the\n",
                "## Session renewal\n\nA refresh token renews the session cookie before the "
                "timeout.\n\n## Token exchange\n\nThe client sends the\n",
            )
        )
    elif change == "heading reworded":
        auth.write_text(AUTH.replace("## Refresh", "## Renewing a session"))
    else:
        git(repo, "rm", "-q", "docs/auth.md")
    ncx("sync", "-q")
    commit_all(repo, change)
    code, report = _eval("--since", base, ok=False)
    assert code == 1, report
    assert report["broken"] == ["refresh"] and _passed(report)["rollback"] is True
    refresh = report["questions"][0]
    assert refresh["change"] == "BROKEN" and refresh["base"]["passed"] is True
    md = ncx("eval", "--since", base, ok=False)
    assert "Broken since commit" in md.stdout and "`refresh`" in md.stdout
    assert "1 question(s) broken since" in md.stderr and "refresh" in md.stderr


def test_without_since_any_failing_question_fails_and_since_forgives_old_failures(
    repo: Path,
) -> None:
    evals = (
        EVALS + "  - id: missing\n    ask: rate limits\n    expect:\n      - doc: docs/rates.md\n"
    )
    _tree(repo, evals)
    code, report = _eval(ok=False)
    assert code == 1 and _passed(report)["missing"] is False
    # failed on the base too: not a regression
    write(repo, "docs/deploy.md", DEPLOY + "\nMore words on the deploy hook.\n")
    ncx("sync", "-q")
    commit_all(repo, "edit")
    code, report = _eval("--since", "HEAD~1")
    assert (
        code == 0 and report["broken"] == [] and report["questions"][2]["change"] == "still fails"
    )


def test_a_superseded_memory_fails_its_question(repo: Path) -> None:
    _tree(repo)
    mid = ncx(
        "memory", "add", "The deploy hook needs the release token in the server config"
    ).stdout.strip()
    new = ncx(
        "memory", "add", "Deploy reads the release version from the build, not the token"
    ).stdout.strip()
    write(
        repo,
        ".neocortex/evals.yaml",
        EVALS
        + f"  - id: hook\n    ask: deploy hook release token\n    expect:\n      - memory: {mid}\n",
    )
    commit_all(repo, "memories")
    base = git(repo, "rev-parse", "HEAD").strip()
    assert _eval()[0] == 0
    ncx("memory", "evolve", mid, "--supersede-by", new)
    commit_all(repo, "supersede")
    code, report = _eval("--since", base, ok=False)
    assert code == 1 and report["broken"] == ["hook"]


def test_a_model_switch_that_reorders_the_answers_fails_a_top_question(
    repo: Path, other_model: Path
) -> None:
    # No shared word between the question and the docs: only the embedding ranks them.
    for i, words in enumerate(("alpha fix bug", "merge branch commit", "vector chunk index")):
        write(repo, f"notes/n{i}.md", f"# Note {i}\n\n{words} {words}\n")
    write(repo, "README.md", "# Project\n\nNotes.\n")
    commit_all(repo, "notes")
    ncx("init", "-q")
    ncx("sync", "-q")
    ask = "speed performance slow fast"
    first = json.loads(ncx("retrieve", ask, "--json", "--k", "1").stdout.splitlines()[0])
    write(
        repo,
        ".neocortex/evals.yaml",
        f"questions:\n  - id: q\n    ask: {ask}\n    top: 1\n    expect:\n"
        f"      - doc: {first['source_path']}\n",
    )
    commit_all(repo, "tree")
    base = git(repo, "rev-parse", "HEAD").strip()
    assert _eval()[0] == 0
    ncx("model", "use", str(other_model), env={"NCX_EMBEDDING_MODEL": str(other_model)})
    commit_all(repo, "switch model")
    code, report = _eval("--since", base, ok=False, env={"NCX_EMBEDDING_MODEL": str(other_model)})
    assert code == 1 and report["broken"] == ["q"]


# --- --at REV: the knowledge of a commit, byte for byte what a checkout of it gives ----------

REAL = SHARED / "bench-data/repo-cisagov-manage.get.gov/corpus/all"


def _docs() -> list[tuple[str, str]]:
    """A real tree's docs when the shared data is there, else a generated one."""
    if REAL.is_dir():
        files = sorted(p for p in REAL.rglob("*.md") if p.is_file())
        return [(p.relative_to(REAL).as_posix(), p.read_text(encoding="utf-8")) for p in files]
    words = [w for w in _WORDS if len(w) > 3]
    return [
        (
            f"docs/d{i:02}.md",
            f"# Doc {i}\n\n## {words[i % len(words)]}\n\n"
            + " ".join(words[(i * 7 + j) % len(words)] for j in range(60))
            + f"\n\n## {words[(i + 5) % len(words)]} notes\n\n"
            + " ".join(words[(i * 3 + j) % len(words)] for j in range(40))
            + "\n",
        )
        for i in range(40)
    ]


def _history(root: Path, commits: int) -> list[str]:
    """`commits` commits: docs added, edited, renamed and deleted, memories added and
    superseded, each synced; returns their shas, oldest first."""
    docs = _docs()
    shas: list[str] = []
    first = max(3, len(docs) // 3)
    for rel, text in docs[:first]:
        write(root, rel, text)
    commit_all(root, "docs")
    ncx("init", "-q")
    ncx("sync", "-q")
    commit_all(root, "ncx")
    shas.append(git(root, "rev-parse", "HEAD").strip())
    todo = docs[first:]
    mems: list[str] = []
    for i in range(1, commits):
        present = sorted(git(root, "ls-files", "*.md", ":!.neocortex").split())
        step = i % 5
        if step == 0 and todo:
            for rel, text in todo[:4]:
                write(root, rel, text)
            del todo[:4]
        elif step == 1:
            p = root / present[i % len(present)]
            p.write_text(p.read_text(encoding="utf-8") + f"\n## Added {i}\n\nThe cache note {i}.\n")
        elif step == 2 and len(present) > 3:
            (root / "moved").mkdir(exist_ok=True)
            git(root, "mv", present[i % len(present)], f"moved/m{i}.md")
        elif step == 3 and len(present) > 3:
            git(root, "rm", "-q", present[(i * 3) % len(present)])
        else:
            mems.append(
                ncx(
                    "memory",
                    "add",
                    f"The deploy hook reads the release {_WORDS[i * 5]} {_WORDS[i * 7]}",
                    "--force",
                ).stdout.strip()
            )
            if len(mems) > 1:
                ncx("memory", "evolve", mems[-2], "--supersede-by", mems[-1])
        commit_all(root, f"step {i}")
        ncx("sync", "-q")
        if git(root, "status", "--porcelain"):
            commit_all(root, f"sync {i}")
        shas.append(git(root, "rev-parse", "HEAD").strip())
    return shas


def test_at_rev_equals_a_checkout_of_rev_for_every_commit(repo: Path, tmp_path: Path) -> None:
    shas = _history(repo, 10)
    clone = tmp_path / "clone"
    git(repo, "clone", "-q", str(repo), str(clone))
    task = "how do I deploy the release and configure the cache"
    for sha in shas:
        at = ncx("assemble", "--task", task, "--budget", "3000", "--at", sha)
        hits = ncx("retrieve", task, "--json", "--k", "8", "--at", sha).stdout
        git(clone, "checkout", "-q", "--detach", sha)
        # a fresh checkout's cache (one patched from the last commit's may differ in a
        # score's last digits: benchmarks/results/eval_*.json)
        shutil.rmtree(clone / ".neocortex/cache", ignore_errors=True)
        there = ncx("assemble", "--task", task, "--budget", "3000", cwd=clone)
        assert at.stdout == there.stdout, sha
        assert hits == ncx("retrieve", task, "--json", "--k", "8", cwd=clone).stdout, sha
        # the frame id names the commit, and the model and options are said with it
        assert f"at {sha[:12]} (model " in at.stderr and "budget 3000" in at.stderr
    # a commit's knowledge is materialised once, under its tree id, and reused
    trees = {git(repo, "rev-parse", f"{s}^{{tree}}").strip() for s in shas}
    assert {p.name for p in (repo / ".neocortex/cache/at").iterdir()} == trees
    assert git(repo, "status", "--porcelain") == ""
    # the commits' files under the cache are nobody's docs, chunks or memories
    assert "tree OK" in ncx("check").stderr
    assert "nothing written" in ncx("sync").stderr


def test_at_an_unknown_rev_names_it(repo: Path) -> None:
    _tree(repo)
    bad = ncx("assemble", "--task", "x y z", "--at", "no-such-branch", ok=False)
    assert bad.returncode == 2 and "'no-such-branch' is not a commit" in bad.stderr


def test_review_shows_the_eval_delta_and_a_broken_question_is_a_problem(repo: Path) -> None:
    _tree(repo)
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "docs/auth.md").write_text(AUTH.replace("## Refresh", "## Renewing a session"))
    ncx("sync", "-q")
    commit_all(repo, "reword")
    out = ncx("review", "main..feature", "--fail-on-problems", ok=False)
    assert out.returncode == 1
    assert "### ncx eval: 1 of 2 question(s) pass; 1 broken, 0 fixed" in out.stdout
    assert "question `refresh` passed on commit" in out.stdout
    data = json.loads(ncx("review", "main..feature", "--json").stdout)
    assert data["evals"]["broken"] == ["refresh"]


def test_a_base_before_init_answers_nothing_and_breaks_nothing(repo: Path) -> None:
    write(repo, "README.md", "# P\n")
    commit_all(repo, "start")
    _tree(repo)
    code, report = _eval("--since", "HEAD~2")
    assert code == 0 and report["fixed"] == ["refresh", "rollback"]


def test_suggest_proposes_headings_and_memories_that_pass(repo: Path) -> None:
    _tree(repo)
    mid = ncx("memory", "add", "The deploy hook needs the release token").stdout.strip()
    text = ncx("eval", "--suggest").stdout
    assert text == ncx("eval", "--suggest").stdout
    assert 'section: "Refresh"' in text and f'memory: "{mid}"' in text
    write(repo, "suggested.yaml", text)
    code, report = _eval("--file", "suggested.yaml")
    assert code == 0 and report["passed"] == len(report["questions"]) >= 5


def test_a_bad_questions_file_names_the_question_and_the_fix(repo: Path) -> None:
    _tree(repo, "questions:\n  - id: a\n    expect:\n      - doc: x.md\n")
    bad = ncx("eval", ok=False)
    assert bad.returncode == 1 and "question 1 (a): `ask:`" in bad.stderr
    assert "docs/formats.md" in bad.stderr
