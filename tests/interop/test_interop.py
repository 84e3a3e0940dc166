"""Interop with real peers over stdio (local pipes only), in both eras.

1. The official Python SDK's client (`mcp==2.3.0`) against our fixture server,
   examples/everything_server.py, in the modes auto, legacy and 2026-07-28.
2. Our `mcpio.Client` against a server written with that SDK (tests/peers/sdk_server.py).
3. Our `mcpio.Client` against the npm reference server `@modelcontextprotocol/server-everything`
   (legacy era only), pinned in tests/peers/package.json + package-lock.json and installed by
   the `npm_peers` fixture (tests/conftest.py) when node_modules is missing or out of date.

One peer per mode: a module-scoped fixture opens the session (spawn and handshake, each request
bounded by CALL_TIMEOUT) and every test of that mode shares it. The peers keep no state a test
changes (the tool-list triggers only notify: test_trigger_tool_change adds its tool and removes
it again), and what a client's elicitation callback was asked is cleared before each test.
Every test runs under a deadline, so a silent peer fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
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

# The modes of sections 1 and 2, and the revision each one settles on.
MODES = ["auto", "legacy", MODERN]
REVISION = {"auto": MODERN, "legacy": LEGACY, MODERN: MODERN}
PROBED = ["auto", "legacy"]  # the modes that learn the server's info (server/discover, initialize)
LISTENING = ["auto", MODERN]  # the modes on 2026-07-28, where subscriptions/listen exists

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


@dataclass
class SdkSession:
    mode: str
    client: SdkClient
    elicitation: SdkElicitation


@pytest.fixture(scope="module", params=MODES)
async def sdk_session(request: pytest.FixtureRequest) -> AsyncIterator[SdkSession]:
    """The SDK client connected to our fixture server in one mode, for the module's tests."""
    elicitation = SdkElicitation()
    async with SdkClient(
        sdk_params(),
        mode=request.param,
        elicitation_callback=elicitation,
        read_timeout_seconds=CALL_TIMEOUT,
    ) as client:
        yield SdkSession(request.param, client, elicitation)


@pytest.fixture
def sdk(sdk_session: SdkSession) -> SdkSession:
    """The shared session, nothing asked of its elicitation callback yet."""
    sdk_session.elicitation.asked.clear()
    return sdk_session


async def test_sdk_client_negotiates_the_revision_of_its_mode(sdk: SdkSession) -> None:
    assert sdk.client.protocol_version == REVISION[sdk.mode]


@pytest.mark.parametrize("sdk_session", [MODERN], indirect=True)
async def test_sdk_client_with_an_explicit_revision_skips_the_probe(sdk: SdkSession) -> None:
    assert sdk.client.server_info is None


@pytest.mark.parametrize("sdk_session", PROBED, indirect=True)
async def test_sdk_client_learns_our_server_info(sdk: SdkSession) -> None:
    assert sdk.client.server_info is not None
    assert sdk.client.server_info.name == "mcp-conformance-test-server"
    assert sdk.client.server_info.version == "1.0.0"


async def test_sdk_client_lists_our_tools(sdk: SdkSession) -> None:
    with anyio.fail_after(DEADLINE):
        names = [tool.name for tool in (await sdk.client.list_tools()).tools]
    for name in (
        "test_simple_text",
        "test_tool_with_progress",
        "test_error_handling",
        "test_elicitation",
        "test_input_required_result_elicitation",
        "test_trigger_tool_change",
    ):
        assert name in names


async def test_sdk_client_gets_a_text_result(sdk: SdkSession) -> None:
    with anyio.fail_after(DEADLINE):
        simple = await sdk.client.call_tool("test_simple_text", {})
    assert text_of(simple) == "This is a simple text response for testing."
    assert not simple.is_error


async def test_sdk_client_gets_a_tool_error_as_is_error(sdk: SdkSession) -> None:
    with anyio.fail_after(DEADLINE):
        failed = await sdk.client.call_tool("test_error_handling", {})
    assert failed.is_error
    assert text_of(failed) == "This tool intentionally returns an error for testing"


async def test_sdk_client_receives_our_progress_notifications(sdk: SdkSession) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(DEADLINE):
        progressed = await sdk.client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
    assert seen == [
        (0, 100, "Completed step 0 of 100"),
        (50, 100, "Completed step 50 of 100"),
        (100, 100, "Completed step 100 of 100"),
    ]
    assert text_of(progressed).isdigit()  # the SDK's progress token, echoed back


