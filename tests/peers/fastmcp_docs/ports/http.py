"""The mcpio port of originals/http.py (FastMCP's HTTP deployment page), written after reading
docs/servers/http.md."""

from starlette.responses import JSONResponse, PlainTextResponse

from mcpio import Server
from mcpio.server import HttpRequest

server = Server("Edge node")


@server.tool
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@server.custom_route("/status", methods=["GET"])
async def status(request: HttpRequest) -> JSONResponse:
    return JSONResponse({"state": "up", "node": "edge-1"})


@server.custom_route("/alive", methods=["GET"])
async def alive(request: HttpRequest) -> PlainTextResponse:
    return PlainTextResponse("yes")
