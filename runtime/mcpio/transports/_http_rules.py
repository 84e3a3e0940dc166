"""The rules of MCP over HTTP that client and server share: media types, the `Mcp-*` headers and
how their values are written, which member of a request names what it acts on, which tool
arguments a `tools/call` mirrors into `Mcp-Param-*` headers (SEP-2243: the client writes them,
the server checks them against the body) and which HTTP status answers a JSON-RPC error
(2026-07-28; legacy sessions answer every JSON-RPC response with 200)."""

from __future__ import annotations

import base64
import decimal
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, cast

from mcp_wire_runtime._peek import NAMED_BY
from mcp_wire_runtime.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_BUSY,
    ProtocolError,
)
from mcpio.latest import HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION

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
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e]*")  # what a received header value may hold

PARAM_PREFIX = "Mcp-Param-"
X_MCP_HEADER = "x-mcp-header"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
# JSON Schema keywords whose values are schemas (or lists/maps of them) off the `properties`
# chain: an `x-mcp-header` found below any of them is misplaced.
_SUBSCHEMA = frozenset(
    {"items", "contains", "additionalItems", "unevaluatedItems", "additionalProperties"}
    | {"propertyNames", "unevaluatedProperties", "not", "if", "then", "else", "contentSchema"}
)
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUBSCHEMA_MAPS = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})

ParamHeaders = tuple[tuple[str, tuple[str, ...]], ...]
"""(header name, property path) of each `x-mcp-header` annotation of a tool's input schema."""


def media_type(content_type: str) -> str:
    """The media type of a Content-Type value, without its parameters, lowercase."""
    return content_type.split(";")[0].strip().lower()


def accepts_both(accept: str) -> bool:
    """Whether an Accept value lists JSON and event streams, as a POST must."""
    return accepts(accept, JSON) and accepts(accept, EVENT_STREAM)


def accepts(accept: str, media: str) -> bool:
    """Whether an Accept value lists the media type `media` (lowercase): the most specific of
    its media ranges that matches it (`media`, then `type/*`, then `*/*`) has a weight above 0
    (RFC 9110 12.5.1; media ranges, never substrings)."""
    ranks = {media: 2, media.partition("/")[0] + "/*": 1, "*/*": 0}
    best, accepted = -1, False
    for part in accept.split(","):
        name, *params = part.split(";")
        rank = ranks.get(name.strip().lower(), -1)
        if rank > best:
            best, accepted = rank, not _weight_zero(params)
    return accepted


def _weight_zero(params: list[str]) -> bool:
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value.strip()) == 0
            except ValueError:
                return False
    return False


def encode_header_value(value: str) -> str:
    """Encode `value` as an HTTP header value.

    Verbatim when it is plain visible ASCII (0x20-0x7E) without leading or trailing whitespace
    and does not itself look like the sentinel, else `=?base64?<base64 of its UTF-8>?=`.
    """
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


# ---------------------------------------------------------------------- Mcp-Param-* (SEP-2243)


def x_mcp_header_problem(schema: Any) -> str | None:
    """Why the `x-mcp-header` annotations of a tool's input schema are invalid, or None.

    Valid: a non-empty RFC 9110 token, on a `string`, `integer` or `boolean` property reached
    from the root through `properties` keys only, unique (case-insensitively) in the schema."""
    seen: dict[str, str] = {}
    for path, node in _schema_positions(schema):
        if X_MCP_HEADER not in node:
            continue
        if not path:
            return f"{X_MCP_HEADER} outside a chain of `properties` from the root"
        where = ".".join(path)
        header = node[X_MCP_HEADER]
        if type(header) is not str or not _TOKEN.fullmatch(header):
            return f"property {where!r}: {X_MCP_HEADER} is not an HTTP token"
        kind = node.get("type")
        if type(kind) is not str or kind not in _HEADER_TYPES:
            return f"property {where!r}: {X_MCP_HEADER} on a type other than string/integer/boolean"
        if header.lower() in seen:
            return f"property {where!r}: {X_MCP_HEADER} {header!r} repeats {seen[header.lower()]!r}"
        seen[header.lower()] = where
    return None


def x_mcp_headers(schema: Any) -> list[tuple[str, tuple[str, ...]]]:
    """List the (header name, property path) of each `x-mcp-header` annotation in a schema.

    The schema is one `x_mcp_header_problem` accepts.
    """
    return [
        (f"{PARAM_PREFIX}{node[X_MCP_HEADER]}", path)
        for path, node in _schema_positions(schema)
        if path and type(node.get(X_MCP_HEADER)) is str
    ]


