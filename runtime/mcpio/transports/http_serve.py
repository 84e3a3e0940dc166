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
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers are late."""

    header_timeout = 10.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(self.header_timeout, self._late, self.cycle)

    def _late(self, waiting_after: object) -> None:
        """No request began since the timer was armed (with the cycle then current)."""
        idle = self.cycle is waiting_after and (self.cycle is None or self.cycle.response_complete)
        if idle and not self.transport.is_closing():
            self.transport.close()


def uvicorn_config(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    header_timeout: float = 10.0,
    max_connections: int = 2000,
    shutdown_timeout: int = 5,
    **uvicorn_options: Any,
) -> uvicorn.Config:
    """The uvicorn configuration `run_http` serves with (tests and embedders use it too)."""
    protocol = type("TimedH11Protocol", (TimedH11Protocol,), {"header_timeout": header_timeout})
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
