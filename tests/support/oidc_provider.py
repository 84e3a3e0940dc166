"""oidc-provider (a certified OpenID provider, tests/oidc) run under node on 127.0.0.1 for the
OAuth proxy's tests, with the proxy's fixed client registered."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from anyio.streams.text import TextReceiveStream

from tests.support import free_port

CLIENT_ID = "mcp-proxy"
CLIENT_SECRET = "oidc-client-secret-5c4b3a"


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
