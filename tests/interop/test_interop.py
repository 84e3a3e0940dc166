"""Interop with real peers over stdio (local pipes only), in both eras.

1. The official Python SDK's client (`mcp==2.3.0`) against our fixture server,
   examples/everything_server.py, in the modes auto, legacy and 2026-07-28.
2. Our `mcpio.Client` against a server written with that SDK (tests/peers/sdk_server.py).
3. Our `mcpio.Client` against the npm reference server `@modelcontextprotocol/server-everything`
   (legacy era only), pinned in tests/peers/package.json + package-lock.json and installed by
   the `npm_peers` fixture (tests/conftest.py) when node_modules is missing or out of date.

Every test runs under a deadline, so a silent peer fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.shared.subscriptions import ToolsListChanged
from mcp.types import ElicitRequestParams, ElicitResult

from mcpio import Client, McpError
from tests.support import PEERS, ROOT, first, text_of

FIXTURE_SERVER = [sys.executable, str(ROOT / "examples" / "everything_server.py"), "stdio"]
SDK_SERVER = [sys.executable, str(PEERS / "sdk_server.py")]
EVERYTHING = "@modelcontextprotocol/server-everything"
EVERYTHING_DIR = PEERS / "node_modules" / EVERYTHING

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
DEADLINE = 30  # seconds for one whole test: spawn, handshake and every call
CALL_TIMEOUT = 10  # seconds for one request

pytestmark = [pytest.mark.anyio, pytest.mark.peers]


# ---------------------------------------------------------------------- 1. SDK client -> our server


def sdk_params() -> StdioServerParameters:
    return StdioServerParameters(command=FIXTURE_SERVER[0], args=FIXTURE_SERVER[1:])


class SdkElicitation:
    """The SDK client's elicitation callback: records what it was asked, accepts."""

    def __init__(self) -> None:
        self.asked: list[ElicitRequestParams] = []

    async def __call__(
        self, ctx: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        self.asked.append(params)
        properties = set(getattr(params, "requested_schema", {}).get("properties", {}))
        if properties == {"username", "email"}:
            content = {"username": "alice", "email": "alice@example.com"}
            return ElicitResult(action="accept", content=content)
        return ElicitResult(action="accept", content={"name": "Alice"})


@pytest.mark.parametrize(
    ("mode", "revision"), [("auto", MODERN), ("legacy", LEGACY), (MODERN, MODERN)]
)
async def test_sdk_client_against_our_server(mode: str, revision: str) -> None:
    elicitation = SdkElicitation()
    with anyio.fail_after(DEADLINE):
        async with SdkClient(
            sdk_params(),
            mode=mode,
            elicitation_callback=elicitation,
            read_timeout_seconds=CALL_TIMEOUT,
        ) as client:
            assert client.protocol_version == revision
            if mode == MODERN:
                assert client.server_info is None  # an explicit revision skips the probe
            else:
                assert client.server_info is not None
                assert client.server_info.name == "mcp-conformance-test-server"
                assert client.server_info.version == "1.0.0"

            names = [tool.name for tool in (await client.list_tools()).tools]
            for name in (
                "test_simple_text",
                "test_tool_with_progress",
                "test_error_handling",
                "test_elicitation",
                "test_input_required_result_elicitation",
                "test_trigger_tool_change",
            ):
                assert name in names

            simple = await client.call_tool("test_simple_text", {})
            assert text_of(simple) == "This is a simple text response for testing."
            assert not simple.is_error

            failed = await client.call_tool("test_error_handling", {})
            assert failed.is_error
            assert text_of(failed) == "This tool intentionally returns an error for testing"

            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                seen.append((progress, total, message))

            progressed = await client.call_tool(
                "test_tool_with_progress", {}, progress_callback=on_progress
            )
            assert seen == [
                (0, 100, "Completed step 0 of 100"),
                (50, 100, "Completed step 50 of 100"),
                (100, 100, "Completed step 100 of 100"),
            ]
            assert text_of(progressed).isdigit()  # the SDK's progress token, echoed back

            static = await client.read_resource("test://static-text")
            assert len(static.contents) == 1
            assert static.contents[0].uri == "test://static-text"
            assert static.contents[0].mime_type == "text/plain"
            assert static.contents[0].text == "This is the content of the static text resource."

            templated = await client.read_resource("test://template/42/data")
            assert templated.contents[0].uri == "test://template/42/data"
            assert json.loads(templated.contents[0].text) == {
                "id": "42",
                "templateTest": True,
                "data": "Data for ID: 42",
            }

            prompt = await client.get_prompt(
                "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
            )
            assert len(prompt.messages) == 1
            assert prompt.messages[0].role == "user"
            assert text_of(prompt.messages[0]) == "Prompt with arguments: arg1='a', arg2='b'"

            # The same handler: an input_required round on 2026-07-28, a live request on legacy.
            greeted = await client.call_tool("test_input_required_result_elicitation", {})
            assert text_of(greeted) == "Hello, Alice!"
            assert [params.message for params in elicitation.asked] == ["What is your name?"]
            assert elicitation.asked[0].requested_schema["required"] == ["name"]

            if mode == "legacy":
                answered = await client.call_tool("test_elicitation", {"message": "Who are you?"})
                assert text_of(answered) == (
                    "User response: action=accept, "
                    'content={"username": "alice", "email": "alice@example.com"}'
                )
                assert elicitation.asked[-1].message == "Who are you?"
                return

            async with client.listen(tools_list_changed=True) as subscription:  # waits for the ack
                assert subscription.honored.tools_list_changed is True
                changed = await client.call_tool("test_trigger_tool_change", {})
                assert text_of(changed) == "tool list changed"
                with anyio.fail_after(5):
                    event = await first(subscription)
                assert isinstance(event, ToolsListChanged)


# ---------------------------------------------------------------------- 2. our client -> SDK server


class Elicitation:
    """Our client's elicitation callback: records what it was asked, accepts with a name."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def __call__(self, params: Any) -> dict[str, Any]:
        self.asked.append(params)
        return {"action": "accept", "content": {"name": "Alice"}}


@pytest.mark.parametrize(
    ("mode", "revision"), [("auto", MODERN), ("legacy", LEGACY), (MODERN, MODERN)]
)
async def test_our_client_against_sdk_server(mode: str, revision: str) -> None:
    elicitation = Elicitation()
    with anyio.fail_after(DEADLINE):
        async with Client(
            SDK_SERVER, mode=mode, elicitation=elicitation, timeout=CALL_TIMEOUT
        ) as client:
            assert client.revision == revision
            assert client.modern is (revision == MODERN)
            if mode == MODERN:
                assert client.server_info is None  # no probe, no initialize
            else:
                assert client.server_info is not None
                assert (client.server_info.name, client.server_info.version) == (
                    "mcpgen-sdk-peer",
                    "2.3.0",
                )
                assert client.instructions == "An interop peer for mcpgen's tests."
                assert client.server_capabilities is not None
                assert client.server_capabilities.completions is not None
                # The SDK serves list changes through subscriptions/listen only (2026-07-28).
                assert client.server_capabilities.tools is not None
                assert client.server_capabilities.tools.listChanged is client.modern

            tools = (await client.list_tools()).tools
            assert [tool.name for tool in tools] == ["echo", "greet", "count", "bump"]
            echo = tools[0]
            assert echo.inputSchema.required == ["text"]

            echoed = await client.call_tool("echo", {"text": "hi"})
            assert text_of(echoed) == "echo: hi"
            assert echoed.structuredContent == {"result": "echo: hi"}
            assert echoed.isError is False
            assert echoed.resultType == "complete"

            # Resolve(Elicit): an input_required round on 2026-07-28, a live request on legacy.
            greeted = await client.call_tool("greet", {})
            assert text_of(greeted) == "Hello, Alice!"
            assert len(elicitation.asked) == 1
            asked = elicitation.asked[0]
            assert asked.message == "What is your name?"
            assert asked.mode == "form"
            assert list(asked.requestedSchema.properties) == ["name"]
            assert asked.requestedSchema.required == ["name"]

            seen: list[tuple[float, float | None, str | None]] = []
            counted = await client.call_tool(
                "count", {"steps": 3}, progress=lambda p, t, m: seen.append((p, t, m))
            )
            assert text_of(counted) == "counted 3"
            assert seen == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]

            listed = await client.list_resources()
            assert [(r.uri, r.name, r.mimeType) for r in listed.resources] == [
                ("peer://greeting", "greeting", "text/plain")
            ]
            read = await client.read_resource("peer://greeting")
            assert [(c.uri, c.text) for c in read.contents] == [
                ("peer://greeting", "hello from the SDK peer")
            ]
            templates = await client.list_resource_templates()
            assert [t.uriTemplate for t in templates.resourceTemplates] == ["peer://items/{item}"]
            item = await client.read_resource("peer://items/42")
            assert [(c.uri, c.text) for c in item.contents] == [("peer://items/42", "item 42")]

            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == ["intro"]
            prompt = await client.get_prompt("intro", {"topic": "MCP"})
            assert [(m.role, text_of(m)) for m in prompt.messages] == [
                ("user", "Tell me about MCP.")
            ]

            completed = await client.complete({"type": "ref/prompt", "name": "intro"}, "topic", "M")
            assert completed.completion.values == ["MCP", "Markdown"]
            assert completed.completion.total == 2
            assert completed.completion.hasMore is False

            if not client.modern:
                return
            async with client.listen(tools=True) as subscription:  # entering waits for the ack
                assert subscription.honoured == {"toolsListChanged": True}
                assert text_of(await client.call_tool("bump", {})) == "bumped"
                with anyio.fail_after(5):
                    notice = await first(subscription)
                assert notice.method == "notifications/tools/list_changed"
                assert notice.params.meta.io_modelcontextprotocol_subscriptionId == subscription.id


async def test_our_client_callbacks_get_the_params_the_server_sent() -> None:
    """A legacy server's elicitation/create carries no `_meta`; the public params our callback
    receives must not gain the client-request envelope (protocolVersion, clientCapabilities)."""
    elicitation = Elicitation()
    with anyio.fail_after(DEADLINE):
        async with Client(
            SDK_SERVER, mode="legacy", elicitation=elicitation, timeout=CALL_TIMEOUT
        ) as client:
            assert text_of(await client.call_tool("greet", {})) == "Hello, Alice!"
    [asked] = elicitation.asked
    assert asked.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
        "mode": "form",
        "message": "What is your name?",
        "requestedSchema": {
            "properties": {"name": {"title": "Name", "type": "string"}},
            "required": ["name"],
            "title": "Name",
            "type": "object",
        },
    }


# ---------------------------------------------------------------------- 3. our client -> npm server


@pytest.fixture(scope="module")
def everything_server(npm_peers: Path) -> list[str]:
    """The command of the pinned npm server-everything."""
    node = shutil.which("node")
    if node is None:
        pytest.fail(f"node (>= 20) must be on PATH to run {EVERYTHING}")
    return [node, str(EVERYTHING_DIR / "dist" / "index.js"), "stdio"]


ARCHITECTURE = "demo://resource/static/document/architecture.md"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_our_client_against_npm_everything(everything_server: list[str], mode: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(everything_server, mode=mode, timeout=CALL_TIMEOUT) as client:
            # auto: server/discover is answered -32601, so the client falls back to initialize.
            assert client.revision == LEGACY
            assert not client.modern
            assert client.server_info is not None
            assert client.server_info.name == "mcp-servers/everything"
            assert client.server_info.title == "Everything Reference Server"
            assert client.instructions and client.instructions.startswith("# Everything Server")

            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {"echo", "get-sum", "get-tiny-image"} <= set(tools)
            assert tools["echo"].inputSchema.required == ["message"]
            echoed = await client.call_tool("echo", {"message": "hello from mcpio"})
            assert text_of(echoed) == "Echo: hello from mcpio"
            assert echoed.resultType == "complete"  # absent on the legacy wire: read as complete

            resources = {r.uri: r for r in (await client.list_resources()).resources}
            assert ARCHITECTURE in resources
            assert resources[ARCHITECTURE].name == "architecture.md"
            assert resources[ARCHITECTURE].mimeType == "text/markdown"
            read = await client.read_resource(ARCHITECTURE)
            assert len(read.contents) == 1
            assert read.contents[0].uri == ARCHITECTURE
            assert read.contents[0].mimeType == "text/markdown"
            assert read.contents[0].text.startswith("# Everything Server – Architecture")

            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            assert {"simple-prompt", "args-prompt"} <= set(prompts)
            assert [a.name for a in prompts["args-prompt"].arguments or []] == ["city", "state"]
            simple = await client.get_prompt("simple-prompt")
            assert [(m.role, text_of(m)) for m in simple.messages] == [
                ("user", "This is a simple prompt without arguments.")
            ]
            weather = await client.get_prompt("args-prompt", {"city": "Paris", "state": "TX"})
            assert [text_of(m) for m in weather.messages] == ["What's weather in Paris, TX?"]

            department = {"type": "ref/prompt", "name": "completable-prompt"}
            completed = await client.complete(department, "department", "E")
            assert completed.completion.values == ["Engineering"]

            await client.ping()


async def test_our_modern_client_against_npm_everything(everything_server: list[str]) -> None:
    """An explicit 2026-07-28 client against the legacy-only server: no probe is made, so the
    connection opens; the modern-only methods are refused with -32601. The server answers other
    requests like a legacy server before `initialize`, without `resultType`, which 2026-07-28
    says a client must read as `complete`."""
    with anyio.fail_after(DEADLINE):
        async with Client(everything_server, mode=MODERN, timeout=CALL_TIMEOUT) as client:
            assert client.revision == MODERN
            assert client.modern
            assert client.server_info is None

            with pytest.raises(McpError) as refused:
                await client.discover()
            assert (refused.value.code, refused.value.message) == (-32601, "Method not found")

            listed = await client.list_tools()
            assert "echo" in [tool.name for tool in listed.tools]
            assert listed.resultType == "complete"
            echoed = await client.call_tool("echo", {"message": "modern"})
            assert text_of(echoed) == "Echo: modern"

            # subscriptions/listen is refused the same way; entering `listen` must say so.
            with pytest.raises(McpError) as refused:
                async with client.listen(tools=True):
                    pass
            assert refused.value.code == -32601
