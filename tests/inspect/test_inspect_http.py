"""`mcpio inspect --upstream URL`: the HTTP relay in front of the example server, both eras,
JSON and SSE answers, the legacy GET stream and DELETE: our Client works through it, nothing it
does is flagged, answers pass unchanged, and a request whose headers disagree with its body is
flagged (and still relayed, to get the upstream's own refusal)."""

from __future__ import annotations

import importlib.util
import io
import json
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcpio import Client
from mcpio.inspect._http_proxy import ProxyApp
from mcpio.inspect._replay import replay_transcript
from mcpio.inspect._transcript import Recorder, read_transcript
from mcpio.tasks._client import TaskHandle
from tests.support import (
    ACCEPT,
    ENVELOPE,
    ROOT,
    free_port,
    headers_for,
    initialize,
    modern,
    serve_app,
    text_of,
    until,
)

sys.path.insert(0, str(ROOT / "examples"))
from everything_server import server as everything  # noqa: E402

EXAMPLE = ROOT / "examples" / "everything_server.py"

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def through_proxy() -> AsyncIterator[tuple[str, str, Recorder]]:
    """(proxy URL, upstream URL, recorder) for the example server behind the relay."""
    recorder = Recorder(io.StringIO())
    async with serve_app(everything.http_app()) as upstream:
        async with serve_app(ProxyApp(f"{upstream.url}/mcp", recorder)) as proxy:
            yield f"{proxy.url}/mcp", f"{upstream.url}/mcp", recorder


async def elicit(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"username": "a", "email": "a@example.com"}}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_our_client_works_through_the_relay_unflagged(mode: str) -> None:
    async with through_proxy() as (url, _, recorder):
        with anyio.fail_after(30):
            async with Client(url, mode=mode, elicitation=elicit) as client:
                simple = await client.call_tool("test_simple_text", {})
                assert text_of(simple) == "This is a simple text response for testing."
                seen: list[float] = []
                await client.call_tool(
                    "test_tool_with_progress", {}, progress=lambda p, t, m: seen.append(p)
                )
                assert seen == [0, 50, 100]  # an SSE answer
                await client.call_tool("test_elicitation", {"message": "who?"})
                await client.read_resource("test://static-text")
                await client.list_prompts()
        kinds = {(e.http or {}).get("content_type") for e in recorder.entries}
        assert {"application/json", "text/event-stream"} <= kinds
        if mode == "legacy":
            assert any(e.session for e in recorder.entries)
        assert recorder.findings() == []


async def test_answers_pass_unchanged_and_mismatched_headers_are_flagged() -> None:
    frame = modern(7, "tools/call", name="test_simple_text", arguments={})
    async with through_proxy() as (url, upstream, recorder):
        async with httpx.AsyncClient(timeout=10) as http:
            body = json.dumps(frame)
            direct = await http.post(upstream, content=body, headers=headers_for(frame))
            relayed = await http.post(url, content=body, headers=headers_for(frame))
            assert (relayed.status_code, relayed.content) == (direct.status_code, direct.content)
            assert recorder.findings() == []
            wrong = {**headers_for(frame), "mcp-name": "another_tool"}
            refused = await http.post(url, content=body, headers=wrong)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == -32020  # the upstream's own answer
    (finding,) = recorder.findings()
    assert (finding.rule, finding.path, finding.severity) == (
        "http.header-mismatch",
        "header mcp-name",
        "error",
    )


@dataclass
class LegacyRelay:
    """One legacy session through the relay: opened, initialized, its GET stream, DELETE, then
    a request on the deleted session; what the relay and the upstream answered."""

    session: str
    initialized: int
    sessions_open: set[str]
    get_status: int
    get_content_type: str
    deleted: int
    sessions_left: dict[str, Any]
    gone: int
    recorder: Recorder


