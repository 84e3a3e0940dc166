"""The Listening page, section by section: a resource's updates, several lists at once, the same
block on a legacy session, and a stream the server ends (its notification bus unreachable).
Each `--8<--` section is one snippet of docs/clients/listen.md."""

import anyio

from mcpio import Client, McpError, Server
from mcpio.server import RedisBus

# --8<-- [start:server]
server = Server("notes")
NOTES = {"todo": "buy milk"}


@server.resource("notes://todo")
def todo() -> str:
    return NOTES["todo"]


@server.tool()
async def write_todo(text: str) -> str:
    NOTES["todo"] = text
    await server.notify_resource_updated("notes://todo")  # to whoever follows that URI
    return "saved"


@server.tool()
async def add_prompt() -> str:
    server.prompt(name="standup")(lambda: "What did you finish yesterday?")
    await server.notify_prompts_changed()
    return "added"


# --8<-- [end:server]


async def main() -> None:
    # --8<-- [start:resource]
    async with Client(server) as client:
        async with client.listen(resource_uris=["notes://todo"]) as changes:
            await client.call_tool("write_todo", {"text": "call the plumber"})
            notice = await anext(changes)
            print(notice.method, notice.params.uri)  # ... then read it again
        read = await client.read_resource("notes://todo")
        print(getattr(read.contents[0], "text", None))
    # --8<-- [end:resource]
    # --8<-- [start:lists]
    async with Client(server, mode="legacy") as client:  # a 2025-11-25 session: the same block
        async with client.listen(tools=True, prompts=True, resources=True) as changes:
            await client.call_tool("add_prompt")
            print((await anext(changes)).method)
    # --8<-- [end:lists]
    # --8<-- [start:ended]
    down = Server("down", bus=RedisBus("redis://127.0.0.1:9/0"))  # no Redis listens there
    async with Client(down) as client:
        try:
            async with client.listen(tools=True) as changes:
                async for notice in changes:
                    print(notice.method)
        except McpError as error:  # listen again (later), and read again what you follow
            print(error.code, error.message)
    # --8<-- [end:ended]


anyio.run(main)

# Output:
#   notifications/resources/updated notes://todo
#   call the plumber
#   notifications/prompts/list_changed
#   -32603 notification bus unavailable; listen again
