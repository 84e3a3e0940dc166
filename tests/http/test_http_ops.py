"""Operating the Streamable HTTP app (issue 35, item 5): mounted under a prefix (`root_path`),
routes of its own beside the endpoint (`Server.custom_route`), and CORS for browser clients."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount

from mcpio import Server
from tests.support import ACCEPT, free_port, headers_for, modern, serve_app

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
    from mcpio.http._app import route_path

    assert route_path({"path": path, "root_path": root}) == inside


@dataclass
class Routes:
    """The routes server of the module: its URL, and the requests its /healthz was given."""

    url: str
    seen: list[Any]


@pytest.fixture(scope="module")
async def routes() -> AsyncIterator[Routes]:
    """One server with routes of its own beside the endpoint, shared by the module's route tests
    (its routes keep no state but what /healthz records in `seen`)."""
    from mcpio._core.routes import HttpRequest, HttpResponse, Route

    server = small_server()
    seen: list[HttpRequest] = []

    @server.custom_route("/healthz", methods=["GET"], check_host=False)  # a probe: any Host
    async def healthz(request: HttpRequest) -> str:
        seen.append(request)
        return "ok"

    @server.custom_route("/echo", methods=["POST"])
    async def echo(request: HttpRequest) -> HttpResponse:
        return HttpResponse(201, request.body, {"x-echo": request.headers.get("x-in", "")})

    async def ready(request: HttpRequest) -> dict[str, Any]:
        return {"ready": True}

    @server.custom_route("/health")  # FastMCP's own example: a Starlette response
    async def health(request: HttpRequest) -> PlainTextResponse:
        return PlainTextResponse("OK", headers={"x-kind": "starlette"})

    async def broken(request: HttpRequest) -> str:
        raise RuntimeError("secret detail")

    app = server.http_app(
        routes=[Route("/readyz", ready, check_host=False), Route("/broken", broken)]
    )
    async with serve_app(app) as served:
        yield Routes(served.url, seen)


# A probe from the cluster names the pod's address.
PROBE = {"host": "10.1.2.3:8000"}


async def test_a_route_that_opted_out_of_the_host_check_answers_a_probe(routes: Routes) -> None:
    routes.seen.clear()
    async with httpx.AsyncClient(base_url=routes.url) as http:
        response = await http.get("/healthz?full=1", headers=PROBE)
    assert (response.status_code, response.text) == (200, "ok")
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    seen = routes.seen
    assert (seen[0].method, seen[0].path, seen[0].query) == ("GET", "/healthz", "full=1")


async def test_a_route_answering_a_dict_answers_json(routes: Routes) -> None:
    async with httpx.AsyncClient(base_url=routes.url) as http:
        response = await http.get("/readyz", headers=PROBE)
    assert response.json() == {"ready": True}
    assert response.headers["content-type"] == "application/json"


async def test_a_route_answering_a_starlette_response_is_answered_by_it(routes: Routes) -> None:
    async with httpx.AsyncClient(base_url=routes.url) as http:
        response = await http.get("/health")
    assert (response.status_code, response.text) == (200, "OK")
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["x-kind"] == "starlette"


async def test_the_endpoint_beside_the_routes_keeps_its_host_and_origin_checks(
    routes: Routes,
) -> None:
    async with httpx.AsyncClient(base_url=routes.url) as http:
        assert (await list_tools(http, "/mcp", **PROBE)).status_code == 421
        assert (await list_tools(http, "/mcp", origin="http://evil.example")).status_code == 403
        assert (await list_tools(http, "/mcp")).status_code == 200


async def test_a_route_answers_with_its_status_body_and_headers(routes: Routes) -> None:
    async with httpx.AsyncClient(base_url=routes.url) as http:
        response = await http.post("/echo", content=b"hi", headers={"x-in": "v"})
    assert (response.status_code, response.content) == (201, b"hi")
    assert response.headers["x-echo"] == "v"


async def test_a_route_refuses_a_method_it_does_not_serve_with_405(routes: Routes) -> None:
    async with httpx.AsyncClient(base_url=routes.url) as http:
        response = await http.post("/healthz")
    assert response.status_code == 405 and response.headers["allow"] == "GET"


async def test_a_failing_route_answers_500_without_the_detail(routes: Routes) -> None:
    async with httpx.AsyncClient(base_url=routes.url) as http:
        response = await http.get("/broken")
    assert response.status_code == 500 and "secret" not in response.text


async def test_a_path_neither_route_nor_endpoint_is_404(routes: Routes) -> None:
    async with httpx.AsyncClient(base_url=routes.url) as http:
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
    from mcpio._core.routes import Route

    async def handler(request: object) -> str:
        return ""

    with pytest.raises(ValueError, match="/mcp"):
        small_server().http_app(routes=[Route("/mcp", handler)])


PAGE = "http://127.0.0.1:5173"  # a browser client's origin: another port, so another origin


@pytest.fixture(scope="module")
async def cors() -> AsyncIterator[str]:
    """The URL of one app that allows two origins, shared by the module's CORS tests."""
    app = small_server().http_app(cors_origins=[PAGE, "https://app.example"])
    async with serve_app(app) as served:
        yield served.url