@pytest.fixture(scope="module")
async def legacy_relay(anyio_backend: str) -> LegacyRelay:
    recorder = Recorder(io.StringIO())
    async with serve_app(everything.http_app()) as upstream:
        proxy_app = ProxyApp(f"{upstream.url}/mcp", recorder)
        async with serve_app(proxy_app) as proxy, httpx.AsyncClient(timeout=10) as http:
            url = f"{proxy.url}/mcp"
            plain = {"content-type": "application/json", "accept": ACCEPT}
            opened = await http.post(url, content=json.dumps(initialize()), headers=plain)
            session = opened.headers["mcp-session-id"]
            legacy = {**plain, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
            ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            initialized = await http.post(url, content=json.dumps(ready), headers=legacy)
            sessions_open = set(proxy_app.sessions)
            with anyio.fail_after(10):
                async with http.stream(
                    "GET", url, headers={**legacy, "accept": "text/event-stream"}
                ) as get:
                    get_status, get_content_type = get.status_code, get.headers["content-type"]
            deleted = await http.delete(url, headers=legacy)
            sessions_left = dict(proxy_app.sessions)
            gone = await http.post(url, content=json.dumps(ready), headers=legacy)
    return LegacyRelay(
        session=session,
        initialized=initialized.status_code,
        sessions_open=sessions_open,
        get_status=get_status,
        get_content_type=get_content_type,
        deleted=deleted.status_code,
        sessions_left=sessions_left,
        gone=gone.status_code,
        recorder=recorder,
    )


async def test_the_relay_tracks_a_legacy_session_it_relayed_open(legacy_relay: LegacyRelay) -> None:
    assert legacy_relay.initialized == 202
    assert legacy_relay.sessions_open == {legacy_relay.session}


async def test_a_legacy_get_stream_is_relayed(legacy_relay: LegacyRelay) -> None:
    assert legacy_relay.get_status == 200
    assert legacy_relay.get_content_type.startswith("text/event-stream")


async def test_a_legacy_delete_is_relayed_and_ends_the_session(legacy_relay: LegacyRelay) -> None:
    assert legacy_relay.deleted in (200, 204)
    assert legacy_relay.sessions_left == {}
    assert legacy_relay.gone == 404  # the upstream's answer, relayed


async def test_the_recorded_legacy_exchanges_carry_their_session(
    legacy_relay: LegacyRelay,
) -> None:
    entries, session = legacy_relay.recorder.entries, legacy_relay.session
    assert [e.session for e in entries][:3] == [None, session, session]
    assert {e.session for e in entries[1:]} == {session}


async def test_a_legacy_get_stream_and_delete_are_not_flagged(legacy_relay: LegacyRelay) -> None:
    assert legacy_relay.recorder.findings() == []


async def test_modern_exchanges_are_checked_apart() -> None:
    """Two clients may use the same id at once on 2026-07-28: not an id reused. What the last
    server/discover declared is what later exchanges are held to."""
    frame = modern(1, "tools/call", name="test_simple_text", arguments={})
    recorder = Recorder(io.StringIO())
    async with serve_app(everything.http_app()) as upstream:
        proxy_app = ProxyApp(f"{upstream.url}/mcp", recorder)
        async with serve_app(proxy_app) as proxy, httpx.AsyncClient(timeout=10) as http:
            url = f"{proxy.url}/mcp"
            body, headers = json.dumps(frame), headers_for(frame)
            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(lambda: http.post(url, content=body, headers=headers))
            assert proxy_app.discovered is None
            discover = modern(2, "server/discover")
            await http.post(url, content=json.dumps(discover), headers=headers_for(discover))
            assert proxy_app.discovered is not None and "tools" in proxy_app.discovered
            assert recorder.findings() == []
    assert len(recorder.entries) == 8


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_recorded_http_session_replays_without_differences(
    mode: str, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    with transcript.open("w") as jsonl:
        recorder = Recorder(io.StringIO(), jsonl)
        async with serve_app(everything.http_app()) as upstream:
            async with serve_app(ProxyApp(f"{upstream.url}/mcp", recorder)) as proxy:
                async with Client(f"{proxy.url}/mcp", mode=mode, elicitation=elicit) as client:
                    await client.call_tool("test_simple_text", {})
                    await client.call_tool("test_tool_with_progress", {}, progress=lambda *_: None)
                    await client.call_tool("test_elicitation", {"message": "who?"})
                    await client.read_resource("test://static-text")
    entries = read_transcript(transcript)
    async with serve_app(everything.http_app()) as again:
        out = io.StringIO()
        with anyio.fail_after(30):
            found = await replay_transcript(entries, f"{again.url}/mcp", 10, out)
    assert found == [], out.getvalue()
    assert out.getvalue() == "mcpio replay: 0 differences\n"


async def test_a_legacy_request_without_the_negotiated_version_header_is_flagged() -> None:
    async with through_proxy() as (url, _, recorder):
        async with httpx.AsyncClient(timeout=10) as http:
            plain = {"content-type": "application/json", "accept": ACCEPT}
            opened = await http.post(url, content=json.dumps(initialize()), headers=plain)
            session = {**plain, "mcp-session-id": opened.headers["mcp-session-id"]}
            ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, content=json.dumps(ready), headers=session)
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            await http.post(url, content=json.dumps(listing), headers=session)
    found = [(f.rule, f.path, f.severity, f.frame) for f in recorder.findings()]
    listed = next(e.index for e in recorder.entries if e.summary().get("method") == "tools/list")
    assert found == [
        ("http.protocol-version-header", "header mcp-protocol-version", "warning", listed)
    ]


async def test_the_command_relays_http_and_reports_when_stopped(tmp_path: Path) -> None:
    """`mcpio inspect --upstream URL --listen HOST:PORT` as a process: it relays until SIGINT,
    then prints the summary and writes the transcript and the report."""
    port = free_port()
    report, transcript = tmp_path / "r.html", tmp_path / "t.jsonl"
    async with serve_app(everything.http_app()) as upstream:
        command = [
            sys.executable, "-m", "mcpio", "inspect", "--upstream", f"{upstream.url}/mcp",
            "--listen", f"127.0.0.1:{port}", "--jsonl", str(transcript), "--report", str(report),
        ]  # fmt: skip
        process = await anyio.open_process(command)
        try:
            url = f"http://127.0.0.1:{port}/mcp"

            async def listening() -> bool:
                try:
                    async with httpx.AsyncClient() as http:
                        await http.get(url)
                    return True
                except httpx.HTTPError:
                    return False

            await until(listening, 20)
            async with Client(url, mode="2026-07-28") as client:
                await client.call_tool("test_simple_text", {})
        finally:
            process.send_signal(signal.SIGINT)
            with anyio.fail_after(20):
                await process.wait()
        assert process.stderr is not None
        err = (await process.stderr.receive()).decode()
    assert process.returncode == 0
    assert "mcpio inspect: " in err and "0 errors, 0 warnings" in err
    entries = read_transcript(transcript)
    assert [e.direction for e in entries][-2:] == ["client->server", "server->client"]
    assert report.read_text().count('<tr class="frame') == len(entries)


async def test_a_client_that_leaves_closes_the_upstream_stream() -> None:
    """A listen stream the client drops is closed upstream too: with room for two upstream
    connections, three dropped streams leave the relay still answering (it used to keep every
    upstream stream open, and stopped answering once its pool was full)."""
    recorder = Recorder(io.StringIO())
    pool = httpx.AsyncClient(timeout=None, limits=httpx.Limits(max_connections=2))
    listen = modern(1, "subscriptions/listen", notifications={"toolsListChanged": True})
    async with serve_app(everything.http_app()) as upstream:
        proxy_app = ProxyApp(f"{upstream.url}/mcp", recorder, pool)
        async with serve_app(proxy_app) as proxy:
            url = f"{proxy.url}/mcp"
            for _ in range(3):
                async with httpx.AsyncClient(timeout=10) as http:
                    async with http.stream(
                        "POST", url, content=json.dumps(listen), headers=headers_for(listen)
                    ) as stream:
                        assert stream.status_code == 200
                        async for _ in stream.aiter_bytes():
                            break  # the acknowledgement: the stream is open
            listed = modern(2, "tools/list")
            with anyio.fail_after(10):
                async with httpx.AsyncClient(timeout=10) as http:
                    answer = await http.post(
                        url, content=json.dumps(listed), headers=headers_for(listed)
                    )
            assert answer.status_code == 200 and answer.json()["id"] == 2
    await pool.aclose()
    assert (
        recorder.findings() == []
    )  # a listen stream the client closed is cancelled, not unanswered


async def test_the_command_stops_promptly_with_a_stream_open(tmp_path: Path) -> None:
    """SIGINT stops the HTTP relay within about a second while a listen stream is open, after
    writing the summary and the transcript (it used to wait for a second SIGINT)."""
    port = free_port()
    transcript = tmp_path / "t.jsonl"
    listen = modern(1, "subscriptions/listen", notifications={"toolsListChanged": True})
    async with serve_app(everything.http_app()) as upstream:
        command = [
            sys.executable, "-m", "mcpio", "inspect", "--upstream", f"{upstream.url}/mcp",
            "--listen", f"127.0.0.1:{port}", "--jsonl", str(transcript),
        ]  # fmt: skip
        process = await anyio.open_process(command)
        url = f"http://127.0.0.1:{port}/mcp"

        async def listening() -> bool:
            try:
                async with httpx.AsyncClient() as http:
                    await http.get(url)
                return True
            except httpx.HTTPError:
                return False

        try:
            await until(listening, 20)
            async with httpx.AsyncClient(timeout=10) as http:
                async with http.stream(
                    "POST", url, content=json.dumps(listen), headers=headers_for(listen)
                ) as stream:
                    async for _ in stream.aiter_bytes():
                        break
                    started = anyio.current_time()
                    process.send_signal(signal.SIGINT)
                    with anyio.fail_after(10):
                        await process.wait()
                    stopped = anyio.current_time() - started
        finally:
            if process.returncode is None:
                process.kill()
        assert process.stderr is not None
        err = (await process.stderr.receive()).decode()
    assert stopped < 2.0, stopped  # the grace is 0.5 s; room for a loaded 2-core machine
    assert "mcpio inspect: " in err
    methods = [e.summary().get("method") for e in read_transcript(transcript)]
    assert {"subscriptions/listen", "notifications/subscriptions/acknowledged"} <= set(methods)


def _sse(*frames: dict[str, Any]) -> bytes:
    return b"".join(b"event: message\ndata: " + json.dumps(f).encode() + b"\n\n" for f in frames)


class _Chunks(httpx.AsyncByteStream):
    """An upstream body read as a stream, one SSE event a chunk."""

    def __init__(self, body: bytes) -> None:
        self.events = [event + b"\n\n" for event in body.split(b"\n\n") if event]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self.events:
            yield event


class _QuickClient:
    """Drives the relay's ASGI app as a client that acts on an answer's bytes the moment they
    reach it (inside `send`), before the relay reads on: the worst timing a real client on a
    busy machine can have."""

    def __init__(self, app: ProxyApp) -> None:
        self.app = app
        self.session: str | None = None

    async def post(self, frame: dict[str, Any], react: Any = None) -> int:
        headers = [(b"content-type", b"application/json"), (b"accept", ACCEPT.encode())]
        if self.session is not None:
            headers += [(b"mcp-session-id", self.session.encode())]
            headers += [(b"mcp-protocol-version", b"2025-11-25")]
        done = anyio.Event()
        body = json.dumps(frame).encode()
        status = 0

        async def receive() -> dict[str, Any]:
            nonlocal body
            if body is not None:
                message, body = {"type": "http.request", "body": body}, None
                return message
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                named = dict(message["headers"]).get(b"mcp-session-id")
                self.session = named.decode() if named else self.session
            elif message.get("body") and react is not None:
                await react(message["body"])

        scope = {"type": "http", "method": "POST", "headers": headers, "query_string": b""}
        await self.app(scope, receive, send)  # type: ignore[arg-type]
        done.set()
        return status


async def test_a_client_acting_at_once_on_an_answer_is_judged_in_order() -> None:
    """Each answer frame is checked before the client can see it, and a new legacy session is
    known from its answer's headers on: a client that sends notifications/initialized the moment
    the initialize answer arrives, and answers an elicitation/create while its stream is still
    open, is not flagged (once seen as lifecycle.before-initialize and response.unknown-id)."""
    session = "s-1"
    ask = {"jsonrpc": "2.0", "id": 9, "method": "elicitation/create"}
    ask["params"] = {"message": "who?", "requestedSchema": {"type": "object", "properties": {}}}
    answers = {
        "initialize": _sse(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            }
        ),
        "tools/call": _sse(ask, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
    }

    def upstream(request: httpx.Request) -> httpx.Response:
        method = json.loads(request.content).get("method")
        if method not in answers:
            return httpx.Response(202, stream=_Chunks(b""))
        headers = {"content-type": "text/event-stream", "mcp-session-id": session}
        return httpx.Response(200, headers=headers, stream=_Chunks(answers[method]))

    recorder = Recorder(io.StringIO())
    http = httpx.AsyncClient(transport=httpx.MockTransport(upstream))
    client = _QuickClient(ProxyApp("http://upstream.test/mcp", recorder, http))

    async def ready(_: bytes) -> None:
        await client.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def answer(chunk: bytes) -> None:
        if b"elicitation/create" in chunk:
            await client.post({"jsonrpc": "2.0", "id": 9, "result": {"action": "cancel"}})

    with anyio.fail_after(10):
        await client.post(initialize(), ready)
        await client.post(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}, answer
        )
    methods = [e.summary().get("method", e.summary().get("id")) for e in recorder.entries]
    assert methods == [
        "initialize",
        0,
        "notifications/initialized",
        "tools/call",
        "elicitation/create",
        9,
        1,
    ]
    assert recorder.findings() == []


