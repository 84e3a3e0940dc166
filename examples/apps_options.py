"""The MCP Apps page, section by section: a tool with a page, who sees an app-only tool, the
page's CSP and permissions, what a client reads of them, and what registration refuses. Each
`--8<--` section is one snippet of docs/servers/apps.md."""

import anyio

from mcpio import Client, Server
from mcpio.apps import UiApp, resource_ui, tool_ui

# --8<-- [start:first]
server = Server("timer-app")


@server.tool(app=UiApp(resource_uri="ui://timer/page.html"))
def start_timer(minutes: int) -> str:
    return f"timer set for {minutes} min"  # hosts that render apps also show the page


@server.app_resource("ui://timer/page.html", description="A countdown")
def timer_page() -> str:
    return "<!doctype html><title>Timer</title><output id='left'></output>"


# --8<-- [end:first]


# --8<-- [start:visibility]
@server.tool(app=UiApp(resource_uri="ui://timer/page.html", visibility=["app"]))
def tick() -> str:  # for the page alone: listed only to clients that render apps
    return "tick"


# --8<-- [end:visibility]


# --8<-- [start:csp]
@server.app_resource(
    "ui://timer/map.html",
    csp={"resourceDomains": ["https://tiles.example.org"], "connectDomains": []},
    permissions={"geolocation": {}},  # or mcpio.apps.ui.McpUiResourcePermissions(...)
    prefers_border=True,
)
def map_page() -> str:
    return "<!doctype html><title>Map</title>"


# --8<-- [end:csp]


def refused() -> None:
    # --8<-- [start:refused]
    try:

        @server.tool(app=UiApp(resource_uri="https://example.org/page.html"))
        def outside() -> str:
            return "never registered"

    except ValueError as error:  # at registration, not at the first call
        print(error)
    # --8<-- [end:refused]


async def main() -> None:
    # --8<-- [start:negotiation]
    async with Client(server) as plain:  # declares no apps
        print([tool.name for tool in (await plain.list_tools()).tools])
    async with Client(server, apps=True) as host:  # declares io.modelcontextprotocol/ui
        print([tool.name for tool in (await host.list_tools()).tools])
    # --8<-- [end:negotiation]
    # --8<-- [start:reading]
    async with Client(server, apps=True) as client:
        for tool in (await client.list_tools()).tools:
            meta = tool_ui(tool)  # McpUiToolMeta | None
            if meta is not None and meta.resourceUri and tool.name == "start_timer":
                (page,) = (await client.read_resource(meta.resourceUri)).contents
                print(tool.name, page.mimeType, resource_ui(page) is not None)
        (listed,) = [r for r in (await client.list_resources()).resources if "map" in r.uri]
        ui = resource_ui(listed)  # McpUiResourceMeta: csp, permissions, prefersBorder
        print(ui and ui.csp and ui.csp.resourceDomains, ui and ui.prefersBorder)
    # --8<-- [end:reading]
    refused()


anyio.run(main)

# Output:
#   ['start_timer']
#   ['start_timer', 'tick']
#   start_timer text/html;profile=mcp-app True
#   ['https://tiles.example.org'] True
#   an app's resource_uri must be a ui:// URI, not 'https://example.org/page.html'
