"""Errors: a tool's failure is a result the model reads; a resource's is a JSON-RPC error; a
protocol error is the JSON-RPC error chosen; a call that takes too long is cancelled on the wire."""

import anyio

from mcpio import Client, McpError, ProtocolError, RequestTimeout, ResourceError, Server, ToolError

server = Server("errors", "1.0")  # mask_error_details=True: messages of other exceptions hidden


@server.tool()
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ToolError("cannot divide by zero")  # shown to the model as it is
    return a / b


@server.tool()
def crash() -> str:
    raise RuntimeError("disk full")  # "Error calling tool 'crash': disk full"


@server.resource_template("notes://{name}")
def note(name: str) -> str:
    raise ResourceError(f"no note {name!r}")  # shown as it is


@server.tool()
def strict(level: int) -> str:
    if level > 3:
        raise ProtocolError(-32602, "level must be at most 3")  # this JSON-RPC error
    return "ok"


@server.tool()
async def slow() -> str:
    await anyio.sleep(10)
    return "late"


async def main() -> None:
    async with Client(server) as client:
        for name, args in (("divide", {"a": 1, "b": 0}), ("crash", {})):
            result = await client.call_tool(name, args)
            print(result.isError, getattr(result.content[0], "text", None))
        try:
            await client.read_resource("notes://todo")
        except McpError as error:
            print(error.code, error.message)
        try:
            await client.call_tool("strict", {"level": 5})
        except McpError as error:
            print(error.code, error.message)
        try:
            await client.call_tool("slow", timeout=0.2)  # notifications/cancelled is sent
        except RequestTimeout:
            print("timed out")


anyio.run(main)

# Output:
#   True cannot divide by zero
#   True Error calling tool 'crash': disk full
#   -32603 no note 'todo'
#   -32602 level must be at most 3
#   timed out
