"""Exercises the features of FastMCP's Lifespans page (docs/servers/lifespan.mdx) under
FastMCP: two `@lifespan` functions joined with `|`, one with cleanup, their state read by
tools."""

from fastmcp import Context, FastMCP
from fastmcp.server.lifespan import lifespan


@lifespan
async def settings_lifespan(server):
    print("Opening the roster...")
    settings = {"region": "eu", "release": "2.3"}
    try:
        yield {"settings": settings}
    finally:
        print("Closing the roster...")


@lifespan
async def staff_lifespan(server):
    yield {"roster": {"staff": ["kim", "lee"]}}


mcp = FastMCP("Roster", lifespan=settings_lifespan | staff_lifespan)


@mcp.tool
def staff(ctx: Context) -> list[str]:
    return ctx.lifespan_context["roster"]["staff"]


@mcp.tool
def release(ctx: Context) -> str:
    return ctx.lifespan_context["settings"]["release"]
