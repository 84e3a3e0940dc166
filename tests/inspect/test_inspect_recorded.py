"""The HTTP relay (`mcpio inspect --upstream`) on recorded traffic (tests/inspect/recorded/, each
file a server's exchanges, written by hand): SSE events that carry no message (priming events,
retry-only events, comments) are no frames; a server that assigns no session id has each request
judged on its own (no lifecycle finding); a session-ful server's session-less request is still
a request before initialize, and a message event that is not JSON still a `frame.json`."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcpio.inspect._http_proxy import ProxyApp
from mcpio.inspect._transcript import Recorder
from tests.support import request_body, serve_app

RECORDED = Path(__file__).parent / "recorded"

pytestmark = pytest.mark.anyio


def recording(name: str) -> list[dict[str, Any]]:
    return json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))["exchanges"]


def body_of(response: dict[str, Any]) -> bytes:
    return "\n".join(response["body"]).encode()


class Replay:
    """An upstream that answers each request with the recorded answer, in the recorded order
    (the request's method and body must be the recorded ones)."""

    def __init__(self, exchanges: list[dict[str, Any]]) -> None:
        self.left = list(exchanges)
        self.mismatches: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await request_body(receive)
        request, response = self.left[0]["request"], self.left.pop(0)["response"]
        if scope["method"] != request["method"] or (body and json.loads(body) != request["body"]):
            self.mismatches.append(f"{scope['method']} {body!r}")
        headers = [(k.encode(), v.encode()) for k, v in response["headers"].items()]
        await send(
            {"type": "http.response.start", "status": response["status"], "headers": headers}
        )
        await send({"type": "http.response.body", "body": body_of(response)})


@asynccontextmanager
async def relayed(name: str) -> AsyncIterator[tuple[ProxyApp, Recorder]]:
    """The recording `name` sent through the relay to its replay; each answer must arrive as
    recorded (status and bytes)."""
    exchanges = recording(name)
    replay = Replay(exchanges)
    recorder = Recorder(io.StringIO())
    async with serve_app(replay) as upstream:
        relay = ProxyApp(f"{upstream.url}/mcp", recorder)
        async with serve_app(relay) as proxy, httpx.AsyncClient(timeout=10) as http:
            with anyio.fail_after(30):
                for exchange in exchanges:
                    request, expected = exchange["request"], exchange["response"]
                    content = json.dumps(request["body"]) if "body" in request else None
                    answer = await http.request(
                        request["method"],
                        f"{proxy.url}/mcp",
                        headers=request["headers"],
                        content=content,
                    )
                    assert (answer.status_code, answer.content) == (
                        expected["status"],
                        body_of(expected),
                    )
            relay.finish()
            yield relay, recorder
    assert replay.mismatches == [] and replay.left == []


async def test_priming_retry_and_comment_events_are_no_frames() -> None:
    async with relayed("sse-priming") as (_, recorder):
        frames = [json.loads(entry.frame) for entry in recorder.entries]
        # initialize, initialized, tools/list, tools/call and their answers; the GET stream's
        # priming event and the others none
        assert [f.get("method", f.get("id")) for f in frames] == [
            "initialize",
            0,
            "notifications/initialized",
            "tools/list",
            1,
            "tools/call",
            2,
        ]
        assert recorder.findings() == []


async def test_a_server_that_assigns_no_session_is_judged_per_request() -> None:
    async with relayed("sessionless") as (relay, recorder):
        assert relay.sessions == {} and relay.sessionless is not None
        methods = [json.loads(entry.frame).get("method") for entry in recorder.entries]
        assert methods.count("tools/list") == methods.count("prompts/list") == 1
        assert recorder.findings() == []


async def test_a_sessionful_servers_violations_are_still_reported() -> None:
    async with relayed("sessionful-violations") as (relay, recorder):
        assert relay.sessionless is None and len(relay.sessions) == 1
        found = {(f.rule, f.direction) for f in recorder.findings()}
        assert ("lifecycle.before-initialize", "client->server") in found
        assert ("frame.json", "server->client") in found
