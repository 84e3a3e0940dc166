"""Hardening of the HTTP host and its per-caller middlewares (issue 46): cached results and rate
limits kept apart between clients, custom routes behind the Host and Origin checks, a share of
the session tables per network, and one body's parse budget.

Clients that must count as different ones connect from different loopback addresses (real
sockets), or reach the ASGI app with a `scope["client"]` of their own (addresses of documentation
networks, which loopback sockets cannot have)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest

from mcpio import Client, Context, Server
from mcpio._core.errors import McpError
from mcpio.apps import UiApp
from mcpio.auth import Principal, ResourceServerAuth
from mcpio.middleware import RateLimitMiddleware, ResponseCachingMiddleware
from tests.support import MODERN, headers_for, initialize, modern, serve_app

pytestmark = pytest.mark.anyio
LEGACY = "2025-11-25"
PUBLIC = {"cache_ttl_ms": 60_000, "cache_scope": "public"}
PRIVATE = {"cache_ttl_ms": 60_000, "cache_scope": "private"}


def from_address(address: str, **headers: str) -> httpx.AsyncClient:
    """An httpx client whose connections come from `address` (a loopback one)."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(transport=transport, headers=headers, timeout=10)


def client_at(url: str, address: str = "127.0.0.1", mode: str = MODERN, **options: Any) -> Client:
    """A client of `url` connecting from `address`, without a result cache of its own (what is
    answered again is the server's doing)."""
    return Client(url, mode=mode, http=from_address(address), cache=False, **options)


# ---------------------------------------------------------------------- response caching


def apps_server(**options: Any) -> Server:
    server = Server("apps", middleware=[ResponseCachingMiddleware()], **options)

    @server.tool(app=UiApp(resource_uri="ui://clock/app.html", visibility=["app"]))
    def tick() -> str:
        """The app's own button."""
        return "tick"

    @server.tool
    def plain() -> str:
        return "plain"

    @server.app_resource("ui://clock/app.html")
    def page() -> str:
        return "<!doctype html><title>clock</title>"

    return server


async def test_a_cached_list_is_not_served_to_a_client_of_other_capabilities() -> None:
    # Public results are shared, but only between requests that would get the same result: an
    # apps client's tools/list lists the app-only tool, a plain client's must not.
    server = apps_server(**PUBLIC)
    async with Client(server, mode=MODERN, apps=True, cache=False) as apps:
        assert sorted(t.name for t in (await apps.list_tools()).tools) == ["plain", "tick"]
    async with Client(server, mode=MODERN, cache=False) as plain:
        assert [t.name for t in (await plain.list_tools()).tools] == ["plain"]
    async with Client(server, mode=MODERN, apps=True, cache=False) as again:
        server.remove_tool("plain")  # within the ttlMs: the kept answer, for the same caller
        assert sorted(t.name for t in (await again.list_tools()).tools) == ["plain", "tick"]


def revision_server() -> Server:
    server = Server("revisions", middleware=[ResponseCachingMiddleware()], **PUBLIC)

    @server.resource("test://revision")
    def revision(ctx: Context) -> str:
        return ctx.revision

    return server


async def test_a_cached_read_is_not_served_to_a_client_of_another_revision() -> None:
    server = revision_server()
    for mode in (LEGACY, MODERN, LEGACY):
        async with Client(server, mode=mode, cache=False) as client:
            read = await client.read_resource("test://revision")
            assert read.contents[0].text == mode  # type: ignore[union-attr]


def tenant_server(reads: list[str], **options: Any) -> Server:
    server = Server("tenants", middleware=[ResponseCachingMiddleware()], **options)

    @server.resource("test://tenant")
    def tenant(ctx: Context) -> str:
        reads.append(ctx.headers.get("x-tenant", ""))
        return ctx.headers.get("x-tenant", "none")

    return server


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_private_results_are_not_cached_for_callers_without_a_principal(mode: str) -> None:
    # Without authorization nothing tells callers apart: a private result (one that may depend
    # on the session, its state or its headers) is computed afresh for each request.
    reads: list[str] = []
    async with serve_app(tenant_server(reads, **PRIVATE).http_app()) as web:
        url = f"{web.url}/mcp"
        for address, tenant in (("127.0.0.1", "acme"), ("127.0.0.2", "globex")):
            headers = {"x-tenant": tenant}
            async with client_at(url, address, mode, headers=headers) as client:
                for _ in range(2):
                    read = await client.read_resource("test://tenant")
                    assert read.contents[0].text == tenant  # type: ignore[union-attr]
    assert reads == ["acme", "acme", "globex", "globex"]


async def verify(token: str) -> Principal | None:
    return Principal(subject=token) if token in ("alice", "bob") else None


