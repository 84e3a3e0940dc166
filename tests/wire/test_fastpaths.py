"""The catalogue of the runtime's fast paths: each shortcut beside its general path, and the
oracle that holds the two equal over every pinned revision, with codec instances made for the
test (`mcp_wire.codec()` returns one shared instance, whose per-method plans an earlier call
may have made already: comparing through it would compare the shortcut with itself).

`CATALOGUE` names each fast path, its general path and its oracle (a test of this module, or
of the module named); `test_every_oracle_of_the_catalogue_exists` keeps the names true.
`WITHOUT_ORACLE`: the shortcuts that have none yet (issue 33 item 3, server side)."""

from __future__ import annotations

import ast
import asyncio
import json
import random
from pathlib import Path
from typing import Any

import anyio
import httpx
import pydantic_core
import pytest

import mcp_wire
from mcp_wire_runtime.codec import Codec, plain
from mcp_wire_runtime.errors import ProtocolError
from mcpio import Client, Context, Server
from mcpio._core.negotiate import LEGACY, envelope_version, peek_any
from mcpio._core.session import Session
from mcpio.client._frames import RequestFrames
from mcpio.http._sessions import Done, Outbox

TESTS = Path(__file__).parent.parent  # tests/

# fast path -> (its general path, its oracle: "folder/test_file.py::test_name" under tests/)
CATALOGUE: dict[str, tuple[str, str]] = {
    "Session._take_now (a response settled straight from the transport)": (
        "Session._read_loop: peek_any, then Session._settle",
        "wire/test_fastpaths.py::test_settled_straight_from_the_transport_as_peek_any_says",
    ),
    "Session._take_now (a request's handler started straight from the transport)": (
        "Session._read_loop: peek_any, then Session._dispatch",
        "wire/test_fastpaths.py::test_requests_started_straight_from_the_transport_as_by_the_read_loop",
    ),
    "Session._take_now(raw, id) (HttpTransport: settled by the envelope it read)": (
        "the frame queued for Session._read_loop",
        "wire/test_fastpaths.py::test_http_responses_settled_by_their_envelope_as_by_the_read_loop",
    ),
    "PushedLines.arrived: one whole line taken as it arrives (both sides of stdio)": (
        "LineStream._feed, then PushedLines.receive",
        "wire/test_fastpaths.py::test_stdout_chunks_settle_as_lines",
    ),
    "RequestFrames.fast (a plain tools/call written without a model)": (
        "RequestFrames.general (the codec's builder, from the public params)",
        "wire/test_fastpaths.py::test_fast_call_frames_equal_the_general_builders",
    ),
    "RequestFrames.fast, end to end (the frames a Client sends)": (
        "the same calls with the fast builder off",
        "client/test_client_frames.py::test_fast_frames_equal_the_builders",
    ),
    "Codec.to_public: a legacy result projected by its per-method plan": (
        "Codec.to_public's general projection (the first call of a method)",
        "wire/test_fastpaths.py::test_legacy_results_projected_by_the_plan_as_in_general",
    ),
    "Codec.public_result: a legacy result read from its response's bytes as the public model": (
        "Codec.to_public of the result decode_response read",
        "wire/test_fastpaths.py::test_legacy_results_read_from_their_bytes_as_projected",
    ),
    "Codec.public_params: a legacy request's params read from its bytes as the public model": (
        "Codec.to_public of the params decode read, with the session's envelope",
        "wire/test_fastpaths.py::test_legacy_params_read_from_their_bytes_as_projected",
    ),
    "HttpTransport.send: a request carried by its envelope alone": (
        "the frame parsed whole (pydantic_core.from_json, envelope_version)",
        "wire/test_fastpaths.py::test_a_request_is_carried_by_its_envelope_as_parsed_whole",
    ),
    "read_modern (the HTTP server's one-parse read of a modern request)": (
        "peek_any, then Codec.decode",
        "wire/test_read_modern.py::test_read_modern_agrees_with_peek_and_decode",
    ),
    "Codec.encode_result (a result written from its model)": (
        "Codec.encode of Codec.response",
        "server/test_dispatch_core.py::test_encode_result_writes_what_encode_writes",
    ),
    "TextAnswer (a tool's string answer written without a result model)": (
        "tool_result, then the codec's response",
        "server/test_dispatch_core.py::test_a_text_answer_is_written_as_its_result_model_is",
    ),
    "TextAnswer, legacy (projected)": (
        "tool_result projected to the revision, then the codec's response",
        "server/test_dispatch_core.py::test_a_legacy_text_answer_is_written_as_its_projected_model_is",
    ),
    "Server._result_stamp (the modern result _meta, built once)": (
        "the server's info and capabilities read per answer",
        "server/test_dispatch_core.py::test_modern_results_carry_the_servers_info_as_it_is_now",
    ),
    "http.sessions.Outbox (a legacy session's exchange: a deque and a waiter)": (
        "an anyio memory object stream of the same bound",
        "wire/test_fastpaths.py::test_an_outbox_answers_as_a_bounded_memory_stream",
    ),
    "Session._take_now with a peer's read_request (the stdio server's one parse)": (
        "Session._take_now's peek, then the connection's Codec.decode",
        "wire/test_read_modern.py::test_read_legacy_agrees_with_peek_and_decode",
    ),
    "Session._take_now with read_request, the handler's start": (
        "Session._read_loop: peek_any, then Session._dispatch",
        "wire/test_fastpaths.py::test_a_reading_peers_requests_start_with_their_message_as_by_the_read_loop",
    ),
    "handlers.is_async: an `async def` told by its code flags": (
        "inspect.iscoroutinefunction of the callable and of its __call__",
        "wire/test_fastpaths.py::test_is_async_says_what_inspect_says",
    ),
    "LineStream(atomic=True): a pipe's lines sent without a lock (the stdio server's stdout)": (
        "LineStream.send under its lock",
        "transports/test_stdio.py::test_a_servers_answers_sent_at_once_stay_whole_lines",
    ),
    "asgi.Verdicts (the HTTP host's one cache of header verdicts)": (
        "the header check run on every request",
        "http/test_http_server.py::test_verdicts_judge_each_key_once_and_stay_bounded",
    ),
}

