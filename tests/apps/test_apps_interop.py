"""MCP Apps across implementations, over Streamable HTTP on 127.0.0.1: FastMCP's client (4.1.6)
reads our app tools (their `_meta.ui`) and our `ui://` page; our client reads a FastMCP app
server's app tools and `ui://` resource as the typed models generated from the extension's
schema, in both eras."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpio import Client
from mcpio.apps import UI_EXTENSION, UI_MIME_TYPE, resource_ui, tool_ui, ui
from tests.support import serve_app
from tests.support.apps import CSP, PAGE, app_server

pytestmark = [pytest.mark.anyio, pytest.mark.peers]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_fastmcp_reads_our_app_tools_and_page(mode: str) -> None:
    from fastmcp import Client as FastMcpClient

    async with serve_app(app_server().http_app()) as served:
        with anyio.fail_after(30):
            async with FastMcpClient(served.url + "/mcp", mode=mode, timeout=30) as client:
                tools = {t.name: t for t in await client.list_tools()}
                contents = await client.read_resource("ui://clock/app.html")
                revision = client.protocol_version
    # FastMCP's client does not declare the extension: the app-only tool is not listed to it
    assert sorted(tools) == ["plain", "show_clock"], revision
    assert tools["show_clock"].meta == {"ui": {"resourceUri": "ui://clock/app.html"}}
    (page,) = contents
    assert (page.mime_type, getattr(page, "text", None)) == (UI_MIME_TYPE, PAGE)
    assert page.meta is not None and page.meta["ui"]["csp"] == CSP


def fastmcp_app_server() -> Any:
    from fastmcp import FastMCP
    from fastmcp.apps.config import AppConfig, ResourceCSP, ResourcePermissions

    server = FastMCP("fastmcp-apps")

    @server.tool(app=AppConfig(resource_uri="ui://board/view.html"))
    def show_board() -> str:
        """Show the board."""
        return "board shown"

    @server.tool(app=AppConfig(resource_uri="ui://board/view.html", visibility=["app"]))
    def move(square: str) -> str:
        """The app's move."""
        return f"moved to {square}"

    csp = ResourceCSP(connect_domains=["https://api.example.com"])
    grants = ResourcePermissions(camera={})

    @server.resource("ui://board/view.html", app=AppConfig(csp=csp, permissions=grants))
    def board_view() -> str:
        return "<p>board</p>"

    return server


@pytest.mark.parametrize("mode", ["2025-11-25", "2026-07-28"])
async def test_we_read_a_fastmcp_app_server_typed(mode: str) -> None:
    app = fastmcp_app_server().http_app(path="/mcp")
    async with serve_app(app) as served:
        with anyio.fail_after(30):
            async with Client(served.url + "/mcp", mode=mode, apps=True) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                listed = (await client.list_resources()).resources
                read = await client.read_resource("ui://board/view.html")
                called = await client.call_tool("move", {"square": "e4"})
                revision = client.revision
    assert revision == mode
    board = tool_ui(tools["show_board"])
    assert isinstance(board, ui.McpUiToolMeta) and board.resourceUri == "ui://board/view.html"
    moved = tool_ui(tools["move"])
    assert moved is not None and moved.visibility == ["app"]
    (view,) = [r for r in listed if r.uri == "ui://board/view.html"]
    assert view.mimeType == UI_MIME_TYPE
    (contents,) = read.contents
    assert (contents.mimeType, getattr(contents, "text", None)) == (UI_MIME_TYPE, "<p>board</p>")
    meta = resource_ui(contents)
    assert isinstance(meta, ui.McpUiResourceMeta)
    assert meta.csp is not None and meta.csp.connectDomains == ["https://api.example.com"]
    assert meta.permissions is not None and meta.permissions.camera is not None
    assert called.content[0].text == "moved to e4"  # type: ignore[union-attr]


async def test_fastmcp_offers_the_extension_our_client_reads() -> None:
    """In server/discover (2026-07-28); FastMCP's 2025-11-25 initialize offers no extensions."""
    app = fastmcp_app_server().http_app(path="/mcp")
    async with serve_app(app) as served, Client(served.url + "/mcp", mode="2026-07-28") as client:
        offered = (await client.request("server/discover")).capabilities.extensions
    assert UI_EXTENSION in (offered or {})
