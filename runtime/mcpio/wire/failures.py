"""A frame that failed its one validation pass, as the `ProtocolError` to answer with.

The readers (`schemas.Readers`) try a frame as each kind of message in turn, so its errors name
each branch it failed first in their location (`call`, `typed error`, `error`, `result`,
`batch`). The frame's own kind is the branch that got furthest: a `method` makes it a call, an
`error` member an error response, a `result` member a result response; that branch's errors are
the ones reported. Nothing is parsed again, except to tell a non-string `method` from an unknown
one and NaN or Infinity from a number out of range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic_core
from pydantic import ValidationError

from mcpio.wire.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ProtocolError,
)
from mcpio.wire.numbers import may_hold_non_finite
from mcpio.wire.schemas import BATCH, CALL, ERROR, RESULT, TYPED_ERROR

MAX_REPORTED_ERRORS = 8
_NOT_AN_OBJECT = frozenset({"model_type", "dict_type", "model_attributes_type", "list_type"})
_TAG_MISSES = frozenset({"union_tag_not_found", "union_tag_invalid"})

Error = dict[str, Any]


def protocol_error(
    codec: Any, exc: ValidationError, data: bytes, method: str | None
) -> ProtocolError:
    """Why `data` is not a message of `codec`'s revision (`method`: the request a response
    answers, for `decode_response`)."""
    errors: list[Error] = exc.errors(include_url=False, include_input=False)  # type: ignore[assignment]
    if errors and errors[0]["type"] == "json_invalid":
        return ProtocolError(PARSE_ERROR, f"not valid JSON: {errors[0]['ctx']['error']}")
    if may_hold_non_finite(data):
        try:
            pydantic_core.from_json(data, allow_inf_nan=False)
        except ValueError as parse_error:
            return ProtocolError(PARSE_ERROR, f"not valid JSON: {parse_error}")
    return _classify(codec, errors, data, method)


def _classify(codec: Any, errors: list[Error], data: bytes, method: str | None) -> ProtocolError:
    by: dict[Any, list[Error]] = {}
    for error in errors:
        by.setdefault(error["loc"][0] if error["loc"] else "", []).append(error)
    batch = by.get(BATCH)
    if batch is not None and not (len(batch) == 1 and len(batch[0]["loc"]) == 1):
        return _batch_item(codec, batch, data)
    if all(len(e["loc"]) == 1 and e["type"] in _NOT_AN_OBJECT for e in errors):
        if data.lstrip()[:1] == b"[":
            return ProtocolError(
                INVALID_REQUEST, f"JSON-RPC batches are not part of revision {codec.revision}"
            )
        return ProtocolError(INVALID_REQUEST, "a JSON-RPC message must be an object")
    if any(e["loc"][1:2] == ("jsonrpc",) for e in by.get(ERROR, ())):
        return ProtocolError(INVALID_REQUEST, 'jsonrpc must be "2.0"', {"field": "jsonrpc"})
    if any(e["loc"][1:2] == ("id",) for e in by.get(ERROR, ())):
        return ProtocolError(INVALID_REQUEST, "id must be a string or an integer", {"field": "id"})
    call = by.get(CALL)
    if call is not None and not (len(call) == 1 and call[0]["type"] == "union_tag_not_found"):
        return _call(codec, call, data)
    has_error = not _missing(by.get(ERROR, ()), (ERROR, "error"))
    has_result = RESULT in by and not _missing(by[RESULT], (RESULT, "result"))
    if has_error and has_result:
        return ProtocolError(INVALID_REQUEST, "a response has a result or an error, not both")
    if has_error:
        typed = by.get(TYPED_ERROR, ())
        if typed and not (len(typed) == 1 and typed[0]["type"] in _TAG_MISSES):
            return _frame(typed, 2)
        return _frame(by.get(ERROR, []), 1)
    if has_result:
        return _frame(by[RESULT], 1)
    if method is not None:
        return ProtocolError(INVALID_REQUEST, "a response needs a result or an error")
    return ProtocolError(INVALID_REQUEST, "not a request, notification or response")


def _missing(errors: Sequence[Error], loc: tuple[str, ...]) -> bool:
    return any(e["type"] == "missing" and tuple(e["loc"]) == loc for e in errors)


def _batch_item(codec: Any, errors: list[Error], data: bytes) -> ProtocolError:
    index = errors[0]["loc"][1]
    inner = [{**e, "loc": e["loc"][2:]} for e in errors if e["loc"][1] == index]
    exc = _classify(codec, inner, b"{", None)
    return ProtocolError(
        exc.code, f"batch item {index}: {exc.message}", {"index": index, "error": exc.data}
    )


def _call(codec: Any, errors: list[Error], data: bytes) -> ProtocolError:
    first = errors[0]
    if first["type"] == "union_tag_invalid":
        tag = str(first["ctx"]["tag"])
        if _may_not_be_a_string(tag) and not _is_string_method(data):
            return ProtocolError(INVALID_REQUEST, "method must be a string", {"field": "method"})
        return codec._unknown_method(tag, "request")
    method = str(first["loc"][1])
    fields = [_field(e, 2) for e in errors]
    if any(f == "id" and e["type"] == "missing" for f, e in zip(fields, errors, strict=True)):
        return codec._unknown_method(method, "notification")  # a request's method, without id
    if all(f == "params" or f.startswith("params.") for f in fields):
        listed = _listed(errors, 2)
        where = f"{listed[0]['field']}: " if listed[0]["field"] else ""
        return ProtocolError(
            INVALID_PARAMS,
            f"invalid params for {method}: {where}{listed[0]['message']}",
            {"errors": listed},
        )
    return _frame(errors, 2)


def _may_not_be_a_string(tag: str) -> bool:
    """Whether a tag may be the text of a JSON value other than a string (the tag of a union
    is the text of its discriminator, whatever its type)."""
    return tag in ("None", "True", "False") or tag[:1] in ("", "-", "[", "{", *"0123456789")


def _is_string_method(data: bytes) -> bool:
    """Whether the frame's `method` is a string (read again: a rare, failing frame)."""
    try:
        obj = pydantic_core.from_json(data)
    except ValueError:
        return True
    return type(obj) is not dict or type(obj.get("method")) is str


def _frame(errors: list[Error], drop: int) -> ProtocolError:
    """The ProtocolError of a frame's own errors (their first `drop` locations name branches)."""
    tops = [str(e["loc"][drop]) if len(e["loc"]) > drop else "" for e in errors]
    if "jsonrpc" in tops:
        return ProtocolError(INVALID_REQUEST, 'jsonrpc must be "2.0"', {"field": "jsonrpc"})
    if "id" in tops:
        return ProtocolError(INVALID_REQUEST, "id must be a string or an integer", {"field": "id"})
    fields = [_field(e, drop) for e in errors]
    kind = next((f for f in fields if f.endswith("resultType")), None)
    if kind is not None:
        return ProtocolError(
            INVALID_REQUEST,
            "unrecognised resultType",
            {"field": "result.resultType", "errors": _listed(errors, drop)},
        )
    listed = _listed(errors, drop)
    where = f"{listed[0]['field']}: " if listed[0]["field"] else ""
    return ProtocolError(
        INVALID_REQUEST, f"invalid message: {where}{listed[0]['message']}", {"errors": listed}
    )


def _field(error: Error, drop: int) -> str:
    return ".".join(str(p) for p in error["loc"][drop:])


def _listed(errors: list[Error], drop: int) -> list[dict[str, Any]]:
    return [
        {"field": _field(e, drop), "message": e["msg"], "type": e["type"]}
        for e in errors[:MAX_REPORTED_ERRORS]
    ]
