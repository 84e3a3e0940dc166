"""The official MCP Inspector (npm @modelcontextprotocol/inspector, pinned in tests/inspector)
logs in through the OAuth proxy in front of oidc-provider, all on 127.0.0.1.

Its web UI, in headless Chromium: the server's switch turned on, the Inspector discovers the
proxy from the MCP endpoint's 401, registers itself and sends the tab to the proxy's /authorize;
the tab walks the proxy's consent page and the provider's login and consent and comes back to
the Inspector's /oauth/callback, connected; its Tools tab lists the tool, which it then calls.

Its CLI, as a person at a terminal runs it (its stdin a pseudo-terminal, no browser opened): it
prints the proxy's /authorize URL and waits on its own loopback callback listener; the scripted
browser (tests/support/oauth_browser.py) logs in and the code reaches that listener; the
Inspector lists the tools. A second run calls a tool with the token the first one stored,
without a login."""

from __future__ import annotations

import json
import os
import pty
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import httpx
import pytest
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.text import TextReceiveStream

from mcpio.auth import OAuthProxy
from tests.support import free_port, until
from tests.support.browser import Tab, chromium
from tests.support.oauth_browser import Browser, chromium_walk
from tests.support.oidc_provider import USER, proxy_before_oidc_provider

pytestmark = [pytest.mark.anyio, pytest.mark.peers]
DEADLINE = 60
NAVIGATE = re.compile(r"navigate to: (\S+)")
WEB_UI = re.compile(r"(http://127\.0\.0\.1:\d+)/?\?MCP_INSPECTOR_API_TOKEN=\w+")
# The first element whose text is (or, for a button, holds) the given text, clicked.
CLICK = """(() => {
  const text = %s;
  const found = [...document.querySelectorAll("button, span")].find((e) =>
    e.tagName === "BUTTON" ? e.innerText.includes(text) : e.innerText.trim() === text);
  if (found) found.click();
  return Boolean(found);
})()"""


@pytest.fixture
async def proxy(oidc_provider_package: Path) -> AsyncIterator[OAuthProxy]:
    with anyio.fail_after(DEADLINE):
        async with proxy_before_oidc_provider(oidc_provider_package) as served:
            yield served


async def _log_in(stderr: ByteReceiveStream, said: list[str], browser: Browser | None) -> None:
    """Read what the Inspector says; when it asks the user to open a URL, `browser` logs in
    there and the redirect it ends at is delivered to the Inspector's callback listener."""
    async for text in TextReceiveStream(stderr):
        said.append(text)
        found = NAVIGATE.search("".join(said))
        if found is not None and browser is not None and not browser.visited:
            back = await browser(found[1])
            async with httpx.AsyncClient(timeout=10) as http:
                assert (await http.get(back)).status_code == 200


async def inspector(
    command: list[str], home: Path, *args: str, browser: Browser | None = None
) -> tuple[dict[str, Any], str]:
    """One run of the Inspector's CLI (`args` after `command`), its files under `home`: the
    MCP result it printed (in its JSON envelope) and all it said on stderr."""
    env = {
        **os.environ,
        "HOME": str(home),
        "MCP_AUTO_OPEN_ENABLED": "false",  # it prints the URL; no browser of the machine's
        "MCP_INSPECTOR_SECRET_STORE": "file",  # the tokens kept for the next run, under home
        "NO_COLOR": "1",
    }
    terminal, stdin = pty.openpty()
    said: list[str] = []
    try:
        async with await anyio.open_process(
            [*command, "--cli", *args, "--format", "json"], stdin=stdin, env=env
        ) as process:
            assert process.stdout is not None and process.stderr is not None
            async with anyio.create_task_group() as group:
                group.start_soon(_log_in, process.stderr, said, browser)
                printed = [text async for text in TextReceiveStream(process.stdout)]
                status = await process.wait()
    finally:
        os.close(stdin)
        os.close(terminal)
    assert status == 0, "".join(said)
    return json.loads("".join(printed))["result"], "".join(said)


