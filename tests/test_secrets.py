"""Tests for ncx.secrets: credential-shaped values are found, look-alikes are not.

Every fake credential is assembled from pieces so that secret scanners run on this
repository do not flag the test file itself.
"""

from __future__ import annotations

import base64
import re
import time
import unicodedata
from pathlib import Path

import pytest
from conftest import commit_all, ncx, write
from secret_corpus import (
    AWS_ID,
    AWS_SECRET2,
    BENIGN,
    BOM,
    CYR_A,
    FALSE_POSITIVES,
    GH2,
    GITHUB_CLASSIC,
    GOOGLE,
    JWT,
    JWT_PADDED,
    RSA_BODY,
    RSA_ESCAPED,
    SHAPES,
    SHAPES_36,
    SPLIT_AT,
    STRIPE,
    TRUE_POSITIVES,
    ZWSP,
    b64,
)

from ncx.secrets import SecretFinding, find_secrets, redact


@pytest.mark.parametrize(("text", "kind", "line", "column"), TRUE_POSITIVES)
def test_true_positives(text: str, kind: str, line: int, column: int) -> None:
    findings = find_secrets(text)
    assert [(f.kind, f.line, f.column) for f in findings] == [(kind, line, column)]


@pytest.mark.parametrize(("text", "kind", "line", "column"), TRUE_POSITIVES)
def test_reason_is_a_sentence_that_does_not_echo_the_value(
    text: str, kind: str, line: int, column: int
) -> None:
    (finding,) = find_secrets(text)
    offset = sum(len(x) + 1 for x in text.split("\n")[: line - 1]) + column - 1
    value_start = text[offset : offset + 12]
    assert value_start not in finding.reason or kind == "private_key"
    assert finding.reason[0].isupper() and finding.reason.endswith(".")
    if kind != "private_key":
        assert "…" in finding.reason


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_false_positives_are_not_flagged(text: str) -> None:
    assert find_secrets(text) == []


def test_tables_are_big_enough() -> None:
    assert len(TRUE_POSITIVES) >= 15
    assert len(FALSE_POSITIVES) >= 15
    assert len({kind for _, kind, _, _ in TRUE_POSITIVES}) >= 13
    assert len(SHAPES) >= 50 and len({name for name, *_ in SHAPES}) == len(SHAPES)
    assert len(BENIGN) >= 40


def test_a_token_assigned_to_a_secret_name_is_reported_once_as_the_specific_kind() -> None:
    assert [f.kind for f in find_secrets(f"GITHUB_TOKEN={GITHUB_CLASSIC}")] == ["github_token"]


def test_several_findings_come_back_in_reading_order() -> None:
    text = (
        "# Deploy notes\n"
        f"stripe: {STRIPE}\n"
        "Rotate the API token weekly.\n"
        f"keys {AWS_ID} and {GOOGLE}\n"
    )
    found = [(f.kind, f.line, f.column) for f in find_secrets(text)]
    assert found == [
        ("stripe_key", 2, 9),
        ("aws_access_key_id", 4, 6),
        ("google_api_key", 4, 31),
    ]


def test_finding_is_a_frozen_value() -> None:
    finding = SecretFinding("jwt", 1, 1, "A sentence.")
    with pytest.raises(AttributeError):
        finding.line = 2  # type: ignore[misc]


def test_empty_and_plain_text() -> None:
    assert find_secrets("") == []
    assert find_secrets("A memory about caching:\nthe cache key includes the model id.\n") == []


# --- every credential shape, and ordinary prose ---------------------------------------------


@pytest.mark.parametrize(("shape", "text", "kind", "line"), SHAPES, ids=[s[0] for s in SHAPES])
def test_every_shape_is_found_once(shape: str, text: str, kind: str, line: int) -> None:
    assert [(f.kind, f.line) for f in find_secrets(text)] == [(kind, line)]


