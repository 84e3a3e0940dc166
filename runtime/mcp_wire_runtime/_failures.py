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

from mcp_wire_runtime._numbers import may_hold_non_finite
from mcp_wire_runtime._schemas import BATCH, ERROR, JSONRPC, MESSAGE, RESULT, TYPED_ERROR
from mcp_wire_runtime.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ProtocolError,
)

MAX_REPORTED_ERRORS = 8
# Limits of pydantic-core's JSON reader (measured; tests/wire/test_one_pass.py holds them): arrays
# and objects nested at most this deep in a frame, integers of at most this many digits.
MAX_DEPTH = 201
MAX_DIGITS = 4300
_NOT_AN_OBJECT = frozenset({"model_type", "dict_type", "model_attributes_type", "list_type"})
# The tag of a frame whose tag is refused is its method, or its jsonrpc when it has no method:
# which one, the frame's text tells (a failing frame's path only).
_JSONRPC_2 = re.compile(rb'"jsonrpc"\s*:\s*"2\.0"')
_TAG_MISSES = frozenset({"union_tag_not_found", "union_tag_invalid"})

Error = dict[str, Any]


def protocol_error(
    codec: Any, exc: ValidationError, data: bytes, method: str | None
) -> ProtocolError:
    """Say why `data` is not a message of `codec`'s revision, as the `ProtocolError` to answer.

    Args:
        codec: The codec whose readers refused `data`.
        exc: The readers' validation error.
        data: The frame.
        method: The request a response answers, for `decode_response`; else None.
    """
    errors: list[Error] = exc.errors(include_url=False, include_input=False)  # type: ignore[assignment]
    if errors and errors[0]["type"] == "json_invalid":
        return unreadable(str(errors[0]["ctx"]["error"]))
    if may_hold_non_finite(data):
        try:
            pydantic_core.from_json(data, allow_inf_nan=False)
        except ValueError as parse_error:
            return ProtocolError(PARSE_ERROR, f"not valid JSON: {parse_error}")
    return _classify(codec, errors, data, method, exc)


def unreadable(reason: str) -> ProtocolError:
    """The `ProtocolError` for a frame the JSON reader stopped on, given the reader's reason.

    The frame is past a documented limit (-32600 naming it), or not JSON at all (-32700). The
    reader refuses a limit before it reads the rest of the frame.
    """
    if reason.startswith("recursion limit exceeded"):
        return ProtocolError(
            INVALID_REQUEST,
            f"the frame nests arrays and objects deeper than {MAX_DEPTH} levels, the limit",
            {"limit": "depth", "max": MAX_DEPTH},
        )
    if reason.startswith("number out of range"):
        return ProtocolError(
            INVALID_REQUEST,
            f"an integer in the frame has more than {MAX_DIGITS} digits, the limit",
            {"limit": "digits", "max": MAX_DIGITS},
        )
    return ProtocolError(PARSE_ERROR, f"not valid JSON: {reason}")


def _classify(
    codec: Any, errors: list[Error], data: bytes, method: str | None, exc: ValidationError | None
) -> ProtocolError:
    if method is not None:  # decode_response: branch labels first
        return _response(codec, errors, 0, exc, method)
    if codec.batching:  # a message, or a batch of them (one more label first)
        batch = [e for e in errors if e["loc"][:1] == (BATCH,)]
        if batch and not (len(batch) == 1 and len(batch[0]["loc"]) == 1):
            index = batch[0]["loc"][1]
            item = [e for e in batch if e["loc"][1] == index]
            exc_item = _message(codec, item, 2, data, None)
            return ProtocolError(
                exc_item.code,
                f"batch item {index}: {exc_item.message}",
                {"index": index, "error": exc_item.data},
            )
        return _message(codec, [e for e in errors if e["loc"][:1] == (MESSAGE,)], 1, data, exc)
    return _message(codec, errors, 0, data, exc)


def _message(
    codec: Any, errors: list[Error], drop: int, data: bytes, exc: ValidationError | None
) -> ProtocolError:
    """A message's errors (the first `drop` locations of each name enclosing branches)."""
    first = errors[0]
    loc = first["loc"]
    if len(loc) == drop:
        kind = first["type"]
        if kind in _NOT_AN_OBJECT:
            if data.lstrip()[:1] == b"[":
                return ProtocolError(
                    INVALID_REQUEST, f"JSON-RPC batches are not part of revision {codec.revision}"
                )
            return ProtocolError(INVALID_REQUEST, "a JSON-RPC message must be an object")
        tag = str((first.get("ctx") or {}).get("tag", ""))
        if kind == "union_tag_not_found" or not _JSONRPC_2.search(data):
            return _jsonrpc_error()  # no method, or a method beside a wrong jsonrpc
        if _may_not_be_a_string(tag) and not _is_string_method(data):
            return ProtocolError(INVALID_REQUEST, "method must be a string", {"field": "method"})
        return codec._unknown_method(tag, "request")
    if loc[drop] == JSONRPC:
        return _response(codec, errors, drop + 1, exc, None)
    return _call(codec, errors, drop + 1)