# Shortcuts without an oracle yet,
# each with what it stands beside.
WITHOUT_ORACLE: dict[str, str] = {}


def test_every_oracle_of_the_catalogue_exists() -> None:
    for fast, (general, oracle) in CATALOGUE.items():
        module, name = oracle.split("::")
        tree = ast.parse((TESTS / module).read_text(encoding="utf-8"))
        tests = {
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        assert name in tests, f"{fast}: no oracle {oracle} (beside {general})"
    assert not set(CATALOGUE) & set(WITHOUT_ORACLE)


def fresh(revision: str) -> Codec:
    """A codec of `revision` made for the caller alone (no plan of another call in it)."""
    shared = mcp_wire.codec(revision)
    made = type(shared)(shared.max_bytes)
    assert made is not shared
    return made


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
        settled = session._take_now(raw)  # pyright: ignore[reportPrivateUsage]
        expected = _peek_verdict(raw)
        assert settled is (expected is not None)
        for id, future in futures.items():
            assert future.done() is (id == expected)
            if future.done():
                assert future.result() is raw
    finally:
        loop.close()


REQUESTS = [
    *FRAMES,
    b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","_meta":'
    b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
    b'{"jsonrpc":"2.0","id":"s-9","method":"resources/read","params":{"uri":"file:///a"}}',
    b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","_meta":'
    b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{},'
    b'"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}}',
    b'{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}',  # served inline, in order
    b'{"jsonrpc":"2.0","id":"busy","method":"ping"}',  # an id being served
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
    b'{"jsonrpc":"2.0","id":9,"method":7}',
    b'{"jsonrpc":"2.0","id":[9],"method":"ping"}',
    b'{"jsonrpc":"2.0","id":9,"method":"ping","params":[]}',
    b'[{"jsonrpc":"2.0","id":9,"method":"ping"}]',  # a batch: the read loop's
]


def _started_by_the_read_loop(raw: bytes) -> Any:
    """The envelope the read loop hands a request's handler task, else None."""
    try:
        env = peek_any(raw)
    except ProtocolError:
        return None
    if env.kind != "request" or env.method == "initialize" or env.id == "busy":
        return None
    return env


@pytest.mark.parametrize("raw", REQUESTS)
def test_requests_started_straight_from_the_transport_as_by_the_read_loop(raw: bytes) -> None:
    started: list[tuple[bytes, Any]] = []

    class Peer:
        async def on_request(self, raw: bytes, env: Any) -> None:
            started.append((raw, env))

    async def main() -> None:
        session, taken = await _taken_now(Peer(), raw)
        expected = _started_by_the_read_loop(raw)
        assert taken is (expected is not None)
        assert started == ([(raw, expected)] if expected is not None else [])
        assert session.serves(expected.id) is False if expected is not None else True

    asyncio.run(main())


async def _taken_now(peer: Any, raw: bytes) -> tuple[Session, bool]:
    """A running session of `peer` (another request being served) offered `raw` as the
    transport's hook offers a frame: the session, and whether it took the frame (its handler's
    task has run once)."""
    session = Session(_Nothing(), peer)  # type: ignore[arg-type]
    session._tasks = object()  # type: ignore[assignment]  # (running)
    session._serving["busy"] = anyio.CancelScope()  # pyright: ignore[reportPrivateUsage]
    taken = session._take_now(raw)  # pyright: ignore[reportPrivateUsage]
    await asyncio.sleep(0)  # (the handler's task runs)
    return session, taken


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("raw", REQUESTS)
def test_a_reading_peers_requests_start_with_their_message_as_by_the_read_loop(
    raw: bytes, era: str
) -> None:
    """A peer that reads requests itself (`read_request`: the server connection's one parse)
    gets the request started with the envelope the read loop would give it, and the message
    it read (a frame it declines goes the peek's way)."""
    from mcpio._core.negotiate import MODERN, codec_of, read_legacy, read_modern

    started: list[tuple[bytes, Any, Any]] = []
    legacy = codec_of(LEGACY[-1])

    class Peer:
        def read_request(self, raw: bytes) -> Any:
            return read_legacy(legacy, raw) if era == "legacy" else read_modern(MODERN[-1], raw)

        async def on_request(self, raw: bytes, env: Any, message: Any = None) -> None:
            started.append((raw, env, message))

    async def main() -> None:
        _, taken = await _taken_now(Peer(), raw)
        expected = _started_by_the_read_loop(raw)
        assert taken is (expected is not None)
        assert [(r, e) for r, e, _ in started] == ([(raw, expected)] if expected else [])
        read = Peer().read_request(raw)
        if started and read is not None:
            assert started[0][2] is not None and started[0][2] == read[0]

    asyncio.run(main())


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
    models = [fresh(revision).decode_response(_frame(r), method).result for r in RESULTS[method]]
    general = []
    for model in models:  # each through a codec that has no plan: the general path
        codec = fresh(revision)
        assert method not in codec._public_results  # pyright: ignore[reportPrivateUsage]
        general.append(_projection(codec, method, model))
    planned = fresh(revision)
    first = _projection(planned, method, models[0])  # the general path; the plan is made
    assert method in planned._public_results  # pyright: ignore[reportPrivateUsage]
    assert first == general[0]
    if method == "tools/call":
        assert general[-1][0] == "error"  # (the case the public models cannot express)
    for model, expected in zip(models, general, strict=True):
        assert _projection(planned, method, model) == expected
    # a public model given back is returned as it is, plan or not
    public = planned.to_public(method, models[0], "result")
    assert planned.to_public(method, public, "result") is public


# What `public_result` reads beside RESULTS: members the public model has that a legacy result
# may carry as its own extras, a result of `LARGE` bytes or more (read as the codec reads it),
# and a task answered instead of the result (2025-11-25; not its own result model: projected).
BYTES_ONLY: dict[str, list[dict[str, Any]]] = {
    "tools/call": [
        {"content": [], "resultType": "complete"},
        {"content": [], "resultType": "input_required", "ttlMs": 5},
        {"content": [{"type": "text", "text": "x" * 3000}], "structuredContent": {"n": 1e300}},
        {
            "task": {
                "taskId": "t",
                "status": "working",
                "createdAt": "2025-01-01T00:00:00Z",
                "lastUpdatedAt": "2025-01-01T00:00:00Z",
                "ttl": None,
            }
        },
    ],
}


@pytest.mark.parametrize("revision", LEGACY)
@pytest.mark.parametrize("method", list(RESULTS))
def test_legacy_results_read_from_their_bytes_as_projected(revision: str, method: str) -> None:
    codec = fresh(revision)
    for result in [*RESULTS[method], *BYTES_ONLY.get(method, [])]:
        raw = _frame(result)
        try:
            model = codec.decode_response(raw, method).result
        except ProtocolError:  # (a task result where the revision has none)
            continue
        expected = _projection(fresh(revision), method, model)
        for _ in range(2):  # the reader's first use makes it; the second uses it
            try:
                public = codec.public_result(method, model, raw)
            except ProtocolError as exc:
                assert ("error", exc.code, exc.message, exc.data) == expected
                continue
            assert (type(public), plain(public)) == expected
            assert (
                public.model_fields_set == expected[0].model_validate(expected[1]).model_fields_set
            )
    plans = codec._public_reads._results  # pyright: ignore[reportPrivateUsage]
    assert plans[method] is not None  # (the shortcut was there to take)


PARAMS: dict[str, list[dict[str, Any] | None]] = {
    "tools/call": [
        {"name": "echo", "arguments": {"text": "hi"}},
        {"name": "e", "arguments": {"n": [1, 2.5, None], "deep": {"x": True}}, "extra": "kept"},
        {"name": "e", "_meta": {"progressToken": 5}},  # its own `_meta`: merged, in general
        {"name": "e", "arguments": {"text": "x" * 3000}},
        {"name": 5},  # not a tools/call: refused by decode
    ],
    "resources/read": [{"uri": "file:///a"}, {"uri": "file:///a", "_meta": {"k": [1]}}],
    "prompts/get": [{"name": "p", "arguments": {"a": "b"}}],
    "tools/list": [None, {}, {"cursor": "c"}],
}
CAPABILITIES: list[dict[str, Any] | None] = [None, {}, {"roots": {"listChanged": True}}]


@pytest.mark.parametrize("revision", LEGACY)
@pytest.mark.parametrize("method", list(PARAMS))
def test_legacy_params_read_from_their_bytes_as_projected(revision: str, method: str) -> None:
    codec = fresh(revision)
    for params in PARAMS[method]:
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            frame["params"] = params
        raw = json.dumps(frame).encode()
        try:
            own = codec.decode(raw).params
        except ProtocolError:
            continue
        for capabilities in CAPABILITIES:
            general = fresh(revision)
            try:
                expected: Any = general.to_public(
                    method, own, "params", client_capabilities=capabilities
                )
                expected = (type(expected), plain(expected))
            except ProtocolError as exc:
                expected = ("error", exc.code, exc.message, exc.data)
            metas = []
            for _ in range(2):  # the reader's first use makes it; the second uses it
                try:
                    public = codec.public_params(method, own, raw, client_capabilities=capabilities)
                except ProtocolError as exc:
                    assert ("error", exc.code, exc.message, exc.data) == expected
                    continue
                assert (type(public), plain(public)) == expected
                metas.append(getattr(public, "meta", None))
            if len(metas) == 2 and metas[0] is not None:
                assert metas[0] is not metas[1]  # each request its own `_meta`
    plans = codec._public_reads._params  # pyright: ignore[reportPrivateUsage]
    assert plans[method] is not None  # (the shortcut was there to take)


def test_legacy_params_get_the_envelope_of_the_capabilities_given_now() -> None:
    """The envelope made for one session's capabilities is not another's, nor that of the same
    dict changed since."""
    codec = fresh("2025-11-25")
    raw = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e"}}'
    own = codec.decode(raw).params
    capabilities: dict[str, Any] = {"roots": {"listChanged": True}}
    key = "io.modelcontextprotocol/clientCapabilities"

    def envelope() -> Any:
        public = codec.public_params("tools/call", own, raw, client_capabilities=capabilities)
        return plain(public)["_meta"][key]

    assert envelope() == {"roots": {"listChanged": True}}
    capabilities["sampling"] = {}  # the same dict, changed
    assert envelope() == {"roots": {"listChanged": True}, "sampling": {}}
    capabilities = {}
    assert envelope() == {}


def _frame(result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()


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
    """`PushedLines.arrived`'s whole-line path takes the lines the general one would."""
    from mcpio.transports.stdio import PushedLines

    async def nothing(data: bytes = b"") -> None:
        raise AssertionError("nothing is written or closed")

    loop = asyncio.new_event_loop()
    try:
        transport = PushedLines(nothing, nothing)
        taken: list[bytes] = []

        def settle(raw: bytes, id: Any = None) -> bool:
            try:  # (as `_take_now` of a client: what is not a JSON response is left)
                if "method" in json.loads(raw):
                    return False
            except ValueError:
                return False
            taken.append(raw)
            return True

        transport.on_frame = settle
        waiter = transport._waiter = loop.create_future()  # pyright: ignore[reportPrivateUsage]
        for chunk in chunks:
            transport.arrived(chunk)
        assert taken == settled
        assert list(transport._lines) == left  # pyright: ignore[reportPrivateUsage]
        assert waiter.done() is bool(left or chunks[-1] == b"")
    finally:
        loop.close()


# ---------------------------------------------------------------- the client's request frames

ARGUMENTS: list[dict[str, Any] | None] = [
    {"text": "hi"},
    None,
    {},
    {"text": 'é\u2028"quoted"', "nested": {"n": [1, 2.5, True, None, {"deep": []}]}},
]


def _envelope(codec: Codec) -> dict[str, Any]:
    if codec.era != "modern":
        return {}
    info = {"name": "oracle", "version": "1.0"}
    return {"client_capabilities": {}, "client_info": info, "protocol_version": codec.revision}


@pytest.mark.parametrize("revision", mcp_wire.REVISIONS)
@pytest.mark.parametrize("level", [None, "debug"])
def test_fast_call_frames_equal_the_general_builders(revision: str, level: str | None) -> None:
    frames = RequestFrames(_envelope)
    frames.log_level = level
    for index, arguments in enumerate(ARGUMENTS):
        data: dict[str, Any] = {"name": "echo"}
        if arguments is not None:
            data["arguments"] = arguments
        for progress in (False, True):
            fast = frames.fast(fresh(revision), index, data, progress)
            assert fast is not None  # plain JSON: the fast builder takes it
            general = frames.general(fresh(revision), "tools/call", data, index, progress, None)
            assert json.loads(fast) == json.loads(general)
    # what the fast builder cannot vouch for goes the general way
    for odd in ({"name": "x", "arguments": {"n": float("nan")}}, {"name": "x", "task": {}}):
        assert frames.fast(fresh(revision), 1, odd, False) is None


# ---------------------------------------------------------------- the HTTP client transport


def _requests() -> list[bytes]:
    out: list[bytes] = []
    for revision in mcp_wire.REVISIONS:
        codec = fresh(revision)
        for id in (1, "r-1", 2**40):
            params = {"name": "echo", "arguments": {"text": "x"}}
            out.append(codec.encode(codec.request("tools/call", params, id=id, **_envelope(codec))))
            out.append(codec.encode(codec.request("tools/list", None, id=id, **_envelope(codec))))
    out.append(b'{"jsonrpc":"2.0","id":3,"method":"x/y","params":{"_meta":{}}}')
    return out


@pytest.mark.parametrize("raw", _requests())
def test_a_request_is_carried_by_its_envelope_as_parsed_whole(raw: bytes) -> None:
    """`HttpTransport.send` routes a request by `peek_any`'s envelope; parsed whole, the frame
    says the same id, method and protocol version."""
    env = peek_any(raw)
    frame = pydantic_core.from_json(raw)
    assert env.kind == "request"
    assert (env.id, env.method) == (frame["id"], frame["method"])
    assert env.protocol_version == envelope_version(frame)


def _http_server() -> Any:
    server = Server("oracle", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Echoes."""
        return text

    @server.tool()
    async def steps(ctx: Context) -> str:
        """Reports progress, then answers."""
        for step in range(3):
            await ctx.report_progress(step, 3)
        return "stepped"

    @server.tool()
    async def fails() -> str:
        """Fails."""
        raise ValueError("no")

    return server


async def _http_calls(revision: str) -> list[Any]:
    seen: list[Any] = []
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=_http_server().http_app()))
    async with http:
        with anyio.fail_after(20):
            async with Client("http://127.0.0.1/mcp", mode=revision, http=http) as client:
                for text in ("a", "b", "c"):
                    seen.append(plain(await client.call_tool("echo", {"text": text})))
                seen.append([tool.name for tool in (await client.list_tools()).tools])
                result = await client.call_tool("steps", {}, progress=lambda p, *_: seen.append(p))
                seen.append(plain(result))  # after its progress: the order of frames holds
                seen.append(plain(await client.call_tool("fails", {})))
                try:
                    await client.request("no/such", {})
                except ProtocolError as exc:
                    seen.append(exc.code)
    return seen


@pytest.mark.anyio
@pytest.mark.parametrize("revision", ["2026-07-28", "2025-06-18"])
async def test_http_responses_settled_by_their_envelope_as_by_the_read_loop(
    revision: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpio.transports.http_client import HttpTransport

    settled: list[Any] = []
    settle = Session._settle_pending  # pyright: ignore[reportPrivateUsage]

    def counted(self: Session, raw: bytes, id: Any) -> bool:
        taken = settle(self, raw, id)
        settled.append(taken)
        return taken

    monkeypatch.setattr(Session, "_settle_pending", counted)
    fast = await _http_calls(revision)
    assert any(settled)  # the fast path was taken
    monkeypatch.setattr(HttpTransport, "_idle", lambda self: False)
    settled.clear()
    general = await _http_calls(revision)
    assert not any(settled)
    assert fast == general
    assert fast[4:7] == [0, 1, 2]  # progress before the result it comes with


async def _outbox_step(
    outbox: Outbox, send: Any, recv: Any, op: str, item: bytes
) -> tuple[Any, Any]:
    """One operation on the outbox and on a memory object stream of the same bound: what each
    answered (`wait`: a receive that would wait; `end`: the stream ended)."""
    if op == "put":
        try:
            send.send_nowait(item)
            general: Any = True
        except anyio.WouldBlock:
            general = False
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            general = True  # a closed outbox takes and drops
        return outbox.put(item), general
    if op == "close":
        outbox.close()
        send.close()
        return None, None
    try:
        general = recv.receive_nowait()
    except anyio.WouldBlock:
        general = "wait"
    except anyio.EndOfStream:
        general = "end"
    fast: Any = "wait"
    with anyio.move_on_after(0.001):
        try:
            fast = await outbox.receive()
        except anyio.EndOfStream:
            fast = "end"
    return fast, general


@pytest.mark.anyio
@pytest.mark.parametrize("seed", range(40))
async def test_an_outbox_answers_as_a_bounded_memory_stream(seed: int) -> None:
    """`Outbox` (a legacy session's exchange: a deque and a waiter) against an anyio memory
    object stream of the same bound, over random puts, receives and a close: the same
    acceptances and refusals, the same frames in the same order, the same end."""
    rng = random.Random(seed)
    size = rng.randint(1, 4)
    outbox = Outbox(size)
    send, recv = anyio.create_memory_object_stream[bytes](size)
    ops = rng.choices(["put", "put", "receive", "close"], weights=[4, 4, 4, 1], k=30)
    with send, recv:
        for n, op in enumerate(ops):
            fast, general = await _outbox_step(outbox, send, recv, op, b"%d" % n)
            assert fast == general, (seed, n, op)


@pytest.mark.anyio
async def test_an_outbox_wakes_a_waiting_reader_as_a_memory_stream_does() -> None:
    outbox = Outbox(2)
    got: list[bytes | Done] = []

    async def read() -> None:
        got.append(await outbox.receive())

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        await anyio.sleep(0.01)
        assert outbox.put(b"late")
    assert got == [b"late"]


async def _coroutine_function(x: int) -> int:
    return x


def _plain_function(x: int) -> int:
    return x


async def _async_generator() -> Any:
    yield 1


class _AsyncCall:
    async def __call__(self) -> None:
        pass


class _SyncCall:
    def __call__(self) -> None:
        pass


def test_is_async_says_what_inspect_says() -> None:
    """The code-flag check of `is_async` agrees with `inspect` for every kind of callable."""
    import functools
    import inspect

    from mcpio._core.handlers import is_async

    marked = (
        inspect.markcoroutinefunction(lambda: None)
        if hasattr(inspect, "markcoroutinefunction")
        else None
    )
    callables: list[Any] = [
        _coroutine_function,
        _plain_function,
        _async_generator,
        _AsyncCall(),
        _SyncCall(),
        _AsyncCall().__call__,
        functools.partial(_coroutine_function, 1),
        functools.partial(_plain_function, 1),
        lambda: None,
        print,
        _SyncCall,
    ]
    if marked is not None:
        callables.append(marked)
    for fn in callables:
        general = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004
        )
        assert is_async(fn) is general, fn


def test_a_handler_cancelled_before_it_started_frees_its_id_however_cancelled() -> None:
    """A request's task takes no done callback when it starts (every request's path): one
    cancelled through the session (`cancel_incoming`) and one cancelled by another before it
    ran both free their id and are told to `on_served`, as a handler that ran is."""
    served: list[Any] = []

    class Peer:
        async def on_request(self, raw: bytes, env: Any) -> None:
            raise AssertionError("never runs")

    async def main() -> None:
        session = Session(_Nothing(), Peer())  # type: ignore[arg-type]
        session._tasks = object()  # type: ignore[assignment]  # (running)
        session.on_served = served.append
        for id in (1, 2):
            raw = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % id
            assert session._take_now(raw)  # pyright: ignore[reportPrivateUsage]
        assert session.cancel_incoming(1)
        task = session._serving[2]  # pyright: ignore[reportPrivateUsage]
        assert isinstance(task, asyncio.Task)
        task.cancel()  # by another than the session
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert served == [1] and session.serves(2)
        assert session._handlers() == []  # pyright: ignore[reportPrivateUsage]
        assert served == [1, 2] and not session.serves(1) and not session.serves(2)

    asyncio.run(main())
