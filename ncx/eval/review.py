"""review: the eval delta of a range, for `ncx review` (its questions: the head's file)."""

from __future__ import annotations

from pathlib import Path

from ncx import repo
from ncx.config import Config
from ncx.eval.spec import EVALS_PATH, parse_evals
from ncx.tree.review import Review


def eval_delta(root: Path, cfg: Config, review: Review, base: str, head: str) -> None:
    """Ask the questions of HEAD's `.neocortex/evals.yaml` of both commits' knowledge
    (each materialised from its own files) and put the delta into `review`; a question
    that passed on the base and fails on the head is one of its problems. Nothing when the
    head has no questions file."""
    from ncx.eval.run import ask_commit, regressions, report_json, report_markdown

    text = repo.git(root, "show", f"{head}:{EVALS_PATH}", check=False)
    if not text:
        return
    evals = parse_evals(text.decode("utf-8", "replace"), f"{head}:{EVALS_PATH}")
    old, new = ask_commit(root, cfg, evals, base), ask_commit(root, cfg, evals, head)
    review.evals = report_json(new, old)
    review.evals_markdown = report_markdown(new, old, heading="###")
    review.problems += [
        f"{EVALS_PATH}: question `{q}` passed on {old.at} and fails on {new.at}"
        for q in regressions(old, new)
    ]
