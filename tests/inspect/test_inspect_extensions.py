"""`mcpio inspect` reads a request, and its answer, with one codec holding every extension of the
revision the request declares (a legacy session: its `initialize`), the Tasks extension's
methods with that extension too."""

from __future__ import annotations

import json
from typing import Any

import mcp_wire
from mcpio.inspect._checks import Checker

MODERN = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
UI = "io.modelcontextprotocol/ui"
BOTH = {"extensions": {TASKS: {}, UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}}
STAMP = "2026-01-01T00:00:00Z"


def request(id: int, method: str, caps: dict[str, Any], **params: Any) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
    }
    frame = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta}}
    return json.dumps(frame).encode()


def answer(id: int, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "result": result}).encode()


def test_a_request_is_read_with_every_extension_it_declares() -> None:
    modern = mcp_wire.codec(MODERN)
    assert Checker._request_codec(MODERN, "tools/call", BOTH) is modern.with_extensions(TASKS, UI)
    only_ui = {"extensions": {UI: {}}}
    assert Checker._request_codec(MODERN, "tasks/get", only_ui).extension_ids == {TASKS, UI}
    unknown = {"extensions": {"com.example/unknown": {}}}
    assert Checker._request_codec(MODERN, "tools/list", unknown) is modern
    legacy = Checker._request_codec("2025-11-25", "tools/list", only_ui)
    assert legacy.extension_ids == {UI} and legacy.revision == "2025-11-25"


def test_a_session_declaring_tasks_and_apps_reads_clean() -> None:
    """A task-augmented call and a tasks/get, both requests declaring both extensions."""
    checker = Checker()
    task = {"taskId": "t1", "status": "working", "createdAt": STAMP, "lastUpdatedAt": STAMP}
    task["ttlMs"] = None
    frames = [
        ("client->server", request(1, "tools/call", BOTH, name="work", arguments={})),
        ("server->client", answer(1, {"resultType": "task", **task})),
        ("client->server", request(2, "tasks/get", BOTH, taskId="t1")),
        ("server->client", answer(2, {"resultType": "complete", **task})),
    ]
    found = [
        (f.rule, f.path)
        for index, (direction, raw) in enumerate(frames)
        for f in checker.check(direction, raw, index=index)  # type: ignore[arg-type]
    ]
    assert found == [] and checker.finish() == []
