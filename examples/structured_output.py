"""Structured tool output: the output schema from the return annotation, read back typed; each
`--8<--` section is one snippet of docs/servers/structured-output.md."""

from typing import Any

import anyio
from pydantic import BaseModel

from mcpio import Client, Server

# --8<-- [start:first]
server = Server("greenhouse")


class Reading(BaseModel):
    sensor: str
    celsius: float


@server.tool
async def reading(sensor: str) -> Reading:  # outputSchema: Reading's JSON Schema
    return Reading(sensor=sensor, celsius=21.5)


# --8<-- [end:first]


# --8<-- [start:wrapped]
@server.tool
async def count() -> int:  # outputSchema: {"result": integer}; structuredContent {"result": 3}
    return 3


# --8<-- [end:wrapped]


# --8<-- [start:off]
@server.tool(structured_output=False)  # text only: no output schema, no structured content
async def note() -> dict[str, Any]:
    return {"text": "plain"}


# --8<-- [end:off]


async def main() -> None:
    # --8<-- [start:typed]
    async with Client(server) as client:
        bench = await client.call_tool("reading", {"sensor": "bench-2"}, result_type=Reading)
        n = await client.call_tool("count", result_type=int)  # unwrapped from {"result": 3}
        print(bench.celsius, n)  # 21.5 3
    # --8<-- [end:typed]
    async with Client(server) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        print(listed["count"].outputSchema is not None, listed["note"].outputSchema is None)
        print((await client.call_tool("note")).structuredContent)


anyio.run(main)

# Output:
#   21.5 3
#   True True
#   None