async def test_sdk_client_reads_a_static_resource(sdk: SdkSession) -> None:
    with anyio.fail_after(DEADLINE):
        static = await sdk.client.read_resource("test://static-text")
    assert len(static.contents) == 1
    assert static.contents[0].uri == "test://static-text"
    assert static.contents[0].mime_type == "text/plain"
    assert static.contents[0].text == "This is the content of the static text resource."


async def test_sdk_client_reads_a_templated_resource(sdk: SdkSession) -> None:
    with anyio.fail_after(DEADLINE):
        templated = await sdk.client.read_resource("test://template/42/data")
    assert templated.contents[0].uri == "test://template/42/data"
    assert json.loads(templated.contents[0].text) == {
        "id": "42",
        "templateTest": True,
        "data": "Data for ID: 42",
    }


async def test_sdk_client_gets_a_prompt_with_arguments(sdk: SdkSession) -> None:
    with anyio.fail_after(DEADLINE):
        prompt = await sdk.client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
        )
    assert len(prompt.messages) == 1
    assert prompt.messages[0].role == "user"
    assert text_of(prompt.messages[0]) == "Prompt with arguments: arg1='a', arg2='b'"


async def test_sdk_client_answers_the_elicitation_of_an_input_required_result(
    sdk: SdkSession,
) -> None:
    # The same handler: an input_required round on 2026-07-28, a live request on legacy.
    with anyio.fail_after(DEADLINE):
        greeted = await sdk.client.call_tool("test_input_required_result_elicitation", {})
    assert text_of(greeted) == "Hello, Alice!"
    assert [params.message for params in sdk.elicitation.asked] == ["What is your name?"]
    assert sdk.elicitation.asked[0].requested_schema["required"] == ["name"]


@pytest.mark.parametrize("sdk_session", ["legacy"], indirect=True)
async def test_sdk_client_answers_a_live_elicitation_on_legacy(sdk: SdkSession) -> None:
    with anyio.fail_after(DEADLINE):
        answered = await sdk.client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert text_of(answered) == (
        "User response: action=accept, "
        'content={"username": "alice", "email": "alice@example.com"}'
    )
    assert sdk.elicitation.asked[-1].message == "Who are you?"


@pytest.mark.parametrize("sdk_session", LISTENING, indirect=True)
async def test_sdk_client_hears_our_tool_list_change_through_listen(sdk: SdkSession) -> None:
    client = sdk.client
    with anyio.fail_after(DEADLINE):
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


@dataclass
class OurSession:
    mode: str
    client: Client
    elicitation: Elicitation


@pytest.fixture(scope="module", params=MODES)
async def our_session(request: pytest.FixtureRequest) -> AsyncIterator[OurSession]:
    """Our client connected to the SDK server in one mode, for the module's tests."""
    elicitation = Elicitation()
    async with Client(
        SDK_SERVER, mode=request.param, elicitation=elicitation, timeout=CALL_TIMEOUT
    ) as client:
        yield OurSession(request.param, client, elicitation)


@pytest.fixture
def ours(our_session: OurSession) -> OurSession:
    """The shared session, nothing asked of its elicitation callback yet."""
    our_session.elicitation.asked.clear()
    return our_session


async def test_our_client_negotiates_the_revision_of_its_mode(ours: OurSession) -> None:
    revision = REVISION[ours.mode]
    assert ours.client.revision == revision
    assert ours.client.modern is (revision == MODERN)


@pytest.mark.parametrize("our_session", [MODERN], indirect=True)
async def test_our_client_with_an_explicit_revision_skips_the_probe(ours: OurSession) -> None:
    assert ours.client.server_info is None  # no probe, no initialize


@pytest.mark.parametrize("our_session", PROBED, indirect=True)
async def test_our_client_learns_the_sdk_server_info_and_instructions(ours: OurSession) -> None:
    client = ours.client
    assert client.server_info is not None
    assert (client.server_info.name, client.server_info.version) == ("mcpgen-sdk-peer", "2.3.0")
    assert client.instructions == "An interop peer for mcpgen's tests."


