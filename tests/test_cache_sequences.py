"""The patched cache after random sequences of changes equals a build from nothing
(docs/decisions.md §22): docs added, edited, removed, renamed across folders, every doc
changed, the tree emptied, memories added, edited and removed, a chunk file replaced by
one that does not parse, a model switch; with and without a sync in between."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from conftest import _WORDS, commit_all, git, ncx, write
from test_cache import _same_index

from ncx.query import cache

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
OTHER = ["Привет мир", "東京都の設定", "naïve café", "हिन्दी भाषा"]  # other scripts, §24
OPS = ["add", "edit", "del", "mv", "all", "empty", "mem+", "mem~", "mem-", "bad", "model"]


def _text(rng: random.Random) -> str:
    out = f"# {rng.choice(WORDS).title()} {rng.choice(OTHER)}\n\n{' '.join(rng.choices(WORDS, k=12))}.\n\n"
    for _ in range(rng.randint(0, 4)):  # the doc's chunk count changes with its edits
        words = rng.choices(WORDS + OTHER, k=rng.randint(3, 40))
        out += f"## {rng.choice(WORDS).title()}\n\n{' '.join(words)}.\n\n"
    return out


@pytest.mark.parametrize("seed", range(3))
def test_random_changes_patch_to_what_a_fresh_build_makes(
    repo: Path,
    seed: int,
    tiny_model: Path,
    other_model: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(seed)
    docs = [f"docs/{rng.choice('ab')}/d{i}.md" for i in range(4)]
    for d in docs:
        write(repo, d, _text(rng))
    commit_all(repo)
    ncx("init")
    ncx("sync")
    cache.load_index(repo)
    mems: list[Path] = []
    for step in range(12):
        op = rng.choice(OPS)
        if op == "add" or not docs:
            docs.append(f"docs/{rng.choice(['a', 'b', 'c/d'])}/n{step}.md")
            write(repo, docs[-1], _text(rng))
        elif op == "edit":
            write(repo, rng.choice(docs), _text(rng))
        elif op == "del":
            git(repo, "rm", "-qf", docs.pop(rng.randrange(len(docs))))
        elif op == "mv":  # renamed, maybe into another folder
            new = f"docs/{rng.choice('abe')}/m{step}.md"
            (repo / new).parent.mkdir(parents=True, exist_ok=True)
            git(repo, "mv", docs.pop(rng.randrange(len(docs))), new)
            docs.append(new)
        elif op == "all":
            for d in docs:
                write(repo, d, _text(rng))
        elif op == "empty":
            for d in docs:
                git(repo, "rm", "-qf", d)
            docs.clear()
        elif op == "mem+":
            ncx("memory", "add", " ".join(rng.choices(_WORDS, k=9)), ok=False)  # maybe a dup
        elif op == "mem~" and mems:
            m = rng.choice(mems)
            if m.exists():
                write(repo, m.relative_to(repo).as_posix(), m.read_text() + " extra words\n")
        elif op == "mem-" and mems:
            m = mems.pop(rng.randrange(len(mems)))
            m.unlink(missing_ok=True)
            m.with_suffix(".npy").unlink(missing_ok=True)
        elif op == "bad":  # replaced (ncx writes by rename) by a file that does not parse
            files = sorted((repo / ".neocortex/chunks").rglob("*.md"))
            if files:
                f = rng.choice(files)
                f.with_suffix(".tmpx").write_text("---\nid: [unclosed\n---\ngarbage\n")
                os.replace(f.with_suffix(".tmpx"), f)
        elif op == "model":
            model = str(rng.choice([other_model, tiny_model]))
            ncx("model", "use", model)
            monkeypatch.setenv("NCX_EMBEDDING_MODEL", model)
        mems = sorted((repo / ".neocortex/memories").glob("*.md"))
        git(repo, "add", "-A")
        if op != "bad" and rng.random() < 0.7:
            ncx("sync")
        if rng.random() < 0.6:  # else the next step patches two changes at once
            got = cache.load_index(repo)
            want = cache._build(repo, None)[1]
            _same_index(got, want)
            _same_index(cache.load_index(repo), want)  # as read back from the file
