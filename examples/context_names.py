"""FastMCP's Context names in mcpio: `get_context()`, `Depends(...)`, `CurrentContext()`,
`get_http_headers()` / `CurrentHeaders()`, and state kept across requests."""

import anyio

from mcpio import (
    Client,
    Context,
    CurrentContext,
    CurrentHeaders,
    Depends,
    Server,
    get_context,
    get_http_headers,
)

server = Server("notes", "1.0")


# --8<-- [start:get_context]
def audit(action: str) -> str:
    ctx = get_context()  # the request being answered, from any function the handler calls
    return f"{action} (revision {ctx.revision})"


@server.tool
async def archive(note: str) -> str:
    return audit(f"archived {note}")


# --8<-- [end:get_context]


# --8<-- [start:depends]
class Database:
    def lookup(self, key: str) -> str:
        return key.upper()


async def open_database(ctx: Context = CurrentContext()) -> Database:  # noqa: B008
    await ctx.debug("database opened")  # a dependency may take the context too
    return Database()


@server.tool
async def find(key: str, db: Database = Depends(open_database)) -> str:  # noqa: B008
    # `db` is no argument of the tool: it is left out of the input schema, made at each call.
    return db.lookup(key)


# --8<-- [end:depends]


# --8<-- [start:headers]
@server.tool
async def tenant(headers: dict[str, str] = CurrentHeaders()) -> str:  # noqa: B008
    # Lower-case names; {} on stdio and in memory. `get_http_headers()` leaves out credentials
    # (authorization, cookie), the session id and hop-by-hop headers unless `include=` names them.
    return headers.get("x-tenant") or get_http_headers().get("x-tenant") or "no tenant"


# --8<-- [end:headers]


# --8<-- [start:state]
@server.tool
async def visit(ctx: Context) -> int:
    # Legacy: the session's. 2026-07-28: the caller's (the authorized principal; the one client
    # on stdio and in memory); over HTTP without authorization, name the caller: caller="...".
    visits = await ctx.get_state("visits", 0) + 1
    await ctx.set_state("visits", visits)
    return visits


# --8<-- [end:state]


async def main() -> None:
    async with Client(server) as client:
        find_tool = next(t for t in (await client.list_tools()).tools if t.name == "find")
        print(sorted(find_tool.model_dump()["inputSchema"]["properties"]))
        for name, arguments in [("archive", {"note": "n1"}), ("find", {"key": "k"})]:
            result = await client.call_tool(name, arguments)
            print(getattr(result.content[0], "text", None))
        print(getattr((await client.call_tool("tenant", {})).content[0], "text", None))
        for _ in range(2):
            print((await client.call_tool("visit", {})).structuredContent)


anyio.run(main)

# Output:
#   ['key']
#   archived n1 (revision 2026-07-28)
#   K
#   no tenant
#   {'result': 1}
#   {'result': 2}
