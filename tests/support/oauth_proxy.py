"""The OAuth proxy's test setting: an MCP server whose `whoami` tool answers the principal's
claims, served on 127.0.0.1 behind an `OAuthProxy`, and the upstream stub (GitHub or Google
shaped, tests/support/upstream_stub.py) it delegates the login to."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx

from mcpio import Context, Server
from mcpio.auth import OAuthProxy, TokenVerifier, UpstreamProvider
from mcpio.auth._pkce import pkce_pair
from tests.support import free_port, serve_app
from tests.support.oauth_browser import Browser
from tests.support.upstream_stub import Upstream

REDIRECT_URI = "http://127.0.0.1:33418/callback"  # mcpio's OAuth's default


def whoami_server(middleware: Sequence[Any] = ()) -> Server:
    server = Server("oauth-proxy-demo", "1.0", middleware=middleware)

    @server.tool()
    async def whoami(ctx: Context) -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        assert ctx.principal is not None
        return {"subject": ctx.principal.subject, "claims": dict(ctx.principal.claims)}

    return server


@asynccontextmanager
async def upstream(kind: str) -> AsyncIterator[Upstream]:
    """The GitHub- or Google-shaped stub, served."""
    stub = Upstream(kind)
    port = free_port()
    stub.url = f"http://127.0.0.1:{port}"
    async with serve_app(stub.app(), port):
        yield stub


@asynccontextmanager
async def proxied(
    provider: UpstreamProvider,
    verifier: Callable[[OAuthProxy], TokenVerifier] | None = None,
    middleware: Sequence[Any] = (),
    **options: Any,
) -> AsyncIterator[OAuthProxy]:
    """`whoami_server(middleware)` behind an `OAuthProxy` for `provider`, served; `options` go
    to the proxy, `verifier` makes the resource server's verifier of it (a `MultiAuth`). The
    MCP endpoint is `proxy.resource`."""
    async with serve_proxy(provider, free_port(), verifier, middleware, **options) as proxy:
        yield proxy


@asynccontextmanager
async def serve_proxy(
    provider: UpstreamProvider,
    port: int,
    verifier: Callable[[OAuthProxy], TokenVerifier] | None = None,
    middleware: Sequence[Any] = (),
    **options: Any,
) -> AsyncIterator[OAuthProxy]:
    """`proxied` on a port of the caller's (the provider's redirect URI names it)."""
    proxy = OAuthProxy(provider, base_url=f"http://127.0.0.1:{port}", **options)
    auth = proxy.resource_server(verifier(proxy) if verifier is not None else None)
    app = whoami_server(middleware).http_app(auth=auth, routes=proxy.routes())
    async with serve_app(app, port):
        yield proxy


async def register(http: httpx.AsyncClient, proxy: OAuthProxy, **metadata: Any) -> dict[str, Any]:
    """A client registered with the proxy (a public one for mcpio's redirect URI by default)."""
    body = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none", **metadata}
    response = await http.post(f"{proxy.issuer}/register", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def authorize_url(proxy: OAuthProxy, client_id: str, challenge: str, **extra: str) -> str:
    """The proxy's /authorize URL for a client's authorization code request with PKCE."""
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "client-state",
        "resource": proxy.resource,
        **extra,
    }
    return f"{proxy.issuer}/authorize?{urlencode(params)}"


async def login(proxy: OAuthProxy, client_id: str, browser: Browser | None = None) -> Login:
    """A browser's login through the proxy for `client_id`: the code the client got back."""
    browser = browser or Browser(REDIRECT_URI)
    verifier, challenge = pkce_pair()
    back = await browser(authorize_url(proxy, client_id, challenge))
    params = dict(parse_qsl(urlsplit(back).query))
    return Login(params.get("code", ""), verifier, params, browser)


@dataclass
class Login:
    code: str
    verifier: str
    params: dict[str, str]  # all the redirect to the client carried
    browser: Browser


async def exchange(
    http: httpx.AsyncClient,
    proxy: OAuthProxy,
    client_id: str,
    code: str,
    verifier: str,
    **extra: str,
) -> httpx.Response:
    """The client's token request for `code`."""
    form = {
        "grant_type": "authorization_code",
        "client_id": client_id,
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": REDIRECT_URI,
        **extra,
    }
    return await http.post(f"{proxy.issuer}/token", data=form)
