"""The FastMCP-user catalogue (issue 34): the kind of snippets FastMCP's documentation shows
(tools sync and async, errors, the context, typed elicitation, progress, logging, resources and
templates, prompts, middleware, the lifespan, pagination), written with mcpio as one server,
for tests/interop/test_fastmcp_user.py: `python fastmcp_user_server.py stdio`, or
`python fastmcp_user_server.py http --port N` (127.0.0.1; prints N on stdout once bound).

Each snippet is what a user moving from FastMCP would write; the test module holds what the
model sees of each, through FastMCP's client and ours, in both eras, over both transports.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from mcpio import Call, Context, Image, Middleware, Server, ToolError
from mcpio._core.elicitation import Accepted
from mcpio.latest import public as pub
from mcpio.middleware import CallNext

PAGE_SIZE = 10
PNG = b"\x89PNG\r\n\x1a\n-fixture"

# --- the lifespan: entered once per process, read by the tools -----------------------------------


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    database = {"users": ["ann", "bob"], "opened": 1}
    yield {"db": database}
    database.clear()


# --- middleware ----------------------------------------------------------------------------------

SEEN: dict[str, Any] = {}  # what Inspector saw of the last tools/call that went all the way through


class Inspector(Middleware):
    """Notes the types it is given and gives back, the same public models in either era."""

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        params = type(call.params).__name__
        result = await call_next(call)
        if call.name != "middleware_saw":
            SEEN["last"] = {
                "method": call.method,
                "tool": call.name,
                "params": params,
                "arguments": dict(call.params.arguments or {}),
                "result": type(result).__name__,
            }
        return result


class Stamp(Middleware):
    """Adds its name to `order`'s path on the way in and to its answer on the way out."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name != "order":
            return await call_next(call)
        arguments = dict(call.params.arguments or {})
        arguments["path"] = [*arguments.get("path", []), self.name]
        call.params = call.params.model_copy(update={"arguments": arguments})
        result = await call_next(call)
        result.content[0].text += f" <{self.name}"
        return result


class Gatekeeper(Middleware):
    """Hides `internal_tool` from listings and refuses it; answers `maintenance` itself; fails
    on `middleware_bug` (a bug in the middleware, not in a tool)."""

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name == "internal_tool":
            raise ToolError("internal_tool is not available to this client")
        if call.name == "maintenance":
            return pub.CallToolResult(
                content=[pub.TextContent(type="text", text="down for maintenance")],
                isError=True,
                resultType="complete",
            )
        if call.name == "middleware_bug":
            raise RuntimeError("a bug in the middleware")
        return await call_next(call)

    async def on_list_tools(self, call: Call, call_next: CallNext) -> Any:
        listed = await call_next(call)
        listed.tools = [t for t in listed.tools if t.name != "internal_tool"]
        return listed


server = Server(
    "fastmcp-user",
    "1.0",
    instructions="The FastMCP-user catalogue.",
    lifespan=lifespan,
    middleware=[Inspector(), Stamp("outer"), Stamp("inner"), Gatekeeper()],
    list_page_size=PAGE_SIZE,
    state_key=b"fastmcp-user-catalogue-state-key!",
    mask_error_details=True,  # FastMCP's "SecureServer" error example (not either's default)
)

# --- tools: sync and async, arguments, return types ---------------------------------------------


@server.tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@server.tool
async def greet(name: str, greeting: str = "Hello") -> str:
    """Greets someone."""
    return f"{greeting}, {name}!"


@server.tool
def search_products(
    query: Annotated[str, Field(description="What to look for")],
    max_results: Annotated[int, Field(ge=1, le=50)] = 3,
    category: Literal["books", "games"] | None = None,
) -> list[str]:
    """Searches the catalogue."""
    found = [f"{category or 'any'}:{query}:{n}" for n in range(1, 100)]
    return found[:max_results]


class Address(BaseModel):
    street: str
    city: str


class Customer(BaseModel):
    name: str
    address: Address
    tags: list[str] = []


@server.tool
def register_customer(customer: Customer) -> str:
    """Takes a nested model as an argument."""
    return f"{customer.name} lives in {customer.address.city} ({len(customer.tags)} tags)"


class Forecast(BaseModel):
    city: str
    celsius: float
    summary: str


@server.tool
async def forecast(city: str) -> Forecast:
    """A model as the answer: structured content, with its JSON as text."""
    return Forecast(city=city, celsius=21.5, summary="sunny")


@dataclass
class Stats:
    count: int
    mean: float


@server.tool
def stats(values: list[float]) -> Stats:
    return Stats(len(values), sum(values) / len(values))


@server.tool
def chart() -> Image:
    """An image the model sees as an image block."""
    return Image(data=PNG, format="png")


@server.tool
def mixed() -> list[Any]:
    return ["a caption", Image(data=PNG, format="png")]


