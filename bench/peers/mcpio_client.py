"""Benchmark driver for our client (mcpio): see ``driver.py``.

python bench/peers/mcpio_client.py --server bench/peers/mcpio_server.py --mode legacy
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from driver import Echo, WrongAnswer, main

from mcpio import Client


@asynccontextmanager
async def connect(command: list[str], mode: str) -> AsyncIterator[tuple[str, Echo]]:
    url = command[0] if command[0].startswith("http") else None
    async with Client(url or command, mode=mode) as client:

        async def echo(text: str) -> str:
            result = await client.call_tool("echo", {"text": text})
            if result.isError or len(result.content) != 1 or result.content[0].type != "text":
                raise WrongAnswer(f"echo({text!r}) answered {result!r}")
            return result.content[0].text

        yield str(client.revision), echo


if __name__ == "__main__":
    sys.exit(main("mcpio", connect, Client.run))  # on uvloop where installed