ASKED = "content-type, mcp-protocol-version, mcp-method, mcp-session-id, mcp-param-x"
PREFLIGHT = {
    "origin": PAGE,
    "access-control-request-method": "POST",
    "access-control-request-headers": ASKED,
}


async def test_a_preflight_from_a_listed_origin_is_allowed(cors: str) -> None:
    async with httpx.AsyncClient(base_url=cors) as http:
        response = await http.options("/mcp", headers=PREFLIGHT)
    assert response.status_code == 204, response.text
    assert response.headers["access-control-allow-origin"] == PAGE
    assert response.headers.get_list("access-control-allow-origin") == [PAGE]
    assert "POST" in response.headers["access-control-allow-methods"]
    assert response.headers["access-control-allow-headers"] == ASKED
    assert response.headers["vary"] == "Origin"


async def test_a_preflight_asking_for_a_header_mcp_does_not_use_is_refused(cors: str) -> None:
    odd = {**PREFLIGHT, "access-control-request-headers": "x-other"}
    async with httpx.AsyncClient(base_url=cors) as http:
        assert (await http.options("/mcp", headers=odd)).status_code == 403


async def test_an_answer_to_a_listed_origin_exposes_the_mcp_headers(cors: str) -> None:
    # Answered to that origin, the MCP headers exposed; a legacy session's id readable by the
    # page.
    frame = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "page", "version": "1"},
        },
    }
    async with httpx.AsyncClient(base_url=cors) as http:
        response = await http.post(
            "/mcp",
            content=json.dumps(frame),
            headers={"content-type": "application/json", "accept": ACCEPT, "origin": PAGE},
        )
    assert response.status_code == 200 and "mcp-session-id" in response.headers
    assert response.headers["access-control-allow-origin"] == PAGE
    exposed = response.headers["access-control-expose-headers"].lower()
    assert {"mcp-session-id", "mcp-protocol-version", "www-authenticate"} <= {
        name.strip() for name in exposed.split(",")
    }


async def test_a_listed_origin_passes_the_origin_check_though_its_host_is_not_ours(
    cors: str,
) -> None:
    async with httpx.AsyncClient(base_url=cors) as http:
        response = await list_tools(http, "/mcp", origin="https://app.example")
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "https://app.example"


async def test_an_error_answer_to_a_listed_origin_carries_the_cors_headers(cors: str) -> None:
    # The page reads the status, not an opaque failure.
    async with httpx.AsyncClient(base_url=cors) as http:
        response = await list_tools(http, "/mcp", host="evil.example", origin=PAGE)
    assert response.status_code == 421
    assert response.headers["access-control-allow-origin"] == PAGE


async def test_an_unlisted_loopback_origin_is_answered_without_cors_headers(cors: str) -> None:
    # Its host is loopback: the Origin check passes.
    async with httpx.AsyncClient(base_url=cors) as http:
        response = await list_tools(http, "/mcp", origin="http://localhost:9999")
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers


async def test_a_preflight_from_an_unlisted_origin_is_not_answered(cors: str) -> None:
    unlisted = {**PREFLIGHT, "origin": "http://localhost:1"}
    async with httpx.AsyncClient(base_url=cors) as http:
        assert (await http.options("/mcp", headers=unlisted)).status_code == 405


async def test_an_unlisted_foreign_origin_is_refused(cors: str) -> None:
    async with httpx.AsyncClient(base_url=cors) as http:
        response = await list_tools(http, "/mcp", origin="https://other.example")
    assert response.status_code == 403


async def test_without_cors_origins_no_preflight_is_answered() -> None:
    async with serve_app(small_server().http_app()) as served:
        async with httpx.AsyncClient(base_url=served.url) as http:
            headers = {"origin": PAGE, "access-control-request-method": "POST"}
            response = await http.options("/mcp", headers=headers)
            assert response.status_code == 405
            assert "access-control-allow-origin" not in response.headers


# ---------------------------------------------------------------------- from a real browser

