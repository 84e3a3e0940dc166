"""The OAuth proxy in front of a real, certified OpenID provider run locally (npm
`oidc-provider`, tests/oidc): mcpio's OAuth client registers with the proxy, the browser
(tests/support/oauth_browser.py) approves the proxy's consent page, signs in and consents at the
provider, and the client calls a tool with the proxy's token; the provider's claims (email,
groups) reach the tool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from mcpio import Client
from mcpio.auth import MemoryTokenStore, OAuth, OAuthProxy, OIDCProvider
from tests.support import free_port
from tests.support.oauth_browser import Browser
from tests.support.oauth_proxy import REDIRECT_URI, serve_proxy
from tests.support.oidc_provider import CLIENT_ID, CLIENT_SECRET, oidc_provider

pytestmark = [pytest.mark.anyio, pytest.mark.peers]
DEADLINE = 60
USER = {"login": "ada", "password": "any password"}


@pytest.fixture
async def proxy(oidc_provider_package: Path) -> AsyncIterator[OAuthProxy]:
    port = free_port()
    with anyio.fail_after(DEADLINE):
        callback = f"http://127.0.0.1:{port}/callback"
        async with oidc_provider(oidc_provider_package, callback) as issuer:
            scopes = ["openid", "email", "profile", "groups"]
            provider = OIDCProvider(issuer, CLIENT_ID, CLIENT_SECRET, scopes)
            async with serve_proxy(provider, port) as served:
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
