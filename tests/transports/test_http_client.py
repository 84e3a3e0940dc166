"""The client's Streamable HTTP transport (mcpio.transports.http_client) against real servers on
127.0.0.1, each on a port the OS chose:

1. the official Python SDK's server (`mcp==2.3.0`, tests/peers/http_sdk_server.py) in the modes
   auto (-> 2026-07-28), legacy (-> 2025-11-25) and 2025-06-18;
2. a 2024-11-05 HTTP+SSE server (tests/peers/http_legacy_sse_server.py): the fallback;
3. a server of odd and failing answers (tests/peers/http_quirks_server.py): every request is
   settled with a clear error, routing headers, legacy sessions, resumption, limits;

plus the header-value encoder, the x-mcp-header rules and the event-stream parser on their own.
Every test runs under a deadline, so a silent peer fails the test instead of hanging it.
"""

from __future__ import annotations

import base64
import json
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcpio import Client, McpError, RequestTimeout
from mcpio.transports._http_rules import encode_header_value, x_mcp_header_problem, x_mcp_headers
from mcpio.transports._sse import SseParser
from mcpio.transports.http_client import CONNECTION_FAILED, HttpTransport
from tests.support import ENVELOPE, MODERN, first, free_port, text_of, until
from tests.support.http_peers import Peer

LEGACY = "2025-11-25"
DEADLINE = 30  # seconds for one whole test
CALL_TIMEOUT = 10  # seconds for one request

pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------------- peers


@pytest.fixture(scope="module")
def cancel_log() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder) / "cancelled.txt"


@pytest.fixture(scope="module")
def sdk(cancel_log: Path) -> Iterator[Peer]:
    peer = Peer("http_sdk_server.py", "--cancel-log", str(cancel_log))
    yield peer
    peer.stop()


@pytest.fixture(scope="module")
def old_sse() -> Iterator[Peer]:
    peer = Peer("http_legacy_sse_server.py")
    yield peer
    peer.stop()


@pytest.fixture(scope="module")
def quirks() -> Iterator[Peer]:
    peer = Peer("http_quirks_server.py")
    yield peer
    peer.stop()


class Elicitation:
    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def __call__(self, params: Any) -> dict[str, Any]:
        self.asked.append(params)
        return {"action": "accept", "content": {"name": "Alice"}}


def b64(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


# ---------------------------------------------------------------------- units


def test_header_values_plain_or_base64() -> None:
    assert encode_header_value("tools/call") == "tools/call"
    assert encode_header_value("a b ~!") == "a b ~!"
    assert encode_header_value("") == ""
    for value in (
        "grüße",
        " eu",
        "eu ",
        "a\tb",
        "line\nbreak",
        "nul\x00",
        "del\x7f",
        "=?base64?x?=",
    ):
        encoded = encode_header_value(value)
        assert encoded.startswith("=?base64?") and encoded.endswith("?=")
        assert base64.b64decode(encoded[9:-2]).decode() == value
        assert encoded.isascii()
    assert encode_header_value("grüße") == "=?base64?Z3LDvMOfZQ==?="
    # Only a whole-value lookalike is encoded.
    assert encode_header_value("=?base64?") == "=?base64?"


def test_x_mcp_header_rules() -> None:
    good = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "deep": {
                "type": "object",
                "properties": {"on": {"type": "boolean", "x-mcp-header": "On"}},
            },
            "other": {"type": "string", "default": {"x-mcp-header": "NotASchema"}},
        },
    }
    assert x_mcp_header_problem(good) is None
    assert sorted(x_mcp_headers(good)) == [
        ("Mcp-Param-N", ("n",)),
        ("Mcp-Param-On", ("deep", "on")),
        ("Mcp-Param-Region", ("region",)),
    ]
    assert x_mcp_header_problem(None) is None
    assert x_mcp_headers({"type": "object"}) == []

    def one(prop: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {"p": prop}}

    bad = [
        one({"type": "number", "x-mcp-header": "P"}),
        one({"type": ["string", "null"], "x-mcp-header": "P"}),
        one({"type": "string", "x-mcp-header": ""}),
        one({"type": "string", "x-mcp-header": "has space"}),
        one({"type": "string", "x-mcp-header": "cr\r\nlf"}),
        one({"type": "string", "x-mcp-header": 7}),
        one({"type": "array", "items": {"type": "string", "x-mcp-header": "P"}}),
        one({"anyOf": [{"type": "string", "x-mcp-header": "P"}]}),
        {"type": "string", "x-mcp-header": "Root"},
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Same"},
                "b": {"type": "string", "x-mcp-header": "SAME"},
            },
        },
        {"$defs": {"d": {"type": "string", "x-mcp-header": "P"}}},
    ]
    for schema in bad:
        assert x_mcp_header_problem(schema) is not None, schema


