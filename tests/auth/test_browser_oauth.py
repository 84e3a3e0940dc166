"""`Client(url, auth="oauth")` (FastMCP's spelling, issue 51 item 8): the OAuth flow with the
browser as its redirect step, a one-shot loopback server receiving the redirect."""

from __future__ import annotations

import anyio
import httpx
import pytest

from mcpio import Client
from mcpio._core.errors import AuthError
from mcpio.auth import OAuth
from mcpio.auth._browser import BrowserRedirect
from tests.support import free_port

pytestmark = pytest.mark.anyio

AUTHORIZE = "https://as.test/authorize?client_id=c&state=s"


async def test_the_redirect_is_received_on_the_loopback_and_returned() -> None:
    port = free_port()
    opened: list[str] = []
    statuses: list[int] = []
    redirect = BrowserRedirect(f"http://127.0.0.1:{port}/callback", open_url=opened.append)

    async def browser() -> None:
        while not opened:
            await anyio.sleep(0.01)
        async with httpx.AsyncClient() as http:
            statuses.append((await http.get(f"http://127.0.0.1:{port}/favicon.ico")).status_code)
            back = await http.get(f"http://127.0.0.1:{port}/callback?code=abc&state=s")
            statuses.append(back.status_code)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(browser)
            received = await redirect(AUTHORIZE)
    assert opened == [AUTHORIZE]
    assert statuses == [404, 200]
    assert received == f"http://127.0.0.1:{port}/callback?code=abc&state=s"


async def test_no_redirect_in_time_is_an_auth_error_and_the_port_is_freed() -> None:
    port = free_port()
    redirect = BrowserRedirect(f"http://127.0.0.1:{port}/cb", timeout=0.1, open_url=lambda u: None)
    with pytest.raises(AuthError, match="no redirect reached"):
        await redirect(AUTHORIZE)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    await listener.aclose()


def test_a_redirect_uri_that_is_no_loopback_http_url_is_refused() -> None:
    with pytest.raises(ValueError, match="http://host:port/path"):
        BrowserRedirect("https://example.com/cb")


def test_auth_oauth_runs_the_flow_instead_of_sending_a_bearer_token() -> None:
    client = Client("https://example.com/mcp", auth="oauth")
    auth = vars(client)["_auth"]
    assert isinstance(auth, OAuth) and isinstance(auth.redirect, BrowserRedirect)
    assert auth.redirect.redirect_uri == auth.redirect_uri == OAuth.redirect_uri
    assert not vars(client)["_principal"].startswith("bearer:")
    with pytest.raises(ValueError, match="for an http"):
        Client(["python3", "server.py"], auth="oauth")