@pytest.mark.parametrize(("shape", "text", "kind", "line"), SHAPES, ids=[s[0] for s in SHAPES])
def test_shape_reasons_are_sentences_without_the_value(
    shape: str, text: str, kind: str, line: int
) -> None:
    (finding,) = find_secrets(text)
    assert finding.reason[0].isupper() and finding.reason.endswith(".")
    # No random-looking run (letters and digits mixed) of 12 or more characters: names such
    # as aws_secret_access_key may be quoted, values may not.
    for run in re.findall(r"[A-Za-z0-9+/_-]{12,}", finding.reason):
        assert run.isalpha() or not any(c.isdigit() for c in run), run


@pytest.mark.parametrize("text", BENIGN)
def test_ordinary_technical_prose_is_not_flagged(text: str) -> None:
    assert find_secrets(text) == []


# --- positions survive normalisation, joining and decoding ----------------------------------


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        (f"token {GH2[:10]}{ZWSP}{GH2[10:]}", 1, 7),  # zero-width space inside
        (f"{BOM}{BOM}stripe {STRIPE}", 1, 10),  # columns count the invisible characters
        ("key " + "".join(chr(ord(c) + 0xFEE0) for c in STRIPE), 1, 5),  # fullwidth
        (f"notes\nid {CYR_A}{AWS_ID[1:]}", 2, 4),  # Cyrillic A
        (f"intro\ntoken was {GH2[:SPLIT_AT]}\n   {GH2[SPLIT_AT:]} until today", 2, 11),
        (f"intro\n  token: {b64(GH2)}", 2, 10),  # base64: the start of the encoded run
    ],
)
def test_positions_point_into_the_original_text(text: str, line: int, column: int) -> None:
    assert [(f.line, f.column) for f in find_secrets(text)] == [(line, column)]


def test_reasons_say_how_a_value_was_hidden() -> None:
    (disguised,) = find_secrets(f"token {GH2[:10]}{ZWSP}{GH2[10:]}")
    assert disguised.reason.endswith(
        "disguised with invisible, look-alike or fullwidth characters."
    )
    (wrapped,) = find_secrets(f"{GH2[:SPLIT_AT]}\n{GH2[SPLIT_AT:]}")
    assert wrapped.reason.startswith("Joined across a line break, this looks like a GitHub token")
    (encoded,) = find_secrets(b64(GH2))
    assert encoded.reason.startswith("This base64 value (56 characters) decodes to a GitHub token")
    (plain,) = find_secrets(GH2)
    assert "disguised" not in plain.reason and "Joined" not in plain.reason


def test_a_disguised_key_and_its_plain_twin_are_two_findings() -> None:
    text = f"{GOOGLE}\n{GOOGLE[:5]}{ZWSP}{GOOGLE[5:]}"
    assert [(f.kind, f.line) for f in find_secrets(text)] == [
        ("google_api_key", 1),
        ("google_api_key", 2),
    ]


def test_a_base64_token_assigned_to_a_secret_name_is_reported_once_as_the_token() -> None:
    found = find_secrets(f"K8S_TOKEN={b64(GITHUB_CLASSIC)}")
    assert [(f.kind, f.column) for f in found] == [("github_token", 11)]
    assert "base64" in found[0].reason


def test_base64_of_base64_is_decoded_once_more() -> None:
    twice = base64.b64encode(b64(GH2).encode()).decode()
    assert [f.kind for f in find_secrets(f"blob {twice}")] == ["github_token"]


def test_a_join_that_only_makes_prose_longer_is_not_a_token() -> None:
    text = "the sk-learn wrapper\nruns nightly; the key-value\nstore is redis"
    assert find_secrets(text) == []


def test_a_token_already_whole_on_one_line_is_not_reported_again_by_the_join() -> None:
    text = f"{GITHUB_CLASSIC}\nfollowed by more words"
    assert [(f.kind, f.line) for f in find_secrets(text)] == [("github_token", 1)]


# --- issue 36: the shapes that still reached a memory ----------------------------------------

# Format characters a reader does see: Arabic and Syriac signs drawn across the digits after
# them. Every other one renders as nothing, so inside a token it is a disguise.
_VISIBLE_FORMAT = frozenset(
    {0x600, 0x601, 0x602, 0x603, 0x604, 0x605, 0x6DD, 0x70F, 0x890, 0x891, 0x8E2}
)


