"""JSON-RPC batches (2025-03-26, the one revision that has them) on every transport: each item
served as the same request sent alone would be (its handler's exception its own -32603, the
session going on), malformed items answered each, notifications unanswered; and a seeded load
of good requests, malformed frames and batches whose handlers raise, over stdio (a real
process), in memory and over HTTP, where every request is answered exactly once."""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpio.transports.memory import MemoryTransport
from tests.peers.batch_server import REFUSED, batch_server
from tests.support import ACCEPT, ROOT, serve_app

pytestmark = pytest.mark.anyio
REVISION = "2025-03-26"
BATCH_SERVER = [sys.executable, str(ROOT / "tests" / "peers" / "batch_server.py")]
ANSWER_SECONDS = 10.0  # the bound on every answer awaited here
JSON_HEADERS = {"content-type": "application/json", "accept": ACCEPT}
# The load test's size and seed (the frames it sends, batches counting one).
LOAD_FRAMES = int(os.environ.get("MCPGEN_BATCH_FRAMES", "150"))
LOAD_SEED = int(os.environ.get("MCPGEN_BATCH_SEED", "46"))


def request(id: Any, method: str, params: Any = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def notification(method: str, params: Any = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def call(id: Any, name: str, **arguments: Any) -> dict[str, Any]:
    return request(id, "tools/call", {"name": name, "arguments": arguments})


def initialize(version: str = REVISION, capabilities: Any = None) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "batches", "version": "1"},
    }
    return request(0, "initialize", params)


def encode(message: Any) -> bytes:
    return message if isinstance(message, bytes) else json.dumps(message).encode()


# ---------------------------------------------------------------------- peers


class LinePeer:
    """The client's end of a server spoken to frame by frame (stdio, in memory)."""

    async def send(self, frame: bytes) -> None:
        raise NotImplementedError

    async def receive(self) -> bytes:
        """The next frame; `anyio.EndOfStream` once the server has said all it will."""
        raise NotImplementedError

    async def finish(self) -> None:
        """End the input; the server then answers what it has, and ends."""
        raise NotImplementedError

    async def next(self) -> Any:
        with anyio.fail_after(ANSWER_SECONDS):
            return json.loads(await self.receive())

    async def call(self, message: Any) -> Any:
        await self.send(encode(message))
        return await self.next()


class MemoryPeer(LinePeer):
    def __init__(
        self,
        to_server: MemoryObjectSendStream[bytes],
        from_server: MemoryObjectReceiveStream[bytes],
        served: anyio.Event,
        server_out: MemoryObjectSendStream[bytes],
    ) -> None:
        self.to_server = to_server
        self.from_server = from_server
        self.served = served
        self.server_out = server_out

    async def send(self, frame: bytes) -> None:
        await self.to_server.send(frame)

    async def receive(self) -> bytes:
        return await self.from_server.receive()

    async def finish(self) -> None:
        await self.to_server.aclose()
        with anyio.fail_after(ANSWER_SECONDS):
            await self.served.wait()  # every handler done, every answer sent
        await self.server_out.aclose()


class StdioPeer(LinePeer):
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.lines = BufferedByteReceiveStream(process.stdout)

    async def send(self, frame: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(frame + b"\n")

    async def receive(self) -> bytes:
        try:
            return await self.lines.receive_until(b"\n", 1 << 24)
        except anyio.IncompleteRead:
            raise anyio.EndOfStream from None

    async def finish(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()


@asynccontextmanager
async def in_memory() -> AsyncIterator[MemoryPeer]:
    to_server, server_in = anyio.create_memory_object_stream[bytes](math.inf)
    server_out, from_server = anyio.create_memory_object_stream[bytes](math.inf)
    served = anyio.Event()

    async def serve() -> None:
        try:
            await batch_server().serve(MemoryTransport(server_out, server_in))
        finally:
            served.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(serve)
        yield MemoryPeer(to_server, from_server, served, server_out)
        await to_server.aclose()


@asynccontextmanager
async def over_stdio() -> AsyncIterator[StdioPeer]:
    async with await anyio.open_process(BATCH_SERVER, stderr=None) as process:
        try:
            yield StdioPeer(process)
        finally:
            if process.returncode is None:
                with anyio.move_on_after(ANSWER_SECONDS):
                    await process.wait()
            if process.returncode is None:
                process.kill()  # (this test's own process, by its handle)
                await process.wait()


LINE_PEERS: dict[str, Callable[[], Any]] = {"memory": in_memory, "stdio": over_stdio}


@asynccontextmanager
async def over_http() -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str]]]:
    """An HTTP client and the headers of a 2025-03-26 session it opened."""
    async with serve_app(batch_server().http_app()) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=ANSWER_SECONDS) as http:
            opened = await http.post("/mcp", json=initialize(), headers=JSON_HEADERS)
            assert opened.status_code == 200, opened.text
            session = {
                **JSON_HEADERS,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": REVISION,
            }
            done = await post(http, session, notification("notifications/initialized"))
            assert done.status_code == 202, done.text
            yield http, session


