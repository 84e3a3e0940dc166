"""The context page, section by section: each `--8<--` section is one snippet of
docs/servers/context.md, and main() calls what it defines with a client whose callbacks answer,
printing what arrives."""

from typing import Any

import anyio

from mcpio import Client, Context, Server

# --8<-- [start:first]
server = Server("assistant")


@server.tool
async def greet(name: str, ctx: Context) -> str:  # ctx: not an argument of the tool
    await ctx.info(f"greeting {name}")  # a log message to the client
    return f"Hello, {name}!"


# --8<-- [end:first]


# --8<-- [start:logging]
@server.tool
async def check(ctx: Context) -> str:
    await ctx.debug("details")  # below the client's level: not sent
    await ctx.warning("disk almost full")  # ctx.log("warning", ...) alike
    return "checked"


# --8<-- [end:logging]


# --8<-- [start:progress]
@server.tool
async def import_rows(rows: int, ctx: Context) -> str:
    for done in range(1, rows + 1):
        await ctx.report_progress(done, rows, f"row {done}")  # sent if the client asked
    return f"{rows} rows"


# --8<-- [end:progress]


# --8<-- [start:sampling]
@server.tool
async def summarize(topic: str, ctx: Context) -> str:
    message = {"role": "user", "content": {"type": "text", "text": f"Summarize {topic}"}}
    answer = await ctx.sample([message], max_tokens=50)  # the client's model answers
    return getattr(answer.content, "text", "")


# --8<-- [end:sampling]


# --8<-- [start:roots]
@server.tool
async def workspace(ctx: Context) -> list[str]:
    listed = await ctx.list_roots()  # the folders the client shares
    return [str(root.uri) for root in listed.roots]


# --8<-- [end:roots]


# --8<-- [start:read_resource]
@server.resource("notes://today")
def today() -> str:
    return "Ship the docs."


@server.tool
async def plan(ctx: Context) -> str:
    read = await ctx.read_resource("notes://today")  # this server's, through its middlewares
    return "Plan: " + getattr(read.contents[0], "text", "")


# --8<-- [end:read_resource]


# --8<-- [start:request]
@server.tool
async def who(ctx: Context) -> str:
    agent = ctx.headers.get("user-agent", "-")  # HTTP header fields; empty on stdio
    return f"principal={ctx.principal} session={ctx.session_id} agent={agent}"


# --8<-- [end:request]


async def sampling(params: Any) -> dict[str, Any]:
    text = params.messages[0].content.text
    return {"role": "assistant", "model": "stub", "content": {"type": "text", "text": text + "!"}}


def on_log(params: Any) -> None:
    print("log:", params.level, params.data)


def on_progress(progress: float, total: float | None, message: str | None) -> None:
    print("progress:", progress, total, message)


def text(result: Any) -> str | None:
    return getattr(result.content[0], "text", None)


async def main() -> None:
    async with Client(server, sampling=sampling, roots=["/tmp"], on_log=on_log) as client:
        await client.set_log_level("info")
        print(text(await client.call_tool("greet", {"name": "Ann"})))
        print(text(await client.call_tool("check", {})))
        rows = await client.call_tool("import_rows", {"rows": 2}, progress=on_progress)
        print(text(rows))
        print(text(await client.call_tool("summarize", {"topic": "MCP"})))
        print(text(await client.call_tool("workspace", {})))
        print(text(await client.call_tool("plan", {})))
        print(text(await client.call_tool("who", {})))


anyio.run(main)

# Output:
#   log: info greeting Ann
#   Hello, Ann!
#   log: warning disk almost full
#   checked
#   progress: 1 2 row 1
#   progress: 2 2 row 2
#   2 rows
#   Summarize MCP!
#   file:///tmp
#   Plan: Ship the docs.
#   principal=None session=None agent=-
