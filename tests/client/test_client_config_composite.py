"""Composition with other clients and transports (issue 36):

1. FastMCP 4.1.6's client against a mounted composite served over HTTP: our `Server` with two
   mounted servers, one of them a proxy of a stdio server, in both eras; a question of the
   proxied server answered by FastMCP's elicitation handler.
2. `from_config` with three servers: two stdio ones and one remote over HTTP (`url`, and
   `headers` the remote server requires).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio import Server
from mcpio.client._config import from_config
from mcpio.client._proxy import proxy_server
from tests.support import serve_app, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.peers]

STDIO = """
import os
from mcpio import Context, Server

server = Server("stdio")


@server.tool()
def who() -> str:
    return os.environ.get("WHO", "nobody")


@server.tool()
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Name?", {"type": "object", "properties": {"v": {"type": "string"}}})
    return "asked " + str((answer.content or {}).get("v"))


server.run_stdio()
"""


def stdio_script(tmp_path: Path) -> str:
    script = tmp_path / "stdio_server.py"
    script.write_text(STDIO)
    return str(script)


def local_server() -> Server:
    server = Server("local")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.resource("data://note", mime_type="text/plain")
    def note() -> str:
        return "a note"

    @server.prompt()
    def greet(who: str) -> str:
        return f"Hello {who}"

    return server


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_fastmcp_client_against_a_mounted_composite(mode: str, tmp_path: Path) -> None:
    from fastmcp import Client as FastMcpClient
    from fastmcp.client.elicitation import ElicitResult

    main = Server("composite")
    main.mount(local_server(), namespace="local")
    target = [sys.executable, stdio_script(tmp_path)]
    main.mount(proxy_server(target, mode="2025-06-18"), namespace="remote")

    async def elicit(message: str, response_type: Any, params: Any, context: Any) -> Any:
        return ElicitResult(action="accept", content={"v": "Ann"})

    with anyio.fail_after(60):
        async with serve_app(main.http_app()) as served:
            url = f"http://127.0.0.1:{served.port}/mcp"
            async with FastMcpClient(
                url, mode=mode, elicitation_handler=elicit, timeout=30
            ) as client:
                names = sorted(tool.name for tool in await client.list_tools())
                assert names == ["local_add", "remote_ask", "remote_who"]
                added = await client.call_tool("local_add", {"a": 2, "b": 3})
                assert text_of(added) == "5"
                assert text_of(await client.call_tool("remote_who", {})) == "nobody"
                assert text_of(await client.call_tool("remote_ask", {})) == "asked Ann"
                read = await client.read_resource("data://local/note")
                assert read[0].text == "a note"  # type: ignore[union-attr]
                prompt = await client.get_prompt("local_greet", {"who": "Bo"})
                assert prompt.messages[0].content.text == "Hello Bo"  # type: ignore[union-attr]


def remote_server() -> Server:
    server = Server("remote")

    @server.tool()
    def where() -> str:
        return "remote"

    return server


def requiring(app: Any, header: bytes, value: bytes) -> Any:
    """`app`, answering 401 to a request without `header: value`."""

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and (header, value) not in scope["headers"]:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return guarded


async def test_from_config_with_an_http_entry_beside_stdio_ones(tmp_path: Path) -> None:
    script = stdio_script(tmp_path)
    app = requiring(remote_server().http_app(), b"x-api-key", b"k-123")
    with anyio.fail_after(90):
        async with serve_app(app) as served:
            url = f"http://127.0.0.1:{served.port}/mcp"
            servers = {
                name: {"command": sys.executable, "args": [script], "env": {"WHO": name}}
                for name in ("alpha", "beta")
            }
            servers["gamma"] = {"url": url, "headers": {"X-Api-Key": "k-123"}}
            path = tmp_path / "mcp.json"
            path.write_text(json.dumps({"mcpServers": servers}))
            async with from_config(str(path)) as client:
                tools = sorted(t.name for t in (await client.list_tools()).tools)
                assert tools == ["alpha_ask", "alpha_who", "beta_ask", "beta_who", "gamma_where"]
                assert text_of(await client.call_tool("alpha_who", {})) == "alpha"
                assert text_of(await client.call_tool("beta_who", {})) == "beta"
                assert text_of(await client.call_tool("gamma_where", {})) == "remote"
            servers["gamma"]["headers"] = {"X-Api-Key": "wrong"}  # the header is what opens it
            # a single server is connected to directly (no proxy): refused at connection
            with pytest.raises(Exception, match="401|nauthori"):
                async with from_config({"mcpServers": {"gamma": servers["gamma"]}}) as client:
                    await client.list_tools()
