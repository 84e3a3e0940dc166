"""`proxy_server`: the revision bridge, both ways (issue 36)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import anyio
import pytest

from mcpio import Client, Context, McpError, Server
from mcpio.client._proxy import proxy_server
from mcpio.tasks._client import TaskHandle
from tests.support import free_port

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"v": {"type": "string"}}}


def target_server() -> Server:
    server = Server("target")
    server.runs = 0  # type: ignore[attr-defined]

    @server.tool()
    async def add(a: int, b: int) -> str:
        return str(a + b)

    @server.tool(task="optional")
    async def everything(ctx: Context) -> str:
        server.runs += 1  # type: ignore[attr-defined]
        await ctx.progress(1, 3, "starting")
        # 2025-03-26 has no elicitation (it came with 2025-06-18): that target only samples
        name = await ctx.elicit("Name?", SCHEMA) if ctx.revision >= "2025-06-18" else None
        sampled = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "hi"}}], 10
        )
        await ctx.progress(2, 3, "asked")
        await ctx.info("logged")
        text = getattr(sampled.content, "text", "?")
        return f"{(name.content or {}).get('v') if name else '-'}/{text}"

    @server.tool()
    async def fails() -> str:
        from mcpio import ProtocolError

        raise ProtocolError(-32002, "gone fishing", {"x": 1})

    @server.resource("data://one", mime_type="text/plain")
    def one() -> str:
        return "one"

    @server.prompt()
    def greet(who: str) -> str:
        return f"Hello {who}"

    return server


async def elicit(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"v": "Ann"}}


async def sample(params: Any) -> dict[str, Any]:
    text = params.messages[0].content.text
    return {"role": "assistant", "content": {"type": "text", "text": text.upper()}, "model": "m"}


def answer(target_mode: str) -> str:
    return "-/HI" if target_mode == "2025-03-26" else "Ann/HI"


BRIDGES = [
    ("2026-07-28", "2025-06-18"),  # a modern-only target, a legacy client
    ("2025-03-26", "2026-07-28"),  # a legacy target, a modern client
    ("2025-06-18", "2025-11-25"),
    ("2026-07-28", "2026-07-28"),
]


@pytest.mark.parametrize(("target_mode", "client_mode"), BRIDGES)
async def test_the_revision_bridge(target_mode: str, client_mode: str) -> None:
    target = target_server()
    proxy = proxy_server(target, mode=target_mode)
    steps: list[tuple[float, str | None]] = []
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async with Client(
        proxy, mode=client_mode, elicitation=elicit, sampling=sample, on_log=on_log
    ) as client:
        if client_mode != "2026-07-28":
            await client.set_log_level("info")
        tools = [t.name for t in (await client.list_tools()).tools]
        assert tools == ["add", "everything", "fails"]
        assert (await client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"  # type: ignore[union-attr]
        result = await client.call_tool(
            "everything", {}, progress=lambda p, t, m: steps.append((p, m))
        )
        assert result.content[0].text == answer(target_mode)  # type: ignore[union-attr]
        # A legacy target's tool runs once, its questions held across the client's rounds; a
        # 2026-07-28 target runs it again at each of its own rounds, as it would without us.
        assert target.runs == (3 if target_mode == "2026-07-28" else 1)  # type: ignore[attr-defined]
        assert set(steps) == {(1, "starting"), (2, "asked")} and steps[-1] == (2, "asked")
        with pytest.raises(McpError) as caught:
            await client.call_tool("fails", {})
        assert (caught.value.code, caught.value.data) == (-32002, {"x": 1})
        read = await client.read_resource("data://one")
        assert read.contents[0].text == "one"  # type: ignore[union-attr]
        prompt = await client.get_prompt("greet", {"who": "Bo"})
        assert prompt.messages[0].content.text == "Hello Bo"  # type: ignore[union-attr]
    if client_mode != "2026-07-28":  # a modern client asked for no logs
        assert logs == ["logged"]


@pytest.mark.parametrize(
    ("target_mode", "client_mode"), [("2026-07-28", "2025-11-25"), ("2025-03-26", "2026-07-28")]
)
async def test_a_task_through_the_bridge(target_mode: str, client_mode: str) -> None:
    target = target_server()
    proxy = proxy_server(target, mode=target_mode)
    async with Client(
        proxy, mode=client_mode, tasks=True, elicitation=elicit, sampling=sample
    ) as client:
        await client.list_tools()
        handle = await client.start_tool("everything", {})
        assert isinstance(handle, TaskHandle)
        result = await handle.result()
        assert result.content[0].text == answer(target_mode)  # type: ignore[union-attr]


DYING = """
import os
from mcpio import Server

