"""The Streamable HTTP server, both eras, through a real uvicorn on a loopback port."""

from __future__ import annotations

import gc
import json
import os
import random
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcpio import Context, Server
from mcpio.server._connection import ServerConnection
from tests.support import (
    ACCEPT,
    ENVELOPE,
    MODERN,
    ROOT,
    headers_for,
    initialize,
    modern,
    serve_app,
    until,
)

sys.path.insert(0, str(ROOT / "examples"))
from everything_server import server as everything  # noqa: E402

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def serving(server: Server, **options: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with serve_app(server.http_app(**options)) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=10) as http:
            yield http


async def post(http: httpx.AsyncClient, frame: Any, **headers: str) -> httpx.Response:
    enveloped = isinstance(frame, dict) and "_meta" in frame.get("params", {})
    all_headers = (
        headers_for(frame) if enveloped else {"content-type": "application/json", "accept": ACCEPT}
    )
    all_headers.update({k.replace("_", "-"): v for k, v in headers.items()})
    return await http.post("/mcp", content=json.dumps(frame), headers=all_headers)


def events(response: httpx.Response) -> list[Any]:
    assert response.headers["content-type"] == "text/event-stream"
    return [
        json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")
    ]


async def test_modern_json_and_sse_answers() -> None:
    async with serving(everything) as http:
        response = await post(http, modern(1, "tools/call", name="test_simple_text"))
        assert (
            response.status_code == 200 and response.headers["content-type"] == "application/json"
        )
        assert response.json()["result"]["content"][0]["text"].startswith("This is a simple text")
        frame = modern(2, "tools/call", name="test_tool_with_progress")
        frame["params"]["_meta"] = {**ENVELOPE, "progressToken": "tok"}
        streamed = events(await post(http, frame))
        assert [f.get("method") for f in streamed] == ["notifications/progress"] * 3 + [None]
        assert streamed[-1]["id"] == 2 and streamed[-1]["result"]["content"][0]["text"] == "tok"
        # Notifications are accepted without an answer.
        response = await post(http, modern(None, "notifications/cancelled", requestId=5))
        assert response.status_code == 202 and response.content == b""


@pytest.mark.parametrize(
    "change, status, code",
    [
        ({"mcp-protocol-version": None}, 400, -32020),
        ({"mcp-protocol-version": "2025-11-25"}, 400, -32020),
        ({"mcp-method": "tools/list"}, 400, -32020),
        ({"mcp-method": None}, 400, -32020),
        ({"mcp-name": "other"}, 400, -32020),
        ({"mcp-name": None}, 400, -32020),
    ],
)
async def test_modern_headers_must_match_the_body(
    change: dict[str, str | None], status: int, code: int
) -> None:
    frame = modern(7, "tools/call", name="test_simple_text")
    headers = headers_for(frame)
    for key, value in change.items():
        if value is None:
            headers.pop(key)
        else:
            headers[key] = value
    async with serving(everything) as http:
        response = await http.post("/mcp", content=json.dumps(frame), headers=headers)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code and response.json()["id"] == 7


@pytest.mark.parametrize("repeated", ["mcp-method", "mcp-name"])
async def test_a_repeated_routing_header_is_refused_after_the_same_values_passed(
    repeated: str,
) -> None:
    """The routing headers' verdicts are kept by their raw values; a request that repeats one
    of them is judged afresh, not by what the same values got alone."""
    frame = modern(7, "tools/call", name="test_simple_text")
    headers = headers_for(frame)
    async with serving(everything) as http:
        response = await http.post("/mcp", content=json.dumps(frame), headers=headers)
        assert response.status_code == 200
        twice = [*headers.items(), (repeated, headers[repeated])]
        response = await http.post("/mcp", content=json.dumps(frame), headers=twice)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32020 and "more than once" in error["message"]


@pytest.fixture(scope="module")
async def everything_url() -> AsyncIterator[str]:
    """The fixture server over HTTP, shared by the module's error tests below (each of their
    requests is stateless: no session, no subscription)."""
    async with serve_app(everything.http_app()) as served:
        yield served.url


@pytest.fixture
async def http(everything_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=everything_url, timeout=10) as client:
        yield client


