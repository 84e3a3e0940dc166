"""The Tools page, section by section: each `--8<--` section is one snippet of
docs/servers/tools.md, and main() calls what it defines and prints what a client sees."""

import time
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import anyio
from pydantic import Field

from mcpio import Client, Context, Image, Server, ToolError, ToolResult

# --8<-- [start:first]
server = Server("calculator")


@server.tool
def add(a: int, b: int) -> int:
    """The sum of two integers."""
    return a + b


# --8<-- [end:first]


async def call_it() -> None:
    # --8<-- [start:call]
    async with Client(server) as client:  # in memory; a URL or a command for a real one
        total = await client.call_tool("add", {"a": 2, "b": 3}, result_type=int)
        print(total)  # 5
    # --8<-- [end:call]


# --8<-- [start:decorator]
@server.tool(
    name="find_books",
    title="Find books",
    description="Looks books up by title.",
    annotations={"readOnlyHint": True},
)
def search(query: str) -> list[str]:
    return [f"{query} (hardback)", f"{query} (paperback)"]


# --8<-- [end:decorator]


# --8<-- [start:arguments]
@server.tool
def book(
    city: str,
    nights: Annotated[int, Field(ge=1, le=30, description="How many nights.")] = 1,
    room: Literal["single", "double"] = "single",
) -> str:
    return f"{nights} night(s) in {city}, {room}"


# --8<-- [end:arguments]


# --8<-- [start:docstrings]
@server.tool
def convert(amount: float, currency: str) -> float:
    """Converts euros to another currency.

    Args:
        amount: The sum in euros.
        currency: An ISO 4217 code, such as USD.
    """
    return round(amount * 1.1, 2)


# --8<-- [end:docstrings]


# --8<-- [start:structured]
@dataclass
class Reading:
    sensor: str
    celsius: float


@server.tool
def reading(sensor: str) -> Reading:  # its output schema comes from the annotation
    return Reading(sensor, 21.5)


# --8<-- [end:structured]


# --8<-- [start:content]
@server.tool
def logo() -> Image:  # Image, Audio, File, bytes: content blocks
    return Image(data=b"\x89PNG\r\n\x1a\n", format="png")


# --8<-- [end:content]


# --8<-- [start:tool_result]
@server.tool
def report() -> ToolResult:
    return ToolResult(
        "2 orders found",  # what the model reads
        structured_content={"orders": [17, 42]},
        meta={"took_ms": 3},
    )


# --8<-- [end:tool_result]


# --8<-- [start:context]
@server.tool
async def long_job(steps: int, ctx: Context) -> str:  # not an argument: the request's context
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return "done"


# --8<-- [end:context]


# --8<-- [start:sync]
@server.tool  # a plain def runs in a worker thread: blocking here stalls no other request
def slow_lookup(key: str) -> str:
    time.sleep(0.05)
    return key.upper()


@server.tool(run_in_thread=False)  # quick and non-blocking: kept on the event loop
def quick(key: str) -> str:
    return key.lower()


# --8<-- [end:sync]


# --8<-- [start:errors]
@server.tool
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ToolError("b must not be 0")  # the model reads this
    return a / b


# --8<-- [end:errors]


# --8<-- [start:input_schema]
@server.tool(
    input_schema={
        "type": "object",
        "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"}},
        "required": ["sku"],
    }
)
def stock(sku: str) -> int:
    return 7


# --8<-- [end:input_schema]


async def pagination() -> None:
    # --8<-- [start:pagination]
    big = Server("big", list_page_size=50)  # tools/list answers 50 at a time
    for n in range(120):
        big.tool(name=f"tool_{n}")(lambda: "ok")
    async with Client(big) as client:
        print(len((await client.list_tools()).tools))  # 120: every page followed
    # --8<-- [end:pagination]


async def removing() -> None:
    # --8<-- [start:remove]
    print(server.remove_tool("quick"))  # True; clients listening are told the list changed
    # --8<-- [end:remove]


def text(result: Any) -> str | None:
    """The text of a result's first content block."""
    return getattr(result.content[0], "text", None)


async def main() -> None:
    await call_it()
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        found = listed["find_books"]
        print(found.title, found.annotations and found.annotations.readOnlyHint)
        print(listed["add"].title)  # derived from the name
        nights = listed["book"].inputSchema.properties["nights"]  # type: ignore[index]
        print(nights["description"], nights["maximum"])
        currency = listed["convert"].inputSchema.properties["currency"]  # type: ignore[index]
        print(listed["convert"].description, "|", currency["description"])
        bad = await client.call_tool("book", {"city": "Oslo", "nights": 99})
        print(bad.isError, text(bad))
        hot = await client.call_tool("reading", {"sensor": "bench-2"})
        print(hot.structuredContent, text(hot))
        print(type((await client.call_tool("logo", {})).content[0]).__name__)
        reported = await client.call_tool("report", {})
        print(text(reported), reported.structuredContent)
        print(text(await client.call_tool("long_job", {"steps": 2})))
        print(text(await client.call_tool("slow_lookup", {"key": "k"})))
        failed = await client.call_tool("divide", {"a": 1, "b": 0})
        print(failed.isError, text(failed))
        refused = await client.call_tool("stock", {"sku": "nope"})
        print(refused.isError, text(refused))
    await pagination()
    await removing()


anyio.run(main)

# Output:
#   5
#   Find books True
#   Add
#   How many nights. 30
#   Converts euros to another currency. | An ISO 4217 code, such as USD.
#   True invalid arguments for book: nights: Input should be less than or equal to 30
#   {'sensor': 'bench-2', 'celsius': 21.5} {"sensor": "bench-2", "celsius": 21.5}
#   ImageContent
#   2 orders found {'orders': [17, 42]}
#   done
#   K
#   True b must not be 0
#   True invalid arguments for stock: sku: 'nope' does not match '^[A-Z]{3}-[0-9]+$'
#   120
#   True
