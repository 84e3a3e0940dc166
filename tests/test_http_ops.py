"""Operating the Streamable HTTP app (issue 35, item 5): mounted under a prefix (`root_path`),
routes of its own beside the endpoint (`Server.custom_route`), and CORS for browser clients."""

from __future__ import annotations

import json

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpio import Server
from tests.support import headers_for, modern, serve_app

pytestmark = pytest.mark.anyio


def small_server() -> Server:
    server = Server("ops", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Say it back."""
        return text

    return server


async def list_tools(http: httpx.AsyncClient, path: str, **headers: str) -> httpx.Response:
    frame = modern(1, "tools/list")
    return await http.post(path, content=json.dumps(frame), headers=headers_for(frame, **headers))


async def test_a_mounted_app_serves_under_its_root_path() -> None:
    # Mounted at /api, the app serves /api/mcp: the prefix is the host's (ASGI root_path), not
    # repeated in `path`.
    host = Starlette(routes=[Mount("/api", app=small_server().http_app())])
    async with serve_app(host) as served, httpx.AsyncClient(base_url=served.url) as http:
        response = await list_tools(http, "/api/mcp")
        assert response.status_code == 200, response.text
        assert [tool["name"] for tool in response.json()["result"]["tools"]] == ["echo"]
        assert (await list_tools(http, "/mcp")).status_code == 404  # Starlette's: no route
        assert (await list_tools(http, "/api/api/mcp")).status_code == 404


async def test_uvicorn_root_path_is_honoured() -> None:
    # Behind a proxy that strips /api and tells uvicorn so (`--root-path /api`): uvicorn puts
    # the prefix back in front of the path it receives, and the app takes it off.
    async with serve_app(small_server().http_app(), root_path="/api") as served:
        async with httpx.AsyncClient(base_url=served.url) as http:
            response = await list_tools(http, "/mcp")
            assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "root, path, inside",
    [
        ("", "/mcp", "/mcp"),
        ("/api", "/api/mcp", "/mcp"),
        ("/api/", "/api/mcp", "/mcp"),
        ("/api", "/api", "/"),
        ("/api", "/apix/mcp", "/apix/mcp"),  # not under the prefix: left as it is
        ("/api", "/mcp", "/mcp"),  # a host that strips the prefix from `path` itself
    ],
)
def test_route_path(root: str, path: str, inside: str) -> None:
    from mcpio.transports.http_server import route_path

    assert route_path({"path": path, "root_path": root}) == inside