def param_headers(schema: Any) -> ParamHeaders:
    """The `Mcp-Param-*` headers of a tool with this input schema: none when its annotations
    break the rules (an HTTP client drops such a tool, so no call of it carries them)."""
    if x_mcp_header_problem(schema) is not None:
        return ()
    return tuple(sorted(x_mcp_headers(schema)))


def _schema_positions(root: Any) -> list[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema object in `root` with its chain of `properties` keys (None once the walk
    left that chain); instance data (`default`, `enum`, ...) is not entered, `$ref` not
    followed."""
    found: list[tuple[tuple[str, ...] | None, dict[str, Any]]] = []
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if type(node) is not dict:
            continue
        schema = cast(dict[str, Any], node)
        found.append((path, schema))
        for key, value in schema.items():
            if key == "properties" and type(value) is dict:
                for name, sub in cast(dict[str, Any], value).items():
                    stack.append(((*path, name) if path is not None else None, sub))
            elif key in _SUBSCHEMA:
                stack.append((None, value))
            elif key in _SUBSCHEMA_LISTS and type(value) is list:
                stack.extend((None, sub) for sub in cast(list[Any], value))
            elif key in _SUBSCHEMA_MAPS and type(value) is dict:
                stack.extend((None, sub) for sub in cast(dict[str, Any], value).values())
    return found


def _argument(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The argument at a property path (None when absent)."""
    value: Any = arguments
    for key in path:
        value = cast(dict[str, Any], value).get(key) if type(value) is dict else None
    return value


def param_text(value: Any) -> str | None:
    """A tool argument as an `Mcp-Param-*` value (before encoding): strings as they are,
    integers in decimal, booleans `true`/`false`; None (no header) for null and anything else."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    return None


def mirror_params(headers: ParamHeaders, arguments: Mapping[str, Any]) -> dict[str, str]:
    """The `Mcp-Param-*` headers (encoded) a client sends with these arguments."""
    out: dict[str, str] = {}
    for header, path in headers:
        text = param_text(_argument(arguments, path))
        if text is not None:
            out[header] = encode_header_value(text)
    return out


def check_params(
    headers: ParamHeaders, arguments: Mapping[str, Any], received: Callable[[str], list[str]]
) -> None:
    """A server's check of a `tools/call`'s `Mcp-Param-*` headers (`received(name)`: that
    header's values) against its arguments: an argument with a value needs its header, a
    header needs the argument it mirrors, its value (decoded) must be plain visible ASCII and
    equal the argument's (integers compared as numbers); -32020 HeaderMismatch otherwise."""
    for header, path in headers:
        where = "params.arguments." + ".".join(path)
        values = received(header)
        value = _argument(arguments, path)
        if len(values) > 1:
            raise ProtocolError(HEADER_MISMATCH, f"{header} appears more than once")
        if not values:
            if param_text(value) is not None:
                raise ProtocolError(HEADER_MISMATCH, f"{header} is missing; {where} has a value")
            continue
        raw = values[0].strip(" \t")
        if not _FIELD_VALUE.fullmatch(raw):
            raise ProtocolError(HEADER_MISMATCH, f"{header} holds characters a header may not")
        if not _same(decode_header_value(raw), value):
            raise ProtocolError(HEADER_MISMATCH, f"{header} does not match {where}")


def _same(text: str, value: Any) -> bool:
    if isinstance(value, bool) or type(value) is str:
        return text == param_text(value)
    if isinstance(value, int | float):
        try:
            return decimal.Decimal(text) == decimal.Decimal(value)
        except (decimal.InvalidOperation, ValueError):
            return False
    return False  # the argument is absent, null, or not a value a header carries


def status_of(code: Any) -> int:
    """The HTTP status of a modern JSON-RPC answer with this error code (None: a result)."""
    if code == METHOD_NOT_FOUND:
        return 404
    if code == SERVER_BUSY:
        return 503  # with Retry-After (`retry_after`)
    return 400 if code in BAD_REQUEST_CODES else 200


def retry_after(status: int) -> dict[str, str]:
    """The headers an answer of this status carries besides its body (503, a refusal for want
    of capacity: retry in a second)."""
    return {"retry-after": "1"} if status == 503 else {}


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
    "PARAM_PREFIX",
    "X_MCP_HEADER",
    "ParamHeaders",
    "accepts",
    "accepts_both",
    "check_params",
    "code_of_status",
    "decode_header_value",
    "encode_header_value",
    "media_type",
    "mirror_params",
    "param_headers",
    "param_text",
    "plain_header_value",
    "retry_after",
    "status_of",
    "x_mcp_header_problem",
    "x_mcp_headers",
]
