"""Exercises the features of FastMCP's Middleware page (docs/servers/middleware.mdx) under
FastMCP, custom middleware: refusing a call, rewriting its arguments, changing its result, and
hiding tagged tools from the listing and from calls."""

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import Middleware, MiddlewareContext


class OperatorOnly(Middleware):
    async def on_call_tool(self, context: MiddlewareContext, call_next):
        if context.message.name in {"drop_tables", "reset_server"}:
            raise ToolError("Refused: this tool needs the operator role")
        return await call_next(context)


class TermNormalizer(Middleware):
    async def on_call_tool(self, context: MiddlewareContext, call_next):
        if context.message.name == "lookup":
            term = context.message.arguments.get("term", "")
            context.message.arguments["term"] = " ".join(term.split()).lower()
        return await call_next(context)


class StampMetrics(Middleware):
    async def on_call_tool(self, context: MiddlewareContext, call_next):
        result = await call_next(context)
        if context.message.name == "metrics" and result.structured_content:
            result.structured_content["stamped"] = True
        return result


class HideTagged(Middleware):
    async def on_list_tools(self, context: MiddlewareContext, call_next):
        listed = await call_next(context)
        return [tool for tool in listed if "hidden" not in tool.tags]

    async def on_call_tool(self, context: MiddlewareContext, call_next):
        server = context.fastmcp_context and context.fastmcp_context.fastmcp
        if server:
            tool = await server.get_tool(context.message.name)
            if tool is not None and "hidden" in tool.tags:
                raise ToolError("No such tool here")
        return await call_next(context)


mcp = FastMCP("Guarded tools")
for layer in (OperatorOnly(), TermNormalizer(), StampMetrics(), HideTagged()):
    mcp.add_middleware(layer)


@mcp.tool
def drop_tables() -> str:
    return "dropped"


@mcp.tool
def lookup(term: str) -> str:
    return f"looking up {term!r}"


@mcp.tool
def metrics() -> dict:
    return {"hits": 3}


@mcp.tool(tags={"hidden"})
def backdoor() -> str:
    return "open"
