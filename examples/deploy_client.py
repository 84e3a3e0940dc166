"""Calls examples/deploy_server.py over stdio, answering its question, then listens for changes."""

import sys
from pathlib import Path
from typing import Any

import anyio

from mcpio import Client

SERVER = Path(__file__).with_name("deploy_server.py")


async def ask_the_user(params: Any) -> dict[str, Any]:
    """The server's elicitation: `params.message` and `params.requestedSchema`; answer with an
    ElicitResult or its dict (`action` accept / decline / cancel, and the `content`)."""
    print("server asks:", params.message)
    return {"action": "accept", "content": {"ok": True}}


async def main() -> None:
    async with Client(
        [sys.executable, str(SERVER)], elicitation=ask_the_user
    ) as client:  # or a URL
        print(client.revision)  # "2026-07-28", or the legacy revision it fell back to
        result = await client.call_tool("deploy", {"target": "staging"})
        print(getattr(result.content[0], "text", None))  # deployed
        with anyio.move_on_after(1):  # change notices, while the block runs
            async with client.listen(tools=True) as changes:
                async for notice in changes:
                    print(notice.method)  # notifications/tools/list_changed


anyio.run(main)

# Output:
#   2026-07-28
#   server asks: Deploy to staging?
#   deployed
