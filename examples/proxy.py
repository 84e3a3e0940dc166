"""A proxy: a server that re-serves another one (here the quick start's, over stdio), on its
own or mounted beside other servers; each side speaks its own revision."""

import sys
from pathlib import Path

import anyio

from mcpio import Client, Server
from mcpio.client import proxy_server

SERVER = Path(__file__).with_name("quickstart_server.py")

# --8<-- [start:proxy]
proxy = proxy_server([sys.executable, str(SERVER)])  # a URL, a command, an mcpServers entry
# proxy.run_http(port=8001) serves it over HTTP, whatever the target speaks
# --8<-- [end:proxy]

# --8<-- [start:mount]
main = Server("main")
main.mount(proxy_server([sys.executable, str(SERVER)]), namespace="demo")  # demo_add
# --8<-- [end:mount]


async def main_() -> None:
    async with Client(proxy, mode="2026-07-28") as client:  # a modern client...
        result = await client.call_tool("add", {"a": 2, "b": 3})  # ...of whatever the target is
        print(client.revision, getattr(result.content[0], "text", None))
    async with Client(main) as client:
        print([t.name for t in (await client.list_tools()).tools])


anyio.run(main_)

# Output:
#   2026-07-28 5
#   ['demo_add']
