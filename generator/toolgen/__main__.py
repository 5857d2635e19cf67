"""`python -m toolgen` runs the command line (`toolgen.cli.run`)."""

from toolgen.cli import run

run()