async def post(http: httpx.AsyncClient, session: dict[str, str], message: Any) -> httpx.Response:
    with anyio.fail_after(ANSWER_SECONDS):
        return await http.post("/mcp", content=encode(message), headers=session)


def body_of(response: httpx.Response) -> Any:
    assert response.headers.get("content-type", "").startswith("application/json") or (
        response.status_code == 202 and not response.content
    ), (response.status_code, response.headers, response.text)
    return response.json() if response.content else None


# ---------------------------------------------------------------------- the finding


def kind_of(answer: dict[str, Any]) -> str | int:
    """What an answer says: an error's code, "tool-error" (a failed tool's result), or "ok"."""
    if "error" in answer:
        code: int = answer["error"]["code"]
        return code
    return "tool-error" if answer["result"].get("isError") else "ok"


RAISING_BATCH = [
    request(1, "resources/read", {"uri": "bug://read"}),
    call(2, "echo", text="two"),
    request(3, "prompts/get", {"name": "bug"}),
    call(4, "fails"),
    call(5, "refuses"),
    request(6, "ping"),
]
RAISING_KINDS = {1: -32603, 2: "ok", 3: -32603, 4: "tool-error", 5: REFUSED, 6: "ok"}


@pytest.mark.parametrize("transport", LINE_PEERS)
async def test_a_batch_item_whose_handler_raises_gets_its_error_and_the_session_goes_on(
    transport: str,
) -> None:
    """The finding: alone, a request whose handler raises gets -32603; inside a batch it ended
    the process (stdio) or the session (in memory), nothing answered. Each item now gets what
    it would get alone, in one array, and the session answers what follows."""
    async with LINE_PEERS[transport]() as peer:
        assert "result" in await peer.call(initialize())
        alone = await peer.call(request(9, "resources/read", {"uri": "bug://read"}))
        assert alone["error"] == {"code": -32603, "message": "Error reading resource 'bug://read'"}
        answers = await peer.call(RAISING_BATCH)
        assert isinstance(answers, list)
        assert {a["id"]: kind_of(a) for a in answers} == RAISING_KINDS
        assert [a for a in answers if a["id"] == 2][0]["result"]["content"][0]["text"] == "two"
        assert await peer.call(request(10, "ping")) == {"jsonrpc": "2.0", "id": 10, "result": {}}
        await peer.finish()
    if isinstance(peer, StdioPeer):
        assert peer.process.returncode == 0


async def test_a_batch_item_whose_handler_raises_over_http() -> None:
    async with over_http() as (http, session):
        response = await post(http, session, RAISING_BATCH)
        assert response.status_code == 200
        assert {a["id"]: kind_of(a) for a in body_of(response)} == RAISING_KINDS
        ping = await post(http, session, request(10, "ping"))
        assert ping.json() == {"jsonrpc": "2.0", "id": 10, "result": {}}


# ---------------------------------------------------------------------- each item its answer

# (batch, what the server answers: None for nothing, else the answers' (id, kind) and whether
# they come as an array)
EDGE_CASES: dict[str, tuple[list[Any], list[tuple[Any, str | int]] | None, bool]] = {
    "empty": ([], [(None, -32600)], False),
    "notifications only": (
        [notification("notifications/roots/list_changed"), notification("nope/nope")],
        None,
        False,
    ),
    "invalid items only": (
        [1, "x", None, {"jsonrpc": "2.0", "id": True, "method": "ping"}],
        [(None, -32600), (None, -32600), (None, -32600), (None, -32600)],
        True,
    ),
    "a repeated id": (
        [request(31, "ping"), request(31, "ping"), request(32, "ping")],
        [(31, "ok"), (31, -32600), (32, "ok")],  # the second refused: its id in use
        True,
    ),
    "a mix": (
        [
            request(21, "ping"),
            notification("notifications/roots/list_changed"),
            {"jsonrpc": "2.0", "id": 22, "method": 7},  # its id read, its envelope invalid
            {"jsonrpc": "2.0", "id": 23},  # neither a request nor a response
            request(24, "tools/call", 5),  # params of the wrong type
            call(25, "echo", text=5),  # an argument of the wrong type: the tool's failure
            request(26, "nope/nope"),
            notification("tools/call", {"name": "echo", "arguments": {"text": "no id"}}),
            initialize() | {"id": 27},
        ],
        [
            (21, "ok"),
            (22, -32600),
            (23, -32600),
            (24, -32602),
            (25, "tool-error"),
            (26, -32601),
            (27, -32600),
        ],
        True,
    ),
}


