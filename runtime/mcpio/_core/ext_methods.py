"""Extension methods as plain data, in either era: the `_meta` envelope's keys, a request's
params and the client's capabilities and info read from them, and a modern result stamped as
every modern result is.

The codecs know only the methods of their revision and of generated extensions; an extension's
methods (`mcpio.server.Extension`: Skills', a user's, and the task methods, checked by their
generated codec first) are answered by the connection in either era
(`ServerConnection._extension`) with what this module reads and writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic_core

from mcp_wire_runtime.errors import INVALID_PARAMS, ProtocolError
from mcpio._core.negotiate import fit
from mcpio._core.protocol_rules import TASKS_EXTENSION
from mcpio.latest import public as pub

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def params_of(raw: bytes) -> dict[str, Any]:
    """A request's params as plain data (-32602 when they are not an object)."""
    params = pydantic_core.from_json(raw).get("params")
    if params is None:
        return {}
    if type(params) is not dict:
        raise ProtocolError(INVALID_PARAMS, "params must be an object")
    return params


def envelope(
    params: Mapping[str, Any],
) -> tuple[pub.ClientCapabilities, pub.Implementation | None]:
    """The client's capabilities and info a 2026-07-28 request's `_meta` envelope carries
    (what is missing or malformed: none)."""
    meta = _object(params.get("_meta")) or {}
    capabilities = _model(pub.ClientCapabilities, meta.get(CLIENT_CAPABILITIES))
    info = _model(pub.Implementation, meta.get(CLIENT_INFO))
    return capabilities or pub.ClientCapabilities(), info


def stamped(result: Mapping[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
    """A modern result in plain data as every modern result is written: `resultType`
    (`complete` unless it says), and the server's info in its `_meta`."""
    body = {**result, "_meta": {**(_object(result.get("_meta")) or {}), SERVER_INFO: server_info}}
    body.setdefault("resultType", "complete")
    return body


def legacy_extensions(capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """The `extensions` a legacy session's initialize result declares (SEP-2133 negotiation
    predates 2026-07-28's schema): those of extensions served outside the schemas; Tasks is
    part of 2025-11-25 itself."""
    declared = _object(capabilities.get("extensions")) or {}
    kept = {key: value for key, value in declared.items() if key != TASKS_EXTENSION}
    return {"extensions": kept} if kept else {}


def _object(value: Any) -> dict[str, Any] | None:
    return value if type(value) is dict else None


def _model(model: Any, data: Any) -> Any:
    found = _object(data)
    if found is None:
        return None
    try:
        return model.model_validate(fit(model, found))
    except ValueError:
        return None
