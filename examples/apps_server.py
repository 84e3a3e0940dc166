"""An MCP App: a tool whose result a host shows in an HTML page of the server's own, and a tool
only that page calls (see docs/servers/apps.md).

    python examples/apps_server.py            # stdio
    python examples/apps_server.py http 8000  # Streamable HTTP on 127.0.0.1:8000/mcp

A host that renders apps (it declares `io.modelcontextprotocol/ui` in its capabilities) lists
both tools, reads `ui://counter/app.html` and runs it in a sandboxed iframe, where the page
calls `increment` through the host; other clients see `show_counter` alone.
"""

from __future__ import annotations

import sys

from mcpio import Server
from mcpio.apps import UiApp

# The app's page. It loads the ext-apps `App` class from a CDN (hence the CSP below) and calls
# `increment` through the host that renders it.
PAGE = """<!doctype html>
<meta charset="utf-8"><title>Counter</title>
<button id="add">+1</button> <output id="count">0</output>
<script type="module">
import { App } from "https://unpkg.com/@modelcontextprotocol/ext-apps@2.0.4/dist/src/app-with-deps.js";
const app = new App({ name: "counter", version: "1.0.0" });
await app.connect();
document.getElementById("add").onclick = async () => {
  const result = await app.callServerTool({ name: "increment", arguments: { by: 1 } });
  document.getElementById("count").textContent = result.content[0].text;
};
</script>
"""

server = Server("counter-app", "1.0.0")
count = {"value": 0}


@server.tool(app=UiApp(resource_uri="ui://counter/app.html"))
def show_counter() -> str:
    """Show the counter (hosts that render apps show its page)."""
    return f"the counter is at {count['value']}"


@server.tool(app=UiApp(resource_uri="ui://counter/app.html", visibility=["app"]))
def increment(by: int = 1) -> str:
    """Add `by` to the counter (the page's button; hidden from clients without apps)."""
    count["value"] += by
    return str(count["value"])


@server.app_resource(
    "ui://counter/app.html",
    description="The counter's page",
    csp={"resourceDomains": ["https://unpkg.com"]},
)
def counter_page() -> str:
    return PAGE


def main(argv: list[str]) -> int:
    if argv[1:2] == ["http"]:
        port = int(argv[2]) if len(argv) > 2 else 8000
        server.run("http", port=port)
    elif len(argv) == 1:
        server.run("stdio")
    else:
        print("usage: apps_server.py [http [PORT]]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