def answered(received: Any) -> tuple[list[tuple[Any, str | int]] | None, bool]:
    """What a reply holds, sorted: its answers' (id, kind), and whether it is an array."""
    if received is None:
        return None, False
    answers = received if isinstance(received, list) else [received]
    found = sorted(((a.get("id"), kind_of(a)) for a in answers), key=repr)
    return found, isinstance(received, list)


@pytest.mark.parametrize("case", EDGE_CASES)
@pytest.mark.parametrize("transport", LINE_PEERS)
async def test_batch_items_are_answered_each(transport: str, case: str) -> None:
    """Per JSON-RPC 2.0: an empty batch is one -32600 error; a batch of notifications gets no
    answer; an invalid item gets its own error (with its id where it can be read), a
    notification none; a request that must not be batched (initialize) -32600."""
    batch, expected, array = EDGE_CASES[case]
    async with LINE_PEERS[transport]() as peer:
        assert "result" in await peer.call(initialize())
        await peer.send(encode(batch))
        await peer.send(encode(request("after", "ping")))
        first = await peer.next()
        if expected is None:  # nothing before the ping's answer, nor after it
            assert first == {"jsonrpc": "2.0", "id": "after", "result": {}}
        else:
            ping = await peer.next()
            if isinstance(ping, list) or ping.get("id") != "after":
                first, ping = ping, first  # (served concurrently: either may come first)
            assert ping == {"jsonrpc": "2.0", "id": "after", "result": {}}
            assert answered(first) == (sorted(expected, key=repr), array)
        await peer.finish()
        with pytest.raises(anyio.EndOfStream):
            await peer.receive()


@pytest.mark.parametrize("case", EDGE_CASES)
async def test_batch_items_are_answered_each_over_http(case: str) -> None:
    """The same answers over HTTP: an empty batch is refused with 400 and its -32600, a batch
    without requests is answered 202."""
    batch, expected, array = EDGE_CASES[case]
    async with over_http() as (http, session):
        response = await post(http, session, batch)
        status = 202 if expected is None else 400 if not batch else 200
        assert response.status_code == status, response.text
        assert answered(body_of(response)) == (
            None if expected is None else sorted(expected, key=repr),
            array,
        )
        assert (await post(http, session, request("after", "ping"))).status_code == 200


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25", None])
async def test_batches_are_refused_outside_2025_03_26(version: str | None) -> None:
    """Every other revision (and a connection not initialized: modern) refuses a batch whole:
    one -32600 error, not an array, and goes on."""
    async with in_memory() as peer:
        if version is not None:
            assert "result" in await peer.call(initialize(version))
        refused = await peer.call([request(1, "ping"), request(2, "ping")])
        assert isinstance(refused, dict) and refused["error"]["code"] == -32600
        assert refused.get("id") is None
        if version is not None:
            assert await peer.call(request(3, "ping")) == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_a_batch_item_may_ask_the_client_while_the_batch_is_served() -> None:
    """A batch no longer holds up the frames after it: an item whose handler asks the client
    (roots/list) gets the client's answer, read while the batch is served."""
    async with in_memory() as peer:
        assert "result" in await peer.call(initialize(capabilities={"roots": {}}))
        await peer.send(encode([call(1, "roots"), request(2, "ping")]))
        question = await peer.next()
        assert question["method"] == "roots/list"
        roots = {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}
        answers = await peer.call({"jsonrpc": "2.0", "id": question["id"], "result": roots})
        assert answered(answers) == ([(1, "ok"), (2, "ok")], True)
        tool = [a for a in answers if a["id"] == 1][0]
        assert tool["result"]["content"][0]["text"] == "2"


# ---------------------------------------------------------------------- under load