async def test_an_unsupported_version_is_refused_with_the_supported_ones(
    http: httpx.AsyncClient,
) -> None:
    unknown = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "v999"}
    frame = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {"_meta": unknown},
    }
    response = await post(http, frame, **{"mcp-protocol-version": "v999"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022 and error["data"] == {
        "supported": [MODERN],
        "requested": "v999",
    }


async def test_a_modern_request_without_its_envelope_is_invalid_params(
    http: httpx.AsyncClient,
) -> None:
    frame = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    response = await post(http, frame, **headers_for(frame))
    assert response.status_code == 400 and response.json()["error"]["code"] == -32602


@pytest.mark.parametrize("method", ["initialize", "ping", "nope/nope"])
async def test_a_method_the_modern_era_lacks_is_not_found(
    http: httpx.AsyncClient, method: str
) -> None:
    response = await post(http, modern(3, method))
    assert response.status_code == 404 and response.json()["error"]["code"] == -32601


async def test_a_tool_needing_a_capability_the_client_lacks_is_refused(
    http: httpx.AsyncClient,
) -> None:
    response = await post(http, modern(4, "tools/call", name="test_missing_capability"))
    assert response.status_code == 400 and response.json()["error"]["code"] == -32021


async def test_reading_an_unknown_resource_is_invalid_params(http: httpx.AsyncClient) -> None:
    response = await post(http, modern(5, "resources/read", uri="test://nope"))
    assert response.status_code == 400 and response.json()["error"]["code"] == -32602


async def test_a_name_that_is_not_plain_header_text_travels_base64_encoded(
    http: httpx.AsyncClient,
) -> None:
    frame = modern(6, "resources/read", uri="test://template/é ü/data")
    encoded = (
        "=?base64?"
        + __import__("base64").b64encode("test://template/é ü/data".encode()).decode()
        + "?="
    )
    response = await post(http, frame, **{"mcp-name": encoded})
    assert response.status_code == 200
    assert json.loads(response.json()["result"]["contents"][0]["text"])["id"] == "é ü"


async def test_get_and_delete_without_a_session_are_not_allowed(http: httpx.AsyncClient) -> None:
    assert (await http.get("/mcp", headers={"accept": "text/event-stream"})).status_code == 405
    assert (await http.delete("/mcp")).status_code == 405


async def test_secure_defaults() -> None:
    async with serving(everything, max_body_bytes=1000) as http:
        frame = modern(1, "tools/list")
        assert (await post(http, frame, host="evil.example.com")).status_code == 421
        assert (await post(http, frame, origin="http://evil.example.com")).status_code == 403
        assert (await post(http, frame, origin="http://localhost:3000")).status_code == 200
        big = modern(2, "tools/call", name="test_simple_text", arguments={"x": "a" * 2000})
        response = await post(http, big)
        assert response.status_code == 413 and response.json()["error"]["code"] == -32600
        response = await http.post(
            "/mcp", content=b"{", headers={"content-type": "application/json", "accept": ACCEPT}
        )
        assert response.status_code == 400 and response.json()["error"]["code"] == -32700
        response = await post(http, frame, content_type="text/plain")
        assert response.status_code == 415
        response = await post(http, frame, accept="application/json")
        assert response.status_code == 406
        assert (await http.post("/elsewhere", content=b"{}")).status_code == 404


async def test_client_closing_the_stream_cancels_the_handler() -> None:
    server = Server("slow")
    cancelled = anyio.Event()
    started = anyio.Event()

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Reports progress, then waits."""
        await ctx.progress(1, 2)
        started.set()
        try:
            await anyio.sleep(30)
        finally:
            cancelled.set()
        return "late"

    async with serving(server) as http:
        frame = modern(1, "tools/call", name="slow")
        frame["params"]["_meta"] = {**ENVELOPE, "progressToken": 1}
        with anyio.fail_after(10):
            async with http.stream(
                "POST", "/mcp", content=json.dumps(frame), headers=headers_for(frame)
            ) as response:
                assert response.headers["content-type"] == "text/event-stream"
                await started.wait()
            await cancelled.wait()


async def test_modern_listen_stream() -> None:
    async with serving(everything) as http:
        frame = modern(42, "subscriptions/listen", notifications={"toolsListChanged": True})
        with anyio.fail_after(10):
            async with http.stream(
                "POST", "/mcp", content=json.dumps(frame), headers=headers_for(frame)
            ) as stream:
                lines = stream.aiter_lines()
                first = await _next_data(lines)
                assert first["method"] == "notifications/subscriptions/acknowledged"
                assert first["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 42
                await post(http, modern(2, "tools/call", name="test_trigger_tool_change"))
                second = await _next_data(lines)
                assert second["method"] == "notifications/tools/list_changed"
                assert second["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 42
        # The listener ended with its stream.
        await until(lambda: not everything.hub.listeners, 5)


async def _next_data(lines: AsyncIterator[str]) -> Any:
    async for line in lines:
        if line.startswith("data: "):
            return json.loads(line[6:])
    raise AssertionError("the stream ended")


async def open_session(http: httpx.AsyncClient, version: str = "2025-11-25") -> dict[str, str]:
    response = await post(http, initialize(version))
    assert response.status_code == 200 and response.json()["result"]["protocolVersion"] == version
    session = {
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": version,
    }
    response = await post(
        http, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **session
    )
    assert response.status_code == 202
    return session


async def test_legacy_sessions() -> None:
    async with serving(everything) as http:
        session = await open_session(http)
        assert all(0x21 <= ord(c) <= 0x7E for c in session["mcp-session-id"])
        response = await post(http, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, **session)
        assert response.status_code == 200 and len(response.json()["result"]["tools"]) > 20
        assert "resultType" not in response.json()["result"]
        response = await post(http, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, **session)
        assert response.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        wrong = dict(session, **{"mcp-protocol-version": "2025-06-18"})
        assert (
            await post(http, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, **wrong)
        ).status_code == 400
        response = await post(http, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
        assert response.status_code == 400  # no session, not initialize
        gone = dict(session, **{"mcp-session-id": "nope"})
        assert (
            await post(http, {"jsonrpc": "2.0", "id": 5, "method": "ping"}, **gone)
        ).status_code == 404
        assert (await http.delete("/mcp", headers=session)).status_code == 200
        assert (
            await post(http, {"jsonrpc": "2.0", "id": 6, "method": "ping"}, **session)
        ).status_code == 404


async def test_legacy_questions_travel_on_the_request_stream() -> None:
    async with serving(everything) as http:
        session = await open_session(http)
        frame = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": {"message": "who?"}},
        }
        with anyio.fail_after(10):
            async with http.stream(
                "POST",
                "/mcp",
                content=json.dumps(frame),
                headers={"content-type": "application/json", "accept": ACCEPT, **session},
            ) as stream:
                lines = stream.aiter_lines()
                question = await _next_data(lines)
                assert (
                    question["method"] == "elicitation/create"
                    and question["params"]["message"] == "who?"
                )
                answer = {
                    "jsonrpc": "2.0",
                    "id": question["id"],
                    "result": {"action": "accept", "content": {"username": "u", "email": "e"}},
                }
                assert (await post(http, answer, **session)).status_code == 202
                final = await _next_data(lines)
        assert final["id"] == 1 and "action=accept" in final["result"]["content"][0]["text"]


async def test_legacy_background_stream_and_batches() -> None:
    async with serving(everything) as http:
        session = await open_session(http)
        with anyio.fail_after(10):
            async with http.stream(
                "GET", "/mcp", headers={**session, "accept": "text/event-stream"}
            ) as stream:
                other = await open_session(http)
                call = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "test_trigger_tool_change"},
                }
                assert (await post(http, call, **other)).status_code == 200
                notice = await _next_data(stream.aiter_lines())
        assert notice["method"] == "notifications/tools/list_changed"
        old = await open_session(http, "2025-03-26")
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        response = await post(http, batch, **old)
        assert sorted(a["id"] for a in response.json()) == [1, 2]
        assert (await post(http, batch, **session)).status_code == 400  # not in 2025-11-25


@pytest.mark.slow
async def test_many_concurrent_clients() -> None:
    clients = int(os.environ.get("MCPGEN_HTTP_CLIENTS", "50"))
    requests = int(os.environ.get("MCPGEN_HTTP_REQUESTS", "200"))
    server = Server("load")

    @server.tool()
    async def echo(text: str) -> str:
        """Echoes."""
        return text

    answered: dict[str, int] = {}
    async with serving(server) as http:

        async def client(c: int) -> None:
            for r in range(requests):
                text = f"{c}-{r}"
                frame = modern(r, "tools/call", name="echo", arguments={"text": text})
                response = await post(http, frame)
                got = response.json()["result"]["content"][0]["text"]
                answered[got] = answered.get(got, 0) + 1

        await client(-1)  # warm up: connections, caches
        gc.collect()
        baseline = sys.getallocatedblocks()
        with anyio.fail_after(600):
            async with anyio.create_task_group() as tasks:
                for c in range(clients):
                    tasks.start_soon(client, c)
        gc.collect()
        # Nothing of the requests stays behind: no connection object, no open stream, and the
        # heap back near where it was (every request's state is garbage once answered).
        assert not [o for o in gc.get_objects() if isinstance(o, ServerConnection)]
        grown = sys.getallocatedblocks() - baseline
        assert grown < 50_000, f"{grown} more memory blocks after {clients * requests} requests"
    answered = {k: v for k, v in answered.items() if not k.startswith("-1-")}
    assert answered == {f"{c}-{r}": 1 for c in range(clients) for r in range(requests)}


async def test_fuzzed_requests_never_break_the_server() -> None:
    rng = random.Random(int(os.environ.get("MCPGEN_FUZZ_SEED", "7")))
    good = modern(1, "tools/call", name="test_simple_text")
    async with serving(everything) as http:
        for _ in range(int(os.environ.get("MCPGEN_HTTP_FUZZ", "300"))):
            frame = json.loads(json.dumps(good))
            headers = headers_for(frame)
            body = json.dumps(frame).encode()
            fault = rng.randrange(6)
            if fault == 0:
                body = body[: rng.randrange(len(body))]
            elif fault == 1:
                key = rng.choice(sorted(headers))
                headers[key] = rng.choice(
                    ["", "x", "=?base64?!!?=", "a b", "2026-07-28, 2026-07-28"]
                )
            elif fault == 2:
                frame["params"][rng.choice(["name", "_meta", "arguments"])] = rng.choice(
                    [None, 1, [], "x", {}]
                )
                body = json.dumps(frame).encode()
            elif fault == 3:
                headers["mcp-session-id"] = rng.choice(["", "bogus", "a" * 300])
            elif fault == 4:
                body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
            else:
                frame[rng.choice(["jsonrpc", "id", "method"])] = rng.choice([None, 2.5, "", ["x"]])
                body = json.dumps(frame).encode()
            response = await http.post("/mcp", content=body, headers=headers)
            assert 200 <= response.status_code < 500, (fault, response.status_code, response.text)
            assert b"Traceback" not in response.content
            if (
                response.status_code not in (202,)
                and response.headers.get("content-type") == "application/json"
            ):
                answer = response.json()
                assert "error" in answer or "result" in answer
        response = await post(http, good)
        assert response.status_code == 200 and "result" in response.json()


def test_verdicts_judge_each_key_once_and_stay_bounded() -> None:
    """The one cache of header verdicts: a kept verdict (0 included) is not judged again, and
    the cache holds at most `SIZE` keys (a client sending ever new values costs no memory)."""
    from mcpio.http._asgi import Verdicts

    judged: list[bytes] = []

    def judge(value: bytes) -> int:
        judged.append(value)
        return 0 if value == b"ok" else 421

    verdicts: Verdicts[bytes, int] = Verdicts()
    assert [verdicts.of(v, judge, v) for v in (b"ok", b"ok", b"bad", b"bad")] == [0, 0, 421, 421]
    assert judged == [b"ok", b"bad"]
    for n in range(Verdicts.SIZE * 3):
        verdicts.of(b"%d" % n, judge, b"%d" % n)
        assert len(verdicts._seen) <= Verdicts.SIZE
    assert verdicts.of(b"ok", judge, b"ok") == 0


async def test_watch_disconnect_calls_back_once_the_client_is_gone() -> None:
    """The one disconnect watcher reads past other messages and calls back on the disconnect."""
    from mcpio.http._asgi import watch_disconnect

    messages = iter([{"type": "http.request", "body": b""}, {"type": "http.disconnect"}])
    gone: list[str] = []

    async def receive() -> dict[str, Any]:
        return next(messages)

    await watch_disconnect(receive, lambda: gone.append("gone"))
    assert gone == ["gone"]
