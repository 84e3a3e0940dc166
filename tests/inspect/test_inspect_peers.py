"""Real peers through `mcpio inspect` over stdio, every frame checked: the host side keeps
working (our Client, the official SDK client) and what the peers do right is not flagged (no
finding at all on these sessions): examples/everything_server.py in both eras, the official SDK
server (mcp 2.3.0), and the npm `@modelcontextprotocol/server-everything`."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters

from mcpio import Client
from tests.support import PEERS, ROOT, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.peers]

FIXTURE_SERVER = [sys.executable, str(ROOT / "examples" / "everything_server.py"), "stdio"]
SDK_SERVER = [sys.executable, str(PEERS / "sdk_server.py")]
EVERYTHING_DIR = PEERS / "node_modules" / "@modelcontextprotocol/server-everything"
MODERN, LEGACY = "2026-07-28", "2025-11-25"
DEADLINE = 60


def proxied(server: list[str], transcript: Path) -> list[str]:
    return [sys.executable, "-m", "mcpio", "inspect", "--jsonl", str(transcript), "--", *server]


def findings(transcript: Path) -> list[tuple[str, str, str]]:
    """(severity, rule, path) of each finding of the session."""
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert entries, "nothing was recorded"
    return [(f["severity"], f["rule"], f["path"]) for e in entries for f in e["findings"]]


async def elicit(params: Any) -> dict[str, Any]:
    properties = set((params.requestedSchema.properties or {}).keys())
    if properties == {"username", "email"}:
        return {"action": "accept", "content": {"username": "a", "email": "a@example.com"}}
    return {"action": "accept", "content": {"name": "Alice"}}


@pytest.mark.parametrize("mode", ["legacy", MODERN, "auto"])
async def test_our_client_and_the_example_server(mode: str, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    with anyio.fail_after(DEADLINE):
        async with Client(proxied(FIXTURE_SERVER, transcript), mode=mode, elicitation=elicit) as c:
            assert c.revision == (LEGACY if mode == "legacy" else MODERN)
            assert "test_simple_text" in [t.name for t in (await c.list_tools()).tools]
            simple = await c.call_tool("test_simple_text", {})
            assert text_of(simple) == "This is a simple text response for testing."
            seen: list[float] = []
            await c.call_tool(
                "test_tool_with_progress", {}, progress=lambda p, t, m: seen.append(p)
            )
            assert seen == [0, 50, 100]
            await c.call_tool("test_tool_with_logging", {})
            await c.call_tool("test_elicitation", {"message": "who?"})
            await c.read_resource("test://static-text")
            await c.get_prompt("test_simple_prompt")
            await c.list_resources()
            await c.list_prompts()
    assert findings(transcript) == []


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_our_client_and_the_sdk_server(mode: str, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    with anyio.fail_after(DEADLINE):
        async with Client(proxied(SDK_SERVER, transcript), mode=mode, elicitation=elicit) as c:
            assert text_of(await c.call_tool("echo", {"text": "hi"})) == "echo: hi"
            assert text_of(await c.call_tool("greet", {})) == "Hello, Alice!"
            seen: list[float] = []
            await c.call_tool("count", {"steps": 3}, progress=lambda p, t, m: seen.append(p))
            assert seen == [1, 2, 3]
            await c.list_resources()
    # The SDK titles the form it asks for: 2025-11-25's requestedSchema does not define `title`
    # but leaves the object open, so it is no finding.
    assert findings(transcript) == []


def client_capabilities(transcript: Path) -> list[dict[str, Any]]:
    """The client capabilities each client request declared: initialize's, or (2026-07-28) the
    request's `_meta` envelope's."""
    declared: list[dict[str, Any]] = []
    for line in transcript.read_text().splitlines():
        entry = json.loads(line)
        frame = json.loads(entry.get("frame", "null"))
        if entry.get("direction") != "client->server" or type(frame) is not dict:
            continue
        params = frame.get("params") or {}
        meta = params.get("_meta") or {}
        if frame.get("method") == "initialize":
            declared.append(params["capabilities"])
        elif "io.modelcontextprotocol/clientCapabilities" in meta:
            declared.append(meta["io.modelcontextprotocol/clientCapabilities"])
    return declared


def roots_declared(transcript: Path) -> bool:
    """Whether the session carried the reported pattern: `roots.listChanged` declared."""
    return any(c.get("roots", {}).get("listChanged") for c in client_capabilities(transcript))


async def list_roots(context: Any) -> Any:
    from mcp import types

    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/project", name="project")])


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_the_sdk_client_and_the_example_server(mode: str, tmp_path: Path) -> None:
    """The SDK client declaring roots: `roots.listChanged` in each 2026-07-28 request's `_meta`
    client capabilities (flagged on every request before issue 32), or in `initialize`."""
    transcript = tmp_path / "t.jsonl"
    command = proxied(FIXTURE_SERVER, transcript)
    params = StdioServerParameters(command=command[0], args=command[1:])
    with anyio.fail_after(DEADLINE):
        async with SdkClient(
            params, mode=mode, read_timeout_seconds=10, list_roots_callback=list_roots
        ) as client:
            assert "test_simple_text" in [t.name for t in (await client.list_tools()).tools]
            simple = await client.call_tool("test_simple_text", {})
            assert not simple.is_error
            await client.read_resource("test://static-text")
    assert roots_declared(transcript)
    assert findings(transcript) == []


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_the_fastmcp_client_and_the_example_server(mode: str, tmp_path: Path) -> None:
    """FastMCP's client (4.1.6) with roots, both eras: no finding."""
    from fastmcp import Client as FastMcpClient
    from fastmcp.client.transports import StdioTransport

    transcript = tmp_path / "t.jsonl"
    command = proxied(FIXTURE_SERVER, transcript)
    transport = StdioTransport(command[0], command[1:])
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    with anyio.fail_after(DEADLINE):
        async with FastMcpClient(
            transport, roots=["file:///tmp/project"], mode=mode, progress_handler=on_progress
        ) as client:
            assert "test_simple_text" in [t.name for t in await client.list_tools()]
            simple = await client.call_tool("test_simple_text", {})
            assert text_of(simple) == "This is a simple text response for testing."
            await client.call_tool("test_tool_with_progress", {})
            await client.read_resource("test://static-text")
            await client.get_prompt("test_simple_prompt")
    assert seen == [0, 50, 100]
    assert roots_declared(transcript)
    assert findings(transcript) == []