def test_event_stream_parser() -> None:
    parser = SseParser()
    stream = (
        b"\xef\xbb\xbf: a comment, then a keep-alive\r\n\r\n"
        b'event: message\r\ndata: {"a":1}\r\n\r\n'
        b"data:first\ndata: second\n\n"
        b"id: 7\nretry: 250\ndata:\n\n"  # a priming event: empty data
        b"id: 8\n\n"  # no data: not dispatched, the id still counts
        b"event: endpoint\rdata: /messages?x=1\r\r"
        b"field-without-colon\ndata: x\n\n"
        b"data: unfinished"
    )
    events = []
    for size in (1, 2, 3, 7, len(stream)):  # every split, CRLF across chunks included
        parser = SseParser()
        events = []
        for start in range(0, len(stream), size):
            events.extend(parser.feed(stream[start : start + size]))
        assert [(e.event, e.data, e.id) for e in events] == [
            ("message", '{"a":1}', None),
            ("message", "first\nsecond", None),
            ("message", "", "7"),
            ("endpoint", "/messages?x=1", "8"),
            ("message", "x", "8"),
        ], size
        assert parser.last_event_id == "8"
        assert parser.retry == 0.25

    small = SseParser(max_bytes=10)
    out = small.feed(b"data: 0123456789abc\n\ndata: ok\n\n")
    assert [(e.too_large, e.data) for e in out] == [(True, ""), (False, "ok")]
    out = small.feed(b"data: " + b"y" * 50 + b"\n\ndata: fine\n\n")  # one line past the limit
    assert [(e.too_large, e.data) for e in out] == [(True, ""), (False, "fine")]
    out = small.feed(b"data: 12345\ndata: 67890\n\n")  # lines each fit, the event does not
    assert [e.too_large for e in out] == [True]


async def test_receive_ends_after_aclose(quirks: Peer) -> None:
    with anyio.fail_after(DEADLINE):
        async with HttpTransport(quirks.url("/echo")) as transport:
            await transport.aclose()
            with pytest.raises(anyio.EndOfStream):
                await transport.receive()
            with pytest.raises(anyio.ClosedResourceError):
                await transport.send(b"{}")
            await transport.aclose()  # twice is fine
    with pytest.raises(ValueError):
        HttpTransport("ftp://127.0.0.1/mcp")


# ---------------------------------------------------------------------- 1. the SDK server


@asynccontextmanager
async def over_http(
    sdk: Peer, mode: str, elicitation: Elicitation | None = None
) -> AsyncIterator[Client]:
    """Our client connected to the SDK server in `mode`, the whole block under the deadline
    (the server is the module's; a connection of its own per test is a handshake away)."""
    with anyio.fail_after(DEADLINE):
        async with Client(
            sdk.url("/mcp"), mode=mode, elicitation=elicitation, timeout=CALL_TIMEOUT
        ) as client:
            yield client


SDK_MODES = pytest.mark.parametrize("mode", ["auto", "legacy", "2025-06-18"])


