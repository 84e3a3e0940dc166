"""The Errors page, section by section: each `--8<--` section is one snippet of
docs/servers/errors.md, and main() calls what it defines and prints what the client gets."""

import anyio

from mcpio import Client, McpError, ProtocolError, RequestTimeout, ResourceError, Server, ToolError

# --8<-- [start:first]
server = Server("errors")


@server.tool
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ToolError("cannot divide by zero")  # a failed result: the model reads it
    return a / b


# --8<-- [end:first]


async def call_it() -> None:
    # --8<-- [start:call]
    async with Client(server) as client:
        result = await client.call_tool("divide", {"a": 1, "b": 0})
        print(result.isError, getattr(result.content[0], "text", None))
    # --8<-- [end:call]


# --8<-- [start:other]
@server.tool
def crash() -> str:
    raise RuntimeError("disk full")  # "Error calling tool 'crash': disk full"


# --8<-- [end:other]


# --8<-- [start:resource]
@server.resource("notes://{name}")
def note(name: str) -> str:
    raise ResourceError(f"no note {name!r}")  # -32603, its message as it is


# --8<-- [end:resource]


# --8<-- [start:protocol]
@server.tool
def strict(level: int) -> str:
    if level > 3:
        raise ProtocolError(-32602, "level must be at most 3")  # this JSON-RPC error
    return "ok"


# --8<-- [end:protocol]


def masking() -> Server:
    # --8<-- [start:mask]
    secure = Server("secure", mask_error_details=True)

    @secure.tool
    def connect() -> str:
        raise ConnectionError("db at 10.0.0.7 refused password hunter2")  # not shown

    # --8<-- [end:mask]
    return secure


@server.tool
async def slow() -> str:
    await anyio.sleep(10)
    return "late"


async def timing_out(client: Client) -> None:
    # --8<-- [start:timeout]
    try:
        await client.call_tool("slow", timeout=0.2)  # notifications/cancelled is sent
    except RequestTimeout:
        print("timed out")
    # --8<-- [end:timeout]


async def main() -> None:
    await call_it()
    async with Client(server) as client:
        crashed = await client.call_tool("crash", {})
        print(crashed.isError, getattr(crashed.content[0], "text", None))
        for attempt in (
            client.read_resource("notes://todo"),
            client.call_tool("strict", {"level": 5}),
        ):
            try:
                await attempt
            except McpError as error:
                print(error.code, error.message)
        await timing_out(client)
    async with Client(masking()) as client:
        masked = await client.call_tool("connect", {})
        print(masked.isError, getattr(masked.content[0], "text", None))


anyio.run(main)

# Output:
#   True cannot divide by zero
#   True Error calling tool 'crash': disk full
#   -32603 no note 'todo'
#   -32602 level must be at most 3
#   timed out
#   True Error calling tool 'connect'
