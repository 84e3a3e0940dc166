"""The client's list calls follow the server's pages, and keep them as its cache hints allow
(SEP-2549: keyed by cacheScope, principal and revision, for ttlMs, dropped on list_changed)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest

from mcp_wire_runtime.errors import ProtocolError
from mcpio import CacheHint, Call, Client, Server
from mcpio.client._result_cache import ResultCache
from mcpio.latest import public as pub
from mcpio.middleware import CallNext

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


def paged_server(asked: Counter[str], ttl_ms: int = 60_000) -> Server:
    """Five tools, three prompts and three resources, listed two at a time; tools/list may be
    kept `ttl_ms` by anyone; `asked` counts the requests the server handles by method."""
    server = Server(
        "paged",
        list_page_size=2,
        method_cache_hints={"tools/list": CacheHint(ttl_ms, "public")},
    )

    async def count(call: Call, call_next: CallNext) -> Any:
        asked[call.method] += 1
        return await call_next(call)

    server.add_middleware(count)
    for n in range(5):
        server.tool(name=f"t{n}")(lambda: "ok")
    for n in range(3):
        server.prompt(name=f"p{n}")(lambda: "hi")
        server.resource(f"memo://{n}")(lambda: "text")
    return server


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_list_calls_follow_every_page_and_a_cursor_gets_one(mode: str) -> None:
    asked: Counter[str] = Counter()
    async with Client(paged_server(asked), mode=mode, cache=False) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["t0", "t1", "t2", "t3", "t4"]
        assert tools.nextCursor is None and asked["tools/list"] == 3
        assert len((await client.list_prompts()).prompts) == 3
        assert len((await client.list_resources()).resources) == 3
        first = await client.request("tools/list")
        second = await client.list_tools(cursor=first.nextCursor)
        assert [t.name for t in second.tools] == ["t2", "t3"]
        assert second.nextCursor is not None


async def test_pages_are_kept_for_their_ttl_then_asked_again() -> None:
    asked: Counter[str] = Counter()
    now = [1000.0]
    cache = ResultCache(clock=lambda: now[0])
    async with Client(paged_server(asked), mode=MODERN, cache=cache) as client:
        assert len((await client.list_tools()).tools) == 5
        assert len((await client.list_tools()).tools) == 5
        assert asked["tools/list"] == 3
        now[0] += 59.9
        await client.list_tools()
        assert asked["tools/list"] == 3
        now[0] += 0.2
        await client.list_tools()
        assert asked["tools/list"] == 6
        await client.list_prompts()
        await client.list_prompts()  # no hint for prompts/list: ttlMs 0, never kept
        assert asked["prompts/list"] == 4


@pytest.mark.parametrize(("mode", "cache"), [(MODERN, False), ("legacy", True)])
async def test_no_cache_when_off_or_without_hints(mode: str, cache: bool) -> None:
    """`cache=False` asks every time; a legacy revision has no hints (ttlMs 0) to keep by."""
    asked: Counter[str] = Counter()
    async with Client(paged_server(asked), mode=mode, cache=cache) as client:
        await client.list_tools()
        await client.list_tools()
    assert asked["tools/list"] == 6


async def test_list_changed_drops_the_kept_list() -> None:
    asked: Counter[str] = Counter()
    server = paged_server(asked)
    async with Client(server, mode=MODERN) as client:
        assert len((await client.list_tools()).tools) == 5
        async with client.listen(tools=True) as changes:
            assert server.remove_tool("t0")
            with anyio.fail_after(10):
                notice = await changes.__anext__()
        assert notice.method == "notifications/tools/list_changed"
        assert [t.name for t in (await client.list_tools()).tools] == ["t1", "t2", "t3", "t4"]
    assert asked["tools/list"] == 5  # three pages, then the two of what is left


async def test_cursors_that_go_round_are_an_error() -> None:
    server = Server("loop")

    @server.method("tools/list")
    async def tools(ctx: Any, params: Any) -> pub.ListToolsResult:
        return pub.ListToolsResult(
            tools=[], nextCursor="again", ttlMs=0, cacheScope="private", resultType="complete"
        )

    async with Client(server, mode=MODERN) as client:
        with pytest.raises(ProtocolError, match="the server's tools cursors go round"):
            await client.list_tools()


def listing(ttl_ms: int, scope: str) -> pub.ListToolsResult:
    return pub.ListToolsResult.model_validate(
        {"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "ttlMs": ttl_ms,
         "cacheScope": scope, "resultType": "complete"}
    )  # fmt: skip


def test_the_key_is_scope_principal_and_revision() -> None:
    cache = ResultCache(clock=lambda: 0.0)
    where = ("http://127.0.0.1/mcp", MODERN, "tools/list", None)
    cache.put(where[0], "alice", *where[1:], listing(1000, "private"))
    assert cache.get(where[0], "alice", *where[1:]) is not None
    assert cache.get(where[0], "bob", *where[1:]) is None
    assert cache.get(where[0], "alice", "2026-12-31", *where[2:]) is None
    cache.put(where[0], "alice", *where[1:], listing(1000, "public"))
    assert cache.get(where[0], "bob", *where[1:]) is not None
    cache.put(where[0], "carol", MODERN, "tools/list", "c1", listing(0, "public"))
    assert len(cache) == 2  # ttlMs 0: not kept
    cache.drop(where[0], ["tools/list"])
    assert len(cache) == 0
