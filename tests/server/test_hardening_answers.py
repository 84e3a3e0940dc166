"""A client's answers to the server's questions (elicitation, sampling, roots), malformed, errors
or too large (issue 46): the request that asked gets -32602 (or the client's own error), never
-32603 and a logged traceback; one bound on an answer's size in both eras, over the in-memory
transport (what stdio runs: the same session) and over HTTP."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcpio import Context, McpError, Server
from mcpio._core.context import Elicit
from mcpio.transports.memory import MemoryTransport, memory_pair
from tests.support import ACCEPT, ENVELOPE, MODERN, serve_app

pytestmark = pytest.mark.anyio
LEGACY = ("2025-06-18", "2025-11-25")
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}
LIMIT = 64 * 1024  # the servers' `max_answer_bytes` here
JSON_HEADERS = {"content-type": "application/json", "accept": ACCEPT}


def answers_server() -> Server:
    server = Server("answers", max_answer_bytes=LIMIT)

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks one question; its answer's action."""
        answer = await ctx.elicit("name?", SCHEMA)
        return answer.action

    @server.tool()
    async def ask_two(ctx: Context) -> str:
        """Asks two questions at once (one round)."""
        answers = await ctx.ask({"a": Elicit("a?", SCHEMA), "b": Elicit("b?", SCHEMA)})
        return "/".join(answer.action for answer in answers.values())

    @server.tool()
    async def ask_catching(ctx: Context) -> str:
        """Asks, and says what the client's error answer was."""
        try:
            await ctx.elicit("name?", SCHEMA)
        except McpError as exc:
            return f"caught {exc.code} {exc.message}"
        return "answered"

    return server


