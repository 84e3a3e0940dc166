"""An mcpio server with a tool for each kind of structured output and the URL-mode elicitation
tools, for tests/server/test_structured.py and tests/server/test_url_elicitation.py: imported in-process (and
served over HTTP there), or run as a stdio server (`python structured_server.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from pydantic import BaseModel

from mcpio import Call, Context, Middleware, Server
from mcpio._core.context import ElicitUrl, UrlElicitationRequired
from mcpio.latest import public as pub
from mcpio.middleware import CallNext


class Weather(BaseModel):
    city: str
    celsius: float


class Point(TypedDict):
    x: int
    y: int


@dataclass
class Box:
    width: int
    height: int


server = Server("structured-fixture", "1.0")


@server.tool()
def weather(city: str) -> Weather:
    return Weather(city=city, celsius=21.5)


@server.tool()
def point() -> Point:
    return {"x": 1, "y": 2}


@server.tool()
def box() -> Box:
    return Box(3, 4)


@server.tool()
def count() -> int:
    return 7


@server.tool()
def word() -> str:
    return "hello"


@server.tool()
def numbers() -> list[int]:
    return [1, 2, 3]


@server.tool()
def scores() -> dict[str, float]:
    return {"alice": 1.5}


@server.tool()
def broken() -> int:
    return "not a number"  # type: ignore[return-value]  # the mismatch under test


@server.tool(structured_output=False)
def plain_count() -> int:
    return 7


@server.tool(output_schema=Weather.model_json_schema())
def forged() -> dict[str, object]:
    """Its answer is valid; `Tamper` below makes it lie about its output (city not a string)."""
    return {"city": "Oslo", "celsius": 1.0}


@server.tool(output_schema=Weather.model_json_schema())
def silent() -> dict[str, object]:
    """Declares an outputSchema; `Tamper` below drops its structured content."""
    return {"city": "Oslo", "celsius": 1.0}


class Tamper(Middleware):
    """A lying server, for the client's checks: the server itself checks a tool's result
    against its outputSchema, so the lie is told after that, on the way out."""

    async def on_call_tool(self, call: Call, call_next: CallNext) -> object:
        result = await call_next(call)
        text = [pub.TextContent(type="text", text="sunny")]
        if call.name == "forged":
            forged = {"city": 3, "celsius": 1.0}
            return pub.CallToolResult(content=text, structuredContent=forged, resultType="complete")
        if call.name == "silent":
            return pub.CallToolResult(content=text, resultType="complete")
        return result


server.add_middleware(Tamper())


# ---------------------------------------------------------------------- URL-mode elicitation

PAID: set[str] = set()  # who completed the payment interaction (a real server: its database)


@server.tool()
async def sign_in(ctx: Context) -> str:
    answer = await ctx.elicit_url(
        "Sign in to continue", "https://example.com/sign-in", elicitation_id="sign-in-1"
    )
    await ctx.elicitation_complete("sign-in-1")
    return answer.action


@server.tool()
async def pay(who: str) -> str:
    if who not in PAID:
        raise UrlElicitationRequired(
            [ElicitUrl("Pay first", f"https://example.com/pay/{who}", f"pay-{who}")]
        )
    return f"{who} paid"


@server.tool()
async def complete_payment(ctx: Context, who: str) -> str:
    """What the payment page's backend does once the user paid (here a tool the test calls)."""
    PAID.add(who)
    await ctx.elicitation_complete(f"pay-{who}")
    return "recorded"


if __name__ == "__main__":
    server.run_stdio()
