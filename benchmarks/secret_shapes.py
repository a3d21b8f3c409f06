"""Which credential shapes ncx.secrets catches, how much ordinary prose it flags, how fast.

Usage: python benchmarks/secret_shapes.py [--against REV] [--docs DIR]
Reads the tables in tests/secret_corpus.py. A shape counts as caught when a finding of
its kind lands on its line; "other" means only some other finding landed there (a generic
rule, say). --against REV adds a column for ncx.secrets as of that git revision.
Speed: best CPU time of 20 scans of 100 KB of this repository's markdown and Python (no credentials).
--docs DIR: also the best CPU time of 3 scans of every file under DIR, each as one text, as
`ncx sync` scans a doc it re-plans (issue 29), and the findings there.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from secret_corpus import BENIGN, FALSE_POSITIVES, SHAPES  # noqa: E402

from ncx.secrets import find_secrets  # noqa: E402

Scanner = Callable[[str], list[Any]]


def _git_show(rev: str, path: str) -> str | None:
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True
    )
    return proc.stdout if proc.returncode == 0 else None


def scanner_at(rev: str) -> Scanner:
    """find_secrets as of git revision `rev`: ncx/secrets.py, or the ncx/secrets/ package
    (imported as `secrets_at_rev`, its own imports pointed there)."""
    folder = Path(tempfile.mkdtemp(prefix="ncx-secrets-"))
    single = _git_show(rev, "ncx/secrets.py")
    if single is not None:
        (folder / "secrets_at_rev.py").write_text(single)
    else:
        listing = _git_show(rev, "ncx/secrets/")
        if listing is None:
            sys.exit(f"{rev} has neither ncx/secrets.py nor ncx/secrets/")
        package = folder / "secrets_at_rev"
        package.mkdir()
        for name in listing.split("\n"):
            if name.endswith(".py"):
                source = _git_show(rev, f"ncx/secrets/{name}") or ""
                (package / name).write_text(source.replace("ncx.secrets", "secrets_at_rev"))
    sys.path.insert(0, str(folder))
    module = importlib.import_module("secrets_at_rev")
    scan: Scanner = module.find_secrets
    return scan


def verdict(scan: Scanner, text: str, kind: str, line: int) -> str:
    found = scan(text)
    if any(f.kind == kind and f.line == line for f in found):
        return "caught"
    return "other" if any(f.line == line for f in found) else "MISSED"


def cpu_time(scan: Scanner, text: str) -> float:
    """CPU seconds of one scan: steadier than wall time on a machine shared with others."""
    start = time.process_time()
    scan(text)
    return time.process_time() - start


def sample_text(size: int = 100_000) -> str:
    files = sorted(ROOT.glob("*.md")) + sorted((ROOT / "ncx").glob("*.py"))
    # (ncx/secrets.py became a package: its files stay in the sample, as before the split)
    files += sorted((ROOT / "ncx" / "secrets").glob("*.py"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in files)
    return (text * (size // max(len(text), 1) + 1))[:size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", help="also score ncx.secrets at REV")
    parser.add_argument("--docs", metavar="DIR", type=Path, help="also time scans of a doc set")
    args = parser.parse_args()
    scanners: dict[str, Scanner] = {}
    if args.against:
        scanners[args.against] = scanner_at(args.against)
    scanners["now"] = find_secrets

    width = max(len(name) for name, *_ in SHAPES)
    print(f"{'shape':{width}}  {'kind':22}" + "".join(f"  {label:>8}" for label in scanners))
    caught = dict.fromkeys(scanners, 0)
    for name, text, kind, line in SHAPES:
        cells = []
        for label, scan in scanners.items():
            v = verdict(scan, text, kind, line)
            caught[label] += v == "caught"
            cells.append(f"  {v:>8}")
        print(f"{name:{width}}  {kind:22}" + "".join(cells))

    benign = BENIGN + FALSE_POSITIVES
    sample = sample_text()
    print()
    for label, scan in scanners.items():
        false_positives = [t for t in benign if scan(t)]
        ms = min(cpu_time(scan, sample) for _ in range(20)) * 1000
        print(
            f"{label}: caught {caught[label]}/{len(SHAPES)} shapes; false positives "
            f"{len(false_positives)}/{len(benign)} ordinary sentences; "
            f"{ms:.1f} ms per 100 KB scan"
        )
        for t in false_positives:
            print(f"  flagged: {t[:100]!r}")
    if args.docs:
        files = sorted(p for p in args.docs.rglob("*") if p.is_file())
        docs = [p.read_text(encoding="utf-8", errors="replace") for p in files]
        size = sum(len(d) for d in docs) / 1e6
        print(f"\ndoc set {args.docs}: {len(docs)} files, {size:.1f} M characters")
        for label, scan in scanners.items():
            secs = min(sum(cpu_time(scan, d) for d in docs) for _ in range(3))
            found = sum(len(scan(d)) for d in docs)
            print(f"{label}: {secs:.2f} s CPU to scan every file, {found} findings")


if __name__ == "__main__":
    main()
