"""`python -m ncx` runs the command line."""

from ncx.cli.main import main

main()
