"""oidc-provider (a certified OpenID provider, tests/oidc) run under node on 127.0.0.1 for the
OAuth proxy's tests, with the proxy's fixed client registered; and the proxy served in front of
it."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.text import TextReceiveStream

from mcpio.auth import OAuthProxy, OIDCProvider
from tests.support import free_port
from tests.support.oauth_proxy import serve_proxy

CLIENT_ID = "mcp-proxy"
CLIENT_SECRET = "oidc-client-secret-5c4b3a"
SCOPES = ("openid", "email", "profile", "groups")
USER = {"login": "ada", "password": "any password"}  # what the browser types at its login


@asynccontextmanager
async def oidc_provider(package: Path, redirect_uri: str) -> AsyncIterator[str]:
    """oidc-provider serving while the block runs, its client's redirect URI `redirect_uri`;
    yields its issuer URL."""
    node = shutil.which("node")
    assert node is not None, "node must be on PATH"
    port = free_port()
    command = [node, "provider.mjs", str(port), CLIENT_ID, CLIENT_SECRET, redirect_uri]
    process = await anyio.open_process(command, cwd=package)
    try:
        assert process.stdout is not None
        with anyio.fail_after(20):
            async for text in TextReceiveStream(process.stdout):
                if "listening" in text:
                    break
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        with anyio.move_on_after(5):
            await process.wait()
        await process.aclose()


@asynccontextmanager
async def proxy_before_oidc_provider(package: Path, **options: Any) -> AsyncIterator[OAuthProxy]:
    """`whoami_server` behind an `OAuthProxy` whose upstream is oidc-provider, both served on
    127.0.0.1 while the block runs; `options` go to the proxy."""
    port = free_port()
    async with oidc_provider(package, f"http://127.0.0.1:{port}/callback") as issuer:
        provider = OIDCProvider(issuer, CLIENT_ID, CLIENT_SECRET, list(SCOPES))
        async with serve_proxy(provider, port, **options) as proxy:
            yield proxy
