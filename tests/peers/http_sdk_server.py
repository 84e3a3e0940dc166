"""A server written with the official Python SDK (`mcp==2.3.0`), served over Streamable HTTP: the
peer that tests/transports/test_http_client.py points our `mcpio.Client` at.

    python tests/peers/http_sdk_server.py [--cancel-log FILE]

It binds 127.0.0.1 on a port the OS chooses, prints that port on its first stdout line, then
serves the SDK's Streamable HTTP app (legacy sessions and 2026-07-28 requests on one endpoint,
/mcp) under uvicorn on the already listening socket, so the port is never raced for.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Annotated

import anyio
import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver import (
    AcceptedElicitation,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)
from pydantic import BaseModel, Field

NAME = "mcpgen-http-sdk-peer"
VERSION = "2.3.0"
NON_ASCII_TOOL = "grüße"
NON_ASCII_PROMPT = "überblick"
CANCEL_LOG: Path | None = None

mcp = MCPServer(NAME, version=VERSION, instructions="An HTTP interop peer for mcpgen's tests.")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


class Name(BaseModel):
    name: str


async def ask_name() -> Elicit[Name]:
    """Live elicitation/create on a legacy session, an input_required round on 2026-07-28."""
    return Elicit("What is your name?", Name)


@mcp.tool()
async def greet(who: Annotated[ElicitationResult[Name], Resolve(ask_name)]) -> str:
    """Greet the user after eliciting their name."""
    match who:
        case AcceptedElicitation(data=Name(name=name)):
            return f"Hello, {name}!"
        case DeclinedElicitation():
            return "declined"
        case CancelledElicitation():
            return "cancelled"
    return "unexpected"


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress once per step, then finish."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"counted {steps}"


@mcp.tool()
def route(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    shard: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Shard"})] = 0,
    text: str = "",
) -> str:
    """A tool whose `region` and `shard` arguments are mirrored into Mcp-Param-* headers (the
    SDK checks them against the body on 2026-07-28 and answers -32020 on a mismatch)."""
    return f"routed {text!r} to {region}/{shard}"


@mcp.tool(name=NON_ASCII_TOOL)
def gruesse(text: str) -> str:
    """A tool with a non-ASCII name: its Mcp-Name header must travel base64-encoded."""
    return f"grüße, {text}"


@mcp.tool()
async def slow(label: str, seconds: float = 30.0) -> str:
    """Sleep; a cancellation (the client closing the request) is written to the cancel log."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        if CANCEL_LOG is not None:
            with CANCEL_LOG.open("a", encoding="utf-8") as log:
                log.write(f"cancelled {label}\n")
        raise
    return f"slept {seconds}"


@mcp.tool()
async def bump(ctx: Context) -> str:
    """Announce a tool-list change to every listener."""
    await ctx.notify_tools_changed()
    return "bumped"


@mcp.resource("peer://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A static text resource."""
    return "hello from the HTTP SDK peer"


@mcp.resource("peer://items/{item}", name="item", mime_type="text/plain")
def item(item: str) -> str:
    """A resource template (its URIs may carry non-ASCII text)."""
    return f"item {item}"


@mcp.prompt()
def intro(topic: str) -> str:
    """A prompt with one argument."""
    return f"Tell me about {topic}."


@mcp.prompt(name=NON_ASCII_PROMPT)
def overview(topic: str) -> str:
    """A prompt with a non-ASCII name."""
    return f"Überblick: {topic}"


def main() -> None:
    global CANCEL_LOG
    parser = argparse.ArgumentParser()
    parser.add_argument("--cancel-log", type=Path, default=None)
    args = parser.parse_args()
    CANCEL_LOG = args.cancel_log
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    app = mcp.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    anyio.run(server.serve, [sock])
    sys.exit(0)


if __name__ == "__main__":
    main()
