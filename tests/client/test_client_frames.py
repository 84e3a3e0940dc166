"""The client's `tools/call` frames built without a model (its hot path) say exactly what the
validating builder says, in every revision; what that path cannot vouch for still goes through
the builder (and fails there as before)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pydantic_core
import pytest

import mcp_wire
from mcp_wire_runtime.errors import MessageBuildError, ProtocolError
from mcpio import Client, Server
from mcpio.transports.memory import memory_pair

pytestmark = pytest.mark.anyio

ARGUMENTS: list[dict[str, Any] | None] = [
    {"text": "hi"},
    None,
    {},
    {"text": 'é\u2028"quoted"', "nested": {"n": [1, 2.5, True, None, {"deep": []}]}},
]


class Recording:
    """A client transport that keeps every frame the client sends."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []

    async def send(self, data: bytes) -> None:
        self.sent.append(pydantic_core.from_json(data))
        await self.inner.send(data)

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


def make_server() -> Server:
    server = Server("frames", "1.0")

    @server.tool()
    async def echo(text: str = "", nested: dict[str, Any] | None = None) -> str:
        """Echoes its text."""
        return text

    return server


@asynccontextmanager
async def connected(revision: str) -> AsyncIterator[tuple[Client, Recording]]:
    mine, theirs = memory_pair()
    recording = Recording(mine)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(make_server().serve, theirs)
        async with Client(recording, mode=revision) as client:
            yield client, recording
        tasks.cancel_scope.cancel()


async def calls(revision: str, *, general: bool) -> list[dict[str, Any]]:
    """The tools/call frames a client sends for every variant (`general`: the builder's)."""
    async with connected(revision) as (client, recording):
        if general:
            client._frames.fast = lambda *args: None  # type: ignore[method-assign]
        for arguments in ARGUMENTS:
            result = await client.call_tool("echo", arguments)
            assert not result.isError
            await client.call_tool("echo", arguments, progress=lambda *_: None)
        await client.set_log_level("debug")
        await client.call_tool("echo", {"text": "logged"})
        return [frame for frame in recording.sent if frame.get("method") == "tools/call"]


@pytest.mark.parametrize("revision", mcp_wire.REVISIONS)
async def test_fast_frames_equal_the_builders(revision: str) -> None:
    fast = await calls(revision, general=False)
    general = await calls(revision, general=True)
    assert len(fast) == 2 * len(ARGUMENTS) + 1
    assert fast == general


@pytest.mark.parametrize("revision", ["2025-11-25", mcp_wire.REVISIONS[-1]])
async def test_arguments_that_are_not_plain_json_are_validated(revision: str) -> None:
    """Refused locally as before: by the builder, or (legacy) by the projection from the
    public models."""
    async with connected(revision) as (client, recording):
        for bad in (math.nan, object(), (1, 2)):  # a tuple is not a JSON value either
            with pytest.raises((MessageBuildError, ProtocolError)):
                await client.call_tool("echo", {"text": "x", "nested": {"n": bad}})
        with pytest.raises((MessageBuildError, ProtocolError)):
            await client.call_tool("echo", {"text": "x", 1: "not a string key"})  # type: ignore[dict-item]
        await client.call_tool("echo", {"text": "fine"})
        sent = [f for f in recording.sent if f.get("method") == "tools/call"]
        assert [f["params"]["arguments"] for f in sent] == [{"text": "fine"}]
