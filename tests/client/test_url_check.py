"""The URLs of URL-mode elicitation are the server's, not to be trusted (issue 31): the client
refuses those it should not show, and malformed -32042 data is the `McpError` it is."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_wire_runtime.errors import ProtocolError
from mcpio import Client, Context, McpError, Server
from mcpio._core.context import ElicitUrl, UrlElicitationRequired
from mcpio._core.url_check import MAX_URL_LENGTH, url_problem
from tests.support import MODERN


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("javascript:alert(1)", "scheme 'javascript' is not https"),
        ("file:///etc/passwd", "scheme 'file' is not https"),
        ("data:text/html,<b>hi</b>", "scheme 'data' is not https"),
        ("https://pay.example/" + "a" * MAX_URL_LENGTH, f"longer than {MAX_URL_LENGTH} characters"),
        ("https://pay.example/\u202eexe.txt", "it holds control, bidi or space characters"),
        ("https://pay.example/a\nb", "it holds control, bidi or space characters"),
        ("https://bank.example@evil.example/", "it names a user (user@host hides the real host)"),
        ("http://pay.example/", "plain http to a host that is not loopback"),
        ("https:///nohost", "no host"),
        (42, "not a string"),
    ],
)
def test_unsafe_urls_are_refused_with_the_reason(url: Any, why: str) -> None:
    assert url_problem(url) == why


@pytest.mark.parametrize("url", ["https://pay.example/checkout?id=7", "http://127.0.0.1:8000/cb"])
def test_ordinary_urls_pass(url: str) -> None:
    assert url_problem(url) is None


def url_server() -> Server:
    server = Server("s")

    @server.tool
    async def pay(ctx: Context, url: str) -> str:
        answer = await ctx.elicit_url("Pay here", url)
        return answer.action

    @server.tool
    async def broken_error() -> str:
        raise ProtocolError(-32042, "needs a URL", {"elicitations": [{"url": 7}, "x", None]})

    @server.tool
    async def legacy_url(url: str) -> str:
        raise UrlElicitationRequired([ElicitUrl("Pay here", url)])

    return server


@pytest.mark.anyio
async def test_an_unsafe_url_is_declined_without_reaching_the_callback() -> None:
    shown: list[str] = []

    async def show(asked: ElicitUrl) -> dict[str, Any]:
        shown.append(asked.url)
        return {"action": "accept"}

    async with Client(url_server(), mode=MODERN, on_elicit_url=show) as client:
        refused = await client.call_tool("pay", {"url": "javascript:alert(1)"})
        assert refused.content[0].text == "decline"  # type: ignore[union-attr]
        taken = await client.call_tool("pay", {"url": "https://pay.example/x"})
        assert taken.content[0].text == "accept"  # type: ignore[union-attr]
    assert shown == ["https://pay.example/x"]


@pytest.mark.anyio
async def test_malformed_url_elicitation_data_is_the_mcp_error_itself() -> None:
    shown: list[str] = []

    async def show(asked: ElicitUrl) -> dict[str, Any]:
        shown.append(asked.url)
        return {"action": "accept"}

    async with Client(url_server(), mode="2025-11-25", on_elicit_url=show) as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool("broken_error", {})
        assert caught.value.code == -32042
        with pytest.raises(McpError):
            await client.call_tool("legacy_url", {"url": "file:///etc/shadow"})
        with pytest.raises(McpError):
            await client.call_tool("legacy_url", {"url": "https://pay.example/ok"})
    assert shown == ["https://pay.example/ok"]
