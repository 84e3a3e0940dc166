"""`python -m mcpio`: the `mcpio` command (see `mcpio.inspect.cli`)."""

from mcpio.inspect.cli import run

run()
