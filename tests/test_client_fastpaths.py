"""The client's short paths on every call say what the general ones say: a response settled
straight from the transport (`Session._settle_now`) is exactly what `peek_any` calls a response
to a pending request, and a legacy result projected to the public models by its per-method plan
equals the general projection (or fails with the same error), in every legacy revision."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import mcp_wire
from mcpio.negotiate import LEGACY, peek_any
from mcpio.session import Session
from mcpio.wire.codec import plain
from mcpio.wire.errors import ProtocolError

PENDING = (7, "s-7")

FRAMES = [
    b'{"jsonrpc":"2.0","id":7,"result":{"content":[]}}',
    b'{"id":7,"jsonrpc":"2.0","result":{}}',
    b' {"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}} ',
    b'{"jsonrpc":"2.0","id":"s-7","result":{}}',
    b'{"jsonrpc":"2.0","id":8,"result":{}}',  # no such request pending
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}',
    b'{"jsonrpc":"2.0","result":{}}',  # no id
    b'{"jsonrpc":"2.0","id":7}',  # neither result nor error
    b'{"jsonrpc":"2.0","id":7,"method":"ping"}',  # a request from the server, same id
    b'{"jsonrpc":"2.0","id":7,"result":{},"method":"ping"}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}',
    b'{"jsonrpc":"2.0","id":7,"method":null,"result":{}}',
    b'{"jsonrpc":"1.0","id":7,"result":{}}',
    b'{"id":7,"result":{}}',
    b'{"jsonrpc":"2.0","id":7.0,"result":{}}',
    b'{"jsonrpc":"2.0","id":true,"result":{}}',
    b'{"jsonrpc":"2.0","id":8,"result":{},"id":7}',  # duplicate member: the last one counts
    b'{"jsonrpc":"2.0","id":7,"result":[]}',
    b'{"jsonrpc":"2.0","id":7,"error":"no"}',
    b'{"jsonrpc":"2.0","id":7,"result":{}',  # cut short
    b'{"jsonrpc":"2.0","id":7,"result":{"x":1e999}}',
    b'[{"jsonrpc":"2.0","id":7,"result":{}}]',
    b'"text"',
    b"",
    b"\xff\xfe",
]


class _Nothing:
    async def send(self, data: bytes) -> None:
        raise AssertionError("nothing is sent")


def _peek_verdict(raw: bytes) -> Any:
    """What the general path settled: the pending id a response answers, else None."""
    try:
        env = peek_any(raw)
    except ProtocolError:
        return None
    return env.id if env.kind != "request" and env.id in PENDING else None


@pytest.mark.parametrize("raw", FRAMES)
def test_settled_straight_from_the_transport_as_peek_any_says(raw: bytes) -> None:
    loop = asyncio.new_event_loop()
    try:
        session = Session(_Nothing(), None)  # type: ignore[arg-type]
        futures = {id: loop.create_future() for id in PENDING}
        session._pending.update(futures)  # pyright: ignore[reportPrivateUsage]
        settled = session._settle_now(raw)  # pyright: ignore[reportPrivateUsage]
        expected = _peek_verdict(raw)
        assert settled is (expected is not None)
        for id, future in futures.items():
            assert future.done() is (id == expected)
            if future.done():
                assert future.result() is raw
    finally:
        loop.close()


RESULTS: dict[str, list[dict[str, Any]]] = {
    "tools/call": [
        {"content": [{"type": "text", "text": "x"}], "isError": False},
        {"content": []},
        {
            "content": [
                {"type": "text", "text": "t", "annotations": {"priority": 0.5}, "_meta": {"k": 1}},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
            ],
            "structuredContent": {"n": [1, 2.5, None]},
            "isError": True,
            "_meta": {"custom/key": {"deep": True}},
            "extra": "kept",
        },
        # the public `_meta` reads this key as the server's info: not expressible
        {"content": [], "_meta": {"io.modelcontextprotocol/serverInfo": 5}},
    ],
    "tools/list": [
        {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
        {"tools": [], "nextCursor": "c"},
    ],
    "resources/read": [{"contents": [{"uri": "file:///a", "text": "x"}]}],
    "prompts/get": [{"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]}],
}


def _projection(codec: Any, method: str, result: Any) -> Any:
    try:
        public = codec.to_public(method, result, "result")
    except ProtocolError as exc:
        return ("error", exc.code, exc.message, exc.data)
    return (type(public), plain(public))


@pytest.mark.parametrize("revision", LEGACY)
@pytest.mark.parametrize("method", list(RESULTS))
def test_legacy_results_projected_by_the_plan_as_in_general(revision: str, method: str) -> None:
    codec = mcp_wire.codec(revision)
    models = [codec.decode_response(_frame(r), method).result for r in RESULTS[method]]
    general = [_projection(mcp_wire.codec(revision), method, m) for m in models]  # fresh each
    fresh = mcp_wire.codec(revision)
    first = _projection(fresh, method, models[0])  # the general path; the plan is made
    assert method in fresh._public_results  # pyright: ignore[reportPrivateUsage]
    assert first == general[0]
    if method == "tools/call":
        assert general[-1][0] == "error"  # (the case the public models cannot express)
    for model, expected in zip(models, general, strict=True):
        assert _projection(fresh, method, model) == expected
    # a public model given back is returned as it is, plan or not
    public = fresh.to_public(method, models[0], "result")
    assert fresh.to_public(method, public, "result") is public


def _frame(result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()


class _Stream:
    transport: Any = None


class _Process:
    stdout = _Stream()
    stdin = _Stream()


# chunks as read from a server's stdout -> (lines settled, lines left to the read loop)
CHUNKS: list[tuple[list[bytes], list[bytes], list[bytes]]] = [
    ([b'{"id":1}\n'], [b'{"id":1}'], []),  # one whole response line: settled at once
    ([b'{"id":1}\r\n'], [b'{"id":1}\r'], []),
    ([b'{"method":"ping","id":1}\n'], [], [b'{"method":"ping","id":1}']),
    ([b"\n"], [], []),  # a blank line: nothing to read, the reader sleeps on
    ([b"  \n"], [], [b"  "]),  # whitespace: the read loop skips it
    ([b'{"id":1}\n{"id":2}\n'], [b'{"id":1}', b'{"id":2}'], []),
    ([b'{"id":1}\n{"method":"x"}\n{"id":2}\n'], [b'{"id":1}'], [b'{"method":"x"}', b'{"id":2}']),
    ([b'{"id"', b":1}\n"], [b'{"id":1}'], []),  # a line in two reads
    ([b'{"id":1}\n{"id"', b":2}\n"], [b'{"id":1}', b'{"id":2}'], []),
    ([b""], [], []),  # the end: the reader wakes (to end)
    ([b'{"id":1}\n', b""], [b'{"id":1}'], []),
    ([b'{"id"', b""], [], [b'{"id"']),  # an unfinished last line, read as the end's
]


@pytest.mark.parametrize(("chunks", "settled", "left"), CHUNKS)
def test_stdout_chunks_settle_as_lines(
    chunks: list[bytes], settled: list[bytes], left: list[bytes]
) -> None:
    """`ProcessTransport._arrived`'s whole-line path takes the lines the general one would."""
    from mcpio.transports.stdio import ProcessTransport

    loop = asyncio.new_event_loop()
    try:
        transport = ProcessTransport(_Process(), 1.0)  # type: ignore[arg-type]
        taken: list[bytes] = []

        def settle(line: bytes) -> bool:
            try:  # (as `_settle_now`: what is not a JSON response is left to the read loop)
                if "method" in json.loads(line):
                    return False
            except ValueError:
                return False
            taken.append(line)
            return True

        transport.on_response = settle
        waiter = transport._waiter = loop.create_future()  # pyright: ignore[reportPrivateUsage]
        for chunk in chunks:
            transport._arrived(chunk)  # pyright: ignore[reportPrivateUsage]
        assert taken == settled
        assert list(transport._lines) == left  # pyright: ignore[reportPrivateUsage]
        assert waiter.done() is bool(left or chunks[-1] == b"")
    finally:
        loop.close()
