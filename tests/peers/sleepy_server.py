"""A stdio server for the transport tests: a tool that takes its time, one that kills the process."""

import os

import anyio

from mcpio import Server

server = Server("sleepy", "1.0")


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleeps, then answers."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def die() -> str:
    """Ends the server process at once."""
    os._exit(3)


if __name__ == "__main__":
    server.run_stdio()