@pytest.mark.peers
@pytest.mark.parametrize(
    ("mode", "revision"), [("auto", MODERN), ("legacy", LEGACY), ("2025-06-18", "2025-06-18")]
)
async def test_our_client_over_http_negotiates_the_revision_of_its_mode(
    sdk: Peer, mode: str, revision: str
) -> None:
    async with over_http(sdk, mode) as client:
        assert client.revision == revision
        assert client.modern is (revision == MODERN)


@pytest.mark.peers
@SDK_MODES
async def test_our_client_over_http_learns_the_sdk_server_info(sdk: Peer, mode: str) -> None:
    async with over_http(sdk, mode) as client:
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == (
            "mcpgen-http-sdk-peer",
            "2.3.0",
        )


@pytest.mark.peers
@SDK_MODES
async def test_our_client_over_http_lists_the_sdk_tools(sdk: Peer, mode: str) -> None:
    async with over_http(sdk, mode) as client:
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == ["echo", "greet", "count", "route", "grüße", "slow", "bump"]


@pytest.mark.peers
@SDK_MODES
async def test_our_client_over_http_gets_a_structured_result(sdk: Peer, mode: str) -> None:
    async with over_http(sdk, mode) as client:
        echoed = await client.call_tool("echo", {"text": "hi"})
    assert text_of(echoed) == "echo: hi"
    assert echoed.structuredContent == {"result": "echo: hi"}


@pytest.mark.peers
@SDK_MODES
async def test_our_client_over_http_answers_the_sdk_elicitation(sdk: Peer, mode: str) -> None:
    # input_required round on 2026-07-28, a live elicitation/create (answered by a POST of our
    # response) on a legacy session.
    elicitation = Elicitation()
    async with over_http(sdk, mode, elicitation) as client:
        greeted = await client.call_tool("greet", {})
    assert text_of(greeted) == "Hello, Alice!"
    assert [asked.message for asked in elicitation.asked] == ["What is your name?"]


@pytest.mark.peers
@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2025-06-18: test_progress_on_2025_06_18
async def test_our_client_over_http_receives_the_sdk_progress(sdk: Peer, mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with over_http(sdk, mode) as client:
        counted = await client.call_tool(
            "count", {"steps": 3}, progress=lambda p, t, m: seen.append((p, t, m))
        )
    assert text_of(counted) == "counted 3"
    assert seen == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]


@pytest.mark.peers
@SDK_MODES
async def test_our_client_over_http_reads_the_sdk_resource(sdk: Peer, mode: str) -> None:
    async with over_http(sdk, mode) as client:
        read = await client.read_resource("peer://greeting")
    assert [(c.uri, getattr(c, "text", None)) for c in read.contents] == [
        ("peer://greeting", "hello from the HTTP SDK peer")
    ]


@pytest.mark.peers
@SDK_MODES
async def test_our_client_over_http_gets_the_sdk_prompt(sdk: Peer, mode: str) -> None:
    async with over_http(sdk, mode) as client:
        prompt = await client.get_prompt("intro", {"topic": "MCP"})
    assert [(m.role, text_of(m)) for m in prompt.messages] == [("user", "Tell me about MCP.")]


@pytest.mark.peers
@SDK_MODES
async def test_our_client_over_http_sends_non_ascii_names(sdk: Peer, mode: str) -> None:
    # On 2026-07-28 the SDK compares the base64-encoded Mcp-Name with the body and answers
    # -32020 on a mismatch, so an answer proves the header.
    async with over_http(sdk, mode) as client:
        assert text_of(await client.call_tool("grüße", {"text": "x"})) == "grüße, x"
        item = await client.read_resource("peer://items/café")
        overview = await client.get_prompt("überblick", {"topic": "t"})
    assert [(c.uri, getattr(c, "text", None)) for c in item.contents] == [
        ("peer://items/café", "item café")
    ]
    assert text_of(overview.messages[0]) == "Überblick: t"


