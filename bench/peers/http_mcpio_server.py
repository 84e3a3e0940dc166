"""The HTTP benchmark's echo server on our runtime (mcpio): Streamable HTTP under uvicorn.

    python bench/peers/http_mcpio_server.py [--port N]

It binds 127.0.0.1 (port 0, the default, lets the OS choose), prints the port on its first stdout
line, then serves `/mcp` on that already listening socket: one uvicorn worker, `log_level`
warning, no access log (the same uvicorn settings as ``http_sdk_server.py``). The tool is the one
of ``mcpio_server.py``: ``echo(text: str) -> str``, one text block, no structured content.
"""

from __future__ import annotations

import argparse
import socket

import uvicorn

from mcpio import Server

server = Server("bench", "1.0")


@server.tool()
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
    config = uvicorn.Config(
        server.http_app(), log_level="warning", access_log=False, lifespan="on", backlog=1024
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
