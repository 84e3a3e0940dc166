"""The wire codecs of every revision: gating, the bad-input corpus, the modern envelope, lenient
list decoding and the public layer.

Which methods, fields and frames a revision has is read from the IR (`revision_ir`), never
listed here; valid messages come from the golden exchanges (`tests/golden`, schema-checked).
Every failure must be a `ProtocolError` with the exact JSON-RPC code, a one-line message and
data naming what failed; any other exception fails the test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import mcp_wire
from codegen.ir import Era, Kind, Revision
from mcp_wire import MessageBuildError, ProtocolError
from mcp_wire_runtime import LenientResponse
from tests.support import REVISIONS, revision_ir
from tests.support.messages import golden, message

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32603,
)
LATEST = mcp_wire.LATEST
OLDER = [r for r in REVISIONS if r != LATEST]
LEGACY = [r for r in REVISIONS if revision_ir(r).era is Era.LEGACY]
MODERN = [r for r in REVISIONS if revision_ir(r).era is Era.MODERN]
ALL_METHODS = sorted({m.name for r in REVISIONS for m in revision_ir(r).methods})
LIST_CASES = [
    (r, m.name)
    for r in REVISIONS
    for m in revision_ir(r).methods
    if m.list_field and m.list_item in ("Tool", "Prompt", "Resource", "ResourceTemplate")
]
INPUT_CASES = [
    (r, m.name) for r in REVISIONS for m in revision_ir(r).methods if m.kind is Kind.INPUT_REQUEST
]
INTERIM_CASES = [(r, m.name) for r in MODERN for m in revision_ir(r).methods if m.input_required]


# --- helpers ---------------------------------------------------------------------------------


def result_of(rev: str, method: str, definition: str | None = None) -> dict[str, Any]:
    results = golden(rev, method)["results"]
    ir = revision_ir(rev).method(method)
    assert ir is not None
    return json.loads(json.dumps(results[definition or ir.result]))


def dumps(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def fails(call: Callable[..., Any], *args: Any, **kwargs: Any) -> ProtocolError:
    """The ProtocolError `call` raises; any other exception (or none) fails the test."""
    with pytest.raises(ProtocolError) as info:
        call(*args, **kwargs)
    err = info.value
    assert type(err) is ProtocolError
    assert isinstance(err.code, int)
    assert isinstance(err.message, str) and err.message
    assert "\n" not in err.message and "\r" not in err.message, err.message
    assert err.to_error()["code"] == err.code
    return err


def error_fields(err: ProtocolError) -> list[str]:
    """The failing fields a ProtocolError names in its data."""
    data = err.data
    assert isinstance(data, dict), f"{err!r} names no field: data={data!r}"
    fields = [e["field"] for e in data.get("errors", [])]
    if "field" in data:
        fields.append(data["field"])
    fields.extend(data.get("unknown", []))
    assert fields, f"{err!r} names no field: data={data!r}"
    return fields


def wire(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def definition_fields(ir: Revision, name: str) -> set[str]:
    return {f.name for f in ir.definitions[name].fields}


def public_list_tools_result() -> Any:
    """A latest-revision ListToolsResult using members older revisions lack."""
    return mcp_wire.revision(LATEST).ListToolsResult.model_validate(
        {
            "resultType": "complete",
            "ttlMs": 5000,
            "cacheScope": "public",
            "nextCursor": "page-2",
            "tools": [
                {
                    "name": "search",
                    "title": "Search",
                    "icons": [{"src": "https://example.com/icon.png"}],
                    "inputSchema": {
                        "type": "object",
                        "properties": {"q": {"type": "string", "minLength": 1}},
                        "required": ["q"],
                        "additionalProperties": False,
                    },
                    "annotations": {"readOnlyHint": True},
                }
            ],
        }
    )


# --- 1. gating ---------------------------------------------------------------------------------


def test_every_revision_lacks_some_method_of_another():
    for rev in REVISIONS:
        own = {m.name for m in revision_ir(rev).methods}
        assert set(ALL_METHODS) - own, rev
    assert revision_ir("2025-11-25").method("server/discover") is None
    assert revision_ir(LATEST).method("initialize") is None


@pytest.mark.parametrize("rev", REVISIONS)
def test_methods_of_other_revisions_are_method_not_found(rev: str):
    codec = mcp_wire.codec(rev)
    ir = revision_ir(rev)
    missing = [name for name in ALL_METHODS if ir.method(name) is None]
    for name in missing:
        for frame in (
            {"jsonrpc": "2.0", "id": 7, "method": name, "params": {}},
            {"jsonrpc": "2.0", "id": "s-7", "method": name},
            {"jsonrpc": "2.0", "method": name, "params": {}},
        ):
            err = fails(codec.decode, dumps(frame))
            assert err.code == METHOD_NOT_FOUND, (name, err)
            assert err.data == {"method": name}
        assert fails(codec.request, name, {}, id=1).code == METHOD_NOT_FOUND
        response = dumps({"jsonrpc": "2.0", "id": 1, "result": {}})
        assert fails(codec.decode_response, response, name).code == METHOD_NOT_FOUND


@pytest.mark.parametrize("rev", REVISIONS)
def test_methods_of_the_revision_decode(rev: str):
    codec = mcp_wire.codec(rev)
    for m in revision_ir(rev).methods:
        if m.kind is Kind.INPUT_REQUEST:
            continue
        decoded = codec.decode(dumps(message(rev, m.name)))
        frames = codec.requests if m.kind is Kind.REQUEST else codec.notifications
        assert type(decoded) is frames[m.name]


def test_modern_input_requests_are_read_from_the_ir():
    assert MODERN
    for rev in MODERN:
        inputs = {m.name for m in revision_ir(rev).methods if m.kind is Kind.INPUT_REQUEST}
        assert {"elicitation/create", "sampling/createMessage", "roots/list"} <= inputs
    assert all(revision_ir(r).era is Era.MODERN for r, _ in INPUT_CASES)


@pytest.mark.parametrize(("rev", "method"), INPUT_CASES)
def test_input_requests_are_not_json_rpc_messages(rev: str, method: str):
    codec = mcp_wire.codec(rev)
    embedded = golden(rev, method)["message"]  # {method, params}: valid inside a result
    for frame in (
        {"jsonrpc": "2.0", "id": 1, **embedded},
        {"jsonrpc": "2.0", **embedded},
    ):
        err = fails(codec.decode, dumps(frame))
        assert err.code == METHOD_NOT_FOUND
        assert err.data == {"method": method}
    assert fails(codec.request, method, embedded.get("params"), id=1).code == METHOD_NOT_FOUND
    assert fails(codec.notification, method, embedded.get("params")).code == METHOD_NOT_FOUND
    assert method not in codec.requests and method not in codec.notifications


@pytest.mark.parametrize("rev", REVISIONS)
def test_a_message_of_the_wrong_kind_is_an_invalid_request(rev: str):
    codec = mcp_wire.codec(rev)
    ir = revision_ir(rev)
    notifications = [m.name for m in ir.methods if m.kind is Kind.NOTIFICATION]
    requests = [m.name for m in ir.methods if m.kind is Kind.REQUEST]
    assert notifications and requests
    for name in notifications:
        err = fails(codec.decode, dumps(message(rev, name, id=5)))
        assert err.code == INVALID_REQUEST, (name, err)
        assert err.data == {"method": name}
        assert fails(codec.request, name, message(rev, name).get("params"), id=5).code == (
            INVALID_REQUEST
        )
    for name in requests:
        err = fails(codec.decode, dumps({"jsonrpc": "2.0", "method": name}))
        assert err.code == INVALID_REQUEST, (name, err)
        assert err.data == {"method": name}
        err = fails(codec.decode, dumps(message(rev, name, id=None)))
        assert err.code == INVALID_REQUEST, (name, err)
        assert fails(codec.notification, name, message(rev, name).get("params")).code == (
            INVALID_REQUEST
        )


def test_only_2025_03_26_batches():
    assert [r for r in REVISIONS if revision_ir(r).batching] == ["2025-03-26"]


BATCHING = [r for r in REVISIONS if revision_ir(r).batching]
NOT_BATCHING = [r for r in REVISIONS if not revision_ir(r).batching]


@dataclass
class Batch:
    """A revision's codec, a tools/list request, a cancellation, a response, the three as one
    batch (`mixed`), and the request and the notification as the codec built them."""

    codec: Any
    request: dict[str, Any]
    notification: dict[str, Any]
    response: dict[str, Any]
    mixed: bytes
    built: list[Any]


def batch_of(rev: str) -> Batch:
    codec = mcp_wire.codec(rev)
    request = message(rev, "tools/list")
    notification = message(rev, "notifications/cancelled")
    response = {"jsonrpc": "2.0", "id": 3, "result": {}}
    built = [
        codec.request("tools/list", request.get("params"), id=request["id"]),
        codec.notification("notifications/cancelled", notification["params"]),
    ]
    mixed = dumps([request, notification, response])
    return Batch(codec, request, notification, response, mixed, built)


@pytest.mark.parametrize("rev", BATCHING)
def test_a_batch_of_a_request_and_a_notification_decodes_to_their_types(rev: str):
    b = batch_of(rev)
    decoded = b.codec.decode(dumps([b.request, b.notification]))
    assert isinstance(decoded, list) and len(decoded) == 2
    assert type(decoded[0]) is b.codec.requests["tools/list"]
    assert type(decoded[1]) is b.codec.notifications["notifications/cancelled"]


@pytest.mark.parametrize("rev", BATCHING)
def test_a_batch_of_responses_decodes(rev: str):
    b = batch_of(rev)
    answers = b.codec.decode(dumps([b.response, {**b.response, "id": 4}]))
    assert [m.id for m in answers] == [3, 4]


@pytest.mark.parametrize("rev", BATCHING)
def test_requests_and_responses_never_share_a_batch(rev: str):
    # The schema has one batch of each.
    b = batch_of(rev)
    err = fails(b.codec.decode, b.mixed)
    assert err.code == INVALID_REQUEST and err.data["index"] == 2


@pytest.mark.parametrize("rev", BATCHING)
def test_a_built_batch_encodes_to_its_frames_and_decodes_back(rev: str):
    b = batch_of(rev)
    encoded = b.codec.encode(b.built)
    assert json.loads(encoded) == [b.request, b.notification]
    again = b.codec.decode(encoded, strict=True)
    assert [type(m) for m in again] == [type(m) for m in b.built]


@pytest.mark.parametrize("rev", BATCHING)
def test_a_bad_item_fails_the_batch_naming_the_item(rev: str):
    b = batch_of(rev)
    unknown = {"jsonrpc": "2.0", "id": 4, "method": "nope"}
    err = fails(b.codec.decode, dumps([b.request, unknown]))
    assert err.code == METHOD_NOT_FOUND and err.data["index"] == 1
    err = fails(b.codec.decode, dumps([b.request, 5]))
    assert err.code == INVALID_REQUEST and err.data["index"] == 1


@pytest.mark.parametrize("rev", NOT_BATCHING)
def test_a_revision_without_batches_refuses_them_both_ways(rev: str):
    b = batch_of(rev)
    assert fails(b.codec.decode, b.mixed).code == INVALID_REQUEST
    assert fails(b.codec.decode, dumps([b.request])).code == INVALID_REQUEST
    assert fails(b.codec.encode, b.built).code == INVALID_REQUEST
    assert fails(b.codec.encode, b.built[:1]).code == INVALID_REQUEST


@pytest.mark.parametrize("rev", REVISIONS)
def test_an_empty_batch_is_never_valid(rev: str):
    codec = mcp_wire.codec(rev)
    assert fails(codec.decode, b"[]").code == INVALID_REQUEST
    assert fails(codec.encode, []).code == INVALID_REQUEST


@pytest.mark.parametrize("rev", REVISIONS)
def test_a_batch_is_never_a_response_to_decode(rev: str):
    b = batch_of(rev)
    assert fails(b.codec.decode_response, b.mixed, "tools/list").code == INVALID_REQUEST


# --- 1b. fields a revision lacks ---------------------------------------------------------------


@pytest.mark.parametrize("rev", REVISIONS)
def test_from_public_keeps_exactly_the_members_the_revision_defines(rev: str):
    codec = mcp_wire.codec(rev)
    ir = revision_ir(rev)
    method = ir.method("tools/list")
    assert method is not None and method.result is not None
    own = codec.from_public("tools/list", public_list_tools_result(), "result")
    assert type(own).__module__ == f"mcp_wire.{ir.module}.models"
    data = wire(own)
    result_fields = definition_fields(ir, method.result)
    assert set(data) <= result_fields
    for member in ("ttlMs", "cacheScope", "resultType", "nextCursor"):
        assert (member in data) == (member in result_fields), member
    tool = data["tools"][0]
    tool_fields = definition_fields(ir, "Tool")
    assert set(tool) <= tool_fields
    for member in ("icons", "title", "annotations", "name", "inputSchema"):
        assert (member in tool) == (member in tool_fields), member
    # Open objects keep what they hold: the tool's input schema still types its property.
    assert tool["inputSchema"]["properties"] == {"q": {"type": "string", "minLength": 1}}
    if ir.definitions["ToolInputSchema"].open:
        assert tool["inputSchema"] == wire(public_list_tools_result().tools[0].inputSchema)
    # ... and the older peer reads what it gets, strictly.
    response = codec.response(11, "tools/list", own)
    decoded = codec.decode_response(codec.encode(response), "tools/list", strict=True)
    assert wire(decoded.result) == data


def test_2024_11_05_drops_icons_and_2025_11_25_drops_caching_members():
    own = mcp_wire.codec("2024-11-05").from_public(
        "tools/list", public_list_tools_result(), "result"
    )
    assert "icons" not in wire(own)["tools"][0]
    assert "icons" not in (own.tools[0].__pydantic_extra__ or {})
    own = mcp_wire.codec("2025-11-25").from_public(
        "tools/list", public_list_tools_result(), "result"
    )
    data = wire(own)
    assert {"ttlMs", "cacheScope", "resultType"}.isdisjoint(data)
    assert data["tools"][0]["icons"] == [{"src": "https://example.com/icon.png"}]


ICON_LESS = [r for r in REVISIONS if "icons" not in definition_fields(revision_ir(r), "Tool")]


def test_some_revision_lacks_tool_icons():
    assert "2024-11-05" in ICON_LESS and LATEST not in ICON_LESS


@pytest.mark.parametrize("rev", ICON_LESS)
def test_strict_decoding_reports_members_the_revision_lacks(rev: str):
    codec = mcp_wire.codec(rev)
    result = result_of(rev, "tools/list")
    result["tools"][0]["icons"] = [{"src": "https://example.com/icon.png"}]
    frame = {"jsonrpc": "2.0", "id": 1, "result": result}
    err = fails(codec.decode_response, dumps(frame), "tools/list", strict=True)
    assert err.code == INVALID_REQUEST
    assert err.data == {"unknown": ["result.tools.0.icons"]}
    assert "result.tools.0.icons" in err.message
    # Not strict: kept, and written back unchanged.
    decoded = codec.decode_response(dumps(frame), "tools/list")
    assert json.loads(codec.encode(decoded)) == frame
    assert json.loads(codec.encode(codec.decode(dumps(frame)))) == frame


@pytest.mark.parametrize("rev", REVISIONS)
def test_strict_decoding_of_requests_names_unknown_params(rev: str):
    codec = mcp_wire.codec(rev)
    frame = message(rev, "tools/call")
    frame["params"] = {**frame["params"], "notInAnyRevision": {"deep": [1, 2]}}
    err = fails(codec.decode, dumps(frame), strict=True)
    assert err.code == INVALID_PARAMS
    assert err.data == {"unknown": ["params.notInAnyRevision"]}
    decoded = codec.decode(dumps(frame))
    assert json.loads(codec.encode(decoded)) == frame
    assert codec.decode(dumps(message(rev, "tools/call")), strict=True).method == "tools/call"


# --- 2. the bad-input corpus -------------------------------------------------------------------

Build = Callable[[dict[str, Any]], bytes]


def _with(**changes: Any) -> Build:
    def build(valid: dict[str, Any]) -> bytes:
        out = {**valid, **changes}
        return dumps({k: v for k, v in out.items() if v is not _DROP})

    return build


def _params(**changes: Any) -> Build:
    def build(valid: dict[str, Any]) -> bytes:
        params = {**valid["params"], **changes}
        return dumps({**valid, "params": {k: v for k, v in params.items() if v is not _DROP}})

    return build


def _raw(data: bytes | str) -> Build:
    return lambda valid: data  # type: ignore[return-value]


def _deep(depth: int) -> Build:
    def build(valid: dict[str, Any]) -> bytes:
        body = dumps({**valid, "params": {**valid["params"], "arguments": {"x": "@"}}})
        return body.replace(b'"@"', b"[" * depth + b"]" * depth)

    return build


_DROP = object()

# (label, build from the revision's valid tools/call request, expected code, failing field)
CORPUS: list[tuple[str, Build, int, str | None]] = [
    ("truncated", lambda v: dumps(v)[:-1], PARSE_ERROR, None),
    ("truncated-half", lambda v: dumps(v)[: len(dumps(v)) // 2], PARSE_ERROR, None),
    ("empty", _raw(b""), PARSE_ERROR, None),
    ("whitespace", _raw(b" \r\n\t "), PARSE_ERROR, None),
    ("non-utf8", lambda v: b"\xff\xfe" + dumps(v), PARSE_ERROR, None),
    ("non-utf8-in-string", lambda v: dumps(v).replace(b'"tools/call"', b'"tools/\xc3\x28"'),
     PARSE_ERROR, None),  # fmt: skip
    ("utf8-bom", lambda v: b"\xef\xbb\xbf" + dumps(v), PARSE_ERROR, None),
    ("lone-surrogate-text", lambda v: dumps(v).decode().replace("tools/call", "\udc80"),
     PARSE_ERROR, None),  # fmt: skip
    ("nan", lambda v: dumps(v).replace(b'"2.0"', b'"2.0", "n": NaN'), PARSE_ERROR, None),
    ("infinity", lambda v: dumps(v).replace(b'"2.0"', b'"2.0", "n": Infinity'), PARSE_ERROR,
     None),  # fmt: skip
    ("trailing-garbage", lambda v: dumps(v) + b"}", PARSE_ERROR, None),
    ("two-messages", lambda v: dumps(v) + dumps(v), PARSE_ERROR, None),
    ("single-quotes", _raw(b"{'jsonrpc': '2.0'}"), PARSE_ERROR, None),
    ("deep-arrays", _raw(b"[" * 100_000 + b"]" * 100_000), INVALID_REQUEST, None),
    ("deep-objects", _raw(b'{"a":' * 100_000 + b"1" + b"}" * 100_000), INVALID_REQUEST, None),
    ("deep-unclosed", _raw(b"[" * 100_000), INVALID_REQUEST, None),
    ("deep-in-params", _deep(100_000), INVALID_REQUEST, None),
    ("scalar-number", _raw(b"42"), INVALID_REQUEST, None),
    ("scalar-string", _raw(b'"tools/call"'), INVALID_REQUEST, None),
    ("scalar-null", _raw(b"null"), INVALID_REQUEST, None),
    ("scalar-bool", _raw(b"true"), INVALID_REQUEST, None),
    ("empty-object", _raw(b"{}"), INVALID_REQUEST, "jsonrpc"),
    ("jsonrpc-missing", _with(jsonrpc=_DROP), INVALID_REQUEST, "jsonrpc"),
    ("jsonrpc-1.0", _with(jsonrpc="1.0"), INVALID_REQUEST, "jsonrpc"),
    ("jsonrpc-number", _with(jsonrpc=2.0), INVALID_REQUEST, "jsonrpc"),
    ("jsonrpc-null", _with(jsonrpc=None), INVALID_REQUEST, "jsonrpc"),
    ("id-null", _with(id=None), INVALID_REQUEST, "id"),
    ("id-float", _with(id=1.5), INVALID_REQUEST, "id"),
    ("id-integral-float", _with(id=1.0), INVALID_REQUEST, "id"),
    ("id-object", _with(id={"n": 1}), INVALID_REQUEST, "id"),
    ("id-bool", _with(id=True), INVALID_REQUEST, "id"),
    ("id-list", _with(id=[1]), INVALID_REQUEST, "id"),
    ("method-number", _with(method=5), INVALID_REQUEST, "method"),
    ("method-null", _with(method=None), INVALID_REQUEST, "method"),
    ("method-object", _with(method={"name": "tools/call"}), INVALID_REQUEST, "method"),
    ("params-list", _with(params=[1, 2]), INVALID_PARAMS, "params"),
    ("params-string", _with(params="name=x"), INVALID_PARAMS, "params"),
    ("params-number", _with(params=3), INVALID_PARAMS, "params"),
    ("params-missing", _with(params=_DROP), INVALID_PARAMS, "params"),
    ("params-name-missing", _params(name=_DROP), INVALID_PARAMS, "params.name"),
    ("params-name-number", _params(name=5), INVALID_PARAMS, "params.name"),
    ("params-arguments-list", _params(arguments=[1]), INVALID_PARAMS, "params.arguments"),
    ("unknown-method", _with(method="tools/explode"), METHOD_NOT_FOUND, None),
    ("unknown-method-notification", _with(method="tools/explode", id=_DROP), METHOD_NOT_FOUND,
     None),  # fmt: skip
    ("empty-method", _with(method=""), METHOD_NOT_FOUND, None),
    ("result-and-error", _raw(b'{"jsonrpc":"2.0","id":1,"result":{},'
     b'"error":{"code":-32603,"message":"boom"}}'), INVALID_REQUEST, None),  # fmt: skip
    ("no-method-result-or-error", _raw(b'{"jsonrpc":"2.0","id":1}'), INVALID_REQUEST, None),
    ("only-jsonrpc", _raw(b'{"jsonrpc":"2.0"}'), INVALID_REQUEST, None),
    ("response-id-float", _raw(b'{"jsonrpc":"2.0","id":2.5,"result":{}}'), INVALID_REQUEST, "id"),
    ("response-result-list", _raw(b'{"jsonrpc":"2.0","id":1,"result":[]}'), INVALID_REQUEST,
     "result"),  # fmt: skip
    ("error-code-string", _raw(b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}'),
     INVALID_REQUEST, "error.code"),  # fmt: skip
    ("error-message-missing", _raw(b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603}}'),
     INVALID_REQUEST, "error.message"),  # fmt: skip
    ("error-not-object", _raw(b'{"jsonrpc":"2.0","id":1,"error":"boom"}'), INVALID_REQUEST,
     "error"),  # fmt: skip
]


@pytest.mark.parametrize("rev", REVISIONS)
@pytest.mark.parametrize(("label", "build", "code", "field"), CORPUS, ids=[c[0] for c in CORPUS])
def test_bad_input_corpus(rev: str, label: str, build: Build, code: int, field: str | None) -> None:
    codec = mcp_wire.codec(rev)
    data = build(message(rev, "tools/call"))
    err = fails(codec.decode, data)
    assert err.code == code, (label, err, err.data)
    if field is not None:
        assert field in error_fields(err), (label, err.data)
    if code == METHOD_NOT_FOUND:
        assert err.data == {"method": json.loads(data)["method"]}
    err = fails(codec.decode, data, strict=True)
    assert err.code == code


def test_corpus_is_built_from_valid_messages():
    for rev in REVISIONS:
        codec = mcp_wire.codec(rev)
        valid = message(rev, "tools/call")
        assert codec.decode(dumps(valid), strict=True).method == "tools/call"
        assert codec.decode(dumps(valid).decode(), strict=True).method == "tools/call"
        # params built by _params keep the rest of the valid message
        assert json.loads(_params()(valid)) == valid
        # every case differs from the valid message
        for label, build, _, _ in CORPUS:
            assert build(valid) != dumps(valid), label
        # NaN and Infinity as text are fine, in a request and in a response
        text = {**valid, "params": {**valid["params"], "arguments": {"n": "NaN", "i": "-Infinity"}}}
        assert codec.decode(dumps(text)).params.arguments == {"n": "NaN", "i": "-Infinity"}
        result = {"content": [{"type": "text", "text": "NaN Infinity"}]}
        if revision_ir(rev).result_types:
            result["resultType"] = "complete"
        frame = {"jsonrpc": "2.0", "id": 1, "result": result}
        assert json.loads(codec.encode(codec.decode_response(dumps(frame), "tools/call"))) == frame


# Responses read with decode_response (the caller knows the method).
RESPONSE_CORPUS: list[tuple[str, bytes | str, int, str | None]] = [
    ("truncated", b'{"jsonrpc":"2.0","id":1,"result":{', PARSE_ERROR, None),
    ("empty", b"", PARSE_ERROR, None),
    ("non-utf8", b'{"jsonrpc":"2.0","id":1,"result":{"\xff":1}}', PARSE_ERROR, None),
    ("lone-surrogate-text", '{"jsonrpc":"2.0","id":1,"result":{"\udc80":1}}', PARSE_ERROR, None),
    ("nan", b'{"jsonrpc":"2.0","id":1,"result":{"x":NaN}}', PARSE_ERROR, None),
    ("deep", b"[" * 100_000 + b"]" * 100_000, INVALID_REQUEST, None),  # past the documented depth limit
    ("scalar", b"7", INVALID_REQUEST, None),
    ("null", b"null", INVALID_REQUEST, None),
    ("jsonrpc-missing", b'{"id":1,"result":{}}', INVALID_REQUEST, "jsonrpc"),
    ("jsonrpc-1.0", b'{"jsonrpc":"1.0","id":1,"result":{}}', INVALID_REQUEST, "jsonrpc"),
    ("id-null", b'{"jsonrpc":"2.0","id":null,"result":{}}', INVALID_REQUEST, "id"),
    ("id-float", b'{"jsonrpc":"2.0","id":1.5,"result":{}}', INVALID_REQUEST, "id"),
    ("id-bool", b'{"jsonrpc":"2.0","id":false,"result":{}}', INVALID_REQUEST, "id"),
    ("result-and-error", b'{"jsonrpc":"2.0","id":1,"result":{"content":[]},'
     b'"error":{"code":-32603,"message":"boom"}}', INVALID_REQUEST, None),  # fmt: skip
    ("neither", b'{"jsonrpc":"2.0","id":1}', INVALID_REQUEST, None),
    ("result-list", b'{"jsonrpc":"2.0","id":1,"result":[]}', INVALID_REQUEST, "result"),
    ("content-missing", b'{"jsonrpc":"2.0","id":1,"result":{}}', INVALID_REQUEST,
     "result.content"),  # fmt: skip
    ("content-not-list", b'{"jsonrpc":"2.0","id":1,"result":{"content":"hi"}}', INVALID_REQUEST,
     "result.content"),  # fmt: skip
]


@pytest.mark.parametrize("rev", REVISIONS)
@pytest.mark.parametrize(
    ("label", "data", "code", "field"), RESPONSE_CORPUS, ids=[c[0] for c in RESPONSE_CORPUS]
)
def test_bad_response_corpus(
    rev: str, label: str, data: bytes | str, code: int, field: str | None
) -> None:
    codec = mcp_wire.codec(rev)
    for lenient in (False, True):
        err = fails(codec.decode_response, data, "tools/call", lenient=lenient)
        assert err.code == code, (label, err, err.data)
        if field is not None:
            # A union result (complete | interim, or | task) may name its branch in between:
            # result.CallToolResult.content
            head, _, last = field.rpartition(".")
            assert any(
                f == field
                or (not head and f.startswith(field + "."))
                or (head and f.startswith(head + ".") and f.endswith("." + last))
                for f in error_fields(err)
            ), (label, err.data)


@pytest.mark.parametrize("rev", REVISIONS)
def test_oversized_bodies_are_refused_before_parsing(rev: str):
    small = type(mcp_wire.codec(rev))(max_bytes=1000)
    frame = message(rev, "tools/call")
    frame["params"] = {**frame["params"], "arguments": {"blob": "a" * 2000}}
    for data in (dumps(frame), dumps(frame).decode(), bytearray(dumps(frame))):
        err = fails(small.decode, data)
        assert err.code == INVALID_REQUEST and "1000" in err.message
    # The limit is in bytes: 600 two-byte characters are 1200 bytes, whatever the input type.
    frame["params"]["arguments"] = {"blob": "é" * 600}
    text = json.dumps(frame, ensure_ascii=False)
    assert len(text) < 1000 < len(text.encode())
    assert fails(small.decode, text).code == INVALID_REQUEST
    assert fails(small.decode, text.encode()).code == INVALID_REQUEST
    result = {"content": [{"type": "text", "text": "é" * 600}]}
    response = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}, ensure_ascii=False)
    assert len(response) < 1000 < len(response.encode())
    for data in (response, response.encode()):
        assert fails(small.decode_response, data, "tools/call").code == INVALID_REQUEST
    # Garbage past the limit is refused for its size, not parsed.
    assert fails(small.decode, b"{" * 5000).code == INVALID_REQUEST
    # Within the limit, the same codec works.
    frame["params"]["arguments"] = {"blob": "a"}
    assert small.decode(dumps(frame)).method == "tools/call"


@pytest.mark.parametrize("rev", REVISIONS)
def test_any_bytes_like_input_decodes(rev: str):
    codec = mcp_wire.codec(rev)
    data = dumps(message(rev, "tools/call"))
    for form in (data, data.decode(), bytearray(data), memoryview(data)):
        assert codec.decode(form).method == "tools/call"
    for wrong in (None, 42, {"jsonrpc": "2.0"}, ["x"]):
        assert fails(codec.decode, wrong).code == PARSE_ERROR


def test_unknown_revision_is_a_lookup_error():
    for name in ("1999-01-01", "draft", "", "2026-07-28 "):
        with pytest.raises(LookupError):
            mcp_wire.codec(name)


# --- 3. modern specifics -----------------------------------------------------------------------


def envelope_keys(rev: str) -> tuple[str, str, str | None]:
    env = revision_ir(rev).meta_envelope
    assert env is not None
    return env.protocol_version_key, env.client_capabilities_key, env.client_info_key


def test_modern_revisions_have_a_meta_envelope():
    assert MODERN == [LATEST]
    for rev in MODERN:
        version, caps, info = envelope_keys(rev)
        assert version.endswith("/protocolVersion") and caps.endswith("/clientCapabilities")
        assert info is not None


@pytest.mark.parametrize("rev", MODERN)
def test_modern_requests_need_the_meta_envelope(rev: str):
    codec = mcp_wire.codec(rev)
    version, caps, _ = envelope_keys(rev)
    requests = [m.name for m in revision_ir(rev).methods if m.kind is Kind.REQUEST]
    for name in requests:
        valid = message(rev, name)
        assert codec.decode(dumps(valid), strict=True).method == name
        meta = valid["params"]["_meta"]
        cases = {
            "params._meta": {k: v for k, v in valid["params"].items() if k != "_meta"},
            f"params._meta.{version}": {**valid["params"], "_meta": {caps: meta[caps]}},
            f"params._meta.{caps}": {**valid["params"], "_meta": {version: meta[version]}},
        }
        for field, params in cases.items():
            err = fails(codec.decode, dumps({**valid, "params": params}))
            assert err.code == INVALID_PARAMS, (name, field, err)
            assert field in error_fields(err), (name, err.data)
        err = fails(codec.decode, dumps(message(rev, name, params=None)))
        assert err.code == INVALID_PARAMS and "params" in error_fields(err)


@pytest.mark.parametrize("rev", MODERN)
@pytest.mark.parametrize("key", ["-bad", "a..b/x", "bad-/x", "1abc/x", "a/-x", "x_", "a b"])
def test_modern_invalid_meta_keys_are_invalid_params(rev: str, key: str):
    codec = mcp_wire.codec(rev)
    for name in ("tools/call", "tools/list"):
        valid = message(rev, name)
        valid["params"]["_meta"][key] = 1
        err = fails(codec.decode, dumps(valid))
        assert err.code == INVALID_PARAMS
        assert err.data["field"] == "params._meta" and err.data["keys"] == [key]


@pytest.mark.parametrize("rev", MODERN)
@pytest.mark.parametrize("key", ["com.example/x", "x", "", "progressToken", "a.b-c/d_e.f"])
def test_modern_valid_custom_meta_keys_are_accepted_even_strictly(rev: str, key: str):
    codec = mcp_wire.codec(rev)
    valid = message(rev, "tools/call")
    valid["params"]["_meta"][key] = "v"
    decoded = codec.decode(dumps(valid), strict=True)
    assert json.loads(codec.encode(decoded)) == valid
    frame = {"jsonrpc": "2.0", "id": 1, "result": {**result_of(rev, "tools/call")}}
    frame["result"]["_meta"] = {key: "v"}
    decoded = codec.decode_response(dumps(frame), "tools/call", strict=True)
    assert json.loads(codec.encode(decoded)) == frame


@pytest.mark.parametrize("rev", MODERN)
def test_modern_strict_decoding_names_unknown_members_by_their_wire_path(rev: str):
    codec = mcp_wire.codec(rev)
    version, caps, info = envelope_keys(rev)
    valid = message(rev, "tools/call")
    valid["params"]["_meta"][info] = {"name": "c", "version": "1", "notAField": 1}
    err = fails(codec.decode, dumps(valid), strict=True)
    assert err.code == INVALID_PARAMS
    assert err.data == {"unknown": [f"params._meta.{info}.notAField"]}


@pytest.mark.parametrize("rev", MODERN)
def test_modern_request_builder_stamps_the_envelope(rev: str):
    codec = mcp_wire.codec(rev)
    version, caps, info = envelope_keys(rev)
    meta = json.loads(codec.encode(codec.request("tools/list", {}, id=1)))["params"]["_meta"]
    assert meta == {version: rev, caps: {}}
    built = codec.request(
        "tools/list",
        {},
        id="req-2",
        client_capabilities={"elicitation": {}},
        client_info={"name": "client", "version": "1.0"},
    )
    frame = json.loads(codec.encode(built))
    assert frame["id"] == "req-2" and frame["method"] == "tools/list"
    assert frame["params"]["_meta"] == {
        version: rev,
        caps: {"elicitation": {}},
        info: {"name": "client", "version": "1.0"},
    }
    caps_model = mcp_wire.revision(rev).ClientCapabilities.model_validate({"roots": {}})
    built = codec.request("tools/call", {"name": "t"}, id=3, client_capabilities=caps_model)
    frame = json.loads(codec.encode(built))
    assert frame["params"]["_meta"] == {version: rev, caps: {"roots": {}}}
    assert frame["params"]["name"] == "t"
    # What the caller put in _meta stays; the stamp only fills the gaps.
    built = codec.request("tools/list", {"_meta": {"progressToken": 9}}, id=4)
    assert json.loads(codec.encode(built))["params"]["_meta"] == {
        "progressToken": 9,
        version: rev,
        caps: {},
    }
    assert codec.decode(codec.encode(built), strict=True).id == 4


@pytest.mark.parametrize("rev", MODERN)
def test_modern_result_without_result_type_reads_as_complete(rev: str):
    codec = mcp_wire.codec(rev)
    ir = revision_ir(rev)
    assert ir.result_types is not None
    complete, _ = ir.result_types
    for method in ("tools/call", "tools/list"):
        spec = ir.method(method)
        assert spec is not None and spec.result is not None
        result = result_of(rev, method)
        del result["resultType"]
        decoded = codec.decode_response(
            dumps({"jsonrpc": "2.0", "id": 1, "result": result}), method
        )
        assert type(decoded.result) is getattr(mcp_wire.revision(rev), spec.result)
        assert decoded.result.resultType == complete
    generic = codec.decode(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert generic.result.resultType == complete


CACHEABLE_CASES = [(r, m.name) for r in MODERN for m in revision_ir(r).methods if m.cacheable]


@pytest.mark.parametrize(("rev", "method"), CACHEABLE_CASES)
def test_modern_absent_caching_hints_read_as_defaults_and_are_written_on_encode(
    rev: str, method: str
):
    """Read as their defaults (unset: the message says they were absent); written on encode,
    since a frame encode writes is always valid for its revision."""
    codec = mcp_wire.codec(rev)
    full = result_of(rev, method)
    assert {"ttlMs", "cacheScope"} <= full.keys()
    for absent in (("ttlMs",), ("cacheScope",), ("ttlMs", "cacheScope")):
        result = {k: v for k, v in full.items() if k not in absent}
        # The member names also stand in the message, as text: they must not count as present.
        result["_meta"] = {"note": " ".join(f'"{name}": 1' for name in absent)}
        raw = dumps({"jsonrpc": "2.0", "id": 1, "result": result})
        decoded = codec.decode_response(raw, method)
        assert (decoded.result.ttlMs, decoded.result.cacheScope) == (
            full["ttlMs"] if "ttlMs" not in absent else 0,
            full["cacheScope"] if "cacheScope" not in absent else "private",
        )
        assert set(absent).isdisjoint(decoded.result.model_fields_set)
        written = json.loads(codec.encode(decoded))["result"]
        assert written == {
            **result,
            "ttlMs": decoded.result.ttlMs,
            "cacheScope": decoded.result.cacheScope,
        }
        assert set(absent).isdisjoint(decoded.result.model_fields_set)  # encode changed nothing
        codec.decode_response(codec.encode(decoded), method, strict=True)
    # Present hints are read as they are, in one pass or not.
    decoded = codec.decode_response(dumps({"jsonrpc": "2.0", "id": 1, "result": full}), method)
    assert json.loads(codec.encode(decoded))["result"] == full


@pytest.mark.parametrize(("rev", "method"), INTERIM_CASES)
def test_modern_interim_and_complete_results_are_told_apart(rev: str, method: str):
    codec = mcp_wire.codec(rev)
    ir = revision_ir(rev)
    spec = ir.method(method)
    assert spec is not None and ir.interim_result and ir.result_types
    module = mcp_wire.revision(rev)
    interim = {
        "resultType": ir.result_types[1],
        "requestState": "opaque-state",
        "inputRequests": {"confirm": golden(rev, "elicitation/create")["message"]},
    }
    frame = {"jsonrpc": "2.0", "id": 1, "result": interim}
    decoded = codec.decode_response(dumps(frame), method, strict=True)
    assert type(decoded.result) is getattr(module, ir.interim_result)
    assert decoded.result.requestState == "opaque-state"
    assert json.loads(codec.encode(decoded)) == frame
    complete = {"jsonrpc": "2.0", "id": 1, "result": result_of(rev, method)}
    decoded = codec.decode_response(dumps(complete), method, strict=True)
    assert type(decoded.result) is getattr(module, spec.result or "")
    assert json.loads(codec.encode(decoded)) == complete


def test_tools_call_results_of_2026_07_28():
    codec = mcp_wire.codec("2026-07-28")
    module = mcp_wire.revision("2026-07-28")
    interim = (
        b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}'
    )
    assert type(codec.decode_response(interim, "tools/call").result) is module.InputRequiredResult
    complete = b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}'
    assert type(codec.decode_response(complete, "tools/call").result) is module.CallToolResult


@pytest.mark.parametrize("rev", MODERN)
def test_modern_encoding_refuses_a_result_without_result_type(rev: str):
    codec = mcp_wire.codec(rev)
    ir = revision_ir(rev)
    response = codec.responses["tools/list"]
    result = mcp_wire.revision(rev).ListToolsResult.model_construct(
        tools=[], ttlMs=0, cacheScope="private"
    )
    assert "resultType" not in result.model_fields_set
    err = fails(codec.encode, response.model_construct(jsonrpc="2.0", id=1, result=result))
    assert err.code == INTERNAL_ERROR and "resultType" in err.message
    # Built through the codec, the result type is filled in.
    built = codec.response(1, "tools/list", {"tools": [], "ttlMs": 0, "cacheScope": "private"})
    assert ir.result_types is not None
    assert json.loads(codec.encode(built))["result"]["resultType"] == ir.result_types[0]


@pytest.mark.parametrize("rev", MODERN)
def test_modern_builders_refuse_undefined_reserved_meta_keys(rev: str):
    """The builders do not mint keys under MCP's reserved prefixes; a message read from a peer
    that carries one is written back as it came (what decode accepts, encode writes)."""
    codec = mcp_wire.codec(rev)
    rule = revision_ir(rev).meta_rule
    assert rule is not None
    for key in ("io.modelcontextprotocol/bogus", "dev.mcp/x", "org.modelcontextprotocol.api/y"):
        with pytest.raises(MessageBuildError) as caught:
            codec.request("tools/call", {"name": "t", "_meta": {key: 1}}, id=1)
        assert key in str(caught.value)
        read = codec.decode(
            dumps(
                message(
                    rev,
                    "tools/call",
                    params={
                        "name": "t",
                        "_meta": {**message(rev, "tools/call")["params"]["_meta"], key: 1},
                    },
                )
            )
        )
        assert json.loads(codec.encode(read))["params"]["_meta"][key] == 1
    for key in ("com.example/x", "com.example.mcp/x", "progressToken", *rule.known_keys):
        if key.endswith(("/protocolVersion", "/clientCapabilities")):
            continue  # stamped by the builder
        value: Any = 1
        if key.endswith("/clientInfo"):
            value = {"name": "c", "version": "1"}
        elif key.endswith("/logLevel"):
            value = "info"
        elif key.endswith("/serverInfo"):
            value = {"name": "s", "version": "1"}
        built = codec.request("tools/call", {"name": "t", "_meta": {key: value}}, id=1)
        assert json.loads(codec.encode(built))["params"]["_meta"][key] == value


# --- 4. lenient list decoding ------------------------------------------------------------------


def test_every_revision_has_the_four_list_methods():
    for rev in REVISIONS:
        assert {m for r, m in LIST_CASES if r == rev} == {
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
        }


@dataclass
class InvalidPage:
    """A golden list page of `method` in `rev` with two invalid items among two valid ones:
    item 1 lacks a required member (`dropped`), item 3's name is not a string."""

    codec: Any
    field: str
    item: str
    dropped: str
    frame: bytes