async def test_a_message_after_a_post_s_last_answer_is_a_warning() -> None:
    """stream.after-response: the server sends a notification on the POST's event stream after
    the answer to the one request the POST carried (the stream should have ended). Progress
    before the answer, and a batch's stream until its last answer, are not flagged."""
    log = {"jsonrpc": "2.0", "method": "notifications/message"}
    log["params"] = {"level": "info", "data": "late"}
    progress = {"jsonrpc": "2.0", "method": "notifications/message"}
    progress["params"] = {"level": "info", "data": "early"}
    answers = {
        "initialize": _sse(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}, "logging": {}},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            }
        ),
        "tools/call": _sse(progress, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}, log),
    }

    def upstream(request: httpx.Request) -> httpx.Response:
        method = json.loads(request.content).get("method")
        if method not in answers:
            return httpx.Response(202, stream=_Chunks(b""))
        headers = {"content-type": "text/event-stream", "mcp-session-id": "s-2"}
        return httpx.Response(200, headers=headers, stream=_Chunks(answers[method]))

    recorder = Recorder(io.StringIO())
    http = httpx.AsyncClient(transport=httpx.MockTransport(upstream))
    client = _QuickClient(ProxyApp("http://upstream.test/mcp", recorder, http))
    with anyio.fail_after(10):
        await client.post(initialize())
        await client.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await client.post(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}
        )
    found = [
        (f.rule, f.severity, recorder.entries[f.frame].summary().get("method"))
        for f in recorder.findings()
    ]
    assert found == [("stream.after-response", "warning", "notifications/message")]


