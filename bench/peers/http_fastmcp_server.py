"""The HTTP benchmark's echo server on FastMCP (PyPI ``fastmcp``): Streamable HTTP.

    python bench/peers/http_fastmcp_server.py [--port N] [--http h11|httptools] [--stateful]

Served as every HTTP peer is (``uvicorn_peer.py``). Like the SDK peer, in its fastest modes:
``FastMCP.http_app(json_response=True)`` and, unless ``--stateful``, ``stateless_http=True``.
The tool gives the same answer on the wire as ours: one text block, no structured content
(``output_schema=None``), and it is a coroutine like ours.
"""

from __future__ import annotations

from fastmcp import FastMCP
from uvicorn_peer import arguments, serve

mcp = FastMCP("bench", version="1.0")


@mcp.tool(output_schema=None)
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def main() -> None:
    args = arguments("the HTTP benchmark's FastMCP server")
    serve(mcp.http_app(json_response=True, stateless_http=not args.stateful), args)


if __name__ == "__main__":
    main()