def invalid_page(rev: str, method: str) -> InvalidPage:
    codec = mcp_wire.codec(rev)
    ir = revision_ir(rev)
    spec = ir.method(method)
    assert spec is not None and spec.list_field and spec.list_item
    field, item = spec.list_field, spec.list_item
    page = result_of(rev, method)
    valid = page[field][0]
    required = [f.name for f in ir.definitions[item].fields if f.required and f.name != "name"]
    missing = {**valid, "name": "lacks-a-member"}
    dropped = required[0] if required else "name"
    missing.pop(dropped)
    page[field] = [
        {**valid, "name": "first"},
        missing,
        {**valid, "name": "second"},
        {**valid, "name": 12},
    ]
    frame = dumps({"jsonrpc": "2.0", "id": 1, "result": page})
    return InvalidPage(codec, field, item, dropped, frame)


LIST_IDS = [f"{r}:{m}" for r, m in LIST_CASES]


@pytest.mark.parametrize(("rev", "method"), LIST_CASES, ids=LIST_IDS)
def test_a_page_with_invalid_items_fails_strict_decoding_naming_them(rev: str, method: str):
    page = invalid_page(rev, method)
    err = fails(page.codec.decode_response, page.frame, method)
    assert err.code == INVALID_REQUEST
    fields = error_fields(err)
    assert f"result.{page.field}.1.{page.dropped}" in fields
    assert f"result.{page.field}.3.name" in fields