@dataclass(frozen=True)
class Item:
    """One message of the load: what it is (a JSON value; bytes for what is not JSON), and the
    answer it gets: its id (None: without one) and kind ("ok", "tool-error", an error code), or
    no answer (`kind` None). `envelope_invalid`: its id is read from an invalid envelope (a
    frame alone over HTTP is refused whole: 400, without the id)."""

    message: Any
    id: Any = None
    kind: str | int | None = None
    envelope_invalid: bool = False


@dataclass
class Sent:
    """One frame of the load: a message alone, or a batch of them."""

    items: list[Item]
    batch: bool

    @property
    def payload(self) -> bytes:
        if not self.batch:
            return encode(self.items[0].message)
        return encode([item.message for item in self.items])


class Load:
    """A seeded random mix: good requests (among them handlers that raise), malformed frames
    (about 10%), notifications, and batches of all of these."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ids = itertools.count(1)
        self.texts: dict[int, str] = {}

    def good(self) -> Item:
        id = next(self.ids)
        pick = self.rng.randrange(7)
        if pick == 0:
            return Item(request(id, "ping"), id, "ok")
        if pick == 1:
            self.texts[id] = f"text {id}"
            return Item(call(id, "echo", text=self.texts[id]), id, "ok")
        if pick == 2:
            return Item(request(id, "tools/list"), id, "ok")
        if pick == 3:
            return Item(call(id, "fails"), id, "tool-error")
        if pick == 4:
            return Item(call(id, "refuses"), id, REFUSED)
        if pick == 5:
            return Item(request(id, "resources/read", {"uri": "bug://read"}), id, -32603)
        return Item(request(id, "prompts/get", {"name": "bug"}), id, -32603)

    def malformed(self, alone: bool) -> Item:
        id = next(self.ids)
        pick = self.rng.randrange(10 if alone else 9)
        if pick == 0:
            return Item(self.rng.choice([42, "x", None, True]), None, -32600)
        if pick == 1:
            bad = self.rng.choice([True, 1.5, {}, [], None])
            return Item({"jsonrpc": "2.0", "id": bad, "method": "ping"}, None, -32600)
        if pick == 2:
            return Item(request(id, "tools/call", self.rng.choice([5, "x", []])), id, -32602)
        if pick == 3:
            return Item(call(id, "echo", text=5), id, "tool-error")
        if pick == 4:
            return Item(request(id, "nope/nope"), id, -32601)
        if pick == 5:
            return Item(call(id, "missing"), id, -32602)
        if pick == 6:
            return Item({"jsonrpc": "2.0", "id": id, "method": 7}, id, -32600, True)
        if pick == 7:
            return Item({"jsonrpc": "1.0", "id": id, "method": "ping"}, id, -32600, True)
        if pick == 8:  # a request without its id: a notification, unanswered
            return Item(notification("tools/call", {"name": "echo", "arguments": {"text": ""}}))
        cut = self.rng.randrange(1, 20)
        return Item(encode(call(id, "echo", text="cut"))[:cut], None, -32700)

    def notification(self) -> Item:
        method = self.rng.choice(
            ["notifications/roots/list_changed", "notifications/nope", "notifications/cancelled"]
        )
        params = {"requestId": "nobody"} if method == "notifications/cancelled" else None
        return Item(notification(method, params))

    def frames(self, count: int) -> list[Sent]:
        sent: list[Sent] = []
        for _ in range(count):
            roll = self.rng.random()
            if roll < 0.55:
                sent.append(Sent([self.good()], False))
            elif roll < 0.65:
                sent.append(Sent([self.malformed(alone=True)], False))
            elif roll < 0.72:
                sent.append(Sent([self.notification()], False))
            else:
                sent.append(self.batch())
        return sent

    def batch(self) -> Sent:
        roll = self.rng.random()
        size = self.rng.randint(1, 6)
        if roll < 0.05:
            return Sent([], True)
        if roll < 0.12:
            return Sent([self.notification() for _ in range(size)], True)
        if roll < 0.19:
            return Sent([self.malformed(alone=False) for _ in range(size)], True)
        items = []
        for _ in range(size):
            pick = self.rng.random()
            if pick < 0.6:
                items.append(self.good())
            elif pick < 0.8:
                items.append(self.malformed(alone=False))
            else:
                items.append(self.notification())
        return Sent(items, True)


Answers = tuple[tuple[tuple[Any, str | int], ...], bool]  # a reply's sorted (id, kind), array?


def expected_reply(sent: Sent, http: bool) -> Answers | None:
    """What the server answers a frame: None for nothing."""
    if sent.batch and not sent.items:
        return ((None, -32600),), False
    answers = []
    for item in sent.items:
        if item.kind is not None:
            id = None if http and item.envelope_invalid and not sent.batch else item.id
            answers.append((id, item.kind))
    if not answers:
        return None
    return tuple(sorted(answers, key=repr)), sent.batch


def reply_of(received: Any) -> Answers:
    answers = received if isinstance(received, list) else [received]
    return tuple(sorted(((a.get("id"), kind_of(a)) for a in answers), key=repr)), isinstance(
        received, list
    )


def check_texts(received: list[Any], texts: dict[int, str]) -> None:
    """Each echo's answer carries its own text."""
    for reply in received:
        for answer in reply if isinstance(reply, list) else [reply]:
            if answer.get("id") in texts and "result" in answer:
                assert answer["result"]["content"][0]["text"] == texts[answer["id"]]