@pytest.mark.parametrize("our_session", PROBED, indirect=True)
async def test_our_client_learns_the_sdk_server_capabilities(ours: OurSession) -> None:
    client = ours.client
    assert client.server_capabilities is not None
    assert client.server_capabilities.completions is not None
    # The SDK serves list changes through subscriptions/listen only (2026-07-28).
    assert client.server_capabilities.tools is not None
    assert client.server_capabilities.tools.listChanged is client.modern


async def test_our_client_lists_the_sdk_tools_with_their_schemas(ours: OurSession) -> None:
    with anyio.fail_after(DEADLINE):
        tools = (await ours.client.list_tools()).tools
    assert [tool.name for tool in tools] == ["echo", "greet", "count", "bump"]
    echo = tools[0]
    assert echo.inputSchema.required == ["text"]


async def test_our_client_gets_a_complete_structured_result(ours: OurSession) -> None:
    with anyio.fail_after(DEADLINE):
        echoed = await ours.client.call_tool("echo", {"text": "hi"})
    assert text_of(echoed) == "echo: hi"
    assert echoed.structuredContent == {"result": "echo: hi"}
    assert echoed.isError is False
    assert echoed.resultType == "complete"


async def test_our_client_answers_the_sdk_elicitation(ours: OurSession) -> None:
    # Resolve(Elicit): an input_required round on 2026-07-28, a live request on legacy.
    with anyio.fail_after(DEADLINE):
        greeted = await ours.client.call_tool("greet", {})
    assert text_of(greeted) == "Hello, Alice!"
    assert len(ours.elicitation.asked) == 1
    asked = ours.elicitation.asked[0]
    assert asked.message == "What is your name?"
    assert asked.mode == "form"
    assert list(asked.requestedSchema.properties) == ["name"]
    assert asked.requestedSchema.required == ["name"]


async def test_our_client_receives_the_sdk_progress_notifications(ours: OurSession) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    with anyio.fail_after(DEADLINE):
        counted = await ours.client.call_tool(
            "count", {"steps": 3}, progress=lambda p, t, m: seen.append((p, t, m))
        )
    assert text_of(counted) == "counted 3"
    assert seen == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]


async def test_our_client_lists_and_reads_the_sdk_resource(ours: OurSession) -> None:
    with anyio.fail_after(DEADLINE):
        listed = await ours.client.list_resources()
        read = await ours.client.read_resource("peer://greeting")
    assert [(r.uri, r.name, r.mimeType) for r in listed.resources] == [
        ("peer://greeting", "greeting", "text/plain")
    ]
    assert [(c.uri, c.text) for c in read.contents] == [
        ("peer://greeting", "hello from the SDK peer")
    ]


async def test_our_client_lists_and_reads_the_sdk_resource_template(ours: OurSession) -> None:
    with anyio.fail_after(DEADLINE):
        templates = await ours.client.list_resource_templates()
        item = await ours.client.read_resource("peer://items/42")
    assert [t.uriTemplate for t in templates.resourceTemplates] == ["peer://items/{item}"]
    assert [(c.uri, c.text) for c in item.contents] == [("peer://items/42", "item 42")]


async def test_our_client_lists_and_gets_the_sdk_prompt(ours: OurSession) -> None:
    with anyio.fail_after(DEADLINE):
        prompts = await ours.client.list_prompts()
        prompt = await ours.client.get_prompt("intro", {"topic": "MCP"})
    assert [p.name for p in prompts.prompts] == ["intro"]
    assert [(m.role, text_of(m)) for m in prompt.messages] == [("user", "Tell me about MCP.")]


async def test_our_client_completes_a_prompt_argument_at_the_sdk_server(ours: OurSession) -> None:
    with anyio.fail_after(DEADLINE):
        completed = await ours.client.complete(
            {"type": "ref/prompt", "name": "intro"}, "topic", "M"
        )
    assert completed.completion.values == ["MCP", "Markdown"]
    assert completed.completion.total == 2
    assert completed.completion.hasMore is False


@pytest.mark.parametrize("our_session", LISTENING, indirect=True)
async def test_our_client_hears_the_sdk_tool_list_change_through_listen(
    ours: OurSession,
) -> None:
    client = ours.client
    with anyio.fail_after(DEADLINE):
        async with client.listen(tools=True) as subscription:  # entering waits for the ack
            assert subscription.honoured == {"toolsListChanged": True}
            assert text_of(await client.call_tool("bump", {})) == "bumped"
            with anyio.fail_after(5):
                notice = await first(subscription)
            assert notice.method == "notifications/tools/list_changed"
            assert notice.params.meta.io_modelcontextprotocol_subscriptionId == subscription.id


