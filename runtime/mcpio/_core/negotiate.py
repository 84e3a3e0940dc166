"""Which revision to speak: the server's choice for a legacy `initialize` and its reading of a
modern request's envelope; the client's probe and fallback live in `client.py`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

import mcp_wire
from mcp_wire_runtime._peek import NAMED_BY, Peek
from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.errors import ProtocolError

LEGACY: tuple[str, ...] = tuple(r for r in mcp_wire.REVISIONS if mcp_wire.ERAS[r] == "legacy")
MODERN: tuple[str, ...] = tuple(r for r in mcp_wire.REVISIONS if mcp_wire.ERAS[r] == "modern")
# The per-request envelope of the modern era (the schema's RequestMetaObject keys).
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"


def codec_of(revision: str) -> Codec:
    """The codec of a pinned revision (cached: this is on every request's path)."""
    codec = _CODECS.get(revision)
    if codec is None:
        codec = _CODECS[revision] = mcp_wire.codec(revision)
    return codec


_CODECS: dict[str, Codec] = {}


def peek_any(raw: bytes) -> Peek:
    """The envelope of a frame of any revision, read without its params (the latest modern
    codec's peek: a legacy frame's protocol version reads as None). Raises the `ProtocolError`
    a decode would for what is not JSON or not a JSON-RPC message."""
    return codec_of(MODERN[-1]).peek(raw)


def read_modern(version: str, raw: bytes) -> tuple[Any, Peek] | None:
    """A request of modern revision `version` decoded whole, with the envelope `peek_any` reads
    of it (so that it is parsed once); None for what is not such a request, or does not decode
    (`peek_any` then reads it, and says what is wrong in the order it always does)."""
    if version not in MODERN:
        return None
    try:
        message = codec_of(version).decode(raw)
    except ProtocolError:
        return None
    meta = getattr(message.__dict__.get("params"), "meta", None)
    if getattr(meta, "io_modelcontextprotocol_protocolVersion", None) != version:
        return None  # the server reads a request by the revision its envelope names
    return _as_request(message, version)


# A modern envelope's version key as a legacy frame may spell it (unescaped): `read_legacy`
# leaves a frame that holds it, or any escape, to `peek_any`.
_VERSION_KEY_BYTES = PROTOCOL_VERSION_KEY.encode()


def read_legacy(codec: Codec, raw: bytes) -> tuple[Any, Peek] | None:
    """A request of a legacy session (`codec`'s revision) decoded whole, with the envelope
    `peek_any` reads of it (so that it is parsed once); None for what is not such a request,
    does not decode, or may name a modern version in its `_meta` (`peek_any` then reads it)."""
    # (`bytes in bytes` first tries its operand as an int and raises inside: `find` and a
    # byte's int are cheaper)
    if 92 in raw or raw.find(_VERSION_KEY_BYTES) >= 0:  # 92: a backslash
        return None  # (a JSON escape could spell the key: the peek reads the version)
    try:
        message = codec.decode(raw)
    except ProtocolError:
        return None
    if type(message) is list:
        return None  # a batch (2025-03-26): the read loop's
    return _as_request(message, None)


def _as_request(message: Any, version: str | None) -> tuple[Any, Peek] | None:
    """A decoded message with the envelope `peek_any` reads of it, if it is a request (the
    version: the one its modern envelope names, None for legacy); else None."""
    fields = message.__dict__
    method = fields.get("method")
    request_id = fields.get("id")
    if type(method) is not str or request_id is None:
        return None
    key = NAMED_BY.get(method)
    name = getattr(fields.get("params"), key, None) if key is not None else None
    if type(name) is not str:
        name = None
    return message, tuple.__new__(Peek, ("request", request_id, method, name, version))


def legacy_version(requested: Any) -> str:
    """Echo a supported legacy version; otherwise counter-offer the newest legacy one."""
    return requested if requested in LEGACY else LEGACY[-1]


def envelope_version(obj: Mapping[str, Any]) -> str | None:
    """The protocol version a request's `_meta` envelope names, if it has one."""
    params = obj.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    version = meta.get(PROTOCOL_VERSION_KEY) if type(meta) is dict else None
    return version if type(version) is str else None


def fit(model: type[BaseModel], data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` without the top-level members `model` (an older revision's) does not declare."""
    names = {field.alias or name for name, field in model.model_fields.items()}
    return {k: v for k, v in data.items() if k in names}