def check_once(sent: list[Sent], received: list[Any], http: bool, texts: dict[int, str]) -> None:
    """Every request answered exactly once, with its kind of answer, batches as arrays."""
    expected = Counter(r for s in sent if (r := expected_reply(s, http)) is not None)
    got = Counter(reply_of(r) for r in received)
    assert got - expected == Counter(), f"answers not expected: {got - expected}"
    assert expected - got == Counter(), f"answers missing: {expected - got}"
    ids = [a for r in received for a in (r if isinstance(r, list) else [r]) if a.get("id")]
    repeated = [id for id, n in Counter(a["id"] for a in ids).items() if n > 1]
    assert not repeated, repeated
    check_texts(received, texts)


@pytest.mark.parametrize("transport", LINE_PEERS)
async def test_every_request_answered_once_under_a_mixed_load(transport: str) -> None:
    """The second goal, in memory and over stdio: a seeded mix sent at once, the final ping
    answered (the session alive), then the input ended and everything the server said read
    to its end: each request answered exactly once, with the kind of answer it must get."""
    load = Load(LOAD_SEED)
    sent = load.frames(LOAD_FRAMES)
    assert sum(1 for s in sent if not s.batch and s.items[0].kind is not None) > 0
    received: list[Any] = []
    async with LINE_PEERS[transport]() as peer:
        assert "result" in await peer.call(initialize())
        await peer.send(encode(notification("notifications/initialized")))
        for frame in sent:
            await peer.send(frame.payload)
        await peer.send(encode(request("final", "ping")))
        final = None
        while final is None:
            reply = await peer.next()
            received.append(reply)
            if isinstance(reply, dict) and reply.get("id") == "final":
                final = reply
        assert final == {"jsonrpc": "2.0", "id": "final", "result": {}}
        await peer.finish()
        with anyio.fail_after(ANSWER_SECONDS):
            while True:
                try:
                    received.append(json.loads(await peer.receive()))
                except anyio.EndOfStream:
                    break
    if isinstance(peer, StdioPeer):
        assert peer.process.returncode == 0
    received.remove(final)
    check_once(sent, received, False, load.texts)


async def test_every_request_answered_once_under_a_mixed_load_over_http() -> None:
    """The same mix over HTTP, one POST a frame, four clients at a time on one 2025-03-26
    session: each POST answered with what its frame must get; the session still there."""
    load = Load(LOAD_SEED)
    sent = load.frames(LOAD_FRAMES)
    received: list[Any] = []
    async with over_http() as (http, session):

        async def worker(frames: list[Sent]) -> None:
            for frame in frames:
                response = await post(http, session, frame.payload)
                expected = expected_reply(frame, True)
                if expected is None:
                    assert response.status_code == 202, response.text
                else:
                    alone_refused = not frame.batch or not frame.items
                    errors = all(kind != "ok" and id is None for id, kind in expected[0])
                    status = 400 if alone_refused and errors else 200
                    assert response.status_code == status, (frame.payload, response.text)
                    received.append(body_of(response))

        async with anyio.create_task_group() as tasks:
            for start in range(4):
                tasks.start_soon(worker, sent[start::4])
        final = await post(http, session, request("final", "ping"))
        assert final.json() == {"jsonrpc": "2.0", "id": "final", "result": {}}
        assert (await http.delete("/mcp", headers=session)).status_code == 200
    check_once(sent, received, True, load.texts)
