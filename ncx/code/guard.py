"""guard: no credential in the code reaches an agent or the code cache.

The docs' redaction (ncx.secrets) judges the code too: a file's credentials are found once,
where it is read, named by line (`ncx sync` says where, as for docs), and every text kept of
its definitions (signature, docstring, leading comment, the words of its strings) is
redacted before it is stored, so cache/code/ never holds one. A body the frame quotes is read
from the file when it is shown, and redacted there (`redact_body`).

Cost: the redaction reads a text through several views with ~100 patterns, about a quarter of
what parsing costs when it reads whole files. So it reads only the lines that could hold a
credential: a long token-like run (every known key shape has 20 or more such characters; a
base64 or percent-encoded one too), a URL with a user part, a key block's header, or a word a
credential is named by (what the assignment and prose rules anchor on). On 2,000 Python files
that leaves a tenth of the lines, and the guard costs 1.0-1.5 s of CPU against ~20 s of reading.
"""

from __future__ import annotations

import dataclasses

from ncx.code.model import CodeFile, Symbol

# What makes a line worth the redaction's look (see the module's note). Found with str.find,
# which skips through text far faster than a regex whose branches start with a character
# class (the one-regex version cost 1.7 s of CPU on 2,000 Python files, these 0.4 s).
_RUN = 20  # token characters in a row: every known key shape has this many
_WORDS = (
    "://",  # a URL: its user part
    "-----begin",  # a key block
    "passw", "passphrase", "pwd", "secret", "token", "apikey", "api_key", "api-key",
    "private", "credential", "auth", "bearer", "basic ", "sig=",
)  # fmt: skip


class _TokenChars(dict[int, str]):
    """str.translate's table: a token character (ASCII letters, digits, `_+/=%-`, and any
    non-ASCII one, which a disguised key may hold) becomes "a", any other " "."""

    def __missing__(self, key: int) -> str:
        return "a"


_TOKEN_CHARS = _TokenChars(
    {c: "a" if chr(c).isalnum() or chr(c) in "_+/=%-" else " " for c in range(128)}
)


def suspect_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line, line) of each line of `text` (lines end at "\n") that could hold a
    credential, in order."""
    starts: set[int] = set()
    for hay, needle in ((text.translate(_TOKEN_CHARS), "a" * _RUN), *_word_needles(text)):
        i = hay.find(needle)
        while i >= 0:
            starts.add(text.rfind("\n", 0, i) + 1)
            end = text.find("\n", i)
            if end < 0:
                break
            i = hay.find(needle, end)
    out: list[tuple[int, str]] = []
    line, counted = 1, 0
    for a in sorted(starts):
        line += text.count("\n", counted, a)
        counted = a
        b = text.find("\n", a)
        out.append((line, text[a : b if b >= 0 else len(text)]))
    return out


def _word_needles(text: str) -> list[tuple[str, str]]:
    low = text.lower()
    if len(low) != len(text):  # a character whose lowercase is longer: offsets would shift
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return [(low, w) for w in _WORDS]


def scan(text: str) -> tuple[tuple[int, str], ...]:
    """(line, kind) of every credential in a source text whose lines end at "\\n", sorted."""
    from ncx.secrets import find_secrets

    picked = suspect_lines(text)
    if not picked:
        return ()
    found = find_secrets("\n".join(t for _, t in picked))
    return tuple(sorted({(picked[f.line - 1][0], f.kind) for f in found}))


def guarded(rec: CodeFile, text: str) -> CodeFile:
    """`rec` with its credentials named (CodeFile.secrets) and redacted from every text it
    keeps; `text` is the source it was read from. A file with none is returned as it is."""
    found = scan(text)
    if not found:
        return rec
    return dataclasses.replace(rec, symbols=tuple(_redacted(s) for s in rec.symbols), secrets=found)


def _redacted(sym: Symbol) -> Symbol:
    from ncx.secrets import redact

    # each text on its own: a key block's redaction runs on over lines that look like its
    # body, and must not take a neighbouring field with it
    sig, doc, text = (redact(t)[0] if t else t for t in (sym.signature, sym.doc, sym.text))
    return dataclasses.replace(sym, signature=sig, doc=doc, text=text)


def redact_body(body: str) -> str:
    """A definition's lines as a frame quotes them, with any credential redacted (the lines
    stay where they were)."""
    from ncx.secrets import redact

    return redact(body)[0]


def secret_warnings(found: list[tuple[str, int, str]]) -> list[str]:
    """One line per credential in the code, (path, line, kind): where it is, what to do."""
    from ncx.code.text import shown_path

    out = []
    for path, line, kind in sorted(set(found)):
        what = kind.replace("_", " ")
        article = "an" if what[:1].lower() in "aeiou" else "a"
        out.append(
            f"ncx: warning: {shown_path(path)}:{line}: holds what looks like {article} {what}; "
            f"the code index and frames carry [REDACTED {what}] instead: remove it from the "
            "file and rotate the credential"
        )
    return out
