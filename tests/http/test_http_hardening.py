"""The HTTP server under attack and misuse (issue 17), through a real uvicorn on loopback:
every request answered exactly once or refused with its documented status, whatever its id;
nothing left behind; one client unable to starve another; bounded memory and event-loop stalls.

Clients that must count as different ones connect from different loopback addresses
(127.0.0.2, 127.0.0.3, ...): per-client bounds count the peer's address without authorization.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcpio import Context, Server
from mcpio.http._app import HttpApp
from tests.support import ACCEPT, ENVELOPE, MODERN, ROOT, Served, free_port, serve_app, until

pytestmark = pytest.mark.anyio
JSON_HEADERS = {"content-type": "application/json", "accept": ACCEPT}
MISSING = object()
# Every shape an id may take on the wire; only the last two are ids.
ID_SHAPES: dict[str, Any] = {
    "missing": MISSING,
    "null": None,
    "true": True,
    "float": 1.5,
    "object": {},
    "array": [],
    "string": "s-1",
    "integer": 7,
}
BAD_IDS = ("null", "true", "float", "object", "array")
ANSWER_SECONDS = 5.0  # the time bound on every answer here


def hardening_server() -> Server:
    server = Server("hardening")
    gate = server.gate = anyio.Event()  # type: ignore[attr-defined]

    @server.tool()
    async def echo(text: str) -> str:
        """Echoes."""
        return text

    @server.tool()
    async def hold() -> str:
        """Waits until the test opens the gate."""
        await gate.wait()
        return "released"

    @server.tool()
    async def chatty(ctx: Context, text: str) -> str:
        """Reports progress and logs before it answers."""
        await ctx.progress(1, 2)
        await ctx.log("info", "working")
        return text

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks the user something."""
        answer = await ctx.elicit("who?", {"type": "object", "properties": {}})
        return answer.action

    @server.tool()
    async def touch(count: int, size: int) -> str:
        """Says `count` times that the resource with a `size`-character URI changed."""
        for _ in range(count):
            await server.notify_resource_updated(big_uri(size))
            await anyio.sleep(0.002)  # a publisher that does other work between changes
        return "touched"

    @server.resource("demo://r", name="r")
    async def resource() -> str:
        return "r"

    return server


def big_uri(size: int) -> str:
    return "demo://" + "x" * size


@dataclass
class Running:
    app: HttpApp
    served: Served

    def client(self, address: str = "127.0.0.1", timeout: float = 10) -> httpx.AsyncClient:
        transport = httpx.AsyncHTTPTransport(local_address=address)
        return httpx.AsyncClient(base_url=self.served.url, transport=transport, timeout=timeout)


@asynccontextmanager
async def running(
    server: Server, header_timeout: float = 10.0, shutdown_timeout: int = 5, **options: Any
) -> AsyncIterator[Running]:
    app = server.http_app(**options)
    bounds = {"header_timeout": header_timeout, "shutdown_timeout": shutdown_timeout}
    async with serve_app(app, **bounds) as served:
        yield Running(app, served)


