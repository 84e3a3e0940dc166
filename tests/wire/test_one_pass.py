"""Reading a frame costs one validation pass, valid or not (issue 8), and `codec.peek` reads the
envelope alone; what a read accepts, encode writes back as a valid frame (issue 10)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mcp_wire
from mcp_wire import MessageBuildError, ProtocolError
from mcp_wire_runtime import _failures as failures
from mcp_wire_runtime import _numbers as numbers
from mcp_wire_runtime._failures import MAX_DEPTH, MAX_DIGITS
from mcp_wire_runtime._peek import NAMED_BY, Peek
from tests.support import EXAMPLES, REVISIONS
from tests.support.messages import message

FRAMES = sorted(
    path
    for path in (EXAMPLES / "2026-07-28").glob("*/*.json")
    if '"jsonrpc"' in path.read_text(encoding="utf-8")
)
MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def dumps(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def fails(call: Callable[..., Any], *args: Any, **kwargs: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        call(*args, **kwargs)
    return caught.value


# --- peek -----------------------------------------------------------------------------------


def _expected_peek(frame: dict[str, Any]) -> Peek:
    method = frame.get("method")
    params = frame.get("params") or {}
    if method is not None:
        kind = "request" if "id" in frame else "notification"
    else:
        kind = "error" if "error" in frame else "result"
    key = NAMED_BY.get(method) if kind == "request" and method else None
    name = params.get(key) if key else None
    version = params.get("_meta", {}).get(VERSION_KEY) if kind == "request" else None
    return Peek(kind, frame.get("id"), method, name, version)


@pytest.mark.parametrize("path", FRAMES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_peek_reads_the_envelope_of_every_official_frame(path: Path) -> None:
    codec = mcp_wire.codec(MODERN)
    raw = path.read_bytes()
    frame = json.loads(raw)
    peek = codec.peek(raw)
    assert peek == _expected_peek(frame)
    assert codec.peek(raw.decode()) == peek  # text too
    if peek.kind == "request":
        assert peek.protocol_version == MODERN


def test_peek_names_the_routing_member_of_the_named_methods() -> None:
    codec = mcp_wire.codec(MODERN)
    for method, member in NAMED_BY.items():
        frame = {"jsonrpc": "2.0", "id": 7, "method": method, "params": {member: "x/y"}}
        assert codec.peek(dumps(frame)) == Peek("request", 7, method, "x/y", None)
        # Another method's `name` is not a routing name; a name of the wrong shape is not read.
        other = {**frame, "method": "tools/list"}
        assert codec.peek(dumps(other)).name is None
        frame["params"] = {member: 5}
        assert codec.peek(dumps(frame)).name is None  # peek does not judge params


def test_peek_on_a_legacy_codec_reads_no_protocol_version() -> None:
    codec = mcp_wire.codec("2025-06-18")
    frame = {
        "jsonrpc": "2.0",
        "id": "a",
        "method": "tools/call",
        "params": {"name": "t", "_meta": {VERSION_KEY: "2026-07-28"}},
    }
    assert codec.peek(dumps(frame)) == Peek("request", "a", "tools/call", "t", None)


@pytest.mark.parametrize("rev", REVISIONS)
@pytest.mark.parametrize(
    ("raw", "code", "field"),
    [
        (b"{", -32700, None),
        (b"\xff", -32700, None),
        (b"[]", -32600, None),
        (b"7", -32600, None),
        (b"{}", -32600, "jsonrpc"),
        (b'{"jsonrpc":"1.0","id":1,"method":"tools/list"}', -32600, "jsonrpc"),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', -32600, "id"),
        (b'{"jsonrpc":"2.0","id":true,"result":{}}', -32600, "id"),
        (b'{"jsonrpc":"2.0","method":5}', -32600, "method"),
        (b'{"jsonrpc":"2.0","id":1}', -32600, None),
        (b'{"jsonrpc":"2.0","result":{}}', -32600, "id"),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":7}', None, None),
    ],
)
def test_peek_refuses_what_is_not_a_json_rpc_message(
    rev: str, raw: bytes, code: int | None, field: str | None
) -> None:
    codec = mcp_wire.codec(rev)
    if code is None:
        assert codec.peek(raw).method == "x"  # params of the wrong shape: not peek's business
        return
    err = fails(codec.peek, raw)
    assert err.code == code
    if field is not None:
        assert (err.data or {}).get("field") == field
    # decode agrees on the kind of fault
    assert fails(codec.decode, raw).code == code


def test_peek_honours_the_size_limit() -> None:
    codec = type(mcp_wire.codec(MODERN))(max_bytes=64)
    assert fails(codec.peek, b" " * 65 + b"{}").code == -32600


# --- one pass ---------------------------------------------------------------------------------


def _never_parse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a failing frame was parsed a second time")


MALFORMED = [
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}', -32602),
    (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":1e400}}}',
        -32602,
    ),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/explode"}', -32601),
    (b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"result":[]}', -32600),
    (b'{"jsonrpc":"2.0","id":1}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call",', -32700),
]


@pytest.mark.parametrize("rev", REVISIONS)
@pytest.mark.parametrize(("raw", "code"), MALFORMED)
def test_a_malformed_frame_is_read_once(
    rev: str, raw: bytes, code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its error comes from the one validation pass: nothing parses it again."""
    codec = type(mcp_wire.codec(rev))()
    reads: list[bytes] = []
    read = codec._readers().message

    def counted(data: bytes) -> Any:
        reads.append(data)
        return read(data)

    codec._read_message = counted
    monkeypatch.setattr(failures.pydantic_core, "from_json", _never_parse)
    assert fails(codec.decode, raw).code == code
    assert reads == [raw]