def authorized(server: Server) -> Any:
    auth = ResourceServerAuth(
        verifier=verify, resource="http://127.0.0.1/mcp", authorization_servers=["http://as"]
    )
    return server.http_app(auth=auth, allowed_hosts=frozenset({"*"}))


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_private_results_are_cached_per_principal_and_session(mode: str) -> None:
    reads: list[str] = []
    async with serve_app(authorized(tenant_server(reads, **PRIVATE))) as web:
        url = f"{web.url}/mcp"

        async def read_twice(token: str, tenant: str) -> list[str]:
            headers = {"x-tenant": tenant}
            texts = []
            async with client_at(url, mode=mode, auth=token, headers=headers) as client:
                for _ in range(2):
                    read = await client.read_resource("test://tenant")
                    texts.append(read.contents[0].text)  # type: ignore[union-attr]
            return texts

        assert await read_twice("alice", "a1") == ["a1", "a1"]  # the second from the cache
        assert await read_twice("bob", "b1") == ["b1", "b1"]  # bob never gets alice's
        # Legacy: alice's next session is another caller; 2026-07-28 has no session.
        again = await read_twice("alice", "a2")
    assert reads == ["a1", "b1", "a2"] if mode == LEGACY else ["a1", "b1"]
    assert again == (["a2", "a2"] if mode == LEGACY else ["a1", "a1"])


# ---------------------------------------------------------------------- rate limits


def limited_server() -> Server:
    server = Server("limited", middleware=[RateLimitMiddleware(4, 3600)])

    @server.tool
    def echo(text: str) -> str:
        return text

    return server


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_rate_limits_count_each_client_without_authorization(mode: str) -> None:
    # The budget counts every request (initialize and server/discover too): the client at
    # 127.0.0.2 spends it all; the one at 127.0.0.3 has its own, a later one at 127.0.0.2 none.
    async with serve_app(limited_server().http_app()) as web:
        url = f"{web.url}/mcp"
        async with client_at(url, "127.0.0.2", mode) as hog:
            with pytest.raises(McpError) as refused:
                for n in range(5):
                    await hog.call_tool("echo", {"text": str(n)})
            assert refused.value.code == -32029
        async with client_at(url, "127.0.0.3", mode) as other:
            answered = await other.call_tool("echo", {"text": "mine"})
            assert answered.content[0].text == "mine"  # type: ignore[union-attr]
        with pytest.raises(McpError) as refused:
            async with client_at(url, "127.0.0.2", mode) as again:
                await again.call_tool("echo", {"text": "again"})
        assert refused.value.code == -32029


# ---------------------------------------------------------------------- custom routes


def routed_server() -> Server:
    server = Server("routed")

    @server.custom_route("/status")
    async def status(request: object) -> dict[str, Any]:
        return {"users": ["alice"]}  # what a DNS-rebound page must not read

    @server.custom_route("/healthz", check_host=False)
    async def healthz(request: object) -> str:
        return "ok"

    return server


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 200),
        ({"host": "rebound.example:8000"}, 421),
        ({"origin": "http://rebound.example"}, 403),
        ({"origin": "http://localhost:3000"}, 200),
    ],
)
async def test_custom_routes_are_behind_the_host_and_origin_checks(
    headers: dict[str, str], status: int
) -> None:
    async with serve_app(routed_server().http_app()) as web, httpx.AsyncClient() as http:
        answer = await http.get(f"{web.url}/status", headers=headers)
        assert answer.status_code == status
        assert ("alice" in answer.text) == (status == 200)
        # A route that opted out (a probe naming the pod's address) answers whatever they name.
        probe = await http.get(f"{web.url}/healthz", headers=headers)
        assert (probe.status_code, probe.text) == (200, "ok")


# ---------------------------------------------------------------------- parse budget


async def test_by_default_one_largest_body_is_parsed_and_served_at_a_time() -> None:
    # `max_parsing_bytes` defaults to `max_body_bytes` (16 MiB): while one 9 MiB body is in
    # service, a second one waits for it (here past `admission_timeout`: 503), never parsed
    # beside it; a small body still fits beside the first.
    server = Server("bodies")
    started, gate = anyio.Event(), anyio.Event()

    @server.tool
    async def hold(text: str) -> int:
        started.set()
        await gate.wait()
        return len(text)

    @server.tool
    def echo(text: str) -> int:
        return len(text)

    app = server.http_app(admission_timeout=0.2)
    big = "x" * (9 * 1024 * 1024)

    async def call(http: httpx.AsyncClient, id: int, name: str, text: str) -> httpx.Response:
        frame = modern(id, "tools/call", name=name, arguments={"text": text})
        return await http.post("/mcp", content=json.dumps(frame), headers=headers_for(frame))

    async with serve_app(app) as web, httpx.AsyncClient(base_url=web.url, timeout=30) as http:
        held: list[httpx.Response] = []
        async with anyio.create_task_group() as tasks:

            async def first() -> None:
                held.append(await call(http, 1, "hold", big))

            tasks.start_soon(first)
            await started.wait()
            second = await call(http, 2, "echo", big)
            small = await call(http, 3, "echo", "small")
            gate.set()
        assert second.status_code == 503 and second.headers["retry-after"] == "1"
        assert small.json()["result"]["structuredContent"] == {"result": 5}
        assert held[0].json()["result"]["structuredContent"] == {"result": len(big)}


