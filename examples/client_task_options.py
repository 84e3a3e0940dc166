"""The client's Tasks page, section by section: start a call as a task, follow it (its result,
its updates, a refresh), reach it by id from another connection, and cancel it."""

import asyncio

from mcpio import Client, Context, Server
from mcpio.tasks import TaskHandle

# --8<-- [start:server]
server = Server("archive")


@server.tool(task="optional")
async def pack(folder: str, ctx: Context, seconds: float = 0.3) -> str:
    await ctx.progress(1, 2, f"packing {folder}")  # the task's status message
    await asyncio.sleep(seconds)
    return f"{folder}.tar ready"


# --8<-- [end:server]


async def main() -> None:
    # --8<-- [start:first]
    async with Client(server, tasks=True) as client:
        handle = await client.start_tool("pack", {"folder": "photos"})
        assert isinstance(handle, TaskHandle)  # a plain result from a server without tasks
        result = await handle.result()  # waits for the task's end
        print(getattr(result.content[0], "text", None))  # photos.tar ready
    # --8<-- [end:first]
    # --8<-- [start:call_tool]
    async with Client(server, tasks=True) as client:
        print(await client.call_tool("pack", {"folder": "music"}, result_type=str))  # followed
    # --8<-- [end:call_tool]
    # --8<-- [start:updates]
    async with Client(server, tasks=True) as client:
        handle = await client.start_tool("pack", {"folder": "mail"})
        assert isinstance(handle, TaskHandle)
        seen = [task async for task in handle.updates()]  # each change, polled at its interval
        print(seen[0]["status"], "->", seen[-1]["status"], seen[-1]["statusMessage"])
    # --8<-- [end:updates]
    # --8<-- [start:by_id]
    async with Client(server, tasks=True) as client:
        handle = await client.start_tool("pack", {"folder": "video", "seconds": 30})
        assert isinstance(handle, TaskHandle)
        task_id = handle.task_id
    async with Client(server, tasks=True) as later:  # another connection, or another process
        again = later.task(task_id)
        print((await again.refresh())["status"])  # working
        await again.cancel()
        print((await again.refresh())["status"])  # cancelled
    # --8<-- [end:by_id]


Client.run(main)

# Output:
#   photos.tar ready
#   music.tar ready
#   working -> completed packing mail
#   working
#   cancelled
