"""MCP Apps end to end in headless Chromium: a host page built on the ext-apps package's own
host bridge (`@modelcontextprotocol/ext-apps/app-bridge`, bundled for the browser with esbuild,
as its basic-host example uses it) and the TypeScript SDK's client connects to our server over
Streamable HTTP on 127.0.0.1, finds the app tool, reads its `ui://` resource and renders it in a
sandboxed iframe; the app inside (the package's `App`) calls a tool on our server through the
bridge, shows the result in its page and tells the host what it shows (`ui/message`), which the
host writes into its own DOM for the test to read (`--dump-dom` sees the top document only)."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest

from mcpio import Context, Server
from mcpio.apps import UiApp
from tests.support import PEERS, serve_app

pytestmark = [pytest.mark.slow, pytest.mark.peers, pytest.mark.anyio]

BRIDGE_ENTRY = """
export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
export { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
"""

HOST_PAGE = """<!doctype html>
<meta charset="utf-8"><title>mcpio apps host</title>
<p id="status">starting</p><p id="shown"></p><p id="tool"></p>
<script type="module">
import { AppBridge, PostMessageTransport, Client, StreamableHTTPClientTransport } from "./bridge.js";
const post = () => fetch("/dom", { method: "POST", body: document.documentElement.outerHTML });
const say = (id, text) => { document.getElementById(id).textContent = text; };
const fail = (what) => { say("status", "error: " + what); post(); };
window.addEventListener("unhandledrejection", (e) => fail(e.reason));
try {
  const client = new Client({ name: "test-host", version: "1.0.0" }, {
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL("MCP_URL")));
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t._meta && t._meta.ui && t._meta.ui.resourceUri);
  say("tool", tool.name + " -> " + tool._meta.ui.resourceUri);
  const { contents } = await client.readResource({ uri: tool._meta.ui.resourceUri });
  const page = contents[0];
  if (page.mimeType !== "text/html;profile=mcp-app") throw new Error("mime type " + page.mimeType);
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  document.body.appendChild(frame);
  const bridge = new AppBridge(client, { name: "test-host", version: "1.0.0" }, { serverTools: {} });
  bridge.onmessage = async ({ content }) => {
    say("shown", content[0].text);
    say("status", "done");
    post();
    return {};
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = page.text;
  say("status", "rendered");
} catch (error) {
  fail(error && error.stack || error);
}
</script>
"""

APP_PAGE = """<!doctype html>
<meta charset="utf-8"><title>clock app</title>
<p id="out">waiting</p>
<script type="module">
import { App } from "STATIC_URL/app-with-deps.js";
const app = new App({ name: "clock-app", version: "1.0.0" });
await app.connect();
const result = await app.callServerTool({ name: "tick", arguments: { times: 3 } });
document.getElementById("out").textContent = result.content[0].text;
await app.sendMessage({
  role: "user",
  content: [{ type: "text", text: "app shows: " + document.getElementById("out").textContent }],
});
</script>
"""


class _Static(SimpleHTTPRequestHandler):
    """Files of one folder, readable from any origin (the app's sandboxed iframe is an opaque
    origin, and module scripts are fetched with CORS)."""

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_POST(self) -> None:  # noqa: N802 (the base's naming)
        """`/dom`: the host page sends its DOM here once it is done (or failed)."""
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(204)
        self.end_headers()
        posted: Posted = self.server.posted  # type: ignore[attr-defined]
        posted.dom = body.decode("utf-8", "replace")
        posted.done.set()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's name)
        pass


class Posted:
    def __init__(self) -> None:
        self.dom = ""
        self.done = threading.Event()


@contextmanager
def static_server(folder: Path, posted: Posted) -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Static, directory=str(folder)))
    httpd.posted = posted  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def bundle_bridge(peers: Path, target: Path) -> None:
    """The host bridge and the SDK client as one ESM file for the browser (the package ships
    app-bridge.js with bare imports of the SDK and zod)."""
    esbuild = peers / "node_modules" / ".bin" / "esbuild"
    done = subprocess.run(
        [str(esbuild), "--bundle", "--format=esm", "--platform=browser", f"--outfile={target}",
         "--log-level=warning"],
        input=BRIDGE_ENTRY, cwd=peers, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def clock_server(static: str, revisions: list[str]) -> Server:
    """The app server; `revisions` gets the revision of each call of the app's tool."""
    server = Server("clock")

    @server.tool(app=UiApp(resource_uri="ui://clock/app.html"))
    def show_clock() -> str:
        """Show the clock app."""
        return "the clock is shown"

    @server.tool(app=UiApp(resource_uri="ui://clock/app.html", visibility=["app"]))
    def tick(times: int, ctx: Context) -> str:
        """The app's button: advance the clock."""
        revisions.append(ctx.revision)
        return f"ticked {times} times on the server"

    @server.app_resource("ui://clock/app.html", csp={"resourceDomains": [static]})
    def clock_page() -> str:
        return APP_PAGE.replace("STATIC_URL", static)

    return server


def chromium_dom(url: str, profile: Path, posted: Posted) -> str:
    """The DOM the page at `url` posts back once done: headless Chromium keeps running the page
    (its app frame, its calls) until then, and is stopped after (at most 60 s)."""
    chromium = shutil.which("chromium")
    assert chromium is not None, "chromium must be on PATH (scripts/ensure-services.sh)"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    browser = subprocess.Popen(
        [chromium, *flags, f"--user-data-dir={profile}", "--remote-debugging-port=0", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        posted.done.wait(60)
    finally:
        browser.terminate()
        _, stderr = browser.communicate(timeout=30)
    console = [line for line in stderr.splitlines() if ":CONSOLE" in line]
    assert posted.done.is_set(), f"the host page posted no DOM in 60 s; console: {console}"
    return posted.dom + "\n<!-- console:\n" + "\n".join(console) + "\n-->"


async def test_an_app_calls_our_server_through_the_ext_apps_host_bridge(
    npm_peers: Path, tmp_path: Path
) -> None:
    started = time.perf_counter()
    site = tmp_path / "site"
    site.mkdir()
    bundle_bridge(PEERS, site / "bridge.js")
    apps_dist = npm_peers / "@modelcontextprotocol" / "ext-apps" / "dist" / "src"
    shutil.copyfile(apps_dist / "app-with-deps.js", site / "app-with-deps.js")
    posted = Posted()
    with static_server(site, posted) as static:
        revisions: list[str] = []
        app = clock_server(static, revisions).http_app(cors_origins=[static])
        async with serve_app(app) as served:
            page = HOST_PAGE.replace("MCP_URL", f"{served.url}/mcp")
            (site / "host.html").write_text(page, encoding="utf-8")
            dom = await anyio.to_thread.run_sync(
                chromium_dom, f"{static}/host.html", tmp_path / "profile", posted
            )
    print(f"chromium apps test: {time.perf_counter() - started:.1f} s, calls in {revisions}")
    assert '<p id="tool">show_clock -&gt; ui://clock/app.html</p>' in dom, dom[-3000:]
    assert '<p id="status">done</p>' in dom, dom[-3000:]
    assert '<p id="shown">app shows: ticked 3 times on the server</p>' in dom, dom[-3000:]
    assert len(revisions) == 1  # the one call the app made, through the bridge