def test_every_invisible_format_character_inside_a_token_is_seen_through() -> None:
    invisible = [
        c
        for c in range(0x110000)
        if unicodedata.category(chr(c)) == "Cf" and c not in _VISIBLE_FORMAT
    ]
    assert len(invisible) > 150
    missed = [
        f"U+{c:04X}"
        for c in invisible
        if [f.kind for f in find_secrets(f"{GH2[:9]}{chr(c)}{GH2[9:]}")] != ["github_token"]
    ]
    assert missed == []


A, B = AWS_SECRET2[:20], AWS_SECRET2[20:]


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        (f'aws_secret_access_key = "{A}" + "{B}"', (A, B)),
        (f'AWS_SECRET_ACCESS_KEY = (\n    "{A}"\n    "{B}"\n)', (A, B)),
        (f"aws_secret_access_key = {A}\n  {B}", (A, B)),
        (f"export AWS_SECRET_ACCESS_KEY={A}\\\n{B}", (A, B)),
        (f"Authorization: {JWT_PADDED}", tuple(p[-8:] for p in JWT_PADDED.split("."))),
        (f'{{"key": "{RSA_ESCAPED}"}}', (RSA_BODY[:12], "END RSA")),
    ],
    ids=["concatenation", "adjacent literals", "two lines", "continuation", "jwt", "pem"],
)
def test_a_split_padded_or_escaped_value_is_redacted_whole(
    text: str, pieces: tuple[str, ...]
) -> None:
    # The whole value goes, not the half a shorter finding would cover, and the lines stay.
    out, found = redact(text)
    assert len(found) == 1
    assert not [p for p in pieces if p in out], out
    assert out.count("\n") == text.count("\n")


def test_a_split_aws_secret_is_named_as_one() -> None:
    (finding,) = find_secrets(f'aws_secret_access_key = "{A}" + "{B}"')
    assert finding.kind == "aws_secret_access_key" and ", 40 characters)" in finding.reason
    assert finding.reason.endswith("joined across a line continuation or a string concatenation.")


def test_an_unpadded_jwt_keeps_its_span() -> None:
    out, _ = redact(f"token {JWT} ok")
    assert out == "token [REDACTED jwt] ok"


def _notes_repo(repo: Path) -> None:
    write(repo, "docs/guide.md", "# Guide\n\nRun pip install to install the package.\n")
    commit_all(repo)
    ncx("init", "-q")


def _refused_as_a_memory(name: str, text: str, line: int) -> None:
    out = ncx("memory", "add", f"{name}:\n{text}", ok=False)
    assert out.returncode == 1 and f"learning line {line + 1}," in out.stderr, (name, out)


def test_the_new_shapes_are_redacted_from_docs_and_refused_as_memories(repo: Path) -> None:
    # One module guards docs and memories: every issue-36 shape is redacted from the doc's
    # chunk (and named by sync); three of them (one per family) are refused by `memory add`
    # here, all of them in the e2e tier below.
    write(
        repo,
        "docs/notes.md",
        "# Notes\n\n" + "".join(f"## {name}\n\n{text}\n\n" for name, text, *_ in SHAPES_36),
    )
    _notes_repo(repo)
    synced = ncx("sync", "-q")
    chunk = (repo / ".neocortex/chunks/docs/notes.md").read_text(encoding="utf-8")
    assert chunk.count("[REDACTED") >= len(SHAPES_36), chunk
    for value in (GH2[10:30], AWS_SECRET2[:20], AWS_SECRET2[25:], RSA_BODY[:12], "Xk9#mQ2vL7pz"):
        assert value not in chunk
    assert synced.stderr.count("docs/notes.md:") >= len(SHAPES_36)
    for name, text, _, line in (SHAPES_36[0], SHAPES_36[9], SHAPES_36[15]):
        _refused_as_a_memory(name, text, line)
    memories = repo / ".neocortex/memories"
    assert not memories.exists() or not list(memories.glob("*.md"))


