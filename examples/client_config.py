"""A whole `mcpServers` configuration as a `Client`'s target (FastMCP's `Client(config)`), and
as a proxy's (`proxy_server(config)`): one server keeps its names, several are prefixed."""

import sys
from pathlib import Path

import anyio

from mcpio import Client
from mcpio.client import proxy_server

SERVER = Path(__file__).with_name("quickstart_server.py")
# --8<-- [start:config]
entry = {"command": sys.executable, "args": [str(SERVER)]}
one = {"mcpServers": {"math": entry}}
two = {"mcpServers": {"math": entry, "more": entry}}
# --8<-- [end:config]


async def main() -> None:
    # --8<-- [start:client]
    async with Client(one) as client:  # one server: its names as they are
        print([t.name for t in (await client.list_tools()).tools])  # ['add']
    async with Client(two) as client:  # several: each under its name
        print(sorted(t.name for t in (await client.list_tools()).tools))  # ['math_add', ...]
        result = await client.call_tool("more_add", {"a": 2, "b": 3})
        print(getattr(result.content[0], "text", None))  # 5
    # --8<-- [end:client]
    # --8<-- [start:proxy]
    gateway = proxy_server(two, name="gateway")  # serve it on any transport: run_http, ...
    async with Client(gateway) as client:
        print(len((await client.list_tools()).tools))  # 2
    # --8<-- [end:proxy]


anyio.run(main)

# Output:
#   ['add']
#   ['math_add', 'more_add']
#   5
#   2
