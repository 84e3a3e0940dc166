"""How the server builds its middleware pipeline per method: a `Middleware` runs for the
requests it has a hook for (a subclass overriding none of them is left out of that method's
pipeline, at no cost), one that overrides `__call__` or a plain function runs for every request,
and a middleware added later joins the pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from mcpio import Client, Server
from mcpio.middleware import Call, CallNext, Middleware
from tests.support import MODERN

pytestmark = pytest.mark.anyio


def make_server() -> Server:
    server = Server("pipeline")

    @server.tool()
    async def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return text

    return server


class ToolCalls(Middleware):
    """Overrides `on_call_tool` only."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        self.seen.append(call.method)
        return await call_next(call)


class OwnCall(Middleware):
    """Overrides `__call__` itself: it runs for every request."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        self.seen.append(call.method)
        return await call_next(call)


class Requests(Middleware):
    """Overrides `on_request`: every request."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        self.seen.append(call.method)
        return await call_next(call)


@pytest.mark.parametrize("mode", ["2025-11-25", MODERN])
async def test_a_hook_runs_for_its_method_only(mode: str) -> None:
    server = make_server()
    tools = ToolCalls()
    server.add_middleware(tools)
    async with Client(server, mode=mode) as client:
        await client.list_tools()
        result = await client.call_tool("echo", {"text": "hi"})
        await client.list_prompts()
    assert result.content[0].text == "hi"  # type: ignore[union-attr]
    assert tools.seen == ["tools/call"]


@pytest.mark.parametrize("mode", ["2025-11-25", MODERN])
async def test_a_middleware_overriding_call_and_a_function_run_for_every_request(
    mode: str,
) -> None:
    server = make_server()
    own = OwnCall()
    functions: list[str] = []

    async def function(call: Call, call_next: CallNext) -> Any:
        functions.append(call.method)
        return await call_next(call)

    server.add_middleware(own)
    server.add_middleware(function)
    async with Client(server, mode=mode) as client:
        await client.list_tools()
        await client.call_tool("echo", {"text": "hi"})
    assert "tools/list" in own.seen and "tools/call" in own.seen
    assert "tools/list" in functions and "tools/call" in functions


async def test_a_middleware_added_after_requests_were_served_sees_the_next_ones() -> None:
    server = make_server()
    first = ToolCalls()
    server.add_middleware(first)
    async with Client(server, mode=MODERN) as client:
        await client.call_tool("echo", {"text": "one"})
        later = ToolCalls()
        server.add_middleware(later)
        await client.call_tool("echo", {"text": "two"})
    assert first.seen == ["tools/call", "tools/call"]
    assert later.seen == ["tools/call"]


class NotOurs:
    """A middleware of another framework (FastMCP's hooks take a context): no `Middleware`."""

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        return await call_next(context)


def sync_middleware(call: Call, call_next: CallNext) -> Any:
    return call_next(call)


@pytest.mark.parametrize("wrong", [NotOurs(), sync_middleware, "logging"])
def test_what_is_no_middleware_is_refused_when_added(wrong: Any) -> None:
    """It was accepted, and then every request failed with -32603 ("object is not callable")."""
    server = make_server()
    with pytest.raises(TypeError, match=r"subclass mcpio\.middleware\.Middleware"):
        server.add_middleware(wrong)
    with pytest.raises(TypeError, match=r"must be a mcpio\.middleware\.Middleware or an async"):
        Server("s", middleware=[wrong])
    assert server.middleware == []