@pytest.mark.parametrize("our_session", ["legacy"], indirect=True)
async def test_our_client_callbacks_get_the_params_the_server_sent(ours: OurSession) -> None:
    """A legacy server's elicitation/create carries no `_meta`; the public params our callback
    receives must not gain the client-request envelope (protocolVersion, clientCapabilities)."""
    with anyio.fail_after(DEADLINE):
        assert text_of(await ours.client.call_tool("greet", {})) == "Hello, Alice!"
    [asked] = ours.elicitation.asked
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


@pytest.fixture(scope="module", params=["auto", "legacy"])
async def everything(
    everything_server: list[str], request: pytest.FixtureRequest
) -> AsyncIterator[Client]:
    """Our client connected to server-everything in one mode, for the module's tests (the server
    answers every request here without changing its state)."""
    async with Client(everything_server, mode=request.param, timeout=CALL_TIMEOUT) as client:
        yield client


ARCHITECTURE = "demo://resource/static/document/architecture.md"


async def test_our_client_falls_back_to_legacy_with_npm_everything(everything: Client) -> None:
    # auto: server/discover is answered -32601, so the client falls back to initialize.
    assert everything.revision == LEGACY
    assert not everything.modern


async def test_our_client_learns_npm_everything_info_and_instructions(everything: Client) -> None:
    assert everything.server_info is not None
    assert everything.server_info.name == "mcp-servers/everything"
    assert everything.server_info.title == "Everything Reference Server"
    assert everything.instructions and everything.instructions.startswith("# Everything Server")


async def test_our_client_calls_npm_everything_echo(everything: Client) -> None:
    with anyio.fail_after(DEADLINE):
        tools = {tool.name: tool for tool in (await everything.list_tools()).tools}
        echoed = await everything.call_tool("echo", {"message": "hello from mcpio"})
    assert {"echo", "get-sum", "get-tiny-image"} <= set(tools)
    assert tools["echo"].inputSchema.required == ["message"]
    assert text_of(echoed) == "Echo: hello from mcpio"
    assert echoed.resultType == "complete"  # absent on the legacy wire: read as complete


async def test_our_client_lists_npm_everything_resources(everything: Client) -> None:
    with anyio.fail_after(DEADLINE):
        resources = {r.uri: r for r in (await everything.list_resources()).resources}
    assert ARCHITECTURE in resources
    assert resources[ARCHITECTURE].name == "architecture.md"
    assert resources[ARCHITECTURE].mimeType == "text/markdown"


async def test_our_client_reads_an_npm_everything_resource(everything: Client) -> None:
    with anyio.fail_after(DEADLINE):
        read = await everything.read_resource(ARCHITECTURE)
    assert len(read.contents) == 1
    assert read.contents[0].uri == ARCHITECTURE
    assert read.contents[0].mimeType == "text/markdown"
    assert read.contents[0].text.startswith("# Everything Server – Architecture")


async def test_our_client_lists_npm_everything_prompts(everything: Client) -> None:
    with anyio.fail_after(DEADLINE):
        prompts = {p.name: p for p in (await everything.list_prompts()).prompts}
    assert {"simple-prompt", "args-prompt"} <= set(prompts)
    assert [a.name for a in prompts["args-prompt"].arguments or []] == ["city", "state"]


async def test_our_client_gets_npm_everything_prompts(everything: Client) -> None:
    with anyio.fail_after(DEADLINE):
        simple = await everything.get_prompt("simple-prompt")
        weather = await everything.get_prompt("args-prompt", {"city": "Paris", "state": "TX"})
    assert [(m.role, text_of(m)) for m in simple.messages] == [
        ("user", "This is a simple prompt without arguments.")
    ]
    assert [text_of(m) for m in weather.messages] == ["What's weather in Paris, TX?"]


async def test_our_client_completes_at_npm_everything(everything: Client) -> None:
    department = {"type": "ref/prompt", "name": "completable-prompt"}
    with anyio.fail_after(DEADLINE):
        completed = await everything.complete(department, "department", "E")
    assert completed.completion.values == ["Engineering"]


async def test_our_client_pings_npm_everything(everything: Client) -> None:
    with anyio.fail_after(DEADLINE):
        await everything.ping()  # answered: no error raised


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
