"""A bounded wait for long legacy requests (issue 31): a 2025-11-25 POST still waiting after
`poll_seconds` (a `tasks/result` of a running task, a slow tool) has its event stream closed
after an event id and a `retry` field, as 2025-11-25 Streamable HTTP allows; the client GETs
with `Last-Event-ID` and the answer comes there. Our client polls again on its own. Older
revisions, whose clients were never told to poll, keep waiting on the POST."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import httpx
import pytest

from mcpio import Client, Context, Server
from mcpio.tasks._client import TaskHandle
from mcpio.transports._sse import SseParser
from tests.support import ACCEPT, initialize, serve_app

pytestmark = pytest.mark.anyio

POLL = 0.5


def make_server() -> Server:
    server = Server("polls", "1.0")

    @server.tool(task="optional")
    async def slow(ctx: Context, seconds: float) -> str:
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    return server


def events(body: bytes) -> tuple[list[dict[str, Any]], str | None, float | None]:
    parser = SseParser()
    frames = [json.loads(e.data) for e in parser.feed(body) if e.data]
    return frames, parser.last_event_id, parser.retry


async def open_session(http: httpx.AsyncClient, url: str, version: str) -> dict[str, str]:
    opened = await http.post(url, json=initialize(version), headers={"accept": ACCEPT})
    headers = {
        "accept": ACCEPT,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": version,
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=initialized, headers=headers)).status_code == 202
    return headers


async def test_a_long_post_is_closed_for_polling_and_answered_on_the_resumed_stream() -> None:
    server = make_server()
    async with serve_app(server.http_app(poll_seconds=POLL)) as served:
        url = f"{served.url}/mcp"
        async with httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, url, "2025-11-25")
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "slow", "arguments": {"seconds": 3.0}}}  # fmt: skip
            started = time.monotonic()
            posted = await http.post(url, json=call, headers=headers)
            waited = time.monotonic() - started
            assert posted.headers["content-type"].startswith("text/event-stream")
            frames, last_id, retry = events(posted.content)
            assert frames == [] and last_id is not None and retry == 0.2
            assert POLL <= waited < 2.5  # closed at the bound, before the tool ended (3 s)
            # Another request may not take the id while the first is still served.
            again = await http.post(url, json=call, headers=headers)
            assert again.status_code == 400
            answers: list[dict[str, Any]] = []
            polls = 0
            while not answers:
                polls += 1
                resume = {**headers, "last-event-id": last_id}
                got = await http.get(url, headers=resume)
                assert got.status_code == 200
                answers, new_id, _ = events(got.content)
                assert answers or new_id not in (None, last_id)  # a new id at each close
                last_id = new_id or last_id
            assert polls >= 2  # the tool took 3 s: at least one resumed stream was closed too
            assert answers[0]["id"] == 1
            assert answers[0]["result"]["content"][0]["text"] == "slept 3.0"
            # Once answered the stream is gone: its id opens the session's own GET stream.
            stale = {**headers, "last-event-id": last_id}
            async with http.stream("GET", url, headers=stale) as background:
                assert background.status_code == 200
                with anyio.move_on_after(1.0):
                    async for chunk in background.aiter_bytes():
                        assert b"data:" not in chunk  # none of the old stream's answers again


async def test_older_revisions_keep_waiting_on_the_post() -> None:
    server = make_server()
    async with serve_app(server.http_app(poll_seconds=POLL)) as served:
        url = f"{served.url}/mcp"
        async with httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, url, "2025-06-18")
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "slow", "arguments": {"seconds": 1.2}}}  # fmt: skip
            posted = await http.post(url, json=call, headers=headers)
            assert posted.json()["result"]["content"][0]["text"] == "slept 1.2"


async def test_our_client_polls_a_task_result_transparently() -> None:
    server = make_server()
    async with serve_app(server.http_app(poll_seconds=POLL)) as served:
        url = f"{served.url}/mcp"
        async with Client(url, mode="2025-11-25", tasks=True) as client:
            await client.list_tools()
            handle = await client.start_tool("slow", {"seconds": 2.5})
            assert isinstance(handle, TaskHandle)
            with anyio.fail_after(20):
                raw = await client.task_request("tasks/result", {"taskId": handle.task_id})
            assert raw["content"][0]["text"] == "slept 2.5"
            plain = await client.call_tool("slow", {"seconds": 1.5})
            assert plain.content[0].text == "slept 1.5"  # type: ignore[union-attr]


@pytest.mark.peers
async def test_the_official_python_sdk_client_polls_too() -> None:
    """The official Python SDK's client (mcp 2.3.0) resumes a closed POST stream with
    `Last-Event-ID`: a 4 s tool answered through a 0.5 s bound."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    server = make_server()
    async with serve_app(server.http_app(poll_seconds=POLL)) as served:
        with anyio.fail_after(30):
            async with streamable_http_client(f"{served.url}/mcp") as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    opened = await session.initialize()
                    assert opened.protocol_version == "2025-11-25"
                    started = time.monotonic()
                    result = await session.call_tool("slow", {"seconds": 4.0})
                    assert result.content[0].text == "slept 4.0"  # type: ignore[union-attr]
                    assert time.monotonic() - started < 10
