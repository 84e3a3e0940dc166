"""The task workers benchmark's server on mcpio: one tool, `stamp(text)`, a task
(`task="optional"`), answering its text and the time it started. Tasks live in Redis
(`RedisTaskStore`) and are queued (`RedisTaskQueue`) for `mcpio worker` processes:

    MCPGEN_BENCH_REDIS=redis://... python bench/peers/tasks_mcpio_server.py [--port N]
    python -m mcpio worker bench/peers/tasks_mcpio_server.py --redis redis://...

Served as every HTTP peer is (``uvicorn_peer.py``), the HTTP process running no task itself.
"""

from __future__ import annotations

import os
import time

from mcpio import Server
from mcpio.tasks._engine import TaskEngine
from mcpio.tasks._queue import RedisTaskQueue
from mcpio.tasks._redis import RedisTaskStore

server = Server("bench-workers", "1.0")  # what `mcpio worker` loads (it sets the store)


@server.tool(task="optional")
async def stamp(text: str) -> str:
    return f"{time.time()!r} {text}"


def main() -> None:
    from uvicorn_peer import arguments, serve

    args = arguments("the task workers benchmark's mcpio server")
    url = os.environ["MCPGEN_BENCH_REDIS"]
    queue = RedisTaskQueue(url, max_queued=1_000_000)
    server.tasks = TaskEngine(RedisTaskStore(url), queue=queue)
    serve(server.http_app(), args)


if __name__ == "__main__":
    main()