@server.tool(annotations={"readOnlyHint": True, "title": "Read the clock"})
def clock() -> str:
    return "12:00"


# --- errors --------------------------------------------------------------------------------------


@server.tool
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ToolError("b is 0: nothing to divide by")
    return a / b


@server.tool
async def leaky() -> str:
    raise ConnectionError("db at 10.0.0.7:5432 refused the password hunter2")


# --- the context: logging, progress, resources, the lifespan, elicitation -------------------------


@server.tool
async def process_items(items: list[str], ctx: Context) -> str:
    await ctx.info(f"processing {len(items)} items")
    if not items:
        await ctx.warning("nothing to do")
    for n, _item in enumerate(items, 1):
        await ctx.report_progress(n, len(items), f"item {n}")
    await ctx.debug("below the level asked for")
    return f"processed {len(items)}"


@server.tool
async def users(ctx: Context) -> list[str]:
    return list(ctx.lifespan["db"]["users"])


@server.tool
async def summarize_config(ctx: Context) -> str:
    read = await ctx.read_resource("config://app")
    text = read.contents[0].text  # type: ignore[union-attr]
    return f"config has {len(text)} characters"


@dataclass
class Booking:
    name: str
    seats: int
    window: bool = False


@server.tool
async def book_table(ctx: Context) -> str:
    answer = await ctx.elicit("Who is booking, and for how many?", response_type=Booking)
    if isinstance(answer, Accepted):
        booking: Booking = answer.data
        return f"booked {booking.seats} for {booking.name} (window: {booking.window})"
    return f"no booking ({answer.action})"


@server.tool
async def pick_size(ctx: Context) -> str:
    answer = await ctx.elicit("Which size?", response_type=Literal["small", "large"])
    return f"size {answer.data}" if isinstance(answer, Accepted) else answer.action


@server.tool
async def confirm_delete(path: str, ctx: Context) -> str:
    answer = await ctx.elicit(f"Delete {path}?", response_type=bool)
    if isinstance(answer, Accepted) and answer.data:
        return f"deleted {path}"
    return f"kept {path}"


# --- middleware's tools ---------------------------------------------------------------------------


@server.tool
def order(path: list[str]) -> str:
    return ">".join([*path, "tool"])


@server.tool
def internal_tool() -> str:
    return "never reached"


@server.tool
def maintenance() -> str:
    return "never reached"


@server.tool
def middleware_bug() -> str:
    return "never reached"


@server.tool
def middleware_saw() -> dict[str, Any]:
    """What Inspector saw of the last call before this one."""
    return dict(SEEN.get("last", {}))


# --- resources and templates ---------------------------------------------------------------------


@server.resource("config://app", mime_type="application/json")
def app_config() -> dict[str, Any]:
    return {"theme": "dark", "version": 3}


@server.resource("docs://readme", name="readme", description="The project's readme")
async def readme() -> str:
    return "# Read me"


@server.resource("data://logo.png", mime_type="image/png")
def logo() -> bytes:
    return PNG


@server.resource_template("tides://{harbour}/today")
def tide_table(harbour: str) -> dict[str, Any]:
    return {"harbour": harbour.title(), "high_water": "06:12"}


@server.resource_template("repos://{owner}/{repo}/issues/{number}")
async def issue(owner: str, repo: str, number: int) -> str:
    return f"{owner}/{repo}#{number + 1}"


@server.resource_template("search://products{?q,limit}")
def product_search(q: str = "", limit: int = 2) -> dict[str, Any]:
    return {"q": q, "results": [f"{q}-{n}" for n in range(limit)]}


# --- prompts -------------------------------------------------------------------------------------


@server.prompt
def review_code(code: str) -> str:
    """Asks for a review."""
    return f"Find the defects in the change below:\n\n{code}"


@server.prompt
def debug_session(error: str) -> list[pub.PromptMessage]:
    return [
        pub.PromptMessage(role="user", content=pub.TextContent(type="text", text=error)),
        pub.PromptMessage(
            role="assistant",
            content=pub.TextContent(type="text", text="Which input triggers it?"),
        ),
    ]


@server.prompt
def plan_trip(city: str, days: int, budget: float = 100.0) -> str:
    """Plans a trip.

    Args:
        city: Where to.
        days: How long.
    """
    return f"Plan {days} days in {city} for {budget * days:.0f} euros."


# Enough tools for several pages: a listing in pages of PAGE_SIZE.
def filler(n: int) -> None:
    @server.tool(f"filler_{n}", description=f"Filler tool {n}.")
    def tool() -> str:
        return f"filler {n}"


for number in range(8):
    filler(number)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run_stdio()
    else:
        print(args.port, flush=True)
        server.run_http("127.0.0.1", args.port)


if __name__ == "__main__":
    main()
