"""`mcpio proxy --transport http` exits soon after SIGTERM, even while a 2026-07-28 client's call
waits in it for a round the client never sends (its legacy target's question unanswered): before,
it waited for that call for good (issue 36). SIGINT with a target's question pending stops the
target process too (issue 50)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
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


ROOTS_ASKING = Path(__file__).parents[1] / "peers" / "roots_asking_server.py"
# uvicorn's graceful shutdown (5 s), then the target's stop: 2 s for it to exit on its own after
# its stdin closes, then SIGTERM (and 2 s more before SIGKILL)
GRACE_SECONDS = 5 + 2 + 2


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("client_mode", ["2025-11-25", "2026-07-28"])
async def test_sigint_while_the_targets_question_is_pending_stops_the_target(
    client_mode: str, tmp_path: Any
) -> None:
    """Before, shutdown gave up 2 s after closing the target's stdin, before SIGTERM: a target
    that outlives its stdin (a pending request's timer) was left running, 6 of 6 times."""
    pids = tmp_path / "pids"
    port = free_port()
    command = [sys.executable, "-m", "mcpio", "proxy", "--transport", "http", "--port", str(port), "--mode", "2025-11-25", "--", sys.executable, str(ROOTS_ASKING), str(pids)]  # fmt: skip
    process = await anyio.open_process(command, stderr=subprocess.PIPE)
    asked, over = anyio.Event(), anyio.Event()

    async def never(params: Any) -> Any:  # not answered while the proxy runs
        asked.set()
        await over.wait()
        return {"action": "cancel"}

    async def call(client: Client) -> None:
        with contextlib.suppress(Exception):  # the proxy goes away under it
            await client.call_tool("ask", {})

    targets: list[int] = []
    try:
        assert process.stderr is not None
        with anyio.fail_after(60):
            await process.stderr.receive()  # the line saying where it serves
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(url, mode=client_mode, elicitation=never) as client:
                async with anyio.create_task_group() as group:
                    group.start_soon(call, client)
                    await asked.wait()
                    targets = [int(pid) for pid in pids.read_text().split()]
                    process.send_signal(signal.SIGINT)
                    started = time.monotonic()
                    await process.wait()
                    stopped = time.monotonic() - started
                    over.set()  # (the client's exit waits for its callbacks)
                    group.cancel_scope.cancel()
        assert targets and not [pid for pid in targets if _alive(pid)]
        assert stopped < GRACE_SECONDS + 1
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        for pid in targets:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
