"""A legacy stdio server that asks `roots/list` on its own, as the reference filesystem server
does: right after `notifications/initialized` (when the client declared roots) and again at each
`notifications/roots/list_changed`. It offers tools only (no resources, prompts, completions or
logging), and its tool `roots` answers the roots it was last given (JSON), or its refusal.
Its tool `ask` asks an elicitation and never answers the call; with that question pending it
outlives the end of its stdin by a minute (as a Node server whose request timer is still
running does): only a signal stops it in time.

    python tests/peers/roots_asking_server.py [PID_FILE]
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

_state: dict[str, Any] = {"roots": None, "asked": 0, "declared": False, "pending": False}
_NO_ARGUMENTS = {"type": "object", "properties": {}}
_LATER: dict[str, Any] = {}  # a call answered later (never)
TOOLS = [
    {"name": "roots", "inputSchema": _NO_ARGUMENTS},
    {"name": "ask", "inputSchema": _NO_ARGUMENTS},
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def ask_roots() -> None:
    _state["asked"] += 1
    send({"jsonrpc": "2.0", "id": f"roots-{_state['asked']}", "method": "roots/list"})


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        _state["declared"] = "roots" in (params.get("capabilities") or {})
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "roots-asking", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call" and params.get("name") == "ask":
        _state["pending"] = True
        question = {"message": "Name?", "requestedSchema": _NO_ARGUMENTS}
        send({"jsonrpc": "2.0", "id": "ask", "method": "elicitation/create", "params": question})
        return _LATER
    if method == "tools/call":
        return {"content": [{"type": "text", "text": json.dumps(_state["roots"])}]}
    if method == "ping":
        return {}
    return None


def main() -> None:
    if len(sys.argv) > 1:
        with open(sys.argv[1], "a") as pids:
            pids.write(f"{os.getpid()}\n")
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method is None and message.get("id") == "ask":
            continue
        if method is None:  # the client's answer to our roots/list
            _state["roots"] = message.get("result") or {"error": message.get("error")}
            continue
        if method in ("notifications/initialized", "notifications/roots/list_changed"):
            if _state["declared"]:
                ask_roots()
            continue
        if "id" not in message:
            continue
        result = answer(message)
        if result is _LATER:
            continue
        if result is None:
            error = {"code": -32601, "message": f"method {method!r} is not served here"}
            send({"jsonrpc": "2.0", "id": message["id"], "error": error})
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    if _state["pending"]:
        time.sleep(60)


if __name__ == "__main__":
    main()
