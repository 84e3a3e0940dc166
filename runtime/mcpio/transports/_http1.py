"""A lean HTTP/1.1 client: the default carrier of `HttpTransport`'s exchanges (issue 37).

httptools' C parser on an asyncio `Protocol`, and a keep-alive pool per origin (a stack of idle
connections: the last one used goes out first). It does what the transport asks and nothing else:
one request written whole, the response's status and headers awaited, its body streamed (or
read whole); at most `max_connections` connections open per origin at once (a request beyond
them waits for one to come back or close); no redirects, cookies, content decoding (it sends no
`Accept-Encoding`) or proxies: the transport follows its own redirects, and takes httpx's path
where the environment names a proxy for its URL. TLS verifies certificates with httpx's context (its CA bundle,
`SSL_CERT_FILE` / `SSL_CERT_DIR`), as the httpx path does. As httpx, it skips interim (1xx)
responses, drops a chunked body's trailer fields and strips the whitespace around a field's value
(tests/transports/test_http1_differential.py holds the two clients equal).

Every failure to complete an exchange raises an `HttpConnectionError` (an `OSError`), named as
httpx names it: `ConnectError` (refused, unreachable, TLS refused), `ConnectTimeout` (no
connection within `connect_timeout`), `RemoteProtocolError` (closed early, a response that does
not parse). A connection goes back to the pool only after its
response was read to the end and the server keeps it alive; one closed early (cancellation, an
event stream left before its end) is closed.
"""

from __future__ import annotations

import asyncio
import select
import ssl
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping

import httptools
import httpx

MAX_IDLE = 32  # idle connections kept per origin
MAX_CONNECTIONS = 100  # connections open per origin at once (by default; httpx's pool limit)
HIGH_WATER = 1 << 18  # unread body bytes above which the socket stops being read
MAX_BLOCKS = 256  # encoded header blocks kept (a transport sends a few sets, again and again)
_Origin = tuple[str, str, int]


class HttpConnectionError(ConnectionError):
    """An HTTP exchange that could not complete."""


# named as httpx names them: what a failed request's error message says stays the same
class ConnectError(HttpConnectionError):
    """No connection to the server."""


class ConnectTimeout(HttpConnectionError):
    """No connection to the server within the connect timeout."""


class RemoteProtocolError(HttpConnectionError):
    """The server closed the connection early, or answered what does not parse as HTTP."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection: the parser's callbacks fill the current response's state."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.origin: _Origin = ("", "", 0)
        self.on_lost: Callable[[_Connection], None] | None = None  # the pool's count of it
        self.loop = asyncio.get_running_loop()
        self.fd = -1  # the socket's, for the check before reuse (`_readable`)
        self.reset()

    def reset(self) -> None:
        self.reason = ""
        self.headers: dict[str, str] = {}
        self.raw_headers: list[tuple[bytes, bytes]] = []  # as received (a relay's copy)
        self.status = 0
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.headers_done = False
        self.interim = False  # a 1xx response is being parsed: the final one follows it
        self.complete = False
        self.keep_alive = False

    # ---------------------------------------------------------------- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        self.fd = sock.fileno() if sock is not None else -1

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self.fail(RemoteProtocolError(f"the server's response does not parse: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        # a body without a length nor chunks ends with the connection
        if self.headers_done and not self.complete and self._until_close():
            self.complete = True
        if not self.complete:
            self.error = self.error or RemoteProtocolError(
                "the server closed the connection" + (f": {exc}" if exc else "")
            )
        self.wake()
        on_lost, self.on_lost = self.on_lost, None
        if on_lost is not None:
            on_lost(self)

    def _until_close(self) -> bool:
        return "content-length" not in self.headers and "chunked" not in self.headers.get(
            "transfer-encoding", ""
        )

    # ---------------------------------------------------------------- httptools callbacks

    def on_status(self, status: bytes) -> None:
        self.reason += status.decode("latin-1")

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.headers_done:  # a trailer field: not one of the headers (RFC 9110 6.5.1)
            return
        value = value.strip(b" \t")  # without its surrounding whitespace (RFC 9110 5.5)
        self.raw_headers.append((name, value))
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        old = self.headers.get(key)
        self.headers[key] = text if old is None else f"{old}, {text}"

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200 and status != 101:  # interim (100 Continue, 103 Early Hints):
            self.interim = True  # skipped, as httpx does (RFC 9110 15.2)
            self.reason, self.headers, self.raw_headers = "", {}, []
            return
        self.status = status
        self.headers_done = True
        self.wake()

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.buffered += len(body)
        if self.buffered > HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
        self.wake()

    def on_message_complete(self) -> None:
        if self.interim:
            self.interim = False
            return
        self.complete = True
        self.keep_alive = self.parser.should_keep_alive()
        self.wake()

    # ---------------------------------------------------------------- for the response

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def fail(self, error: BaseException) -> None:
        self.error = error
        self.close()
        self.wake()

    async def wait(self) -> None:
        """Until the parser or the socket has news."""
        if self.error is not None:
            raise self.error
        self.waiter = self.loop.create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None
        if self.error is not None and not self.complete:
            raise self.error

    def take(self) -> list[bytes]:
        chunks, self.chunks, self.buffered = self.chunks, [], 0
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()
        return chunks

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class Response:
    """A response whose body is read from its connection as it comes (`aiter_bytes`, `read`);
    `aclose` gives the connection back (body read to the end) or closes it."""

    __slots__ = (
        "status_code",
        "reason_phrase",
        "headers",
        "raw_headers",
        "_conn",
        "_pool",
        "_done",
    )

    def __init__(self, conn: _Connection, pool: Http1Client) -> None:
        self.status_code = conn.status
        self.reason_phrase = conn.reason
        self.headers: Mapping[str, str] = conn.headers  # names in lower case
        self.raw_headers = conn.raw_headers
        self._conn = conn
        self._pool = pool
        self._done = False

    @property
    def is_success(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status_code < 300

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's chunks as they arrive."""
        conn = self._conn
        while True:
            chunks = conn.take()
            if chunks:  # what came while the reader held the last ones is taken first: a
                for chunk in chunks:  # wake-up then was lost, and reading may be paused
                    yield chunk
                continue
            if conn.complete:
                return
            await conn.wait()

    @property
    def complete(self) -> bytes | None:
        """The whole body when it has all arrived (a small JSON answer usually comes in one
        read with its headers), else None: then read it with `aiter_bytes`."""
        conn = self._conn
        return b"".join(conn.take()) if conn.complete else None

    async def aclose(self) -> None:
        """Give the connection back to the pool."""
        if not self._done:
            self._done = True
            self._pool.release(self._conn)