@pytest.mark.parametrize(("rev", "method"), LIST_CASES, ids=LIST_IDS)
def test_lenient_list_decoding_keeps_the_valid_items_as_their_type(rev: str, method: str):
    page = invalid_page(rev, method)
    lenient = page.codec.decode_response(page.frame, method, lenient=True)
    assert isinstance(lenient, LenientResponse)
    assert type(lenient.response) is page.codec.responses[method]
    kept = getattr(lenient.response.result, page.field)
    assert [i.name for i in kept] == ["first", "second"]
    assert type(kept[0]) is getattr(mcp_wire.revision(rev), page.item)


@pytest.mark.parametrize(("rev", "method"), LIST_CASES, ids=LIST_IDS)
def test_lenient_list_decoding_reports_invalid_items_by_index_and_name(rev: str, method: str):
    page = invalid_page(rev, method)
    invalid = page.codec.decode_response(page.frame, method, lenient=True).invalid
    assert [i.index for i in invalid] == [1, 3]
    assert invalid[0].name == ("lacks-a-member" if page.dropped != "name" else None)
    assert invalid[1].name is None  # its name is not a string


@pytest.mark.parametrize(("rev", "method"), LIST_CASES, ids=LIST_IDS)
def test_lenient_list_decoding_names_what_each_invalid_item_got_wrong(rev: str, method: str):
    page = invalid_page(rev, method)
    invalid = page.codec.decode_response(page.frame, method, lenient=True).invalid
    assert page.dropped in [e["field"] for e in invalid[0].errors]
    assert "name" in [e["field"] for e in invalid[1].errors]
    assert all(e["message"] for inv in invalid for e in inv.errors)


