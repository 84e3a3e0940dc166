"""Streamable HTTP, the client's side: `HttpTransport`, and the `Auth` it runs.

`HttpTransport` moves JSON-RPC frames over HTTP POSTs (and server-sent event streams) so that a
`Session`, and the `Client` on it, work unchanged over HTTP. It reads each outgoing frame to
choose how to carry it: on 2026-07-28 one POST per request with the routing headers
(`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); on 2025-03-26 .. 2025-11-25
every frame POSTed in the session (`Mcp-Session-Id`), a GET stream for what the server says on
its own, the session DELETEd on close; 2024-11-05 HTTP+SSE when the `initialize` POST fails with
400, 404 or 405.

Every request is settled: any failure to get its response (an HTTP error status, a JSON-RPC
error body, a body that is not JSON or too large, no HTTP exchange at all) puts a JSON-RPC error
response with the request's id into the incoming frames, `data` carrying `{"status": <HTTP
status>}` where there was one. An `Auth` (`HttpTransport(url, auth=...)`) gives the headers of
every HTTP request and is handed a 401 or 403.

The Connecting page of the docs (clients/connecting.md, "Over HTTP") spells out how each
revision is carried, which error settles which failure, and the authorization retries.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import urllib.request
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, cast

import anyio
import anyio.abc
import httpx
import pydantic_core
import sniffio

from mcpio._core.errors import AuthError
from mcpio._core.jsonrpc import RequestId
from mcpio._core.negotiate import envelope_version, peek_any
from mcpio._core.protocol_rules import version_header_required
from mcpio._core.redact import redacted
from mcpio._core.transport import FrameHook
from mcpio.transports._http1 import MAX_CONNECTIONS, Http1Client
from mcpio.transports._http1 import Response as Http1Response
from mcpio.transports._http_rules import (
    ACCEPT_BOTH,
    EVENT_STREAM,
    JSON,
    NAMED_BY,
    ParamHeaders,
    code_of_status,
    encode_header_value,
    media_type,
    mirror_params,
    param_headers,
    plain_header_value,
    x_mcp_header_problem,
)
from mcpio.transports._sse import SseParser
from mcpio.wire._peek import Peek
from mcpio.wire.codec import MAX_MESSAGE_BYTES
from mcpio.wire.errors import INTERNAL_ERROR, INVALID_REQUEST, ProtocolError

log = logging.getLogger("mcpio")

CONNECTION_FAILED = -32000
"""The code of the error that settles a request that got no HTTP answer at all (the code the
official SDKs give a closed connection)."""

MAX_REDIRECTS = 5
# An auth object may have a request sent again twice: after its flow, then with a DPoP nonce.
MAX_AUTH_RETRIES = 2
OLD = (400, 404, 405)  # an `initialize` POST refused so may have met a 2024-11-05 server
MAX_RESUMPTIONS = 3  # reconnections in a row that bring no event
DEFAULT_RETRY = 1.0  # seconds before reconnecting when the server sent no `retry`
_SESSION_ID = re.compile(r"[\x21-\x7e]+")

Answer = httpx.Response | Http1Response
"""A response as the transport reads it: from httpx (a client passed as `http=`, a proxy from the
environment, a loop that is not asyncio's) or from the lean HTTP/1.1 client (the default)."""


# ---------------------------------------------------------------------- the transport


class _TooLarge(Exception):
    pass


class _Inbox:
    """The frames for the session, in order: what `receive` returns (a deque, and an event only
    while the session waits on an empty one: no checkpoint per frame)."""

    def __init__(self) -> None:
        self._items: deque[bytes] = deque()
        self._sending = True
        self._closed = False
        self._waiter: anyio.Event | None = None

    def put(self, raw: bytes) -> None:
        if self._sending:
            self._items.append(raw)
            if self._waiter is not None:
                self._waiter.set()

    def idle(self) -> bool:
        """Whether a reader waits on an empty inbox."""
        return not self._items and self._waiter is not None

    def close_sending(self) -> None:
        """No more frames: `get` drains those there are, then raises `EndOfStream`."""
        self._sending = False
        if self._waiter is not None:
            self._waiter.set()

    def close(self) -> None:
        """Closed: `get` raises `ClosedResourceError`, whatever is left."""
        self._closed = True
        self.close_sending()

    async def get(self) -> bytes:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._items:
                return self._items.popleft()
            if not self._sending:
                raise anyio.EndOfStream
            waiter = self._waiter = anyio.Event()
            try:
                await waiter.wait()
            finally:
                self._waiter = None


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


class _Scope(Protocol):
    """What the transport asks of a request's cancel scope (anyio's, or a `_TaskScope`)."""

    def cancel(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> bool | None: ...


class _TaskScope:
    """A request's cancel scope on the lean client's loop (asyncio's), entered once around the
    whole body of the request's own task: what anyio's scope does there, for a fraction of its
    cost (the task is cancelled; the cancellation ends at the scope's exit)."""

    __slots__ = ("_task", "cancel_called")

    def __init__(self) -> None:
        self._task: asyncio.Task[Any] | None = None
        self.cancel_called = False

    def __enter__(self) -> _TaskScope:
        task = self._task = asyncio.current_task()
        if self.cancel_called and task is not None:  # cancelled before its task began
            task.cancel()
        return self

    def cancel(self) -> None:
        if not self.cancel_called:
            self.cancel_called = True
            if self._task is not None:
                self._task.cancel()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        task, self._task = self._task, None
        if not self.cancel_called or task is None:
            return False
        ours = task.uncancel() == 0  # no one else asked the task to stop
        return ours and exc_type is not None and issubclass(exc_type, asyncio.CancelledError)


@dataclass
class _Post:
    """A request in flight: its POST's cancel scope and how it ended."""

    method: str
    modern: bool
    scope: _Scope = field(default_factory=anyio.CancelScope)
    settled: bool = False  # its response (or an error standing for it) went to the session
    aborted: bool = False  # we closed it (cancellation, a new handshake): nothing to settle


@dataclass
class _Failure:
    code: int
    message: str
    data: Any = None


class HttpTransport:
    """A `Transport` over Streamable HTTP (and 2024-11-05 HTTP+SSE) to the MCP endpoint `url`.

    Use it as an async context manager (it runs a task per POST); `Client("http://...")` does.
    By default the transport sends over its own lean HTTP/1.1 client
    (`mcpio.transports._http1`), or over an httpx client of its own where the environment names
    a proxy for the URL (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, less `NO_PROXY`: what httpx
    honours) or the event loop is not asyncio's; with `auth`, an httpx client also runs the
    authorization flow's own requests. The transport's own clients send `User-Agent:
    mcpio/<version>` (unless `headers` name one). Credentials in `url` (`user:password@`) go
    as HTTP Basic on every request and are taken out of `url` (never shown).

    Args:
        url: The MCP endpoint's http(s) URL.
        headers: Headers sent on every HTTP request (for example a fixed `Authorization`).
        connect_timeout: Seconds to connect (default 10).
        timeout: The HTTP timeout in seconds, but for reads (default 30): it bounds a POST
            that answers a notification and the session's DELETE; streams are read without a
            deadline (keep-alives and the request's own timeout bound them).
        endpoint_timeout: Seconds to wait for a 2024-11-05 server's `endpoint` event
            (default 10).
        max_bytes: The largest message accepted from the server (default
            `MAX_MESSAGE_BYTES`).
        auth: Runs an authorization flow when the server asks for one
            (`mcpio.auth._client.OAuth`).
        http: The `httpx.AsyncClient` to use (its TLS, proxies, transport: a mock in tests),
            left open when the transport closes; it should not follow redirects (a redirect
            is reported, not followed).
        max_connections: At most this many connections to the server at once, on the
            transport's own clients (100 by default; on the lean client per origin, a request
            beyond them waits for one to free up).

    Raises:
        ValueError: `url` is not an http(s) URL, `max_connections` is below 1, or `url` has
            credentials as well as `auth` or an `Authorization` header.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        timeout: float = 30.0,
        endpoint_timeout: float = 10.0,
        max_bytes: int = MAX_MESSAGE_BYTES,
        auth: Auth | None = None,
        http: httpx.AsyncClient | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.url, basic = _without_credentials(url)
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
        self._endpoint_timeout = endpoint_timeout
        # streams are read without a deadline: keep-alives and the request's own timeout bound them
        self._timeouts = httpx.Timeout(timeout, connect=connect_timeout, read=None)
        self.max_bytes = max_bytes
        self._incoming = _Inbox()
        self.on_frame: FrameHook | None = None  # see `_deliver`
        self._stack = AsyncExitStack()
        self._http: httpx.AsyncClient | None = http
        self._own_http = http is None
        self._lean: Http1Client | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._scopes: set[_Scope] = set()  # one per background task
        self._native: set[asyncio.Task[None]] = set()  # the lean client's (asyncio) tasks
        self._unstarted = 0  # background tasks spawned that have not begun to run
        self._closed = False
        self._inflight: dict[RequestId, _Post] = {}
        self.era: str | None = None  # "modern" | "legacy" | "sse" once a frame has told
        self.modern_version: str | None = None
        self.legacy_version: str | None = None
        self.session_id: str | None = None
        self._endpoint: httpx.URL | None = None  # 2024-11-05: where to POST
        self._get_scope: anyio.CancelScope | None = None
        self._sse_scope: anyio.CancelScope | None = None
        self.tool_headers: dict[str, ParamHeaders] = {}
        # (version, method, name) -> a modern request's headers but its `Mcp-Param-*` ones
        self._routing: dict[tuple[str, str, str | None], dict[str, str]] = {}
        self._legacy_key: tuple[str | None, str | None, str] | None = None
        self._legacy: dict[str, str] = {}  # the last legacy headers built, for `_legacy_key`

    # ---------------------------------------------------------------- lifetime

    @property
    def entered(self) -> bool:
        """Whether it is open (entered as an async context manager)."""
        return self._tasks is not None

    async def __aenter__(self) -> HttpTransport:
        agent = user_agent()
        if self._own_http and _lean_fits(self.url):
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
        return self

    async def _join_native(self) -> None:
        while self._native:
            await asyncio.gather(*self._native, return_exceptions=True)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
        await self._stack.aclose()

    async def receive(self) -> bytes:
        """Return the next frame from the server (answers and its own messages).

        Raises `anyio.EndOfStream` once closed.
        """
        try:
            return await self._incoming.get()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        """Stop every stream and end a legacy session (DELETE; a 405 is fine).

        `receive` then raises `EndOfStream`. Safe to call twice.
        """
        if self._closed:
            return
        self._closed = True
        self._incoming.close()
        # Not the task group's own scope: it also spans the code of the task that entered it.
        for scope in list(self._scopes):
            scope.cancel()
        if self.session_id is not None and self.era == "legacy" and self._can_send():
            with anyio.CancelScope(shield=True), anyio.move_on_after(self._timeout):
                try:
                    headers = self._legacy_headers()
                    if self.auth is not None and self._http is not None:
                        headers.update(await self.auth.headers(self.url, self._http, "DELETE"))
                    response = await self._send_once("DELETE", self.url, headers)
                    await response.aclose()
                    if response.status_code not in (200, 202, 204, 404, 405):
                        log.debug("DELETE of the session: HTTP %s", response.status_code)
                except (httpx.HTTPError, OSError) as exc:
                    log.debug("DELETE of the session failed: %s", exc)

    def _spawn(
        self,
        fn: Callable[..., Awaitable[None]],
        *args: Any,
        scope: _Scope | None = None,
    ) -> None:
        """Run `fn` in the background until it ends or the transport closes: in a new cancel
        scope, or in `scope` when given (which `fn` enters itself). On the lean client's loop
        (asyncio's) a plain asyncio task: a fraction of the cost of the task group's."""
        assert self._tasks is not None
        entered = scope is not None
        cancel: _Scope = scope or anyio.CancelScope()
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

    # ---------------------------------------------------------------- outgoing frames

    async def send(self, data: bytes) -> None:
        """POST a frame; its answer arrives through `receive`."""
        if self._closed or self._tasks is None:
            raise anyio.ClosedResourceError
        try:
            env = peek_any(data)
        except ProtocolError:
            env = None
        if env is not None and env.kind == "request" and env.method is not None:
            # A request is carried by its envelope alone (the hot path: no parse of its params).
            self._request(env, data)
            return
        try:
            obj = pydantic_core.from_json(data)
        except ValueError:
            obj = None
        if type(obj) is not dict:  # a batch (2025-03-26) or something unreadable: as it is
            await self._post_message(data, "", self._era_headers(None))
            return
        frame = cast(dict[str, Any], obj)
        method = frame.get("method")
        if type(method) is str and "id" in frame:  # not a valid request: sent as it is
            id = frame["id"]
            self._request(Peek("request", id, method, None, envelope_version(frame)), data)
        elif type(method) is str:
            await self._notification(frame, method, data)
        elif self.era == "modern":
            log.warning("a response to the server has no place on 2026-07-28 HTTP: dropped")
        else:
            await self._post_message(data, "", self._era_headers(None))

    async def send_request(self, data: bytes) -> None:
        """`send`, but a request's exchange runs in the caller's task, to its end.

        Its response (or the error standing for it) is delivered before this returns; no task
        per request (`mcpio._core.transport.Exchanging`: a session's requests). On the lean
        client only; anything else goes by `send`.
        """
        if self._lean is None or self._closed or self._tasks is None:
            await self.send(data)
            return
        try:
            env = peek_any(data)
        except ProtocolError:
            env = None
        if env is None or env.kind != "request" or env.method is None:
            await self.send(data)
            return
        if self._unstarted:  # a task spawned before it has yet to send: not ahead of it
            self._request(env, data)
            return
        id, headers, post = self._prepare(env, data)
        self._scopes.add(post.scope)  # closing the transport ends it
        try:
            await self._run_request(id, data, headers, post)
        finally:
            self._scopes.discard(post.scope)

    def abandon(self, id: RequestId) -> None:
        """Its caller stopped waiting (a timeout): end the request's exchange."""
        self._abort(self._post_of(id))

    def _request(self, env: Peek, data: bytes) -> None:
        id, headers, post = self._prepare(env, data)
        self._spawn(self._run_request, id, data, headers, post, scope=post.scope)

    def _prepare(self, env: Peek, data: bytes) -> tuple[Any, dict[str, str], _Post]:
        """A request's headers and its `_Post`, counted in flight."""
        assert self._tasks is not None and env.method is not None
        id, method, version = env.id, env.method, env.protocol_version
        # on the lean client's loop each request has a task of its own: a cheaper scope
        scope: _Scope = anyio.CancelScope() if self._lean is None else _TaskScope()
        if version is not None:
            self.era, self.modern_version = "modern", version
            post = _Post(method, True, scope)
            headers = self._modern_headers(env, data, method, version)
        else:
            if method == "initialize":
                self._new_handshake()
            post = _Post(method, False, scope)
            headers = self._era_headers(method)
        if type(id) is int or type(id) is str:
            self._inflight[id] = post
        return id, headers, post

    def _new_handshake(self) -> None:
        """`initialize`: a new legacy session; what the probe left in flight is abandoned."""
        for post in self._inflight.values():
            if post.modern:
                post.aborted = True
                post.scope.cancel()
        if self._get_scope is not None:
            self._get_scope.cancel()
        self.session_id = self.legacy_version = None
        if self.era != "sse":
            self.era = "legacy"

    async def _notification(self, frame: dict[str, Any], method: str, data: bytes) -> None:
        params = frame.get("params")
        if method == "notifications/cancelled":
            target = params.get("requestId") if type(params) is dict else None
            post = self._post_of(target)
            if (post is not None and post.modern) or (post is None and self.era == "modern"):
                self._abort(post)  # 2026-07-28: closing the POST is the cancellation
                return
            await self._post_message(data, method, self._era_headers(method))
            self._abort(post)  # legacy: told; its stream is of no more use
            return
        if self.era == "modern":
            version = envelope_version(frame) or self.modern_version
            headers = self._base_headers()
            if plain_header_value(version):
                headers["MCP-Protocol-Version"] = cast(str, version)
            if plain_header_value(method):
                headers["Mcp-Method"] = method
            await self._post_message(data, method, headers)
            return
        accepted = await self._post_message(data, method, self._era_headers(method))
        if method == "notifications/initialized" and accepted and self.era == "legacy":
            self._start_get_stream()

    def _post_of(self, id: Any) -> _Post | None:
        return self._inflight.get(id) if type(id) is int or type(id) is str else None

    def _abort(self, post: _Post | None) -> None:
        if post is not None and not post.settled:
            post.aborted = True
            post.scope.cancel()

    # ---------------------------------------------------------------- headers

    def _base_headers(self, accept: str = ACCEPT_BOTH) -> dict[str, str]:
        return {**self._extra, "Content-Type": JSON, "Accept": accept}

    def _modern_headers(self, env: Peek, data: bytes, method: str, version: str) -> dict[str, str]:
        key = (version, method, env.name)
        routing = self._routing.get(key)
        if routing is None:
            routing = self._routing_headers(version, method, env.name)
            if len(self._routing) >= 256:
                self._routing.clear()
            self._routing[key] = routing
        headers = {**routing}
        spec = self.tool_headers.get(env.name) if method == "tools/call" and env.name else None
        if spec:  # the tool's x-mcp-header parameters: only then are the params read
            params = pydantic_core.from_json(data).get("params")
            arguments = params.get("arguments") if type(params) is dict else None
            if type(arguments) is dict:
                headers.update(mirror_params(spec, cast(dict[str, Any], arguments)))
        return headers

    def _routing_headers(self, version: str, method: str, name: str | None) -> dict[str, str]:
        """The headers of a modern request but for its `Mcp-Param-*` ones."""
        headers = self._base_headers()
        for header, value in (("MCP-Protocol-Version", version), ("Mcp-Method", method)):
            plain = plain_header_value(value)
            if plain is not None:
                headers[header] = plain
        if name is not None and method in NAMED_BY:
            headers["Mcp-Name"] = encode_header_value(name)
        return headers

    def _legacy_headers(self, accept: str = ACCEPT_BOTH) -> dict[str, str]:
        key = (self.session_id, self.legacy_version, accept)
        if self._legacy_key != key:  # the same until the session or its version changes
            self._legacy_key, self._legacy = key, self._new_legacy_headers(accept)
        return {**self._legacy}

    def _new_legacy_headers(self, accept: str) -> dict[str, str]:
        headers = self._base_headers(accept)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        version = self.legacy_version
        if version is not None and version_header_required(version) and plain_header_value(version):
            headers["MCP-Protocol-Version"] = version
        return headers

    def _era_headers(self, method: str | None) -> dict[str, str]:
        if self.era == "sse":
            return {**self._extra, "Content-Type": JSON}
        if method == "initialize":
            return self._base_headers()
        return self._legacy_headers()

    # ---------------------------------------------------------------- HTTP

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
                    seen = _as_httpx(response, method, url)
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
            raise _TooLarge
        whole = response.complete if isinstance(response, Http1Response) else None
        if whole is not None:
            if len(whole) > self.max_bytes:
                raise _TooLarge
            return whole
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise _TooLarge
            chunks.append(chunk)
        return b"".join(chunks)

    async def _post_message(self, data: bytes, method: str, headers: dict[str, str]) -> bool:
        """POST a notification or a response (202 expected); failures are logged, not raised:
        nothing waits for them. True if the server accepted it."""
        url = self._endpoint if self.era == "sse" and self._endpoint is not None else self.url
        try:
            with anyio.fail_after(self._timeout):
                async with self._open("POST", url, headers, data) as response:
                    if response.is_success:
                        return True
                    body = b""
                    try:
                        body = await self._read_body(response)
                    except _TooLarge:
                        pass
                    failure = self._failure(response, body, headers)
                    log.warning("the server refused %s: %s", method or "a message", failure.message)
        except Exception as exc:  # nothing waits for it: say so and go on
            log.warning("could not deliver %s: %s", method or "a message", _describe(exc))
        return False

    async def _run_request(
        self, id: RequestId, data: bytes, headers: dict[str, str], post: _Post
    ) -> None:
        try:
            with post.scope:
                if self.era == "sse" and not post.modern:
                    await self._request_sse_era(id, data, headers, post)
                else:
                    await self._request_streamable(id, data, headers, post)
        except _TooLarge:
            self._settle(id, post, INVALID_REQUEST, self._too_large())
        except AuthError as exc:
            self._settle(id, post, INVALID_REQUEST, f"authorization failed: {exc}")
        except (httpx.HTTPError, OSError) as exc:
            self._settle(id, post, CONNECTION_FAILED, f"HTTP request failed: {_describe(exc)}")
        except Exception as exc:  # no failure may leave a request unsettled or a traceback out
            log.debug("HTTP request %r failed", id, exc_info=True)
            self._settle(id, post, INTERNAL_ERROR, f"HTTP request failed: {_describe(exc)}")
        finally:
            if self._inflight.get(id) is post:
                del self._inflight[id]
        if self.era != "sse" or post.modern:
            self._settle(
                id, post, CONNECTION_FAILED, "the server ended the exchange without a response"
            )

    async def _request_streamable(
        self, id: RequestId, data: bytes, headers: dict[str, str], post: _Post
    ) -> None:
        refused: _Failure | None = None
        async with self._open("POST", self.url, headers, data) as response:
            if post.method == "initialize" and not post.modern and response.status_code in OLD:
                refused = self._failure(response, await self._read_body(response), headers)
            else:
                await self._answered(id, post, response, headers)
        if refused is not None:
            if await self._open_sse_era():  # a 2024-11-05 server?
                await self._request_sse_era(id, data, self._era_headers(None), post)
            else:
                self._settle(id, post, refused.code, refused.message, refused.data)

    async def _answered(
        self, id: RequestId, post: _Post, response: Answer, headers: dict[str, str]
    ) -> None:
        status = response.status_code
        if status == 202:
            message = "the server answered a request with 202 Accepted: no response will come"
            self._settle(id, post, INVALID_REQUEST, message, {"status": status})
            return
        if not response.is_success:
            failure = self._failure(response, await self._read_body(response), headers)
            self._settle(id, post, failure.code, failure.message, failure.data)
            return
        if post.method == "initialize" and not post.modern:
            self._learn_session(response)
        kind = media_type(response.headers.get("content-type", ""))
        if kind == JSON:
            self._deliver_body(id, post, await self._read_body(response))
        elif kind == EVENT_STREAM:
            last_id, retry = await self._read_events(response, id, post)
            if not post.settled and not post.modern and last_id is not None:
                await self._resume(id, post, last_id, retry)
        else:
            message = f"HTTP {status}: unexpected content type {kind or 'none'!r}"
            self._settle(id, post, INTERNAL_ERROR, message, {"status": status})

    async def _read_events(
        self, response: Answer, id: RequestId | None, post: _Post | None
    ) -> tuple[str | None, float | None]:
        """Deliver the frames of an event stream until it ends or brings `post`'s response;
        the last event id and retry interval it gave."""
        parser = SseParser(self.max_bytes)
        async for chunk in response.aiter_bytes():
            for event in parser.feed(chunk):
                if event.too_large:
                    if id is not None and post is not None:
                        self._settle(id, post, INVALID_REQUEST, self._too_large())
                        return None, None
                    log.warning("dropped an event from the server: %s", self._too_large())
                elif event.event == "message" and event.data.strip():  # not a priming event
                    self._deliver(event.data.encode())
                if post is not None and post.settled:
                    return parser.last_event_id, parser.retry
        return parser.last_event_id, parser.retry

    async def _resume(self, id: RequestId, post: _Post, last_id: str, retry: float | None) -> None:
        """A legacy POST stream ended after an event id: GET it back with Last-Event-ID."""
        idle = 0
        while not post.settled and idle < MAX_RESUMPTIONS:
            await anyio.sleep(DEFAULT_RETRY if retry is None else retry)
            headers = self._legacy_headers(EVENT_STREAM)
            headers.pop("Content-Type", None)
            headers["Last-Event-ID"] = last_id
            async with self._open("GET", self.url, headers) as response:
                if (
                    not response.is_success
                    or media_type(response.headers.get("content-type", "")) != EVENT_STREAM
                ):
                    return
                new_id, new_retry = await self._read_events(response, id, post)
            idle = 0 if new_id not in (None, last_id) else idle + 1
            last_id, retry = new_id or last_id, new_retry if new_retry is not None else retry

    def _learn_session(self, response: Answer) -> None:
        session = response.headers.get("mcp-session-id")
        if session is None:
            return
        if _SESSION_ID.fullmatch(session):
            self.session_id = session
        else:
            log.warning("ignored a session id with characters outside 0x21-0x7E")

    # ---------------------------------------------------------------- the GET stream (legacy)

    def _start_get_stream(self) -> None:
        if self._tasks is None or self._closed:
            return
        if self._get_scope is not None:
            self._get_scope.cancel()
        scope = self._get_scope = anyio.CancelScope()
        self._spawn(self._get_stream, scope)

    async def _get_stream(self, scope: anyio.CancelScope) -> None:
        """What the server says outside any request; reconnected when it ends (after `retry`)
        until it stops bringing events."""
        last_id: str | None = None
        retry: float | None = None
        idle = 0
        with scope:
            while idle < MAX_RESUMPTIONS:
                headers = self._legacy_headers(EVENT_STREAM)
                headers.pop("Content-Type", None)
                if last_id is not None:
                    headers["Last-Event-ID"] = last_id
                new_id: str | None = None
                try:
                    async with self._open("GET", self.url, headers) as response:
                        if response.status_code == 405:
                            log.debug("the server offers no GET stream (405)")
                            return
                        if (
                            not response.is_success
                            or media_type(response.headers.get("content-type", "")) != EVENT_STREAM
                        ):
                            log.debug("no GET stream: HTTP %s", response.status_code)
                            return
                        new_id, new_retry = await self._read_events(response, None, None)
                        retry = new_retry if new_retry is not None else retry
                except (httpx.HTTPError, OSError, AuthError) as exc:
                    log.debug("the GET stream failed: %s", _describe(exc))
                idle = 0 if new_id not in (None, last_id) else idle + 1
                last_id = new_id or last_id
                await anyio.sleep(DEFAULT_RETRY if retry is None else retry)

    # ---------------------------------------------------------------- 2024-11-05 HTTP+SSE

    async def _open_sse_era(self) -> bool:
        """GET the URL as an old SSE endpoint; True once its `endpoint` event arrived."""
        if self._tasks is None or self._closed:
            return False
        if self._sse_scope is not None:
            return self._endpoint is not None
        ready = anyio.Event()
        scope = self._sse_scope = anyio.CancelScope()
        self._spawn(self._sse_stream, scope, ready)
        with anyio.move_on_after(self._endpoint_timeout):
            await ready.wait()
        if self._endpoint is None:
            scope.cancel()
            self._sse_scope = None
            return False
        self.era = "sse"
        return True

    async def _sse_stream(self, scope: anyio.CancelScope, ready: anyio.Event) -> None:
        headers = {**self._extra, "Accept": EVENT_STREAM}
        try:
            with scope:
                async with self._open("GET", self.url, headers) as response:
                    if (
                        not response.is_success
                        or media_type(response.headers.get("content-type", "")) != EVENT_STREAM
                    ):
                        return
                    parser = SseParser(self.max_bytes)
                    async for chunk in response.aiter_bytes():
                        for event in parser.feed(chunk):
                            if self._endpoint is None:
                                if event.event != "endpoint" or event.too_large:
                                    return
                                target = self.url.join(event.data.strip())
                                if self._origin(target) != self._origin(self.url):
                                    log.warning("ignored an SSE endpoint on another origin")
                                    return
                                self._endpoint = target
                                ready.set()
                            elif event.too_large:
                                log.warning(
                                    "dropped an event from the server: %s", self._too_large()
                                )
                            elif event.event == "message" and event.data.strip():
                                self._deliver(event.data.encode())
        except (httpx.HTTPError, OSError, AuthError) as exc:
            log.debug("the SSE stream failed: %s", _describe(exc))
        finally:
            ready.set()
            if self._endpoint is not None and not self._closed:
                log.debug("the SSE stream ended: the connection is closed")
                self._incoming.close_sending()  # every answer came this way: none will come now

    async def _request_sse_era(
        self, id: RequestId, data: bytes, headers: dict[str, str], post: _Post
    ) -> None:
        assert self._endpoint is not None
        async with self._open("POST", self._endpoint, headers, data) as response:
            if response.is_success:
                return  # the answer comes on the SSE stream
            failure = self._failure(response, await self._read_body(response), headers)
            self._settle(id, post, failure.code, failure.message, failure.data)

    # ---------------------------------------------------------------- incoming frames

    def _deliver(self, raw: bytes, env: Peek | None = None) -> None:
        """Hand a frame to the session, learning on the way what the transport needs from it
        (the negotiated legacy version, the tools' x-mcp-header annotations). A response is
        read by its envelope (`env`, peeked when not given); only the results the transport
        learns from, and frames peek refuses, are parsed whole."""
        if env is None:
            try:
                env = peek_any(raw)
            except ProtocolError:
                pass
        if env is not None and env.kind in ("result", "error"):
            post = self._post_of(env.id)
            if post is not None:
                if post.settled:
                    return  # an error already stood for it
                if env.kind == "result" and (
                    post.method == "tools/list" or (post.method == "initialize" and not post.modern)
                ):
                    self._deliver_parsed(raw)
                    return
                post.settled = True
                settle = self.on_frame
                if settle is not None and self._idle() and settle(raw, env.id):
                    return  # settled by its envelope: the session reads it no more
        elif env is None:
            self._deliver_parsed(raw)
            return
        self._incoming.put(raw)

    def _idle(self) -> bool:
        """Whether the session's read loop waits with nothing queued: a response settled now
        keeps its place after the frames read before it."""
        return self._incoming.idle()

    def _deliver_parsed(self, raw: bytes) -> None:
        """`_deliver`, the frame parsed whole."""
        try:
            obj = pydantic_core.from_json(raw)
        except ValueError:
            obj = None
        if type(obj) is dict and "method" not in obj:
            frame = cast(dict[str, Any], obj)
            id = frame.get("id")
            post = self._post_of(id)
            if post is not None:
                if post.settled:
                    return  # an error already stood for it
                post.settled = True
                result = frame.get("result")
                if type(result) is dict:
                    result = cast(dict[str, Any], result)
                    if post.method == "initialize" and not post.modern:
                        version = result.get("protocolVersion")
                        self.legacy_version = version if type(version) is str else None
                    elif post.method == "tools/list":
                        raw = self._learn_tools(frame, result, raw, post.modern)
        self._incoming.put(raw)

    def _learn_tools(
        self, frame: dict[str, Any], result: dict[str, Any], raw: bytes, modern: bool
    ) -> bytes:
        tools = result.get("tools")
        if type(tools) is not list:
            return raw
        kept: list[Any] = []
        for tool in cast(list[Any], tools):
            name = tool.get("name") if type(tool) is dict else None
            if type(name) is not str:
                kept.append(tool)
                continue
            schema = cast(dict[str, Any], tool).get("inputSchema")
            problem = x_mcp_header_problem(schema)
            if problem is not None:
                self.tool_headers.pop(name, None)
                if modern:
                    log.warning("dropped tool %r from tools/list: %s", name, problem)
                    continue
            else:
                headers = param_headers(schema)
                if headers:
                    self.tool_headers[name] = headers
                else:
                    self.tool_headers.pop(name, None)
            kept.append(tool)
        if len(kept) == len(tools):
            return raw
        return pydantic_core.to_json({**frame, "result": {**result, "tools": kept}})

    def _deliver_body(self, id: RequestId, post: _Post, body: bytes) -> None:
        try:
            env = peek_any(body)
        except ProtocolError:
            env = None
        if env is not None and env.kind in ("result", "error") and env.id == id:
            self._deliver(body, env)  # the answer to this request: its envelope says enough
            return
        try:
            obj = pydantic_core.from_json(body)
        except ValueError:
            self._settle(id, post, INTERNAL_ERROR, "the server's answer is not JSON")
            return
        if type(obj) is dict and ("result" in obj or "error" in obj):
            frame = cast(dict[str, Any], obj)
            if frame.get("id") == id:
                self._deliver(body)
                return
            if frame.get("id") is None and type(frame.get("error")) is dict:
                self._deliver(pydantic_core.to_json({**frame, "id": id}))
                return
            self._deliver(body)
        message = "the server's answer is not a JSON-RPC response to this request"
        self._settle(id, post, INTERNAL_ERROR, message)

    def _settle(
        self, id: RequestId, post: _Post, code: int, message: str, data: Any = None
    ) -> None:
        """Put an error response standing for `post`'s missing response into the incoming
        frames (unless it was answered, or we abandoned it)."""
        if post.settled or post.aborted or self._closed:
            return
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._deliver(pydantic_core.to_json({"jsonrpc": "2.0", "id": id, "error": error}))

    def _failure(self, response: Answer, body: bytes, headers: Mapping[str, str]) -> _Failure:
        """What a failed HTTP exchange means for its request (see the module's docstring)."""
        status = response.status_code
        reason = f"HTTP {status}: {response.reason_phrase or 'error'}"
        if status == 404 and "Mcp-Session-Id" in headers:
            return _Failure(
                INVALID_REQUEST,
                f"the session expired ({reason}); a new connection starts a new one",
                {"status": status, "sessionExpired": True},
            )
        try:
            obj = pydantic_core.from_json(body) if body else None
        except ValueError:
            obj = None
        error = obj.get("error") if type(obj) is dict else None
        if type(error) is dict:
            error = cast(dict[str, Any], error)
            code, message = error.get("code"), error.get("message")
            if type(code) is int and type(message) is str:
                return _Failure(code, message, error.get("data"))
        if 300 <= status < 400:
            location = response.headers.get("location")
            if location:
                reason += f"; the redirect to {location} was not followed"
            return _Failure(INVALID_REQUEST, reason, {"status": status})
        return _Failure(code_of_status(status), reason, {"status": status})

    def _too_large(self) -> str:
        return f"the server's message exceeds the {self.max_bytes}-byte limit"


def user_agent() -> str:
    """The User-Agent the transport's own clients send: `mcpio/<version>` (read when a
    transport opens: importing mcpio does not pay for the package metadata)."""
    from mcpio._version import __version__

    return f"mcpio/{__version__}"


def _without_credentials(url: str) -> tuple[httpx.URL, str | None]:
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


def _lean_fits(url: httpx.URL) -> bool:
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


def _as_httpx(response: Answer, method: str, url: httpx.URL) -> httpx.Response:
    """The status and headers of a lean response as an httpx one (what `Auth.challenge` reads)."""
    if isinstance(response, httpx.Response):
        return response
    return httpx.Response(
        response.status_code,
        headers=list(response.headers.items()),
        request=httpx.Request(method, url),
    )


def _describe(exc: BaseException) -> str:
    """A one-line account of a failure, without a traceback."""
    text = str(exc).strip().splitlines()
    name = type(exc).__name__
    return f"{name}: {text[0]}" if text else name


__all__ = ["CONNECTION_FAILED", "Auth", "HttpTransport"]
