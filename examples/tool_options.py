"""FastMCP's tool keywords: tags and visibility, per-session enabling, timeouts, versions, and
what a name registered twice does."""

import asyncio

import anyio

from mcpio import Client, Context, Server
from mcpio.auth import AuthContext, require_scopes

# --8<-- [start:tags]
server = Server("admin-demo")


@server.tool(tags={"public"})
def status() -> str:
    return "OK"


@server.tool(tags={"admin"})
def reset() -> str:
    return "reset"


@server.tool(tags={"admin"}, enabled=False)  # hidden until enabled by name
def wipe() -> str:
    return "wiped"


server.disable(tags={"admin"})  # unlisted, and calling one is "unknown tool"
# --8<-- [end:tags]


# --8<-- [start:session]
@server.tool
async def unlock(ctx: Context) -> str:
    await ctx.enable_components(tags={"admin"})  # this legacy session alone
    return "admin tools unlocked"


# --8<-- [end:session]


# --8<-- [start:auth]
@server.tool(auth=require_scopes("admin"))  # over HTTP: listed and callable with the scope only
def purge() -> str:
    return "purged"


def weekday_only(ctx: AuthContext) -> bool:  # a check of your own: the caller and the component
    return ctx.principal is not None and "ops" in ctx.principal.scopes


@server.tool(auth=[weekday_only, require_scopes("deploy")])  # every check must pass
def deploy() -> str:
    return "deployed"


# --8<-- [end:auth]


# --8<-- [start:timeout]
@server.tool(timeout=0.5)
async def slow() -> str:
    await asyncio.sleep(10)  # cancelled at 0.5 s: the model reads a failed result
    return "never"


# --8<-- [end:timeout]


# --8<-- [start:version]
@server.tool(name="add", version="1.0")
def add_v1(a: int, b: int) -> int:
    return a + b


@server.tool(name="add", version="2.0")  # the highest visible version is served
def add_v2(a: int, b: int, c: int = 0) -> int:
    return a + b + c


# --8<-- [end:version]


def duplicates() -> None:
    # --8<-- [start:duplicate]
    strict = Server("strict", on_duplicate="error")  # "warn" (default), "replace", "ignore"

    @strict.tool
    def ping() -> str:
        return "pong"

    try:

        @strict.tool(name="ping")
        def ping_again() -> str:
            return "pong!"

    except TypeError as error:
        print(error)
    # --8<-- [end:duplicate]


async def main() -> None:
    async with Client(server, mode="2025-11-25") as client:
        print(sorted(t.name for t in (await client.list_tools()).tools))
        await client.call_tool("unlock", {})
        print(sorted(t.name for t in (await client.list_tools()).tools))
        late = await client.call_tool("slow", {})
        print(late.isError, getattr(late.content[0], "text", None))
        added = await client.call_tool("add", {"a": 1, "b": 2, "c": 3})
        print(getattr(added.content[0], "text", None))
    server.enable(names={"wipe"})  # every client, from now on
    async with Client(server) as client:
        print(sorted(t.name for t in (await client.list_tools()).tools))
    duplicates()


anyio.run(main)

# Output:
#   ['add', 'deploy', 'purge', 'slow', 'status', 'unlock']
#   ['add', 'deploy', 'purge', 'reset', 'slow', 'status', 'unlock', 'wipe']
#   True Tool 'slow' timed out after 0.5s
#   6
#   ['add', 'deploy', 'purge', 'slow', 'status', 'unlock', 'wipe']
#   tool 'ping' is registered already: give it another name, remove the first, or Server(on_duplicate='replace')
