"""A client that takes tasks, against examples/everything_server.py: a call answered with a task,
followed to its result, and one cancelled."""

import sys
from pathlib import Path

from mcpio import Client
from mcpio.tasks import TaskHandle

SERVER = Path(__file__).with_name("everything_server.py")


async def main() -> None:
    async with Client([sys.executable, str(SERVER), "stdio"], tasks=True) as client:
        handle = await client.start_tool("slow_compute", {"seconds": 0.2, "label": "x"})
        assert isinstance(handle, TaskHandle)  # a plain result from a server without tasks
        print(handle.status)
        result = await handle.result()  # follows the task to its end
        print(getattr(result.content[0], "text", None))
        other = await client.start_tool("slow_compute", {"seconds": 30})
        assert isinstance(other, TaskHandle)
        again = client.task(other.task_id)  # a handle by id: in another process too
        await again.cancel()
        print((await again.refresh())["status"])


Client.run(main)

# Output:
#   working
#   computed x after 0.2 s
#   cancelled
