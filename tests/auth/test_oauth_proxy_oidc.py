"""The OAuth proxy in front of a real, certified OpenID provider run locally (npm
`oidc-provider`, tests/oidc): mcpio's OAuth client registers with the proxy, the browser
(tests/support/oauth_browser.py) approves the proxy's consent page, signs in and consents at the
provider, and the client calls a tool with the proxy's token; the provider's claims (email,
groups) reach the tool. Headless Chromium walks the same login once, its redirect received by
`Client(url, auth="oauth")`'s loopback server (`BrowserRedirect`). The TypeScript SDK's
client (tests/peers/ts_oauth_client.mjs) logs in through the proxy too."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import httpx
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from mcpio import Client
from mcpio.auth import MemoryOAuthStore, MemoryTokenStore, OAuth, OAuthProxy, OIDCProvider
from mcpio.auth._browser import BrowserRedirect
from tests.support import PEERS, free_port, until
from tests.support.browser import Tab, chromium
from tests.support.oauth_browser import Browser, chromium_login
from tests.support.oauth_proxy import REDIRECT_URI
from tests.support.oidc_provider import USER, proxy_before_oidc_provider

pytestmark = [pytest.mark.anyio, pytest.mark.peers]
DEADLINE = 60


class Recording(MemoryOAuthStore):
    """A memory store that keeps every value put, for a test to find the provider's tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.values: list[dict[str, Any]] = []

    async def put(self, key: str, value: dict[str, Any], ttl: float | None) -> None:
        self.values.append(value)
        await super().put(key, value, ttl)


@pytest.fixture
async def proxy(oidc_provider_package: Path) -> AsyncIterator[OAuthProxy]:
    with anyio.fail_after(DEADLINE):
        async with proxy_before_oidc_provider(oidc_provider_package, store=Recording()) as served:
            yield served


async def whoami(proxy: OAuthProxy, auth: OAuth) -> dict[str, object]:
    async with Client(proxy.resource, auth=auth) as client:
        result = await client.call_tool("whoami", {})
    assert result.structuredContent is not None
    return result.structuredContent


async def test_login_at_oidc_provider_reaches_the_tool_with_email_and_groups(
    proxy: OAuthProxy,
) -> None:
    browser = Browser(REDIRECT_URI, typed=USER)
    with anyio.fail_after(DEADLINE):
        answer = await whoami(proxy, OAuth(redirect=browser))
    assert answer["subject"] == "ada"
    claims = answer["claims"]
    assert isinstance(claims, dict)
    assert claims["email"] == "ada@example.test" and claims["groups"] == ["staff", "mcp-users"]
    assert claims["idp"] == "oidc" and claims["iss"] == proxy.issuer
    seen = [url.split("?")[0].rsplit("/", 1)[0] for url in browser.pages]
    assert seen[0] == proxy.issuer and len(seen) == 3  # the proxy's consent, login, consent


async def test_a_client_approved_once_is_not_asked_again(proxy: OAuthProxy) -> None:
    browser, store = Browser(REDIRECT_URI, typed=USER), MemoryTokenStore()
    with anyio.fail_after(DEADLINE):
        await whoami(proxy, OAuth(redirect=browser, store=store))
        asked = len(browser.pages)
        await store.set_tokens(proxy.resource, None)  # a new login, the registration kept
        answer = await whoami(proxy, OAuth(redirect=browser, store=store))
    assert answer["subject"] == "ada" and asked == 3
    assert len(browser.pages) == asked  # no page: consented at both, signed in at the provider


async def test_chromium_walks_the_login_and_the_client_calls_a_tool(
    proxy: OAuthProxy, tmp_path: Path
) -> None:
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    opened: list[str] = []
    redirect = BrowserRedirect(redirect_uri, timeout=DEADLINE, open_url=opened.append)
    auth = OAuth(redirect=redirect, redirect_uri=redirect_uri)
    pages: list[str] = []

    async def user(ws_url: str) -> None:
        await until(lambda: opened, DEADLINE)
        async with aiohttp.ClientSession() as session, session.ws_connect(ws_url) as ws:
            tab = Tab(ws)
            await tab.open()
            pages.extend(await chromium_login(tab, opened[0], USER, redirect_uri))

    with chromium(tmp_path / "profile") as ws_url, anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as group:
            group.start_soon(user, ws_url)
            answer = await whoami(proxy, auth)
    assert answer["subject"] == "ada"
    assert [p.split("?")[0].rsplit("/", 1)[0] for p in pages][0] == proxy.issuer
    assert len(pages) == 3  # the proxy's consent, the provider's login and consent


async def test_the_typescript_sdk_client_logs_in_through_the_proxy(
    proxy: OAuthProxy, npm_peers: Path
) -> None:
    node = shutil.which("node")
    assert node is not None
    browser = Browser(REDIRECT_URI, typed=USER)
    command = [node, "ts_oauth_client.mjs", proxy.resource, REDIRECT_URI]
    with anyio.fail_after(DEADLINE):
        async with await anyio.open_process(command, cwd=PEERS) as process:
            assert process.stdout is not None and process.stdin is not None
            said = BufferedByteReceiveStream(process.stdout)
            line = (await said.receive_until(b"\n", 1 << 16)).decode()
            assert line.startswith("AUTHORIZE "), line
            back = await browser(line.removeprefix("AUTHORIZE "))
            await process.stdin.send(f"{back}\n".encode())
            answer = json.loads(await said.receive_until(b"\n", 1 << 16))
            assert await process.wait() == 0
    assert answer["subject"] == "ada" and answer["claims"]["client_id"]
    assert len(browser.pages) == 3  # the proxy's consent, the provider's login and consent


async def test_revoking_the_proxys_token_revokes_the_providers(proxy: OAuthProxy) -> None:
    store, recording = MemoryTokenStore(), proxy.settings.store
    assert isinstance(recording, Recording)
    with anyio.fail_after(DEADLINE):
        await whoami(proxy, OAuth(redirect=Browser(REDIRECT_URI, typed=USER), store=store))
        upstream = next(v["upstream"] for v in recording.values if "upstream" in v)
        tokens, client = await store.get_tokens(proxy.resource), await store.get_client(
            proxy.issuer
        )
        assert tokens is not None and client is not None
        provider = proxy.settings.provider
        assert isinstance(provider, OIDCProvider) and provider.userinfo_endpoint is not None
        async with httpx.AsyncClient(timeout=10) as http:
            me = {"authorization": f"Bearer {upstream['access_token']}"}
            userinfo = provider.userinfo_endpoint
            before = await http.get(userinfo, headers=me)
            form = {"token": tokens.access_token, "client_id": client.client_id}
            revoked = await http.post(f"{proxy.issuer}/revoke", data=form)
            after = await http.get(userinfo, headers=me)
    assert before.status_code == 200 and revoked.status_code == 200
    assert after.status_code == 401  # the provider's own token is gone too