def frame_with(method: str, id: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        frame["params"] = params
    if id is not MISSING:
        frame["id"] = id
    return frame


def modern_headers(frame: dict[str, Any]) -> dict[str, str]:
    headers = {**JSON_HEADERS, "mcp-protocol-version": MODERN}
    if "id" in frame:
        headers["mcp-method"] = frame["method"]
        if frame["method"] == "tools/call":
            headers["mcp-name"] = frame["params"]["name"]
    return headers


def modern_call(id: Any, name: str = "echo", **arguments: Any) -> dict[str, Any]:
    params = {"_meta": ENVELOPE, "name": name, "arguments": arguments}
    return frame_with("tools/call", id, params)


def answers_of(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC responses in an answer (JSON or SSE), in order."""
    if response.headers.get("content-type") == "text/event-stream":
        frames = [
            json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data:")
        ]
    elif response.content:
        body = response.json()
        frames = body if isinstance(body, list) else [body]
    else:
        frames = []
    return [f for f in frames if "method" not in f]


async def post(http: httpx.AsyncClient, frame: Any, headers: dict[str, str]) -> httpx.Response:
    with anyio.fail_after(ANSWER_SECONDS):
        return await http.post("/mcp", content=json.dumps(frame), headers=headers)


async def open_session(http: httpx.AsyncClient, version: str = "2025-11-25") -> dict[str, str]:
    params = {
        "protocolVersion": version,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    response = await post(http, frame_with("initialize", 0, params), JSON_HEADERS)
    assert response.status_code == 200, response.text
    session = {
        **JSON_HEADERS,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": version,
    }
    done = await post(http, frame_with("notifications/initialized", MISSING), session)
    assert done.status_code == 202
    return session


async def settled(run: Running, baseline: int) -> None:
    """Nothing is left once every client is gone: no connection, task, slot or body budget."""
    web = run.served.web
    await until(
        lambda: not web.server_state.connections and len(asyncio.all_tasks()) <= baseline,
        ANSWER_SECONDS,
        interval=0.02,
    )
    app = run.app
    assert app.request_slots.count == 0 and app.listen_slots.count == 0
    assert app.parsing.used == 0
    assert app.legacy.slots.count == len(app.legacy.sessions)


def legacy_call(id: Any, name: str = "echo", **arguments: Any) -> dict[str, Any]:
    return frame_with("tools/call", id, {"name": name, "arguments": arguments})


# ---------------------------------------------------------------------- every id, one answer


async def test_modern_every_id_shape_gets_one_answer_or_a_refusal() -> None:
    async with running(hardening_server()) as run:
        baseline = len(asyncio.all_tasks())
        async with run.client() as http:
            for shape, id in ID_SHAPES.items():
                for kind, frame in {
                    "call": modern_call(id, text="hi"),
                    "unknown method": frame_with("nope/nope", id, {"_meta": ENVELOPE}),
                    "invalid params": frame_with(
                        "tools/call", id, {"_meta": ENVELOPE, "name": "echo", "arguments": 5}
                    ),
                }.items():
                    headers = modern_headers(frame)
                    response = await post(http, frame, headers)
                    answers = answers_of(response)
                    where = (shape, kind, response.status_code, response.text)
                    if shape == "missing":  # a notification: accepted, never answered
                        assert response.status_code == 202 and not answers, where
                    elif shape in BAD_IDS:
                        assert response.status_code == 400, where
                        assert len(answers) == 1 and answers[0]["error"]["code"] == -32600, where
                        assert "id" not in answers[0], where
                    else:
                        assert len(answers) == 1 and answers[0].get("id") == id, where
                        expected = {"call": 200, "unknown method": 404, "invalid params": 400}
                        assert response.status_code == expected[kind], where
        await settled(run, baseline)


LEGACY_VERSIONS = pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])


@LEGACY_VERSIONS
async def test_legacy_initialize_of_every_id_shape_is_answered_or_refused(version: str) -> None:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    async with running(hardening_server()) as run:
        baseline = len(asyncio.all_tasks())
        async with run.client() as http:
            for shape, id in ID_SHAPES.items():
                response = await post(http, frame_with("initialize", id, params), JSON_HEADERS)
                where = (shape, response.status_code, response.text)
                if shape in BAD_IDS or shape == "missing":
                    assert response.status_code == 400, where
                    assert response.json()["error"]["code"] == -32600, where
                    assert "mcp-session-id" not in response.headers
                else:
                    assert response.status_code == 200 and response.json()["id"] == id, where
            assert len(run.app.legacy.sessions) == 2  # the two initialize requests with real ids
            for session_id in list(run.app.legacy.sessions):
                gone = await http.delete("/mcp", headers={"mcp-session-id": session_id})
                assert gone.status_code == 200
        await settled(run, baseline)
        assert not run.app.legacy.sessions


@LEGACY_VERSIONS
async def test_legacy_requests_of_every_id_shape_get_one_answer_or_a_refusal(version: str) -> None:
    async with running(hardening_server()) as run:
        baseline = len(asyncio.all_tasks())
        async with run.client() as http:
            session = await open_session(http, version)
            for shape, id in ID_SHAPES.items():
                for kind, frame in {
                    "call": legacy_call(id, text="hi"),
                    "unknown method": frame_with("nope/nope", id),
                    "invalid params": frame_with("tools/call", id, {}),
                }.items():
                    response = await post(http, frame, session)
                    answers = answers_of(response)
                    where = (shape, kind, response.status_code, response.text)
                    if shape == "missing":
                        assert response.status_code == 202 and not answers, where
                    elif shape in BAD_IDS:
                        assert response.status_code == 400, where
                        assert len(answers) == 1 and answers[0]["error"]["code"] == -32600, where
                    else:  # answered, errors included, with 200: the session lives on
                        assert response.status_code == 200, where
                        assert len(answers) == 1 and answers[0]["id"] == id, where
                        expected = {"call": None, "unknown method": -32601}
                        if kind in expected:
                            assert answers[0].get("error", {}).get("code") == expected[kind]
            ping = await post(http, frame_with("ping", 99), session)
            assert ping.json() == {"jsonrpc": "2.0", "id": 99, "result": {}}
            for session_id in list(run.app.legacy.sessions):
                gone = await http.delete("/mcp", headers={"mcp-session-id": session_id})
                assert gone.status_code == 200
        await settled(run, baseline)
        assert not run.app.legacy.sessions


async def test_batch_items_of_every_id_shape_each_get_one_answer() -> None:
    """2025-03-26: one answer per item that has an id member: a result for a fresh id, an
    error without id for an id of the wrong type, an error with the id for one repeated."""
    async with running(hardening_server()) as run:
        baseline = len(asyncio.all_tasks())
        async with run.client() as http:
            session = await open_session(http, "2025-03-26")
            batch = [legacy_call(id, text=shape) for shape, id in ID_SHAPES.items()]
            batch.append(legacy_call(7, text="repeated"))
            batch.append(frame_with("nope/nope", 8))
            response = await post(http, batch, session)
            assert response.status_code == 200, response.text
            answers = answers_of(response)
            assert len(answers) == len(batch) - 1  # every item but the notification
            by_text = {a["result"]["content"][0]["text"] for a in answers if "result" in a}
            assert by_text == {"string", "integer"}
            errors = [a for a in answers if "error" in a]
            assert sorted(str(a.get("id")) for a in errors) == sorted(
                ["None"] * len(BAD_IDS) + ["7", "8"]
            )
            assert [a["error"]["code"] for a in errors if a.get("id") == 8] == [-32601]
            assert (await http.delete("/mcp", headers=session)).status_code == 200
        await settled(run, baseline)


IN_FLIGHT = 5


@asynccontextmanager
async def held_call(
    run: Running, http: httpx.AsyncClient, session: dict[str, str]
) -> AsyncIterator[list[httpx.Response]]:
    """A legacy call (id `IN_FLIGHT`) of the `hold` tool, in flight in the session until the
    block ends; its answer lands in the list then."""
    answered: list[httpx.Response] = []

    async def call() -> None:
        answered.append(await post(http, legacy_call(IN_FLIGHT, "hold"), session))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(call)
        await until(lambda: run.app.legacy.sessions[session["mcp-session-id"]].in_use(IN_FLIGHT))
        yield answered


async def test_a_reused_id_in_flight_is_refused_and_the_first_still_answered() -> None:
    server = hardening_server()
    async with running(server) as run, run.client() as http:
        session = await open_session(http)
        async with held_call(run, http, session) as first:
            again = await post(http, legacy_call(IN_FLIGHT, text="again"), session)
            assert again.status_code == 400 and "in use" in again.json()["error"]["message"]
            server.gate.set()  # type: ignore[attr-defined]
        assert first[0].json()["result"]["content"][0]["text"] == "released"
        reused = await post(http, legacy_call(IN_FLIGHT, text="later"), session)
        assert reused.json()["result"]["content"][0]["text"] == "later"


async def test_a_cancelled_legacy_request_ends_its_exchange() -> None:
    async with running(hardening_server()) as run, run.client() as http:
        session = await open_session(http)
        async with held_call(run, http, session) as outcome:
            cancel = frame_with("notifications/cancelled", MISSING, {"requestId": IN_FLIGHT})
            assert (await post(http, cancel, session)).status_code == 202
        assert outcome[0].status_code == 202 and not outcome[0].content


# ---------------------------------------------------------------------- legacy answers


async def test_batch_frames_before_the_responses_make_an_sse_answer() -> None:
    async with running(hardening_server()) as run:
        async with run.client() as http:
            session = await open_session(http, "2025-03-26")
            call = legacy_call(1, "chatty", text="one")
            call["params"]["_meta"] = {"progressToken": "p"}
            batch = [call, legacy_call(2, text="two"), frame_with("ping", 3)]
            response = await post(http, batch, session)
            assert response.headers["content-type"] == "text/event-stream"
            frames = [
                json.loads(line[6:])
                for line in response.text.splitlines()
                if line.startswith("data:")
            ]
            methods = [f["method"] for f in frames if "method" in f]
            assert methods == ["notifications/progress", "notifications/message"]
            answers = {f["id"]: f for f in frames if "method" not in f}
            assert sorted(answers) == [1, 2, 3] and len(frames) == 5
            assert answers[1]["result"]["content"][0]["text"] == "one"
            assert answers[3]["result"] == {}


async def test_legacy_json_rpc_errors_are_200_and_the_session_survives(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running(hardening_server()) as run:
        async with run.client() as http:
            old = await open_session(http, "2025-03-26")
            # 2025-03-26 has no elicitation: asking is refused as a JSON-RPC error, no traceback.
            response = await post(http, legacy_call(1, "ask"), old)
            assert response.status_code == 200
            error = response.json()["error"]
            assert error["code"] == -32601 and "2025-03-26" in error["message"]
            assert not [r for r in caplog.records if r.exc_info]
            for version in ("2025-06-18", "2025-11-25"):
                session = await open_session(http, version)
                response = await post(http, frame_with("nope/nope", 2), session)
                assert response.status_code == 200
                assert response.json()["error"]["code"] == -32601
                response = await post(http, frame_with("tools/call", 3, {"name": 5}), session)
                assert response.status_code == 200
                assert response.json()["error"]["code"] == -32602
                assert (await post(http, frame_with("ping", 4), session)).status_code == 200
            # Unknown sessions keep 404: the legacy way to say "initialize again".
            gone = {**old, "mcp-session-id": "nope"}
            assert (await post(http, frame_with("ping", 5), gone)).status_code == 404


async def test_delete_racing_posts_settles_cleanly() -> None:
    races = int(os.environ.get("MCPGEN_DELETE_RACES", "100"))
    async with running(hardening_server()) as run:
        baseline = len(asyncio.all_tasks())
        statuses: list[tuple[int, int]] = []
        async with run.client() as http:

            async def call(n: int, session: dict[str, str], result: dict[str, int]) -> None:
                call = legacy_call(n, "chatty" if n % 2 else "echo", text="x")
                result["post"] = (await post(http, call, session)).status_code

            async def delete(n: int, session: dict[str, str], result: dict[str, int]) -> None:
                await anyio.sleep(0.001 * (n % 5))
                result["delete"] = (await http.delete("/mcp", headers=session)).status_code

            for n in range(races):
                session = await open_session(http)
                result: dict[str, int] = {}
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(call, n, session, result)
                    tasks.start_soon(delete, n, session, result)
                statuses.append((result["post"], result["delete"]))
        assert {post for post, _ in statuses} <= {200, 404}, statuses
        assert {delete for _, delete in statuses} == {200}, statuses
        await settled(run, baseline)
        assert not run.app.legacy.sessions


async def test_a_post_waiting_when_its_session_is_deleted_gets_404() -> None:
    """The deterministic case of the race above: the answer's wait ends with the session, and
    the POST is 404 (it was HTTP 500 when the error left the relay's task group as a group)."""
    async with running(hardening_server()) as run:
        async with run.client() as http:
            session = await open_session(http)
            result: dict[str, int] = {}

            async def held() -> None:
                result["post"] = (await post(http, legacy_call(1, "hold"), session)).status_code

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(held)
                await until(lambda: any(s.in_use(1) for s in run.app.legacy.sessions.values()))
                deleted = await http.delete("/mcp", headers=session)
            assert deleted.status_code == 200
            assert result["post"] == 404


# ---------------------------------------------------------------------- one client, not all


async def test_one_client_cannot_fill_the_session_table() -> None:
    options = {"max_sessions": 8, "max_sessions_per_client": 3, "handshake_seconds": 0.5}
    async with running(hardening_server(), **options) as run:
        async with run.client("127.0.0.2") as flooder, run.client() as other:
            for _ in range(3):  # initialize and nothing else, as a flood does
                opened = await post(flooder, frame_with("initialize", 1, INIT), JSON_HEADERS)
                assert opened.status_code == 200
            refused = await post(flooder, frame_with("initialize", 1, INIT), JSON_HEADERS)
            assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
            session = await open_session(other)
            echo = await post(other, legacy_call(1, text="still here"), session)
            assert echo.json()["result"]["content"][0]["text"] == "still here"
            # Sessions opened and never used again end after the handshake time; a used one
            # (the other client's) stays.
            await anyio.sleep(0.6)
            await open_session(flooder)
            assert (await post(other, frame_with("ping", 2), session)).status_code == 200
            # The table as a whole is bounded too: 503 once every slot is taken.
            clients = [run.client(f"127.0.0.{n}") for n in range(3, 7)]
            statuses = []
            for client in clients:
                for _ in range(3):
                    reply = await post(client, frame_with("initialize", 1, INIT), JSON_HEADERS)
                    statuses.append(reply.status_code)
                await client.aclose()
            assert 503 in statuses and len(run.app.legacy.sessions) == 8


async def test_sessions_end_after_their_idle_time_and_used_ones_stay() -> None:
    # An idle time shorter than the handshake time: a session's end moves earlier once used.
    options = {"session_idle_seconds": 1.0, "handshake_seconds": 30.0}
    async with running(hardening_server(), **options) as run:
        async with run.client() as http:
            kept = await open_session(http)
            dropped = await open_session(http)
            assert len(run.app.legacy.sessions) == 2
            for n in range(8):  # 1.6 s: the session in use stays, the other one ends
                await anyio.sleep(0.2)
                assert (await post(http, frame_with("ping", n), kept)).status_code == 200
            assert list(run.app.legacy.sessions) == [kept["mcp-session-id"]]
            assert (await post(http, frame_with("ping", 9), dropped)).status_code == 404


INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


def listen_frame(id: int, **filters: Any) -> dict[str, Any]:
    return frame_with(
        "subscriptions/listen", id, {"_meta": ENVELOPE, "notifications": filters or {}}
    )


async def test_idle_streams_of_one_client_leave_requests_and_others_served() -> None:
    options = {"max_listen_streams_per_client": 2, "max_listen_streams": 4}
    async with running(hardening_server(), **options) as run:
        async with run.client("127.0.0.2") as hog, run.client() as other:
            async with anyio.create_task_group() as tasks:
                opened = anyio.Semaphore(0)

                async def hold_open(http: httpx.AsyncClient, id: int) -> None:
                    frame = listen_frame(id, toolsListChanged=True)
                    async with http.stream(
                        "POST", "/mcp", content=json.dumps(frame), headers=modern_headers(frame)
                    ) as stream:
                        assert stream.status_code == 200
                        opened.release()
                        async for _ in stream.aiter_lines():
                            pass

                for id in (1, 2):
                    tasks.start_soon(hold_open, hog, id)
                    await opened.acquire()
                refused = await post(hog, listen_frame(3), modern_headers(listen_frame(3)))
                assert refused.status_code == 429
                call = modern_call(4, text="served")
                answer = await post(hog, call, modern_headers(call))  # requests: another pool
                assert answer.json()["result"]["content"][0]["text"] == "served"
                tasks.start_soon(hold_open, other, 5)
                await opened.acquire()
                tasks.cancel_scope.cancel()


async def test_streams_end_after_their_lifetime() -> None:
    async with running(hardening_server(), stream_lifetime=0.5) as run:
        async with run.client() as http:
            frame = listen_frame(1, toolsListChanged=True)
            started = time.monotonic()
            response = await post(http, frame, modern_headers(frame))
            assert 0.4 < time.monotonic() - started < ANSWER_SECONDS
            final = answers_of(response)
            assert final == [
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "result": {
                        "resultType": "complete",
                        "_meta": {
                            "io.modelcontextprotocol/subscriptionId": 1,
                            "io.modelcontextprotocol/serverInfo": final[0]["result"]["_meta"][
                                "io.modelcontextprotocol/serverInfo"
                            ],
                        },
                    },
                }
            ]
            session = await open_session(http)
            with anyio.fail_after(ANSWER_SECONDS):
                get = await http.get("/mcp", headers={**session, "accept": "text/event-stream"})
            assert get.status_code == 200 and get.headers["content-type"] == "text/event-stream"


async def test_a_json_answer_its_reader_does_not_take_ends_after_the_send_timeout() -> None:
    """A client that pipelines two calls and reads nothing: the first (large) answer fills the
    connection's buffer, so the second answer's write waits for the reader; after
    `send_timeout` that exchange ends and its request slot is free again."""
    server = Server("big")

    @server.tool(structured_output=False)
    async def big(size: int) -> str:
        """A text of `size` characters."""
        return "x" * size

    def request(frame: dict[str, Any]) -> bytes:
        body = json.dumps(frame).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in modern_headers(frame).items())
        start = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{head}content-length: {len(body)}"
        return f"{start}\r\n\r\n".encode() + body

    async with running(server, send_timeout=1.0) as run:
        stalled = socket.create_connection(("127.0.0.1", run.served.port))
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.sendall(
            request(modern_call(1, "big", size=8_000_000)) + request(modern_call(2, text="hi"))
        )
        try:
            await until(lambda: run.app.request_slots.count == 1)
            started = time.monotonic()
            await until(lambda: run.app.request_slots.count == 0, 20)
            assert time.monotonic() - started >= 0.5  # it waited for the reader first
        finally:
            stalled.close()


async def test_a_listener_that_stops_reading_is_cut_off_and_stalls_nobody() -> None:
    """One listener never reads its stream; the server fills its socket, then its queue, and
    drops it, while the publishing call returns at once and a reading listener gets all."""
    server = hardening_server()
    count, size = 300, 64 * 1024
    options = {"stream_queue": 64, "send_timeout": 1.0}
    async with running(server, **options) as run:
        port = run.served.port
        subscribe = {"resourceSubscriptions": [big_uri(size)]}
        stalled = socket.create_connection(("127.0.0.1", port))
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        frame = listen_frame(1, **subscribe)
        body = json.dumps(frame).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in modern_headers(frame).items())
        stalled.sendall(
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{head}content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        try:
            async with run.client("127.0.0.2", timeout=30) as reader, run.client() as caller:
                await until(lambda: len(server.hub.listeners) >= 1)
                heard: list[dict[str, Any]] = []
                reading = anyio.Event()

                async def read_all() -> None:
                    frame = listen_frame(2, **subscribe)
                    async with reader.stream(
                        "POST", "/mcp", content=json.dumps(frame), headers=modern_headers(frame)
                    ) as stream:
                        reading.set()
                        async for line in stream.aiter_lines():
                            if line.startswith("data:"):
                                heard.append(json.loads(line[6:]))
                                if len(heard) == count + 1:  # the acknowledgement, then all
                                    return

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(read_all)
                    await reading.wait()
                    await until(lambda: len(server.hub.listeners) >= 2)
                    call = modern_call(3, "touch", count=count, size=size)
                    started = time.monotonic()
                    answer = await post(caller, call, modern_headers(call))
                    publish_seconds = time.monotonic() - started
                    assert answer.json()["result"]["content"][0]["text"] == "touched"
                    await until(lambda: len(server.hub.listeners) <= 1, 20, interval=0.05)
                    await until(lambda: len(heard) >= count + 1, 20, interval=0.05)
                print(
                    f"\n{count} changes of {size // 1024} KiB with one stalled listener: "
                    f"published in {publish_seconds:.2f} s, the reading listener got all"
                )
                assert publish_seconds < 3.0, publish_seconds
                assert [f["method"] for f in heard[1:]] == [
                    "notifications/resources/updated"
                ] * count
        finally:
            stalled.close()


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed the connection (reset it, or closed it after at most an HTTP
    4xx answer: httptools refuses a line that is no request line at once, h11 waits for the
    header timeout)."""
    sock.setblocking(True)
    sock.settimeout(1)
    received = b""
    try:
        while chunk := sock.recv(1000):
            received += chunk
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    finally:
        sock.close()
    return received == b"" or received.startswith(b"HTTP/1.1 4")


async def test_drip_connections_are_closed_and_others_keep_their_latency() -> None:
    drips = int(os.environ.get("MCPGEN_DRIP_CONNECTIONS", "200"))
    async with running(hardening_server(), header_timeout=0.5, body_timeout=0.5) as run:
        port = run.served.port
        sockets = []
        for n in range(drips):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.setblocking(False)
            if n % 2:  # half send half their headers, then drip
                sock.send(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            sockets.append(sock)
        # A body that drips: its request is refused with 408 after the body timeout.
        body_drip = socket.create_connection(("127.0.0.1", port))
        body_drip.sendall(
            b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"accept: application/json, text/event-stream\r\ncontent-length: 1000\r\n\r\n{"
        )
        latencies: list[float] = []
        async with run.client() as http:
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                for sock in sockets:
                    try:
                        sock.send(b"x-drip: 1\r\n")
                    except OSError:
                        pass
                call = modern_call(1, text="on time")
                started = time.monotonic()
                response = await post(http, call, modern_headers(call))
                latencies.append(time.monotonic() - started)
                assert response.status_code == 200
                await anyio.sleep(0.05)
        closed = 0
        for sock in sockets:
            closed += _closed_by_server(sock)
        body_drip.settimeout(2)
        answer = body_drip.recv(1000)
        body_drip.close()
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert closed == drips, f"{drips - closed} drip connections still open"
        latencies.sort()
        p99 = latencies[int(len(latencies) * 0.99) - 1 if len(latencies) > 1 else 0]
        print(
            f"\n{drips} drip connections: {closed} closed by the header timeout; another "
            f"client's calls meanwhile: median {statistics.median(latencies) * 1000:.1f} ms, "
            f"p99 {p99 * 1000:.1f} ms over {len(latencies)}"
        )
        assert p99 < 0.5, (p99, statistics.median(latencies))


async def test_graceful_shutdown_ends_with_streams_and_calls_open() -> None:
    """Open listen and GET streams and a call that never returns do not hold a shutdown past
    its timeout; every legacy session ends (the code before this bound never finished)."""
    server = hardening_server()
    async with running(server, shutdown_timeout=1) as run:
        async with run.client() as http:
            session = await open_session(http)
            opened = anyio.Semaphore(0)

            async def stream(method: str, frame: Any, headers: dict[str, str]) -> None:
                with pytest.raises(httpx.HTTPError):
                    async with http.stream(method, "/mcp", content=frame, headers=headers) as s:
                        opened.release()
                        async for _ in s.aiter_lines():
                            pass
                        raise httpx.ReadError("ended")  # ended cleanly: fine too

            listen = listen_frame(1, toolsListChanged=True)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(stream, "POST", json.dumps(listen), modern_headers(listen))
                tasks.start_soon(stream, "GET", None, {**session, "accept": "text/event-stream"})
                hold = json.dumps(legacy_call(2, "hold"))
                tasks.start_soon(stream, "POST", hold, session)
                for _ in range(2):
                    await opened.acquire()
                await until(lambda: run.app.legacy.sessions[session["mcp-session-id"]].in_use(2))
                started = time.monotonic()
                run.served.web.should_exit = True
                with anyio.fail_after(ANSWER_SECONDS):
                    await run.served.stopped.wait()
                stopped_after = time.monotonic() - started
                tasks.cancel_scope.cancel()
        assert stopped_after < 3, stopped_after
        assert not run.app.legacy.sessions


# ---------------------------------------------------------------------- amplification


def _memory_of(pid: int) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) * 1024
    return values


@asynccontextmanager
async def limits_server(**options: Any) -> AsyncIterator[tuple[str, int]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "peers" / "limits_server.py"), str(port)]
        + [json.dumps(options)],
        stderr=subprocess.PIPE,
    )

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return True
        except OSError:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            return False

    try:
        await until(listening, 30, interval=0.05)
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        process.wait(10)


def empty_objects_body(size: int) -> bytes:
    """A valid modern tools/call of about `size` bytes, its arguments an array of `{}`."""
    frame = json.dumps(modern_call(1, text="x", a="ARRAY")).encode()
    return frame.replace(b'"ARRAY"', b"[" + b"{}," * (size // 3) + b"{}]")


@pytest.mark.slow
async def test_concurrent_maximum_bodies_and_batches_stay_bounded() -> None:
    """Six 12 MB bodies of empty objects at once (each costs ~24x its size while parsed) and one
    16 MiB batch of pings: peak memory stays within the parsing budget's bound, and a client
    meanwhile keeps being answered."""
    budget = 16 * 1024 * 1024
    async with limits_server(max_parsing_bytes=budget) as (base, pid):
        before = _memory_of(pid)["VmRSS"]
        big = empty_objects_body(12_000_000)
        call = modern_call(2, text="small")
        latencies: list[float] = []
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            statuses: list[int] = []

            async def heavy() -> None:
                headers = modern_headers(modern_call(1))
                statuses.append((await http.post("/mcp", content=big, headers=headers)).status_code)

            async def light() -> None:
                async with httpx.AsyncClient(base_url=base, timeout=60) as other:
                    while len(statuses) < 6:
                        started = time.monotonic()
                        response = await other.post(
                            "/mcp", content=json.dumps(call), headers=modern_headers(call)
                        )
                        assert response.status_code == 200
                        latencies.append(time.monotonic() - started)
                        await anyio.sleep(0.05)

            async with anyio.create_task_group() as tasks:
                for _ in range(6):
                    tasks.start_soon(heavy)
                tasks.start_soon(light)
            peak = _memory_of(pid)["VmHWM"] - before
            pings = [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(400_000)]
            session = await open_session(http, "2025-03-26")
            started = time.monotonic()
            refused = await http.post("/mcp", content=json.dumps(pings), headers=session)
            batch_seconds = time.monotonic() - started
        print(
            f"\nsix 12 MB bodies at once: peak +{peak / 2**20:.0f} MiB, statuses {statuses}; "
            f"a small call meanwhile: max {max(latencies):.3f} s over {len(latencies)}; "
            f"16 MiB batch of pings: {refused.status_code} in {batch_seconds:.2f} s"
        )
        assert statuses == [200] * 6, statuses
        # One 12 MB body in service at a time (about 33x its size: parsed once, by the codec),
        # never six at once (the code before this bound: +1,049 MiB).
        assert peak < 40 * len(big) + 150 * 2**20, f"peak grew by {peak / 2**20:.0f} MiB"
        assert refused.status_code == 413 and batch_seconds < 5, batch_seconds
        assert latencies and max(latencies) < 5, latencies


# ---------------------------------------------------------------------- Host and Origin


@pytest.mark.parametrize(
    ("host", "origin", "status"),
    [
        ("[::1]evil.com", None, 421),
        ("127.0.0.1evil.com", None, 421),
        ("127.0.0.1:80:80", None, 421),
        ("localhost:http", None, 421),
        ("localhost/x", None, 421),
        ("[::1]:8000", None, 200),
        ("LOCALHOST:8000", None, 200),
        ("127.0.0.1", "http://[::1].evil.com", 403),
        ("127.0.0.1", "http://[::1]evil.com", 403),
        ("127.0.0.1", "http://localhost.evil.com", 403),
        ("127.0.0.1", "http://localhost:3000/path", 403),
        ("127.0.0.1", "http://user@localhost", 403),
        ("127.0.0.1", "null", 403),
        ("127.0.0.1", "http://localhost:3000", 200),
        ("127.0.0.1", "https://[::1]:9", 200),
    ],
)
async def test_host_and_origin_are_parsed_exactly(
    host: str, origin: str | None, status: int
) -> None:
    async with running(hardening_server()) as run:
        async with run.client() as http:
            call = modern_call(1, text="x")
            headers = {**modern_headers(call), "host": host}
            if origin is not None:
                headers["origin"] = origin
            response = await post(http, call, headers)
            assert response.status_code == status, response.text


async def test_repeated_origin_or_host_headers_are_refused() -> None:
    async with running(hardening_server()) as run:
        async with run.client() as http:
            call = modern_call(1, text="x")
            base = list(modern_headers(call).items())
            for extra, status in (
                ([("origin", "http://localhost"), ("origin", "http://evil.example")], 403),
                ([("origin", "http://evil.example"), ("origin", "http://localhost")], 403),
            ):
                with anyio.fail_after(ANSWER_SECONDS):
                    response = await http.post(
                        "/mcp", content=json.dumps(call), headers=base + extra
                    )
                assert response.status_code == status, (extra, response.text)


# ---------------------------------------------------------------------- real clients


@pytest.mark.peers
async def test_ts_sdk_v1_client_reads_legacy_errors_as_json_rpc_errors(npm_peers: Path) -> None:
    """The TypeScript SDK v1 (1.32.2) reads a 4xx answer as a transport failure: legacy JSON-RPC
    errors must come with 200 for it to raise `McpError` and keep its session."""
    node = shutil.which("node")
    assert node is not None, "node (>= 20) must be on PATH"
    async with limits_server() as (base, _):
        script = ROOT / "tests" / "peers" / "ts_legacy_client.mjs"
        with anyio.fail_after(60):
            done = await anyio.run_process(
                [node, str(script), base + "/mcp"], cwd=npm_peers.parent, check=False
            )
    assert done.returncode == 0, done.stderr.decode()
    seen = json.loads(done.stdout.decode().splitlines()[-1])
    assert seen["protocolVersion"] == "2025-11-25" and seen["sameSession"]
    assert [(e["what"], e["name"], e["code"]) for e in seen["errors"]] == [
        ("ask", "McpError", -32601),
        ("unknown tool", "McpError", -32602),
    ]
    assert seen["tools"] == ["ask", "echo"]
    assert seen["echo"] == [{"type": "text", "text": "still here"}]


@pytest.mark.peers
async def test_fastmcp_client_reads_legacy_errors_as_json_rpc_errors() -> None:
    from fastmcp import Client as FastMcpClient
    from mcp.shared.exceptions import MCPError

    async with limits_server() as (base, _):
        with anyio.fail_after(30):
            async with FastMcpClient(base + "/mcp", mode="legacy") as client:
                assert client.protocol_version == "2025-11-25"
                for name, code in (("ask", -32601), ("nope", -32602)):
                    with pytest.raises(MCPError) as raised:
                        await client.call_tool(name, {})
                    assert raised.value.error.code == code
                result = await client.call_tool("echo", {"text": "still here"})
                assert result.content[0].text == "still here"  # type: ignore[union-attr]


# ---------------------------------------------------------------------- the same on stdio


class RawStdio:
    """A peer writing raw frames to a server connection (the session stdio runs on, without
    its line framing)."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.sentinels = 0

    async def send(self, frame: Any) -> None:
        await self.transport.send(json.dumps(frame).encode())

    async def next(self) -> Any:
        with anyio.fail_after(ANSWER_SECONDS):
            return json.loads(await self.transport.receive())

    async def nothing_answered(self, sentinel: dict[str, Any]) -> None:
        """The next answer is the sentinel's: nothing was answered before it."""
        self.sentinels += 1
        sentinel = {**sentinel, "id": f"sentinel-{self.sentinels}"}
        await self.send(sentinel)
        assert (await self.next())["id"] == sentinel["id"]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25", MODERN])
async def test_stdio_every_id_shape_gets_one_answer_or_a_refusal(version: str) -> None:
    from mcpio.transports.memory import memory_pair

    server = hardening_server()
    modern = version == MODERN
    mine, theirs = memory_pair()
    baseline = len(asyncio.all_tasks())
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve, theirs)
            peer = RawStdio(mine)
            meta: dict[str, Any] = {"_meta": ENVELOPE} if modern else {}
            sentinel = frame_with("tools/list", 0, dict(meta))
            if not modern:
                await peer.send(frame_with("initialize", 0, {**INIT, "protocolVersion": version}))
                assert (await peer.next())["result"]["protocolVersion"] == version
                await peer.send(frame_with("notifications/initialized", MISSING))
            for shape, id in ID_SHAPES.items():
                for frame in (
                    frame_with(
                        "tools/call", id, {**meta, "name": "echo", "arguments": {"text": "x"}}
                    ),
                    frame_with("nope/nope", id, dict(meta)),
                    frame_with("tools/call", id, {**meta, "name": "echo", "arguments": 5}),
                ):
                    await peer.send(frame)
                    if shape == "missing":
                        await peer.nothing_answered(sentinel)
                        continue
                    answer = await peer.next()
                    where = (shape, frame["method"], answer)
                    if shape in BAD_IDS:
                        assert answer["error"]["code"] == -32600 and answer.get("id") is None, where
                    else:
                        assert answer["id"] == id, where
                    await peer.nothing_answered(sentinel)  # and exactly one answer
            # An id reused while its request is in flight: refused, the first still answered.
            held = frame_with("tools/call", "held", {**meta, "name": "hold", "arguments": {}})
            await peer.send(held)
            await peer.send({**held, "params": {**held["params"], "name": "echo"}})
            refused = await peer.next()
            assert refused["error"]["code"] == -32600 and refused.get("id") is None
            server.gate.set()  # type: ignore[attr-defined]
            answer = await peer.next()
            assert answer["id"] == "held" and answer["result"]["content"][0]["text"] == "released"
            if version == "2025-03-26":  # a batch repeating an id: one answer per request
                batch = [frame_with("ping", 1), frame_with("ping", 1), frame_with("ping", 2)]
                await peer.send(batch)
                answers = await peer.next()
                assert sorted(a["id"] for a in answers) == [1, 1, 2]
            await mine.aclose()
    with anyio.fail_after(ANSWER_SECONDS):
        while len(asyncio.all_tasks()) > baseline:
            await anyio.sleep(0.02)


