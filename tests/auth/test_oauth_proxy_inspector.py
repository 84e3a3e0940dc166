"""The official MCP Inspector (npm @modelcontextprotocol/inspector, pinned in tests/inspector)
logs in through the OAuth proxy in front of oidc-provider, all on 127.0.0.1.

It is the Inspector's CLI, as a person at a terminal runs it (its stdin a pseudo-terminal, its
browser not opened): it discovers the proxy from the MCP endpoint's 401, registers itself,
prints the proxy's /authorize URL and waits on its own loopback callback listener. The browser
(tests/support/oauth_browser.py) walks the proxy's consent page and the provider's login and
consent, and the code reaches that listener; the Inspector lists the tools. A second run calls a
tool with the token the first one stored, without a login."""

from __future__ import annotations

import json
import os
import pty
import re
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import ByteReceiveStream
from anyio.streams.text import TextReceiveStream

from mcpio.auth import OAuthProxy
from tests.support import free_port
from tests.support.oauth_browser import Browser
from tests.support.oidc_provider import USER, proxy_before_oidc_provider

pytestmark = [pytest.mark.anyio, pytest.mark.peers]
DEADLINE = 60
NAVIGATE = re.compile(r"navigate to: (\S+)")


@pytest.fixture
async def proxy(oidc_provider_package: Path) -> Any:
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
            [*command, *args, "--format", "json"], stdin=stdin, env=env
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


async def test_the_inspector_logs_in_through_the_proxy_then_lists_and_calls_a_tool(
    proxy: OAuthProxy, inspector_cli: list[str], tmp_path: Path
) -> None:
    callback = f"http://127.0.0.1:{free_port()}/oauth/callback"
    browser = Browser(callback, typed=USER)
    server = ["--server-url", proxy.resource, "--transport", "http", "--callback-url", callback]
    with anyio.fail_after(DEADLINE):
        listed, said = await inspector(
            inspector_cli, tmp_path, *server, "--method", "tools/list", browser=browser
        )
        called, said_again = await inspector(
            inspector_cli, tmp_path, *server, "--stored-auth-only", "--method", "tools/call",
            "--tool-name", "whoami",
        )  # fmt: skip
    assert [tool["name"] for tool in listed["tools"]] == ["whoami"]
    assert NAVIGATE.search(said) and not NAVIGATE.search(said_again)
    seen = [page.split("?")[0].rsplit("/", 1)[0] for page in browser.pages]
    assert seen[0] == proxy.issuer and len(seen) == 3  # the proxy's consent, login, consent
    answer = called["structuredContent"]
    assert answer["subject"] == "ada" and answer["claims"]["email"] == "ada@example.test"
    assert answer["claims"]["iss"] == proxy.issuer and answer["claims"]["client_id"]
