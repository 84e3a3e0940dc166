"""The rules of MCP over HTTP that client and server share: media types, the `Mcp-*` headers and
how their values are written, which member of a request names what it acts on, and which HTTP
status answers a JSON-RPC error (2026-07-28; legacy sessions answer every JSON-RPC response with
200)."""

from __future__ import annotations

import base64
import re
from typing import Any

from mcpio.latest import HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION
from mcpio.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ProtocolError,
)
from mcpio.wire.peek import NAMED_BY

JSON = "application/json"
EVENT_STREAM = "text/event-stream"
ACCEPT_BOTH = f"{JSON}, {EVENT_STREAM}"

# JSON-RPC codes a modern server answers with 400 (and -32601 with 404; others 200).
BAD_REQUEST_CODES = frozenset(
    {PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, HEADER_MISMATCH, MISSING_CAPABILITY}
    | {UNSUPPORTED_VERSION}
)

_SENTINEL = re.compile(r"=\?base64\?.*\?=", re.DOTALL)
_PLAIN = re.compile(r"[\x20-\x7e]*")


def media_type(content_type: str) -> str:
    """The media type of a Content-Type value, without its parameters, lowercase."""
    return content_type.split(";")[0].strip().lower()


def accepts_both(accept: str) -> bool:
    """Whether an Accept value lists JSON and event streams (or `*/*`), as a POST must."""
    wildcard = "*/*" in accept
    return (JSON in accept or wildcard) and (EVENT_STREAM in accept or wildcard)


def encode_header_value(value: str) -> str:
    """`value` as an HTTP header value: verbatim when it is plain visible ASCII (0x20-0x7E)
    without leading or trailing whitespace and does not itself look like the sentinel, else
    `=?base64?<base64 of its UTF-8>?=`."""
    if _PLAIN.fullmatch(value) and value == value.strip() and not _SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def plain_header_value(value: Any) -> str | None:
    """A value sent without encoding (protocol version, method), or None if it cannot be."""
    if type(value) is str and value and _PLAIN.fullmatch(value) and value == value.strip():
        return value
    return None


def decode_header_value(value: str) -> str:
    """The text a header value stands for (`encode_header_value` undone); -32020 when its
    base64 form is malformed."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode()
        except ValueError:
            raise ProtocolError(HEADER_MISMATCH, "a header's base64 value is malformed") from None
    return value


def status_of(code: Any) -> int:
    """The HTTP status of a modern JSON-RPC answer with this error code (None: a result)."""
    if code == METHOD_NOT_FOUND:
        return 404
    return 400 if code in BAD_REQUEST_CODES else 200


def code_of_status(status: int) -> int:
    """The JSON-RPC code a client reports for an HTTP failure that carried no JSON-RPC error."""
    if status == 404:
        return METHOD_NOT_FOUND
    return INTERNAL_ERROR if status >= 500 else INVALID_REQUEST


__all__ = [
    "ACCEPT_BOTH",
    "EVENT_STREAM",
    "JSON",
    "NAMED_BY",
    "accepts_both",
    "code_of_status",
    "decode_header_value",
    "encode_header_value",
    "media_type",
    "plain_header_value",
    "status_of",
]
