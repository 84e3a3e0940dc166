"""URL-mode elicitation (issue 20 item 2), in each revision that has it: on a 2025-11-25 session
a real `elicitation/create` request (mode url, with its `elicitationId`), the error -32042 and
`notifications/elicitation/complete`; on 2026-07-28 an `input_required` round (no id, no
notification: the error is retired, so -32042 raised by a handler becomes such a round). The
client declares `elicitation.url` only with `on_elicit_url`. End to end in-process, over stdio
and HTTP, and with the official SDK's client."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult

from mcpio import Client, Context, ElicitUrl, McpError, Notice, Server
from tests.peers.structured_server import server
from tests.support import PEERS, serve_app

FIXTURE = [sys.executable, str(PEERS / "structured_server.py")]
MODERN, LEGACY = "2026-07-28", "2025-11-25"
DEADLINE = 30

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def connected(transport: str, mode: str, **options: Any) -> AsyncIterator[Client]:
    if transport == "memory":
        async with Client(server, mode=mode, **options) as client:
            yield client
    elif transport == "stdio":
        async with Client(FIXTURE, mode=mode, **options) as client:
            yield client
    else:
        async with serve_app(server.http_app()) as served:
            async with Client(f"{served.url}/mcp", mode=mode, **options) as client:
                yield client


class Browser:
    """The client's `on_elicit_url`: records each URL, 'visits' it (the payment page tells the
    server, here through the `complete_payment` tool), and accepts."""

    def __init__(self) -> None:
        self.asked: list[ElicitUrl] = []
        self.client: Client | None = None

    async def __call__(self, asked: ElicitUrl) -> dict[str, Any]:
        self.asked.append(asked)
        if "/pay/" in asked.url and self.client is not None:
            await self.client.call_tool("complete_payment", {"who": asked.url.rsplit("/", 1)[1]})
        return {"action": "accept"}


def test_the_capability_is_declared_with_the_callback_only() -> None:
    async def answer(_: Any) -> dict[str, Any]:
        return {"action": "decline"}

    assert "elicitation" not in Client(server).capabilities(True)
    assert Client(server, elicitation=answer).capabilities(True)["elicitation"] == {"form": {}}
    assert Client(server, on_elicit_url=answer).capabilities(True)["elicitation"] == {"url": {}}
    both = Client(server, elicitation=answer, on_elicit_url=answer).capabilities(False)
    assert both["elicitation"] == {"form": {}, "url": {}}


async def test_url_mode_alone_declares_no_elicitation_before_2025_11_25() -> None:
    async def answer(_: Any) -> dict[str, Any]:
        return {"action": "accept"}

    own = Server("caps")

    @own.tool()
    def elicitation(ctx: Context) -> dict[str, Any]:
        declared = ctx.client_capabilities.elicitation
        return {"declared": None if declared is None else declared.model_dump(exclude_unset=True)}

    for mode, declared in (("2025-06-18", None), (LEGACY, {"url": {}}), (MODERN, {"url": {}})):
        async with Client(own, mode=mode, on_elicit_url=answer) as client:
            result = await client.call_tool("elicitation", {})
        assert result.structuredContent == {"declared": declared}, mode


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_elicit_url_round_trip(transport: str, mode: str) -> None:
    browser = Browser()
    notices: list[Notice] = []
    with anyio.fail_after(DEADLINE):
        async with connected(transport, mode, on_elicit_url=browser, on_notice=notices.append) as client:  # fmt: skip
            result = await client.call_tool("sign_in", {})
            assert result.structuredContent == {"result": "accept"}
            assert len(browser.asked) == 1
            asked = browser.asked[0]
            assert (asked.message, asked.url) == (
                "Sign in to continue",
                "https://example.com/sign-in",
            )
            if mode == LEGACY:  # the id travels, and the completion is announced
                assert asked.elicitation_id == "sign-in-1"
                assert [(n.method, n.params.elicitationId) for n in notices] == [
                    ("notifications/elicitation/complete", "sign-in-1")
                ]
            else:  # 2026-07-28 has neither
                assert asked.elicitation_id is None
                assert notices == []


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_url_elicitation_required_on_a_legacy_session(transport: str) -> None:
    browser = Browser()
    with anyio.fail_after(DEADLINE):
        async with connected(transport, LEGACY, on_elicit_url=browser) as client:
            browser.client = client
            with pytest.raises(McpError) as caught:
                await client.call_tool("pay", {"who": f"ann-{transport}"})
            assert caught.value.code == -32042
            assert caught.value.data == {
                "elicitations": [
                    {
                        "mode": "url",
                        "message": "Pay first",
                        "url": f"https://example.com/pay/ann-{transport}",
                        "elicitationId": f"pay-ann-{transport}",
                    }
                ]
            }
            # the callback saw the URL (and the user paid); the retry goes through
            assert [a.elicitation_id for a in browser.asked] == [f"pay-ann-{transport}"]
            paid = await client.call_tool("pay", {"who": f"ann-{transport}"})
            assert paid.structuredContent == {"result": f"ann-{transport} paid"}


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_url_elicitation_required_becomes_an_input_round_on_2026_07_28(
    transport: str,
) -> None:
    browser = Browser()
    with anyio.fail_after(DEADLINE):
        async with connected(transport, MODERN, on_elicit_url=browser) as client:
            browser.client = client
            paid = await client.call_tool("pay", {"who": f"bob-{transport}"})
            assert paid.structuredContent == {"result": f"bob-{transport} paid"}
            assert [(a.url, a.elicitation_id) for a in browser.asked] == [
                (f"https://example.com/pay/bob-{transport}", None)
            ]


@pytest.mark.parametrize("transport", ["memory", "http"])
@pytest.mark.parametrize(
    ("mode", "code"), [(MODERN, -32021), (LEGACY, -32601), ("2025-06-18", -32601)]
)
async def test_refused_without_the_capability_or_the_revision(
    transport: str, mode: str, code: int
) -> None:
    async def form(_: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    with anyio.fail_after(DEADLINE):
        async with connected(transport, mode, elicitation=form) as client:  # form mode only
            with pytest.raises(McpError) as caught:
                await client.call_tool("sign_in", {})
    assert caught.value.code == code
    if mode == MODERN:
        assert caught.value.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    elif mode == LEGACY:
        assert "elicitation.url" in caught.value.message
    else:
        assert caught.value.message == "URL-mode elicitation is not part of revision 2025-06-18"


@pytest.mark.peers
@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_the_official_sdk_client_answers_it(mode: str) -> None:
    asked: list[ElicitRequestParams] = []

    async def elicitation(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept")

    params = StdioServerParameters(command=FIXTURE[0], args=FIXTURE[1:])
    with anyio.fail_after(DEADLINE):
        async with SdkClient(
            params, mode=mode, elicitation_callback=elicitation, read_timeout_seconds=10
        ) as client:
            result = await client.call_tool("sign_in", {})
            assert result.structured_content == {"result": "accept"}
    assert len(asked) == 1 and isinstance(asked[0], ElicitRequestURLParams)
    assert asked[0].url == "https://example.com/sign-in"
    if mode == "legacy":
        assert asked[0].elicitation_id == "sign-in-1"
