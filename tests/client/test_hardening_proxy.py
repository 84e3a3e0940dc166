"""`proxy_server` in front of several users (issue 46): the target's questions and log lines
reach the user whose call they belong to, never another one's, in both eras of target and of
client; the proxy's connections to its target are bounded."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpio import Client, Context, McpError, Server
from mcpio.auth import Principal, ResourceServerAuth
from mcpio.client._proxy import proxy_server
from tests.support import serve_app, text_of, until

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]
NAME = {"type": "object", "properties": {"who": {"type": "string"}}}


class Target:
    """A target whose `ask` waits until the test lets it ask (so another user's call can be in
    flight first), and whose `hold` stays in flight until the test lets it end."""

    def __init__(self) -> None:
        self.server = Server("target")
        self.asking = anyio.Event()
        self.may_ask = anyio.Event()
        self.holding = anyio.Event()
        self.may_end = anyio.Event()

        @self.server.tool()
        async def ask(ctx: Context) -> str:
            self.asking.set()
            await self.may_ask.wait()
            answer = await ctx.elicit("Who are you?", NAME)
            await ctx.info("a line of ask's")
            return str((answer.content or {}).get("who"))

        @self.server.tool()
        async def hold(ctx: Context) -> str:
            self.holding.set()
            await self.may_end.wait()
            await ctx.info("a line of hold's")
            return "held"


def verifier() -> Any:
    async def lookup(token: str) -> Principal | None:
        return Principal(token[len("token-") :]) if token.startswith("token-") else None

    return lookup


@asynccontextmanager
async def gateway(proxy: Server) -> AsyncIterator[str]:
    """`proxy` over HTTP with bearer tokens `token-<name>` for the principal `<name>`."""
    auth = ResourceServerAuth(
        verifier=verifier(),
        resource="http://127.0.0.1/mcp",
        authorization_servers=["http://127.0.0.1/issuer"],
    )
    async with serve_app(proxy.http_app(auth=auth)) as served:
        yield f"{served.url}/mcp"


class User:
    """A downstream client of principal `name`: what it was asked, the log lines it got."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.asked: list[str] = []
        self.logs: list[Any] = []

    async def elicit(self, params: Any) -> dict[str, Any]:
        self.asked.append(params.message)
        return {"action": "accept", "content": {"who": self.name}}

    async def on_log(self, params: Any) -> None:
        self.logs.append(params.data)

    @asynccontextmanager
    async def client(self, url: str, mode: str) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer token-{self.name}"}
        async with Client(
            url, mode=mode, headers=headers, elicitation=self.elicit, on_log=self.on_log
        ) as client:
            if mode == "2026-07-28":
                client.log_level = "info"
            else:
                await client.set_log_level("info")
            yield client


@pytest.mark.parametrize("client_mode", ERAS)
@pytest.mark.parametrize("target_mode", ERAS)
async def test_a_question_and_logs_reach_only_the_user_whose_call_asked(
    target_mode: str, client_mode: str
) -> None:
    """alice's call asks while bob's call is in flight (started after hers): alice is asked,
    answers, and gets her call's log line; bob is asked nothing and gets only his own line."""
    target = Target()
    alice, bob = User("alice"), User("bob")
    async with gateway(proxy_server(target.server, mode=target_mode)) as url:
        async with alice.client(url, client_mode) as a, bob.client(url, client_mode) as b:
            results: dict[str, str] = {}

            async def call(name: str, client: Client, tool: str) -> None:
                results[name] = text_of(await client.call_tool(tool, {}))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call, "alice", a, "ask")
                await target.asking.wait()  # alice's call is in flight
                tasks.start_soon(call, "bob", b, "hold")
                await target.holding.wait()  # bob's call is in flight, the newest
                target.may_ask.set()
                await until(lambda: "alice" in results)
                target.may_end.set()
    assert results == {"alice": "alice", "bob": "held"}
    assert alice.asked == ["Who are you?"] and bob.asked == []
    assert alice.logs == ["a line of ask's"] and bob.logs == ["a line of hold's"]


async def test_the_connections_to_the_target_are_bounded() -> None:
    """With `max_connections=1`, bob's call is refused (-32005) while alice's is in flight on
    the one connection; once hers ends, her idle connection makes room for his."""
    target = Target()
    alice, bob = User("alice"), User("bob")
    proxy = proxy_server(target.server, mode="2025-11-25", max_connections=1)
    async with gateway(proxy) as url:
        async with alice.client(url, "2025-11-25") as a, bob.client(url, "2025-11-25") as b:
            results: list[str] = []
            async with anyio.create_task_group() as tasks:

                async def held() -> None:
                    results.append(text_of(await a.call_tool("hold", {})))

                tasks.start_soon(held)
                await target.holding.wait()
                with pytest.raises(McpError) as caught:
                    await b.call_tool("hold", {})
                assert caught.value.code == -32005
                assert "max_connections" in caught.value.message
                target.may_end.set()
            assert results == ["held"]
            assert text_of(await b.call_tool("hold", {})) == "held"


async def test_an_idle_connection_to_the_target_closes() -> None:
    """A client's connection to the target closes once it has had no call in flight for
    `idle_seconds`; the client's next call connects again."""
    target = Target()
    target.may_end.set()
    alice = User("alice")
    proxy = proxy_server(target.server, mode="2025-11-25", idle_seconds=0.05)
    upstream = proxy.__dict__["_proxy"].upstream
    async with gateway(proxy) as url, alice.client(url, "2025-11-25") as a:
        assert text_of(await a.call_tool("hold", {})) == "held"
        lane = upstream.lanes["principal:alice"]
        await until(lambda: "principal:alice" not in upstream.lanes and lane._client is None)
        assert text_of(await a.call_tool("hold", {})) == "held"
        assert upstream.lanes["principal:alice"] is not lane


@pytest.mark.parametrize("target_mode", ERAS)
async def test_a_log_line_no_call_can_claim_goes_to_the_proxy_log(
    target_mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    """alice has two calls in flight when one of them logs: the line names neither (the wire
    carries no request id), so it goes to the proxy's own log, not to her newest call; once
    one call is left, its line reaches it."""
    caplog.set_level(logging.DEBUG, logger="mcpio")
    target = Target()
    alice = User("alice")
    async with gateway(proxy_server(target.server, mode=target_mode)) as url:
        async with alice.client(url, "2025-11-25") as a:
            results: dict[str, str] = {}

            async def call(tool: str) -> None:
                results[tool] = text_of(await a.call_tool(tool, {}))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call, "ask")
                await target.asking.wait()
                tasks.start_soon(call, "hold")
                await target.holding.wait()
                target.may_ask.set()
                await until(lambda: "ask" in results)
                target.may_end.set()
    assert results == {"ask": "alice", "hold": "held"}
    assert alice.logs == ["a line of hold's"]
    assert "a line of ask's" in caplog.text
