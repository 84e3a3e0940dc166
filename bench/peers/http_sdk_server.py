"""The HTTP benchmark's echo server on the official Python SDK (``mcp``): Streamable HTTP.

    python bench/peers/http_sdk_server.py [--port N] [--http h11|httptools] [--stateful]

Served as every HTTP peer is (``uvicorn_peer.py``). The SDK app runs in its fastest modes:
``json_response=True`` (a request is handled in the ASGI task and answered with JSON, no SSE)
and, unless ``--stateful``, ``stateless_http=True`` (no session tracking). The tool gives the
same answer on the wire as ours: one text block, no structured content
(``structured_output=False``), and it is a coroutine like ours.
"""

from __future__ import annotations

from mcp.server import MCPServer
from uvicorn_peer import arguments, serve

mcp = MCPServer("bench", version="1.0")


@mcp.tool(structured_output=False)
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def main() -> None:
    args = arguments("the HTTP benchmark's SDK server")
    app = mcp.streamable_http_app(
        json_response=True, stateless_http=not args.stateful, host="127.0.0.1"
    )
    serve(app, args)


if __name__ == "__main__":
    main()
