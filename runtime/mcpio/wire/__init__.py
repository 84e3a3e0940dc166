"""What every revision's generated code shares: hand-written shared runtime machinery.

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

from mcpio.wire._lazy import lazy_names
from mcpio.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    MessageBuildError,
    ProtocolError,
)

if TYPE_CHECKING:
    from mcpio.wire._peek import Peek
    from mcpio.wire.base import JSONValue, WireModel
    from mcpio.wire.codec import (
        MAX_MESSAGE_BYTES,
        Codec,
        Envelope,
        InvalidItem,
        LenientResponse,
        MethodSpec,
        PublicMapping,
    )

_LAZY: dict[str, str] = {
    "JSONValue": "mcpio.wire.base",
    "WireModel": "mcpio.wire.base",
    "MAX_MESSAGE_BYTES": "mcpio.wire.codec",
    "Codec": "mcpio.wire.codec",
    "Envelope": "mcpio.wire.codec",
    "InvalidItem": "mcpio.wire.codec",
    "LenientResponse": "mcpio.wire.codec",
    "MethodSpec": "mcpio.wire.codec",
    "PublicMapping": "mcpio.wire.codec",
    "Peek": "mcpio.wire._peek",
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