@pytest.mark.parametrize(("mode", "revision"), [("auto", MODERN), ("legacy", LEGACY)])
async def test_the_ts_v2_client_and_the_example_server(
    npm_peers: Path, mode: str, revision: str, tmp_path: Path
) -> None:
    """The TypeScript SDK v2 client (@modelcontextprotocol/client) over stdio, both eras."""
    node = shutil.which("node")
    assert node is not None, "node must be on PATH"
    transcript = tmp_path / "t.jsonl"
    script = [node, str(PEERS / "ts_v2_tasks_client.mjs"), mode, "stdio"]
    with anyio.fail_after(DEADLINE):
        done = await anyio.run_process(
            [*script, *proxied(FIXTURE_SERVER, transcript)], cwd=npm_peers.parent, check=False
        )
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout.decode().splitlines()[-1])["protocolVersion"] == revision
    assert len(client_capabilities(transcript)) >= (4 if revision == MODERN else 1)
    assert findings(transcript) == []


async def test_our_client_and_npm_server_everything(npm_peers: Path, tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "node must be on PATH"
    server = [node, str(EVERYTHING_DIR / "dist" / "index.js"), "stdio"]
    transcript = tmp_path / "t.jsonl"
    with anyio.fail_after(DEADLINE):
        async with Client(proxied(server, transcript)) as client:
            assert client.revision == LEGACY  # the probe was refused: it fell back
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "echo" in tools
            echoed = await client.call_tool("echo", {"message": "via the inspector"})
            assert text_of(echoed) == "Echo: via the inspector"
            await client.list_resources()
            await client.list_prompts()
            await client.get_prompt("simple-prompt")
            await client.ping()
    # One tool's outputSchema carries additionalProperties: a JSON Schema keyword, which every
    # revision's tool schemas now keep as they are (issue 20 item 4), so nothing is flagged.
    assert findings(transcript) == []


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_our_client_and_the_sdk_server_over_http(mode: str) -> None:
    from mcpio.inspect._http_proxy import ProxyApp
    from mcpio.inspect._transcript import Recorder
    from tests.support import serve_app
    from tests.support.http_peers import Peer

    peer = Peer("http_sdk_server.py")
    recorder = Recorder(io.StringIO())
    try:
        async with serve_app(ProxyApp(peer.url("/mcp"), recorder)) as proxy:
            with anyio.fail_after(DEADLINE):
                async with Client(f"{proxy.url}/mcp", mode=mode, elicitation=elicit) as c:
                    assert c.revision == (MODERN if mode == "auto" else LEGACY)
                    assert text_of(await c.call_tool("echo", {"text": "hi"})) == "echo: hi"
                    assert text_of(await c.call_tool("greet", {})) == "Hello, Alice!"
                    seen: list[float] = []
                    await c.call_tool(
                        "count", {"steps": 3}, progress=lambda p, t, m: seen.append(p)
                    )
                    assert seen == [1, 2, 3]
                    await c.list_resources()
    finally:
        peer.stop()
    found = [(f.severity, f.rule, f.path) for f in recorder.findings()]
    assert found == []  # as over stdio (see test_our_client_and_the_sdk_server)
    assert len(recorder.entries) > 8


async def test_the_ts_v1_client_over_http_and_the_example_server(npm_peers: Path) -> None:
    """The TypeScript SDK v1 client (@modelcontextprotocol/sdk) over legacy Streamable HTTP,
    through the HTTP relay, to the example server: its tools, a call, a task tool answered
    plainly, a failing one."""
    import importlib.util

    from mcpio.inspect._http_proxy import ProxyApp
    from mcpio.inspect._transcript import Recorder
    from tests.support import serve_app

    node = shutil.which("node")
    assert node is not None, "node must be on PATH"
    spec = importlib.util.spec_from_file_location(
        "everything", ROOT / "examples" / "everything_server.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    recorder = Recorder(io.StringIO())
    async with serve_app(example.server.http_app()) as upstream:
        async with serve_app(ProxyApp(f"{upstream.url}/mcp", recorder)) as proxy:
            with anyio.fail_after(DEADLINE):
                done = await anyio.run_process(
                    [node, str(PEERS / "ts_tasks_client.mjs"), f"{proxy.url}/mcp"],
                    cwd=npm_peers.parent, check=False,
                )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    seen = json.loads(done.stdout.decode().splitlines()[-1])
    assert seen["protocolVersion"] == LEGACY
    assert len(recorder.entries) > 6
    assert [(f.severity, f.rule, f.path) for f in recorder.findings()] == []
