"""The HTTP page, section by section: each `--8<--` section is one snippet of
docs/servers/http.md. `python examples/serving_http.py --serve` serves it on 127.0.0.1:8000; without
`--serve`, main() serves the app under uvicorn on a free port and calls it over HTTP."""

import socket
import sys
from typing import Any

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount

from mcpio import Client, Server
from mcpio.server import HttpRequest

# --8<-- [start:first]
server = Server("demo")


@server.tool
def add(a: int, b: int) -> int:
    return a + b


if "--serve" in sys.argv:
    server.run_http()  # http://127.0.0.1:8000/mcp; run_stdio() for stdio
# --8<-- [end:first]


# --8<-- [start:routes]
@server.custom_route("/healthz")
async def healthz(request: HttpRequest) -> dict[str, Any]:  # a dict or list: JSON
    return {"status": "ok"}


@server.custom_route("/ping", check_host=False)  # a probe naming the pod's address as its Host
async def ping(request: HttpRequest) -> PlainTextResponse:  # a Starlette response works too
    return PlainTextResponse("pong")


# --8<-- [end:routes]

# --8<-- [start:app]
app = server.http_app(cors_origins=["https://app.example"])  # a plain ASGI app
site = Starlette(routes=[Mount("/api", app=app)])  # its endpoint: /api/mcp
# --8<-- [end:app]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def main() -> None:
    port = free_port()
    host = uvicorn.Server(uvicorn.Config(site, "127.0.0.1", port, log_level="warning"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(host.serve)
        while not host.started:
            await anyio.sleep(0.05)
        async with Client(f"http://127.0.0.1:{port}/api/mcp") as client:
            print(await client.call_tool("add", {"a": 2, "b": 3}, result_type=int))
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}/api") as http:
            print((await http.get("/healthz")).json(), (await http.get("/ping")).text)
            other = await http.get("/healthz", headers={"host": "evil.example"})
            print(other.status_code)  # a Host the app does not serve
        host.should_exit = True


anyio.run(main)

# Output:
#   5
#   {'status': 'ok'} pong
#   421
