"""One client for a whole `mcpServers` configuration (one server: its names as they are;
several: each mounted under its name)."""

import sys
from pathlib import Path

import anyio

from mcpio.client import from_config

SERVER = Path(__file__).with_name("quickstart_server.py")
config = {"mcpServers": {"demo": {"command": sys.executable, "args": [str(SERVER)]}}}


async def main() -> None:
    async with from_config(config) as client:  # or a path to the JSON file
        print([t.name for t in (await client.list_tools()).tools])  # ['add']
        result = await client.call_tool("add", {"a": 2, "b": 3})
        print(getattr(result.content[0], "text", None))  # 5


anyio.run(main)

# Output:
#   ['add']
#   5
