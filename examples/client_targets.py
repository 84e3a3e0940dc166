"""The Connecting page, section by section: each `--8<--` section is one snippet of
docs/clients/connecting.md. main() connects to the quick start's server and to one in
memory; `targets()` only builds clients (what they would reach needs a network or npx), so its
snippets are compiled and type-checked, not run."""

import os
from pathlib import Path

from mcpio import Client, Server

SERVER = Path(__file__).with_name("quickstart_server.py")


async def main() -> None:
    # --8<-- [start:first]
    async with Client("examples/quickstart_server.py") as client:  # run over stdio
        print(client.revision)  # 2026-07-28: the newest both speak
        print([tool.name for tool in (await client.list_tools()).tools])  # ['add']
        print(await client.call_tool("add", {"a": 1, "b": 2}, result_type=int))  # 3
    # --8<-- [end:first]
    # --8<-- [start:memory]
    server = Server("in-process")
    server.tool(name="ping")(lambda: "pong")
    async with Client(server, mode="legacy") as client:  # in memory; a revision pinned
        print(client.revision)  # 2025-11-25
    # --8<-- [end:memory]
    async with Client(str(SERVER), roots=["."]) as client:  # roots: URIs or paths
        print(len((await client.list_tools()).tools))


def targets(key: str) -> list[Client]:
    return [
        # --8<-- [start:targets]
        Client("https://mcp.example.com/mcp", headers={"X-Team": "docs"}, auth="token-123"),
        Client("npx -y @modelcontextprotocol/server-everything"),  # a command on PATH
        Client(["python", "server.py", "--verbose"]),  # exactly this command
        Client({"mcpServers": {"math": {"command": "python", "args": ["math.py"]}}}),
        # --8<-- [end:targets]
        # --8<-- [start:env]
        Client(["npx", "-y", "@acme/weather-mcp"], env={"WEATHER_API_KEY": key}),
        Client("server.py", env={k: os.environ[k] for k in ("HTTPS_PROXY",) if k in os.environ}),
        Client("server.py", env=dict(os.environ)),  # everything, knowingly
        # --8<-- [end:env]
    ]


Client.run(main)

# Output:
#   2026-07-28
#   ['add']
#   3
#   2025-11-25
#   1
