"""The runtime's coverage table of every pinned revision's methods (tests and scripts/coverage_table.py)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import mcp_wire


@dataclass(frozen=True)
class Path:
    """Where the runtime handles a method: `Class.attribute` or `Class(parameter=)`, and how."""

    ref: str
    how: str = ""


@dataclass(frozen=True)
class Why:
    """Why the runtime has no path for a method on this side."""

    reason: str


Side = Path | Why


COVERAGE: dict[str, tuple[Side, Side]] = {
    "initialize": (
        Path("ServerConnection.on_request", "built-in: opens a legacy session"),
        Path("Client.__aenter__", "mode='legacy', a revision, or 'auto' falling back"),
    ),
    "notifications/initialized": (
        Path("ServerConnection.on_notification", "built-in: the session joins the hub"),
        Path("Client.__aenter__", "sent after the initialize result"),
    ),
    "ping": (
        Path(
            "ServerConnection.on_request",
            "built-in answer; the server sends none (a dead client is a closed transport)",
        ),
        Path("Client.ping", "and a server's ping is answered (Client._on_request)"),
    ),
    "logging/setLevel": (
        Path("ServerConnection.on_request", "built-in: the session's level for ctx.log"),
        Path("Client.set_log_level"),
    ),
    "notifications/message": (Path("Context.log"), Path("Client(on_log=)")),
    "notifications/progress": (
        Path("Context.progress"),
        Path("Client.call_tool", "progress= callback (any request: Client.request)"),
    ),
    "notifications/cancelled": (
        Path(
            "ServerConnection.on_notification",
            "cancels the handler; sent to end a listen stream",
        ),
        Path("Client.request", "sent on a timeout or cancellation; a server's one is honoured"),
    ),
    "completion/complete": (Path("Server.completer"), Path("Client.complete")),
    "tools/list": (Path("Server.tool"), Path("Client.list_tools")),
    "tools/call": (Path("Server.tool"), Path("Client.call_tool")),
    "notifications/tools/list_changed": (
        Path("Server.notify_tools_changed"),
        Path("Client.listen", "tools=True"),
    ),
    "resources/list": (Path("Server.resource"), Path("Client.list_resources")),
    "resources/templates/list": (
        Path("Server.resource_template"),
        Path("Client.list_resource_templates"),
    ),
    "resources/read": (Path("Server.resource"), Path("Client.read_resource")),
    "resources/subscribe": (
        Path("ServerConnection.on_request", "built-in: the session's subscriptions"),
        Path("Client.listen", "resource_uris=, on a legacy session"),
    ),
    "resources/unsubscribe": (
        Path("ServerConnection.on_request", "built-in"),
        Path("Client.listen", "when its block ends, on a legacy session"),
    ),
    "notifications/resources/list_changed": (
        Path("Server.notify_resources_changed"),
        Path("Client.listen", "resources=True"),
    ),
    "notifications/resources/updated": (
        Path("Server.notify_resource_updated"),
        Path("Client.listen", "resource_uris="),
    ),
    "prompts/list": (Path("Server.prompt"), Path("Client.list_prompts")),
    "prompts/get": (Path("Server.prompt"), Path("Client.get_prompt")),
    "notifications/prompts/list_changed": (
        Path("Server.notify_prompts_changed"),
        Path("Client.listen", "prompts=True"),
    ),
    "roots/list": (Path("Context.list_roots"), Path("Client(roots=)")),
    "notifications/roots/list_changed": (
        Why(
            "ignored (logged at debug level): handlers ask roots/list each time they need the"
            " roots, so the server keeps no copy to refresh"
        ),
        Why(
            "never sent: `Client(roots=)` is a fixed list or a callback asked on every"
            " roots/list, so the client has no change of its own to announce"
        ),
    ),
    "sampling/createMessage": (Path("Context.sample"), Path("Client(sampling=)")),
    "elicitation/create": (Path("Context.elicit"), Path("Client(elicitation=)")),
    "notifications/elicitation/complete": (
        Path("Context.elicitation_complete", "after a URL-mode elicitation (2025-11-25)"),
        Path("Client(on_notice=)", "handed to the notice callback"),
    ),
    "server/discover": (
        Path("ServerConnection.on_request", "built-in: capabilities, info, instructions"),
        Path("Client.discover", "and the probe of mode='auto'"),
    ),
    "subscriptions/listen": (
        Path("ServerConnection.on_request", "built-in: a stream of the notifications asked for"),
        Path("Client.listen"),
    ),
    "notifications/subscriptions/acknowledged": (
        Path("ServerConnection.on_request", "built-in: the first frame of a listen stream"),
        Path("Client.listen", "waits for it"),
    ),
    # 2025-11-25 lets either side run the other's requests as tasks; mcpio serves the client's
    # (a server's questions inside a task are ordinary requests; 2026-07-28 drops that way).
    "tasks/get": (
        Path("ServerConnection.on_request", "built-in: the task engine (mcpio.tasks._serve)"),
        Path("TaskHandle.refresh"),
    ),
    "tasks/result": (
        Path("ServerConnection.on_request", "built-in: waits for the task to end (2025-11-25)"),
        Path("TaskHandle.result"),
    ),
    "tasks/list": (
        Path("ServerConnection.on_request", "built-in: the principal's tasks (2025-11-25)"),
        Path("Client.list_tasks"),
    ),
    "tasks/cancel": (
        Path("ServerConnection.on_request", "built-in: cancels the handler at its next await"),
        Path("TaskHandle.cancel"),
    ),
    "notifications/tasks/status": (
        Path("Server.tool", "task=...: each change, to the session that created the task"),
        Path("Client(on_notice=)", "handed to the notice callback; TaskHandle.updates polls"),
    ),
}


def methods() -> dict[str, dict[str, Any]]:
    """Every revision's dispatch table: revision -> method -> its `MethodSpec`."""
    out: dict[str, dict[str, Any]] = {}
    for revision in mcp_wire.REVISIONS:
        module = importlib.import_module(f"mcp_wire.v{revision.replace('-', '_')}.dispatch")
        out[revision] = dict(module.METHODS)
    return out


def rows() -> list[tuple[str, str, str, str]]:
    """(method, the revisions that have it, the server's side, the client's side)."""
    tables = methods()
    out: list[tuple[str, str, str, str]] = []
    for method in sorted({m for table in tables.values() for m in table}):
        revisions = [r for r, table in tables.items() if method in table]
        at = [mcp_wire.REVISIONS.index(r) for r in revisions]
        if len(revisions) == 1 or at != list(range(at[0], at[-1] + 1)):
            span = ", ".join(revisions)
        else:
            span = f"{revisions[0]} .. {revisions[-1]}"
        sides = COVERAGE.get(method)
        cells = ["MISSING", "MISSING"] if sides is None else [_cell(side) for side in sides]
        out.append((method, span, cells[0], cells[1]))
    return out


def _cell(side: Side) -> str:
    if isinstance(side, Why):
        return f"no path: {side.reason}"
    return side.ref + (f" ({side.how})" if side.how else "")


def render() -> str:
    lines = ["| method | revisions | server | client |", "|---|---|---|---|"]
    lines += [f"| `{m}` | {span} | {server} | {client} |" for m, span, server, client in rows()]
    return "\n".join(lines)
