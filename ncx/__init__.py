"""ncx — Neocortex v3: a project's knowledge for coding agents, kept in its own git repo."""

__version__ = "0.1.0"
