"""MCP Apps on our server and client (mcpio.apps): `@server.tool(app=UiApp(...))` and
`server.app_resource(...)`, the extension negotiated, app-only tools hidden from clients that do
not render apps, the typed `_meta.ui` on the client, on a 2025-11-25 session and a 2026-07-28
stateless call (in memory, and as raw frames over HTTP)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pydantic
import pytest

from mcpio import Client, Server
from mcpio.apps import UI_EXTENSION, UI_MIME_TYPE, UiApp, declares_apps, resource_ui, tool_ui, ui
from mcpio.inspect._checks import Checker
from tests.support import ENVELOPE, headers_for, initialize, modern, serve_app
from tests.support.apps import CSP, PAGE, app_server

MODES = ["2025-11-25", "2026-07-28"]
pytestmark = pytest.mark.anyio


@asynccontextmanager
async def apps_client(mode: str) -> AsyncIterator[Client]:
    """Our client, rendering apps, on `app_server()` in `mode`."""
    async with Client(app_server(), mode=mode, apps=True) as client:
        yield client


@pytest.fixture(scope="module", params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    """Each mode, for the tests that share one apps client per mode."""
    return request.param


@pytest.fixture(scope="module")
async def client(mode: str, anyio_backend: str) -> AsyncIterator[Client]:
    """One apps client per mode, shared by the calls that change nothing."""
    async with apps_client(mode) as client:
        yield client


async def test_an_apps_client_lists_the_app_only_tool_too(client: Client, mode: str) -> None:
    assert client.revision == mode
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == ["plain", "show_clock", "tick"]


async def test_a_tool_s_typed_ui_names_its_resource_and_visibility(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    meta = tool_ui(tools["show_clock"])
    assert isinstance(meta, ui.McpUiToolMeta)
    assert (meta.resourceUri, meta.visibility) == ("ui://clock/app.html", None)
    tick = tool_ui(tools["tick"])
    assert tick is not None and tick.visibility == ["app"]
    assert tool_ui(tools["plain"]) is None


async def test_the_app_resource_is_listed_and_read_as_the_ui_mime_type(client: Client) -> None:
    (listed,) = (await client.list_resources()).resources
    (contents,) = (await client.read_resource("ui://clock/app.html")).contents
    assert (listed.uri, listed.mimeType) == ("ui://clock/app.html", UI_MIME_TYPE)
    assert (contents.mimeType, getattr(contents, "text", None)) == (UI_MIME_TYPE, PAGE)


@pytest.mark.parametrize("where", ["listed", "read"])
async def test_the_app_resource_s_typed_ui_carries_csp_permissions_and_border(
    client: Client, where: str
) -> None:
    if where == "listed":
        (item,) = (await client.list_resources()).resources
    else:
        (item,) = (await client.read_resource("ui://clock/app.html")).contents
    found = resource_ui(item)
    assert isinstance(found, ui.McpUiResourceMeta)
    assert found.csp is not None and found.csp.connectDomains == CSP["connectDomains"]
    assert found.permissions is not None and found.permissions.clipboardWrite is not None
    assert found.prefersBorder is True


async def test_the_app_calls_its_own_tool_as_an_ordinary_tools_call(client: Client) -> None:
    # the app calls its own tool through the host: an ordinary tools/call
    called = await client.call_tool("tick", {})
    assert called.content[0].text == "tick"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_app_only_tools_are_hidden_from_clients_without_the_extension(mode: str) -> None:
    async with Client(app_server(), mode=mode) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        assert names == ["plain", "show_clock"]  # `tick` is the app's alone
        assert UI_EXTENSION in await offered(client)


async def offered(client: Client) -> dict[str, Any]:
    """The extensions the server offers: in initialize's result (2025-11-25), or in
    server/discover's (2026-07-28, where nothing else says)."""
    if client.modern:
        caps = (await client.request("server/discover")).capabilities
    else:
        caps = client.server_capabilities
    assert caps is not None
    return dict(caps.extensions or {})


async def test_a_server_without_apps_offers_no_extension() -> None:
    server = Server("plain")

    @server.tool
    def hello() -> str:
        return "hi"

    for mode in MODES:
        async with Client(server, mode=mode, apps=True) as client:
            assert UI_EXTENSION not in await offered(client)


def test_the_client_declares_the_extension_with_the_app_mime_type() -> None:
    client = Client("http://127.0.0.1:9/mcp", apps=True)
    for modern_era in (False, True):
        caps = client.capabilities(modern_era)
        assert caps["extensions"][UI_EXTENSION] == {"mimeTypes": [UI_MIME_TYPE]}
        assert declares_apps(caps)
    assert not declares_apps(Client("http://127.0.0.1:9/mcp").capabilities(True))
    assert not declares_apps({"extensions": {UI_EXTENSION: {"mimeTypes": ["text/plain"]}}})
    assert declares_apps({"extensions": {UI_EXTENSION: {}}})


def test_registration_refuses_what_the_extension_does_not_allow() -> None:
    server = Server("bad")
    with pytest.raises(ValueError, match="ui:// URI"):
        server.tool(app=UiApp(resource_uri="https://example.com/app.html"))
    with pytest.raises(ValueError, match="ui:// URI"):
        server.app_resource("https://example.com/app.html")
    with pytest.raises(pydantic.ValidationError):
        server.tool(app=UiApp(resource_uri="ui://a", visibility=["everyone"]))  # type: ignore[list-item]
    with pytest.raises(pydantic.ValidationError):
        server.app_resource("ui://a", csp={"scriptDomains": ["https://x"]})
    with pytest.raises(pydantic.ValidationError):
        server.app_resource("ui://a", permissions={"usb": {}})