server = Server("dying")


@server.tool()
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool()
def die() -> str:
    os._exit(3)


server.run_stdio()
"""


@pytest.mark.parametrize("target_mode", ["2025-06-18", "2026-07-28"])
async def test_a_target_that_goes_away_reconnects(target_mode: str, tmp_path: Any) -> None:
    script = tmp_path / "dying.py"
    script.write_text(DYING)
    proxy = proxy_server([sys.executable, str(script)], mode=target_mode)
    async with Client(proxy, mode="2025-06-18") as client:
        with anyio.fail_after(30):
            assert (await client.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"  # type: ignore[union-attr]
            with pytest.raises(McpError) as caught:
                await client.call_tool("die", {})
            assert caught.value.code == -32603
            assert "next call connects again" in caught.value.message
            again = await client.call_tool("add", {"a": 2, "b": 2})  # a new target process
        assert again.content[0].text == "4"  # type: ignore[union-attr]


async def test_mount_of_a_proxy() -> None:
    main = Server("main")
    main.mount(proxy_server(target_server(), mode="2025-06-18"), namespace="remote")
    async with Client(main, elicitation=elicit, sampling=sample) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["remote_add", "remote_everything", "remote_fails"]
        assert (await client.call_tool("remote_add", {"a": 2, "b": 3})).content[0].text == "5"  # type: ignore[union-attr]
        done = await client.call_tool("remote_everything", {})
        assert done.content[0].text == "Ann/HI"  # type: ignore[union-attr]


def _mcpio() -> list[str]:
    return [sys.executable, "-m", "mcpio"]


@pytest.mark.slow
async def test_mcpio_proxy_over_stdio_bridges_eras(tmp_path: Any) -> None:
    script = tmp_path / "dying.py"
    script.write_text(DYING)
    command = [*_mcpio(), "proxy", "--mode", "2025-06-18", "--", sys.executable, str(script)]
    with anyio.fail_after(60):
        async with Client(command, mode="2026-07-28") as client:
            assert (await client.call_tool("add", {"a": 4, "b": 5})).content[0].text == "9"  # type: ignore[union-attr]


@pytest.mark.slow
async def test_mcpio_proxy_over_http(tmp_path: Any) -> None:
    script = tmp_path / "dying.py"
    script.write_text(DYING)
    port = free_port()
    command = [*_mcpio(), "proxy", "--transport", "http", "--port", str(port), "--mode", "2026-07-28", "--", sys.executable, str(script)]  # fmt: skip
    process = await anyio.open_process(command, stderr=subprocess.PIPE)
    try:
        assert process.stderr is not None
        with anyio.fail_after(60):
            await process.stderr.receive()  # the line saying where it serves
            async with Client(f"http://127.0.0.1:{port}/mcp", mode="2025-06-18") as client:
                assert (await client.call_tool("add", {"a": 1, "b": 5})).content[0].text == "6"  # type: ignore[union-attr]
    finally:
        process.terminate()
        await process.wait()


@pytest.mark.parametrize(
    ("target_mode", "client_mode", "code"),
    [("2025-11-25", "2026-07-28", -32021), ("2026-07-28", "2025-11-25", -32601)],
)
async def test_a_question_the_client_cannot_answer_is_its_error(
    target_mode: str, client_mode: str, code: int
) -> None:
    proxy = proxy_server(target_server(), mode=target_mode)
    async with Client(proxy, mode=client_mode, elicitation=elicit) as client:  # no sampling
        with pytest.raises(McpError) as caught:
            await client.call_tool("everything", {})
        assert caught.value.code == code


async def test_a_client_as_the_target() -> None:
    target = Client(target_server(), mode="2025-06-18")
    proxy = proxy_server(target)
    async with Client(proxy, mode="2026-07-28", elicitation=elicit, sampling=sample) as client:
        done = await client.call_tool("everything", {})
        assert done.content[0].text == "Ann/HI"  # type: ignore[union-attr]
