"""What every HTTP era of the client's transport uses (`HttpBase`, the base of `HttpTransport`):
the HTTP client (the lean `_http1` one, or httpx), the headers and credentials every request
carries, the frames for the session and the requests in flight, the background tasks, one HTTP
exchange with its authorization retries and same-origin redirects, the size limit on a body.

`_http_answers` reads what comes back on it; the eras (`_http_modern`, `_http_streamable`,
`_http_sse_legacy`) build on both.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Protocol

import anyio
import anyio.abc
import httpx
import sniffio

from mcpio._core.jsonrpc import RequestId
from mcpio._core.redact import redacted
from mcpio._core.transport import FrameHook
from mcpio.transports._http1 import Http1Client
from mcpio.transports._http1 import Response as Http1Response
from mcpio.transports._http_inbox import Inbox, Post, Scope
from mcpio.transports._http_rules import ACCEPT_BOTH, JSON

log = logging.getLogger("mcpio")

CONNECTION_FAILED = -32000
"""The code of the error that settles a request that got no HTTP answer at all (the code the
official SDKs give a closed connection)."""

MAX_REDIRECTS = 5
# An auth object may have a request sent again twice: after its flow, then with a DPoP nonce.
MAX_AUTH_RETRIES = 2

Answer = httpx.Response | Http1Response
"""A response as the transport reads it: from httpx (a client passed as `http=`, a proxy from the
environment, a loop that is not asyncio's) or from the lean HTTP/1.1 client (the default)."""


class TooLarge(Exception):
    """The server's message exceeds `max_bytes`."""


class Auth(Protocol):
    """What the transport asks of an auth object (see `mcpio.auth._client.OAuth`)."""

    async def headers(
        self, url: httpx.URL, http: httpx.AsyncClient, method: str = "POST"
    ) -> dict[str, str]:
        """Return the headers for a `method` request to `url`.

        They are `Authorization`, and `DPoP` with a proof bound to that method and URL: asked
        anew for every HTTP request sent.

        Args:
            url: The URL the request goes to.
            http: The httpx client the authorization flow's own requests go through.
            method: The request's HTTP method.
        """
        ...

    async def challenge(
        self,
        url: httpx.URL,
        response: httpx.Response,
        sent: Mapping[str, str],
        http: httpx.AsyncClient,
    ) -> bool:
        """Handle a 401 or 403 that answered a request; True to send it again.

        The request went with the headers `sent`; sent again, it gets fresh `headers`.

        Args:
            url: The URL the request went to.
            response: The 401 or 403 response.
            sent: The headers the request was sent with.
            http: The httpx client the authorization flow's own requests go through.

        Raises:
            AuthError: The flow fails.
        """
        ...

    def succeeded(self) -> None:
        """Be told that a request went through.

        (An auth object may also have `dpop_nonce(url, nonce)`, told the `DPoP-Nonce` a
        successful answer carries: `mcpio.auth._client.OAuth`'s.)
        """
        ...


class HttpBase:
    """The HTTP exchanges of `HttpTransport` (see its docstring for the arguments), whatever
    the era that carries them."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None,
        connect_timeout: float,
        timeout: float,
        max_bytes: int,
        auth: Auth | None,
        http: httpx.AsyncClient | None,
        max_connections: int,
    ) -> None:
        self.url, basic = without_credentials(url)
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        self.auth = auth
        self._extra = dict(headers or {})
        if basic is not None:
            if auth is not None or any(k.lower() == "authorization" for k in self._extra):
                raise ValueError(
                    "credentials in the URL and auth= or an Authorization header: give one"
                )
            self._extra["Authorization"] = basic
        self._timeout = timeout  # a POST that answers a notification, the DELETE
        # streams are read without a deadline: keep-alives and the request's own timeout bound them
        self._timeouts = httpx.Timeout(timeout, connect=connect_timeout, read=None)
        self.max_bytes = max_bytes
        self._incoming = Inbox()
        self.on_frame: FrameHook | None = None  # see `HttpTransport._deliver`
        self._stack = AsyncExitStack()
        self._http: httpx.AsyncClient | None = http
        self._own_http = http is None
        self._lean: Http1Client | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._scopes: set[Scope] = set()  # one per background task
        self._native: set[asyncio.Task[None]] = set()  # the lean client's (asyncio) tasks
        self._unstarted = 0  # background tasks spawned that have not begun to run
        self._closed = False
        self._inflight: dict[RequestId, Post] = {}
        self.era: str | None = None  # "modern" | "legacy" | "sse" once a frame has told

    # ---------------------------------------------------------------- lifetime

    async def _open_clients(self) -> None:
        """Choose the HTTP client (see `HttpTransport`) and open it, and the task group."""
        agent = user_agent()
        if self._own_http and lean_fits(self.url):
            self._lean = Http1Client(
                connect_timeout=self._timeouts.connect or 10.0,
                max_connections=self.max_connections,
                user_agent=agent,
            )
            self._stack.push_async_callback(self._lean.aclose)
        if self._own_http and (self._lean is None or self.auth is not None):
            limits = httpx.Limits(max_connections=self.max_connections)
            http = httpx.AsyncClient(
                follow_redirects=False, http2=False, limits=limits, headers={"User-Agent": agent}
            )
            self._http = await self._stack.enter_async_context(http)
        self._tasks = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.push_async_callback(self._join_native)

    async def _join_native(self) -> None:
        while self._native:
            await asyncio.gather(*self._native, return_exceptions=True)

    def _stop(self) -> None:
        """Closed: the inbox, and every background task (not the task group's own scope: it
        also spans the code of the task that entered it)."""
        self._closed = True
        self._incoming.close()
        for scope in list(self._scopes):
            scope.cancel()

    def _spawn(
        self,
        fn: Callable[..., Awaitable[None]],
        *args: Any,
        scope: Scope | None = None,
    ) -> None:
        """Run `fn` in the background until it ends or the transport closes: in a new cancel
        scope, or in `scope` when given (which `fn` enters itself). On the lean client's loop
        (asyncio's) a plain asyncio task: a fraction of the cost of the task group's."""
        assert self._tasks is not None
        entered = scope is not None
        cancel: Scope = scope or anyio.CancelScope()
        self._scopes.add(cancel)
        native = self._lean is not None
        started = False

        async def run() -> None:
            nonlocal started
            started = True
            if native:
                self._unstarted -= 1
            try:
                if entered:
                    await fn(*args)
                else:
                    with cancel:
                        await fn(*args)
            finally:
                self._scopes.discard(cancel)

        if not native:
            self._tasks.start_soon(run)
            return
        self._unstarted += 1  # until it runs (`send_request` does not pass it)
        task = asyncio.get_running_loop().create_task(run())
        self._native.add(task)
        task.add_done_callback(lambda task: self._ended(task, started))

    def _ended(self, task: asyncio.Task[None], started: bool) -> None:
        self._native.discard(task)
        if not started:  # cancelled before it began
            self._unstarted -= 1

    # ---------------------------------------------------------------- HTTP

    def _base_headers(self, accept: str = ACCEPT_BOTH) -> dict[str, str]:
        return {**self._extra, "Content-Type": JSON, "Accept": accept}

    def _origin(self, url: httpx.URL) -> tuple[str, str, int | None]:
        default = {"http": 80, "https": 443}.get(url.scheme)
        return url.scheme, url.host, url.port or default

    @asynccontextmanager
    async def _open(
        self, method: str, url: httpx.URL, headers: dict[str, str], content: bytes | None = None
    ) -> AsyncIterator[Answer]:
        """One HTTP exchange, streamed; a 307/308 is followed within the endpoint's origin only
        (anything else comes back as it is, to be reported)."""
        http = self._http
        if not self._can_send():
            raise httpx.TransportError("the transport is not open")
        hops = 0
        retries = 0
        while True:
            sent = headers
            if self.auth is not None and http is not None:
                sent = {**headers, **await self.auth.headers(url, http, method)}
            response = await self._send_once(method, url, sent, content)
            if (
                self.auth is not None
                and http is not None
                and response.status_code in (401, 403)
                and retries < MAX_AUTH_RETRIES
            ):
                try:
                    seen = as_httpx(response, method, url)
                    again = await self.auth.challenge(self.url, seen, sent, http)
                except BaseException:
                    await response.aclose()
                    raise
                if again:
                    await response.aclose()
                    retries += 1
                    continue
            elif self.auth is not None and response.is_success and "Authorization" in sent:
                self.auth.succeeded()
                nonce = response.headers.get("dpop-nonce")
                take = getattr(self.auth, "dpop_nonce", None) if nonce is not None else None
                if take is not None:
                    take(url, nonce)
            location = response.headers.get("location")
            if response.status_code not in (307, 308) or location is None or hops >= MAX_REDIRECTS:
                break
            target = url.join(location)
            if self._origin(target) != self._origin(self.url):
                break
            await response.aclose()
            url, hops = target, hops + 1
        try:
            yield response
        finally:
            await response.aclose()

    def _can_send(self) -> bool:
        return self._lean is not None or self._http is not None

    async def _send_once(
        self, method: str, url: httpx.URL, headers: dict[str, str], content: bytes | None = None
    ) -> Answer:
        """One HTTP request, its response's body left to stream."""
        if self._lean is not None:
            return await self._lean.send(method, url, headers, content)
        assert self._http is not None
        request = self._http.build_request(
            method, url, headers=headers, content=content, timeout=self._timeouts
        )
        return await self._http.send(request, stream=True)

    async def _read_body(self, response: Answer) -> bytes:
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_bytes:
            raise TooLarge
        whole = response.complete if isinstance(response, Http1Response) else None
        if whole is not None:
            if len(whole) > self.max_bytes:
                raise TooLarge
            return whole
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise TooLarge
            chunks.append(chunk)
        return b"".join(chunks)


def user_agent() -> str:
    """The User-Agent the transport's own clients send: `mcpio/<version>` (read when a
    transport opens: importing mcpio does not pay for the package metadata)."""
    from mcpio._version import __version__

    return f"mcpio/{__version__}"


def without_credentials(url: str) -> tuple[httpx.URL, str | None]:
    """`url` without its user info, and that user info as an HTTP Basic `Authorization` value
    (None when it has none): the credentials go on every request, as httpx would send them, and
    never appear in `HttpTransport.url`, a repr, a log line or an error message."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        raise ValueError(f"not an http(s) URL: {redacted(str(url))!r}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"not an http(s) URL: {redacted(str(parsed))!r}")
    if not parsed.userinfo:
        return parsed, None
    pair = f"{parsed.username}:{parsed.password}".encode()  # RFC 7617: UTF-8
    basic = "Basic " + base64.b64encode(pair).decode("ascii")
    return parsed.copy_with(username=None, password=None), basic


def lean_fits(url: httpx.URL) -> bool:
    """Whether the lean HTTP/1.1 client can carry the transport's exchanges: on asyncio's loop,
    with no proxy from the environment for `url` (httpx's path honours those)."""
    try:
        if sniffio.current_async_library() != "asyncio":
            return False
    except sniffio.AsyncLibraryNotFoundError:
        return False
    proxies = urllib.request.getproxies()
    if not any(proxies.get(key) for key in (url.scheme, "all")):
        return True
    return bool(urllib.request.proxy_bypass(url.host))


def as_httpx(response: Answer, method: str, url: httpx.URL) -> httpx.Response:
    """The status and headers of a lean response as an httpx one (what `Auth.challenge` reads)."""
    if isinstance(response, httpx.Response):
        return response
    return httpx.Response(
        response.status_code,
        headers=list(response.headers.items()),
        request=httpx.Request(method, url),
    )


def describe(exc: BaseException) -> str:
    """A one-line account of a failure, without a traceback."""
    text = str(exc).strip().splitlines()
    name = type(exc).__name__
    return f"{name}: {text[0]}" if text else name
