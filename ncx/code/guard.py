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
credential is named by (what the assignment and prose rules anchor on). One regex over the
lowercased text finds them; on 2,000 Python files that leaves a tenth of the lines.
"""

from __future__ import annotations

import dataclasses
import re

from ncx.code.model import CodeFile, Symbol

# A line that could hold a credential (see the module's note); the text is lowercased first.
_SUSPECT = re.compile(
    r"(?<![0-9a-z_+/=%\x80-\U0010ffff-])[0-9a-z_+/=%\x80-\U0010ffff-]{20}"
    r"|://\S*@|-----begin|passw|passphrase|pwd|secret|token|api.?key|private|credential"
    r"|auth|bearer|basic |sig="
)


def suspect_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line, line) of each line of `text` (lines end at "\\n") that could hold a
    credential, in order."""
    low = text.lower()
    if len(low) != len(text):  # a character whose lowercase is longer: offsets would shift
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    out: list[tuple[int, str]] = []
    pos = 0
    line = 1
    counted = 0  # offset up to which line breaks are counted in `line`
    while (m := _SUSPECT.search(low, pos)) is not None:
        a = text.rfind("\n", 0, m.start()) + 1
        b = text.find("\n", m.end())
        if b < 0:
            b = len(text)
        line += text.count("\n", counted, a)
        counted = a
        out.append((line, text[a:b]))
        pos = b + 1
    return out


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
