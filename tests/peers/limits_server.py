"""A small server over HTTP for tests/http/test_http_hardening.py, run as a process of its own (its
memory read from /proc; real clients connecting to it): `limits_server.py PORT '{...}'`, the
JSON object passed to `run_http` as the app's options."""

from __future__ import annotations

import json
import sys

from mcpio import Context, Server

server = Server("limits")


@server.tool()
async def echo(text: str) -> str:
    """Echoes."""
    return text


@server.tool()
async def ask(ctx: Context) -> str:
    """Asks the user for a name (the client must have declared elicitation)."""
    answer = await ctx.elicit(
        "name?", {"type": "object", "properties": {"name": {"type": "string"}}}
    )
    return answer.action


if __name__ == "__main__":
    server.run_http("127.0.0.1", int(sys.argv[1]), **json.loads(sys.argv[2]))
