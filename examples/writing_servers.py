"""What a FastMCP user reaches for first: a lifespan, middleware, sync tools, content blocks."""

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpio import Call, Client, Context, Image, Middleware, Server, ToolError
from mcpio.middleware import CallNext, LoggingMiddleware


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    db = {"rows": 3}  # open connections, start background work...
    yield db  # handlers read it as ctx.lifespan
    db.clear()  # ...and close them on shutdown


class NoDeletes(Middleware):
    """Authorization per tool: a middleware sees the call (and ctx.principal) first."""

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name == "delete_all" and call.ctx.principal is None:
            raise ToolError("deleting needs an authorized caller")
        return await call_next(call)


server = Server("demo", lifespan=lifespan, middleware=[LoggingMiddleware(), NoDeletes()])


@server.tool  # bare or called: @server.tool(name=..., ...)
def slow_count(ctx: Context) -> int:  # a plain def runs in a worker thread
    time.sleep(0.1)  # so blocking here stalls no other request
    return ctx.lifespan["rows"]


@server.tool
def delete_all() -> str:
    return "deleted"


@server.tool
def logo() -> Image:  # Image / Audio / File / bytes: content blocks
    return Image(data=b"\x89PNG...", format="png")


async def main() -> None:
    async with Client(server) as client:  # in memory; stdio and HTTP alike
        print(getattr((await client.call_tool("slow_count", {})).content[0], "text", None))  # 3
        refused = await client.call_tool("delete_all", {})
        # True deleting needs an authorized caller
        print(refused.isError, getattr(refused.content[0], "text", None))
        print(type((await client.call_tool("logo", {})).content[0]).__name__)  # ImageContent


anyio.run(main)

# Output:
#   3
#   True deleting needs an authorized caller
#   ImageContent