@pytest.mark.parametrize("protocol", ["h11", "httptools"])
async def test_the_header_timeout_holds_on_either_http_protocol(protocol: str) -> None:
    """A connection whose headers stop coming is closed after `header_timeout`, whichever of
    uvicorn's protocols serves (httptools by default, from the `http` extra; h11 otherwise);
    one that answers in time is served."""
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from mcpio.http._serve import fast_protocol

    assert fast_protocol() is HttpToolsProtocol  # the extra is installed here
    http = {"h11": H11Protocol, "httptools": HttpToolsProtocol}[protocol]
    app = hardening_server().http_app()
    async with serve_app(app, header_timeout=0.5, http=http) as served:
        assert issubclass(served.web.config.http, http)  # type: ignore[arg-type]
        late = socket.create_connection(("127.0.0.1", served.port))
        late.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        started = time.monotonic()
        closed = await anyio.to_thread.run_sync(_closed_by_server, late)
        assert closed and time.monotonic() - started < 1.0
        call = modern_call(1, text="on time")
        async with httpx.AsyncClient(base_url=served.url) as client:
            response = await post(client, call, modern_headers(call))
        assert response.status_code == 200


@pytest.mark.parametrize("protocol", ["h11", "httptools"])
async def test_whitespace_around_header_values_is_not_part_of_them(protocol: str) -> None:
    """RFC 9110 5.5: `Mcp-Name:  echo \\t` names `echo`, whichever parser read it (httptools
    keeps trailing whitespace in values, h11 does not)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    http = {"h11": H11Protocol, "httptools": HttpToolsProtocol}[protocol]
    call = json.dumps(modern_call(1, text="spaced")).encode()
    headers = {**modern_headers(modern_call(1)), "content-length": str(len(call))}
    lines = [f"{k}:  {v} \t" for k, v in headers.items()]
    request = "\r\n".join(["POST /mcp HTTP/1.1", "host: 127.0.0.1", *lines, "", ""]).encode()
    async with serve_app(hardening_server().http_app(), http=http) as served:
        stream = await anyio.connect_tcp("127.0.0.1", served.port)
        async with stream:
            await stream.send(request + call)
            answer = b""
            with anyio.fail_after(ANSWER_SECONDS):
                while b"spaced" not in answer and b"error" not in answer:
                    answer += await stream.receive()
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert b'"text":"spaced"' in answer


async def test_a_cancellation_from_outside_a_post_is_not_taken_for_the_guards() -> None:
    """The POST's guard cancels its task itself and absorbs that cancellation; one that comes
    from elsewhere (the server shutting down) must still end the POST."""
    server = Server("outside", "1.0")
    started = asyncio.Event()

    @server.tool()
    async def hold() -> str:
        """Wait until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    app = server.http_app()
    frame = modern_call(1, "hold")
    body = json.dumps(frame).encode()
    headers = [(k.encode(), v.encode()) for k, v in modern_headers(frame).items()]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    scope["headers"] += [(b"host", b"127.0.0.1")]
    scope["client"] = ("127.0.0.1", 1)
    sent: list[Any] = []
    arrived = False

    async def receive() -> dict[str, Any]:
        nonlocal arrived
        if not arrived:
            arrived = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client stays
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    task = asyncio.create_task(app(scope, receive, send))
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.sleep(0.05)  # past WATCH_AFTER: the guard's watcher task is running too
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sent == []  # nothing answered: the POST ended with the cancellation


