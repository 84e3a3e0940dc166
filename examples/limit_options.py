"""The Limits page, section by section: an answer too large for the server, a body too large
for the HTTP host, a client's own wait, and a proxy's connections to its target. Each `--8<--`
section is one snippet of docs/servers/limits.md."""

import asyncio
from typing import Any

import anyio
import httpx

from mcpio import Client, Context, McpError, RequestTimeout, Server
from mcpio.client import proxy_server

# --8<-- [start:answer]
server = Server("forms", max_answer_bytes=1024)  # the client's answers to questions: 1 KiB


@server.tool()
async def survey(ctx: Context) -> str:
    answer = await ctx.elicit("Any comments?", {"type": "object", "properties": {}})
    return f"thanks ({answer.action})"


async def talkative(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"comments": "x" * 5000}}  # about 5 KB


# --8<-- [end:answer]


# --8<-- [start:slow]
@server.tool()
async def slow() -> str:
    await asyncio.sleep(5)
    return "late"


# --8<-- [end:slow]


async def answer_too_large() -> None:
    # --8<-- [start:answer_call]
    async with Client(server, elicitation=talkative) as client:
        try:
            await client.call_tool("survey")
        except McpError as error:
            print(error.code, error.message.split(" exceeds ")[1])
    # --8<-- [end:answer_call]


async def body_too_large() -> None:
    # --8<-- [start:http]
    app = server.http_app(max_body_bytes=4096, body_timeout=10, max_sessions_per_client=20)
    transport = httpx.ASGITransport(app=app)  # in process; run_http takes the same keywords
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        frame = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 8000}}
        answer = await http.post("/mcp", json=frame)
        print(answer.status_code)  # 413: past max_body_bytes
    # --8<-- [end:http]


async def client_wait() -> None:
    # --8<-- [start:timeout]
    async with Client(server, timeout=30) as client:  # every request; None: no limit
        try:
            await client.call_tool("slow", timeout=0.2)  # this call
        except RequestTimeout as error:  # a TimeoutError; the request is cancelled on the server
            print(error)
    # --8<-- [end:timeout]


async def proxied() -> None:
    # --8<-- [start:proxy]
    front = proxy_server(Client(server), max_connections=8, idle_seconds=60)  # None: no bound
    async with Client(front) as client:
        print([tool.name for tool in (await client.list_tools()).tools])
    # --8<-- [end:proxy]


async def main() -> None:
    await answer_too_large()
    await body_too_large()
    await client_wait()
    await proxied()


anyio.run(main)

# Output:
#   -32602 1024 bytes
#   413
#   no response within 0.2 s
#   ['survey', 'slow']
