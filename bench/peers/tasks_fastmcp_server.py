"""The task workers benchmark's server on FastMCP + fastmcp-tasks (Docket on Redis): one tool,
`stamp(text)`, a task (`task=True`), answering its text and the time it started, as ours does.

    FASTMCP_DOCKET_URL=redis://... python bench/peers/tasks_fastmcp_server.py [--port N]

It runs in the venv bench/task_workers.py makes for it (fastmcp-tasks pins a FastMCP other
than the dev extra's), served as every HTTP peer is (``uvicorn_peer.py``): stateless, JSON
answers. Docket's URL and each worker's concurrency come from the environment
(``FASTMCP_DOCKET_URL``, ``FASTMCP_DOCKET_CONCURRENCY``). The HTTP process runs a Docket worker
of its own (fastmcp-tasks always starts one); more run as
``python -m fastmcp_tasks.worker_cli worker bench/peers/tasks_fastmcp_server.py``.
"""

from __future__ import annotations

import time

from fastmcp import FastMCP
from fastmcp_tasks import TasksExtension

mcp = FastMCP("bench-workers", version="1.0")
mcp.add_extension(TasksExtension())


@mcp.tool(task=True, output_schema=None)
async def stamp(text: str) -> str:
    return f"{time.time()!r} {text}"


def main() -> None:
    from uvicorn_peer import arguments, serve

    args = arguments("the task workers benchmark's FastMCP server")
    serve(mcp.http_app(json_response=True, stateless_http=True), args)


if __name__ == "__main__":
    main()
