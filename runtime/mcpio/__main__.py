"""`python -m mcpio`: the `mcpio` command (see `mcpio.cli`)."""

from mcpio.cli import run

run()
