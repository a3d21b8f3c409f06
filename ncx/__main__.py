"""`python -m ncx` runs the command line."""

from ncx.cli import main

main()
