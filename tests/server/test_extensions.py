"""A user's own protocol extension (`mcpio.server.Extension`) served beside Tasks and Apps, in
both eras, as a client sees it: declared in `initialize` and `server/discover`, its method
answered (plain params in, a plain result out), its hooks on the request path (the context, a
tool call, the tools listing, the lifespan), and the refusals of a second extension that
clashes with it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcpio import Client, Server
from mcpio._core.errors import McpError
from mcpio._core.handlers import ToolEntry
from mcpio.apps import UI_EXTENSION, UiApp
from mcpio.server import CallNextTool, Context, Extension, ToolCall

pytestmark = pytest.mark.anyio

MODES = ["2025-11-25", "2026-07-28"]
AUDIT = "com.example/audit"
TASKS = "io.modelcontextprotocol/tasks"


class Audit(Extension):
    """Counts the calls of each tool, hides tools whose name starts with `_` from clients that
    do not declare the extension, and answers `audit/report` with the counts."""

    id = AUDIT

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.running = 0
        self.seen_clients: list[str | None] = []

    def settings(self) -> Mapping[str, Any] | None:
        return {"report": True}

    def methods(self) -> Mapping[str, Any]:
        async def report(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
            tool = params.get("tool")
            return {"calls": self.calls if tool is None else {tool: self.calls.get(tool, 0)}}

        return {"audit/report": report}

    def open_request(self, ctx: Context, params: Any, session: Any) -> None:
        self.seen_clients.append(ctx.client_info.name if ctx.client_info else None)

    async def call_tool(self, call: ToolCall, call_next: CallNextTool) -> Any:
        self.calls[call.name] = self.calls.get(call.name, 0) + 1
        return await call_next(call)

    def list_tools(self, ctx: Context, tools: Mapping[str, ToolEntry]) -> Mapping[str, ToolEntry]:
        extensions = getattr(ctx.client_capabilities, "extensions", None) or {}
        if AUDIT in extensions:
            return tools
        return {name: entry for name, entry in tools.items() if not name.startswith("_")}

    def lifespan(self, server: Any) -> Any:
        @asynccontextmanager
        async def running() -> AsyncIterator[None]:
            self.running += 1
            try:
                yield
            finally:
                self.running -= 1

        return running()


def audited_server() -> tuple[Server, Audit]:
    server = Server("audited", "1.0")
    audit = Audit()
    server.add_extension(audit)

    @server.tool(task="optional")
    async def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return text

    @server.tool(app=UiApp("ui://panel"))
    async def _internal() -> str:  # pyright: ignore[reportUnusedFunction]
        return "hidden"

    return server, audit


@pytest.mark.parametrize("mode", MODES)
async def test_the_extension_is_declared_beside_tasks_and_apps(mode: str) -> None:
    server, _ = audited_server()
    async with Client(server, mode=mode) as client:
        if client.modern:
            await client.discover()
        assert client.server_capabilities is not None
        extensions = client.server_capabilities.extensions or {}
    assert extensions.get(AUDIT) == {"report": True}
    assert UI_EXTENSION in extensions
    # 2025-11-25 declares tasks natively (capabilities.tasks), 2026-07-28 as an extension
    assert (TASKS in extensions) == (mode == "2026-07-28")


@pytest.mark.parametrize("mode", MODES)
async def test_its_method_is_answered_in_either_era(mode: str) -> None:
    server, _ = audited_server()
    async with Client(server, mode=mode) as client:
        await client.call_tool("echo", {"text": "a"})
        await client.call_tool("echo", {"text": "b"})
        report = await client.extension_request("audit/report", {"tool": "echo"})
    assert report["calls"] == {"echo": 2}
    assert ("resultType" in report) == (mode == "2026-07-28")


@pytest.mark.parametrize("mode", MODES)
async def test_its_hooks_see_the_context_and_the_listing(mode: str) -> None:
    server, audit = audited_server()
    async with Client(server, mode=mode) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        running = audit.running
    assert (listed, running) == (["echo"], 1)
    assert audit.seen_clients and audit.seen_clients[-1] == "mcpio"
    assert audit.running == 0


async def test_a_task_call_passes_through_its_tool_hook() -> None:
    server, audit = audited_server()
    async with Client(server, mode="2026-07-28", tasks=True) as client:
        handle = await client.request("tools/call", {"name": "echo", "arguments": {"text": "t"}})
        result = await handle.result()
    assert result.content[0].text == "t"
    assert audit.calls == {"echo": 1}


async def test_an_unknown_extension_method_is_still_not_found() -> None:
    server, _ = audited_server()
    async with Client(server, mode="2026-07-28") as client:
        with pytest.raises(McpError) as caught:
            await client.extension_request("audit/nothing", {})
    assert caught.value.code == -32601


class Clashing(Extension):
    id = "com.example/other"

    def methods(self) -> Mapping[str, Any]:
        async def report(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
            return {}

        return {"audit/report": report}


def test_a_second_extension_defining_the_same_method_is_refused_naming_both() -> None:
    server, _ = audited_server()
    with pytest.raises(ValueError, match="'com.example/other' and 'com.example/audit'"):
        server.add_extension(Clashing())


def test_an_extension_served_twice_is_refused() -> None:
    server, _ = audited_server()
    with pytest.raises(ValueError, match="served already"):
        server.add_extension(Audit())
