"""What every revision's generated code shares: hand-written shared runtime machinery.

It ships with the generated types in the `mcp-wire` distribution, which needs pydantic and
typing-extensions only: nothing here imports `mcpio`.

Generated modules import it: each revision's `models.py` subclasses `WireModel`, its `codec.py`
subclasses `Codec` (`modern.ModernCodec` in the modern era) and supplies only tables, and
`mcp_wire` re-exports `ProtocolError` and `MessageBuildError` and keeps its revisions in a
`registry.Registry`.

`ProtocolError`, `MessageBuildError` and the error codes are plain Python; the pydantic-based
names (`WireModel`, `JSONValue`, `Codec`, ...) load on first use, so importing this package (and
`mcp_wire`) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_wire_runtime._lazy import lazy_names
from mcp_wire_runtime.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    MessageBuildError,
    ProtocolError,
)

if TYPE_CHECKING:
    from mcp_wire_runtime._peek import Peek
    from mcp_wire_runtime.base import JSONValue, WireModel
    from mcp_wire_runtime.codec import (
        MAX_MESSAGE_BYTES,
        Codec,
        Envelope,
        InvalidItem,
        LenientResponse,
        MethodSpec,
        PublicMapping,
    )

_LAZY: dict[str, str] = {
    "JSONValue": "mcp_wire_runtime.base",
    "WireModel": "mcp_wire_runtime.base",
    "MAX_MESSAGE_BYTES": "mcp_wire_runtime.codec",
    "Codec": "mcp_wire_runtime.codec",
    "Envelope": "mcp_wire_runtime.codec",
    "InvalidItem": "mcp_wire_runtime.codec",
    "LenientResponse": "mcp_wire_runtime.codec",
    "MethodSpec": "mcp_wire_runtime.codec",
    "PublicMapping": "mcp_wire_runtime.codec",
    "Peek": "mcp_wire_runtime._peek",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_MESSAGE_BYTES",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Codec",
    "Envelope",
    "InvalidItem",
    "JSONValue",
    "LenientResponse",
    "MessageBuildError",
    "MethodSpec",
    "Peek",
    "ProtocolError",
    "PublicMapping",
    "WireModel",
]
