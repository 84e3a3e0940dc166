"""The Scale-out page, section by section: two instances of one server, the same state key, a
list continued on the other instance, and an instance with another key refusing it; the
notification bus's settings. Each `--8<--` section is one snippet of docs/servers/scale-out.md."""

import secrets

import anyio

from mcpio import Client, McpError, Server
from mcpio.server import RedisBus


# --8<-- [start:first]
def instance(key: bytes) -> Server:
    """One instance of the server; behind a balancer, each runs the same code."""
    server = Server("catalogue", state_key=key, list_page_size=2)
    for name in ("search", "lookup", "reserve"):
        server.tool(name=name)(lambda: "ok")
    return server


KEY = secrets.token_bytes(32)  # MCPIO_STATE_KEY=<hex>: the same on every instance


async def main() -> None:
    first, second = instance(KEY), instance(KEY)
    async with Client(first) as one, Client(second) as other:
        page = await one.request("tools/list")  # one page, and a cursor signed with KEY
        print([tool.name for tool in page.tools])  # ['search', 'lookup']
        rest = await other.list_tools(page.nextCursor)  # the next page, from another instance
        print([tool.name for tool in rest.tools])  # ['reserve']
    # --8<-- [end:first]
    # --8<-- [start:other_key]
    async with Client(instance(secrets.token_bytes(32))) as stranger:
        try:
            await stranger.list_tools(page.nextCursor)  # signed with another key
        except McpError as error:
            print(error.code)  # -32602: list again from the start
    # --8<-- [end:other_key]
    print(redis_instance(KEY).info.name)


def redis_instance(key: bytes) -> Server:
    # --8<-- [start:bus]
    bus = RedisBus(
        "redis://127.0.0.1:6379/0",
        backoff=0.1,  # the first reconnection after an outage; doubled up to max_backoff
        max_backoff=2.0,
        timeout=2.0,  # connecting, each command, a PING's answer
        health=5.0,  # a quiet subscription sends a PING after this long
    )  # connects when the server starts
    return Server("catalogue", state_key=key, bus=bus)  # channel mcpio:catalogue
    # --8<-- [end:bus]


anyio.run(main)

# Output:
#   ['search', 'lookup']
#   ['reserve']
#   -32602
#   catalogue
