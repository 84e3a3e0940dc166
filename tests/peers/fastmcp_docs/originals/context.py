"""Exercises the features of FastMCP's Context page (docs/servers/context.mdx) under FastMCP:
CurrentContext() in a tool, a resource and a prompt, logging and progress, get_context() in a
helper, ctx.read_resource, and state a middleware sets for the tool."""

from fastmcp import Context, FastMCP
from fastmcp.dependencies import CurrentContext
from fastmcp.server.dependencies import get_context
from fastmcp.server.middleware import Middleware, MiddlewareContext

mcp = FastMCP(name="Context tour")


@mcp.tool
async def import_file(path: str, ctx: Context = CurrentContext()) -> str:  # noqa: B008
    """Imports a file, logging and reporting progress."""
    await ctx.info(f"Importing {path}")
    await ctx.report_progress(progress=1, total=2)
    return "Imported"


@mcp.resource("session://profile")
async def profile(ctx: Context = CurrentContext()) -> dict:  # noqa: B008
    await ctx.debug("Loading the profile")
    return {"account": "demo", "plan": "free"}


@mcp.prompt
async def review_request(topic: str, ctx: Context = CurrentContext()) -> str:  # noqa: B008
    return f"Review the notes on {topic} and list what is missing."


async def measure(values: list[float]) -> dict:
    ctx = get_context()
    await ctx.info(f"Measuring {len(values)} values")
    return {"count": len(values), "peak": max(values)}


@mcp.tool
async def measure_series(series: str) -> dict:
    return await measure([4.0, 6.5, 5.0])


@mcp.tool
async def profile_size(ctx: Context) -> str:
    read = await ctx.read_resource("session://profile")
    return f"{len(read.contents)} content(s)"


class StampUser(Middleware):
    async def on_call_tool(self, context: MiddlewareContext, call_next):
        await context.fastmcp_context.set_state("user", "rosa")
        return await call_next(context)


mcp.add_middleware(StampUser())


@mcp.tool
async def current_user(ctx: Context) -> str:
    return await ctx.get_state("user") or "anonymous"