@pytest.mark.peers
@SDK_MODES
async def test_our_client_over_http_sends_the_param_headers_the_tool_declares(
    sdk: Peer, mode: str
) -> None:
    # Mcp-Param-Region and -Shard, learned from tools/list (checked by the SDK).
    async with over_http(sdk, mode) as client:
        await client.list_tools()
        routed = await client.call_tool("route", {"region": "eu-west", "shard": 3, "text": "x"})
        assert text_of(routed) == "routed 'x' to eu-west/3"
        routed = await client.call_tool("route", {"region": " ünïcode ", "text": "y"})
        assert text_of(routed) == "routed 'y' to  ünïcode /0"


@pytest.mark.peers
async def test_our_client_over_http_hears_the_sdk_tool_list_change_through_listen(
    sdk: Peer,
) -> None:
    async with over_http(sdk, "auto") as client:  # 2026-07-28: subscriptions/listen exists
        async with client.listen(tools=True) as subscription:
            assert subscription.honoured == {"toolsListChanged": True}
            assert text_of(await client.call_tool("bump", {})) == "bumped"
            with anyio.fail_after(5):
                notice = await first(subscription)
            assert notice.method == "notifications/tools/list_changed"
            assert notice.params.meta.io_modelcontextprotocol_subscriptionId == subscription.id
        # The listen POST was closed on leaving; the client goes on working.
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "echo: after"


@pytest.mark.peers
async def test_progress_on_2025_06_18(sdk: Peer) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(sdk.url("/mcp"), mode="2025-06-18", timeout=CALL_TIMEOUT) as client:
            seen: list[tuple[float, float | None, str | None]] = []
            await client.call_tool(
                "count", {"steps": 2}, progress=lambda p, t, m: seen.append((p, t, m))
            )
            assert seen == [(1, 2, "step 1 of 2"), (2, 2, "step 2 of 2")]


@pytest.mark.peers
async def test_sdk_server_checks_the_param_header_we_send(sdk: Peer) -> None:
    """The control for the Mcp-Param test above: without the header the SDK refuses the call."""
    frame = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "route", "arguments": {"region": "eu"}, "_meta": ENVELOPE},
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "route",
    }
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient() as http:
            refused = await http.post(sdk.url("/mcp"), json=frame, headers=headers)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == -32020
            frame["params"]["name"] = "grüße"
            frame["params"]["arguments"] = {"text": "x"}
            headers["Mcp-Name"] = "grusse"
            refused = await http.post(sdk.url("/mcp"), json=frame, headers=headers)
            assert refused.json()["error"]["code"] == -32020
            headers["Mcp-Name"] = b64("grüße")
            accepted = await http.post(sdk.url("/mcp"), json=frame, headers=headers)
            assert accepted.status_code == 200


@pytest.mark.peers
@pytest.mark.parametrize("mode", ["auto", "legacy", "2025-06-18"])
async def test_a_timeout_closes_the_request_on_the_server(
    sdk: Peer, cancel_log: Path, mode: str
) -> None:
    label = f"timeout-{mode}"
    with anyio.fail_after(DEADLINE):
        async with Client(sdk.url("/mcp"), mode=mode, timeout=CALL_TIMEOUT) as client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                await client.call_tool("slow", {"label": label}, timeout=0.5)
            assert time.monotonic() - started < 5

            # modern: the POST was closed; legacy: notifications/cancelled was POSTed.
            def cancelled() -> bool:
                return cancel_log.exists() and f"cancelled {label}" in cancel_log.read_text()

            await until(cancelled, DEADLINE, interval=0.05)
            assert text_of(await client.call_tool("echo", {"text": "still"})) == "echo: still"


@pytest.mark.parametrize("mode", ["auto", "legacy", MODERN])
async def test_refused_connection_is_a_clear_error(mode: str) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with anyio.fail_after(DEADLINE):
        if mode == MODERN:  # no handshake: the first request fails
            async with Client(url, mode=mode, timeout=CALL_TIMEOUT) as client:
                with pytest.raises(McpError) as failed:
                    await client.list_tools()
        else:
            with pytest.raises(McpError) as failed:
                async with Client(url, mode=mode, timeout=CALL_TIMEOUT):
                    pass
    assert failed.value.code == CONNECTION_FAILED
    assert failed.value.message.startswith("HTTP request failed: ConnectError")
    assert "Traceback" not in failed.value.message and "\n" not in failed.value.message


