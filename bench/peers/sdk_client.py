"""Benchmark driver for the official Python SDK's client (``mcp``): see ``driver.py``.

python bench/peers/sdk_client.py --server bench/peers/mcpio_server.py --mode legacy
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from driver import Echo, WrongAnswer, main
from mcp import Client, StdioServerParameters


@asynccontextmanager
async def connect(command: list[str], mode: str) -> AsyncIterator[tuple[str, Echo]]:
    url = command[0] if command[0].startswith("http") else None
    server = url or StdioServerParameters(command=command[0], args=command[1:])
    async with Client(server, mode=mode) as client:

        async def echo(text: str) -> str:
            result = await client.call_tool("echo", {"text": text})
            if result.is_error or len(result.content) != 1 or result.content[0].type != "text":
                raise WrongAnswer(f"echo({text!r}) answered {result!r}")
            return result.content[0].text

        yield str(client.protocol_version), echo


if __name__ == "__main__":
    sys.exit(main("sdk", connect))
