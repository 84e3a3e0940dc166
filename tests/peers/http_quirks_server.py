"""An HTTP server of odd and failing answers for tests/transports/test_http_client.py: what our client's
transport must survive and report. Started like the other HTTP peers (it binds 127.0.0.1 on a
port the OS chooses and prints that port on its first line).

2026-07-28-shaped endpoints (a client in mode "2026-07-28" sends no handshake):

    POST /echo            a minimal server: tools/list offers tools with valid and invalid
                          `x-mcp-header` annotations; tools/call answers with the Mcp-* headers it
                          got (as JSON text); notifications get 202
    POST /text            200 text/plain
    POST /not-json        200 application/json that is not JSON
    POST /error-noid      400 with a JSON-RPC error whose id is null
    POST /error-bare      503 with a JSON-RPC error without an id member
    POST /plain-500       500 text/plain
    POST /accepted        202 to everything
    POST /huge-json       a 5000-byte JSON answer
    POST /huge-sse        an event stream whose one event has 5000 bytes of data
    POST /sse-early-end   an event stream that ends after a notification, without the response
    POST /redirect-same   307 to /echo (same origin)
    POST /redirect-away   307 to http://localhost:<port>/echo (another origin)
    POST /redirect-loop   307 to itself

A legacy (2025-11-25 shape) endpoint, one per tag: /legacy/<tag>. `initialize` opens a session
(`Mcp-Session-Id`), GET is 405 unless it resumes a stream (Last-Event-ID), DELETE ends the
session; tools/call `resume` answers on a stream that closes after a priming event and is
resumed by GET; tools/call `expire` ends the session (404 from then on). GET /log/<tag> gives
what the endpoint saw (method, session and version headers of each HTTP request).
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

PORT = 0
LOG: dict[str, list[dict[str, Any]]] = {}
SESSIONS: dict[str, str | None] = {}  # tag -> the live session id
RESUMABLE: dict[str, dict[str, Any]] = {}  # event id -> the response it resumes to

TOOLS = [
    {
        "name": "headers",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
                "deep": {
                    "type": "object",
                    "properties": {"leaf": {"type": "string", "x-mcp-header": "Leaf"}},
                },
                "plain": {"type": "string"},
            },
        },
    },
    {
        "name": "bad-number",
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"type": "number", "x-mcp-header": "X"}},
        },
    },
    {
        "name": "bad-items",
        "inputSchema": {
            "type": "object",
            "properties": {
                "xs": {"type": "array", "items": {"type": "string", "x-mcp-header": "Xs"}}
            },
        },
    },
    {
        "name": "bad-duplicate",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Same"},
                "b": {"type": "string", "x-mcp-header": "same"},
            },
        },
    },
    {
        "name": "bad-token",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "string", "x-mcp-header": "not a token"}},
        },
    },
]


def result(id: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def text_result(id: Any, text: str) -> dict[str, Any]:
    return result(id, {"content": [{"type": "text", "text": text}]})


async def echo(request: Request) -> Response:
    frame = json.loads(await request.body())
    if "id" not in frame:
        return Response(status_code=202)
    if frame["method"] == "tools/list":
        return JSONResponse(result(frame["id"], {"tools": TOOLS}))
    seen = {k.lower(): v for k, v in request.headers.items() if k.lower().startswith("mcp-")}
    return JSONResponse(text_result(frame["id"], json.dumps(seen, sort_keys=True)))


async def text(request: Request) -> Response:
    return Response("hello", media_type="text/plain")


async def not_json(request: Request) -> Response:
    return Response("hello, not json", media_type="application/json")


async def error_noid(request: Request) -> Response:
    error = {"code": -32042, "message": "custom refusal", "data": {"why": "a test"}}
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=400)


async def error_bare(request: Request) -> Response:
    error = {"code": -32099, "message": "overloaded"}
    return JSONResponse({"jsonrpc": "2.0", "error": error}, status_code=503)


async def plain_500(request: Request) -> Response:
    return Response("boom", status_code=500, media_type="text/plain")


async def accepted(request: Request) -> Response:
    return Response(status_code=202)


async def huge_json(request: Request) -> Response:
    frame = json.loads(await request.body())
    return JSONResponse(text_result(frame["id"], "x" * 5000))


async def huge_sse(request: Request) -> Response:
    frame = json.loads(await request.body())
    body = json.dumps(text_result(frame["id"], "x" * 5000))

    async def events() -> AsyncIterator[bytes]:
        yield f"event: message\ndata: {body}\n\n".encode()

    return StreamingResponse(events(), media_type="text/event-stream")


async def sse_early_end(request: Request) -> Response:
    frame = json.loads(await request.body())
    token = frame["params"].get("_meta", {}).get("progressToken", 0)
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": 1},
    }

    async def events() -> AsyncIterator[bytes]:
        yield f"data: {json.dumps(note)}\n\n".encode()

    return StreamingResponse(events(), media_type="text/event-stream")


async def redirect_same(request: Request) -> Response:
    return Response(status_code=307, headers={"Location": "/echo"})


async def redirect_away(request: Request) -> Response:
    return Response(status_code=307, headers={"Location": f"http://localhost:{PORT}/echo"})


async def redirect_loop(request: Request) -> Response:
    return Response(status_code=307, headers={"Location": "/redirect-loop"})


async def legacy(request: Request) -> Response:
    tag = request.path_params["tag"]
    session = request.headers.get("mcp-session-id")
    entry: dict[str, Any] = {
        "http": request.method,
        "session": session,
        "version": request.headers.get("mcp-protocol-version"),
    }
    LOG.setdefault(tag, []).append(entry)
    if request.method == "DELETE":
        SESSIONS[tag] = None
        return Response(status_code=200)
    if request.method == "GET":
        last = request.headers.get("last-event-id")
        if last is None or last not in RESUMABLE:
            return Response(status_code=405)
        resumed = RESUMABLE.pop(last)

        async def resumption() -> AsyncIterator[bytes]:
            yield f"id: {last}-2\ndata: {json.dumps(resumed)}\n\n".encode()

        return StreamingResponse(resumption(), media_type="text/event-stream")
    frame = json.loads(await request.body())
    entry["rpc"] = frame.get("method")
    if frame.get("method") == "initialize":
        count = sum(1 for e in LOG[tag] if e.get("rpc") == "initialize")
        SESSIONS[tag] = f"{tag}-session-{count}"
        value = {
            "protocolVersion": frame["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "quirks-legacy", "version": "0.0.1"},
        }
        headers = {"Mcp-Session-Id": SESSIONS[tag] or ""}
        return JSONResponse(result(frame["id"], value), headers=headers)
    if session is None or session != SESSIONS.get(tag):
        error = {"code": -32600, "message": "Session not found"}
        return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=404)
    if "id" not in frame or "method" not in frame:
        return Response(status_code=202)
    if frame["method"] == "tools/list":
        return JSONResponse(result(frame["id"], {"tools": []}))
    name = (frame.get("params") or {}).get("name")
    if name == "expire":
        SESSIONS[tag] = None
        error = {"code": -32600, "message": "Session not found"}
        return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=404)
    if name == "resume":
        event_id = f"{tag}-{frame['id']}"
        RESUMABLE[event_id] = text_result(frame["id"], "resumed")

        async def priming() -> AsyncIterator[bytes]:
            yield f"id: {event_id}\nretry: 50\ndata:\n\n".encode()

        return StreamingResponse(priming(), media_type="text/event-stream")
    return JSONResponse(text_result(frame["id"], f"called {name}"))


async def log(request: Request) -> Response:
    return JSONResponse(LOG.get(request.path_params["tag"], []))


app = Starlette(
    routes=[
        Route("/echo", echo, methods=["POST"]),
        Route("/text", text, methods=["POST"]),
        Route("/not-json", not_json, methods=["POST"]),
        Route("/error-noid", error_noid, methods=["POST"]),
        Route("/error-bare", error_bare, methods=["POST"]),
        Route("/plain-500", plain_500, methods=["POST"]),
        Route("/accepted", accepted, methods=["POST"]),
        Route("/huge-json", huge_json, methods=["POST"]),
        Route("/huge-sse", huge_sse, methods=["POST"]),
        Route("/sse-early-end", sse_early_end, methods=["POST"]),
        Route("/redirect-same", redirect_same, methods=["POST"]),
        Route("/redirect-away", redirect_away, methods=["POST"]),
        Route("/redirect-loop", redirect_loop, methods=["POST"]),
        Route("/legacy/{tag}", legacy, methods=["GET", "POST", "DELETE"]),
        Route("/log/{tag}", log, methods=["GET"]),
    ]
)


def main() -> None:
    global PORT
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    PORT = sock.getsockname()[1]
    print(PORT, flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    anyio.run(server.serve, [sock])


if __name__ == "__main__":
    main()