@pytest.mark.peers
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_path_that_404s(sdk: Peer, mode: str) -> None:
    with anyio.fail_after(DEADLINE):
        with pytest.raises(McpError) as failed:
            async with Client(sdk.url("/nope"), mode=mode, timeout=CALL_TIMEOUT):
                pass
    # server/discover and initialize get 404 (auto falls back); the SSE probe GET does too.
    assert (failed.value.code, failed.value.message) == (-32601, "HTTP 404: Not Found")
    assert failed.value.data == {"status": 404}


# ---------------------------------------------------------------------- 2. 2024-11-05 HTTP+SSE


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_fallback_to_the_2024_11_05_sse_transport(old_sse: Peer, mode: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(old_sse.url("/sse"), mode=mode, timeout=CALL_TIMEOUT) as client:
            assert client.revision == "2024-11-05"
            assert client.server_info is not None
            assert client.server_info.name == "old-sse-server"
            assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
            results = []

            async def call(text: str) -> None:
                results.append(text_of(await client.call_tool("echo", {"text": text})))

            async with anyio.create_task_group() as tasks:  # answers correlated on one stream
                for n in range(5):
                    tasks.start_soon(call, f"t{n}")
            assert sorted(results) == [f"old echo: t{n}" for n in range(5)]
            with pytest.raises(McpError) as failed:
                await client.list_prompts()
            assert failed.value.code == -32601


# ---------------------------------------------------------------------- 3. odd answers


@pytest.mark.parametrize(
    ("path", "code", "message", "data"),
    [
        ("/text", -32603, "HTTP 200: unexpected content type 'text/plain'", {"status": 200}),
        ("/not-json", -32603, "the server's answer is not JSON", None),
        ("/error-noid", -32042, "custom refusal", {"why": "a test"}),
        ("/error-bare", -32099, "overloaded", None),
        ("/plain-500", -32603, "HTTP 500: Internal Server Error", {"status": 500}),
        (
            "/accepted",
            -32600,
            "the server answered a request with 202 Accepted: no response will come",
            {"status": 202},
        ),
        (
            "/sse-early-end",
            CONNECTION_FAILED,
            "the server ended the exchange without a response",
            None,
        ),
        ("/redirect-loop", -32600, None, {"status": 307}),
    ],
)
async def test_every_failure_settles_its_request(
    quirks: Peer, path: str, code: int, message: str | None, data: Any
) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(quirks.url(path), mode=MODERN, timeout=CALL_TIMEOUT) as client:
            with pytest.raises(McpError) as failed:
                await client.call_tool("anything", {}, progress=lambda *_: None)
            # the connection is still usable: the next request fails the same way
            with pytest.raises(McpError):
                await client.list_tools()
    assert failed.value.code == code
    if message is not None:
        assert failed.value.message == message
    assert failed.value.data == data


async def test_redirects_only_within_the_origin(quirks: Peer) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(
            quirks.url("/redirect-same"), mode=MODERN, timeout=CALL_TIMEOUT
        ) as client:
            assert (await client.list_tools()).tools  # followed to /echo
        async with Client(
            quirks.url("/redirect-away"), mode=MODERN, timeout=CALL_TIMEOUT
        ) as client:
            with pytest.raises(McpError) as failed:
                await client.list_tools()
    assert failed.value.code == -32600
    assert failed.value.message == (
        f"HTTP 307: Temporary Redirect; the redirect to http://localhost:{quirks.port}/echo "
        "was not followed"
    )


@pytest.mark.parametrize("path", ["/huge-json", "/huge-sse"])
async def test_answers_past_the_size_limit(quirks: Peer, path: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with HttpTransport(quirks.url(path), max_bytes=1000) as transport:
            async with Client(transport, mode=MODERN, timeout=CALL_TIMEOUT) as client:
                with pytest.raises(McpError) as failed:
                    await client.call_tool("big", {})
    assert failed.value.code == -32600
    assert failed.value.message == "the server's message exceeds the 1000-byte limit"


async def test_routing_headers_and_invalid_annotations(quirks: Peer) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(quirks.url("/echo"), mode=MODERN, timeout=CALL_TIMEOUT) as client:
            # Tools whose x-mcp-header annotations break the rules are dropped from the view.
            assert [t.name for t in (await client.list_tools()).tools] == ["headers"]

            async def seen(arguments: dict[str, Any], name: str = "headers") -> dict[str, str]:
                return json.loads(text_of(await client.call_tool(name, arguments)))

            common = {
                "mcp-method": "tools/call",
                "mcp-protocol-version": MODERN,
            }
            got = await seen(
                {"region": "eu", "flag": True, "count": 42, "deep": {"leaf": "ü"}, "plain": "p"}
            )
            assert got == {
                **common,
                "mcp-name": "headers",
                "mcp-param-region": "eu",
                "mcp-param-flag": "true",
                "mcp-param-count": "42",
                "mcp-param-leaf": b64("ü"),
            }
            got = await seen({"region": " padded", "flag": False, "count": None})
            assert got == {
                **common,
                "mcp-name": "headers",
                "mcp-param-region": b64(" padded"),
                "mcp-param-flag": "false",
            }
            got = await seen({"region": "=?base64?abc?="})
            assert got == {
                **common,
                "mcp-name": "headers",
                "mcp-param-region": b64("=?base64?abc?="),
            }
            # The map is by tool name: another tool's arguments are not mirrored.
            got = await seen({"region": "eu"}, name="=?base64?x?=")
            assert got == {**common, "mcp-name": b64("=?base64?x?=")}
            assert await seen({"region": "eu"}, name="bad-number") == {
                **common,
                "mcp-name": "bad-number",
            }


async def test_legacy_session_headers_get_stream_and_delete(quirks: Peer) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient() as http:

            async def seen() -> list[dict[str, Any]]:
                return (await http.get(quirks.url("/log/plain"))).json()

            async def get_attempted() -> bool:
                return any(entry["http"] == "GET" for entry in await seen())

            async with Client(quirks.url("/legacy/plain"), mode="2025-06-18") as client:
                assert client.revision == "2025-06-18"
                assert text_of(await client.call_tool("x", {})) == "called x"
                # The GET stream attempt runs in the background: until the server has it.
                await until(get_attempted, DEADLINE, interval=0.05)
            log = await seen()
    session = "plain-session-1"
    assert [(e["http"], e.get("rpc"), e["session"], e["version"]) for e in log] == [
        ("POST", "initialize", None, None),
        ("POST", "notifications/initialized", session, "2025-06-18"),
        ("GET", None, session, "2025-06-18"),  # 405: no server stream, fine
        ("POST", "tools/call", session, "2025-06-18"),
        ("DELETE", None, session, "2025-06-18"),
    ]


async def test_legacy_2025_03_26_sends_no_version_header(quirks: Peer) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(quirks.url("/legacy/old"), mode="2025-03-26") as client:
            assert text_of(await client.call_tool("x", {})) == "called x"
        async with httpx.AsyncClient() as http:
            log = (await http.get(quirks.url("/log/old"))).json()
    assert {e["version"] for e in log} == {None}
    assert {e["session"] for e in log[1:]} == {"old-session-1"}


async def test_legacy_stream_resumed_with_last_event_id(quirks: Peer) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(quirks.url("/legacy/resume"), mode="legacy") as client:
            assert text_of(await client.call_tool("resume", {})) == "resumed"
        async with httpx.AsyncClient() as http:
            log = (await http.get(quirks.url("/log/resume"))).json()
    assert ("POST", "tools/call") in [(e["http"], e.get("rpc")) for e in log]
    assert [e["http"] for e in log].count("GET") == 2  # the server stream (405), the resumption


async def test_expired_session(quirks: Peer) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(quirks.url("/legacy/expiry"), mode="legacy") as client:
            assert (await client.list_tools()).tools == []
            with pytest.raises(McpError) as failed:
                await client.call_tool("expire", {})
            with pytest.raises(McpError) as again:
                await client.list_tools()
    for error in (failed.value, again.value):
        assert error.code == -32600
        assert error.message == (
            "the session expired (HTTP 404: Not Found); a new connection starts a new one"
        )
        assert error.data == {"status": 404, "sessionExpired": True}


async def test_auto_falls_back_when_a_legacy_server_refuses_discover(quirks: Peer) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(quirks.url("/legacy/auto"), mode="auto") as client:
            assert client.revision == LEGACY
            assert text_of(await client.call_tool("x", {})) == "called x"
        async with httpx.AsyncClient() as http:
            log = (await http.get(quirks.url("/log/auto"))).json()
    # server/discover got 404 + a JSON-RPC error (no session): any error means "legacy".
    assert [(e["http"], e.get("rpc"), e["version"]) for e in log][:2] == [
        ("POST", "server/discover", MODERN),
        ("POST", "initialize", None),
    ]


@pytest.mark.anyio
async def test_an_injected_httpx_client_carries_every_request_and_stays_open() -> None:
    """`Client(url, http=...)`: the transport sends through the given httpx client (here one
    whose transport is the server's ASGI app, in process), and leaves it open."""
    from mcpio import Server

    server = Server("injected")

    @server.tool()
    async def echo(text: str) -> str:
        """Echoes."""
        return text

    sent: list[str] = []

    async def record(request: httpx.Request) -> None:
        sent.append(request.headers.get("mcp-method", request.method))

    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.http_app()), event_hooks={"request": [record]}
    )
    async with http:
        with anyio.fail_after(10):
            async with Client("http://127.0.0.1/mcp", mode="2026-07-28", http=http) as client:
                result = await client.call_tool("echo", {"text": "through the mock"})
        assert result.content[0].text == "through the mock"  # type: ignore[union-attr]
        assert "tools/call" in sent
        assert not http.is_closed


