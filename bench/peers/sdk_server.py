"""The benchmark's echo server on the official Python SDK (``mcp``), over stdio.

Run by the drivers as ``python bench/peers/sdk_server.py``. The tool gives the same answer on the
wire as ``mcpio_server.py``: one text block, no structured content (``structured_output=False``;
by default the SDK would also add an output schema and ``structuredContent``), and it is a
coroutine like ours.
"""

from __future__ import annotations

from mcp.server import MCPServer

mcp = MCPServer("bench", version="1.0")


@mcp.tool(structured_output=False)
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    mcp.run()
