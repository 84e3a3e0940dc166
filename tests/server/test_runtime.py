"""The runtime (mcpio) end to end, in one process: our client against our server over an
in-memory transport, and raw frames against the server, in both eras."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

import mcp_wire
from mcpio import (
    Client,
    ConnectionClosed,
    Context,
    McpError,
    NegotiationError,
    ProtocolError,
    RequestTimeout,
    Server,
    ToolError,
)
from mcpio.transports.memory import MemoryTransport, memory_pair
from tests.support import until

LEGACY = [r for r in mcp_wire.REVISIONS if mcp_wire.ERAS[r] == "legacy"]
MODERN = [r for r in mcp_wire.REVISIONS if mcp_wire.ERAS[r] == "modern"]
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN[-1],
    "io.modelcontextprotocol/clientCapabilities": {},
}


pytestmark = pytest.mark.anyio


def make_server() -> tuple[Server, dict[str, Any]]:
    server = Server("test-server", "1.2.3", instructions="be nice", mask_error_details=True)
    seen: dict[str, Any] = {"cancelled": anyio.Event(), "runs": 0}

    @server.tool()
    async def add(a: int, b: int) -> str:
        """Adds two integers."""
        return str(a + b)

    @server.tool()
    async def structured(name: str) -> dict[str, Any]:
        """Returns structured content."""
        return {"hello": name}

    @server.tool()
    async def fail() -> str:
        """Fails as a tool."""
        raise ToolError("it broke")

    @server.tool()
    async def crash() -> str:
        """Fails as a server bug."""
        raise RuntimeError("secret detail /etc/passwd")

    @server.tool()
    async def slow(ctx: Context, seconds: float) -> str:
        """Sleeps; records a cancellation."""
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            seen["cancelled"].set()
            raise
        return f"slept {seconds}"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks for a name, then a colour (two rounds)."""
        seen["runs"] += 1
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        name = await ctx.elicit("name?", schema)
        colour = await ctx.elicit("colour?", schema)
        return f"{(name.content or {}).get('name')}/{(colour.content or {}).get('name')}"

    @server.tool()
    async def progress(ctx: Context) -> str:
        """Reports progress and logs."""
        for step in (1, 2, 3):
            await ctx.progress(step, 3, f"step {step}")
        await ctx.log("debug", "quiet")
        await ctx.log("error", "loud")
        return "done"

    @server.tool()
    async def change() -> str:
        """Changes the tool list."""
        await server.notify_tools_changed()
        await server.notify_resource_updated("test://doc")
        return "changed"

    @server.resource("test://doc", mime_type="text/plain", description="a document")
    def doc() -> str:
        return "the document"

    @server.resource("test://bin", mime_type="application/octet-stream")
    def binary() -> bytes:
        return b"\x00\x01\x02"

    @server.resource_template("test://item/{id}", mime_type="application/json")
    def item(id: str) -> dict[str, str]:
        return {"id": id}

    @server.prompt(description="Greets someone")
    def greet(name: str, style: str = "plain") -> str:
        return f"Hello {name} ({style})"

    @server.completer()
    def complete(params: Any) -> list[str]:
        return [v for v in ("alpha", "beta", "alps") if v.startswith(params.argument.value)]

    return server, seen


