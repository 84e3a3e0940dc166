"""An in-process HTTP request (httpx's `ASGITransport` runs the app in the caller's task) leaves
no trace in the caller's context: its headers and session id do not reach later in-memory
requests (issue 51, item 8)."""

from __future__ import annotations

import httpx
import pytest

from mcpio import Client, Context, Server

pytestmark = pytest.mark.anyio


def probe() -> Server:
    server = Server("probe")

    @server.tool()
    def seen(ctx: Context) -> str:
        return f"{ctx.headers.get('x-probe')} {ctx.session_id is not None}"

    return server


@pytest.mark.parametrize("mode", ["2025-11-25", "2026-07-28"])
async def test_an_in_process_http_request_does_not_leak_into_in_memory_ones(mode: str) -> None:
    server = probe()
    transport = httpx.ASGITransport(app=server.http_app())
    async with httpx.AsyncClient(transport=transport) as http:
        async with Client(
            "http://127.0.0.1/mcp", http=http, headers={"X-Probe": "yes"}, mode=mode
        ) as client:
            over_http = (await client.call_tool("seen", {})).content[0].text  # type: ignore[union-attr]
    async with Client(server, mode=mode) as client:
        in_memory = (await client.call_tool("seen", {})).content[0].text  # type: ignore[union-attr]
    assert over_http == f"yes {mode == '2025-11-25'}"
    assert in_memory == "None False"
