"""ncx — Neocortex v3: a project's knowledge for coding agents, kept in its own git repo.

The version lives in one place, pyproject.toml; the installed package metadata carries it.
`__version__` is read on first use (module __getattr__), so importing ncx stays free of
importlib.metadata's start-up cost on the hook and query paths.
"""

from __future__ import annotations


def version() -> str:
    """The installed distribution's version (pyproject.toml `version`)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("ncx")
    except PackageNotFoundError:  # a bare checkout on PYTHONPATH, never installed
        return "0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module 'ncx' has no attribute {name!r}")
