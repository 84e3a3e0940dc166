"""Sessions that each break one rule of `mcpio inspect`, as scripts both a scripted server
(`tests/peers/inspect_peer.py`) and the test playing the client follow: ("c", frame) the client
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
SERVER_CAPS = {"tools": {}, "resources": {"subscribe": True}, "logging": {}}


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


def err(id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


def modern(
    id: Any, method: str, params: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    return req(id, method, {**(params or {}), "_meta": {**ENVELOPE, **meta}})


def progress(token: Any, value: float) -> dict[str, Any]:
    return note("notifications/progress", {"progressToken": token, "progress": value})


def with_token(id: Any, token: Any) -> dict[str, Any]:
    return req(id, "tools/call", {"name": "t", "_meta": {"progressToken": token}})


def tool_with_output(name: str) -> dict[str, Any]:
    number = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    return {"name": name, "inputSchema": {"type": "object"}, "outputSchema": number}


def complete(id: Any, **result: Any) -> dict[str, Any]:
    return res(id, {"resultType": "complete", **result})


LIST_TOOLS = complete(1, tools=[tool_with_output("count")], ttlMs=0, cacheScope="private")
LOG = note("notifications/message", {"level": "info", "data": "hello"})
UPDATED = note("notifications/resources/updated", {"uri": "file:///a"})
# Members the schemas leave open, as real peers send them (tests/peer-notes: every conformant
# session of the official SDKs, FastMCP and the Inspector carries one of these).
OPEN_MODERN = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}},
}


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
    "frame.schema": [
        *HANDSHAKE,
        ("c", req(1, "tools/call", {"name": 5})),
        ("s", err(1, -32602, "Invalid params")),
    ],
    "clean-open-members": [
        (
            "c",
            req(
                0,
                "initialize",
                {
                    "protocolVersion": LEGACY,
                    "capabilities": {"extensions": {"io.example/x": {}}, "roots": {}},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            ),
        ),
        HANDSHAKE[1],
        HANDSHAKE[2],
        ("c", req(1, "tools/list")),
        ("s", res(1, {"tools": [], "bogus": True})),
        ("c", req(2, "tools/list", {"_meta": OPEN_MODERN})),
        ("s", complete(2, tools=[], ttlMs=0, cacheScope="private")),
    ],
    "method.unknown": [
        *HANDSHAKE,
        ("c", req(1, "tools/frobnicate")),
        ("s", err(1, -32601, "Method not found")),
    ],
    "method.direction": [*HANDSHAKE, ("s", note("notifications/initialized"))],
    "lifecycle.before-initialize": [("c", req(1, "tools/list")), ("s", TOOLS)],
    "request.id-reused": [
        *HANDSHAKE,
        ("c", req(1, "tools/list")),
        ("c", req(1, "tools/list")),
        ("s", TOOLS),
    ],
    "response.unknown-id": [*HANDSHAKE, ("s", res(99, {"tools": []}))],
    "response.duplicate": [*HANDSHAKE, ("c", req(1, "tools/list")), ("s", TOOLS), ("s", TOOLS)],
    "capability.server": [
        *HANDSHAKE,
        ("c", req(1, "prompts/list")),
        ("s", err(1, -32601, "Method not found")),
    ],
    "capability.server/list-changed": [*HANDSHAKE, ("s", note("notifications/tools/list_changed"))],
    "capability.client": [
        *HANDSHAKE,
        ("s", req(1, "sampling/createMessage", {"messages": [], "maxTokens": 5})),
        ("c", err(1, -32601, "Method not found")),  # the right answer: not flagged again
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
        ("s", err(2, -32602, "Invalid params")),
    ],
    "clean-retry": [
        ("c", modern(1, "tools/call", {"name": "ask"})),
        ("s", res(1, {"resultType": "input_required", "requestState": "issued"})),
        ("c", modern(2, "tools/call", {"name": "ask", "requestState": "issued"})),
        ("s", res(2, {"resultType": "complete", "content": []})),
    ],
    "request.unanswered": [*HANDSHAKE, ("c", req(1, "tools/list"))],
    "clean-cancelled": [
        *HANDSHAKE,
        ("c", req(1, "tools/list")),
        ("c", note("notifications/cancelled", {"requestId": 1})),
    ],
    # The answer was under way when the cancellation was sent: it may still arrive
    # (basic/utilities/cancellation), once.
    "clean-cancelled-crossing": [
        *HANDSHAKE,
        ("c", req(1, "tools/list")),
        ("c", note("notifications/cancelled", {"requestId": 1})),
        ("s", TOOLS),
    ],
    "response.duplicate/after-cancel": [
        *HANDSHAKE,
        ("c", req(1, "tools/list")),
        ("c", note("notifications/cancelled", {"requestId": 1})),
        ("s", TOOLS),
        ("s", TOOLS),
    ],
    # A listen stream is answered only when the server ends it: one still open when the
    # session ends is no unanswered request (as the MCP Inspector CLI leaves its listen).
    "clean-listen-open": [
        ("c", modern("listen:0", "subscriptions/listen", {"notifications": {}})),
        (
            "s",
            note(
                "notifications/subscriptions/acknowledged",
                {
                    "_meta": {"io.modelcontextprotocol/subscriptionId": "listen:0"},
                    "notifications": {},
                },
            ),
        ),
        ("c", modern(1, "tools/list")),
        ("s", res(1, COMPLETE)),
    ],
    "progress.after-response": [
        *HANDSHAKE,
        ("c", with_token(1, "t")),
        ("s", res(1, {"content": []})),
        ("s", progress("t", 1)),
    ],
    "progress.not-increasing": [
        *HANDSHAKE,
        ("c", with_token(1, "t")),
        ("s", progress("t", 2)),
        ("s", progress("t", 2)),
        ("s", res(1, {"content": []})),
    ],
    "clean-progress": [
        *HANDSHAKE,
        ("c", with_token(1, "t")),
        ("s", progress("t", 0.5)),
        ("s", progress("t", 2)),
        ("s", res(1, {"content": []})),
    ],
    "tool.output-schema": [
        ("c", modern(1, "tools/list")),
        ("s", LIST_TOOLS),
        ("c", modern(2, "tools/call", {"name": "count"})),
        ("s", complete(2, content=[], structuredContent={"n": "three"})),
    ],
    "clean-structured": [
        ("c", modern(1, "tools/list")),
        ("s", LIST_TOOLS),
        ("c", modern(2, "tools/call", {"name": "count"})),
        ("s", complete(2, content=[], structuredContent={"n": 3})),
    ],
    "logging.no-opt-in": [
        ("c", modern(1, "tools/call", {"name": "t"})),
        ("s", LOG),
        ("s", complete(1, content=[])),
    ],
    "clean-logging": [
        (
            "c",
            modern(1, "tools/call", {"name": "t"}, **{"io.modelcontextprotocol/logLevel": "info"}),
        ),
        ("s", LOG),
        ("s", complete(1, content=[])),
    ],
    "resource.not-subscribed": [*HANDSHAKE, ("s", UPDATED)],
    "clean-subscribed": [
        *HANDSHAKE,
        ("c", req(1, "resources/subscribe", {"uri": "file:///a"})),
        ("s", res(1, {})),
        ("s", UPDATED),
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


# MCP Apps (io.modelcontextprotocol/ui): an app tool, its ui:// page listed and read.
APP_PAGE = "ui://clock/app.html"
APP_MIME = "text/html;profile=mcp-app"


def app_tool(uri: str) -> dict[str, Any]:
    return {
        "name": "clock",
        "inputSchema": {"type": "object"},
        "_meta": {"ui": {"resourceUri": uri}},
    }


def listed(id: Any, key: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return complete(id, **{key: items}, ttlMs=0, cacheScope="private")


def app_page(mime: str = APP_MIME, ui: dict[str, Any] | None = None) -> dict[str, Any]:
    page = {"uri": APP_PAGE, "mimeType": mime, "text": "<p>clock</p>"}
    return {**page, "_meta": {"ui": ui}} if ui is not None else page


APP_META = {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}
SCENARIOS |= {
    "clean-apps": [
        ("c", modern(1, "tools/list")),
        ("s", listed(1, "tools", [app_tool(APP_PAGE)])),
        ("c", modern(2, "resources/list")),
        ("s", listed(2, "resources", [{"uri": APP_PAGE, "name": "clock", "mimeType": APP_MIME}])),
        ("c", modern(3, "resources/read", {"uri": APP_PAGE})),
        ("s", listed(3, "contents", [app_page(ui=APP_META)])),
    ],
    "apps.tool-meta": [
        ("c", modern(1, "tools/list")),
        ("s", listed(1, "tools", [app_tool("https://example.com/clock.html")])),
    ],
    "apps.resource-mime": [
        ("c", modern(1, "resources/read", {"uri": APP_PAGE})),
        ("s", listed(1, "contents", [app_page(mime="text/html")])),
    ],
    "apps.resource-meta": [
        ("c", modern(1, "resources/read", {"uri": APP_PAGE})),
        ("s", listed(1, "contents", [app_page(ui={"csp": {"scriptDomains": ["https://x"]}})])),
    ],
    "apps.unlisted-resource": [
        ("c", modern(1, "tools/list")),
        ("s", listed(1, "tools", [app_tool(APP_PAGE)])),
        ("c", modern(2, "resources/list")),
        (
            "s",
            listed(
                2, "resources", [{"uri": "ui://other/page.html", "name": "o", "mimeType": APP_MIME}]
            ),
        ),
    ],
}

# Skills (SEP-2640): methods no codec knows, known once the server declares the extension.
SKILLS_EXT = "io.modelcontextprotocol/skills"
SKILL_URI = "skill://pdf-tools/SKILL.md"
SKILL_ENTRY = {
    "uri": SKILL_URI,
    "frontmatter": {"name": "pdf-tools", "description": "Fill PDF forms"},
    "resources": [{"uri": SKILL_URI, "digest": "sha256:" + "0" * 64, "size": 42}],
}


def skills_handshake(settings: dict[str, Any] | None) -> list[Step]:
    """The legacy handshake, the server declaring the extension with `settings` (None: not)."""
    caps = {**SERVER_CAPS, "extensions": {SKILLS_EXT: settings}} if settings is not None else {}
    answer = {
        "protocolVersion": LEGACY,
        "capabilities": caps or SERVER_CAPS,
        "serverInfo": {"name": "s", "version": "1"},
    }
    return [HANDSHAKE[0], ("s", res(0, answer)), HANDSHAKE[2]]


def discovered(id: Any, settings: dict[str, Any] | None) -> dict[str, Any]:
    """A server/discover answer declaring the extension with `settings` (None: not)."""
    extensions = {SKILLS_EXT: settings} if settings is not None else {}
    capabilities = {**SERVER_CAPS, "extensions": extensions}
    return complete(
        id,
        supportedVersions=[MODERN],
        capabilities=capabilities,
        serverInfo={"name": "s", "version": "1"},
    )


SKILLS_CHILD = {"uri": SKILL_URI, "name": "SKILL.md", "mimeType": "text/markdown"}
SCENARIOS |= {
    "clean-skills-legacy": [
        *skills_handshake({"directoryRead": True}),
        ("c", req(1, "skills/list", {})),
        ("s", res(1, {"skills": [SKILL_ENTRY]})),
        ("c", req(2, "skills/get", {"uri": SKILL_URI})),
        ("s", res(2, {"skill": SKILL_ENTRY})),
        ("c", req(3, "resources/directory/read", {"uri": "skill://pdf-tools"})),
        ("s", res(3, {"resources": [SKILLS_CHILD], "nextCursor": "2"})),
        ("c", req(4, "skills/get", {"uri": "skill://nope/SKILL.md"})),
        ("s", err(4, -32602, "not a skill this server serves")),
    ],
    "clean-skills-modern": [
        ("c", modern(1, "server/discover")),
        ("s", discovered(1, {"directoryRead": True})),
        ("c", modern(2, "skills/list")),
        ("s", listed(2, "skills", [SKILL_ENTRY])),
        ("c", modern(3, "resources/directory/read", {"uri": "skill://pdf-tools"})),
        ("s", listed(3, "resources", [SKILLS_CHILD])),
    ],
    "skills.shape": [
        *skills_handshake({}),
        ("c", req(1, "skills/list")),
        ("s", res(1, {"skills": [{**SKILL_ENTRY, "uri": "skill://pdf-tools/README.md"}]})),
    ],
    "skills.shape/params": [
        *skills_handshake({}),
        ("c", req(1, "skills/get", {"name": "pdf-tools"})),
        ("s", err(1, -32602, "params.uri must be a non-empty string")),
    ],
    "skills.shape/modern-result": [
        ("c", modern(1, "server/discover")),
        ("s", discovered(1, {})),
        ("c", modern(2, "skills/get", {"uri": SKILL_URI})),
        ("s", complete(2, skill={**SKILL_ENTRY, "resources": [{"uri": SKILL_URI}]})),
    ],
    "capability.server/skills-legacy": [
        *skills_handshake(None),
        ("c", req(1, "skills/list", {})),
        ("s", err(1, -32601, "Method not found")),
    ],
    "capability.server/skills-modern": [
        ("c", modern(1, "server/discover")),
        ("s", discovered(1, None)),
        ("c", modern(2, "skills/get", {"uri": SKILL_URI})),
        ("s", err(2, -32601, "Method not found")),
    ],
    "capability.server/skills-directory-read": [
        *skills_handshake({}),
        ("c", req(1, "resources/directory/read", {"uri": "skill://pdf-tools"})),
        ("s", err(1, -32601, "Method not found")),
    ],
}

# Tasks: 2025-11-25's core methods; 2026-07-28's extension (io.modelcontextprotocol/tasks),
# checked with its codec once declared, an undeclared use flagged as any other.
TASKS_EXT = "io.modelcontextprotocol/tasks"
TASK_ID = "t-1"
STAMPS = {"createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:01Z"}
LEGACY_TASK = {**STAMPS, "taskId": TASK_ID, "status": "working", "ttl": 60000, "pollInterval": 500}
MODERN_TASK = {**STAMPS, "taskId": TASK_ID, "ttlMs": 60000, "pollIntervalMs": 500}
TASKS_CLIENT = {
    **ENVELOPE,
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXT: {}}},
}


def tasks_call(id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 request whose clientCapabilities declare the Tasks extension."""
    return req(id, method, {**params, "_meta": TASKS_CLIENT})


