"""Listening for changes: the server removes a tool, the client hears the list change."""

import anyio

from mcpio import Client, Server

server = Server("changing", "1.0")


@server.tool()
def beta() -> str:
    return "beta"


@server.tool()
def retire_beta() -> bool:
    return server.remove_tool("beta")  # unlists it and tells every listener


async def main() -> None:
    async with Client(server) as client:
        async with client.listen(tools=True) as changes:  # 2026-07-28: subscriptions/listen
            await client.call_tool("retire_beta")
            async for notice in changes:
                print(notice.method)
                break
        print([tool.name for tool in (await client.list_tools()).tools])


anyio.run(main)

# Output:
#   notifications/tools/list_changed
#   ['retire_beta']
