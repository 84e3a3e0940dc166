"""A server offering tasks and an MCP App, and a client declaring both, in one session: a
task-augmented `tools/call` followed to its end and the app's methods (its tool's typed `_meta.ui`,
its `ui://` resource read, the app's own tool called), in 2026-07-28 (the Tasks and Apps
extensions) and 2025-11-25 (native tasks, the Apps extension). The server and the client read the
extensions' frames with one codec holding every extension of the revision they offer or declare.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_wire_runtime.codec import Codec
from mcpio import Client, Context
from mcpio.apps import UI_EXTENSION, UI_MIME_TYPE, resource_ui, tool_ui
from mcpio.tasks._client import TaskHandle
from mcpio.tasks._engine import TASKS_EXTENSION
from tests.support.apps import PAGE, app_server

pytestmark = pytest.mark.anyio

APP = "ui://clock/app.html"
EXTENSIONS = {
    "2026-07-28": frozenset({TASKS_EXTENSION, UI_EXTENSION}),
    "2025-11-25": frozenset({UI_EXTENSION}),  # tasks are the revision's own there
}


def tasks_and_app_server() -> Any:
    server = app_server()

    @server.tool(task="optional")
    async def work(ctx: Context, n: int) -> str:
        await ctx.progress(0, 1, f"working on {n}")
        await anyio.sleep(0.01)
        return f"done {n}"

    return server


@pytest.mark.parametrize("mode", sorted(EXTENSIONS))
async def test_one_session_answers_a_task_augmented_call_and_the_app(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = tasks_and_app_server()
    task_codecs: list[frozenset[str]] = []
    exchange = Client._exchange

    async def noted(self: Client, codec: Codec, *args: Any, **kwargs: Any) -> bytes:
        if kwargs.get("tasks"):
            task_codecs.append(codec.extension_ids)
        return await exchange(self, codec, *args, **kwargs)

    monkeypatch.setattr(Client, "_exchange", noted)
    async with Client(server, mode=mode, tasks=True, apps=True) as client:
        handle = await client.start_tool("work", {"n": 3})
        assert isinstance(handle, TaskHandle)
        assert (await handle.result()).content[0].text == "done 3"  # type: ignore[union-attr]
        tools = {t.name: t for t in (await client.list_tools()).tools}
        shown = tool_ui(tools["show_clock"])
        assert shown is not None and shown.resourceUri == APP
        (contents,) = (await client.read_resource(APP)).contents
        assert (contents.mimeType, getattr(contents, "text", None)) == (UI_MIME_TYPE, PAGE)
        assert resource_ui(contents) is not None
        tick = await client.call_tool("tick", {})  # the app's own tool (visibility: app)
        assert tick.content[0].text == "tick"  # type: ignore[union-attr]
    assert task_codecs and set(task_codecs) == {EXTENSIONS[mode]}


@pytest.mark.parametrize("mode", sorted(EXTENSIONS))
def test_the_server_reads_an_extension_s_frames_with_every_extension_it_offers(mode: str) -> None:
    server = tasks_and_app_server()
    codec = server.extensions.codec("tasks/get", mode)
    assert codec is not None and codec.revision == mode
    assert codec.extension_ids == EXTENSIONS[mode]
    assert "tasks/get" in codec.methods
