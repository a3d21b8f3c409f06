"""code: the repository's source files read as code units, ranked for a task.

Data flow (one direction, like the docs side):

    git ls-files -s ─► langs (which files are code) ─► read (python: ast; others: tree-sitter)
        ─► CodeFile records, kept in cache/ keyed by git blob id (store)
        ─► CodeIndex: symbol units, BM25F arrays, the reference graph (index)
        ─► rank (symbols and files for a query); the frame's code zone is the read side's
        (ncx/query/zone.py), which imports this folder and never the other way

Nothing under `.neocortex/` is committed for code: git already versions it, and a parse is a
pure function of a blob's bytes, so the derived records are keyed by blob id and shared by
every branch and clone of the same content (docs/decisions.md §29).
"""
