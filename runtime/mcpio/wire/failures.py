"""A frame that failed its one validation pass, as the `ProtocolError` to answer with.

The readers (`schemas.Readers`) pick a frame's kind by its `method` (else it is a response), so
its errors start their location with that tag and, for a response, the branch it failed
(`typed error`, `error`, `result`): an `error` member makes it an error response, a `result`
member a result response, and that branch's errors are the ones reported. Nothing is parsed
again, except to tell a non-string `method` from an unknown one, and NaN or Infinity from a
number out of range.
"""

from __future__ import annotations

import re
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
from mcpio.wire.schemas import BATCH, ERROR, JSONRPC, MESSAGE, RESULT, TYPED_ERROR

MAX_REPORTED_ERRORS = 8
_NOT_AN_OBJECT = frozenset({"model_type", "dict_type", "model_attributes_type", "list_type"})
# The tag of a frame whose tag is refused is its method, or its jsonrpc when it has no method:
# which one, the frame's text tells (a failing frame's path only).
_JSONRPC_2 = re.compile(rb'"jsonrpc"\s*:\s*"2\.0"')
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
    return _classify(codec, errors, data, method, exc)


def _classify(
    codec: Any, errors: list[Error], data: bytes, method: str | None, exc: ValidationError | None
) -> ProtocolError:
    if method is not None:  # decode_response: branch labels first
        return _response(codec, errors, exc, method)
    if codec.batching:  # a message, or a batch of them
        batch = [e for e in errors if e["loc"][:1] == (BATCH,)]
        if batch and not (len(batch) == 1 and len(batch[0]["loc"]) == 1):
            return _batch_item(codec, batch, data)
        errors = [{**e, "loc": e["loc"][1:]} for e in errors if e["loc"][:1] == (MESSAGE,)]
    return _message(codec, errors, data, exc)


def _message(
    codec: Any, errors: list[Error], data: bytes, exc: ValidationError | None
) -> ProtocolError:
    first = errors[0]
    if not first["loc"]:
        kind = first["type"]
        if kind in _NOT_AN_OBJECT:
            if data.lstrip()[:1] == b"[":
                return ProtocolError(
                    INVALID_REQUEST, f"JSON-RPC batches are not part of revision {codec.revision}"
                )
            return ProtocolError(INVALID_REQUEST, "a JSON-RPC message must be an object")
        tag = str(first.get("ctx", {}).get("tag", ""))
        if kind == "union_tag_not_found" or not _JSONRPC_2.search(data):
            return _jsonrpc_error()  # no method, or a method beside a wrong jsonrpc
        if _may_not_be_a_string(tag) and not _is_string_method(data):
            return ProtocolError(INVALID_REQUEST, "method must be a string", {"field": "method"})
        return codec._unknown_method(tag, "request")
    if first["loc"][0] == JSONRPC:
        return _response(codec, [{**e, "loc": e["loc"][1:]} for e in errors], exc, None)
    return _call(codec, errors)


def _response(
    codec: Any, errors: list[Error], exc: ValidationError | None, method: str | None
) -> ProtocolError:
    """A response's errors, each located first by the branch it failed."""
    by: dict[Any, list[Error]] = {}
    for error in errors:
        by.setdefault(error["loc"][0] if error["loc"] else "", []).append(error)
    generic = by.get(ERROR, [])
    if all(len(e["loc"]) == 1 and e["type"] in _NOT_AN_OBJECT for e in errors):
        return ProtocolError(INVALID_REQUEST, "a JSON-RPC message must be an object")
    envelope = _envelope(generic, 1)
    if envelope is not None:
        return envelope
    has_error = not _missing(generic, (ERROR, "error"))
    has_result = RESULT in by and not _missing(by[RESULT], (RESULT, "result"))
    if has_error and has_result:
        return ProtocolError(INVALID_REQUEST, "a response has a result or an error, not both")
    if has_error:
        typed = by.get(TYPED_ERROR, ())
        if typed and not (len(typed) == 1 and typed[0]["type"] in _TAG_MISSES):
            return _frame(list(typed), 2)
        return _frame(generic, 1)
    if has_result:
        if exc is not None and _unrecognised_result_type(by[RESULT]):
            return _result_type(codec, exc)
        return _frame(by[RESULT], 1)
    if method is not None:
        return ProtocolError(INVALID_REQUEST, "a response needs a result or an error")
    return ProtocolError(INVALID_REQUEST, "not a request, notification or response")