async def test_the_inspector_cli_logs_in_through_the_proxy_then_lists_and_calls_a_tool(
    proxy: OAuthProxy, inspector_command: list[str], tmp_path: Path
) -> None:
    callback = f"http://127.0.0.1:{free_port()}/oauth/callback"
    browser = Browser(callback, typed=USER)
    server = ["--server-url", proxy.resource, "--transport", "http", "--callback-url", callback]
    with anyio.fail_after(DEADLINE):
        listed, said = await inspector(
            inspector_command, tmp_path, *server, "--method", "tools/list", browser=browser
        )
        called, said_again = await inspector(
            inspector_command, tmp_path, *server, "--stored-auth-only", "--method", "tools/call",
            "--tool-name", "whoami",
        )  # fmt: skip
    assert [tool["name"] for tool in listed["tools"]] == ["whoami"]
    assert NAVIGATE.search(said) and not NAVIGATE.search(said_again)
    seen = [page.split("?")[0].rsplit("/", 1)[0] for page in browser.pages]
    assert seen[0] == proxy.issuer and len(seen) == 3  # the proxy's consent, login, consent
    answer = called["structuredContent"]
    assert answer["subject"] == "ada" and answer["claims"]["email"] == "ada@example.test"
    assert answer["claims"]["iss"] == proxy.issuer and answer["claims"]["client_id"]


async def web_ui(command: list[str], home: Path, server_url: str) -> tuple[Process, str, str]:
    """The Inspector's web UI for `server_url`, started on free loopback ports: its process,
    its base URL and the URL that opens it (with its API token)."""
    env = {
        **os.environ,
        "HOME": str(home),
        "CLIENT_PORT": str(free_port()),
        "MCP_SANDBOX_PORT": str(free_port()),
        "MCP_APP_ORIGIN_PORT": str(free_port()),
        "MCP_AUTO_OPEN_ENABLED": "false",
        "MCP_INSPECTOR_SECRET_STORE": "memory",
    }
    args = ["--web", "--transport", "http", "--server-url", server_url]
    process = await anyio.open_process([*command, *args], env=env, stderr=None)
    assert process.stdout is not None
    said = ""
    async for text in TextReceiveStream(process.stdout):
        said += text
        found = WEB_UI.search(said)
        if found is not None:
            return process, found[1], found[0]
    raise AssertionError(f"the Inspector's web UI did not start: {said}")


async def clicked(tab: Tab, text: str) -> None:
    """Click the element showing `text` once it is there."""
    await until(lambda: tab.eval(CLICK % json.dumps(text)), DEADLINE)


async def shown(tab: Tab, text: str) -> None:
    await until(lambda: tab.eval(f"document.body.innerText.includes({json.dumps(text)})"), 20)


async def test_the_inspector_web_ui_logs_in_through_the_proxy_then_lists_and_calls_a_tool(
    proxy: OAuthProxy, inspector_command: list[str], tmp_path: Path
) -> None:
    with anyio.fail_after(DEADLINE):
        process, base, opening = await web_ui(inspector_command, tmp_path, proxy.resource)
        try:
            with chromium(tmp_path / "profile") as ws_url:
                async with aiohttp.ClientSession() as session, session.ws_connect(ws_url) as ws:
                    tab = Tab(ws)
                    await tab.open()
                    await tab.send("Network.enable")  # its page asks for web fonts: nothing
                    await tab.send("Network.setBlockedURLs", urls=["https://*"])  # off 127.0.0.1
                    await tab.load(opening)
                    await until(lambda: tab.eval("!!document.querySelector('[role=switch]')"), 20)
                    await tab.submit("document.querySelector('[role=switch]').click()")
                    pages = await chromium_walk(tab, USER, base)
                    await shown(tab, "Connected")
                    await clicked(tab, "Tools")
                    await clicked(tab, "whoami")
                    await clicked(tab, "Execute Tool")
                    await shown(tab, '"subject": "ada"')
                    answer = await tab.eval("document.body.innerText")
        finally:
            process.terminate()
            await process.wait()
            await process.aclose()
    assert [page.split("?")[0].rsplit("/", 1)[0] for page in pages][0] == proxy.issuer
    assert len(pages) == 3  # the proxy's consent, the provider's login and consent
    assert '"email": "ada@example.test"' in answer and f'"iss": "{proxy.issuer}"' in answer
