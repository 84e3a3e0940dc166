"""The Tasks page, section by section: a tool a client must take as a task, cancelling, a
failed task, the engine's keywords and bounds, a durable store. `queued()` only builds what a
Redis queue needs (a test has no Redis), so its snippet is compiled and type-checked, not run."""

import asyncio
import tempfile
from pathlib import Path

import anyio

from mcpio import Client, McpError, ProtocolError, Server
from mcpio.tasks import RedisTaskQueue, TaskCancelled, TaskEngine, TaskHandle, open_task_store

# --8<-- [start:engine]
server = Server(
    "reports",
    tasks=TaskEngine(ttl_ms=10 * 60_000, poll_interval_ms=200),  # kept 10 min, polled at 200 ms
)


@server.tool(task="required")  # a client that takes no tasks is refused
async def export(rows: int) -> str:
    await asyncio.sleep(0.05)
    return f"exported {rows} rows"


# --8<-- [end:engine]


# --8<-- [start:cancel]
@server.tool(task="optional")
async def reindex() -> str:
    await asyncio.sleep(30)  # tasks/cancel stops it here, at its next await
    return "reindexed"


# --8<-- [end:cancel]


# --8<-- [start:failed]
@server.tool(task="optional")
async def audit(year: int) -> str:
    if year < 2000:
        raise ProtocolError(-32602, f"no records before 2000 (asked for {year})")
    return f"audit of {year}: clean"


# --8<-- [end:failed]


async def required() -> None:
    # --8<-- [start:required]
    async with Client(server) as plain:  # tasks=False: it cannot take a task
        try:
            await plain.call_tool("export", {"rows": 10})
        except McpError as error:
            print(error.code)  # -32021, naming the extension the tool needs
    async with Client(server, tasks=True) as client:
        print(
            await client.call_tool("export", {"rows": 10}, result_type=str)
        )  # followed to its end
    # --8<-- [end:required]


async def cancelling() -> None:
    # --8<-- [start:cancelling]
    async with Client(server, tasks=True) as client:
        handle = await client.start_tool("reindex")
        assert isinstance(handle, TaskHandle)
        await handle.cancel()
        try:
            await handle.result()
        except TaskCancelled:
            print((await handle.refresh())["status"])  # cancelled
        failed = await client.start_tool("audit", {"year": 1999})
        assert isinstance(failed, TaskHandle)
        try:
            await failed.result()
        except McpError as error:  # the task ended `failed` with the handler's error
            print(failed.status, error.code, error.message)
    # --8<-- [end:cancelling]


async def bounded() -> None:
    # --8<-- [start:bounds]
    small = Server("small", tasks=TaskEngine(max_tasks_per_requestor=2))  # held until they expire

    @small.tool(task="optional")
    def ping() -> str:
        return "pong"

    async with Client(small, tasks=True) as client:
        for _ in range(3):
            try:
                print(await client.call_tool("ping", result_type=str))
            except McpError as error:  # the third: -32005, with data.retryAfterSeconds
                print(error.code, error.message.split(":")[0])
    # --8<-- [end:bounds]


async def durable(folder: Path) -> None:
    # --8<-- [start:store]
    store = open_task_store(f"sqlite:{folder / 'tasks.db'}")  # or SqliteTaskStore(path)
    durable = Server("durable", tasks=TaskEngine(store))
    durable.tool(task="optional", name="tally")(lambda: "42 items")
    async with Client(durable, tasks=True) as client:
        handle = await client.start_tool("tally")
        assert isinstance(handle, TaskHandle)
        await handle.result()
    task_id = handle.task_id  # on disk: another process with the same file reads it
    again = Server("durable", tasks=TaskEngine(open_task_store(f"sqlite:{folder / 'tasks.db'}")))
    async with Client(again, tasks=True) as client:
        task = await client.task(task_id).refresh()  # after a "restart": still there
        print(task["status"], task["result"]["content"][0]["text"])  # completed 42 items
    # --8<-- [end:store]


def queued(redis_url: str) -> Server:
    # --8<-- [start:queue]
    queue = RedisTaskQueue(redis_url, max_queued=10_000, max_queued_per_requestor=1_000)
    store = open_task_store(redis_url)  # a RedisTaskStore: shared by every instance and worker
    app = Server("render-farm", tasks=TaskEngine(store, queue=queue, max_attempts=3))

    @app.tool(task="required", retry="safe")  # run again by another worker if its worker dies
    async def render(scene: str) -> str:
        return f"rendered {scene}"

    # HTTP instances serve `app`; `mcpio worker examples/render.py:app --redis URL` runs its tasks
    # --8<-- [end:queue]
    return app


async def main() -> None:
    await required()
    await cancelling()
    await bounded()
    with tempfile.TemporaryDirectory() as folder:
        await durable(Path(folder))
    assert queued("redis://127.0.0.1:6379/0").info.name == "render-farm"


anyio.run(main)

# Output:
#   -32021
#   exported 10 rows
#   cancelled
#   failed -32602 no records before 2000 (asked for 1999)
#   pong
#   pong
#   -32005 too many tasks for this requestor (2)
#   completed 42 items