class Http1Client:
    """Keep-alive HTTP/1.1 connections per origin, `max_connections` at most open to each;
    `send` one request at a time on each. `user_agent`: the User-Agent header of a request
    that does not name one."""

    def __init__(
        self,
        *,
        connect_timeout: float = 10.0,
        max_connections: int = MAX_CONNECTIONS,
        user_agent: str | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.connect_timeout = connect_timeout
        self.max_connections = max_connections
        self.user_agent = user_agent
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._open: dict[_Origin, int] = {}  # connections open (or opening) per origin
        self._waiting: dict[_Origin, deque[asyncio.Future[None]]] = {}  # for one to free up
        self._ssl: ssl.SSLContext | None = None
        # (method, URL) -> the request line and Host header; the URL held: its id is the key
        self._heads: dict[tuple[str, int], tuple[httpx.URL, _Origin, bytes]] = {}
        self._blocks: dict[tuple[tuple[str, str], ...], bytes] = {}  # headers -> their lines
        self._closed = False

    async def send(
        self,
        method: str,
        url: httpx.URL,
        headers: Mapping[str, str] | list[tuple[str, str]],
        content: bytes | None = None,
    ) -> Response:
        """Write the request and wait for its response's status and headers. `headers` are
        sent as they are (a list may repeat a name), with Host and, when there is `content`,
        Content-Length added."""
        origin, head = self._head(method, url)
        block = self._block(headers)
        conn = await self._acquire(origin)
        try:
            if content is None:
                out = b"%s%s\r\n" % (head, block)
            else:
                length = len(content)
                out = b"%s%sContent-Length: %d\r\n\r\n%s" % (head, block, length, content)
            assert conn.transport is not None
            conn.transport.write(out)
            while not conn.headers_done:
                await conn.wait()
        except BaseException:
            conn.close()
            raise
        return Response(conn, self)

    def _head(self, method: str, url: httpx.URL) -> tuple[_Origin, bytes]:
        """The request line and Host header of `method` on `url` (kept: the transport sends to
        one or two URLs)."""
        known = self._heads.get((method, id(url)))
        if known is not None and known[0] is url:
            return known[1], known[2]
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"not an http(s) URL: {url}")
        port = url.port or (443 if url.scheme == "https" else 80)
        target = url.raw_path or b"/"
        head = b"%s %s HTTP/1.1\r\nHost: %s\r\n" % (method.encode(), target, url.netloc)
        origin = (url.scheme, url.host, port)
        if len(self._heads) < 64:
            self._heads[(method, id(url))] = (url, origin, head)
        return origin, head

    def _block(self, headers: Mapping[str, str] | list[tuple[str, str]]) -> bytes:
        """The header lines of `headers`, encoded once per set of headers."""
        key = tuple(headers.items()) if isinstance(headers, Mapping) else tuple(headers)
        block = self._blocks.get(key)
        if block is None:
            lines = _header_lines(key)
            if self.user_agent and not any(name.lower() == "user-agent" for name, _ in key):
                lines.append(b"User-Agent: %s\r\n" % self.user_agent.encode("ascii"))
            block = b"".join(lines)
            if len(self._blocks) >= MAX_BLOCKS:
                self._blocks.clear()
            self._blocks[key] = block
        return block

    async def _acquire(self, origin: _Origin) -> _Connection:
        while True:
            if self._closed:
                raise HttpConnectionError("the HTTP client is closed")
            idle = self._idle.get(origin)
            while idle:
                conn = idle.pop()
                if not conn.closed and not _readable(conn):
                    conn.reset()
                    return conn
                conn.close()  # counted out when the loop reports it lost
            if self._open.get(origin, 0) < self.max_connections:
                break
            await self._wait_for(origin)
        self._open[origin] = self._open.get(origin, 0) + 1
        try:
            conn = await self._connect(origin)
        except BaseException:
            self._lost(origin)
            raise
        conn.on_lost = self._on_lost
        return conn

    async def _wait_for(self, origin: _Origin) -> None:
        """Until a connection to `origin` comes back to the pool or closes."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(origin, deque()).append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._wake(origin)  # woken, then cancelled: its turn passes to the next one
            else:
                waiting = self._waiting.get(origin)
                if waiting is not None and waiter in waiting:
                    waiting.remove(waiter)
            raise

    def _wake(self, origin: _Origin) -> None:
        waiting = self._waiting.get(origin)
        while waiting:
            waiter = waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _on_lost(self, conn: _Connection) -> None:
        self._lost(conn.origin)

    def _lost(self, origin: _Origin) -> None:
        left = self._open.get(origin, 1) - 1
        if left > 0:
            self._open[origin] = left
        else:
            self._open.pop(origin, None)
        self._wake(origin)

    async def _connect(self, origin: _Origin) -> _Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        tls = self._tls() if scheme == "https" else None
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, conn = await loop.create_connection(
                    _Connection, host, port, ssl=tls, server_hostname=host if tls else None
                )
        except TimeoutError:
            raise ConnectTimeout(f"connecting to {host}:{port} timed out") from None
        except OSError as exc:
            raise ConnectError(str(exc) or f"could not connect to {host}:{port}") from exc
        conn.origin = origin
        return conn

    def _tls(self) -> ssl.SSLContext:
        if self._ssl is None:
            context = httpx.create_ssl_context()  # verifies, with httpx's CA bundle and env
            context.set_alpn_protocols(["http/1.1"])
            self._ssl = context
        return self._ssl

    def release(self, conn: _Connection) -> None:
        """A response is done with: its connection back to the pool, or closed."""
        if not (conn.complete and conn.keep_alive) or conn.closed or self._closed:
            conn.close()
            return
        idle = self._idle.setdefault(conn.origin, [])
        if len(idle) >= MAX_IDLE:
            conn.close()
        else:
            idle.append(conn)
            if self._waiting.get(conn.origin):
                self._wake(conn.origin)

    async def aclose(self) -> None:
        """Close every idle connection; nothing is pooled after this."""
        self._closed = True
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()
        for waiting in self._waiting.values():  # they see the client closed
            for waiter in waiting:
                if not waiter.done():
                    waiter.set_result(None)
        self._waiting.clear()


def _readable(conn: _Connection) -> bool:
    """Whether an idle connection has something to read: the server closed it (its FIN not seen
    by the loop yet) or sent what no request asked for; either way it is not to be reused (the
    check httpcore makes)."""
    if conn.fd < 0:
        return False
    try:
        return bool(select.select([conn.fd], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _header_lines(headers: tuple[tuple[str, str], ...]) -> list[bytes]:
    lines: list[bytes] = []
    for name, value in headers:
        if "\n" in value or "\r" in value or "\n" in name or "\r" in name or ":" in name:
            raise ValueError(f"invalid HTTP header {name!r}")
        lines.append(f"{name}: {value}\r\n".encode("ascii"))
    return lines
