"""The mcpio port of originals/middleware.py (FastMCP's Middleware page, custom middleware),
written after reading docs/servers/middleware.md: hiding tagged tools is
`server.disable(tags=...)` (docs/servers/tools.md)."""

from typing import Any

from mcpio import Call, Middleware, Server, ToolError
from mcpio.middleware import CallNext


class OperatorOnly(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name in {"drop_tables", "reset_server"}:
            raise ToolError("Refused: this tool needs the operator role")
        return await call_next(call)


class TermNormalizer(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name == "lookup":
            arguments = dict(call.params.arguments or {})
            arguments["term"] = " ".join(arguments.get("term", "").split()).lower()
            call.params = call.params.model_copy(update={"arguments": arguments})
        return await call_next(call)


class StampMetrics(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        if call.name == "metrics" and result.structuredContent:
            result.structuredContent["stamped"] = True
        return result


server = Server("Guarded tools")
for layer in (OperatorOnly(), TermNormalizer(), StampMetrics()):
    server.add_middleware(layer)


@server.tool
def drop_tables() -> str:
    return "dropped"


@server.tool
def lookup(term: str) -> str:
    return f"looking up {term!r}"


@server.tool
def metrics() -> dict[str, Any]:
    return {"hits": 3}


@server.tool(tags={"hidden"})
def backdoor() -> str:
    return "open"


server.disable(tags={"hidden"})