@pytest.mark.parametrize(("rev", "method"), LIST_CASES, ids=LIST_IDS)
def test_a_clean_page_decodes_leniently_with_nothing_to_report(rev: str, method: str):
    codec = mcp_wire.codec(rev)
    clean = dumps({"jsonrpc": "2.0", "id": 1, "result": result_of(rev, method)})
    assert codec.decode_response(clean, method, lenient=True).invalid == ()


@pytest.mark.parametrize(("rev", "method"), LIST_CASES, ids=LIST_IDS)
def test_an_error_response_decodes_leniently_as_the_error(rev: str, method: str):
    # An error response is not a page: it comes back as the error.
    codec = mcp_wire.codec(rev)
    error = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad cursor"}}'
    assert codec.decode_response(error, method, lenient=True).error.code == INVALID_PARAMS


# --- 5. the public layer -----------------------------------------------------------------------


@pytest.mark.parametrize("rev", LEGACY)
def test_legacy_tools_call_params_become_public_with_an_envelope(rev: str):
    codec = mcp_wire.codec(rev)
    public = mcp_wire.revision(LATEST)
    version, caps, _ = envelope_keys(LATEST)
    frame = message(rev, "tools/call")
    frame["params"] = {**frame["params"], "arguments": {"q": "x", "n": 2}}
    msg = codec.decode(dumps(frame), strict=True)
    capabilities = {"sampling": {}, "roots": {}}
    params = codec.to_public("tools/call", msg.params, "params", client_capabilities=capabilities)
    assert type(params) is public.CallToolRequestParams
    data = wire(params)
    assert data["_meta"][version] == rev
    assert data["_meta"][caps] == capabilities
    assert data["name"] == frame["params"]["name"]
    assert data["arguments"] == {"q": "x", "n": 2}
    # Without capabilities: the empty set.
    params = codec.to_public("tools/call", msg.params, "params")
    assert wire(params)["_meta"][caps] == {}
    # ... and back: the envelope is the latest revision's, not part of this one.
    own = codec.from_public("tools/call", params, "params")
    assert wire(own) == frame["params"]
    again = codec.request("tools/call", own, id=frame["id"])
    assert json.loads(codec.encode(again)) == frame


