"""Running the HTTP app under uvicorn (`Server.run_http`), with the bounds an exposed server
needs beyond the app's own (the app bounds bodies, sessions and streams; see `HttpOptions`):

- a connection must send a request's headers within `header_timeout` seconds of opening, or of
  its previous response (uvicorn has no such timeout: a client dripping header bytes would hold
  its connection for as long as it liked);
- a request's head (request line and header fields) holds at most `max_header_bytes` bytes and
  `max_headers` fields: past either it is refused with 431 and the connection closed, counted
  before the parser reads the bytes (httptools accepted a 64 MiB header, its parse growing
  superlinearly: 7-9 s, every other connection stalled meanwhile);
- at most `max_connections` connections at once (uvicorn answers 503 past it);
- a graceful shutdown waits `shutdown_timeout` seconds for open streams, then ends them: the
  legacy sessions first (`GracefulServer`: a POST waiting in one is answered 404), then
  whatever uvicorn still has to cancel.

Under another ASGI server, give it the same bounds (or put a proxy such as nginx in front, with
`client_header_timeout`)."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _HeaderTimer:
    """Closes a connection that sends no request within `timeout` seconds of opening, or of
    its previous response (the same rule for either HTTP protocol of uvicorn)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._handle: asyncio.TimerHandle | None = None

    def arm(self, protocol: H11Protocol | HttpToolsProtocol) -> None:
        self.cancel()
        self._handle = protocol.loop.call_later(self.timeout, self._late, protocol, protocol.cycle)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()

    @staticmethod
    def _late(protocol: H11Protocol | HttpToolsProtocol, waiting_after: object) -> None:
        """No request began since the timer was armed (with the cycle then current)."""
        cycle = protocol.cycle
        idle = cycle is waiting_after and (cycle is None or cycle.response_complete)
        if idle and not protocol.transport.is_closing():
            protocol.transport.close()


MAX_HEADER_BYTES = 64 * 1024
MAX_HEADERS = 100


class _HeadMeter:
    """The bytes and lines of a request's head as they arrive, before the parser reads them:
    from the first byte that is no empty line to the empty line that ends the head (what
    follows it in the same read is left to the parser). `start` once a request is complete."""

    __slots__ = ("max_bytes", "max_fields", "reading", "size", "lines", "tail")

    def __init__(self, max_bytes: int, max_fields: int) -> None:
        self.max_bytes = max_bytes
        self.max_fields = max_fields
        self.start()

    def start(self) -> None:
        self.reading = True
        self.size = 0
        self.lines = 0  # ends of line so far: the request line's, then one per field
        self.tail = b""  # the last bytes counted (an end of head may span two reads)

    def feed(self, data: bytes) -> str | None:
        """Count `data`; why the head is refused, or None."""
        if not self.reading:
            return None
        if not self.size:  # empty lines before a request line are skipped (RFC 9112 2.2)
            data = data.lstrip(b"\r\n")
        window = self.tail + data
        ends = [i for i in (window.find(b"\n\r\n"), window.find(b"\n\n")) if i >= 0]
        counted = data
        if ends:  # the head ends in this read: count up to its last field's end of line
            self.reading = False
            counted = window[len(self.tail) : min(ends) + 1]
        self.size += len(counted)
        self.lines += counted.count(b"\n")
        self.tail = window[-2:]
        if self.size > self.max_bytes:
            return f"the request head exceeds {self.max_bytes} bytes"
        if self.lines - 1 > self.max_fields:
            return f"the request has more than {self.max_fields} header fields"
        return None


def _request_done(protocol: H11Protocol | HttpToolsProtocol) -> bool:
    """Whether h11 has read a whole request (httptools says so by `on_message_complete`)."""
    return isinstance(protocol, H11Protocol) and protocol.conn.their_state is not h11.SEND_BODY


def _refuse_head(protocol: H11Protocol | HttpToolsProtocol, reason: str) -> None:
    """Answer 431 (unless a response is under way) and close the connection."""
    cycle = protocol.cycle
    if cycle is None or cycle.response_complete:
        body = reason.encode()
        protocol.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(body), body)
        )
    protocol.transport.close()


HttpProtocol = type[H11Protocol] | type["HttpToolsProtocol"]


