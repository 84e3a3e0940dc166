"""`python -m mcpio`: the `mcpio` command (see `mcpio.cli`)."""

from mcpio.cli._main import run

run()
