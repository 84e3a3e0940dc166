"""A 2026-07-28 client calling a tool whose arguments travel as `Mcp-Param-*` headers before it
listed the tools: the server refuses the call for the missing header (-32020), the client lists
the tools (learning the headers), and retries the call once, over HTTP on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from mcpio import Client, McpError, Server
from mcpio.latest import HEADER_MISMATCH
from mcpio.middleware import Call, CallNext
from tests.support import serve_app, text_of

pytestmark = pytest.mark.anyio

ROUTED = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    "required": ["region"],
}


def make_server(methods: list[str]) -> Server:
    server = Server("routed")

    async def count(call: Call, call_next: CallNext) -> Any:
        methods.append(call.method)
        return await call_next(call)

    server.add_middleware(count)

    @server.tool(input_schema=ROUTED)
    def locate(region: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return f"in {region}"

    return server


async def test_a_call_before_the_tools_were_listed_lists_them_and_is_retried_once() -> None:
    methods: list[str] = []
    async with serve_app(make_server(methods).http_app()) as served:
        async with Client(served.url + "/mcp", timeout=10) as client:
            assert client.revision == "2026-07-28"
            first = await client.call_tool("locate", {"region": "eu"})
            second = await client.call_tool("locate", {"region": "us"})
    assert (text_of(first), text_of(second)) == ("in eu", "in us")
    # the refused call never reached a handler; one listing, then the two calls
    assert methods == ["server/discover", "tools/list", "tools/call", "tools/call"]


async def test_a_header_refusal_after_the_tools_were_listed_is_not_retried() -> None:
    """Once the client listed the tools, a -32020 is the server's answer to the call as sent."""
    methods: list[str] = []
    server = make_server(methods)
    async with serve_app(server.http_app()) as served:
        async with Client(served.url + "/mcp", timeout=10) as client:
            await client.list_tools()

            renamed = {"type": "string", "x-mcp-header": "Place"}
            server.remove_tool("locate", notify=False)

            @server.tool("locate", input_schema={**ROUTED, "properties": {"region": renamed}})
            def relocated(region: str) -> str:  # pyright: ignore[reportUnusedFunction]
                return region

            with pytest.raises(McpError) as refused:
                # the client mirrors Region from its listing; the server now expects Place
                await client.call_tool("locate", {"region": "eu"})
    assert refused.value.code == HEADER_MISMATCH
    assert methods == ["server/discover", "tools/list"]
