"""A 2026-07-28 client through a proxy to a 2026-07-28 target (issue 50): the target sees each
request's own client capabilities (it saw the proxy's, all it can carry), and its
`inputRequests` keys reach the client as it named them (the proxy named them itself)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpio import Client, Context, Server
from mcpio.client._inputs import ANSWERING
from mcpio.client._proxy import proxy_server

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


def target() -> Server:
    server = Server("modern")

    @server.tool()
    async def declared(ctx: Context) -> str:
        caps = ctx.client_capabilities
        return f"sampling={caps.sampling is not None} elicitation={caps.elicitation is not None}"

    @server.tool()
    async def name(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}}, key="user_name")
        return answer.action

    return server


async def test_the_target_sees_the_requests_own_client_capabilities() -> None:
    async def elicit(params: Any) -> dict[str, Any]:
        return {"action": "decline"}

    proxy = proxy_server(target(), mode=MODERN)
    async with Client(proxy, mode=MODERN, elicitation=elicit) as client:  # no sampling
        result = await client.call_tool("declared", {})
    assert result.content[0].text == "sampling=False elicitation=True"  # type: ignore[union-attr]


async def test_the_targets_input_keys_reach_the_client() -> None:
    keys: list[str | None] = []

    async def elicit(params: Any) -> dict[str, Any]:
        keys.append(ANSWERING.get())
        return {"action": "accept", "content": {}}

    proxy = proxy_server(target(), mode=MODERN)
    async with Client(proxy, mode=MODERN, elicitation=elicit) as client:
        result = await client.call_tool("name", {})
    assert result.content[0].text == "accept"  # type: ignore[union-attr]
    assert keys == ["user_name"]
