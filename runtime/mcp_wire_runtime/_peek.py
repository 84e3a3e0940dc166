"""`codec.peek(raw)`: the envelope of a frame, read without validating its params or result.

For routers, load balancers and transport checks (the `Mcp-Method` / `Mcp-Name` headers): one
pass of the Rust JSON parser into a small schema that keeps only the routing members, so a
frame costs about a third of `json.loads`. A frame that is not JSON, or not a JSON-RPC message,
raises the `ProtocolError` a full decode would; members beyond the envelope are not checked.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

from mcp_wire_runtime._failures import unreadable
from mcp_wire_runtime.errors import INVALID_REQUEST, ProtocolError

# The request member each named method is routed by (the `Mcp-Name` header of 2026-07-28; the
# Tasks extension routes its methods by task id).
NAMED_BY = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

Kind = Literal["request", "notification", "result", "error"]


class Peek(NamedTuple):
    """What routing needs of a frame, read from its envelope alone.

    A named tuple: cheaper to make than a dataclass.

    Attributes:
        kind: The frame's kind.
        id: Its JSON-RPC id.
        method: Its method.
        name: The routing name: `params.name` of tools/call and prompts/get, `params.uri` of
            resources/read (see `NAMED_BY`).
        protocol_version: In the modern era, the protocol version its `_meta` names.
    """

    kind: Kind
    id: str | int | None
    method: str | None
    name: str | None
    protocol_version: str | None


def _routing(path: list[str | int]) -> cs.TypedDictField:
    """A string member read from `path` (None when absent or not a string: peek does not judge
    params)."""
    text = cs.str_schema(strict=True)
    return cs.typed_dict_field(
        cs.with_default_schema(text, default=None, on_error="default"),
        validation_alias=path,
        required=False,
    )


def peek_validator(protocol_version_key: str | None) -> SchemaValidator:
    """Build the validator of a revision's envelope, flattened into one dict by alias paths.

    `protocol_version_key` is the revision's `_meta` key of the protocol version, if any.
    """
    ignore: Any = "ignore"
    some_object = cs.typed_dict_schema({}, extra_behavior=ignore)  # not read further
    request_id = cs.union_schema([cs.str_schema(strict=True), cs.int_schema(strict=True)])
    fields = {
        "jsonrpc": cs.typed_dict_field(cs.literal_schema(["2.0"])),
        "id": cs.typed_dict_field(cs.nullable_schema(request_id), required=False),
        "method": cs.typed_dict_field(cs.str_schema(strict=True), required=False),
        "name": _routing(["params", "name"]),
        "uri": _routing(["params", "uri"]),
        "taskId": _routing(["params", "taskId"]),
        "result": cs.typed_dict_field(some_object, required=False),
        "error": cs.typed_dict_field(some_object, required=False),
    }
    if protocol_version_key:
        fields["version"] = _routing(["params", "_meta", protocol_version_key])
    return SchemaValidator(cs.typed_dict_schema(fields, extra_behavior=ignore))


def envelope(frame: dict[str, Any]) -> Peek:
    """The Peek of a frame read by a `peek_validator`."""
    get = frame.get
    method = get("method")
    request_id = get("id")
    if method is not None:
        if "id" not in frame:
            return tuple.__new__(Peek, ("notification", None, method, None, None))
        kind: Kind = "request"
        key = NAMED_BY.get(method)
        name = get(key) if key is not None else None
    elif "error" in frame:
        return tuple.__new__(Peek, ("error", request_id, None, None, None))
    elif "result" in frame:
        kind, name = "result", None
    else:
        raise ProtocolError(INVALID_REQUEST, "not a request, notification or response")
    if request_id is None:
        raise ProtocolError(INVALID_REQUEST, "id must be a string or an integer", {"field": "id"})
    return tuple.__new__(Peek, (kind, request_id, method, name, get("version")))


def failure(exc: ValidationError) -> ProtocolError:
    """The ProtocolError of a frame a `peek_validator` refused."""
    error = exc.errors(include_url=False, include_input=False)[0]
    if error["type"] == "json_invalid":
        return unreadable(str((error.get("ctx") or {}).get("error", error["msg"])))
    loc = error["loc"]
    if not loc:
        return ProtocolError(INVALID_REQUEST, "a JSON-RPC message must be an object")
    field = str(loc[0])
    messages = {
        "jsonrpc": 'jsonrpc must be "2.0"',
        "id": "id must be a string or an integer",
        "method": "method must be a string",
    }
    return ProtocolError(
        INVALID_REQUEST, messages.get(field, f"invalid message: {error['msg']}"), {"field": field}
    )
