"""JSON-RPC odds and ends every part of the runtime shares."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic_core

from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.codec import plain as plain  # re-exported: the runtime names it here
from mcp_wire_runtime.errors import INTERNAL_ERROR, ProtocolError
from mcpio._core.errors import ConnectionClosed, McpError

RequestId = str | int
log = logging.getLogger("mcpio")


async def answered(
    id: RequestId,
    method: str,
    work: Awaitable[bytes | None],
    error_frame: Callable[[RequestId | None, ProtocolError], bytes],
) -> bytes | None:
    """The answer to a request: what its `work` gives (None: nothing to send), or
    `failure_answer` for what it raised."""
    try:
        return await work
    except Exception as exc:
        return failure_answer(id, method, exc, error_frame)


def failure_answer(
    id: RequestId,
    method: str,
    exc: Exception,
    error_frame: Callable[[RequestId | None, ProtocolError], bytes],
) -> bytes | None:
    """The answer to a request whose work raised `exc` (None: nothing to send): a
    `ProtocolError`'s error frame as it is, anything else as -32603 "internal error" (its
    traceback logged, never sent). A handler that ended because the client went away while it
    waited on it (`ConnectionClosed`, also inside an exception group) is the client's doing:
    one log line, nothing to send."""
    if isinstance(exc, ProtocolError):
        return error_frame(id, exc)
    if _client_gone(exc):
        log.info("handler of %s ended: the client closed the connection", method)
        return None
    log.error("handler of %s failed", method, exc_info=exc)
    return error_frame(id, ProtocolError(INTERNAL_ERROR, "internal error"))


def _client_gone(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_client_gone(inner) for inner in exc.exceptions)
    return isinstance(exc, ConnectionClosed)


def error_frame(codec: Codec | None, id: RequestId | None, error: ProtocolError) -> bytes:
    """An error response. An id that could not be read is left out where the revision's schema
    allows it (2025-11-25 and later, and before any revision is chosen), else sent as null, as
    JSON-RPC 2.0 requires (older schemas have no valid form for it)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "error": error.to_error()}
    if id is None and (codec is None or not codec.error_response.model_fields["id"].is_required()):
        del body["id"]
    return pydantic_core.to_json(body)


def error_of(response: Any) -> Any:
    """The error of a decoded response, None for a result (read from the model's fields: a
    missing attribute costs a pydantic `__getattr__` and an exception)."""
    fields = getattr(response, "__dict__", None)
    return fields.get("error") if fields is not None else getattr(response, "error", None)


def raise_error(response: Any) -> None:
    """Raise a decoded response's error as `McpError` (nothing for a result)."""
    error = error_of(response)
    if error is not None:
        raise McpError(error.code, error.message, plain(getattr(error, "data", None)))
