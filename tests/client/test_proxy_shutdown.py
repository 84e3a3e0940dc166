"""`mcpio proxy --transport http` exits soon after SIGTERM, even while a 2026-07-28 client's call
waits in it for a round the client never sends (its legacy target's question unanswered): before,
it waited for that call for good (issue 36)."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import anyio
import pytest

from mcpio import Client
from tests.support import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ASKING = """
from mcpio import Context, Server

server = Server("asking")


@server.tool()
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Name?", {"type": "object", "properties": {}})
    return answer.action


server.run_stdio()
"""


async def test_sigterm_with_a_call_waiting_for_its_next_round(tmp_path: Any) -> None:
    script = tmp_path / "asking.py"
    script.write_text(ASKING)
    port = free_port()
    command = [sys.executable, "-m", "mcpio", "proxy", "--transport", "http", "--port", str(port), "--mode", "2025-11-25", "--", sys.executable, str(script)]  # fmt: skip
    process = await anyio.open_process(command, stderr=subprocess.PIPE)
    asked = anyio.Event()

    async def never(params: Any) -> Any:  # the round's answer never comes back
        asked.set()
        await anyio.sleep_forever()

    try:
        assert process.stderr is not None
        with anyio.fail_after(60):
            await process.stderr.receive()  # the line saying where it serves
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(url, mode="2026-07-28", elicitation=never) as client:
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "ask", {})
                    await asked.wait()
                    group.cancel_scope.cancel()
        process.terminate()
        started = time.monotonic()
        with anyio.fail_after(20):
            await process.wait()
        assert time.monotonic() - started < 8
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
