"""Tests for ncx.memory.extract: session notes in, proposed memories out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ncx.memory.extract import Proposal, propose_memories

Row = tuple[tuple[int, int], str, str, str, str]  # source_lines, trigger, type, confidence, text


def summary(notes: str) -> list[Row]:
    return [
        (p.source_lines, p.trigger, p.type, p.confidence, p.text) for p in propose_memories(notes)
    ]


EXPLICIT = [
    (
        "Remember this: the staging API returns 204, not 200.",
        "the staging API returns 204, not 200.",
        "factual",
    ),
    (
        "remember: run `make schema` after editing models",
        "run `make schema` after editing models",
        "procedural",
    ),
    ("Note to self - the CI runner has no GPU", "the CI runner has no GPU", "factual"),
    ("Lesson learned: retries hide flaky tests.", "retries hide flaky tests.", "factual"),
    (
        "TIL that git worktrees share one hooks directory",
        "git worktrees share one hooks directory",
        "factual",
    ),
    (
        "We learned the hard way that git stash skips untracked files.",
        "git stash skips untracked files.",
        "factual",
    ),
    ("IMPORTANT: numpy must stay below 2.0", "numpy must stay below 2.0", "factual"),
    ("Gotcha: YAML parses `on` as true.", "YAML parses `on` as true.", "factual"),
    (
        "One gotcha is that dates parse as datetime objects",
        "that dates parse as datetime objects",
        "factual",
    ),
    (
        "The API returns 204 on refresh — remember this.",
        "The API returns 204 on refresh",
        "factual",
    ),
    ("- **Lesson learned:** pin the model revision", "pin the model revision", "procedural"),
    ("User: remember that the cache is per process", "the cache is per process", "factual"),
    (
        "Key takeaway: the import failed because of a circular import",
        "the import failed because of a circular import",
        "experiential",
    ),
]


@pytest.mark.parametrize(("notes", "text", "kind"), EXPLICIT)
def test_explicit_markers_are_high_confidence(notes: str, text: str, kind: str) -> None:
    assert summary(notes) == [((1, 1), "explicit", kind, "high", text)]


def test_a_bare_marker_takes_the_items_that_follow() -> None:
    notes = "Lessons learned:\n- keep the rebuild idempotent\n- the hook must exit 1\n  on writes\n\nunrelated"
    assert summary(notes) == [
        ((2, 2), "explicit", "procedural", "high", "keep the rebuild idempotent"),
        ((3, 4), "explicit", "factual", "high", "the hook must exit 1 on writes"),
    ]


def test_a_lessons_heading_makes_each_item_a_proposal() -> None:
    notes = (
        "## Lessons learned\n\n"
        "- Feature flags are read once at startup.\n\n"
        "Sessions expire after 12 hours of inactivity.\n"
        "## Next steps\n"
        "- write the migration\n"
    )
    rows = summary(notes)
    assert [r[0] for r in rows] == [(3, 3), (5, 5)]
    assert [r[4] for r in rows] == [
        "Feature flags are read once at startup.",
        "Sessions expire after 12 hours of inactivity.",
    ]
    assert propose_memories(notes)[0].context.startswith("Lessons learned")


def test_remember_this_alone_points_at_the_line_above() -> None:
    assert summary("The index lives in .neocortex/index.\nRemember this!") == [
        ((1, 2), "explicit", "factual", "high", "The index lives in .neocortex/index.")
    ]


@pytest.mark.parametrize(
    "notes",
    [
        "Gotcha, thanks!",
        "Do you remember that bug?",
        "wait til the build finishes",
        "It's important to me that this ships.",
        "TIL x",
        "the lessons learned while porting the parser were many",
        "",
        "\n\n   \n",
    ],
)
def test_not_explicit(notes: str) -> None:
    assert propose_memories(notes) == []


ERRORS = [
    (
        "pytest fails with ImportError\nthe fix was to add __init__.py\ntests pass now",
        [((1, 3), "high", "pytest fails with ImportError → add __init__.py")],
    ),
    (
        "deploy failed: missing env var\nfixed by setting DATABASE_URL in the unit file",
        [
            (
                (1, 2),
                "medium",
                "deploy failed: missing env var → fixed by setting DATABASE_URL in the unit file",
            )
        ],
    ),
    (
        "The ImportError was caused by a stale .pyc file",
        [((1, 1), "medium", "The ImportError was caused by a stale .pyc file")],
    ),
    (
        "make test fails with database is locked\ntried again\nstill fails\nchecked logs\n"
        "restarted\nthe culprit was a leftover journal file; deleting it fixed it\nverified on CI",
        [
            (
                (1, 7),
                "high",
                "make test fails with database is locked → the culprit was a leftover journal "
                "file; deleting it fixed it",
            )
        ],
    ),
    (
        "Running the suite fails:\n```\nTraceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "ModuleNotFoundError: No module named 'ncx'\n```\n"
        "Solution: `pip install -e .` in the venv.",
        [
            (
                (1, 7),
                "medium",
                "Running the suite fails: ModuleNotFoundError: No module named 'ncx' → "
                "`pip install -e .` in the venv.",
            )
        ],
    ),
]


@pytest.mark.parametrize(("notes", "expected"), ERRORS)
def test_error_resolution_pairs(
    notes: str, expected: list[tuple[tuple[int, int], str, str]]
) -> None:
    rows = summary(notes)
    assert [(r[0], r[3], r[4]) for r in rows] == expected
    assert all(r[1] == "error_resolution" and r[2] == "experiential" for r in rows)


@pytest.mark.parametrize(
    "notes",
    [
        "the build failed twice\nno idea why",
        "ImportError on startup\nnot fixed yet",
        "0 failed, 12 passed\nFixed the typo in README",
        "Improved error handling in the CLI.\nFixed the typo in README",
        "the build failed\n" + "more notes\n" * 7 + "fixed the flaky test",
        "the build failed\n## Later\nfixed the flaky test",
    ],
)
def test_no_pair_without_a_nearby_resolution(notes: str) -> None:
    assert [r for r in summary(notes) if r[1] == "error_resolution"] == []


VERIFICATIONS = [
    (
        "Verified that the cache key includes the model id.",
        (1, 1),
        "medium",
        "the cache key includes the model id.",
    ),
    (
        "Confirmed: exports are UTF-8 without a BOM.",
        (1, 1),
        "medium",
        "exports are UTF-8 without a BOM.",
    ),
    (
        "Confirmed with Dana that releases happen on Tuesdays.",
        (1, 1),
        "medium",
        "releases happen on Tuesdays.",
    ),
    (
        "Login works now after setting SameSite=Lax on the session cookie.",
        (1, 1),
        "medium",
        "Login works now after setting SameSite=Lax on the session cookie.",
    ),
    ("Tests pass after pinning numpy<2.", (1, 1), "medium", "Tests pass after pinning numpy<2."),
    ("Bumped httpx to 0.27.\nWorks now.", (1, 2), "low", "Bumped httpx to 0.27 — Works now."),
]


@pytest.mark.parametrize(("notes", "lines", "confidence", "text"), VERIFICATIONS)
def test_verifications_are_factual(
    notes: str, lines: tuple[int, int], confidence: str, text: str
) -> None:
    assert summary(notes) == [(lines, "verification", "factual", confidence, text)]


@pytest.mark.parametrize(
    "notes",
    [
        "I have not verified the retry logic.",
        "Is it confirmed that prod uses Postgres 15?",
        "Works now.",
        "## Confirmed\n",
    ],
)
def test_not_a_verification(notes: str) -> None:
    assert propose_memories(notes) == []


PATTERNS = [
    ("Always run `make migrate` before the integration tests.", "medium"),
    ("Never commit .env files.", "medium"),
    ("To regenerate fixtures, run scripts/regen.sh.", "medium"),
    ("Don't mock the clock in integration tests.", "medium"),
    ("Before releasing, bump the version in pyproject.toml.", "medium"),
    ("To run the hook locally, you must pass --all-files.", "medium"),
    ("Never rebase.", "low"),
]


@pytest.mark.parametrize(("notes", "confidence"), PATTERNS)
def test_procedural_patterns(notes: str, confidence: str) -> None:
    assert summary(notes) == [((1, 1), "pattern", "procedural", confidence, notes)]


def test_only_the_procedural_sentence_of_a_line_is_kept() -> None:
    rows = summary("We lost an hour on this. Always clear the cache before benchmarking.")
    assert [r[4] for r in rows] == ["Always clear the cache before benchmarking."]


@pytest.mark.parametrize(
    "notes",
    [
        "Never mind, my mistake.",
        "It never worked on Windows anyway.",
        "Should we always run the linter?",
        "```\n# always close the file\n```",
    ],
)
def test_not_procedural(notes: str) -> None:
    assert propose_memories(notes) == []


def test_an_explicit_marker_wins_over_other_triggers_on_the_same_line() -> None:
    rows = summary("TIL: always run migrations before seeding the database")
    assert rows == [
        (
            (1, 1),
            "explicit",
            "procedural",
            "high",
            "always run migrations before seeding the database",
        )
    ]


def test_a_learning_written_twice_is_proposed_once() -> None:
    notes = "Remember: the cache is per process.\n\nlater...\n\nremember: The cache is per process"
    assert [r[0] for r in summary(notes)] == [(1, 1)]


def test_keywords_are_lowercase_content_words() -> None:
    (proposal,) = propose_memories(
        "Remember: the Staging API returns 204 for token refresh on staging"
    )
    assert proposal.keywords == ("staging", "api", "returns", "token", "refresh")


def test_proposal_is_a_frozen_value() -> None:
    (proposal,) = propose_memories("TIL git worktrees share hooks")
    assert isinstance(proposal, Proposal)
    with pytest.raises(AttributeError):
        proposal.text = "changed"  # type: ignore[misc]


SESSION_LOG = """\
# Session 2026-01-20 — OAuth settings UI

