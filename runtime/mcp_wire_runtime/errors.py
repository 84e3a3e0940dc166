"""What a codec raises: `ProtocolError` and `MessageBuildError`, and the JSON-RPC error codes.

`ProtocolError`, a JSON-RPC error ready to be sent back, for what a codec reads (and for a
method its revision lacks); `MessageBuildError`, a `ValueError`, when its builders are given
arguments that make no valid message (a local mistake, not a wire error).

Hand-written shared runtime code: the codec machinery and every revision's generated codec
import it, and `mcp_wire` re-exports both.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Implementation-defined (JSON-RPC keeps -32000..-32099 for those): the server takes no more work
# now (a full task queue, a shutdown); retry later. EIP-1474's "limit exceeded" code; HTTP 503.
SERVER_BUSY = -32005
# MCP's URLElicitationRequiredError: 2025-11-25's only; 2026-07-28 retired it (MRTR asks instead).
URL_ELICITATION_REQUIRED = -32042


class ProtocolError(Exception):
    """A message that cannot be accepted, as the JSON-RPC error to answer it with.

    Args:
        code: The JSON-RPC error code to answer with.
        message: One line.
        data: What failed (e.g. the failing fields); None: nothing said.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC `error` object."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"ProtocolError({self.code}, {self.message!r})"


class MessageBuildError(ValueError):
    """A builder was given arguments that do not make a valid message of its revision.

    The builders are `codec.request`, `notification`, `response`, `error`; this is a mistake of
    the caller, not of a peer.

    Args:
        message: What is wrong, in one line.
        method: The method (None for an error response).
        errors: The failing fields as `ProtocolError.data["errors"]` gives them:
            `{"field", "message", "type"}` each.
    """

    def __init__(
        self, message: str, *, method: str | None = None, errors: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.method = method
        self.errors = errors or []
