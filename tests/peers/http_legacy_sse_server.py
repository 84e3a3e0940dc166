"""A 2024-11-05 HTTP+SSE server, just enough of one for tests/transports/test_http_client.py:

    GET  /sse                    an event stream: first `event: endpoint` naming
                                 /messages?session=<id>, then every answer as `event: message`
    POST /messages?session=<id>  one JSON-RPC frame; 202, the answer goes on the session's stream

It serves initialize (always 2024-11-05), ping, tools/list and tools/call of one tool, `echo`.
Anything else posted to /sse is 405, as on the servers of that time. Started like the other HTTP
peers: it binds 127.0.0.1 on a port the OS chooses and prints that port on its first line.
"""

from __future__ import annotations

import json
import math
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import uvicorn
from anyio.streams.memory import MemoryObjectSendStream
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

SESSIONS: dict[str, MemoryObjectSendStream[str]] = {}
ECHO = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def answer(frame: dict[str, Any]) -> dict[str, Any]:
    method, params = frame["method"], frame.get("params") or {}
    result: dict[str, Any]
    if method == "initialize":
        result = {
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "old-sse-server", "version": "0.0.1"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [ECHO]}
    elif method == "tools/call" and params.get("name") == "echo":
        text = (params.get("arguments") or {}).get("text", "")
        result = {"content": [{"type": "text", "text": f"old echo: {text}"}]}
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": frame["id"], "error": error}
    return {"jsonrpc": "2.0", "id": frame["id"], "result": result}


async def sse(request: Request) -> Response:
    session = uuid.uuid4().hex
    send, receive = anyio.create_memory_object_stream[str](math.inf)
    SESSIONS[session] = send

    async def events() -> AsyncIterator[bytes]:
        try:
            yield f"event: endpoint\r\ndata: /messages?session={session}\r\n\r\n".encode()
            yield b": keep-alive comment\n\n"
            async with receive:
                async for frame in receive:
                    yield f"event: message\ndata: {frame}\n\n".encode()
        finally:
            SESSIONS.pop(session, None)

    return StreamingResponse(events(), media_type="text/event-stream")


async def messages(request: Request) -> Response:
    stream = SESSIONS.get(request.query_params.get("session", ""))
    if stream is None:
        return JSONResponse({"error": "unknown session"}, status_code=404)
    try:
        frame = json.loads(await request.body())
    except ValueError:
        return JSONResponse({"error": "not JSON"}, status_code=400)
    if isinstance(frame, dict) and "method" in frame and "id" in frame:
        await stream.send(json.dumps(answer(frame)))
    return Response(status_code=202)


app = Starlette(
    routes=[Route("/sse", sse, methods=["GET"]), Route("/messages", messages, methods=["POST"])]
)


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    anyio.run(server.serve, [sock])


if __name__ == "__main__":
    main()
