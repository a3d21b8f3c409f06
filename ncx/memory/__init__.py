"""memory: the memory file format, what the memory commands do, and extraction from notes."""
