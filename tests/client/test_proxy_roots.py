"""A target's `roots/list` through the proxy (issue 50): a target asking on its own (the
reference filesystem server asks right after `initialize`) is answered by the client the
connection serves, or from its roots as last answered, or refused; its answer never replaces
the result of the call that happened to be in flight (a refusal failed the Inspector's
`tools/list`; on 2026-07-28 `tools/list` failed with "cannot ask the client for input"). Roots
round-trip in both eras (a legacy client's failed to convert)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio import Client, Context, Server
from mcpio.client._proxy import proxy_server

pytestmark = pytest.mark.anyio

ROOTS_ASKING = Path(__file__).parents[1] / "peers" / "roots_asking_server.py"
ROOTS = ["file:///srv/a", "file:///srv/b"]
MODES = ["2025-11-25", "2026-07-28"]


def asking_proxy() -> Server:
    return proxy_server([sys.executable, str(ROOTS_ASKING)], mode="2025-11-25")


async def given_roots(client: Client) -> Any:
    """What the target was last given when it asked its roots (None: nothing yet)."""
    result = await client.call_tool("roots", {})
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.parametrize("roots", [None, ROOTS])
@pytest.mark.parametrize("client_mode", MODES)
async def test_roots_asked_on_the_targets_own_never_replace_a_result(
    client_mode: str, roots: list[str] | None
) -> None:
    with anyio.fail_after(30):
        async with Client(asking_proxy(), mode=client_mode, roots=roots) as client:
            for _ in range(3):  # the first connects: the target asks while it is in flight
                assert [t.name for t in (await client.list_tools()).tools] == ["roots", "ask"]


async def test_a_legacy_clients_roots_reach_a_target_asking_on_its_own() -> None:
    with anyio.fail_after(30):
        async with Client(asking_proxy(), mode="2025-11-25", roots=ROOTS) as client:
            await client.list_tools()
            given = await given_roots(client)
            while given is None:  # (its answer crosses the call)
                await anyio.sleep(0.05)
                given = await given_roots(client)
    assert given == {"roots": [{"uri": uri} for uri in ROOTS]}


@pytest.mark.parametrize("client_mode", MODES)
async def test_a_refusal_goes_to_the_target_only(client_mode: str) -> None:
    """A client without roots: the target is refused (-32601), and goes on."""
    with anyio.fail_after(30):
        async with Client(asking_proxy(), mode=client_mode) as client:
            await client.list_tools()
            given = await given_roots(client)
            while given is None:
                await anyio.sleep(0.05)
                given = await given_roots(client)
    assert given["error"]["code"] == -32601


def roots_in_a_call() -> Server:
    server = Server("where")

    @server.tool()
    async def where(ctx: Context) -> str:
        listed = await ctx.list_roots()
        return " ".join(str(root.uri) for root in listed.roots)

    return server


@pytest.mark.parametrize("client_mode", MODES)
@pytest.mark.parametrize("target_mode", MODES)
async def test_roots_asked_in_a_call_round_trip(target_mode: str, client_mode: str) -> None:
    proxy = proxy_server(roots_in_a_call(), mode=target_mode)
    with anyio.fail_after(30):
        async with Client(proxy, mode=client_mode, roots=ROOTS) as client:
            result = await client.call_tool("where", {})
    assert result.content[0].text == " ".join(ROOTS)  # type: ignore[union-attr]