class _Paced(httpx.AsyncByteStream):
    """An upstream event stream, one event a chunk, a pause before each (exchanges interleave)."""

    def __init__(self, body: bytes) -> None:
        self.events = [event + b"\n\n" for event in body.split(b"\n\n") if event]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self.events:
            await anyio.sleep(0.002)
            yield event


async def test_concurrent_frames_keep_their_order_and_a_violation_is_still_reported() -> None:
    """The checks run after forwarding (issue 37): under eight concurrent 2026-07-28 exchanges
    no frame is recorded (checked) before it was passed on, each client gets its events in the
    upstream's order, the transcript lists the server's frames in the order they were passed
    on (each exchange's request before its answers), and the one server stream that goes on
    after its answer is still flagged, on that frame."""
    late = 5  # the exchange whose stream sends a message after its answer

    def events(id: int) -> list[dict[str, Any]]:
        said = [
            {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
            for params in ({"level": "info", "data": f"{id}-a"}, {"level": "info", "data": f"{id}-b"})
        ]  # fmt: skip
        answer = {"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "content": []}}
        late_params = {"level": "info", "data": f"{id}-late"}
        after = {"jsonrpc": "2.0", "method": "notifications/message", "params": late_params}
        return [*said, answer, *([after] if id == late else [])]

    def upstream(request: httpx.Request) -> httpx.Response:
        id = json.loads(request.content)["id"]
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=headers, stream=_Paced(_sse(*events(id))))

    recorder = Recorder(io.StringIO())
    http = httpx.AsyncClient(transport=httpx.MockTransport(upstream))
    app = ProxyApp("http://upstream.test/mcp", recorder, http)
    forwarded: list[bytes] = []  # the server's frames, in the order the relay passed them on
    received: dict[int, list[bytes]] = {}

    async def exchange(id: int) -> None:
        frame = modern(id, "tools/call", name="t", arguments={})
        frame["params"]["_meta"] = {**ENVELOPE, "io.modelcontextprotocol/logLevel": "info"}
        headers = [(k.encode(), v.encode()) for k, v in headers_for(frame).items()]
        body: bytes | None = json.dumps(frame).encode()
        done = anyio.Event()

        async def receive() -> dict[str, Any]:
            nonlocal body
            if body is not None:
                message, body = {"type": "http.request", "body": body}, None
                return message
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            chunk = message.get("body", b"")
            if chunk:
                data = chunk.split(b"data: ", 1)[1].strip()
                assert data not in [e.frame for e in recorder.entries]  # not checked yet
                forwarded.append(data)
                received.setdefault(id, []).append(data)

        scope = {"type": "http", "method": "POST", "headers": headers, "query_string": b""}
        await app(scope, receive, send)  # type: ignore[arg-type]
        done.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for id in range(1, 9):
                group.start_soon(exchange, id)
        await anyio.sleep(0.05)  # the last checks run once the loop is free
    assert len(app.checks) == 0
    for id in range(1, 9):
        assert [json.loads(f) for f in received[id]] == events(id)
    server_frames = [e.frame for e in recorder.entries if e.direction == "server->client"]
    assert server_frames == forwarded
    assert len(set(forwarded)) > 1 and forwarded != sorted(forwarded, key=lambda f: f[-3:])
    order = [e.summary().get("id") for e in recorder.entries]
    for id in range(1, 9):  # each exchange's request (id) first, then its answer (same id)
        assert order.count(id) == 2 and order.index(id) < len(order) - order[::-1].index(id) - 1
    found = [(f.rule, recorder.entries[f.frame].frame) for f in recorder.findings()]
    late_frame = json.dumps(events(late)[-1]).encode()
    # that frame only (outside its request, its logging opt-in no longer holds either)
    assert sorted(found) == [
        ("logging.no-opt-in", late_frame),
        ("stream.after-response", late_frame),
    ]


@pytest.mark.parametrize("mode", ["2025-11-25", "2026-07-28"])
async def test_tasks_through_the_relay_are_unflagged(mode: str) -> None:
    """The example server's task tools run as tasks (2025-11-25: core; 2026-07-28: the Tasks
    extension, declared by both sides): created, polled, answered, one cancelled, with no
    finding (no method.unknown for tasks/get, no schema error for a `task` result). A fresh
    instance of the example: serving it to its end shuts its task engine down."""
    spec = importlib.util.spec_from_file_location("everything_server", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    recorder = Recorder(io.StringIO())
    async with serve_app(example.server.http_app()) as upstream:
        async with serve_app(ProxyApp(f"{upstream.url}/mcp", recorder)) as proxy:
            await _run_tasks(f"{proxy.url}/mcp", mode)
    methods = {e.summary().get("method") for e in recorder.entries}
    assert {"tasks/get", "tasks/cancel"} <= methods, methods
    assert recorder.findings() == [], recorder.findings()


async def _run_tasks(url: str, mode: str) -> None:
    with anyio.fail_after(60):
        async with Client(url, mode=mode, tasks=True, elicitation=elicit) as client:
            handle = await client.start_tool("slow_compute", {"seconds": 0.2, "label": "x"})
            assert isinstance(handle, TaskHandle)
            await handle.refresh()
            assert text_of(await handle.result()) == "computed x after 0.2 s"
            failing = await client.start_tool("failing_job", {})
            assert isinstance(failing, TaskHandle)
            assert (await failing.result()).isError
            slow = await client.start_tool("slow_compute", {"seconds": 30})
            assert isinstance(slow, TaskHandle)
            await slow.cancel()
