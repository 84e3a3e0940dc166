"""The mcpio port of originals/lifespan.py (FastMCP's Lifespans page), written after reading
docs/servers/middleware.md#lifespan: mcpio takes one async context manager (no `@lifespan`, no
`|`): the two are entered in one."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcpio import Context, Server


@asynccontextmanager
async def settings_lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    print("Opening the roster...")
    settings = {"region": "eu", "release": "2.3"}
    try:
        yield {"settings": settings}
    finally:
        print("Closing the roster...")


@asynccontextmanager
async def staff_lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    yield {"roster": {"staff": ["kim", "lee"]}}


@asynccontextmanager
async def both(server: Server) -> AsyncIterator[dict[str, Any]]:
    async with settings_lifespan(server) as settings, staff_lifespan(server) as roster:
        yield {**settings, **roster}


server = Server("Roster", lifespan=both)


@server.tool
def staff(ctx: Context) -> list[str]:
    return ctx.lifespan["roster"]["staff"]


@server.tool
def release(ctx: Context) -> str:
    return ctx.lifespan["settings"]["release"]
