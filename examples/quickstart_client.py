"""The quick start's client: starts examples/quickstart_server.py over stdio and calls it."""

import sys
from pathlib import Path

from mcpio import Client

SERVER = Path(__file__).with_name("quickstart_server.py")


async def main() -> None:
    async with Client([sys.executable, str(SERVER)]) as client:
        print(client.revision)  # 2026-07-28: the newest revision both sides speak
        tools = await client.list_tools()
        print([tool.name for tool in tools.tools])  # ['add']
        result = await client.call_tool("add", {"a": 1, "b": 2})
        print(getattr(result.content[0], "text", None))  # 3


Client.run(main)  # its own loop, uvloop's where installed; or anyio.run / asyncio.run(main())

# Output:
#   2026-07-28
#   ['add']
#   3
