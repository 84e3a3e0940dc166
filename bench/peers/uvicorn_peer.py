"""What every HTTP benchmark peer shares: its command line and how uvicorn serves it.

    python bench/peers/http_<name>_server.py [--port N] [--http h11|httptools] [--stateful]
        [--capacity N] [its own options]

A peer binds 127.0.0.1 (port 0, the default, lets the OS choose), prints the port on its first
stdout line, then serves its app on that already listening socket: one uvicorn worker,
`log_level` warning, no access log, lifespan on, backlog 1024, and the server stack `--http`
names: ``h11`` with asyncio's event loop (uvicorn's pure-Python stack) or ``httptools`` with
uvloop (the fast one). ``--stateful`` asks an MCP peer for its session mode (legacy
`Mcp-Session-Id` sessions) instead of its stateless one; ``--capacity`` raises a peer's session
and stream bounds for the memory figures (open 1,000 of them).
"""

from __future__ import annotations

import argparse
import socket
from typing import Any

import uvicorn

LOOPS = {"h11": "asyncio", "httptools": "uvloop"}


def arguments(
    description: str, values: dict[str, str] | None = None, **flags: str
) -> argparse.Namespace:
    """The shared options, a peer's own on/off `flags` and its own options taking a value
    (`values`), each name -> help."""
    parser = argparse.ArgumentParser(description=description)
    for flag, help in flags.items():
        parser.add_argument(f"--{flag}", action="store_true", help=help)
    for name, help in (values or {}).items():
        parser.add_argument(f"--{name}", help=help)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--http", choices=sorted(LOOPS), default="h11")
    parser.add_argument("--stateful", action="store_true", help="legacy sessions, not stateless")
    parser.add_argument("--capacity", type=int, default=0, help="sessions and streams to admit")
    return parser.parse_args()


def serve(app: Any, args: argparse.Namespace) -> None:
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
    # without it Nagle's algorithm holds each answer's last write for the client's delayed ACK
    # (40 ms on Linux).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(1024)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        backlog=1024,
        http=args.http,
        loop=LOOPS[args.http],
    )
    uvicorn.Server(config).run(sockets=[sock])
