"""What a proxy offers is what its target offers (issue 50): its capabilities, extensions and
list-change flags, learned from the target (not every capability, as before: a target without
resources answered -32601 to a listing the proxy advertised); a mount offers what any of its
servers offers and nothing none does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio import Client, Server
from mcpio.client._proxy import proxy_server

pytestmark = pytest.mark.anyio

ROOTS_ASKING = Path(__file__).parents[1] / "peers" / "roots_asking_server.py"
TASKS = "io.modelcontextprotocol/tasks"
SKILLS = "io.modelcontextprotocol/skills"


def tools_only() -> Server:
    server = Server("tools-only")

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    return server


def with_resources() -> Server:
    server = Server("with-resources")

    @server.resource("data://one", mime_type="text/plain")
    def one() -> str:
        return "one"

    return server


async def offered(client: Client) -> dict[str, Any]:
    """What the server told `client` it offers (2026-07-28: `server/discover`'s)."""
    caps = client.server_capabilities or (await client.discover()).capabilities
    return caps.model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.mark.parametrize("client_mode", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("target_mode", ["2025-06-18", "2026-07-28"])
async def test_a_proxy_offers_what_its_target_offers(target_mode: str, client_mode: str) -> None:
    async with Client(proxy_server(tools_only(), mode=target_mode), mode=client_mode) as client:
        caps = await offered(client)
        assert caps["tools"] == {"listChanged": True}
        assert "logging" in caps  # an mcpio server's
        assert not {"resources", "prompts", "completions"} & set(caps)
        assert TASKS in caps["extensions"]  # the proxy's engine runs a call as a task
        assert SKILLS not in caps["extensions"]


@pytest.mark.parametrize("client_mode", ["2025-11-25", "2026-07-28"])
async def test_a_target_without_list_changes_or_logging(client_mode: str) -> None:
    proxy = proxy_server([sys.executable, str(ROOTS_ASKING)], mode="2025-11-25")
    with anyio.fail_after(30):
        async with Client(proxy, mode=client_mode) as client:
            caps = await offered(client)
            assert caps["tools"] == {}  # no listChanged: the target sends no list changes
            assert not {"logging", "resources", "prompts", "completions"} & set(caps)
            assert [t.name for t in (await client.list_tools()).tools] == ["roots", "ask"]


@pytest.mark.parametrize("client_mode", ["2025-11-25", "2026-07-28"])
async def test_the_targets_list_change_reaches_the_proxys_client(client_mode: str) -> None:
    target = tools_only()
    async with Client(proxy_server(target, mode="2025-11-25"), mode=client_mode) as client:
        await client.list_tools()  # (connects the proxy to its target)
        with anyio.fail_after(10):
            async with client.listen(tools=True) as changes:
                await target.notify_tools_changed()
                async for notice in changes:
                    assert notice.method == "notifications/tools/list_changed"
                    break


async def test_a_mount_offers_what_any_of_its_servers_offers() -> None:
    main = Server("main")
    main.mount(proxy_server(tools_only(), mode="2025-11-25"), namespace="a")
    async with Client(main, mode="2025-11-25") as client:
        assert not {"resources", "prompts", "completions"} & set(await offered(client))
    main.mount(with_resources(), namespace="b")
    async with Client(main, mode="2026-07-28") as client:
        caps = await offered(client)
        assert caps["resources"] == {"subscribe": True, "listChanged": True}  # b's
        assert not {"prompts", "completions"} & set(caps)
