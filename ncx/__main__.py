"""`python -m ncx` runs the command line."""

from ncx.cli.entry import main

main()
