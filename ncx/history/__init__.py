"""history: what the repository's commits say about its files, as evidence for code ranking."""
