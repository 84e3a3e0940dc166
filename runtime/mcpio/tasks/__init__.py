"""Tasks: long-running requests answered with a task handle, polled, updated and cancelled.

2025-11-25's native tasks and the 2026-07-28 Tasks extension, `io.modelcontextprotocol/tasks`.
"""

from mcpio.tasks._owner import task_owner

__all__ = ["task_owner"]