def request(id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def initialize(version: str) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    return request(0, "initialize", params)


def big_answer(size: int) -> dict[str, Any]:
    """An accepted ElicitResult whose JSON is about `size` bytes."""
    return {"action": "accept", "content": {"name": "x" * size}}


def quiet(caplog: pytest.LogCaptureFixture) -> None:
    """No traceback and no error logged; at most one line above DEBUG."""
    logged = [r for r in caplog.records if r.name.startswith(("mcpio", "uvicorn"))]
    text = "\n".join(r.getMessage() for r in logged)
    assert not [r for r in logged if r.exc_info or r.levelno >= logging.ERROR], text
    assert len([r for r in logged if r.levelno > logging.DEBUG]) <= 1, text


class Peer:
    """A raw legacy client over the in-memory transport."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport

    async def send(self, frame: Any) -> None:
        await self.transport.send(json.dumps(frame).encode())

    async def receive(self) -> Any:
        with anyio.fail_after(5):
            return json.loads(await self.transport.receive())


@asynccontextmanager
async def legacy_peer(version: str) -> AsyncIterator[Peer]:
    mine, theirs = memory_pair()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(answers_server().serve, theirs)
        peer = Peer(mine)
        await peer.send(initialize(version))
        assert (await peer.receive())["result"]["protocolVersion"] == version
        await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield peer
        await mine.aclose()


async def call_answering(peer: Peer, tool: str, *answers: dict[str, Any]) -> dict[str, Any]:
    """Call `tool`, answer its questions with `answers` (each a response's `result` or `error`
    member), in order; the call's response."""
    await peer.send(request(1, "tools/call", {"name": tool, "arguments": {}}))
    for answer in answers:
        question = await peer.receive()
        assert question["method"] == "elicitation/create", question
        await peer.send({"jsonrpc": "2.0", "id": question["id"], **answer})
    return await peer.receive()


# ---------------------------------------------------------------------- legacy, in memory


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize(
    "answer",
    [
        {"result": {"action": "maybe"}},
        {"result": {"action": "accept", "content": "not an object"}},
        {"result": []},
    ],
    ids=["unknown action", "content not an object", "not an object"],
)
async def test_a_malformed_legacy_answer_is_invalid_params(
    version: str, answer: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """An answer that is no ElicitResult: the tool call gets -32602 with a one-line message
    (was -32603 and about 65 traceback lines)."""
    async with legacy_peer(version) as peer:
        response = await call_answering(peer, "ask", answer)
    error = response["error"]
    assert response["id"] == 1 and error["code"] == -32602, response
    assert "elicitation/create" in error["message"] and "\n" not in error["message"]
    quiet(caplog)


async def test_questions_asked_together_fail_as_one_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two questions at once, one answered badly: -32602, not an exception group's -32603."""
    async with legacy_peer("2025-11-25") as peer:
        await peer.send(request(1, "tools/call", {"name": "ask_two", "arguments": {}}))
        first, second = await peer.receive(), await peer.receive()
        await peer.send({"jsonrpc": "2.0", "id": first["id"], "result": {"action": "decline"}})
        await peer.send({"jsonrpc": "2.0", "id": second["id"], "result": {"action": "maybe"}})
        response = await peer.receive()
    assert response["error"]["code"] == -32602, response
    quiet(caplog)


async def test_an_error_answer_is_the_clients_error_which_a_tool_may_catch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The client answers elicitation/create with an error: `ctx.elicit` raises it as a
    `McpError` (a tool may catch it); uncaught, the tool call gets that error as the client
    sent it. Before, it came inside an exception group: uncatchable, -32603, a traceback."""
    refusal = {"error": {"code": -32000, "message": "the user closed the form"}}
    async with legacy_peer("2025-11-25") as peer:
        caught = await call_answering(peer, "ask_catching", refusal)
        assert caught["result"]["content"][0]["text"] == "caught -32000 the user closed the form"
        uncaught = await call_answering(peer, "ask", refusal)
    assert uncaught["error"] == refusal["error"], uncaught
    quiet(caplog)


async def test_a_legacy_answer_over_the_bound_is_invalid_params(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`Server(max_answer_bytes=...)`: a larger answer is -32602 for the call that asked (it
    was read and accepted whatever its size up to the frame limit)."""
    async with legacy_peer("2025-11-25") as peer:
        response = await call_answering(peer, "ask", {"result": big_answer(LIMIT)})
        assert response["error"]["code"] == -32602, response
        assert f"exceeds {LIMIT} bytes" in response["error"]["message"]
        fits = await call_answering(peer, "ask", {"result": big_answer(LIMIT - 200)})
        assert fits["result"]["content"][0]["text"] == "accept"
    quiet(caplog)


# ---------------------------------------------------------------------- 2026-07-28


def modern_call(id: int, **extra: Any) -> dict[str, Any]:
    meta = dict(ENVELOPE, **{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
    return request(id, "tools/call", {"_meta": meta, "name": "ask", "arguments": {}, **extra})


async def test_a_modern_answer_over_the_bound_is_invalid_params() -> None:
    """The same bound on an `inputResponses` entry (in memory, as over stdio): -32602 naming
    it (any size the body limit let through was taken before)."""
    mine, theirs = memory_pair()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(answers_server().serve, theirs)
        peer = Peer(mine)
        await peer.send(modern_call(1, inputResponses={"elicitation-0": big_answer(LIMIT)}))
        response = await peer.receive()
        assert response["error"]["code"] == -32602, response
        assert response["error"]["data"] == {"field": "inputResponses.elicitation-0"}
        fits = {"elicitation-0": big_answer(LIMIT - 100)}
        await peer.send(modern_call(2, inputResponses=fits))
        assert (await peer.receive())["result"]["content"][0]["text"] == "accept"
        await mine.aclose()


# ---------------------------------------------------------------------- over HTTP


async def test_answers_over_the_bound_over_http_both_eras(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Over HTTP: a legacy POST carrying an answer over `max_answer_bytes` is 413 with a
    JSON-RPC error body, and the call that asked gets -32602 on its stream (it waited for its
    answer until the request timeout before); a 2026-07-28 retry carrying one is 400 -32602."""
    app = answers_server().http_app()
    async with serve_app(app) as served, httpx.AsyncClient(base_url=served.url, timeout=10) as http:
        opened = await http.post("/mcp", json=initialize("2025-11-25"), headers=JSON_HEADERS)
        session = {
            **JSON_HEADERS,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post("/mcp", json=initialized, headers=session)).status_code == 202
        call = json.dumps(request(1, "tools/call", {"name": "ask", "arguments": {}}))
        frames: list[dict[str, Any]] = []
        with anyio.fail_after(10):
            async with http.stream("POST", "/mcp", content=call, headers=session) as stream:
                async for line in stream.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    frame = json.loads(line[5:])
                    frames.append(frame)
                    if frame.get("method") == "elicitation/create":
                        answer = {"jsonrpc": "2.0", "id": frame["id"], "result": big_answer(LIMIT)}
                        refused = await http.post("/mcp", json=answer, headers=session)
                        assert refused.status_code == 413, refused.text
                        assert refused.json()["error"]["code"] == -32600
                        assert f"exceeds {LIMIT} bytes" in refused.json()["error"]["message"]
        assert frames[-1]["id"] == 1 and frames[-1]["error"]["code"] == -32602, frames

        retry = modern_call(2, inputResponses={"elicitation-0": big_answer(LIMIT)})
        headers = {
            **JSON_HEADERS,
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "ask",
        }
        response = await http.post("/mcp", json=retry, headers=headers)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == -32602
    quiet(caplog)