# ---------------------------------------------------------------------- a network's share


@dataclass
class Reply:
    """What the ASGI app sent: its status and headers once it started answering."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict[str, str])
    started: anyio.Event = field(default_factory=anyio.Event)
    body: bytes = b""


async def asgi_request(
    app: Any, address: str, frame: dict[str, Any], headers: dict[str, str], reply: Reply
) -> None:
    """POST `frame` to the ASGI app as a peer at `address` would; the client stays connected
    until the task is cancelled."""
    fields = {**headers, "host": "127.0.0.1"}
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in fields.items()],
        "client": (address, 40000),
    }
    body = json.dumps(frame).encode()
    read = False

    async def receive() -> dict[str, Any]:
        nonlocal read
        if not read:
            read = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            reply.status = message["status"]
            reply.headers = {k.decode(): v.decode() for k, v in message["headers"]}
            reply.started.set()
        elif message["type"] == "http.response.body":
            reply.body += message.get("body", b"")

    await app(scope, receive, send)


async def initialize_from(app: Any, address: str) -> Reply:
    reply = Reply()
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    await asgi_request(app, address, initialize(), headers, reply)
    return reply


async def test_the_addresses_of_one_network_hold_a_share_of_the_session_table() -> None:
    # 20 sessions, 2 per client: one /24 (or IPv6 /48) holds at most a quarter, 5, so three
    # addresses of one network cannot take what others need; loopback addresses count alone.
    app = limited_server().http_app(max_sessions=20, max_sessions_per_client=2)
    statuses = [(await initialize_from(app, f"203.0.113.{n // 2}")).status for n in range(6)]
    assert statuses == [200, 200, 200, 200, 200, 429]
    assert (await initialize_from(app, "198.51.100.1")).status == 200  # another network
    ipv6 = ["2001:db8:1:1::1", "2001:db8:1:1::2", "2001:db8:1:2::1", "2001:db8:1:3::1"]
    statuses = [(await initialize_from(app, address)).status for address in ipv6 * 2]
    # The first two are one client (one /64), at its share of 2; the third /64 finds the /48's
    # share (5) taken.
    assert statuses == [200, 200, 200, 200, 429, 429, 200, 429]
    assert (await initialize_from(app, "2001:db8:2::1")).status == 200
    for n in range(2, 6):
        assert (await initialize_from(app, f"127.0.0.{n}")).status == 200
    assert app.legacy.slots.by_network == {
        "203.0.113.0/24": 5,
        "198.51.100.0/24": 1,
        "2001:db8:1::/48": 5,
        "2001:db8:2::/48": 1,
    }


async def test_the_addresses_of_one_network_hold_a_share_of_the_listen_streams() -> None:
    app = limited_server().http_app(max_listen_streams=8, max_listen_streams_per_client=1)
    frame = modern(1, "subscriptions/listen", notifications={"toolsListChanged": True})
    headers = headers_for(frame)
    replies: dict[str, Reply] = {}
    async with anyio.create_task_group() as tasks:
        for address in ("203.0.113.1", "203.0.113.2", "203.0.113.3", "198.51.100.1"):
            reply = replies[address] = Reply()
            tasks.start_soon(asgi_request, app, address, frame, headers, reply)
            await reply.started.wait()  # the stream is open (or refused)
        statuses = {address: reply.status for address, reply in replies.items()}
        tasks.cancel_scope.cancel()  # the listeners go away
    assert statuses == {
        "203.0.113.1": 200,
        "203.0.113.2": 200,
        "203.0.113.3": 429,  # a quarter of 8: two streams for 203.0.113.0/24
        "198.51.100.1": 200,
    }
    assert app.listen_slots.count == 0 and app.listen_slots.by_network == {}


async def test_a_legacy_initialize_spends_its_own_clients_rate_budget() -> None:
    # initialize is served by the session's own task: it too knows its client (ctx.client_key).
    server = Server("limited", middleware=[RateLimitMiddleware(2, 3600)])
    app = server.http_app()
    answers = [json.loads((await initialize_from(app, "203.0.113.1")).body) for _ in range(3)]
    assert ["result" in answer for answer in answers] == [True, True, False]
    assert answers[2]["error"]["code"] == -32029
    other = json.loads((await initialize_from(app, "198.51.100.1")).body)
    assert other["result"]["protocolVersion"] == LEGACY
