"""A client's target as a string: a `.py` file is run by this interpreter over stdio."""

from pathlib import Path

from mcpio import Client

SERVER = Path(__file__).with_name("quickstart_server.py")


async def main() -> None:
    async with Client(str(SERVER), roots=["."]) as client:  # this interpreter runs it
        print(client.revision)  # 2026-07-28
        tools = await client.list_tools()  # every page
        print([tool.name for tool in tools.tools])  # ['add']
        result = await client.call_tool("add", {"a": 1, "b": 2})
        print(getattr(result.content[0], "text", None))  # 3


Client.run(main)

# Output:
#   2026-07-28
#   ['add']
#   3
