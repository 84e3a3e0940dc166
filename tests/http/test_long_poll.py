"""A bounded wait for long legacy requests (issue 31): a 2025-11-25 POST still waiting after
`poll_seconds` (a `tasks/result` of a running task, a slow tool) has its event stream closed
after an event id and a `retry` field, as 2025-11-25 Streamable HTTP allows; the client GETs
with `Last-Event-ID` and the answer comes there. Our client polls again on its own. Older
revisions, whose clients were never told to poll, keep waiting on the POST."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from mcpio import Client, Context, Server
from mcpio.http._sessions import Outbox
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


@dataclass
class Poll:
    """One GET with Last-Event-ID: its status, the answers on it, the event id it was closed
    with (None: none) and the id it resumed."""

    status: int
    answers: list[dict[str, Any]]
    closed_with: str | None
    resumed: str


@dataclass
class LongPost:
    """What a client saw of one 3 s tool call on a 2025-11-25 session bound to POLL seconds."""

    content_type: str  # of the POST's answer
    frames: list[dict[str, Any]]  # on the POST's stream, before it was closed
    closed_with: str | None  # the POST stream's last event id
    retry: float | None  # the POST stream's `retry` field, in seconds
    waited: float  # seconds until the POST's stream was closed
    again: int  # the status of the same id sent again while the call was still served
    polls: list[Poll]  # the resumed streams until the answer, in order
    stale: int  # the status of a GET resuming the answered stream's id
    stale_chunks: list[bytes]  # what that GET carried in its first second


async def first_second(
    http: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> tuple[int, list[bytes]]:
    """The status of a GET stream and the chunks it carried in its first second."""
    chunks: list[bytes] = []
    async with http.stream("GET", url, headers=headers) as background:
        with anyio.move_on_after(1.0):
            async for chunk in background.aiter_bytes():
                chunks.append(chunk)
    return background.status_code, chunks


@pytest.fixture(scope="module")
async def long_post() -> LongPost:
    """The long POST of the module's tests below, driven once: the tool takes 3 s."""
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
            frames, closed_with, retry = events(posted.content)
            # Another request may not take the id while the first is still served.
            again = await http.post(url, json=call, headers=headers)
            polls: list[Poll] = []
            last_id = closed_with
            with anyio.fail_after(20):
                while last_id is not None:
                    got = await http.get(url, headers={**headers, "last-event-id": last_id})
                    answers, new_id, _ = events(got.content)
                    polls.append(Poll(got.status_code, answers, new_id, last_id))
                    if answers or got.status_code != 200 or new_id in (None, last_id):
                        last_id = new_id or last_id
                        break  # answered, or a close the tests below refuse
                    last_id = new_id
            stale, chunks = 0, []
            if last_id is not None:  # None: the POST's stream was closed without an id
                stale, chunks = await first_second(http, url, {**headers, "last-event-id": last_id})
    return LongPost(
        posted.headers["content-type"],
        frames,
        closed_with,
        retry,
        waited,
        again.status_code,
        polls,
        stale,
        chunks,
    )


async def test_a_long_post_is_answered_with_an_event_stream(long_post: LongPost) -> None:
    assert long_post.content_type.startswith("text/event-stream")


async def test_a_long_post_is_closed_at_the_bound_with_an_event_id_and_a_retry(
    long_post: LongPost,
) -> None:
    assert long_post.frames == [] and long_post.closed_with is not None and long_post.retry == 0.2
    assert POLL <= long_post.waited < 2.5  # closed at the bound, before the tool ended (3 s)


async def test_the_id_of_a_request_still_served_is_refused(long_post: LongPost) -> None:
    assert long_post.again == 400


async def test_a_resumed_stream_still_waiting_is_closed_again_with_a_new_event_id(
    long_post: LongPost,
) -> None:
    polls = long_post.polls
    assert [poll.status for poll in polls] == [200] * len(polls)
    for poll in polls:
        assert poll.answers or poll.closed_with not in (None, poll.resumed)  # a new id each time
    assert len(polls) >= 2  # the tool took 3 s: at least one resumed stream was closed too


async def test_the_answer_of_a_long_post_comes_on_a_resumed_stream(long_post: LongPost) -> None:
    answers = long_post.polls[-1].answers
    assert answers[0]["id"] == 1
    assert answers[0]["result"]["content"][0]["text"] == "slept 3.0"


async def test_once_answered_the_stream_s_id_opens_the_session_s_own_stream(
    long_post: LongPost,
) -> None:
    assert long_post.stale == 200
    for chunk in long_post.stale_chunks:
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


async def test_an_outbox_wait_ends_when_its_time_is_up_or_the_outbox_closes() -> None:
    """The POST's wait for its answers (the bound of a polled stream, a stream's keep-alive):
    None once the time is up with nothing queued, what is queued otherwise, and the end of the
    outbox once it is closed, also for a reader already waiting."""
    outbox = Outbox(4)
    assert await outbox.receive(0.01) is None
    outbox.put(b"first")
    assert await outbox.receive(0.01) == b"first"
    ended: list[bool] = []

    async def waiting() -> None:
        try:
            await outbox.receive(30.0)
        except anyio.EndOfStream:
            ended.append(True)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(waiting)
        await anyio.sleep(0.01)
        outbox.close()
    assert ended == [True]
    with pytest.raises(anyio.EndOfStream):
        await outbox.receive(0.01)
