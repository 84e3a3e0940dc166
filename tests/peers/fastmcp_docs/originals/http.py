"""Exercises the features of FastMCP's HTTP deployment page (docs/deployment/http.mdx) under
FastMCP: a tool, and custom routes answering JSON and plain text."""

from fastmcp import FastMCP
from starlette.responses import JSONResponse, PlainTextResponse

mcp = FastMCP("Edge node")


@mcp.tool
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@mcp.custom_route("/status", methods=["GET"])
async def status(request):
    return JSONResponse({"state": "up", "node": "edge-1"})


@mcp.custom_route("/alive", methods=["GET"])
async def alive(request):
    return PlainTextResponse("yes")
