"""`open_task_store`: a task store from its one-string description (a command-line option)."""

from __future__ import annotations

import time

from mcpio._core.redact import redacted
from mcpio.tasks._store import Clock, MemoryTaskStore, TaskStore

SPECS = "memory, sqlite:PATH or redis://HOST:PORT/DB"


def open_task_store(spec: str, clock: Clock = time.time) -> TaskStore:
    """Open a task store from its one-string description (`SPECS`).

    `memory` (one process), `sqlite:PATH` (a file, survives restarts) or `redis://...` (shared
    by instances; `rediss://` and `unix://` too).

    Raises:
        ValueError: For anything else (one line).
        TaskStoreError: When the SQLite file cannot be used.
    """
    if spec == "memory":
        return MemoryTaskStore(clock)
    if spec.startswith("sqlite:"):
        path = spec.removeprefix("sqlite:")
        if not path:
            raise ValueError("task store 'sqlite:': sqlite: needs a file path")
        from mcpio.tasks._sqlite import SqliteTaskStore

        return SqliteTaskStore(path, clock)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        from mcpio.tasks._redis import RedisTaskStore

        try:
            return RedisTaskStore(spec, clock=clock)
        except ValueError as exc:  # the URL (not echoed: it may hold a password)
            raise ValueError(f"task store redis: {exc}") from None
    raise ValueError(f"task store {redacted(spec)!r}: expected {SPECS}")
