"""The OAuth proxy's test setting: an MCP server whose `whoami` tool answers the principal's
claims, served on 127.0.0.1 behind an `OAuthProxy`, and the upstream stub (GitHub or Google
shaped, tests/support/upstream_stub.py) it delegates the login to."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcpio import Context, Server
from mcpio.auth import OAuthProxy, TokenVerifier, UpstreamProvider
from tests.support import free_port, serve_app
from tests.support.upstream_stub import Upstream

REDIRECT_URI = "http://127.0.0.1:33418/callback"  # mcpio's OAuth's default


def whoami_server() -> Server:
    server = Server("oauth-proxy-demo", "1.0")

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
    **options: Any,
) -> AsyncIterator[OAuthProxy]:
    """`whoami_server()` behind an `OAuthProxy` for `provider`, served; `options` go to the
    proxy, `verifier` makes the resource server's verifier of it (a `MultiAuth`). The MCP
    endpoint is `proxy.resource`."""
    port = free_port()
    proxy = OAuthProxy(provider, base_url=f"http://127.0.0.1:{port}", **options)
    auth = proxy.resource_server(verifier(proxy) if verifier is not None else None)
    app = whoami_server().http_app(auth=auth, routes=proxy.routes())
    async with serve_app(app, port):
        yield proxy
