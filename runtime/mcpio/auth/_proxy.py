"""`OAuthProxy`: the MCP server as the authorization server its clients see, the user's login
delegated to an identity provider that offers no dynamic client registration (GitHub, Google,
a company's OpenID provider), registered once with a fixed client.

Its clients see RFC 8414 metadata, dynamic registration (RFC 7591), `/authorize` (PKCE S256
required, a consent page before a client this browser has not approved gets a token),
`/token` (authorization code, refresh with rotation) and `/revoke` (RFC 7009); the provider
sends the user back to `/callback`. The proxy issues its own tokens, bound to this resource and
to the upstream identity (whose claims reach tools as `ctx.principal.claims`); the provider's
tokens never leave it. Everything it remembers is in an `OAuthStore` (memory, SQLite, Redis),
so several instances can share it (give them the same `secret`).

Examples:
    >>> from mcpio import Server
    >>> from mcpio.auth import GitHubProvider, OAuthProxy
    >>> proxy = OAuthProxy(
    ...     GitHubProvider("Iv1.abc", "github-secret"), base_url="https://mcp.example"
    ... )
    >>> app = Server("demo", "1.0").http_app(auth=proxy.resource_server(), routes=proxy.routes())
    >>> proxy.metadata()["authorization_endpoint"]
    'https://mcp.example/authorize'
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from mcpio._core.extras import needs
from mcpio._core.principal import Principal
from mcpio._core.routes import HttpRequest, HttpResponse, Route
from mcpio.auth._providers import UpstreamProvider
from mcpio.auth._proxy_clients import AUTH_METHODS, Clients
from mcpio.auth._proxy_flow import BrowserFlow
from mcpio.auth._proxy_settings import ProxySettings, json_answer
from mcpio.auth._proxy_store import MemoryOAuthStore, OAuthStore
from mcpio.auth._proxy_tokens import ProxyTokens
from mcpio.auth._resource import ResourceServerAuth, TokenVerifier
from mcpio.auth._wellknown import AUTHORIZATION_SERVER, inserted


class OAuthProxy:
    """An OAuth authorization server for MCP clients in front of an upstream provider.

    Serve it with `server.http_app(auth=proxy.resource_server(), routes=proxy.routes())`; the
    provider's redirect URI for the proxy's client is `<base_url>/callback`. The docs page
    "OAuth proxy" (docs/servers/oauth-proxy.md) tells what it stores and its defences.

    Args:
        provider: The upstream identity provider (`OIDCProvider`, `GitHubProvider`,
            `GoogleProvider`).
        base_url: The server's public URL: the proxy's issuer, its endpoints under it.
        resource: The MCP endpoint its tokens are for (default `<base_url>/mcp`).
        store: Where registrations, codes and tokens are kept (default: memory).
        secret: Signs the consent cookie; give every instance the same (default: random).
        scopes_supported: The scopes clients may ask for (empty: any, granted as asked).
        consent: Show the consent page before a new client gets a token.
        code_seconds: How long a code is valid.
        state_seconds: How long a pending login (consent, provider) may take.
        access_token_seconds: The lifetime of an access token.
        refresh_token_seconds: The lifetime of a refresh token (its rotations keep its end).
        registration_seconds: How long a client's registration is kept (None: for good).
        registrations_per_address: The most registrations from one client address in a
            window (None: no bound); past it, 429 with `Retry-After`.
        registration_window_seconds: That window's length.
        timeout: Seconds each request to the provider may take.
    """

    def __init__(
        self,
        provider: UpstreamProvider,
        *,
        base_url: str,
        resource: str | None = None,
        store: OAuthStore | None = None,
        secret: str | bytes | None = None,
        scopes_supported: Sequence[str] = (),
        consent: bool = True,
        code_seconds: float = 120.0,
        state_seconds: float = 600.0,
        access_token_seconds: float = 3600.0,
        refresh_token_seconds: float = 30 * 86400.0,
        registration_seconds: float | None = 90 * 86400.0,
        registrations_per_address: int | None = 20,
        registration_window_seconds: float = 3600.0,
        timeout: float = 30.0,
    ) -> None:
        with needs("http", "OAuthProxy"):
            import httpx
        issuer = base_url.rstrip("/")
        if urlsplit(issuer).scheme not in ("https", "http") or urlsplit(issuer).query:
            raise ValueError("base_url is the server's http(s) URL, without a query")
        key = secret.encode() if isinstance(secret, str) else secret
        self.settings = ProxySettings(
            provider=provider,
            issuer=issuer,
            resource=resource or f"{issuer}/mcp",
            store=store or MemoryOAuthStore(),
            secret=key or secrets.token_bytes(32),
            http=lambda: httpx.AsyncClient(timeout=timeout),
            scopes_supported=list(scopes_supported),
            code_seconds=code_seconds,
            state_seconds=state_seconds,
            access_token_seconds=access_token_seconds,
            refresh_token_seconds=refresh_token_seconds,
            registration_seconds=registration_seconds,
            registrations_per_address=registrations_per_address,
            registration_window_seconds=registration_window_seconds,
            consent=consent,
        )
        self.clients = Clients(self.settings)
        self.tokens = ProxyTokens(self.settings, self.clients)
        self.flow = BrowserFlow(self.settings, self.clients)

    def __repr__(self) -> str:
        return f"OAuthProxy({self.settings.provider.name!r}, issuer={self.issuer!r})"

    @property
    def issuer(self) -> str:
        """The proxy's issuer identifier (its base URL)."""
        return self.settings.issuer

    @property
    def resource(self) -> str:
        """The MCP endpoint the proxy's tokens are for."""
        return self.settings.resource

    async def __call__(self, token: str) -> Principal | None:
        """The proxy as a `TokenVerifier`: the principal of one of its own access tokens."""
        return await self.tokens.principal(token)

    def metadata(self) -> dict[str, Any]:
        """The authorization server metadata (RFC 8414) clients discover."""
        document: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self.settings.endpoint("authorize"),
            "token_endpoint": self.settings.endpoint("token"),
            "registration_endpoint": self.settings.endpoint("register"),
            "revocation_endpoint": self.settings.endpoint("revoke"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
            "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS),
            "authorization_response_iss_parameter_supported": True,
        }
        if self.settings.scopes_supported:
            document["scopes_supported"] = list(self.settings.scopes_supported)
        return document

    def resource_server(
        self, verifier: TokenVerifier | None = None, **options: Any
    ) -> ResourceServerAuth:
        """The resource server side, for `http_app(auth=...)`.

        The proxy's tokens are checked (or `verifier`'s, a `MultiAuth` holding the proxy), the
        proxy named as the authorization server in the protected resource metadata.

        Args:
            verifier: Another verifier than the proxy itself (None: the proxy).
            **options: For `ResourceServerAuth` (`required_scopes`, `resource_name`, ...).
        """
        options.setdefault("scopes_supported", list(self.settings.scopes_supported))
        return ResourceServerAuth(
            verifier=verifier or self,
            resource=self.resource,
            authorization_servers=[self.issuer],
            **options,
        )

    def routes(self) -> list[Route]:
        """The proxy's endpoints, for `http_app(routes=...)`.

        The metadata, registration, token and revocation endpoints answer any origin (CORS
        `*`, no cookies involved), for clients that run in a browser (the MCP Inspector);
        `/authorize` and `/callback` are the browser's navigations, checked as the endpoint.
        """
        path = self.settings.path
        public = [
            (urlsplit(inserted(self.issuer, AUTHORIZATION_SERVER)).path, self._metadata, "GET"),
            (path("register"), self.clients.register, "POST"),
            (path("token"), self.tokens.token_endpoint, "POST"),
            (path("revoke"), self.tokens.revoke_endpoint, "POST"),
        ]
        return [
            *(Route(p, _any_origin(h, m), [m, "OPTIONS"], False) for p, h, m in public),
            Route(path("authorize"), self.flow.authorize, ["GET", "POST"]),
            Route(path("callback"), self.flow.callback, ["GET"]),
        ]

    async def _metadata(self, request: HttpRequest) -> HttpResponse:
        return json_answer(self.metadata())

    async def close(self) -> None:
        """Close the store."""
        await self.settings.store.close()


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]
_CORS = {
    "access-control-allow-origin": "*",
    "access-control-allow-headers": "authorization, content-type, mcp-protocol-version",
    "access-control-max-age": "600",
}


def _any_origin(handler: Handler, method: str) -> Handler:
    """`handler` answering any origin: a preflight (OPTIONS) at once, the rest with CORS `*`."""

    async def answer(request: HttpRequest) -> HttpResponse:
        if request.method == "OPTIONS":
            return HttpResponse(204, b"", {**_CORS, "access-control-allow-methods": method})
        response = await handler(request)
        headers = {**response.headers, "access-control-allow-origin": "*"}
        return HttpResponse(response.status, response.body, headers, response.content_type)

    return answer
