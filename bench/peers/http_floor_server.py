"""The HTTP benchmark's floor: a bare ASGI app, no MCP library, on the same server stack.

    python bench/peers/http_floor_server.py [--port N] [--http h11|httptools] [--json]

Served as every HTTP peer is (``uvicorn_peer.py``). It reads the whole POST body, then answers
200 with ``application/json``: without ``--json``, fixed bytes (the echo answer to the
benchmark's request, whatever was sent: what the server stack alone costs); with ``--json``,
``json.loads`` of the call and ``json.dumps`` of its echo answer (the stack plus the least any
JSON-RPC server must do). Either answers what mcpio answers to the benchmark's modern
``tools/call`` (the same fields).
"""

from __future__ import annotations

import json
from typing import Any

from uvicorn_peer import arguments, serve

Scope = dict[str, Any]
HEADERS = [(b"content-type", b"application/json")]


def answer(call: Any) -> dict[str, Any]:
    text = call["params"]["arguments"]["text"]
    content = [{"type": "text", "text": text}]
    meta = {"io.modelcontextprotocol/serverInfo": {"name": "bench", "version": "1.0"}}
    result = {"content": content, "resultType": "complete", "_meta": meta}
    return {"jsonrpc": "2.0", "id": call["id"], "result": result}


FIXED = json.dumps(
    answer({"id": 1, "params": {"arguments": {"text": "hello from wrk"}}}), separators=(",", ":")
).encode()


async def lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def read_body(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body


async def respond(send: Any, payload: bytes) -> None:
    headers = [*HEADERS, (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


async def fixed(scope: Scope, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    await read_body(receive)
    await respond(send, FIXED)


async def echo_json(scope: Scope, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    call = json.loads(await read_body(receive))
    await respond(send, json.dumps(answer(call), separators=(",", ":")).encode())


def main() -> None:
    args = arguments("the HTTP benchmark's bare ASGI floor", json="parse the call, encode its echo")
    serve(echo_json if args.json else fixed, args)


if __name__ == "__main__":
    main()