@pytest.mark.parametrize("rev", REVISIONS)
def test_a_valid_frame_is_read_once(rev: str, monkeypatch: pytest.MonkeyPatch) -> None:
    codec = type(mcp_wire.codec(rev))()
    reads: list[bytes] = []
    read = codec._readers().message
    codec._read_message = lambda data: reads.append(data) or read(data)
    monkeypatch.setattr(failures.pydantic_core, "from_json", _never_parse)
    raw = b'{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no such method"}}'
    assert codec.decode(raw).error.code == -32601
    assert reads == [raw]


def _rows(count: int, number: str = "1.5") -> str:
    rows = ",".join(f'{{"id":{i},"score":{number},"tags":["a","b"]}}' for i in range(count))
    return f'{{"rows":[{rows}]}}'


def _large_result(structured: str, text: str = "x") -> bytes:
    """A 2026-07-28 tools/call result of `numbers.LARGE` bytes or more."""
    frame = '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":'
    frame += f'[{{"type":"text","text":"{text}"}}],"structuredContent":{structured}}}}}'
    raw = frame.encode()
    assert len(raw) >= numbers.LARGE
    return raw


LARGE_FRAMES = {  # name -> (frame, reads): JSON values that are large, or small in a large frame
    "large JSON value": (_large_result(_rows(200)), 1),
    "small JSON value": (_large_result('{"n":2.5}', "x" * 5000), 1),
    # a large value's bytes are scanned: a 3-digit exponent is a candidate, read again (kept)
    "large, a 3-digit exponent": (_large_result(_rows(200, "1e100")), 2),
    # a small value is walked, which tells a finite number apart: read once
    "small, a 3-digit exponent": (_large_result('{"n":1e100}', "x" * 5000), 1),
}