def _jsonrpc_error() -> ProtocolError:
    return ProtocolError(INVALID_REQUEST, 'jsonrpc must be "2.0"', {"field": "jsonrpc"})


def _envelope(errors: Sequence[Error], drop: int) -> ProtocolError | None:
    """The error of a frame's `jsonrpc` or `id`, which come before its other members."""
    tops = {str(e["loc"][drop]) for e in errors if len(e["loc"]) > drop}
    if "jsonrpc" in tops:
        return _jsonrpc_error()
    if "id" in tops:
        return ProtocolError(INVALID_REQUEST, "id must be a string or an integer", {"field": "id"})
    return None


def _unrecognised_result_type(errors: list[Error]) -> bool:
    """Whether every branch the result was tried as refused its `resultType`."""
    result = [e for e in errors if e["loc"][1:2] == ("result",)]
    tried = {e["loc"][2] if len(e["loc"]) > 3 else None for e in result}
    refused = {
        e["loc"][2] if len(e["loc"]) > 3 else None
        for e in result
        if e["loc"][-1] == "resultType" and e["type"] == "literal_error"
    }
    return bool(refused) and refused == tried


def _result_type(codec: Any, exc: ValidationError) -> ProtocolError:
    """A result whose `resultType` is none the codec recognises (its value read from the error:
    a rare, failing frame)."""
    value = next(
        (e["input"] for e in exc.errors(include_url=False) if e["loc"][-1:] == ("resultType",)),
        None,
    )
    recognised = [*getattr(codec, "result_tags", ()), *sorted(codec.extra_result_types)]
    return ProtocolError(
        INVALID_REQUEST,
        (
            f"unrecognised resultType {value!r}"
            if type(value) is str
            else "resultType must be a string"
        ),
        {"field": "result.resultType", "recognised": recognised},
    )


def _missing(errors: Sequence[Error], loc: tuple[str, ...]) -> bool:
    return any(e["type"] == "missing" and tuple(e["loc"]) == loc for e in errors)


def _batch_item(codec: Any, errors: list[Error], data: bytes) -> ProtocolError:
    index = errors[0]["loc"][1]
    inner = [{**e, "loc": e["loc"][2:]} for e in errors if e["loc"][1] == index]
    exc = _message(codec, inner, data, None)
    return ProtocolError(
        exc.code, f"batch item {index}: {exc.message}", {"index": index, "error": exc.data}
    )


def _call(codec: Any, errors: list[Error]) -> ProtocolError:
    """A request's or notification's errors, each located first by its method."""
    method = str(errors[0]["loc"][0])
    envelope = _envelope(errors, 1)
    if envelope is not None:
        if any(e["loc"][1:] == ("id",) and e["type"] == "missing" for e in errors):
            return codec._unknown_method(method, "notification")  # a request's, without id
        return envelope
    fields = [_field(e, 1) for e in errors]
    if all(f == "params" or f.startswith("params.") for f in fields):
        listed = _listed(errors, 1)
        where = f"{listed[0]['field']}: " if listed[0]["field"] else ""
        return ProtocolError(
            INVALID_PARAMS,
            f"invalid params for {method}: {where}{listed[0]['message']}",
            {"errors": listed},
        )
    return _frame(errors, 1)


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
    envelope = _envelope(errors, drop)
    if envelope is not None:
        return envelope
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