def test_a_tool_meta_of_its_own_is_kept_beside_the_ui() -> None:
    server = Server("meta")

    @server.tool(meta={"com.example/x": 1}, app=UiApp(resource_uri="ui://a"))
    def shown() -> str:
        return "x"

    meta = server.tools["shown"].definition.meta
    assert meta is not None
    assert meta.model_dump() == {"com.example/x": 1, "ui": {"resourceUri": "ui://a"}}


async def test_an_async_app_page_and_contents_of_its_own() -> None:
    server = Server("async")

    @server.app_resource("ui://a/page.html")
    async def page() -> str:
        return "<p>async</p>"

    async with Client(server, mode="2026-07-28") as client:
        (contents,) = (await client.read_resource("ui://a/page.html")).contents
        assert getattr(contents, "text", None) == "<p>async</p>"
        assert resource_ui(contents) == ui.McpUiResourceMeta()


# --- raw frames over HTTP: a 2025-11-25 session and a 2026-07-28 stateless call ---------------


def _declaring(caps: dict[str, Any]) -> dict[str, Any]:
    return {**caps, "extensions": {UI_EXTENSION: {"mimeTypes": [UI_MIME_TYPE]}}}


def _body(response: httpx.Response) -> dict[str, Any]:
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return json.loads(text)


async def test_raw_http_frames_of_both_eras() -> None:
    app = app_server().http_app()
    async with serve_app(app) as served, httpx.AsyncClient(base_url=served.url) as http:
        # 2025-11-25: initialize declaring the extension, then tools/list in the session
        init = initialize()
        init["params"]["capabilities"] = _declaring(init["params"]["capabilities"])
        answer = await http.post("/mcp", json=init, headers=_legacy_headers())
        session = answer.headers["mcp-session-id"]
        offered = _body(answer)["result"]["capabilities"]
        assert UI_EXTENSION in offered.get("extensions", {})
        legacy = {
            **_legacy_headers(),
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
        }
        await http.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=legacy
        )
        listed = await http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=legacy
        )
        names = [t["name"] for t in _body(listed)["result"]["tools"]]
        assert sorted(names) == ["plain", "show_clock", "tick"]

        # 2026-07-28: one stateless call with the extension, one without
        for declares, expected in (
            (True, ["plain", "show_clock", "tick"]),
            (False, ["plain", "show_clock"]),
        ):
            frame = modern(2, "tools/list")
            caps = ENVELOPE["io.modelcontextprotocol/clientCapabilities"]
            frame["params"]["_meta"] = {
                **ENVELOPE,
                "io.modelcontextprotocol/clientCapabilities": (
                    _declaring(caps) if declares else caps
                ),
            }
            result = _body(await http.post("/mcp", json=frame, headers=headers_for(frame)))[
                "result"
            ]
            assert sorted(t["name"] for t in result["tools"]) == expected
            shown = next(t for t in result["tools"] if t["name"] == "show_clock")
            assert shown["_meta"]["ui"] == {"resourceUri": "ui://clock/app.html"}
        read = modern(3, "resources/read", uri="ui://clock/app.html")
        (contents,) = _body(await http.post("/mcp", json=read, headers=headers_for(read)))[
            "result"
        ]["contents"]
        assert contents["mimeType"] == UI_MIME_TYPE and contents["text"] == PAGE
        assert contents["_meta"]["ui"]["csp"] == CSP


def _legacy_headers() -> dict[str, str]:
    return {"content-type": "application/json", "accept": "application/json, text/event-stream"}


# --- the inspector on our own server's frames -------------------------------------------------


async def _inspected(server: Server) -> list[tuple[str, str]]:
    """The findings `mcpio inspect`'s checker has on a 2026-07-28 session of `server` that lists
    its tools and resources and reads each resource (the frames as they crossed HTTP)."""
    checker = Checker()
    found = []
    async with (
        serve_app(server.http_app()) as served,
        httpx.AsyncClient(base_url=served.url) as http,
    ):

        async def exchange(frame: dict[str, Any]) -> dict[str, Any]:
            found.extend(checker.check("client->server", json.dumps(frame).encode()))
            answer = await http.post("/mcp", json=frame, headers=headers_for(frame))
            body = _body(answer)
            found.extend(checker.check("server->client", json.dumps(body).encode()))
            return body["result"]

        await exchange(modern(1, "tools/list"))
        resources = (await exchange(modern(2, "resources/list")))["resources"]
        for at, resource in enumerate(resources, 3):
            await exchange(modern(at, "resources/read", uri=resource["uri"]))
    return [(f.rule, f.path) for f in [*found, *checker.finish()]]


async def test_the_inspector_finds_nothing_wrong_with_our_app_server() -> None:
    assert await _inspected(app_server()) == []


async def test_the_inspector_reports_a_tool_whose_app_page_is_not_listed() -> None:
    server = app_server()

    @server.tool(app=UiApp(resource_uri="ui://clock/missing.html"))
    def lost() -> str:
        return "lost"

    found = await _inspected(server)
    # (tick, app-only, is not listed to this client: `lost` is the third tool)
    assert found == [("apps.unlisted-resource", "$.result.tools.2._meta.ui.resourceUri")]


async def test_the_inspector_reports_an_app_page_served_with_another_mime_type() -> None:
    server = app_server()

    @server.resource("ui://clock/plain.html", mime_type="text/html")
    def plain_page() -> str:
        return "<p>not an app</p>"

    found = await _inspected(server)
    assert sorted(set(found)) == [
        ("apps.resource-mime", "$.result.contents.0.mimeType"),
        ("apps.resource-mime", "$.result.resources.1.mimeType"),
    ]
