"""Operating the Streamable HTTP app (issue 35, item 5): mounted under a prefix (`root_path`),
routes of its own beside the endpoint (`Server.custom_route`), and CORS for browser clients."""

from __future__ import annotations

import json
from typing import Any

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


async def test_custom_routes_are_served_beside_the_endpoint() -> None:
    from mcpio.routes import HttpRequest, HttpResponse, Route

    server = small_server()
    seen: list[HttpRequest] = []

    @server.custom_route("/healthz", methods=["GET"])
    async def healthz(request: HttpRequest) -> str:
        seen.append(request)
        return "ok"

    @server.custom_route("/echo", methods=["POST"])
    async def echo(request: HttpRequest) -> HttpResponse:
        return HttpResponse(201, request.body, {"x-echo": request.headers.get("x-in", "")})

    async def ready(request: HttpRequest) -> dict[str, Any]:
        return {"ready": True}

    async def broken(request: HttpRequest) -> str:
        raise RuntimeError("secret detail")

    app = server.http_app(routes=[Route("/readyz", ready), Route("/broken", broken)])
    async with serve_app(app) as served, httpx.AsyncClient(base_url=served.url) as http:
        # A probe from the cluster names the pod's address: the route answers it...
        probe = {"host": "10.1.2.3:8000"}
        response = await http.get("/healthz?full=1", headers=probe)
        assert (response.status_code, response.text) == (200, "ok")
        assert response.headers["content-type"] == "text/plain; charset=utf-8"
        assert (seen[0].method, seen[0].path, seen[0].query) == ("GET", "/healthz", "full=1")
        response = await http.get("/readyz", headers=probe)
        assert response.json() == {"ready": True}
        assert response.headers["content-type"] == "application/json"
        # ...while the MCP endpoint still refuses that Host, and a foreign Origin.
        assert (await list_tools(http, "/mcp", **probe)).status_code == 421
        assert (await list_tools(http, "/mcp", origin="http://evil.example")).status_code == 403
        assert (await list_tools(http, "/mcp")).status_code == 200
        response = await http.post("/echo", content=b"hi", headers={"x-in": "v"})
        assert (response.status_code, response.content) == (201, b"hi")
        assert response.headers["x-echo"] == "v"
        response = await http.post("/healthz")
        assert response.status_code == 405 and response.headers["allow"] == "GET"
        response = await http.get("/broken")
        assert response.status_code == 500 and "secret" not in response.text
        assert (await http.get("/nothing")).status_code == 404


async def test_custom_routes_under_a_root_path() -> None:
    server = small_server()

    @server.custom_route("/healthz")
    async def healthz(request: object) -> str:
        return "ok"

    host = Starlette(routes=[Mount("/api", app=server.http_app())])
    async with serve_app(host) as served, httpx.AsyncClient(base_url=served.url) as http:
        assert (await http.get("/api/healthz")).text == "ok"


def test_a_route_may_not_take_the_endpoint_path() -> None:
    from mcpio.routes import Route

    async def handler(request: object) -> str:
        return ""

    with pytest.raises(ValueError, match="/mcp"):
        small_server().http_app(routes=[Route("/mcp", handler)])
