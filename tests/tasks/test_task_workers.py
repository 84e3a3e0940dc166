"""Workers in one process (`mcpio.cli._worker.Worker` over a redis-server of tests/support/cluster.py:
marked `services`): a task queued by an accepting server, run by workers, one of which dies
while the task waits for an answer."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest

from mcpio import Client, Context, Server
from mcpio.cli._worker import Worker, load_server
from mcpio.tasks._client import TaskHandle
from mcpio.tasks._engine import TaskEngine
from mcpio.tasks._queue import Job, RedisTaskQueue
from mcpio.tasks._redis import RedisTaskStore
from tests.support import MODERN, ROOT, until

pytestmark = [pytest.mark.anyio, pytest.mark.services]

LEASE = 0.6
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


async def accept(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


def app(url: str, prefix: str, queue: RedisTaskQueue | None = None) -> Server:
    """The server every process of the app builds: one retry-safe tool that asks first."""
    engine = TaskEngine(RedisTaskStore(url, prefix=prefix), lease_seconds=LEASE, queue=queue)
    server = Server("workers", "1.0", tasks=engine)
    runs: list[str] = []

    @server.tool(task="optional", retry="safe")
    async def deploy(ctx: Context, ref: str) -> str:
        runs.append(ref)
        answer = await ctx.elicit(f"Deploy {ref}?", CONFIRM, key="confirm")
        return f"{ref}: {answer.action} after {len(runs)} run(s) here"

    return server


async def test_a_task_waiting_for_an_answer_resumes_on_another_worker(redis_url: str) -> None:
    prefix = f"test:{uuid.uuid4().hex}"
    front = app(redis_url, prefix, RedisTaskQueue(redis_url, prefix=prefix))
    first, second = app(redis_url, prefix), app(redis_url, prefix)
    dying = Worker(first, RedisTaskQueue(redis_url, prefix=prefix), concurrency=2)
    async with (
        Client(front, mode=MODERN, tasks=True, elicitation=accept) as client,
        anyio.create_task_group() as group,
    ):
        handle = await client.start_tool("deploy", {"ref": "v2"})
        assert isinstance(handle, TaskHandle)
        group.start_soon(dying.run)

        async def asking() -> dict[str, Any] | None:
            task = await handle.refresh()
            return task if task["status"] == "input_required" else None

        await until(asking, timeout=10)
        # The worker dies (its runs stop, no renewal, no hand-back); the client answers (the
        # handle's callback, through tasks/update); another worker reclaims the task after the
        # lease and runs it again with that answer.
        await first.tasks.aclose()
        dying.stop()
        group.start_soon(Worker(second, RedisTaskQueue(redis_url, prefix=prefix)).run)
        result = await handle.result()
        assert result.content[0].text == "v2: accept after 1 run(s) here"  # type: ignore[union-attr]
        record = await front.tasks.get(handle.task_id, None)
        assert record is not None and (record.attempts, record.max_attempts) == (2, 3)
        group.cancel_scope.cancel()


async def test_a_full_queue_refuses_and_keeps_what_it_holds(redis_url: str) -> None:
    prefix = f"test:{uuid.uuid4().hex}"
    queue = RedisTaskQueue(redis_url, prefix=prefix, max_queued=2)
    jobs = [Job(f"t{i}", None, "deploy", {"ref": str(i)}, MODERN) for i in range(3)]
    assert [await queue.put(job) for job in jobs] == ["queued", "queued", "full"]
    reader = RedisTaskQueue(redis_url, prefix=prefix)
    taken = await reader.read("w1", 10, 100)
    assert [e.job for e in taken] == jobs[:2]
    assert await reader.read("w1", 10, 10) == []  # each entry delivered once
    assert await reader.reclaim("w2", 60_000, 10) == []  # not idle long enough
    await anyio.sleep(0.05)
    await reader.touch("w1", taken[0].id)  # w1 works on it: not idle any more
    [stolen] = await reader.reclaim("w2", 40, 10)
    assert stolen.job == jobs[1]  # w1 went silent on it
    await reader.done(taken[0].id)
    await reader.requeue(stolen)  # handed back: new again, for any worker
    assert await queue.length() == 1
    [again] = await reader.read("w3", 10, 100)
    assert again.job == jobs[1]
    await queue.close()
    await reader.close()


def test_load_server_from_a_file_or_a_module() -> None:
    server = load_server(str(ROOT / "examples" / "everything_server.py"))
    retries = {name: entry.options.get("retry", "never") for name, entry in server.tools.items()}
    assert (retries["retried_compute"], retries["slow_compute"]) == ("safe", "never")
    with pytest.raises(ValueError, match="no such Python file"):
        load_server("nowhere.py")
    with pytest.raises(ValueError, match="is not an mcpio Server"):
        load_server("mcpio.cli._worker:log")
