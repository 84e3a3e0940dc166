"""The OAuth proxy (mcpio.auth._proxy) end to end with mcpio's OAuth client: it registers with
the proxy, the browser (tests/support/oauth_browser.py) is sent through the consent page to the
GitHub- or Google-shaped upstream stub and back, and the client calls a tool with the proxy's
token, the upstream identity's claims on the context."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import httpx
import pytest

from mcpio import Call, Client, Middleware, ToolError
from mcpio.auth import GitHubProvider, GoogleProvider, MemoryTokenStore, OAuth
from mcpio.middleware import CallNext
from tests.support.oauth_browser import Browser
from tests.support.oauth_proxy import REDIRECT_URI, exchange, proxied, register, upstream
from tests.support.upstream_stub import CLIENT_ID, CLIENT_SECRET, fixture

pytestmark = pytest.mark.anyio
DEADLINE = 30


async def whoami(url: str, auth: OAuth) -> dict[str, object]:
    async with Client(url, auth=auth) as client:
        result = await client.call_tool("whoami", {})
    assert result.structuredContent is not None
    return result.structuredContent


async def test_github_login_reaches_the_tool_with_the_users_id_email_and_orgs() -> None:
    with anyio.fail_after(DEADLINE):
        async with upstream("github") as stub:
            github = GitHubProvider(CLIENT_ID, CLIENT_SECRET, base_url=stub.url, api_url=stub.url)
            async with proxied(github) as proxy:
                browser = Browser(REDIRECT_URI)
                answer = await whoami(proxy.resource, OAuth(redirect=browser))
    assert answer["subject"] == "583231"
    claims = answer["claims"]
    assert isinstance(claims, dict)
    assert claims["login"] == "octocat" and claims["email"] == "octocat@github.com"
    assert claims["orgs"] == ["github", "octo-org"] and claims["idp"] == "github"
    assert claims["iss"] == proxy.issuer and claims["aud"] == proxy.resource
    assert [p.split("?")[0] for p in browser.pages] == [f"{proxy.issuer}/authorize"]
    assert stub.seen == ["authorize", "token", "/user", "/user/emails", "/user/orgs"]


async def test_google_login_by_discovery_reaches_the_tool_with_the_id_tokens_claims() -> None:
    with anyio.fail_after(DEADLINE):
        async with upstream("google") as stub:
            google = GoogleProvider(CLIENT_ID, CLIENT_SECRET, issuer=stub.url)
            async with proxied(google) as proxy:
                answer = await whoami(proxy.resource, OAuth(redirect=Browser(REDIRECT_URI)))
    assert answer["subject"] == "110169484474386276334"
    claims = answer["claims"]
    assert isinstance(claims, dict)
    assert claims["email"] == "ada@example.com" and claims["email_verified"] is True
    assert claims["hd"] == "example.com" and claims["idp"] == "google"
    assert stub.seen == ["discovery", "authorize", "token", "userinfo"]


async def test_no_token_code_or_secret_in_a_log_line_a_repr_or_a_tool_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    store = MemoryTokenStore()
    with anyio.fail_after(DEADLINE):
        async with upstream("github") as stub:
            github = GitHubProvider(CLIENT_ID, CLIENT_SECRET, base_url=stub.url, api_url=stub.url)
            async with proxied(github) as proxy, httpx.AsyncClient(timeout=10) as http:
                client = await register(
                    http, proxy, token_endpoint_auth_method="client_secret_post"
                )
                browser = Browser(REDIRECT_URI)
                auth = OAuth(
                    redirect=browser,
                    client_id=client["client_id"],
                    client_secret=client["client_secret"],
                    store=store,
                )
                answer = await whoami(proxy.resource, auth)
                tokens = await store.get_tokens(proxy.resource)
                assert tokens is not None and tokens.refresh_token is not None
                refused = await exchange(http, proxy, client["client_id"], "stolen", "x" * 43)
                assert refused.status_code == 401  # no secret: refused, and logged without it
                form = {
                    "token": tokens.refresh_token,
                    **{k: client[k] for k in ("client_id", "client_secret")},
                }
                assert (await http.post(f"{proxy.issuer}/revoke", data=form)).status_code == 200
    codes = [dict(parse_qsl(urlsplit(u).query)).get("code", "") for u in browser.visited]
    secrets = [
        CLIENT_SECRET,
        client["client_secret"],
        fixture("github_token.json")["access_token"],
        tokens.access_token,
        tokens.refresh_token,
        *filter(None, codes),  # the upstream's code and the proxy's
    ]
    assert len(secrets) == 7 and stub.revoked
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    shown = " ".join(map(repr, (proxy, github, auth, tokens, proxy.settings.provider)))
    for secret in secrets:
        assert secret not in logged and secret not in shown and secret not in json.dumps(answer)


async def test_mcpio_refreshes_the_proxys_token_without_a_new_login() -> None:
    store = MemoryTokenStore()
    with anyio.fail_after(DEADLINE):
        async with upstream("github") as stub:
            github = GitHubProvider(CLIENT_ID, CLIENT_SECRET, base_url=stub.url, api_url=stub.url)
            async with proxied(github, access_token_seconds=5) as proxy:
                browser = Browser(REDIRECT_URI)
                auth = OAuth(redirect=browser, store=store)
                await whoami(proxy.resource, auth)
                first = await store.get_tokens(proxy.resource)
                again = await whoami(proxy.resource, auth)  # within 30 s of expiry: refreshed
                second = await store.get_tokens(proxy.resource)
    assert first is not None and second is not None and again["subject"] == "583231"
    assert second.refresh_token != first.refresh_token  # rotated
    assert len(browser.pages) == 1 and stub.seen.count("authorize") == 1


class MembersOnly(Middleware):
    """Tool calls for members of one GitHub organization only (the upstream identity's claims)."""

    def __init__(self, org: str) -> None:
        self.org = org

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        principal = call.ctx.principal
        if principal is None or self.org not in principal.claims.get("orgs", []):
            raise ToolError(f"for members of {self.org} only")
        return await call_next(call)


async def test_authorization_middleware_reads_the_upstream_identitys_orgs() -> None:
    results = []
    with anyio.fail_after(DEADLINE):
        async with upstream("github") as stub:
            github = GitHubProvider(CLIENT_ID, CLIENT_SECRET, base_url=stub.url, api_url=stub.url)
            for org in ("octo-org", "acme"):
                async with proxied(github, middleware=[MembersOnly(org)]) as proxy:
                    auth = OAuth(redirect=Browser(REDIRECT_URI))
                    async with Client(proxy.resource, auth=auth) as client:
                        results.append(await client.call_tool("whoami", {}))
    assert not results[0].isError and results[0].structuredContent is not None
    assert results[1].isError and "for members of acme only" in str(results[1].content)
