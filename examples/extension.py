"""A protocol extension of your own, served beside Tasks and MCP Apps: a capability the server
declares, a method of its own, and a hook around every tool call."""

from collections.abc import Mapping
from typing import Any

import anyio

from mcpio import Client, Server
from mcpio.server import CallNextTool, Context, Extension, ToolCall


class Usage(Extension):
    """Counts each tool's calls and answers `usage/report` with the counts."""

    id = "com.example/usage"

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def settings(self) -> Mapping[str, Any]:
        return {"report": True}  # declared in capabilities.extensions

    def methods(self) -> Mapping[str, Any]:
        async def report(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
            return {"calls": dict(self.calls)}

        return {"usage/report": report}

    async def call_tool(self, call: ToolCall, call_next: CallNextTool) -> Any:
        self.calls[call.name] = self.calls.get(call.name, 0) + 1
        return await call_next(call)


server = Server("usage-demo")
server.add_extension(Usage())


@server.tool()
def greet(name: str) -> str:
    return f"Hello, {name}"


async def main() -> None:
    for mode in ("2025-11-25", "2026-07-28"):
        async with Client(server, mode=mode) as client:
            await client.call_tool("greet", {"name": "Ada"})
            report = await client.extension_request("usage/report")
            print(mode, report["calls"])


anyio.run(main)

# Output:
#   2025-11-25 {'greet': 1}
#   2026-07-28 {'greet': 2}
