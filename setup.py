"""The package list, and only that (everything else is in pyproject.toml).

Every package under ncx/ is found, never listed by hand (a hand list once left ncx.eval out of
every regular install), plus ncx.agents.templates: that package is the top-level templates/
folder (package-dir in pyproject.toml), under no folder a finder scans, and pyproject.toml's
`packages.find` cannot add a package it does not find (with it alone the wheel had no
templates, and `ncx init --agent` failed in every install), and ncx.models, the folder of the
bundled model: data, not code, but a folder under ncx/ that setuptools warns of, in a banner
on every install, unless it is a package. tests/test_installed.py runs every command from the
built wheel.
"""

from setuptools import find_packages, setup

_DATA = ("ncx.agents.templates", "ncx.agents.templates.github", "ncx.models")

setup(packages=[*find_packages(include=["ncx", "ncx.*"]), *_DATA])