def bounded(
    base: HttpProtocol,
    header_timeout: float,
    max_header_bytes: int = MAX_HEADER_BYTES,
    max_headers: int = MAX_HEADERS,
) -> HttpProtocol:
    """uvicorn's HTTP protocol `base` (h11, or httptools' fast C parser), closing a connection
    whose request headers are late, and refusing a head past `max_header_bytes` bytes or
    `max_headers` fields with 431."""

    class Bounded(base):  # type: ignore[valid-type,misc]  # pyright: ignore[reportGeneralTypeIssues]
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.head_meter = _HeadMeter(max_header_bytes, max_headers)
            self.header_timer = _HeaderTimer(header_timeout)
            self.header_timer.arm(self)

        def data_received(self, data: bytes) -> None:
            meter = self.head_meter
            if not meter.reading and _request_done(self):
                meter.start()
            refused = meter.feed(data)
            if refused is not None:
                _refuse_head(self, refused)
                return
            super().data_received(data)

        def on_message_complete(self) -> None:  # httptools' parser only
            super().on_message_complete()
            self.head_meter.start()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.header_timer.arm(self)

        def connection_lost(self, exc: Exception | None) -> None:
            self.header_timer.cancel()
            super().connection_lost(exc)

    Bounded.__name__ = Bounded.__qualname__ = f"Bounded{base.__name__}"
    return Bounded


def fast_protocol() -> HttpProtocol:
    """httptools' protocol when installed (the `http` extra has it), else h11's."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is not installed
        return H11Protocol
    return HttpToolsProtocol


def uvicorn_config(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    header_timeout: float = 10.0,
    max_connections: int = 2000,
    shutdown_timeout: int = 5,
    max_header_bytes: int = MAX_HEADER_BYTES,
    max_headers: int = MAX_HEADERS,
    http: HttpProtocol | None = None,
    **uvicorn_options: Any,
) -> uvicorn.Config:
    """Make the uvicorn configuration `run_http` serves with (tests and embedders use it too).

    It has the `http` protocol (default: httptools when installed, else h11) with the header
    timeout and the bounds of a request head, and uvicorn's default event loop (uvloop when
    installed). uvicorn logs at "warning" unless `uvicorn_options` says otherwise.

    Args:
        app: The ASGI app to serve.
        host: The address to listen on.
        port: The port to listen on.
        header_timeout: Seconds a connection has to send a request's headers, after opening or
            after its previous response; late, it is closed.
        max_connections: The connections open at once (uvicorn answers 503 past it).
        shutdown_timeout: Seconds a graceful shutdown waits for open streams before ending
            them.
        max_header_bytes: The bytes of a request's head (request line and header fields): 431
            past it.
        max_headers: The header fields of a request's head: 431 past it.
        http: The uvicorn HTTP protocol to bound; None: httptools when installed, else h11.
        **uvicorn_options: Passed on to `uvicorn.Config`.
    """
    protocol = bounded(http or fast_protocol(), header_timeout, max_header_bytes, max_headers)
    uvicorn_options.setdefault("log_level", "warning")
    # h11 holds at most this much of an unfinished head (its own default is 16 KiB).
    uvicorn_options.setdefault("h11_max_incomplete_event_size", max_header_bytes)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        limit_concurrency=max_connections,
        timeout_graceful_shutdown=shutdown_timeout,
        **uvicorn_options,
    )


class GracefulServer(uvicorn.Server):
    """uvicorn's server, ending the app's legacy sessions (`end_sessions`) shortly before its
    graceful shutdown runs out: a POST still waiting in one is answered 404 (its session
    ended) and a GET stream closes, rather than being cancelled by uvicorn (which answers a
    cancelled request 500 and logs its traceback). An app without `end_sessions` is served
    as uvicorn serves it."""

    async def shutdown(self, sockets: Any = None) -> None:
        """Shut down: end the legacy sessions within the graceful timeout, then stop as uvicorn
        does."""
        end = getattr(self.config.app, "end_sessions", None)
        grace = self.config.timeout_graceful_shutdown
        timer = None
        if callable(end) and grace is not None:
            delay = max(grace - 0.5, grace / 2)  # uvicorn cancels its tasks after `grace`
            timer = asyncio.get_running_loop().call_later(delay, end)
        try:
            await super().shutdown(sockets)
        finally:
            if timer is not None:
                timer.cancel()


class AnnouncingServer(GracefulServer):
    """uvicorn's server, saying once it listens where its MCP endpoint is (on stderr: uvicorn's
    own startup lines are below `run_http`'s default log level)."""

    def __init__(self, config: uvicorn.Config, path: str) -> None:
        super().__init__(config)
        self.path = path

    async def startup(self, sockets: Any = None) -> None:
        """Start, then say on stderr where MCP is served."""
        await super().startup(sockets)
        for url in self.urls():
            print(f"mcpio: serving MCP (Streamable HTTP) at {url}", file=sys.stderr, flush=True)

    def urls(self) -> list[str]:
        """The endpoint URL of each listening socket (the port it really got, for port 0)."""
        found = []
        for server in self.servers:
            for sock in server.sockets:
                host, port = sock.getsockname()[:2]
                host = f"[{host}]" if ":" in host else host
                found.append(f"http://{host}:{port}{self.path}")
        return found
