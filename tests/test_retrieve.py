"""retrieve, assemble and wakeup through the installed CLI, plus the assembler's properties."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import commit_all, git, ncx, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncx.query.assembler import FrameInput, Item, assemble
from ncx.query.quote import trim_to_paragraphs
from ncx.tokens import count_tokens

AUTH = """---
id: DOC-AUTH-001
domain: AUTH
---
# Authentication

Users log in with a password and receive a session cookie that the server checks on every request.

## Token refresh

The access token expires after fifteen minutes. On a 401 response the client calls the refresh
endpoint with the refresh token from the httpOnly cookie, then retries the request once.

```python
def refresh(session):
    # not a heading
    return session.post("/auth/refresh")
```

## Password reset

A reset link is valid for one hour and can be used once. The user must choose a new password
that differs from the last five passwords.
"""

DEPLOY = """# Deploy guide

## Release

Build the release with `make release`, then tag the commit and push the tag to trigger the
deploy pipeline, which builds the server image and rolls it out to the cluster.

## Rollback

To roll back, redeploy the previous tag; the database schema must stay backwards compatible
for one release so that a rollback never needs a migration.
"""


@pytest.fixture
def tree(repo: Path) -> Path:
    write(repo, "docs/auth.md", AUTH)
    write(repo, "docs/deploy.md", DEPLOY)
    write(repo, "README.md", "# Shop\n\nAn online shop backend written in Python.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    commit_all(repo, "ncx")
    return repo


def results(*args: str) -> list[dict]:
    out = ncx("retrieve", *args, "--json").stdout
    return [json.loads(line) for line in out.splitlines()]


def test_retrieve_finds_the_right_section_with_lines(tree: Path) -> None:
    res = results("how long is a password reset link valid", "--k", "3")
    top = res[0]
    assert top["source_path"] == "docs/auth.md" and top["kind"] == "chunk"
    assert "reset" in top["text"].lower()
    lines = (tree / "docs/auth.md").read_text().splitlines()
    assert lines[top["start_line"] - 1] == top["text"].splitlines()[0]
    assert lines[top["end_line"] - 1] == top["text"].splitlines()[-1]
    assert set(top) >= {
        "id",
        "kind",
        "source_path",
        "start_line",
        "end_line",
        "section",
        "score",
        "text",
    }


def test_retrieve_filters_and_human_output(tree: Path) -> None:
    assert all(
        r["source_path"] == "docs/deploy.md" for r in results("release", "--path", "docs/deploy*")
    )
    assert all(r["source_path"] == "docs/auth.md" for r in results("token", "--domain", "auth"))
    assert results("token", "--kind", "memory") == []
    human = ncx("retrieve", "rollback database schema").stdout
    assert human.startswith(" 1.") and "docs/deploy.md:" in human
    bad = ncx("retrieve", "x", "--kind", "nope", ok=False)
    assert bad.returncode == 2


def test_batch_mode_contract(tree: Path) -> None:
    stdin = "\n".join(
        json.dumps({"qid": f"q{i}", "query": q, "k": 2})
        for i, q in enumerate(["refresh token", "rollback"])
    )
    lines = [
        json.loads(x)
        for x in ncx("retrieve", "--batch", "--json", input=stdin + "\n").stdout.splitlines()
    ]
    assert [x["qid"] for x in lines] == ["q0", "q1"]
    assert len(lines[0]["results"]) <= 2 and lines[0]["results"][0]["path"] == "docs/auth.md"
    assert "latency_ms" in lines[0]


def test_citations_follow_edits_after_sync(tree: Path) -> None:
    text = AUTH.replace(
        "# Authentication\n",
        "# Authentication\n\n## Intro\n\n" + "Some new words here about accounts. " * 12 + "\n",
    )
    write(tree, "docs/auth.md", text)
    ncx("sync")
    top = results("how long is a password reset link valid", "--k", "1")[0]
    lines = text.splitlines()
    assert lines[top["start_line"] - 1] == top["text"].splitlines()[0]


def test_cache_is_rebuilt_when_corrupt_or_missing(tree: Path) -> None:
    first = results("refresh token")
    cache = tree / ".neocortex/cache/index.npz"
    cache.write_bytes(b"garbage")
    assert results("refresh token") == first
    cache.unlink()
    assert results("refresh token") == first
    assert git(tree, "status", "--porcelain") == ""  # the cache is ignored


def test_assemble_zones_determinism_and_budget(tree: Path) -> None:
    args = [
        "assemble",
        "--task",
        "fix the token refresh retry",
        "-c",
        "retries once",
        "--budget",
        "1200",
    ]
    a = ncx(*args)
    b = ncx(*args)
    assert a.stdout == b.stdout and a.stdout
    md = a.stdout
    order = [
        md.index(h)
        for h in (
            "## CRITICAL: Task",
            "## Relevant Knowledge",
            "## Instructions",
        )
    ]
    assert order == sorted(order)
    # a clean tree whose history does not bear on the task: where HEAD is, on the first line
    assert "## Current State" not in md and " · branch `" in md.splitlines()[0]
    assert "`docs/auth.md:" in md and "DOC-AUTH-001" in md
    assert count_tokens(md) <= 1200
    assert "retries once" in md
    frame_id = md.splitlines()[0].split()[3]
    assert f"frame {frame_id}" in a.stderr
    # byte-identical across a cache rebuild
    (tree / ".neocortex/cache/index.npz").unlink()
    assert ncx(*args).stdout == md
    data = json.loads(ncx(*args, "--format", "json").stdout)
    assert data["frame_id"] == frame_id and data["budget"] == 1200 and data["tokens"] <= 1200
    assert [z["name"] for z in data["zones"]][:2] == ["task", "relevant"]
    out = tree / "frame.md"
    ncx(*args, "--out", str(out))
    assert out.read_text() == md
    assert "placed" in ncx(*args, "--explain").stderr


def test_assemble_rejects_tiny_budget_and_empty_task(tree: Path) -> None:
    assert ncx("assemble", "--task", "x", "--budget", "10", ok=False).returncode == 2
    assert ncx("assemble", ok=False).returncode == 2


def test_assemble_names_the_option_for_a_task_given_as_words(tree: Path) -> None:
    got = ncx("assemble", "fix", "the", "login", ok=False)
    assert got.returncode == 2
    assert "ncx assemble --task 'fix the login'" in got.stderr
    assert ncx("assemble", "--bogus", ok=False).returncode == 2
    usage = ncx("assemble", "--help").stdout.splitlines()[0]
    assert usage.strip().endswith("ncx assemble [OPTIONS]")  # no undocumented argument shown


def test_wakeup_is_small_and_names_the_project(tree: Path) -> None:
    out = ncx("wakeup").stdout
    assert count_tokens(out) <= 600
    assert "online shop" in out and "docs/auth.md" in out


def _item(i: int, text: str) -> Item:
    return Item(f"d{i}.md#s", "chunk", f"d{i}.md", 1, 10, ("S",), None, 1.0 / (i + 1), text)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    task=st.text(min_size=1, max_size=400).filter(lambda t: t.strip()),
    budget=st.integers(min_value=200, max_value=6000),
    texts=st.lists(st.text(min_size=0, max_size=1500), max_size=25),
)
def test_budget_is_never_exceeded(task: str, budget: int, texts: list[str]) -> None:
    items = tuple(
        _item(i, t + "\n\n```\ncode block\n```\n" if i % 3 == 0 else t) for i, t in enumerate(texts)
    )
    inp = FrameInput(task=task, knowledge=items, learnings=items[:3], state=("- branch main",))
    frame = assemble(inp, budget)
    assert count_tokens(frame.markdown) <= budget
    assert frame.tokens == count_tokens(frame.markdown)
    assert assemble(inp, budget).markdown == frame.markdown


def test_trim_never_cuts_inside_code() -> None:
    text = "Intro paragraph.\n\n```\nline one\n\nline two\n```\n\nAfter the code.\n"
    for n in range(5, 40):
        out = trim_to_paragraphs(text, n)
        assert out.count("```") % 2 == 0


def test_incremental_cache_rebuild_equals_a_full_one(tree: Path) -> None:
    args = [
        "assemble",
        "--task",
        "how long is a reset link valid and how do rollbacks work",
        "--budget",
        "900",
    ]
    ncx(*args)  # builds the cache
    write(
        tree,
        "docs/deploy.md",
        DEPLOY.replace(
            "## Rollback",
            "## Canary\n\n"
            + "Ship to five percent of hosts first and watch errors. " * 8
            + "\n\n## Rollback",
        ),
    )
    mem = tree / ".neocortex/memories/MEM-2026-01-01-aaaaaa.md"
    write(
        tree,
        mem.relative_to(tree).as_posix(),
        "---\nid: MEM-2026-01-01-aaaaaa\ntype: factual\n---\n\n## Learning\n\nReset links expire after one hour.\n",
    )
    ncx("sync")
    incremental = ncx(*args).stdout
    inc_json = results("canary rollout of the deploy")
    (tree / ".neocortex/cache/index.npz").unlink()
    assert ncx(*args).stdout == incremental
    assert results("canary rollout of the deploy") == inc_json
    assert inc_json[0]["source_path"] == "docs/deploy.md" and "Canary" in inc_json[0]["text"]


def test_wakeup_skips_a_table_of_contents_and_changelogs(repo: Path) -> None:
    write(
        repo,
        "README.md",
        "# Shop\n\n- [Install](#install)\n- [Usage](#usage)\n\n"
        "[![ci](https://x/badge.svg)](https://x)\n\nAn online shop backend written in Python.\n",
    )
    long_log = "".join(f"## 1.{i}\n\nFixed the checkout bug number {i}.\n\n" for i in range(12))
    for name in ("CHANGELOG.md", "docs/HISTORY.md", "NEWS.md", "pkg/CHANGES.md"):
        write(repo, name, "# Changes\n\n" + long_log)
    write(repo, "docs/auth.md", AUTH)
    commit_all(repo)
    ncx("init")
    ncx("sync")
    out = ncx("wakeup").stdout
    project = out.split("## Knowledge map")[0]
    assert "An online shop backend written in Python." in project
    assert "[Install]" not in project and "badge" not in project
    docs_line = next(line for line in out.splitlines() if line.startswith("- docs ("))
    assert "`README.md`" in docs_line
    assert not any(log in docs_line for log in ("CHANGELOG", "HISTORY", "NEWS", "CHANGES"))


def test_a_cache_built_in_worker_processes_is_the_one_built_in_process(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from ncx.query import build, cache

    for i in range(12):
        write(
            repo,
            f"docs/topic{i:02}.md",
            f"# Topic {i}\n\nThe retry_policy of service {i} backs off.\n\n"
            f"## Limits\n\nAt most {i} calls per minute per user; camelCaseName{i} applies.\n",
        )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    serial = cache.load_index(repo, rebuild=True)
    monkeypatch.setattr(build, "_PARALLEL_FROM", 1)  # every fresh unit through the pool
    pooled = cache.load_index(repo, rebuild=True)
    assert pooled.units == serial.units and len(serial.units) >= 12
    assert np.array_equal(pooled.vectors, serial.vectors)
    assert pooled.lex.vocab == serial.lex.vocab
    assert np.array_equal(pooled.lex.data, serial.lex.data)
    assert np.array_equal(pooled.lex.indices, serial.lex.indices)


def test_docs_in_other_scripts_are_found_by_their_words(repo: Path) -> None:
    write(
        repo,
        "docs/ru.md",
        "# Совет\n\n## Модерация\n\nСовет разбирает разногласия и конфликты между командами.\n",
    )
    write(repo, "docs/zh.md", "# 指南\n\n## 框架\n\n使用框架构建接口，然后部署到服务器。\n")
    write(
        repo,
        "docs/en.md",
        "# Guide\n\n## Deploy\n\nBuild the service, then deploy it to a server.\n",
    )
    commit_all(repo)
    ncx("init")
    ncx("sync")
    assert results("разногласия", "--k", "1")[0]["source_path"] == "docs/ru.md"
    assert results("конфликты команд", "--k", "1")[0]["source_path"] == "docs/ru.md"
    assert results("构建接口", "--k", "1")[0]["source_path"] == "docs/zh.md"
    assert results("deploy to a server", "--k", "1")[0]["source_path"] == "docs/en.md"


def test_sharp_s_and_ss_are_one_letter_pair_on_both_sides(repo: Path) -> None:
    # German writes "Straße", Swiss German and a keyboard without ß "Strasse": a query in
    # one spelling finds a doc in the other (ß, and capital ẞ, fold to "ss" as the index
    # and the query lower their words).
    write(repo, "docs/de.md", "# Verkehr\n\n## Sperrung\n\nDie Straße zum Bahnhof ist gesperrt.\n")
    write(repo, "docs/ch.md", "# Wetter\n\n## Regen\n\nAuf der Strasse liegt viel Regen.\n")
    write(repo, "docs/caps.md", "# Schilder\n\n## Gross\n\nDAS SCHILD SAGT: GROẞE BAUSTELLE.\n")
    write(repo, "docs/en.md", "# Guide\n\n## Deploy\n\nBuild the service, then deploy it.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    for query in ("strasse", "STRASSE", "Straße"):
        found = results(query, "--k", "2")
        assert {r["source_path"] for r in found} == {"docs/de.md", "docs/ch.md"}, query
        assert all(r["confidence"] == 1.0 for r in found), query
    for query in ("große baustelle", "grosse Baustelle"):
        top = results(query, "--k", "1")[0]
        assert top["source_path"] == "docs/caps.md" and top["confidence"] == 1.0, query


def test_docs_in_scripts_without_spaces_are_found_by_their_words(repo: Path) -> None:
    # Thai (like Lao, Khmer and Myanmar) writes no space between words: a sentence was one
    # term, so no query met it. Its runs are character pairs, as Han and kana are.
    write(
        repo,
        "docs/install.md",
        "# คู่มือ\n\n## การติดตั้ง\n\nการติดตั้งโปรแกรมบนเครื่องแม่ข่ายทำได้ง่าย\n",
    )
    write(
        repo,
        "docs/backup.md",
        "# บันทึก\n\n## การสำรอง\n\nการสำรองข้อมูลทุกคืนช่วยป้องกันการสูญหาย\n",
    )
    write(repo, "docs/en.md", "# Guide\n\n## Deploy\n\nBuild the service, then deploy it.\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    assert results("สำรองข้อมูล", "--k", "1")[0]["source_path"] == "docs/backup.md"
    assert results("ติดตั้งโปรแกรม", "--k", "1")[0]["source_path"] == "docs/install.md"


def test_json_output_keeps_one_record_per_line_whatever_line_breaks_a_doc_holds(
    repo: Path,
) -> None:
    """U+2028, U+2029 and U+0085 are line breaks to str.splitlines (and to other line
    readers) that JSON leaves raw inside a string: printed escaped, each hit stays one line
    and reads back as the doc wrote it."""
    text = "Rotate\u2028the\u2029backup\x85keys weekly."
    write(repo, "docs/ops.md", f"# Ops\n\n{text}\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    out = ncx("retrieve", "rotate backup keys", "--json").stdout
    lines = out.splitlines()
    assert len(lines) == 1 and out.count("\n") == 1
    assert text in json.loads(lines[0])["text"]
    batch = ncx("retrieve", "--batch", "--json", input='{"qid": "q", "query": "rotate"}\n').stdout
    assert len(batch.splitlines()) == 1
    assert text in json.loads(batch)["results"][0]["text"]
    frame = ncx("assemble", "--task", "rotate the backup keys", "--format", "json").stdout
    assert "\u2028" not in frame and text in json.dumps(json.loads(frame), ensure_ascii=False)


_SCORES_UNDER_SEED = """
import hashlib, random
from ncx.query.lexical import build_index
words = [f"term{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(60)]
rnd = random.Random(7)
units = [{"prose": " ".join(rnd.choice(words) for _ in range(40))} for _ in range(3000)]
lx = build_index(units)
print(hashlib.sha256(lx.score(words[:12]).tobytes()).hexdigest())
"""


def test_scores_are_the_same_bytes_under_any_hash_seed() -> None:
    """Same input, same bytes, in every process: a sum over a set's members follows the hash
    seed's order, and float32 sums in another order differ in their last bits (a frame's
    JSON scores differed between runs before the terms were summed in a fixed order)."""
    import os
    import subprocess
    import sys

    outs = {
        subprocess.run(
            [sys.executable, "-c", _SCORES_UNDER_SEED],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3", "4", "5")
    }
    assert len(outs) == 1 and len(next(iter(outs)).strip()) == 64
