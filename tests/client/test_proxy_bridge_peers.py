"""The revision bridge through `mcpio proxy` (a process), over stdio and over HTTP (issue 36):

1. the official Python SDK's client (`mcp`), pinned to 2025-06-18, calling a server whose tools
   work only in a 2026-07-28 request: an elicitation, a sampling request, progress, and a tool
   the target may run as a task (2025-06-18 has no tasks: the client gets its result);
2. our 2026-07-28 client calling a 2025-03-26 stdio server the same way: a sampling request
   (2025-03-26 has no elicitation), progress, and a task (run by the proxy: the target has none).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.types import CreateMessageResult, ElicitResult, TextContent

from mcpio import Client
from mcpio.tasks._client import TaskHandle
from tests.support import free_port, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.peers]

TARGET = """
import sys
from mcpio import Context, Server, ToolError

server = Server("target")
ERA = sys.argv[1]  # the revision the target insists on


def only(ctx: Context) -> None:
    if ctx.revision != ERA:
        raise ToolError(f"this server answers only {ERA}, not {ctx.revision}")


@server.tool(task="optional")
async def everything(ctx: Context) -> str:
    only(ctx)
    await ctx.progress(1, 2, "asking")
    name = "-"
    if ERA >= "2025-06-18":
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"v": {"type": "string"}}})
        name = (answer.content or {}).get("v")
    sampled = await ctx.sample([{"role": "user", "content": {"type": "text", "text": "hi"}}], 10)
    await ctx.progress(2, 2, "asked")
    return f"{name}/{getattr(sampled.content, 'text', '?')}/{ctx.revision}"


server.run_stdio()
"""


def target(tmp_path: Path, era: str) -> list[str]:
    script = tmp_path / "target.py"
    script.write_text(TARGET)
    return [sys.executable, str(script), era]


def proxy_command(mode: str, command: list[str], port: int | None = None) -> list[str]:
    http = ["--transport", "http", "--port", str(port)] if port is not None else []
    return [sys.executable, "-m", "mcpio", "proxy", *http, "--mode", mode, "--", *command]


@asynccontextmanager
async def served(command: list[str]) -> AsyncIterator[None]:
    """The proxy over HTTP, running until the block ends."""
    process = await anyio.open_process(command, stderr=subprocess.PIPE)
    try:
        assert process.stderr is not None
        with anyio.fail_after(30):
            await process.stderr.receive()  # the line saying where it serves
        yield None
    finally:
        process.terminate()
        with anyio.fail_after(20):
            await process.wait()


async def sdk_elicit(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"v": "Ann"})


async def sdk_sample(ctx: Any, params: Any) -> CreateMessageResult:
    text = params.messages[0].content.text.upper()
    return CreateMessageResult(
        role="assistant", content=TextContent(type="text", text=text), model="m"
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_2025_06_18_sdk_client_to_a_2026_07_28_server(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcp.client.session.LATEST_HANDSHAKE_VERSION", "2025-06-18")
    inner = target(tmp_path, "2026-07-28")
    steps: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append((progress, message))

    async def call(server: Any) -> None:
        async with SdkClient(
            server, mode="legacy", elicitation_callback=sdk_elicit, sampling_callback=sdk_sample,
            read_timeout_seconds=20,
        ) as client:  # fmt: skip
            assert client.protocol_version == "2025-06-18"
            result = await client.call_tool("everything", {}, progress_callback=on_progress)
            assert not result.is_error, text_of(result)
            assert text_of(result) == "Ann/HI/2026-07-28"

    with anyio.fail_after(60):
        if transport == "stdio":
            command = proxy_command("2026-07-28", inner)
            await call(StdioServerParameters(command=command[0], args=command[1:]))
        else:
            port = free_port()
            async with served(proxy_command("2026-07-28", inner, port)):
                await call(f"http://127.0.0.1:{port}/mcp")
    assert steps[-1] == (2, "asked") and (1, "asking") in steps


async def sample(params: Any) -> dict[str, Any]:
    text = params.messages[0].content.text.upper()
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_2026_07_28_client_to_a_2025_03_26_stdio_server(
    transport: str, tmp_path: Path
) -> None:
    inner = target(tmp_path, "2025-03-26")
    steps: list[tuple[float, str | None]] = []

    async def call(server: Any) -> None:
        async with Client(server, mode="2026-07-28", sampling=sample, tasks=True) as client:
            result = await client.call_tool(
                "everything", {}, progress=lambda p, t, m: steps.append((p, m))
            )
            assert text_of(result) == "-/HI/2025-03-26"
            handle = await client.start_tool("everything", {})
            assert isinstance(handle, TaskHandle)  # a task of the proxy's: the target has none
            assert text_of(await handle.result()) == "-/HI/2025-03-26"

    with anyio.fail_after(60):
        if transport == "stdio":
            await call(proxy_command("2025-03-26", inner))
        else:
            port = free_port()
            async with served(proxy_command("2025-03-26", inner, port)):
                await call(f"http://127.0.0.1:{port}/mcp")
    assert (1, "asking") in steps and (2, "asked") in steps
