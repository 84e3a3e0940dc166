"""The `mcpio` command (`main`): run, dev, install, inspect, replay, proxy and worker."""

from mcpio.cli._main import main

__all__ = ["main"]
