"""The mcpio port of originals/context.py (FastMCP's Context page), written after reading
docs/servers/context.md."""

from typing import Any

from mcpio import Call, Context, CurrentContext, Middleware, Server, get_context
from mcpio.middleware import CallNext

server = Server("Context tour")


@server.tool
async def import_file(path: str, ctx: Context = CurrentContext()) -> str:  # noqa: B008
    """Imports a file, logging and reporting progress."""
    await ctx.info(f"Importing {path}")
    await ctx.report_progress(progress=1, total=2)
    return "Imported"


@server.resource("session://profile")
async def profile(ctx: Context = CurrentContext()) -> dict[str, Any]:  # noqa: B008
    await ctx.debug("Loading the profile")
    return {"account": "demo", "plan": "free"}


@server.prompt
async def review_request(topic: str, ctx: Context = CurrentContext()) -> str:  # noqa: B008
    return f"Review the notes on {topic} and list what is missing."


async def measure(values: list[float]) -> dict[str, Any]:
    ctx = get_context()
    await ctx.info(f"Measuring {len(values)} values")
    return {"count": len(values), "peak": max(values)}


@server.tool
async def measure_series(series: str) -> dict[str, Any]:
    return await measure([4.0, 6.5, 5.0])


@server.tool
async def profile_size(ctx: Context) -> str:
    read = await ctx.read_resource("session://profile")
    return f"{len(read.contents)} content(s)"


class StampUser(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        await call.ctx.set_state("user", "rosa")
        return await call_next(call)


server.add_middleware(StampUser())


@server.tool
async def current_user(ctx: Context) -> str:
    return await ctx.get_state("user") or "anonymous"
