"""The package list, and only that (everything else is in pyproject.toml).

Every package under ncx/ is found, never listed by hand (a hand list once left ncx.eval out of
every regular install), plus ncx.agents.templates: that package is the top-level templates/
folder (package-dir in pyproject.toml), under no folder a finder scans, and pyproject.toml's
`packages.find` cannot add a package it does not find (with it alone the wheel had no
templates, and `ncx init --agent` failed in every install). tests/test_installed.py runs every
command from the built wheel.
"""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["ncx", "ncx.*"]), "ncx.agents.templates"])