def test_2025_11_25_tools_call_to_public():
    codec = mcp_wire.codec("2025-11-25")
    raw = (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo",'
        b'"arguments":{"text":"hi"},"_meta":{"progressToken":"p-1"}}}'
    )
    msg = codec.decode(raw, strict=True)
    params = codec.to_public("tools/call", msg.params, "params", client_capabilities={"roots": {}})
    assert type(params) is mcp_wire.revision(LATEST).CallToolRequestParams
    meta = wire(params)["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2025-11-25"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {"roots": {}}
    assert meta["progressToken"] == "p-1"
    # Back to 2025-11-25: the progress token is this revision's too; the envelope is not.
    own = codec.from_public("tools/call", params, "params")
    assert wire(own) == json.loads(raw)["params"]
    result = codec.decode_response(
        b'{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}]}}',
        "tools/call",
    ).result
    public = codec.to_public("tools/call", result, "result")
    assert type(public) is mcp_wire.revision(LATEST).CallToolResult
    assert public.resultType == "complete"
    assert wire(public)["content"] == [{"type": "text", "text": "hi"}]


def _own_meta_keys(rev: str, method: str) -> set[str] | None:
    """Keys the `_meta` of this revision's `method` params defines; None if it has no `_meta`."""
    ir = revision_ir(rev)
    spec = ir.method(method)
    assert spec is not None and spec.params is not None
    meta = ir.definitions[spec.params].field("_meta")
    if meta is None:
        return None
    return definition_fields(ir, meta.type)


@pytest.mark.parametrize("rev", OLDER)
def test_from_public_params_keep_the_revisions_own_meta_keys(rev: str):
    codec = mcp_wire.codec(rev)
    version, caps, info = envelope_keys(LATEST)
    public = mcp_wire.revision(LATEST).CallToolRequestParams.model_validate(
        {
            "name": "t",
            "_meta": {
                version: LATEST,
                caps: {},
                info: {"name": "c", "version": "1"},
                "progressToken": "p-9",
                "com.example/trace": "abc",
            },
        }
    )
    own = wire(codec.from_public("tools/call", public, "params"))
    keys = _own_meta_keys(rev, "tools/call")
    # The envelope is the latest revision's; the progress token and an extension's key (`_meta`
    # is open) are this revision's too. Where the revision's tools/call params do not spell out
    # `_meta`, it still travels: every request may carry it (Request.params._meta, where the
    # progress utility puts its token).
    assert keys is None or "progressToken" in keys
    assert own == {"name": "t", "_meta": {"progressToken": "p-9", "com.example/trace": "abc"}}
    request = codec.request("tools/call", own, id=1)
    assert codec.decode(codec.encode(request), strict=keys is not None).params.name == "t"


@pytest.mark.parametrize("rev", LEGACY)
def test_legacy_list_results_become_public_with_caching_defaults(rev: str):
    codec = mcp_wire.codec(rev)
    latest = revision_ir(LATEST)
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        result = result_of(rev, method)
        decoded = codec.decode_response(
            dumps({"jsonrpc": "2.0", "id": 1, "result": result}), method
        )
        public = codec.to_public(method, decoded.result, "result")
        spec = latest.method(method)
        assert spec is not None
        assert type(public) is getattr(mcp_wire.revision(LATEST), spec.result or "")
        assert public.resultType == "complete"
        assert public.ttlMs == 0
        assert public.cacheScope == "private"
        backfilled = ("ttlMs", "cacheScope", "resultType")
        assert {k: v for k, v in wire(public).items() if k not in backfilled} == result


def test_2024_11_05_list_tools_result_to_public():
    codec = mcp_wire.codec("2024-11-05")
    raw = (
        b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a",'
        b'"inputSchema":{"type":"object","properties":{"x":{"type":"integer"}}}}]}}'
    )
    public = codec.to_public(
        "tools/list", codec.decode_response(raw, "tools/list").result, "result"
    )
    assert type(public) is mcp_wire.revision(LATEST).ListToolsResult
    assert (public.ttlMs, public.cacheScope, public.resultType) == (0, "private", "complete")
    assert wire(public.tools[0].inputSchema)["properties"] == {"x": {"type": "integer"}}


@pytest.mark.parametrize("rev", OLDER)
def test_public_round_trip_to_an_older_revision_decodes_strictly(rev: str):
    codec = mcp_wire.codec(rev)
    public = mcp_wire.revision(LATEST)
    # a result ...
    own = codec.from_public("tools/list", public_list_tools_result(), "result")
    raw = codec.encode(codec.response("r-1", "tools/list", own))
    decoded = codec.decode_response(raw, "tools/list", strict=True)
    back = codec.to_public("tools/list", decoded.result, "result")
    assert type(back) is public.ListToolsResult
    assert back.tools[0].name == "search"
    assert wire(back.tools[0].inputSchema)["properties"] == {
        "q": {"type": "string", "minLength": 1}
    }
    # ... a call result ...
    call = public.CallToolResult.model_validate(
        {"resultType": "complete", "content": [{"type": "text", "text": "ok"}], "isError": False}
    )
    own = codec.from_public("tools/call", call, "result")
    raw = codec.encode(codec.response(2, "tools/call", own))
    decoded = codec.decode_response(raw, "tools/call", strict=True)
    assert wire(decoded.result) == {"content": [{"type": "text", "text": "ok"}], "isError": False}
    # ... and request params.
    params = public.CallToolRequestParams.model_validate(
        {
            "name": "search",
            "arguments": {"q": "mcp"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": LATEST,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        }
    )
    own = codec.from_public("tools/call", params, "params")
    raw = codec.encode(codec.request("tools/call", own, id=3))
    decoded = codec.decode(raw, strict=True)
    assert decoded.params.name == "search" and decoded.params.arguments == {"q": "mcp"}


@pytest.mark.parametrize("rev", REVISIONS)
def test_methods_the_latest_revision_lacks_pass_through_unchanged(rev: str):
    codec = mcp_wire.codec(rev)
    latest = revision_ir(LATEST)
    lacking = [m for m in revision_ir(rev).methods if latest.method(m.name) is None]
    if rev == LATEST:
        assert lacking == []
        return
    assert {"initialize", "ping"} <= {m.name for m in lacking}
    for m in lacking:
        if m.kind is Kind.INPUT_REQUEST or m.params is None:
            continue
        msg = codec.decode(dumps(message(rev, m.name)))
        payload = msg.params
        assert codec.to_public(m.name, payload, "params") is payload
        assert codec.from_public(m.name, payload, "params") is payload
        for result in golden(rev, m.name).get("results", {}).values():
            assert codec.to_public(m.name, result, "result") is result


def test_the_latest_revision_maps_onto_itself():
    codec = mcp_wire.codec(LATEST)
    public = public_list_tools_result()
    own = codec.from_public("tools/list", public, "result")
    assert wire(own) == wire(public)
    assert wire(codec.to_public("tools/list", own, "result")) == wire(public)


@pytest.mark.parametrize("rev", REVISIONS)
def test_public_layer_failures_are_protocol_errors(rev: str):
    codec = mcp_wire.codec(rev)
    err = fails(codec.from_public, "tools/call", {"name": 5}, "params")
    assert err.code == INTERNAL_ERROR and "name" in error_fields(err)
    err = fails(codec.to_public, "tools/call", {"name": 5}, "params")
    assert err.code == INTERNAL_ERROR and "name" in error_fields(err)


@pytest.mark.parametrize("result_type", ["task", "bogus", ""])
def test_modern_result_with_an_unrecognised_result_type_is_invalid(result_type: str) -> None:
    codec = mcp_wire.codec("2026-07-28")
    frame = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": result_type, "content": []}}
    with pytest.raises(mcp_wire.ProtocolError) as info:
        codec.decode_response(json.dumps(frame), "tools/call")
    assert info.value.code == -32600
    assert "unrecognised resultType" in info.value.message


TASK = {
    "taskId": "t-1",
    "status": "working",
    "createdAt": "2025-01-01T00:00:00Z",
    "lastUpdatedAt": "2025-01-01T00:00:00Z",
    "ttl": None,
}
# 2025-11-25's methods a task-augmented request of which may answer with a task, and a result
TASK_OR_RESULT = {
    "tools/call": {"content": [{"type": "text", "text": "x"}]},
    "elicitation/create": {"action": "accept", "content": {"a": 1}},
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "x"},
        "model": "m",
    },
}


@pytest.mark.parametrize("method", list(TASK_OR_RESULT))
def test_a_2025_11_25_answer_is_a_task_when_it_carries_one(method: str) -> None:
    codec = mcp_wire.codec("2025-11-25")
    own = codec.methods[method].result

    def read(result: Any) -> Any:
        raw = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()
        return codec.decode_response(raw, method).result

    assert type(read(TASK_OR_RESULT[method])) is own
    assert type(read({"task": TASK})) is mcp_wire.v2025_11_25.CreateTaskResult
    # both: the task (its `task` member says so; the result's members are its extras)
    both = read({**TASK_OR_RESULT[method], "task": TASK})
    assert type(both) is mcp_wire.v2025_11_25.CreateTaskResult and both.task.taskId == "t-1"
    # a `task` that is not one is refused, not read as the result's extra member
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {**TASK_OR_RESULT[method], "task": 5}})
    assert fails(codec.decode_response, raw.encode(), method).code == -32600
    assert fails(codec.decode_response, b'{"jsonrpc":"2.0","id":1,"result":{}}', method)
