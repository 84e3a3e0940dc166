"""Task tools and clients that do not take tasks: the official Python SDK client (mcp 2.3.0,
over stdio, both eras), the TypeScript SDK v1 client (legacy Streamable HTTP) and the TypeScript
SDK v2 client (@modelcontextprotocol/client 2.4.0, stdio and Streamable HTTP, both eras) call the
example server's task tools and get plain results."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.support import PEERS, ROOT, free_port, text_of, until
from tests.support.once import Once

EXAMPLE = ROOT / "examples" / "everything_server.py"
DEADLINE = 30

pytestmark = [pytest.mark.anyio, pytest.mark.peers]


@pytest.mark.parametrize(("mode", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_sdk_client_gets_plain_results_from_task_tools(mode: str, revision: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(EXAMPLE), "stdio"])
    with anyio.fail_after(DEADLINE):
        async with SdkClient(params, mode=mode, read_timeout_seconds=10) as client:
            assert client.protocol_version == revision
            computed = await client.call_tool("slow_compute", {"seconds": 0.1, "label": "sdk"})
            assert text_of(computed) == "computed sdk after 0.1 s" and not computed.is_error
            greeted = await client.call_tool("greet", {"name": "SDK"})
            assert text_of(greeted) == "Hello, SDK!"
            # A tool that only runs as a task is refused: modern names the extension.
            with pytest.raises(MCPError) as refused:
                await client.call_tool("failing_job", {})
            expected = -32021 if revision == "2026-07-28" else -32601
            assert refused.value.error.code == expected


async def test_ts_sdk_client_gets_plain_results_from_task_tools(npm_peers: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "node (>= 20) must be on PATH"
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "http", "--port", str(port)], stderr=subprocess.DEVNULL
    )
    try:
        await until(_listening(port), timeout=20, interval=0.05)
        with anyio.fail_after(60):
            done = await anyio.run_process(
                [node, str(PEERS / "ts_tasks_client.mjs"), f"http://127.0.0.1:{port}/mcp"],
                cwd=npm_peers.parent,
                check=False,
            )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert done.returncode == 0, done.stderr.decode()
    seen = json.loads(done.stdout.decode().splitlines()[-1])
    assert seen["protocolVersion"] == "2025-11-25"
    # It reads each tool's execution.taskSupport ...
    assert seen["taskSupport"]["slow_compute"] == "optional"
    assert seen["taskSupport"]["failing_job"] == "required"
    # ... and, asking for no task, gets the plain result.
    assert seen["computed"] == [{"type": "text", "text": "computed ts after 0.1 s"}]
    # The str return type gives an output schema, hence structuredContent; no task member.
    assert seen["computedKeys"] == ["content", "structuredContent"]
    assert seen["greet"] == [{"type": "text", "text": "Hello, TS!"}]
    # A required task tool: this SDK refuses it itself (-32600) before asking our server.
    assert seen["required"]["code"] == -32600


@pytest.fixture(scope="module")
def once() -> Once:
    return Once()


async def ts_v2_client_run(
    npm_peers: Path, transport: str, mode: str
) -> subprocess.CompletedProcess[bytes]:
    """The v2 client's script (tests/peers/ts_v2_tasks_client.mjs) against the example server
    over `transport` in `mode`: what it printed, its last line the JSON of what it saw. With
    `versionNegotiation: {mode: "auto"}` it probes with server/discover and negotiates
    2026-07-28 (modern era) over both transports; with its default `legacy` mode it runs
    initialize and negotiates 2025-11-25. It never declares the tasks extension."""
    node = shutil.which("node")
    assert node is not None, "node (>= 20) must be on PATH"
    script = [node, str(PEERS / "ts_v2_tasks_client.mjs"), mode]
    server: subprocess.Popen[bytes] | None = None
    port = free_port()
    if transport == "stdio":
        script += ["stdio", sys.executable, str(EXAMPLE), "stdio"]
    else:
        server = subprocess.Popen(
            [sys.executable, str(EXAMPLE), "http", "--port", str(port)], stderr=subprocess.DEVNULL
        )
        script.append(f"http://127.0.0.1:{port}/mcp")
    try:
        if server is not None:
            await until(_listening(port), timeout=20, interval=0.05)
        with anyio.fail_after(60):
            return await anyio.run_process(script, cwd=npm_peers.parent, check=False)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)


def ts_v2_runs(test: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
    """Each transport, each mode (and the revision it negotiates): the client runs once each."""
    modes = pytest.mark.parametrize(
        ("mode", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
    )
    return pytest.mark.parametrize("transport", ["stdio", "http"])(modes(test))


async def ts_v2_seen(once: Once, npm_peers: Path, transport: str, mode: str) -> dict[str, Any]:
    done = await once(ts_v2_client_run, npm_peers, transport, mode)
    return json.loads(done.stdout.decode().splitlines()[-1])


@ts_v2_runs
async def test_the_ts_sdk_v2_client_runs_to_its_end(
    once: Once, npm_peers: Path, transport: str, mode: str, revision: str
) -> None:
    assert shutil.which("node") is not None, "node (>= 20) must be on PATH"
    done = await once(ts_v2_client_run, npm_peers, transport, mode)
    assert done.returncode == 0, done.stderr.decode()


@ts_v2_runs
async def test_the_ts_sdk_v2_client_negotiates_the_revision_of_its_mode(
    once: Once, npm_peers: Path, transport: str, mode: str, revision: str
) -> None:
    seen = await ts_v2_seen(once, npm_peers, transport, mode)
    assert seen["protocolVersion"] == revision
    assert seen["era"] == ("modern" if revision == "2026-07-28" else "legacy")


@ts_v2_runs
async def test_the_ts_sdk_v2_client_sees_task_support_as_its_era_declares_it(
    once: Once, npm_peers: Path, transport: str, mode: str, revision: str
) -> None:
    seen = await ts_v2_seen(once, npm_peers, transport, mode)
    if revision == "2026-07-28":
        # server/discover advertises the extension; core 2026-07-28 tools carry no taskSupport.
        assert seen["extensions"] == ["io.modelcontextprotocol/tasks"]
        assert seen["taskSupport"] == {}
    else:
        assert seen["taskSupport"]["slow_compute"] == "optional"
        assert seen["taskSupport"]["failing_job"] == "required"


@ts_v2_runs
async def test_the_ts_sdk_v2_client_gets_the_plain_result_of_an_optional_task_tool(
    once: Once, npm_peers: Path, transport: str, mode: str, revision: str
) -> None:
    """Not declaring the extension, it gets the plain result of the optional task tool."""
    seen = await ts_v2_seen(once, npm_peers, transport, mode)
    assert seen["computed"] == [{"type": "text", "text": "computed v2 after 0.1 s"}]
    assert seen["computedStructured"] == {"result": "computed v2 after 0.1 s"}
    assert "task" not in seen["computedKeys"] and not seen["computedIsError"]


@ts_v2_runs
async def test_the_ts_sdk_v2_client_calls_a_plain_tool(
    once: Once, npm_peers: Path, transport: str, mode: str, revision: str
) -> None:
    seen = await ts_v2_seen(once, npm_peers, transport, mode)
    assert seen["greet"] == [{"type": "text", "text": "Hello, TSv2!"}]


@ts_v2_runs
async def test_our_server_refuses_the_ts_sdk_v2_client_s_call_of_a_required_task_tool(
    once: Once, npm_peers: Path, transport: str, mode: str, revision: str
) -> None:
    """Unlike v1, this client sends the required task tool's call; our server refuses it."""
    required = (await ts_v2_seen(once, npm_peers, transport, mode))["required"]
    if revision == "2026-07-28":
        assert required["code"] == -32021
        assert required["data"]["requiredCapabilities"] == {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    else:
        assert required["code"] == -32601


def _listening(port: int) -> Callable[[], Awaitable[bool]]:
    async def listening() -> bool:
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            return False
        await stream.aclose()
        return True

    return listening