@pytest.mark.parametrize("name", LARGE_FRAMES)
def test_a_large_frame_is_read_again_only_when_it_may_hold_a_number_out_of_range(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large frame's JSON values are checked after it is read, at a cost bounded by its size
    (`numbers.read_large`); only a candidate frame is read again."""
    raw, expected = LARGE_FRAMES[name]
    codec = type(mcp_wire.codec(MODERN))()
    reader = codec._readers().response("tools/call")
    reads: list[bytes] = []

    class Counted:
        def validate_json(self, data: bytes) -> Any:
            reads.append(data)
            return reader.validate_json(data)

    codec._read_responses["tools/call"] = Counted()  # type: ignore[assignment]
    monkeypatch.setattr(failures.pydantic_core, "from_json", _never_parse)
    message = codec.decode_response(raw, "tools/call")
    assert len(reads) == expected
    assert codec.decode(codec.encode(message)) == codec.decode(raw)


@pytest.mark.parametrize(
    ("structured", "text"),
    [  # a large value (its bytes scanned), or a small one in a large frame (walked)
        (_rows(200, "1e400"), "x"),
        (_rows(200, "-1E+999"), "x" * 5000),
        ('{"deep":[[{"n":1e400}]]}', "x" * 5000),
    ],
)
def test_a_large_frame_refuses_a_number_out_of_range_naming_it(structured: str, text: str) -> None:
    codec = mcp_wire.codec(MODERN)
    raw = _large_result(structured, text)
    for read in (codec.decode, lambda r: codec.decode_response(r, "tools/call")):
        error = fails(read, raw)
        assert error.code == -32600
        field = error.data["errors"][0]["field"]  # type: ignore[index]
        assert field.endswith(("structuredContent.rows.0.score", "structuredContent.deep.0.0.n"))


def test_a_large_frame_with_nan_in_a_json_value_is_not_json() -> None:
    codec = mcp_wire.codec(MODERN)
    assert fails(codec.decode, _large_result(_rows(200, "NaN"))).code == -32700
    assert fails(codec.decode, _large_result('{"n":-Infinity}', "x" * 5000)).code == -32700


def test_a_failing_large_read_leaves_small_frames_walked() -> None:
    """The large-frame state is the read's own: after a large frame fails, a small one with an
    overflowing number is still refused."""
    codec = mcp_wire.codec(MODERN)
    fails(codec.decode, _large_result(_rows(200, '"not a number" ]')))
    small = b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[],'
    small += b'"structuredContent":{"n":[1e400]}}}'
    assert len(small) < numbers.LARGE
    assert fails(codec.decode, small).data["errors"][0]["field"] == "result.structuredContent.n.0"  # type: ignore[index]


# --- what decode accepts, encode writes back --------------------------------------------------


def test_an_undefined_reserved_meta_key_from_a_peer_is_written_back() -> None:
    """A proxy forwards what it read; only the builders refuse to mint such keys."""
    codec = mcp_wire.codec(MODERN)
    key = "io.modelcontextprotocol/subscriptionIt"
    frame = {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {key: "x"}},
    }
    message = codec.decode(dumps(frame))
    assert json.loads(codec.encode(message)) == frame
    with pytest.raises(MessageBuildError, match="reserved"):
        codec.notification("notifications/tools/list_changed", {"_meta": {key: "x"}})


def test_a_result_without_result_type_is_written_with_it() -> None:
    codec = mcp_wire.codec(MODERN)
    raw = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'
    message = codec.decode_response(raw, "tools/list")
    assert message.result.model_fields_set == {"tools"}
    written = json.loads(codec.encode(message))
    assert written["result"] == {
        "tools": [],
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
    }
    assert message.result.model_fields_set == {"tools"}  # the message read is left as it was


# --- documented limits ------------------------------------------------------------------------


def _call_nested(rev: str, depth: int) -> bytes:
    """A tools/call whose frame nests arrays and objects `depth` levels deep (the frame, its
    params and arguments are three)."""
    frame = copy.deepcopy(message(rev, "tools/call"))
    frame["params"]["arguments"] = {"a": "@"}
    text = json.dumps(frame)
    return text.replace('"@"', "[" * (depth - 3) + "]" * (depth - 3)).encode()


@pytest.mark.parametrize("rev", REVISIONS)
def test_the_nesting_and_digit_limits_are_invalid_requests_that_name_them(rev: str) -> None:
    codec = mcp_wire.codec(rev)
    decoded = codec.decode(_call_nested(rev, MAX_DEPTH))
    assert json.loads(codec.encode(decoded)) == json.loads(_call_nested(rev, MAX_DEPTH))
    for raw in (_call_nested(rev, MAX_DEPTH + 1), _call_nested(rev, 100_000)):
        err = fails(codec.decode, raw)
        assert err.code == -32600 and err.data == {"limit": "depth", "max": MAX_DEPTH}
        assert str(MAX_DEPTH) in err.message
        assert fails(codec.peek, raw).data == err.data
    big = json.dumps({**message(rev, "tools/call"), "id": "@"})
    for digits, ok in ((MAX_DIGITS, True), (MAX_DIGITS + 1, False)):
        raw = big.replace('"@"', "7" * digits).encode()
        if ok:
            assert codec.decode(raw).id == int("7" * digits)
        else:
            err = fails(codec.decode, raw)
            assert err.code == -32600 and err.data == {"limit": "digits", "max": MAX_DIGITS}
