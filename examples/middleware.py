"""The Middleware page, section by section: each `--8<--` section is one snippet of
docs/servers/middleware.md, and main() calls through them and prints what the client gets."""

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpio import CacheHint, Call, Client, Context, Middleware, Server, ToolError, ToolResult
from mcpio.middleware import CallNext, LoggingMiddleware, RateLimitMiddleware, TimingMiddleware


# --8<-- [start:first]
class CountCalls(Middleware):
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        self.calls[str(call.name)] += 1
        return await call_next(call)  # the tool (and the middlewares inside this one)


counter = CountCalls()
server = Server("demo", middleware=[counter])


@server.tool
def add(a: int, b: int) -> int:
    return a + b


# --8<-- [end:first]


# --8<-- [start:deny]
class AdminOnly(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name == "delete_all" and call.ctx.principal is None:
            raise ToolError("Access denied: requires an authorized caller")  # a failed result
        return await call_next(call)


server.add_middleware(AdminOnly())


@server.tool
def delete_all() -> str:
    return "deleted"


# --8<-- [end:deny]


# --8<-- [start:modify]
class Normalize(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name == "search":  # change the request on its way in
            arguments = dict(call.params.arguments or {})
            arguments["query"] = arguments.get("query", "").strip().lower()
            call.params = call.params.model_copy(update={"arguments": arguments})
        result = await call_next(call)
        if call.name == "search" and result.structuredContent:  # and the result on its way out
            result.structuredContent["normalized"] = True
        return result


server.add_middleware(Normalize())


@server.tool
def search(query: str) -> dict[str, Any]:
    return {"query": query}


# --8<-- [end:modify]


# --8<-- [start:answer]
class Maintenance(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name == "deploy":  # answered here: the tool does not run
            return ToolResult("down for maintenance", is_error=True)
        return await call_next(call)

    async def on_list_tools(self, call: Call, call_next: CallNext) -> Any:
        listed = await call_next(call)
        listed.tools = [tool for tool in listed.tools if tool.name != "deploy"]
        return listed


server.add_middleware(Maintenance())


@server.tool
def deploy() -> str:
    return "deployed"


# --8<-- [end:answer]


def built_in() -> Server:
    # --8<-- [start:builtin]
    return Server(
        "served",
        middleware=[
            LoggingMiddleware(),  # one line a request: method, name, duration, outcome
            TimingMiddleware(),  # per-method counts and durations
            RateLimitMiddleware(100, 60),  # 100 requests a minute per client; then -32029
        ],
    )
    # --8<-- [end:builtin]


# --8<-- [start:lifespan]
@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    db = {"rows": 3}  # open connections, start background work...
    try:
        yield db  # handlers read it as ctx.lifespan
    finally:
        db.clear()  # ...and close them on shutdown


app = Server("app", lifespan=lifespan)


@app.tool
def rows(ctx: Context) -> int:
    return ctx.lifespan["rows"]


# --8<-- [end:lifespan]


# --8<-- [start:cache]
cached = Server("cached", method_cache_hints={"tools/list": CacheHint(60_000, "public")})


@cached.resource("config://app", cache=CacheHint(5_000))  # reads may be kept 5 s
def config() -> str:
    return "{}"


# --8<-- [end:cache]


def text(result: Any) -> str | None:
    return getattr(result.content[0], "text", None)


async def main() -> None:
    async with Client(server) as client:
        print(text(await client.call_tool("add", {"a": 2, "b": 3})))
        denied = await client.call_tool("delete_all", {})
        print(denied.isError, text(denied))
        print((await client.call_tool("search", {"query": "  Blue PEN "})).structuredContent)
        print(text(await client.call_tool("deploy", {})))
        print("deploy" in [tool.name for tool in (await client.list_tools()).tools])
    print(dict(counter.calls))
    async with Client(built_in()) as client:
        print(len((await client.list_tools()).tools))
    async with Client(app) as client:
        print(text(await client.call_tool("rows", {})))
    async with Client(cached) as client:
        listed = await client.list_tools()
        print(listed.ttlMs, listed.cacheScope)


anyio.run(main)

# Output:
#   5
#   True Access denied: requires an authorized caller
#   {'query': 'blue pen', 'normalized': True}
#   down for maintenance
#   False
#   {'add': 1, 'delete_all': 1, 'search': 1, 'deploy': 1}
#   0
#   3
#   60000 public
