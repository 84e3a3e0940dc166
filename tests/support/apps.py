"""An MCP Apps server and its page, shared by the apps tests."""

from __future__ import annotations

from mcpio import Server
from mcpio.apps import UiApp

PAGE = "<!doctype html><title>clock</title><p id=out></p>"


CSP = {
    "connectDomains": ["https://api.example.com"],
    "resourceDomains": ["https://cdn.example.com"],
}


def app_server() -> Server:
    server = Server("apps-test")

    @server.tool(app=UiApp(resource_uri="ui://clock/app.html"))
    def show_clock(city: str) -> str:
        """Show the clock of a city."""
        return f"12:00 in {city}"

    @server.tool(app=UiApp(resource_uri="ui://clock/app.html", visibility=["app"]))
    def tick() -> str:
        """Advance the clock (the app's button)."""
        return "tick"

    @server.tool
    def plain() -> str:
        return "plain"

    @server.app_resource(
        "ui://clock/app.html", csp=CSP, permissions={"clipboardWrite": {}}, prefers_border=True
    )
    def clock_page() -> str:
        return PAGE

    return server
