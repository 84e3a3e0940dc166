"""Tasks: long-running requests answered with a task handle, polled, updated and cancelled.

2025-11-25's native tasks and the 2026-07-28 Tasks extension, `io.modelcontextprotocol/tasks`.
Server side: `TaskEngine` over a `TaskStore` (`MemoryTaskStore`, `SqliteTaskStore`,
`RedisTaskStore`, or `open_task_store(spec)`), and `RedisTaskQueue` for tasks run by workers.
Client side: `TaskHandle`, returned by `Client.task` and `Client.start_tool`.

The names load on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_wire_runtime._lazy import lazy_names

if TYPE_CHECKING:
    from mcpio.tasks._client import TaskCancelled, TaskHandle
    from mcpio.tasks._engine import TaskEngine, TaskSupport
    from mcpio.tasks._owner import task_owner
    from mcpio.tasks._queue import RedisTaskQueue
    from mcpio.tasks._redis import RedisTaskStore
    from mcpio.tasks._sqlite import SqliteTaskStore
    from mcpio.tasks._store import (
        MemoryTaskStore,
        TaskRecord,
        TaskStatus,
        TaskStore,
        TaskStoreError,
    )
    from mcpio.tasks._stores import open_task_store

_LAZY: dict[str, str] = {
    "TaskCancelled": "mcpio.tasks._client",
    "TaskHandle": "mcpio.tasks._client",
    "TaskEngine": "mcpio.tasks._engine",
    "TaskSupport": "mcpio.tasks._engine",
    "task_owner": "mcpio.tasks._owner",
    "RedisTaskQueue": "mcpio.tasks._queue",
    "RedisTaskStore": "mcpio.tasks._redis",
    "SqliteTaskStore": "mcpio.tasks._sqlite",
    "MemoryTaskStore": "mcpio.tasks._store",
    "TaskRecord": "mcpio.tasks._store",
    "TaskStatus": "mcpio.tasks._store",
    "TaskStore": "mcpio.tasks._store",
    "TaskStoreError": "mcpio.tasks._store",
    "open_task_store": "mcpio.tasks._stores",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "MemoryTaskStore",
    "RedisTaskQueue",
    "RedisTaskStore",
    "SqliteTaskStore",
    "TaskCancelled",
    "TaskEngine",
    "TaskHandle",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "TaskStoreError",
    "TaskSupport",
    "open_task_store",
    "task_owner",
]