@pytest.mark.e2e
def test_no_new_shape_becomes_a_memory(repo: Path) -> None:
    _notes_repo(repo)
    for name, text, _, line in SHAPES_36:
        _refused_as_a_memory(name, text, line)
    memories = repo / ".neocortex/memories"
    assert not memories.exists() or not list(memories.glob("*.md"))


# --- speed ----------------------------------------------------------------------------------


PATHOLOGICAL = {
    "one long word": "a" * 100_000,
    "one base64 blob": "QUJD" * 25_000,
    "headers and spaces after a key header": "-----BEGIN PRIVATE KEY-----a:" + " " * 100_000,
    "many url schemes on one line": "://@" * 25_000,
    "many secret names without values": "api key: " * 11_000,
    "zero-width spaces everywhere": "a\u200b" * 50_000,
    "Cyrillic mixed with Latin": "a\u0430" * 50_000,
    "short wrapped lines": "abc\n" * 25_000,
}


@pytest.mark.parametrize("text", PATHOLOGICAL.values(), ids=list(PATHOLOGICAL))
def test_no_input_shape_makes_the_scan_blow_up(text: str) -> None:
    # A generous bound: the point is linear time (a quadratic regex takes minutes here).
    start = time.perf_counter()
    find_secrets(text)
    assert time.perf_counter() - start < 5.0


def test_a_url_querys_next_parameter_ends_a_value() -> None:
    # zod's connection-string tests: `authSource=admin&connectTimeoutMS=300000` was one
    # 29-character "assigned secret" (and a frame told the user to rotate it)
    from ncx.secrets import find_secrets

    assert find_secrets("mongodb://host:1234/?authSource=admin&connectTimeoutMS=300000") == []
    # a random value before the `&` is still one
    hits = find_secrets("https://x.io/cb?api_secret=f9K2mQ8xL4vN7pR1tZ6wY3bH&next=1")
    assert [h.kind for h in hits] == ["assigned_secret"]


def test_every_match_of_a_rule_holds_one_of_its_kinds_needles() -> None:
    """A rule's pattern is compiled only once a text holds one of its kind's needles
    (rules._rule_hits): that is only sound if every match holds one. Every rule, on every
    text of the corpus (shapes, true and false positives, benign prose)."""
    import secret_corpus as corpus

    from ncx.secrets.rules import _NEEDLES, _RULES

    texts = [t for t, *_ in corpus.TRUE_POSITIVES] + list(corpus.FALSE_POSITIVES)
    texts += [t for _, t, *_ in corpus.SHAPES] + list(corpus.BENIGN)
    matched = set()
    for rule in _RULES:
        needles = _NEEDLES.get(rule.kind)
        if needles is None:
            continue
        for text in texts:
            for m in rule.pattern.get().finditer(text):
                matched.add(rule.kind)
                assert any(n in m[0] for n in needles), (rule.kind, m[0])
    assert len(matched) >= len(_NEEDLES) - 3, sorted(set(_NEEDLES) - matched)


def test_a_scan_finds_the_same_whether_the_rules_were_compiled_or_not() -> None:
    """Each text scanned in a process where no rule was compiled yet, and in one where every
    rule was: the same findings (which texts compiled what before changes nothing)."""
    import json
    import subprocess
    import sys

    import secret_corpus as corpus

    texts = [t for _, t, *_ in corpus.SHAPES] + [t for t, *_ in corpus.TRUE_POSITIVES]
    texts += list(corpus.FALSE_POSITIVES) + list(corpus.BENIGN)
    probe = (
        "import json, sys; from ncx.secrets import find_secrets; from ncx.secrets.rules import "
        "_RULES; texts = json.load(sys.stdin); "
        "[r.pattern.get() for r in _RULES if sys.argv[1] == 'warm']; "
        "print(json.dumps([[repr(f) for f in find_secrets(t)] for t in texts]))"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", probe, way],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for way in ("cold", "warm")
    ]
    assert runs[0] == runs[1]
    assert sum(map(len, json.loads(runs[0]))) >= len(corpus.SHAPES)
