"""eval: knowledge a team can test (questions as regression tests, the knowledge at a commit)."""
