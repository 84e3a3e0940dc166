"""The benchmark's echo server on FastMCP (PyPI ``fastmcp``), over stdio.

Run by the drivers as ``python bench/peers/fastmcp_server.py``. The tool gives the same answer
on the wire as ``mcpio_server.py``: one text block, no structured content
(``output_schema=None``), and it is a coroutine like ours. No start-up banner.
"""

from __future__ import annotations

from fastmcp import FastMCP

mcp = FastMCP("bench", version="1.0")


@mcp.tool(output_schema=None)
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    mcp.run("stdio", show_banner=False)
