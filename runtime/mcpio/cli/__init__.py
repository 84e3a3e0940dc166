"""The `mcpio` command: run, dev, install, inspect, replay, proxy and worker.

`main` is the click group and `run` the console script's entry point; `Worker` is the queue's
worker that `mcpio worker` runs, to embed in a process of your own.
"""

from mcpio.cli._main import main, run
from mcpio.cli._worker import Worker

__all__ = ["Worker", "main", "run"]
