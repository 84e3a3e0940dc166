"""The `mcpio` command (`main`, the click group; `run`, the console script's entry point): run,
dev, install, inspect, replay, proxy and worker; `Worker`, the queue's worker that `mcpio
worker` runs, to embed in a process of your own."""

from mcpio.cli._main import main, run
from mcpio.cli._worker import Worker

__all__ = ["Worker", "main", "run"]
