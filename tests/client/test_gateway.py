"""The gateway recipe (docs/recipes/gateway.md) run for real (issue 36): two gateway instances
behind nginx, each one `Server` with OAuth (a JWT verifier for the test issuer's tokens) in front
of two stdio servers and one remote HTTP server (its own key sent as a header), mounted under
namespaces. A legacy session lives in the instance that opened it, so nginx routes by the
client's address (`hash $remote_addr consistent`, as the recipe says; 2026-07-28 rounds through a
proxy need it too). Our client gets in with client credentials, in both eras, through nginx, from
two loopback addresses that nginx sends to different instances; a request without a token gets
401."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from mcpio import Client, OAuth, Server
from tests.support import cluster, free_port, serve_app, text_of
from tests.support.oauth_issuer import Issuer

pytestmark = [pytest.mark.anyio, pytest.mark.services, pytest.mark.slow]

GATEWAY = """
import sys

import uvicorn

from mcpio import JwtVerifier, ResourceServerAuth, Server
from mcpio.client._proxy import proxy_server
from mcpio._core.sealing import Sealer

port, issuer, resource, remote, key, files, tools = sys.argv[1:]
gateway = Server("gateway")
gateway.mount(proxy_server([sys.executable, files]), namespace="files")
gateway.mount(proxy_server({"command": sys.executable, "args": [tools]}), namespace="tools")
gateway.mount(proxy_server({"url": remote, "headers": {"X-Api-Key": key}}), namespace="remote")
gateway.sealer = Sealer(bytes.fromhex(__import__("os").environ["MCPIO_STATE_KEY"]))
auth = ResourceServerAuth(
    verifier=JwtVerifier(issuer=issuer, audience=resource),
    resource=resource,
    authorization_servers=[issuer],
)
app = gateway.http_app(auth=auth)
uvicorn.run(app, host="127.0.0.1", port=int(port), access_log=True)
"""

FILES = """
from mcpio import Server

server = Server("files")


@server.tool()
def read(name: str) -> str:
    return "contents of " + name


server.run_stdio()
"""

TOOLS = """
from mcpio import Server

server = Server("tools")


@server.tool()
def echo(text: str) -> str:
    return text


server.run_stdio()
"""

NGINX = """
    upstream gateways {{
        hash $remote_addr consistent;
        server 127.0.0.1:{first};
        server 127.0.0.1:{second};
    }}
    server {{
        listen 127.0.0.1:{port};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_buffering off;
        add_header X-Upstream $upstream_addr always;
        location / {{ proxy_pass http://gateways; }}
    }}
}}
"""


def remote_server(key: str) -> object:
    server = Server("remote")

    @server.tool()
    def where() -> str:
        return "remote"

    app = server.http_app()

    async def guarded(scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
        if scope["type"] == "http" and (b"x-api-key", key.encode()) not in scope["headers"]:
            await send({"type": "http.response.start", "status": 401, "headers": []})  # type: ignore[operator]
            await send({"type": "http.response.body", "body": b""})  # type: ignore[operator]
            return
        await app(scope, receive, send)

    return guarded


async def one_address_per_instance(url: str) -> list[str]:
    """Two loopback addresses nginx sends to different gateway instances."""
    found: dict[str, str] = {}
    for n in range(1, 40):
        address = f"127.0.0.{n}"
        transport = httpx.AsyncHTTPTransport(local_address=address)
        async with httpx.AsyncClient(transport=transport) as http:
            answered = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert answered.status_code == 401  # no token
        found.setdefault(answered.headers["x-upstream"], address)
        if len(found) == 2:
            return list(found.values())
    raise AssertionError(f"every address went to one instance: {found}")


def start_gateways(
    tmp: Path, ports: list[int], argv: list[str], processes: list[cluster.Process]
) -> None:
    env = dict(os.environ, MCPIO_STATE_KEY=secrets.token_hex(32))
    script = tmp / "gateway.py"
    script.write_text(GATEWAY)
    for n, port in enumerate(ports):
        log = tmp / f"gateway-{n}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                [sys.executable, str(script), str(port), *argv], env=env,
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        processes.append(cluster.Process(f"gateway-{n}", popen, log, port))
    exited = cluster.wait_listening(processes[-len(ports) :])
    assert not exited, [p.tail() for p in exited]


async def test_the_gateway_recipe_behind_nginx(tmp_path: Path) -> None:
    processes: list[cluster.Process] = []
    key = secrets.token_hex(8)
    (tmp_path / "files.py").write_text(FILES)
    (tmp_path / "tools.py").write_text(TOOLS)
    ports = [free_port(), free_port()]
    conf = cluster.NGINX_HEAD + NGINX
    try:
        async with serve_app(remote_server(key)) as remote:
            nginx = cluster.start_nginx(
                tmp_path,
                lambda port: conf.format(tmp=tmp_path, first=ports[0], second=ports[1], port=port),
                processes,
            )
            url = f"http://127.0.0.1:{nginx.port}/mcp"
            issuer_port = free_port()
            issuer = Issuer(issuer_port, [url])
            async with serve_app(issuer.app(), issuer_port):
                remote_url = f"http://127.0.0.1:{remote.port}/mcp"
                argv = [issuer.url, url, remote_url, key]
                argv += [str(tmp_path / "files.py"), str(tmp_path / "tools.py")]
                start_gateways(tmp_path, ports, argv, processes)
                with anyio.fail_after(120):
                    await calls_through(url)
        for process in processes[-2:]:  # both instances answered
            assert process.tail(1000).count('"POST /mcp HTTP/1.1" 200') > 0, process.name
    finally:
        for process in processes:
            process.stop()


async def calls_through(url: str) -> None:
    for address in await one_address_per_instance(url):
        for mode in ("2025-11-25", "2026-07-28"):
            await calls_from(url, address, mode)


async def calls_from(url: str, address: str, mode: str) -> None:
    machine = OAuth(grant="client_credentials", client_id="machine", client_secret="s3cret")
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        async with Client(url, mode=mode, auth=machine, timeout=30, http=http) as client:
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            assert tools == ["files_read", "remote_where", "tools_echo"]
            read = await client.call_tool("files_read", {"name": address})
            assert text_of(read) == f"contents of {address}"
            assert text_of(await client.call_tool("tools_echo", {"text": mode})) == mode
            assert text_of(await client.call_tool("remote_where", {})) == "remote"