## What happened

- Started on the settings page; `npm test` failed with TypeError: Cannot read properties
  of undefined (reading 'label').
- Tried upgrading the design system, still failing.
- Turned out PasswordInput needs the FormField wrapper; the label prop alone is ignored.
- Tests pass now.

User: the dev server keeps crashing on reload
Assistant: That is caused by the file watcher limit; raise fs.inotify.max_user_watches.
User: works now, thanks

Remember this: the staging API returns 204, not 200, on a successful token refresh.

Rotate the API token weekly. Gotcha, thanks.

```
Traceback (most recent call last):
  File "app.py", line 3, in <module>
    import ncx
ModuleNotFoundError: No module named 'ncx'
```
The fix was to run `pip install -e .` inside the venv.

Always run `make migrate` before running the integration tests.
Never mind, that was my fault.

Verified that the cache key includes the model id.
I have not verified that the retry logic works.

## Lessons learned

- Feature flags are read once at startup.
- Don't mock the clock in integration tests; use freezegun only in unit tests.
"""


def test_a_realistic_session_log() -> None:
    rows = summary(SESSION_LOG)
    assert [(r[0], r[1], r[3]) for r in rows] == [
        ((5, 9), "error_resolution", "high"),
        ((11, 13), "error_resolution", "high"),
        ((15, 15), "explicit", "high"),
        ((20, 25), "error_resolution", "medium"),
        ((27, 27), "pattern", "medium"),
        ((30, 30), "verification", "medium"),
        ((35, 35), "explicit", "high"),
        ((36, 36), "explicit", "high"),
    ]
    texts = [r[4] for r in rows]
    assert texts[0].endswith(
        "→ Turned out PasswordInput needs the FormField wrapper; the label prop alone is ignored."
    )
    assert "TypeError: Cannot read properties of undefined" in texts[0]
    assert texts[3] == (
        "ModuleNotFoundError: No module named 'ncx' → run `pip install -e .` inside the venv."
    )
    proposals = propose_memories(SESSION_LOG)
    assert proposals[0].context.startswith("What happened\n")
    assert "still failing" in proposals[0].context
    assert all(len(p.context) <= 300 for p in proposals)
    assert all(p.keywords and all(k == k.lower() for k in p.keywords) for p in proposals)
    assert propose_memories(SESSION_LOG) == proposals  # deterministic


@given(st.text(alphabet=st.sampled_from("ab \n:-`#>*.!?TILfixederror"), max_size=300))
def test_any_text_gives_ordered_disjoint_spans(notes: str) -> None:
    proposals = propose_memories(notes)
    n = len(notes.splitlines())
    spans = [p.source_lines for p in proposals]
    assert spans == sorted(spans)
    assert all(1 <= a <= b <= n for a, b in spans)
    assert all(prev[1] < cur[0] for prev, cur in zip(spans, spans[1:]))


def test_a_never_line_is_its_own_memory_not_the_previous_ones_context() -> None:
    """A "Never …" learning right after another one (wrapped prose or indented under a
    bullet) was folded into that memory's text or context, and then looked already known."""
    notes = (
        "Lesson learned: the cache must be rebuilt after a model switch or queries go stale\n"
        "Never run two syncs at once, the lock file gets corrupted.\n"
        "\n"
        "- Lesson learned: always run make test before pushing.\n"
        "  Never commit .env files to the repo.\n"
    )
    got = propose_memories(notes)
    assert [p.text for p in got] == [
        "the cache must be rebuilt after a model switch or queries go stale",
        "Never run two syncs at once, the lock file gets corrupted.",
        "always run make test before pushing.",
        "Never commit .env files to the repo.",
    ]
    for p in got:
        others = [q.text for q in got if q is not p]
        assert not any(o in p.context for o in others), (p.text, p.context)


def test_source_lines_count_newlines_only() -> None:
    """Line numbers are the ones git and an editor show: a U+2028 or U+0085 inside a line
    (pasted from a web page) does not start a new line, and CRLF notes number as LF ones."""
    notes = "Went\u2028over the logs\x85today.\n\nRemember this: the staging API returns 204.\n"
    want = [((3, 3), "explicit", "factual", "high", "the staging API returns 204.")]
    assert summary(notes) == want
    assert summary(notes.replace("\n", "\r\n")) == want