BROWSER_PAGE = """<!doctype html>
<html><head><style>
body { margin: 0; height: 100vh; overflow: hidden; font: 24px sans-serif; }
body.ok { background: rgb(0, 160, 0); }
body.failed { background: rgb(200, 0, 0); }
</style></head>
<body><ul id="tools"></ul><script>
const MCP = "ENDPOINT";
const base = {"content-type": "application/json", "accept": "application/json, text/event-stream"};
async function post(headers, frame) {
  const response = await fetch(MCP, {method: "POST", headers, body: JSON.stringify(frame)});
  if (!response.ok && response.status !== 202) throw new Error("HTTP " + response.status);
  return response;
}
async function main() {
  const init = await post(base, {jsonrpc: "2.0", id: 0, method: "initialize", params: {
    protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "page", version: "1"}}});
  const session = init.headers.get("mcp-session-id");
  if (!session) throw new Error("Mcp-Session-Id is not readable");
  const version = (await init.json()).result.protocolVersion;
  const headers = {...base, "mcp-session-id": session, "mcp-protocol-version": version};
  await post(headers, {jsonrpc: "2.0", method: "notifications/initialized"});
  const listed = await (await post(headers, {jsonrpc: "2.0", id: 1, method: "tools/list"})).json();
  for (const tool of listed.result.tools) {
    const item = document.createElement("li");
    item.textContent = "tool: " + tool.name;
    document.getElementById("tools").appendChild(item);
  }
  document.body.className = "ok";
}
main().catch((error) => { document.body.className = "failed"; console.error("failed: " + error); });
</script></body></html>
"""


def page_app(html: str) -> Any:
    """An ASGI app answering every GET with `html` (the page's own origin)."""
    body = html.encode()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        head = [(b"content-type", b"text/html; charset=utf-8")]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": body})

    return app


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--window-size=400,300",
    "--virtual-time-budget=10000",  # the page's fetches end before the DOM or picture is taken
]


def chromium(url: str, profile: Path, *mode: str) -> tuple[str, list[str]]:
    """Headless Chromium (Debian's, from `make services`) on `url` with a fresh profile: its
    stdout (`--dump-dom`) and the console lines it logged."""
    found = shutil.which("chromium")
    assert found is not None, "chromium must be on PATH (scripts/ensure-services.sh)"
    done = subprocess.run(
        [found, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *mode, url],
        capture_output=True, text=True, timeout=120, check=False, cwd=profile.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def png_row(png: bytes, y: int) -> list[tuple[int, int, int]]:
    """The RGB values of row `y` of an 8-bit, non-interlaced RGB or RGBA PNG (a screenshot)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks: dict[bytes, bytes] = {}
    at = 8
    while at < len(png):
        (size,) = struct.unpack(">I", png[at : at + 4])
        kind = png[at + 4 : at + 8]
        chunks[kind] = chunks.get(kind, b"") + png[at + 8 : at + 8 + size]
        at += 12 + size
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
    channels = 4 if color == 6 else 3
    raw = zlib.decompress(chunks[b"IDAT"])
    stride = width * channels
    previous = bytearray(stride)
    for row in range(y + 1):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                nearest = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + nearest) & 0xFF
        previous = line
    assert y < height
    return [(previous[x], previous[x + 1], previous[x + 2]) for x in range(0, stride, channels)]


@pytest.mark.slow
async def test_a_page_of_another_origin_lists_tools_in_headless_chromium(tmp_path: Path) -> None:
    """The browser client CORS is for: a page served from another origin initializes a session
    (reading `Mcp-Session-Id` from the answer) and calls tools/list with fetch; the DOM and a
    screenshot show the tool list, and the console holds no error. Without `cors_origins` the
    same page fails, and says so (the check itself is checked)."""
    port = free_port()
    for cors, shown in ((True, "ok"), (False, "failed")):
        origins = [f"http://127.0.0.1:{port}"] if cors else []
        async with serve_app(small_server().http_app(cors_origins=origins)) as mcp:
            page = page_app(BROWSER_PAGE.replace("ENDPOINT", f"{mcp.url}/mcp"))
            async with serve_app(page, port) as site:
                profile = tmp_path / f"profile-{shown}"
                dom, console = await anyio.to_thread.run_sync(
                    chromium, site.url, profile, "--dump-dom"
                )
                if not cors:
                    assert '<body class="failed">' in dom, dom
                    assert any("failed: TypeError" in line for line in console), console
                    continue
                assert console == [], console
                assert '<body class="ok">' in dom, dom
                assert "<li>tool: echo</li>" in dom
                await anyio.to_thread.run_sync(
                    chromium, site.url, profile, f"--screenshot={tmp_path / 'page.png'}"
                )
                png = (tmp_path / "page.png").read_bytes()
                green = (0, 160, 0)  # the page's colour once it shows the list
                assert png_row(png, 150)[200] == png_row(png, 299)[0] == green
                line = png_row(png, 37)  # the list's first line: dark text on the green
                assert any(max(pixel) < 80 for pixel in line[40:200]), line[40:200]