async def accept(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": params.message.rstrip("?")}}


MODES = ["auto", "legacy", *mcp_wire.REVISIONS]


def expected_revision(mode: str) -> str:
    return {"auto": MODERN[-1], "legacy": LEGACY[-1]}.get(mode, mode)


@asynccontextmanager
async def connected(mode: str) -> AsyncIterator[Client]:
    """Our client on a fresh `make_server()` in `mode`, answering elicitations with `accept`."""
    server, _ = make_server()
    async with Client(server, mode=mode, elicitation=accept) as client:
        yield client


@pytest.fixture(scope="module", params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    """Each client mode, for the tests that share one client per mode."""
    return request.param


@pytest.fixture(scope="module")
async def client(mode: str, anyio_backend: str) -> AsyncIterator[Client]:
    """One client per mode on one `make_server()`, shared by the calls that change nothing."""
    async with connected(mode) as client:
        yield client


async def test_the_client_settles_on_the_mode_s_revision(client: Client, mode: str) -> None:
    assert client.revision == expected_revision(mode)


async def test_tools_list_with_their_description_and_required_arguments(client: Client) -> None:
    tools = await client.list_tools()
    assert [t.name for t in tools.tools][:3] == ["add", "structured", "fail"]
    add = tools.tools[0]
    assert add.description == "Adds two integers."
    assert add.inputSchema.model_dump(exclude_unset=True)["required"] == ["a", "b"]


async def test_a_tool_call_returns_the_tool_s_text(client: Client) -> None:
    result = await client.call_tool("add", {"a": 2, "b": 40})
    assert result.content[0].text == "42" and not result.isError  # type: ignore[union-attr]


async def test_structured_content_exists_from_2025_06_18_on(client: Client) -> None:
    result = await client.call_tool("structured", {"name": "x"})
    # Structured content exists from 2025-06-18 on; older revisions carry the text alone.
    has_structured = client.revision >= "2025-06-18"  # type: ignore[operator]
    assert result.content[0].text == '{"hello": "x"}'  # type: ignore[union-attr]
    assert result.structuredContent == ({"hello": "x"} if has_structured else None)


async def test_a_tool_error_is_a_failed_call(client: Client) -> None:
    result = await client.call_tool("fail", {})
    assert result.isError and result.content[0].text == "it broke"  # type: ignore[union-attr]


async def test_invalid_arguments_are_a_failed_call_naming_the_argument(client: Client) -> None:
    result = await client.call_tool("add", {"a": "not a number", "b": 1})
    assert result.isError and "invalid arguments for add: a" in result.content[0].text  # type: ignore[union-attr]


async def test_an_unknown_tool_is_invalid_params(client: Client) -> None:
    with pytest.raises(McpError) as caught:
        await client.call_tool("nope", {})
    assert caught.value.code == -32602


async def test_a_crashing_tool_is_a_failed_call_with_its_detail_masked(client: Client) -> None:
    # Any other exception is a failed call the model can read, its detail masked.
    crashed = await client.call_tool("crash", {})
    assert crashed.isError and crashed.content[0].text == "Error calling tool 'crash'"  # type: ignore[union-attr]


async def test_resources_and_templates_list(client: Client) -> None:
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    assert [r.uri for r in resources.resources] == ["test://doc", "test://bin"]
    assert templates.resourceTemplates[0].uriTemplate == "test://item/{id}"


async def test_resources_read_as_text_blob_and_from_a_template(client: Client) -> None:
    text = await client.read_resource("test://doc")
    blob = await client.read_resource("test://bin")
    templated = await client.read_resource("test://item/7")
    assert text.contents[0].text == "the document"  # type: ignore[union-attr]
    assert blob.contents[0].blob == "AAEC"  # type: ignore[union-attr]
    assert json.loads(templated.contents[0].text) == {"id": "7"}  # type: ignore[union-attr]


async def test_a_missing_resource_is_invalid_params_naming_the_uri(client: Client) -> None:
    with pytest.raises(McpError) as caught:
        await client.read_resource("test://missing")
    assert caught.value.code == -32602 and caught.value.data == {"uri": "test://missing"}


async def test_prompts_list_their_arguments_and_render(client: Client) -> None:
    prompts = await client.list_prompts()
    prompt = await client.get_prompt("greet", {"name": "Ann"})
    arguments = prompts.prompts[0].arguments or []
    assert [(a.name, a.required) for a in arguments] == [("name", True), ("style", False)]
    assert prompt.messages[0].content.text == "Hello Ann (plain)"  # type: ignore[union-attr]


async def test_a_prompt_missing_a_required_argument_is_invalid_params(client: Client) -> None:
    with pytest.raises(McpError) as caught:
        await client.get_prompt("greet", {})
    assert caught.value.code == -32602


@pytest.mark.parametrize("mode", [m for m in MODES if m != "2024-11-05"])
async def test_completion_offers_the_matching_values(mode: str) -> None:
    async with connected(mode) as client:
        done = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "al")
    assert done.completion.values == ["alpha", "alps"]


@pytest.mark.parametrize("mode", [m for m in MODES if m not in ("2024-11-05", "2025-03-26")])
async def test_a_tool_s_elicitations_are_answered(mode: str) -> None:
    async with connected(mode) as client:
        answered = await client.call_tool("ask", {})
    assert answered.content[0].text == "name/colour"  # type: ignore[union-attr]


async def test_server_identity_in_both_eras() -> None:
    server, _ = make_server()
    async with Client(server, mode="legacy") as client:
        assert client.server_info is not None and client.server_info.name == "test-server"
        assert client.instructions == "be nice"
        assert (
            client.server_capabilities is not None and client.server_capabilities.tools is not None
        )
    async with Client(server) as client:
        discovered = await client.discover()
        assert discovered.supportedVersions == list(reversed(MODERN))
        assert discovered.ttlMs == 0 and discovered.cacheScope == "private"
        assert discovered.meta is not None
        assert discovered.meta.io_modelcontextprotocol_serverInfo is not None
        assert discovered.meta.io_modelcontextprotocol_serverInfo.version == "1.2.3"


async def test_modern_input_rounds_rerun_the_handler() -> None:
    server, seen = make_server()
    async with Client(server, elicitation=accept) as client:
        result = await client.call_tool("ask", {})
    assert result.content[0].text == "name/colour"  # type: ignore[union-attr]
    assert seen["runs"] == 3  # asked, asked again, answered


async def test_legacy_inputs_are_real_requests() -> None:
    server, seen = make_server()
    asked: list[str] = []

    async def answer(params: Any) -> dict[str, Any]:
        asked.append(params.message)
        return await accept(params)

    async with Client(server, mode="legacy", elicitation=answer) as client:
        result = await client.call_tool("ask", {})
    assert result.content[0].text == "name/colour"  # type: ignore[union-attr]
    assert asked == ["name?", "colour?"] and seen["runs"] == 1


@pytest.mark.parametrize("mode", ["legacy", "auto", *mcp_wire.REVISIONS])
async def test_progress_and_log_levels(mode: str) -> None:
    server, _ = make_server()
    logs: list[str] = []
    steps: list[tuple[float, float | None, str | None]] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        steps.append((p, total, message))

    async with Client(server, mode=mode, on_log=lambda p: logs.append(p.data)) as client:
        await client.call_tool("progress", {}, progress=on_progress)
        with_message = client.revision != "2024-11-05"  # progress messages came in 2025-03-26
        assert steps == [(n, 3, f"step {n}" if with_message else None) for n in (1, 2, 3)]
        # A legacy session logs everything until told otherwise; a modern request nothing.
        assert logs == ([] if client.modern else ["quiet", "loud"])
        logs.clear()
        await client.set_log_level("warning")
        await client.call_tool("progress", {})
        assert logs == ["loud"]


async def test_many_requests_in_flight_out_of_order() -> None:
    server, _ = make_server()
    async with Client(server) as client:
        results: dict[int, str] = {}

        async def one(i: int) -> None:
            seconds = (7 * i % 10) / 200
            result = await client.call_tool("slow", {"seconds": seconds})
            results[i] = result.content[0].text  # type: ignore[union-attr]

        async with anyio.create_task_group() as tasks:
            for i in range(40):
                tasks.start_soon(one, i)
    assert results == {i: f"slept {(7 * i % 10) / 200}" for i in range(40)}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_timeout_cancels_on_the_wire(mode: str) -> None:
    server, seen = make_server()
    async with Client(server, mode=mode) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow", {"seconds": 30}, timeout=0.1)
        with anyio.fail_after(5):
            await seen["cancelled"].wait()
        assert (await client.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"  # type: ignore[union-attr]


async def test_each_request_times_out_at_its_own_deadline() -> None:
    """Timeouts of calls in flight together, set in any order, each end its own call only, and
    those within their time get their answer."""
    server, _ = make_server()
    outcomes: dict[str, str] = {}
    async with Client(server) as client:

        async def call(label: str, seconds: float, timeout: float) -> None:
            try:
                result = await client.call_tool("slow", {"seconds": seconds}, timeout=timeout)
                outcomes[label] = result.content[0].text  # type: ignore[union-attr]
            except RequestTimeout:
                outcomes[label] = "timed out"

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call, "long", 30, 1.5)
                tasks.start_soon(call, "answered", 0.05, 10)
                await until(lambda: "answered" in outcomes)
                tasks.start_soon(call, "short", 30, 0.2)
                await until(lambda: "short" in outcomes)
                assert "long" not in outcomes  # still waiting: only the short one expired
        assert outcomes == {"answered": "slept 0.05", "short": "timed out", "long": "timed out"}
        assert not client._session._deadlines  # type: ignore[union-attr]


async def test_cancelled_caller_cancels_the_handler() -> None:
    server, seen = make_server()
    async with Client(server) as client:
        with anyio.move_on_after(0.1):
            await client.call_tool("slow", {"seconds": 30})
        with anyio.fail_after(5):
            await seen["cancelled"].wait()


async def test_modern_listen() -> None:
    server, _ = make_server()
    async with Client(server) as client:
        async with client.listen(tools=True, prompts=True, resource_uris=["test://doc"]) as sub:
            assert sub.honoured == {
                "toolsListChanged": True,
                "promptsListChanged": True,
                "resourceSubscriptions": ["test://doc"],
            }
            async with client.listen(prompts=True) as quiet:
                await client.call_tool("change", {})
                with anyio.fail_after(5):
                    first = await sub.__anext__()
                    second = await sub.__anext__()
                with anyio.move_on_after(0.2):
                    await quiet.__anext__()
                    pytest.fail("a listener that asked only for prompts heard a tool change")
        assert first.method == "notifications/tools/list_changed"
        assert first.params.meta.io_modelcontextprotocol_subscriptionId == sub.id
        assert second.method == "notifications/resources/updated"
        assert second.params.uri == "test://doc"
        assert not server.hub.listeners  # ended with the block
        assert (await client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"  # type: ignore[union-attr]


async def test_legacy_listen_by_subscription() -> None:
    server, _ = make_server()
    async with Client(server, mode="legacy") as client:
        async with client.listen(tools=True, resource_uris=["test://doc"]) as sub:
            await client.call_tool("change", {})
            with anyio.fail_after(5):
                first = await sub.__anext__()
                second = await sub.__anext__()
    assert (first.method, second.method) == (
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    )


async def test_client_modes_and_errors() -> None:
    with pytest.raises(ValueError):
        Client(["true"], mode="1999-01-01")
    server, _ = make_server()
    async with Client(server, mode="2025-11-25") as client:
        assert client.revision == "2025-11-25"
        await client.ping()
    async with Client(server, mode="2026-07-28") as client:
        with pytest.raises(ProtocolError) as caught:
            await client.ping()  # refused locally: the revision has no ping
        assert caught.value.code == -32601 and not isinstance(caught.value, McpError)


# ---------------------------------------------------------------------- raw frames


@asynccontextmanager
async def raw_server(server: Server | None = None) -> AsyncIterator[RawPeer]:
    mine, theirs = memory_pair()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon((server or make_server()[0]).serve, theirs)
        yield RawPeer(mine)
        await mine.aclose()


class RawPeer:
    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport

    async def send(self, frame: Any) -> None:
        await self.transport.send(frame if isinstance(frame, bytes) else json.dumps(frame).encode())

    async def receive(self) -> Any:
        with anyio.fail_after(5):
            return json.loads(await self.transport.receive())

    async def call(self, frame: Any) -> Any:
        await self.send(frame)
        return await self.receive()


def modern(id: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": ENVELOPE, **params}}


def initialize(version: str) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


async def test_unreadable_frames_are_answered_without_id() -> None:
    async with raw_server() as peer:
        # Before any revision is chosen, the modern rule applies: the id is left out.
        answer = await peer.call(b"{not json")
        assert answer["error"]["code"] == -32700 and "id" not in answer
        answer = await peer.call(b"42")
        assert answer["error"]["code"] == -32600
        answer = await peer.call({"jsonrpc": "2.0", "id": None, "method": "tools/list"})
        assert answer["error"]["code"] == -32600
        # The server keeps serving.
        answer = await peer.call(modern(1, "tools/list"))
        assert answer["id"] == 1 and answer["result"]["resultType"] == "complete"
    async with raw_server() as peer:
        assert (await peer.call(initialize("2025-06-18")))["result"][
            "protocolVersion"
        ] == "2025-06-18"
        answer = await peer.call(b"[garbage")
        assert answer == {
            "jsonrpc": "2.0",
            "id": None,
            "error": answer["error"],
        }  # 2025-06-18: null


async def legacy_session(peer: RawPeer) -> dict[str, Any]:
    """Opens a legacy session on `peer` offering an unknown revision; the initialize result."""
    result = (await peer.call(initialize("2099-01-01")))["result"]
    await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return result


async def test_a_legacy_request_before_initialize_is_refused() -> None:
    async with raw_server() as peer:
        answer = await peer.call({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        pinged = await peer.call({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert answer["error"]["code"] == -32600 and "initialize" in answer["error"]["message"]
    assert pinged["error"]["code"] == -32600


async def test_initialize_with_an_unknown_revision_gets_the_latest_legacy_one_and_the_server() -> (
    None
):
    async with raw_server() as peer:
        result = (await peer.call(initialize("2099-01-01")))["result"]
    assert result["protocolVersion"] == LEGACY[-1]  # counter-offer
    assert result["serverInfo"] == {"name": "test-server", "version": "1.2.3"}
    assert set(result["capabilities"]) == {
        "logging",
        "tools",
        "resources",
        "prompts",
        "completions",
    }


async def test_an_initialized_legacy_session_answers_ping() -> None:
    async with raw_server() as peer:
        await legacy_session(peer)
        assert (await peer.call({"jsonrpc": "2.0", "id": 3, "method": "ping"}))["result"] == {}


async def test_a_second_initialize_is_refused() -> None:
    async with raw_server() as peer:
        await legacy_session(peer)
        again = await peer.call(initialize(LEGACY[-1]))
    assert again["error"]["code"] == -32600


async def test_a_modern_request_in_a_legacy_session_is_refused() -> None:
    async with raw_server() as peer:
        await legacy_session(peer)
        answer = await peer.call(modern(4, "tools/list"))
    assert answer["error"]["code"] == -32600 and "legacy session" in answer["error"]["message"]


async def test_2024_11_05_has_no_completions_capability() -> None:
    async with raw_server() as peer:
        result = (await peer.call(initialize("2024-11-05")))["result"]
    assert result["protocolVersion"] == "2024-11-05"
    assert "completions" not in result["capabilities"]  # not in that revision


async def test_modern_request_rules() -> None:
    async with raw_server() as peer:
        answer = await peer.call(modern(1, "tools/list"))
        assert answer["result"]["ttlMs"] == 0 and answer["result"]["cacheScope"] == "private"
        server_info = answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
        assert server_info == {"name": "test-server", "version": "1.2.3"}
        # Once a connection speaks the modern era, a request without its envelope is invalid params.
        answer = await peer.call({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        assert answer["id"] == 2 and answer["error"]["code"] == -32602
        unknown = dict(ENVELOPE, **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})
        frame = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": unknown}}
        answer = await peer.call(frame)
        assert answer["error"]["code"] == -32022
        assert answer["error"]["data"] == {
            "supported": list(reversed(MODERN)),
            "requested": "2099-01-01",
        }
        for method in ("ping", "logging/setLevel", "resources/subscribe", "nope/nope"):
            answer = await peer.call(modern(4, method))
            assert answer["id"] == 4 and answer["error"]["code"] == -32601, method
        answer = await peer.call(modern(5, "tools/call", name="ask", arguments={}))
        assert answer["error"]["code"] == -32021
        assert answer["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}
        # A notification is never answered: the next frame is the next request's answer.
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
        )
        assert (await peer.call(modern(6, "tools/list")))["id"] == 6


async def test_request_state_is_sealed() -> None:
    meta = dict(ENVELOPE, **{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})

    def call(id: int, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        params = {"_meta": meta, "name": "ask", "arguments": arguments, **extra}
        return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}

    answer_name = {"elicitation-0": {"action": "accept", "content": {"name": "Ann"}}}
    async with raw_server() as peer:
        first = (await peer.call(call(1, {})))["result"]
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == ["elicitation-0"]
        second = (await peer.call(call(2, {}, inputResponses=answer_name)))["result"]
        assert list(second["inputRequests"]) == ["elicitation-1"]
        state = second["requestState"]
        last = {"elicitation-1": {"action": "accept", "content": {"name": "red"}}}
        done = (await peer.call(call(3, {}, inputResponses=last, requestState=state)))["result"]
        assert done["content"][0]["text"] == "Ann/red"
        # Altered, replayed against other arguments, or from another server: refused.
        for id, frame in enumerate(
            [
                call(4, {}, inputResponses=last, requestState=state[:-2] + "AA"),
                call(5, {"other": 1}, inputResponses=last, requestState=state),
                call(6, {}, inputResponses=last, requestState="s1.e30.AAAA"),
            ],
            start=4,
        ):
            answer = await peer.call(frame)
            assert answer["id"] == id and answer["error"]["code"] == -32602
            assert "requestState" in answer["error"]["message"]
        # An answer that is not an ElicitResult is invalid params, not a crash.
        bad = await peer.call(call(7, {}, inputResponses={"elicitation-0": {"action": "maybe"}}))
        assert bad["error"]["code"] == -32602
        # Answers sealed in an earlier round stand: the retry cannot replace them.
        forged = {"elicitation-0": {"action": "accept", "content": {"name": "Eve"}}, **last}
        done = await peer.call(call(8, {}, inputResponses=forged, requestState=state))
        assert done["result"]["content"][0]["text"] == "Ann/red"
        # A MAC that is not even text of the MAC's alphabet: invalid params, never a crash.
        for id, mangled in enumerate([state[:-4] + "ÿé€😀", "é.é.é", "s1.é.AAAA"], 9):
            frame = call(id, {}, inputResponses=last, requestState=mangled)
            answer = await peer.call(frame)
            assert (
                answer["error"]["code"] == -32602 and "requestState" in answer["error"]["message"]
            )


async def test_expired_state_is_refused() -> None:
    server, _ = make_server()
    server.sealer.ttl = -1
    meta = dict(ENVELOPE, **{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
    params = {"_meta": meta, "name": "ask", "arguments": {}}
    async with raw_server(server) as peer:
        first = await peer.call(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        )
        retry = dict(params, requestState=first["result"]["requestState"])
        answer = await peer.call(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry}
        )
        assert answer["error"]["code"] == -32602 and "expired" in answer["error"]["message"]


async def test_batches_only_in_their_revision() -> None:
    async with raw_server() as peer:
        await peer.call(initialize("2025-03-26"))
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
            },
            initialize("2025-03-26") | {"id": 3},
        ]
        answers = {a["id"]: a for a in await peer.call(batch)}
        assert answers[1]["result"] == {}
        assert answers[2]["result"]["content"][0]["text"] == "3"
        assert answers[3]["error"]["code"] == -32600  # initialize must not be batched
    async with raw_server() as peer:
        await peer.call(initialize("2025-06-18"))
        answer = await peer.call([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
        assert answer["error"]["code"] == -32600 and answer["id"] is None


# ---------------------------------------------------------------------- negotiation


class FakePeer:
    """A scripted server: answers each request by method from a table (None: stay silent)."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.client_side, self.server_side = memory_pair()
        self.answers = answers
        self.methods: list[str] = []

    async def run(self) -> None:
        while True:
            try:
                frame = json.loads(await self.server_side.receive())
            except anyio.EndOfStream:
                return
            self.methods.append(frame["method"])
            answer = self.answers.get(frame["method"])
            if answer is not None and "id" in frame:
                await self.server_side.send(
                    json.dumps({"jsonrpc": "2.0", "id": frame["id"], **answer}).encode()
                )


INIT_OK = {
    "result": {
        "protocolVersion": LEGACY[-1],
        "capabilities": {},
        "serverInfo": {"name": "fake", "version": "0"},
    }
}


@pytest.mark.parametrize(
    "discover, expected",
    [
        ({"error": {"code": -32601, "message": "Method not found"}}, LEGACY[-1]),
        ({"error": {"code": -32602, "message": "Invalid params"}}, LEGACY[-1]),
        (None, LEGACY[-1]),  # silence: the probe times out
        (
            {
                "error": {
                    "code": -32022,
                    "message": "no",
                    "data": {"supported": ["2025-06-18"], "requested": "x"},
                }
            },
            LEGACY[-1],
        ),
    ],
)
async def test_auto_falls_back_to_legacy(discover: Any, expected: str) -> None:
    fake = FakePeer({"server/discover": discover, "initialize": INIT_OK})
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(fake.run)
        async with Client(fake.client_side, probe_timeout=0.3) as client:
            assert client.revision == expected and not client.modern
        tasks.cancel_scope.cancel()
    assert fake.methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


async def test_auto_probes_again_with_a_modern_revision_the_server_names() -> None:
    unsupported = {
        "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": [MODERN[-1]], "requested": "x"},
        }
    }
    discovered = {
        "result": {
            "supportedVersions": [MODERN[-1]],
            "capabilities": {},
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
        }
    }
    answers = iter([unsupported, discovered])
    fake = FakePeer({})
    fake.answers = _Sequence(answers)  # type: ignore[assignment]
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(fake.run)
        async with Client(fake.client_side) as client:
            assert client.revision == MODERN[-1] and client.modern
        tasks.cancel_scope.cancel()
    assert fake.methods == ["server/discover", "server/discover"]


class _Sequence(dict[str, Any]):
    """Answers every method with the next answer of a sequence."""

    def __init__(self, answers: Any) -> None:
        super().__init__()
        self._answers = answers

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return next(self._answers, default)


async def test_typed_error_data_reaches_the_caller_as_plain_data() -> None:
    server, _ = make_server()
    async with Client(server) as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool("ask", {})  # no elicitation capability declared
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {"elicitation": {}}}


async def test_auto_refuses_a_server_with_no_shared_revision() -> None:
    discovered = {
        "result": {
            "supportedVersions": ["2099-01-01"],
            "capabilities": {},
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
        }
    }
    fake = FakePeer({"server/discover": discovered})
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(fake.run)
        with pytest.raises(NegotiationError):
            async with Client(fake.client_side):
                pass
        tasks.cancel_scope.cancel()


async def test_exact_legacy_mode_refuses_a_counter_offer() -> None:
    fake = FakePeer({"initialize": INIT_OK})
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(fake.run)
        with pytest.raises(NegotiationError):
            async with Client(fake.client_side, mode="2025-06-18"):
                pass
        tasks.cancel_scope.cancel()


async def test_a_vanished_server_fails_pending_requests() -> None:
    fake = FakePeer({"initialize": INIT_OK})  # never answers tools/call
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(fake.run)
        async with Client(fake.client_side, mode="legacy") as client:

            async def vanish() -> None:
                await until(lambda: "tools/call" in fake.methods)  # the request is pending
                await fake.server_side.aclose()

            tasks.start_soon(vanish)
            with anyio.fail_after(5), pytest.raises(ConnectionClosed):
                await client.call_tool("anything", {})


def test_public_models_are_the_latest_revisions() -> None:
    from mcpio import latest

    assert latest.REVISION == mcp_wire.LATEST
    assert latest.public is mcp_wire.revision(mcp_wire.LATEST).models
