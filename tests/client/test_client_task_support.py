"""The client's 2025-11-25 `start_tool` learns each tool's `execution.taskSupport` from one
`tools/list`; calls started together before that listing ends wait for it (before, all but the
first took the tool for one that is never a task and called it plainly)."""

from __future__ import annotations

import anyio
import pytest

from mcpio import Client, Server
from mcpio.tasks._client import TaskHandle
from mcpio.tasks._engine import TaskEngine
from mcpio.tasks._store import MemoryTaskStore

pytestmark = pytest.mark.anyio


async def test_calls_started_together_all_ask_for_a_task() -> None:
    server = Server("together", "1.0", tasks=TaskEngine(MemoryTaskStore()))
    listings = 0

    @server.tool(task="optional")
    async def work(n: int) -> str:
        return f"done {n}"

    @server.tool()
    def plain(n: int) -> str:
        return f"plain {n}"

    async with Client(server, mode="2025-11-25", tasks=True) as client:
        tools = client._task_tools  # pyright: ignore[reportPrivateUsage]
        original = tools._request  # pyright: ignore[reportPrivateUsage]

        async def counted(method: str, params: dict) -> dict:  # type: ignore[type-arg]
            nonlocal listings
            listings += method == "tools/list"
            return await original(method, params)

        tools._request = counted  # pyright: ignore[reportPrivateUsage]
        answers: dict[int, object] = {}

        async def one(n: int) -> None:
            answers[n] = await client.start_tool("work" if n < 8 else "plain", {"n": n})

        async with anyio.create_task_group() as group:
            for n in range(10):
                group.start_soon(one, n)
    assert listings == 1
    assert all(isinstance(answers[n], TaskHandle) for n in range(8)), answers
    assert not any(isinstance(answers[n], TaskHandle) for n in (8, 9))
