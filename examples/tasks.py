"""A tool run as a task: its question parks it in input_required; the client follows it."""

from typing import Any

import anyio

from mcpio import Client, Context, Server
from mcpio.tasks import TaskHandle

server = Server("builds", "1.0")
DEPLOY = {"type": "object", "properties": {"deploy": {"type": "boolean"}}}


@server.tool(task="optional")
async def build(ctx: Context, ref: str) -> str:
    await ctx.progress(0, 1, f"building {ref}")  # the task's status message
    answer = await ctx.elicit("Deploy too?", DEPLOY)  # the task waits in input_required
    return "built and deployed" if (answer.content or {}).get("deploy") else "built"


async def ask_the_user(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"deploy": True}}


async def main() -> None:
    async with Client(server, tasks=True, elicitation=ask_the_user) as client:  # or a URL
        handle = await client.start_tool("build", {"ref": "main"})  # a TaskHandle or a result
        assert isinstance(handle, TaskHandle)
        print(handle.status)  # working
        result = await handle.result()  # follows it; questions go to the callbacks
        print(getattr(result.content[0], "text", None))  # built and deployed
        # later, in another process: await client.task(handle.task_id).result(), or .cancel()


anyio.run(main)

# Output:
#   working
#   built and deployed
