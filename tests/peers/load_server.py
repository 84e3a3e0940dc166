"""The server of tests/http/test_load.py, a process of its own (its memory read from /proc):
`load_server.py PORT`. An echo tool, a slow one (for abrupt disconnects) and a task tool whose
64 KiB result is kept for the task's TTL (3 s at most); expired tasks are swept every second.
`GET /debug/held` says what it holds: tasks stored, legacy sessions, requests in flight."""

from __future__ import annotations

import gc
import sys
from typing import Any

import anyio

from mcpio import Server
from mcpio.http._app import HttpApp
from mcpio.tasks._engine import TaskEngine
from mcpio.tasks._store import MemoryTaskStore

store = MemoryTaskStore()
engine = TaskEngine(store, ttl_ms=3_000, min_ttl_ms=1_000, sweep_seconds=1.0)  # TTL: 3 s at most
server = Server("load", "1.0", tasks=engine)
app: HttpApp | None = None


@server.tool()
async def echo(text: str) -> str:
    """Echoes."""
    return text


@server.tool()
async def slow(text: str) -> str:
    """Echoes after half a second."""
    await anyio.sleep(0.5)
    return text


@server.tool(task="optional")
async def bulky(text: str) -> str:
    """Echoes, with 64 KiB more: a result worth keeping an eye on."""
    await anyio.sleep(0.05)
    return text + " " + "x" * 65_536


@server.custom_route("/debug/held")
async def held(request: Any) -> dict[str, Any]:
    gc.collect()
    assert app is not None
    return {
        "tasks": len(store._tasks),  # pyright: ignore[reportPrivateUsage]
        "sessions": len(app.legacy.sessions),
    }


if __name__ == "__main__":
    import uvicorn

    from mcpio.http._serve import uvicorn_config

    app = server.http_app()
    uvicorn.Server(uvicorn_config(app, "127.0.0.1", int(sys.argv[1]))).run()
