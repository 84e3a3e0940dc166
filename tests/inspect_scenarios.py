"""Sessions that each break one rule of `mcpio inspect`, as scripts both a scripted server
(`tests/inspect_peer.py`) and the test playing the client follow: ("c", frame) the client
sends, ("s", frame) the server sends. `EXPECTED[name]` is the finding each must raise (rule,
JSON path, severity); a session raises nothing else, except where `ALSO` names it."""

from __future__ import annotations

import json
from typing import Any

Step = tuple[str, Any]

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SERVER_CAPS = {"tools": {}}


def req(id: Any, method: str, params: Any = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def note(method: str, params: Any = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def res(id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def modern(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return req(id, method, {**(params or {}), "_meta": dict(ENVELOPE)})


HANDSHAKE: list[Step] = [
    (
        "c",
        req(
            0,
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        ),
    ),
    (
        "s",
        res(
            0,
            {
                "protocolVersion": LEGACY,
                "capabilities": SERVER_CAPS,
                "serverInfo": {"name": "s", "version": "1"},
            },
        ),
    ),
    ("c", note("notifications/initialized")),
]
TOOLS = res(1, {"tools": []})
COMPLETE = {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}

SCENARIOS: dict[str, list[Step]] = {
    "clean-legacy": [*HANDSHAKE, ("c", req(1, "tools/list")), ("s", TOOLS)],
    "clean-modern": [("c", modern(1, "tools/list")), ("s", res(1, COMPLETE))],
    "frame.json": [*HANDSHAKE, ("c", "this is not json")],
    "frame.schema": [*HANDSHAKE, ("c", req(1, "tools/call", {"name": 5}))],
    "frame.unknown-member": [
        *HANDSHAKE,
        ("c", req(1, "tools/list")),
        ("s", res(1, {"tools": [], "bogus": True})),
    ],
    "method.unknown": [*HANDSHAKE, ("c", req(1, "tools/frobnicate"))],
    "method.direction": [*HANDSHAKE, ("s", note("notifications/initialized"))],
    "lifecycle.before-initialize": [("c", req(1, "tools/list")), ("s", TOOLS)],
    "request.id-reused": [*HANDSHAKE, ("c", req(1, "tools/list")), ("c", req(1, "tools/list"))],
    "response.unknown-id": [*HANDSHAKE, ("s", res(99, {"tools": []}))],
    "response.duplicate": [*HANDSHAKE, ("c", req(1, "tools/list")), ("s", TOOLS), ("s", TOOLS)],
    "capability.server": [*HANDSHAKE, ("c", req(1, "prompts/list"))],
    "capability.server/list-changed": [*HANDSHAKE, ("s", note("notifications/tools/list_changed"))],
    "capability.client": [
        *HANDSHAKE,
        ("s", req(1, "sampling/createMessage", {"messages": [], "maxTokens": 5})),
    ],
    "capability.client/input-required": [
        ("c", modern(1, "tools/call", {"name": "ask"})),
        (
            "s",
            res(
                1,
                {
                    "resultType": "input_required",
                    "inputRequests": {
                        "q": {
                            "method": "elicitation/create",
                            "params": {
                                "mode": "form",
                                "message": "ok?",
                                "requestedSchema": {"type": "object", "properties": {}},
                            },
                        }
                    },
                },
            ),
        ),
    ],
    "progress.unknown-token": [
        *HANDSHAKE,
        ("s", note("notifications/progress", {"progressToken": "nope", "progress": 1})),
    ],
    "result.type": [("c", modern(1, "tools/list")), ("s", res(1, {"tools": []}))],
    "input.request-state": [
        ("c", modern(1, "tools/call", {"name": "ask"})),
        ("s", res(1, {"resultType": "input_required", "requestState": "issued"})),
        ("c", modern(2, "tools/call", {"name": "ask", "requestState": "forged"})),
    ],
    "clean-retry": [
        ("c", modern(1, "tools/call", {"name": "ask"})),
        ("s", res(1, {"resultType": "input_required", "requestState": "issued"})),
        ("c", modern(2, "tools/call", {"name": "ask", "requestState": "issued"})),
        ("s", res(2, {"resultType": "complete", "content": []})),
    ],
    "revision.unknown": [
        HANDSHAKE[0],
        (
            "s",
            res(
                0,
                {
                    "protocolVersion": "2099-01-01",
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            ),
        ),
    ],
    "result.input-required": [
        ("c", modern(1, "tools/list")),
        ("s", res(1, {"resultType": "input_required", "requestState": "x"})),
    ],
}

EXPECTED: dict[str, tuple[str, str, str] | None] = {
    "clean-legacy": None,
    "clean-modern": None,
    "frame.json": ("frame.json", "$", "error"),
    "frame.schema": ("frame.schema", "$.params.name", "error"),
    "frame.unknown-member": ("frame.unknown-member", "$.result.bogus", "warning"),
    "method.unknown": ("method.unknown", "$.method", "error"),
    "method.direction": ("method.direction", "$.method", "error"),
    "lifecycle.before-initialize": ("lifecycle.before-initialize", "$.method", "warning"),
    "request.id-reused": ("request.id-reused", "$.id", "error"),
    "response.unknown-id": ("response.unknown-id", "$.id", "error"),
    "response.duplicate": ("response.duplicate", "$.id", "error"),
    "capability.server": ("capability.server", "$.method", "error"),
    "capability.server/list-changed": ("capability.server", "$.method", "error"),
    "capability.client": ("capability.client", "$.method", "error"),
    "capability.client/input-required": (
        "capability.client",
        "$.result.inputRequests.q.method",
        "error",
    ),
    "progress.unknown-token": ("progress.unknown-token", "$.params.progressToken", "error"),
    "result.type": ("result.type", "$.result", "error"),
    "input.request-state": ("input.request-state", "$.params.requestState", "error"),
    "clean-retry": None,
    "revision.unknown": ("revision.unknown", "$.result.protocolVersion", "warning"),
    "result.input-required": ("result.input-required", "$.result.resultType", "error"),
}
# What else a scenario's one broken rule makes the codec say.
ALSO: dict[str, set[str]] = {"result.input-required": {"frame.schema"}}


def wire(frame: Any) -> bytes:
    """A step's frame as one line."""
    return (frame if isinstance(frame, str) else json.dumps(frame)).encode() + b"\n"