def tasks_discovered(id: Any, declared: bool) -> dict[str, Any]:
    extensions = {TASKS_EXT: {}} if declared else {}
    return complete(
        id,
        supportedVersions=[MODERN],
        capabilities={**SERVER_CAPS, "extensions": extensions},
        serverInfo={"name": "s", "version": "1"},
    )


def tasks_handshake() -> list[Step]:
    """The 2025-11-25 handshake, both sides declaring tasks (tools/call as a task)."""
    ask = {
        "protocolVersion": LEGACY,
        "capabilities": {"tasks": {}},
        "clientInfo": {"name": "c", "version": "1"},
    }
    caps = {**SERVER_CAPS, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
    answer = {
        "protocolVersion": LEGACY,
        "capabilities": caps,
        "serverInfo": {"name": "s", "version": "1"},
    }
    return [("c", req(0, "initialize", ask)), ("s", res(0, answer)), HANDSHAKE[2]]


TASK_DONE = {"content": [{"type": "text", "text": "done"}], "isError": False}
SCENARIOS |= {
    "clean-tasks-legacy": [
        *tasks_handshake(),
        ("c", req(1, "tools/call", {"name": "t", "arguments": {}, "task": {"ttl": 60000}})),
        ("s", res(1, {"task": LEGACY_TASK})),
        ("s", note("notifications/tasks/status", {**LEGACY_TASK, "status": "completed"})),
        ("c", req(2, "tasks/get", {"taskId": TASK_ID})),
        ("s", res(2, {**LEGACY_TASK, "status": "completed"})),
        ("c", req(3, "tasks/result", {"taskId": TASK_ID})),
        ("s", res(3, TASK_DONE)),
        ("c", req(4, "tasks/list", {})),
        ("s", res(4, {"tasks": [{**LEGACY_TASK, "status": "completed"}]})),
        ("c", req(5, "tasks/cancel", {"taskId": "t-2"})),
        ("s", res(5, {**LEGACY_TASK, "taskId": "t-2", "status": "cancelled"})),
    ],
    "clean-tasks-modern": [
        ("c", modern(1, "server/discover")),
        ("s", tasks_discovered(1, True)),
        ("c", tasks_call(2, "tools/call", {"name": "t", "arguments": {}})),
        ("s", res(2, {**MODERN_TASK, "resultType": "task", "status": "working"})),
        ("c", tasks_call(3, "tasks/get", {"taskId": TASK_ID})),
        ("s", complete(3, **MODERN_TASK, status="working")),
        ("c", tasks_call(4, "tasks/cancel", {"taskId": TASK_ID})),
        ("s", complete(4)),
    ],
    "capability.server/tasks-modern": [
        ("c", modern(1, "server/discover")),
        ("s", tasks_discovered(1, False)),
        ("c", tasks_call(2, "tasks/get", {"taskId": TASK_ID})),
        ("s", err(2, -32601, "Method not found")),
    ],
    "capability.client/task-result": [
        ("c", modern(1, "tools/call", {"name": "t", "arguments": {}})),
        ("s", res(1, {**MODERN_TASK, "resultType": "task", "status": "working"})),
    ],
}

EXPECTED: dict[str, tuple[str, str, str] | None] = {
    "clean-legacy": None,
    "clean-modern": None,
    "frame.json": ("frame.json", "$", "error"),
    "frame.schema": ("frame.schema", "$.params.name", "error"),
    "clean-open-members": None,
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
    "request.unanswered": ("request.unanswered", "$.id", "error"),
    "clean-cancelled": None,
    "clean-cancelled-crossing": None,
    "clean-listen-open": None,
    "response.duplicate/after-cancel": ("response.duplicate", "$.id", "error"),
    "progress.after-response": ("progress.after-response", "$.params.progressToken", "error"),
    "progress.not-increasing": ("progress.not-increasing", "$.params.progress", "error"),
    "clean-progress": None,
    "tool.output-schema": ("tool.output-schema", "$.result.structuredContent.n", "error"),
    "clean-structured": None,
    "logging.no-opt-in": ("logging.no-opt-in", "$.method", "error"),
    "clean-logging": None,
    "resource.not-subscribed": ("resource.not-subscribed", "$.params.uri", "error"),
    "clean-subscribed": None,
    "result.input-required": ("result.input-required", "$.result.resultType", "error"),
    "clean-apps": None,
    "apps.tool-meta": ("apps.tool-meta", "$.result.tools.0._meta.ui.resourceUri", "error"),
    "apps.resource-mime": ("apps.resource-mime", "$.result.contents.0.mimeType", "error"),
    "apps.resource-meta": ("apps.resource-meta", "$.result.contents.0._meta.ui", "error"),
    "apps.unlisted-resource": (
        "apps.unlisted-resource",
        "$.result.tools.0._meta.ui.resourceUri",
        "error",
    ),
    "clean-skills-legacy": None,
    "clean-skills-modern": None,
    "skills.shape": ("skills.shape", "$.result.skills.0", "error"),
    "skills.shape/params": ("skills.shape", "$.params.uri", "error"),
    "skills.shape/modern-result": ("skills.shape", "$.result.skill", "error"),
    "capability.server/skills-legacy": ("capability.server", "$.method", "error"),
    "capability.server/skills-modern": ("capability.server", "$.method", "error"),
    "capability.server/skills-directory-read": ("capability.server", "$.method", "error"),
    "clean-tasks-legacy": None,
    "clean-tasks-modern": None,
    "capability.server/tasks-modern": ("capability.server", "$.method", "error"),
    "capability.client/task-result": ("capability.client", "$.result.resultType", "error"),
}
# What else a scenario's one broken rule makes the codec say.
ALSO: dict[str, set[str]] = {"result.input-required": {"frame.schema"}}


def wire(frame: Any) -> bytes:
    """A step's frame as one line."""
    return (frame if isinstance(frame, str) else json.dumps(frame)).encode() + b"\n"
