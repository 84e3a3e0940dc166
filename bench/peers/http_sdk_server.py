"""The HTTP benchmark's echo server on the official Python SDK (``mcp``): Streamable HTTP.

    python bench/peers/http_sdk_server.py [--port N]

Like ``http_mcpio_server.py``: binds 127.0.0.1, prints the port on its first stdout line, serves
`/mcp` with one uvicorn worker, `log_level` warning, no access log. The SDK app runs in its
fastest modes: ``json_response=True`` (a 2026-07-28 request is handled in the ASGI task and
answered with JSON, no SSE) and ``stateless_http=True`` (no session tracking). The tool gives the
same answer on the wire as ours: one text block, no structured content
(``structured_output=False``), and it is a coroutine like ours.
"""

from __future__ import annotations

import argparse
import socket

import uvicorn
from mcp.server import MCPServer

mcp = MCPServer("bench", version="1.0")


@mcp.tool(structured_output=False)
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
    # without it Nagle's algorithm holds each answer's last write for the client's delayed ACK
    # (40 ms on Linux).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(1024)
    print(sock.getsockname()[1], flush=True)
    app = mcp.streamable_http_app(json_response=True, stateless_http=True, host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", backlog=1024)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