def _response(
    codec: Any, errors: list[Error], drop: int, exc: ValidationError | None, method: str | None
) -> ProtocolError:
    """A response's errors: each located by the branch it failed (after `drop` locations)."""
    by: dict[Any, list[Error]] = {}
    shallow = True  # every error at a branch's root
    for error in errors:
        loc = error["loc"]
        by.setdefault(loc[drop] if len(loc) > drop else "", []).append(error)
        shallow = shallow and len(loc) == drop + 1 and error["type"] in _NOT_AN_OBJECT
    if shallow:
        return ProtocolError(INVALID_REQUEST, "a JSON-RPC message must be an object")
    generic = by.get(ERROR, [])
    envelope = _envelope(generic, drop + 1)
    if envelope is not None:
        return envelope
    has_error = not _missing(generic, drop, "error")
    has_result = RESULT in by and not _missing(by[RESULT], drop, "result")
    if has_error and has_result:
        return ProtocolError(INVALID_REQUEST, "a response has a result or an error, not both")
    if has_error:
        typed = by.get(TYPED_ERROR, ())
        if typed and not (len(typed) == 1 and typed[0]["type"] in _TAG_MISSES):
            return _frame(list(typed), drop + 2)
        return _frame(generic, drop + 1)
    if has_result:
        if exc is not None and _unrecognised_result_type(by[RESULT], drop + 1):
            return _result_type(codec, exc)
        return _frame(by[RESULT], drop + 1)
    if method is not None:
        return ProtocolError(INVALID_REQUEST, "a response needs a result or an error")
    return ProtocolError(INVALID_REQUEST, "not a request, notification or response")


def _jsonrpc_error() -> ProtocolError:
    return ProtocolError(INVALID_REQUEST, 'jsonrpc must be "2.0"', {"field": "jsonrpc"})


def _envelope(errors: Sequence[Error], drop: int) -> ProtocolError | None:
    """The error of a frame's `jsonrpc` or `id`, which come before its other members."""
    bad_id = False
    for error in errors:
        loc = error["loc"]
        if len(loc) > drop:
            if loc[drop] == "jsonrpc":
                return _jsonrpc_error()
            bad_id = bad_id or loc[drop] == "id"
    if bad_id:
        return ProtocolError(INVALID_REQUEST, "id must be a string or an integer", {"field": "id"})
    return None


def _unrecognised_result_type(errors: list[Error], drop: int) -> bool:
    """Whether every branch the result was tried as refused its `resultType` (`drop`: the
    locations before the frame's members)."""
    tried, refused = set(), set()
    for error in errors:
        loc = error["loc"]
        if len(loc) > drop and loc[drop] == "result":
            branch = loc[drop + 1] if len(loc) > drop + 2 else None
            tried.add(branch)
            if loc[-1] == "resultType" and error["type"] == "literal_error":
                refused.add(branch)
    return bool(refused) and refused == tried


def _result_type(codec: Any, exc: ValidationError) -> ProtocolError:
    """A result whose `resultType` is none the codec recognises (its value read from the error:
    a rare, failing frame)."""
    value = next(
        (e["input"] for e in exc.errors(include_url=False) if e["loc"][-1:] == ("resultType",)),
        None,
    )
    return codec._unrecognised_result_type(value)


def _missing(errors: Sequence[Error], drop: int, member: str) -> bool:
    """Whether the errors say the frame lacks `member` (at the frame's root, after the branch)."""
    return any(
        e["type"] == "missing" and len(e["loc"]) == drop + 2 and e["loc"][drop + 1] == member
        for e in errors
    )


def _call(codec: Any, errors: list[Error], drop: int) -> ProtocolError:
    """A request's or notification's errors (after `drop` locations: the last is its method)."""
    method = str(errors[0]["loc"][drop - 1])
    envelope = _envelope(errors, drop)
    if envelope is not None:
        if any(e["type"] == "missing" and e["loc"][drop:] == ("id",) for e in errors):
            return codec._unknown_method(method, "notification")  # a request's, without id
        return envelope
    if all(len(e["loc"]) > drop and e["loc"][drop] == "params" for e in errors):
        return _invalid(INVALID_PARAMS, f"invalid params for {method}", errors, drop)
    return _frame(errors, drop)


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
    """The ProtocolError of a frame's own errors (after `drop` locations naming branches)."""
    envelope = _envelope(errors, drop)
    if envelope is not None:
        return envelope
    return _invalid(INVALID_REQUEST, "invalid message", errors, drop)


def _invalid(code: int, what: str, errors: list[Error], drop: int) -> ProtocolError:
    """`what`, the first error's field and message, and the errors listed in its data."""
    reported = listed(errors, drop)
    field = f"{reported[0]['field']}: " if reported[0]["field"] else ""
    return ProtocolError(code, f"{what}: {field}{reported[0]['message']}", {"errors": reported})


def listed(errors: list[Error], drop: int) -> list[dict[str, Any]]:
    """List validation errors as `ProtocolError.data["errors"]` does (the first few).

    Fields are named by wire path after the first `drop` locations.
    """
    return [
        {"field": _field(e, drop), "message": e["msg"], "type": e["type"]}
        for e in _as_numbers(errors)[:MAX_REPORTED_ERRORS]
    ]


def _as_numbers(errors: list[Error]) -> list[Error]:
    """The errors, a number member's as one. A JSON Schema number is generated as
    `StrictInt | StrictFloat` (so that 1 stays 1), and pydantic reports a value of neither type
    once per branch ("...int: Input should be a valid integer", "...float: ...valid number"):
    the float branch's error, at the member, is what the schema means."""
    floats = {e["loc"][:-1] for e in errors if e["loc"][-1:] == ("float",)}
    if not floats:
        return errors
    out: list[Error] = []
    for error in errors:
        loc = error["loc"]
        if loc[:-1] in floats and loc[-1] in ("int", "float"):
            if loc[-1] == "int":
                continue
            error = {**error, "loc": loc[:-1]}
        out.append(error)
    return out


def _field(error: Error, drop: int) -> str:
    field = ".".join(map(str, error["loc"][drop:]))
    inside = (error.get("ctx") or {}).get("at")  # a number out of range inside a JSON value
    return f"{field}.{inside}" if inside else field
