"""The one exception a codec raises: a JSON-RPC error, ready to be sent back.

Hand-written shared runtime code: the codec machinery and every revision's generated codec
import it, and `mcp_wire` re-exports `ProtocolError`.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class ProtocolError(Exception):
    """A message that cannot be accepted: `code` is the JSON-RPC error code to answer with,
    `message` one line, `data` names what failed (e.g. the failing fields)."""

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
