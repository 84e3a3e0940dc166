"""Benchmark driver for FastMCP's client (``fastmcp.Client``): see ``driver.py``.

python bench/peers/fastmcp_client.py --server bench/peers/mcpio_server.py --mode legacy

It calls through ``Client.call_tool_mcp``, which answers the protocol's result as it came (as
the SDK's ``call_tool`` does; ``call_tool`` would also parse structured content, which the echo
tool has none of).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from driver import Echo, WrongAnswer, main
from fastmcp import Client
from fastmcp.client.transports import StdioTransport


@asynccontextmanager
async def connect(command: list[str], mode: str) -> AsyncIterator[tuple[str, Echo]]:
    transport = StdioTransport(command[0], command[1:], keep_alive=False)
    async with Client(transport, mode=mode) as client:  # type: ignore[arg-type]

        async def echo(text: str) -> str:
            result = await client.call_tool_mcp("echo", {"text": text})
            if result.is_error or len(result.content) != 1 or result.content[0].type != "text":
                raise WrongAnswer(f"echo({text!r}) answered {result!r}")
            return result.content[0].text

        yield str(client.protocol_version), echo


if __name__ == "__main__":
    sys.exit(main("fastmcp", connect))
