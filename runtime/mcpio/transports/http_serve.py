"""Running the HTTP app under uvicorn (`Server.run_http`), with the bounds an exposed server
needs beyond the app's own (the app bounds bodies, sessions and streams; see `HttpOptions`):

- a connection must send a request's headers within `header_timeout` seconds of opening, or of
  its previous response (uvicorn has no such timeout: a client dripping header bytes would hold
  its connection for as long as it liked);
- at most `max_connections` connections at once (uvicorn answers 503 past it);
- a graceful shutdown waits `shutdown_timeout` seconds for open streams, then ends them.

Under another ASGI server, give it the same bounds (or put a proxy such as nginx in front, with
`client_header_timeout`)."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

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


HttpProtocol = type[H11Protocol] | type["HttpToolsProtocol"]


def timed(base: HttpProtocol, header_timeout: float) -> HttpProtocol:
    """uvicorn's HTTP protocol `base` (h11, or httptools' fast C parser), closing a connection
    whose request headers are late."""

    class Timed(base):  # type: ignore[valid-type,misc]  # pyright: ignore[reportGeneralTypeIssues]
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.header_timer = _HeaderTimer(header_timeout)
            self.header_timer.arm(self)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.header_timer.arm(self)

        def connection_lost(self, exc: Exception | None) -> None:
            self.header_timer.cancel()
            super().connection_lost(exc)

    Timed.__name__ = Timed.__qualname__ = f"Timed{base.__name__}"
    return Timed


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
    http: HttpProtocol | None = None,
    **uvicorn_options: Any,
) -> uvicorn.Config:
    """The uvicorn configuration `run_http` serves with (tests and embedders use it too): the
    `http` protocol (default: httptools when installed, else h11) with the header timeout, and
    uvicorn's default event loop (uvloop when installed)."""
    protocol = timed(http or fast_protocol(), header_timeout)
    uvicorn_options.setdefault("log_level", "warning")
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        limit_concurrency=max_connections,
        timeout_graceful_shutdown=shutdown_timeout,
        **uvicorn_options,
    )


class AnnouncingServer(uvicorn.Server):
    """uvicorn's server, saying once it listens where its MCP endpoint is (on stderr: uvicorn's
    own startup lines are below `run_http`'s default log level)."""

    def __init__(self, config: uvicorn.Config, path: str) -> None:
        super().__init__(config)
        self.path = path

    async def startup(self, sockets: Any = None) -> None:
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
