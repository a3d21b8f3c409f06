"""tree: the write side — sources -> chunk files and vectors; sync, check, status, review, hooks."""