# ---------------------------------------------------------------------- request heads


def _raw_answer(port: int, request: bytes, timeout: float = ANSWER_SECONDS) -> bytes:
    """What the server answers to raw `request` bytes (sent while it may already be answering:
    a server that refuses early closes the connection under the sender)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(timeout)
    answer = b""
    try:
        try:
            sock.sendall(request)
        except OSError:
            pass  # refused (and closed) before the whole request was sent
        while chunk := sock.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer and answer.startswith(b"HTTP/1.1 4"):
                break
    except OSError:
        pass
    finally:
        sock.close()
    return answer


def _head(*fields: bytes, content_length: int = 0) -> bytes:
    lines = [b"POST /mcp HTTP/1.1", b"host: 127.0.0.1", *fields]
    lines.append(b"content-length: %d" % content_length)
    return b"\r\n".join(lines) + b"\r\n\r\n"


@pytest.mark.parametrize("protocol", ["h11", "httptools"])
async def test_request_heads_are_bounded_on_either_http_protocol(protocol: str) -> None:
    """A head past `max_header_bytes` (64 KiB) or `max_headers` (100 fields) is refused with
    431 before the parser reads it whole (a 64 MiB header took httptools 7-9 s to parse, and
    stalled every other connection), whichever protocol serves; one within both is served, and
    a declared body larger than `max_body_bytes` is refused with 413 at once, before it is
    sent."""
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    http = {"h11": H11Protocol, "httptools": HttpToolsProtocol}[protocol]
    async with serve_app(hardening_server().http_app(), http=http) as served:
        port = served.port
        big = _head(b"x-big: " + b"a" * (64 * 2**20))
        started = time.monotonic()
        answer = await anyio.to_thread.run_sync(_raw_answer, port, big)
        refused_after = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 431"), answer[:80]
        assert refused_after < 1.0, refused_after
        many = _head(*(b"x-f%d: 1" % n for n in range(101)))
        answer = await anyio.to_thread.run_sync(_raw_answer, port, many)
        assert answer.startswith(b"HTTP/1.1 431"), answer[:80]
        # Within both bounds: read, and answered by the app (415: no Content-Type).
        fitting = _head(*(b"x-f%d: 1" % n for n in range(90)), b"x-big: " + b"a" * 60_000)
        answer = await anyio.to_thread.run_sync(_raw_answer, port, fitting)
        assert answer.startswith(b"HTTP/1.1 415"), answer[:80]
        # A declared 1 GiB body: 413 at once, without waiting for (or reading) the body.
        call = modern_call(1)
        fields = [f"{k}: {v}".encode() for k, v in modern_headers(call).items()]
        huge = _head(*fields, content_length=2**30)
        answer = await anyio.to_thread.run_sync(_raw_answer, port, huge, 2.0)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
        async with httpx.AsyncClient(base_url=served.url) as client:  # others still served
            response = await post(client, call, modern_headers(call))
        assert response.status_code == 200


def test_a_head_is_metered_alike_however_its_bytes_are_split() -> None:
    """The head meter counts the same fields and bytes whether a head comes in one read or a
    byte at a time (its end spanning two reads), skips empty lines before it, and leaves what
    follows it (the body) uncounted until `start`."""
    from mcpio.http._serve import _HeadMeter

    def verdicts(head: bytes, step: int) -> tuple[str | None, int, bool]:
        meter = _HeadMeter(max_bytes=2000, max_fields=100)
        refused = None
        for at in range(0, len(head), step):
            refused = refused or meter.feed(head[at : at + step])
        return refused, meter.lines, meter.reading

    fitting = b"\r\n" + _head(*(b"x-f%d: 1" % n for n in range(98))) + b"{" * 5000
    too_many = _head(*(b"x-f%d: 1" % n for n in range(99)))
    for step in (1, 2, 3, 7, len(fitting)):
        assert verdicts(fitting, step) == (None, 101, False)
        refused, _, _ = verdicts(too_many, step)
        assert refused is not None and "more than 100 header fields" in refused
    bare = b"GET /mcp HTTP/1.1\nhost: a\n\n" + b"x" * 5000  # bare LF ends a head too
    assert verdicts(bare, 1) == (None, 2, False)
    refused, _, _ = verdicts(b"GET /" + b"a" * 2000, 100)
    assert refused is not None and "exceeds 2000 bytes" in refused


# ---------------------------------------------------------------------- every request counted


async def test_legacy_posts_count_against_the_requests_in_flight() -> None:
    """Legacy POSTs take a request slot as modern ones do: one client holding its share of
    legacy calls is refused the next (429, legacy or modern) while another client is served
    (before, legacy POSTs were not counted: one client held 1,999 long polls and uvicorn's
    connection limit answered every other client 503)."""
    server = hardening_server()
    async with running(server, max_streams_per_client=2) as run:
        async with run.client("127.0.0.2") as hog, run.client() as other:
            session = await open_session(hog)
            async with anyio.create_task_group() as tasks:
                for id in (1, 2):
                    tasks.start_soon(post, hog, legacy_call(id, "hold"), session)
                legacy = run.app.legacy.sessions[session["mcp-session-id"]]
                await until(lambda: legacy.in_use(1) and legacy.in_use(2))
                refused = await post(hog, legacy_call(3, text="x"), session)
                assert refused.status_code == 429, refused.text
                assert refused.headers["retry-after"] == "1"
                call = modern_call(4, text="x")
                assert (await post(hog, call, modern_headers(call))).status_code == 429
                mine = await open_session(other)  # initialize is a request too: served
                answer = await post(other, legacy_call(5, text="served"), mine)
                assert answer.json()["result"]["content"][0]["text"] == "served"
                server.gate.set()  # type: ignore[attr-defined]
            assert run.app.request_slots.count == 0


async def test_an_ipv6_client_is_its_64_prefix() -> None:
    """Quotas count an IPv6 peer by its /64 (one subscriber's prefix: its addresses are free to
    it), an IPv4-mapped one by its IPv4 address."""
    from mcpio.http._app import _client

    def client(address: str) -> str:
        return _client({"client": (address, 1)}, None)

    assert client("2001:db8:1:2::1") == client("2001:db8:1:2:ffff:1:2:3")
    assert client("2001:db8:1:2::1") != client("2001:db8:1:3::1")
    assert client("::ffff:192.0.2.7") == client("192.0.2.7") == "192.0.2.7"
    assert client("127.0.0.2") != client("127.0.0.3")
    assert client("fe80::1%eth0") == client("fe80::2")


# ---------------------------------------------------------------------- parse costs


async def test_a_long_batch_is_refused_before_it_is_parsed_whole() -> None:
    """A batch past `max_batch_items` is refused with 413 from a prefix of it: what follows
    is never parsed (here, garbage that a whole parse would answer 400 for), and a 16 MiB
    batch of pings costs a fraction of what parsing it whole did (+121 MiB)."""
    import tracemalloc

    async with running(hardening_server()) as run, run.client(timeout=30) as http:
        session = await open_session(http, "2025-03-26")
        pings = [frame_with("ping", n) for n in range(2000)]
        body = json.dumps(pings)[:-1].encode() + b", not JSON]"
        refused = await http.post("/mcp", content=body, headers=session)
        assert refused.status_code == 413, refused.text
        assert "at most 256 messages" in refused.json()["error"]["message"]
        short = json.dumps(pings[:256])[:-1].encode() + b", not JSON]"
        assert (await http.post("/mcp", content=short, headers=session)).status_code == 400
        pings = [frame_with("ping", n) for n in range(360_000)]
        batch = json.dumps(pings, separators=(",", ":")).encode()
        assert 15 * 2**20 < len(batch) < 16 * 2**20
        tracemalloc.start()
        try:
            refused = await http.post("/mcp", content=batch, headers=session)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert refused.status_code == 413
        print(f"\n16 MiB batch of pings refused: peak +{peak / 2**20:.0f} MiB (client included)")
        assert peak < 3 * len(batch), f"{peak / 2**20:.0f} MiB"


# ---------------------------------------------------------------------- the HTTP path's infos


async def test_a_sealed_state_of_the_wrong_shape_is_invalid_params(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A `requestState` whose MAC is valid (made with the server's key) but whose payload is
    not the shape the server seals is -32602 naming requestState (was -32603 and a logged
    traceback)."""
    import base64

    from mcpio._core.sealing import request_digest

    server = hardening_server()
    sealer = server.sealer
    meta = dict(ENVELOPE, **{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
    params: dict[str, Any] = {"_meta": meta, "name": "ask", "arguments": {}}
    digest = request_digest("tools/call", {"name": "ask", "arguments": {}})
    good = {"d": digest, "r": {}, "n": 1, "x": int(time.time()) + 60}

    def sealed(payload: Any) -> str:
        text = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
        body = "s1." + text
        return body + "." + sealer._mac(body)

    shapes = [
        [],
        "text",
        {k: v for k, v in good.items() if k != "x"},
        {k: v for k, v in good.items() if k != "d"},
        {**good, "x": "later"},
        {**good, "r": ["not", "a", "map"]},
        {**good, "r": {"elicitation-0": "not a result"}},
        {**good, "n": "one"},
        {**good, "n": None},
        {**good, "p": 7},
    ]
    async with running(server) as run, run.client() as http:
        frame = frame_with("tools/call", 1, params)
        ok = await post(http, frame, modern_headers(frame))
        assert ok.json()["result"]["resultType"] == "input_required"
        retry = frame_with("tools/call", 1, {**params, "requestState": sealed(good)})
        assert (await post(http, retry, modern_headers(retry))).status_code == 200
        for n, payload in enumerate(shapes, 2):
            frame = frame_with("tools/call", n, {**params, "requestState": sealed(payload)})
            answer = await post(http, frame, modern_headers(frame))
            assert answer.status_code == 400, (payload, answer.text)
            error = answer.json()["error"]
            assert error["code"] == -32602, payload
            # (a sealed answer that is no ElicitResult is checked as a sent one is)
            assert "requestState" in error["message"] or "inputResponses" in error["message"]
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


@pytest.mark.parametrize(
    ("accept", "post_status", "get_status"),
    [
        ("application/jsonx, text/event-stream", 406, 200),
        ("application/json, text/event-streams", 406, 406),
        ("xapplication/json, text/event-stream", 406, 200),
        ("text/plain; a=application/json, text/event-stream", 406, 200),
        ("application/json;q=0, text/event-stream", 406, 200),
        ("application/json, text/event-stream;q=0.0", 406, 406),
        ("text/event-streamx", 406, 406),
        ("Application/JSON ; q=0.5 , text/event-stream", 200, 200),
        ("application/*, text/*", 200, 200),
        ("*/*", 200, 200),
    ],
)
async def test_accept_lists_media_types_not_substrings(
    accept: str, post_status: int, get_status: int
) -> None:
    """A POST's Accept must list JSON and event streams as media ranges (a wildcard counts, a
    range of weight 0 does not), a legacy GET's `text/event-stream`: `application/jsonx`
    passed as a substring before."""
    async with running(hardening_server()) as run, run.client() as http:
        call = modern_call(1, text="x")
        answer = await post(http, call, {**modern_headers(call), "accept": accept})
        assert answer.status_code == post_status, answer.text
        session = await open_session(http)
        with anyio.fail_after(ANSWER_SECONDS):
            async with http.stream("GET", "/mcp", headers={**session, "accept": accept}) as got:
                assert got.status_code == get_status


async def test_a_legacy_post_waiting_at_shutdown_gets_404(caplog: pytest.LogCaptureFixture) -> None:
    """A legacy POST still waiting for its answer when the graceful shutdown runs out gets the
    documented 404 (its session ended), not uvicorn's 500 for a cancelled task and a logged
    traceback; the shutdown still ends within its timeout."""
    server = hardening_server()
    answered: list[httpx.Response] = []
    async with running(server, shutdown_timeout=1) as run, run.client() as http:
        session = await open_session(http)

        async def call() -> None:
            answered.append(await post(http, legacy_call(IN_FLIGHT, "hold"), session))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call)
            legacy = run.app.legacy.sessions[session["mcp-session-id"]]
            await until(lambda: legacy.in_use(IN_FLIGHT))
            started = time.monotonic()
            run.served.web.should_exit = True
            with anyio.fail_after(ANSWER_SECONDS):
                await run.served.stopped.wait()
        stopped_after = time.monotonic() - started
    assert answered[0].status_code == 404, answered[0].text
    assert answered[0].json()["error"]["message"] == "the session ended"
    assert stopped_after < 2, stopped_after
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


async def test_a_delete_under_a_pending_elicitation_logs_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A client ending its session (DELETE) while a handler waits for its answer to an
    elicitation is the client's doing: at most one log line, no exception group and no
    traceback; the POST that waited gets its stream's end."""
    caplog.set_level("DEBUG")
    async with running(hardening_server()) as run, run.client() as http:
        session = await open_session(http)
        frame = json.dumps(legacy_call(1, "ask"))
        async with http.stream("POST", "/mcp", content=frame, headers=session) as stream:
            lines = stream.aiter_lines()
            with anyio.fail_after(ANSWER_SECONDS):
                async for line in lines:
                    if line.startswith("data:") and "elicitation/create" in line:
                        break
            assert (await http.delete("/mcp", headers=session)).status_code == 200
            with anyio.fail_after(ANSWER_SECONDS):
                async for _ in lines:
                    pass
        await anyio.sleep(0.2)
    logged = [r for r in caplog.records if r.name.startswith(("mcpio", "uvicorn"))]
    text = "\n".join(r.getMessage() + (r.exc_text or "") for r in logged)
    assert not [r for r in logged if r.exc_info or r.levelname in ("ERROR", "CRITICAL")], text
    assert len([r for r in logged if r.levelname != "DEBUG"]) <= 1, text
