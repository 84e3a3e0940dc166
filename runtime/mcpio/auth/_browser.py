"""`Client(url, auth="oauth")` (FastMCP's spelling): the OAuth authorization code flow with the
user's browser as its redirect step.

`BrowserRedirect` listens on the redirect URI's host and port (`http://127.0.0.1:33418/callback`
by default) before it opens the authorization URL in the browser (`webbrowser`), then answers
the one request to the redirect URI's path, which carries the code, and returns its URL. Other
paths (a browser's `/favicon.ico`) get a 404; nothing reached it in `timeout` seconds: an
`AuthError`. Tokens live in the `OAuth` object's store (memory: one process)."""

from __future__ import annotations

import webbrowser
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
import anyio.abc

from mcpio._core.errors import AuthError
from mcpio._core.extras import needs

if TYPE_CHECKING:
    from mcpio.auth._client import OAuth

_PAGE = b"Signed in: you may close this window and return to the application.\n"
_HEAD_LIMIT = 16384  # a redirect's request line and headers, at most


class BrowserRedirect:
    """The redirect step of `OAuth(redirect=...)`: the browser opened on the authorization
    URL, the redirect received by a one-shot local HTTP server.

    Args:
        redirect_uri: The loopback URI the authorization server redirects to.
        timeout: Seconds to wait for the redirect.
        open_url: Opens the authorization URL (default: `webbrowser.open`).
    """

    def __init__(
        self,
        redirect_uri: str,
        timeout: float = 300.0,
        open_url: Callable[[str], Any] = webbrowser.open,
    ) -> None:
        parts = urlsplit(redirect_uri)
        if parts.scheme != "http" or parts.hostname is None or parts.port is None:
            raise ValueError(f"a browser redirect needs http://host:port/path, not {redirect_uri}")
        self.redirect_uri = redirect_uri
        self._host, self._port, self._path = parts.hostname, parts.port, parts.path or "/"
        self._timeout = timeout
        self._open_url = open_url

    async def __call__(self, url: str) -> str:
        received: list[str] = []
        listener = await anyio.create_tcp_listener(local_host=self._host, local_port=self._port)
        with anyio.move_on_after(self._timeout):
            async with anyio.create_task_group() as group:

                async def handle(stream: anyio.abc.SocketStream) -> None:
                    async with stream:
                        target = await _request_target(stream)
                        if target is None or urlsplit(target).path != self._path:
                            await _answer(stream, b"404 Not Found", b"Not found.\n")
                            return
                        await _answer(stream, b"200 OK", _PAGE)
                        received.append(target)
                        group.cancel_scope.cancel()

                group.start_soon(listener.serve, handle)
                self._open_url(url)
        if not received:
            await listener.aclose()
            raise AuthError(f"no redirect reached {self.redirect_uri} in {self._timeout:g} s")
        return f"http://{self._host}:{self._port}{received[0]}"


async def _request_target(stream: anyio.abc.SocketStream) -> str | None:
    """The path and query of an HTTP request's first line (None: not a GET request)."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < _HEAD_LIMIT:
        try:
            head += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            break
    words = head.split(b"\r\n", 1)[0].split()
    if len(words) != 3 or words[0] != b"GET":
        return None
    return words[1].decode("latin-1")


async def _answer(stream: anyio.abc.SocketStream, status: bytes, body: bytes) -> None:
    head = b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain; charset=utf-8\r\n"
    head += b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    try:
        await stream.send(head + body)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass


def browser_oauth() -> OAuth:
    """The auth object of `auth="oauth"`: `OAuth` with its default redirect URI, the user's
    browser as its redirect step."""
    with needs("http", "the OAuth client"):
        from mcpio.auth._client import OAuth

    redirect_uri = OAuth.redirect_uri
    return OAuth(redirect=BrowserRedirect(redirect_uri), redirect_uri=redirect_uri)