# ---------------------------------------------------------------------- in the caller's task


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_request_carried_in_the_caller_s_task_still_times_out_and_is_cancelled(
    mode: str,
) -> None:
    """A session's request is carried in its caller's task (no task per request, issue 37):
    a timeout still ends it at once, the server's handler is cancelled (modern: its POST
    closed; legacy: notifications/cancelled), a caller's own cancellation ends it too, and the
    connection goes on serving."""
    from mcpio import Server
    from tests.support import serve_app

    server = Server("slow", "1.0")
    cancelled: list[str] = []

    @server.tool()
    async def slow(label: str) -> str:
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.append(label)
            raise
        return label

    @server.tool()
    async def echo(text: str) -> str:
        return text

    async with serve_app(server.http_app()) as served:
        with anyio.fail_after(DEADLINE):
            async with Client(f"{served.url}/mcp", mode=mode, timeout=CALL_TIMEOUT) as client:
                started = time.monotonic()
                with pytest.raises(RequestTimeout):
                    await client.call_tool("slow", {"label": "timed out"}, timeout=0.3)
                assert time.monotonic() - started < 3
                with anyio.move_on_after(0.3):  # the caller's own cancellation
                    await client.call_tool("slow", {"label": "moved on"})
                await until(lambda: len(cancelled) == 2, DEADLINE, interval=0.05)
                assert sorted(cancelled) == ["moved on", "timed out"]
                answers = [await client.call_tool("echo", {"text": str(n)}) for n in range(3)]
                assert [text_of(a) for a in answers] == ["0", "1", "2"]
