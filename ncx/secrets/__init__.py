"""secrets: find credential-shaped values in text before it becomes a memory.

Pure: text in, findings out; no I/O. Judges the shape of a value (known token prefixes,
key blocks, random-looking strings assigned to secret-sounding names), never a word alone,
so prose such as "rotate the API token weekly" passes.

The text is read through three views, each mapped back to the original offsets:
- normalised: NFKC (fullwidth forms), format characters (zero-width spaces, soft hyphens)
  dropped, and Cyrillic/Greek look-alikes mapped to Latin inside words that also hold
  ASCII letters or digits, so a disguised key reads as the key;
- joined: a token-like run at the end of a line glued to the run starting the next line,
  looked at only for known-prefix shapes that cross the join (a key broken by wrapping);
- decoded: base64 runs that decode to printable text, looked at for known shapes only.

Layout (each imports only the ones above it): `values` (how a value looks: random, filler,
a placeholder, a password; SecretFinding), `rules` (the known shapes as data, and the loop
that runs them), `named` (values given to secret-sounding names, in sentences, in URLs),
`views` (normalised, joined, spliced, decoded), `scan` (find_secrets, redact). Callers
import from `ncx.secrets` only.
"""

from ncx.secrets.scan import find_secrets, redact
from ncx.secrets.values import SecretFinding

__all__ = ["SecretFinding", "find_secrets", "redact"]
