"""A queued task takes the request pipeline on the worker that runs it: the worker's middlewares
see its `tools/call` (name, arguments, the task's context) and may change or refuse it, as they
do for a call answered at once (a redis-server of tests/support/cluster.py: `services`)."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest

from mcpio import Client, Context, Server, ToolError
from mcpio.cli import Worker
from mcpio.middleware import Call, CallNext, Middleware
from mcpio.tasks import RedisTaskQueue, RedisTaskStore, TaskEngine, TaskHandle
from tests.support import MODERN

pytestmark = [pytest.mark.anyio, pytest.mark.services]


class Recording(Middleware):
    """Records each tool call it sees; `acting`, it also doubles `n` and refuses the tool
    `forbidden`."""

    def __init__(self, acting: bool) -> None:
        self.acting = acting
        self.seen: list[tuple[str | None, dict[str, Any]]] = []

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        self.seen.append((call.name, dict(call.params.arguments or {})))
        if not self.acting:
            return await call_next(call)
        if call.name == "forbidden":
            raise ToolError("not on this worker")
        if "n" in (call.params.arguments or {}):
            call.params = call.params.model_copy(
                update={"arguments": {"n": call.params.arguments["n"] * 2}}
            )
        return await call_next(call)


def app(url: str, prefix: str, queue: RedisTaskQueue | None = None) -> tuple[Server, Recording]:
    """The app every process builds: its tools, and a recording middleware (acting on the
    worker, the server without a queue)."""
    recording = Recording(acting=queue is None)
    engine = TaskEngine(RedisTaskStore(url, prefix=prefix), queue=queue)
    server = Server("queued", "1.0", tasks=engine, middleware=[recording])

    @server.tool(task="required")
    async def square(n: int, ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        assert ctx.request_id  # the task's context reaches the tool
        return str(n * n)

    @server.tool(task="required")
    async def forbidden() -> str:  # pyright: ignore[reportUnusedFunction]
        return "ran"

    return server, recording


async def run_on_a_worker(redis_url: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
    """The tool's result, run as a queued task on a worker, and what each side's middleware
    saw of its call (the accepting front, the worker)."""
    prefix = f"test:{uuid.uuid4().hex}"
    front, at_front = app(redis_url, prefix, RedisTaskQueue(redis_url, prefix=prefix))
    back, at_worker = app(redis_url, prefix)
    async with (
        Client(front, mode=MODERN, tasks=True) as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(Worker(back, RedisTaskQueue(redis_url, prefix=prefix)).run)
        handle = await client.start_tool(tool, arguments)
        assert isinstance(handle, TaskHandle)
        with anyio.fail_after(20):
            result = await handle.result()
        group.cancel_scope.cancel()
    return result, (at_front.seen, at_worker.seen)


async def test_the_worker_s_middleware_sees_a_queued_task_s_call(redis_url: str) -> None:
    result, (front, worker) = await run_on_a_worker(redis_url, "square", {"n": 3})
    assert worker == [("square", {"n": 3})]
    assert front == [("square", {"n": 3})]  # the front saw the call that queued it
    assert result.content[0].text == "36"  # the worker's middleware doubled n: (2 * 3) ** 2


async def test_the_worker_s_middleware_may_refuse_a_queued_task_s_call(redis_url: str) -> None:
    result, (_, worker) = await run_on_a_worker(redis_url, "forbidden", {})
    assert worker == [("forbidden", {})]
    assert result.isError is True
    assert result.content[0].text == "not on this worker"
