"""How a server is run: one connection (`serve`), stdin/stdout (`serve_stdio`, `run_stdio`),
uvicorn (`run_http`), or either by name (`run`)."""

from __future__ import annotations

import importlib.util
import sys
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Literal

import anyio

from mcpio._core.errors import LifespanError
from mcpio._core.extras import needs
from mcpio._core.transport import Transport

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mcpio._core.options import ConnectionOptions
    from mcpio.http._app import HttpApp
    from mcpio.http._options import HttpAppOptions, HttpServeOptions
    from mcpio.latest import public as pub
    from mcpio.server._connection import ServerConnection


class Launchers:
    """`Server`'s ways to serve until the end (each starts the server meanwhile)."""

    if TYPE_CHECKING:  # what the launchers use of the rest of `Server`

        @property
        def info(self) -> pub.Implementation: ...
        def running(self) -> AbstractAsyncContextManager[None]: ...
        def connect(
            self, transport: Transport, **options: Unpack[ConnectionOptions]
        ) -> ServerConnection: ...
        def http_app(self, **options: Unpack[HttpAppOptions]) -> HttpApp: ...

    async def serve(self, transport: Transport) -> None:
        """Serve one connection until it ends (the server started meanwhile: see `start`)."""
        async with self.running():
            await self.connect(transport).run()

    async def serve_stdio(self) -> None:
        """Serve stdin/stdout until stdin ends.

        Meanwhile stdout is for protocol frames only: `print()` (and anything else written to
        it) goes to stderr.
        """
        from mcpio.transports.stdio import protocol_stdout, stdio_server_transport

        with protocol_stdout() as stdout:
            await self.serve(await stdio_server_transport(stdout=stdout))

    def run_stdio(self) -> None:
        """Serve stdin/stdout until stdin ends, in an event loop of its own (blocking).

        Logs and prints go to stderr. It runs on uvloop's event loop where it is installed (the
        `http` extra brings it), else on asyncio's. A lifespan that fails to start is one line
        on stderr and exit status 1.
        """
        uvloop = importlib.util.find_spec("uvloop") is not None
        try:
            anyio.run(self.serve_stdio, backend_options={"use_uvloop": uvloop})
        except LifespanError as exc:
            print(f"{self.info.name}: {exc}", file=sys.stderr)
            sys.exit(1)

    def run(
        self,
        transport: Literal["stdio", "http"] = "stdio",
        *,
        host: str | None = None,
        port: int | None = None,
        **options: Unpack[HttpServeOptions],
    ) -> None:
        """Serve until the end over `transport` (blocking).

        `host`, `port` and HTTP options with stdio, or another transport, are a `ValueError`.

        Args:
            transport: `"stdio"` serves as `run_stdio`, `"http"` as `run_http`.
            host: The address HTTP listens on (127.0.0.1 unless given).
            port: The port HTTP listens on (8000 unless given).
            **options: HTTP options, as `run_http`'s.
        """
        if transport == "stdio":
            given = [n for n, v in (("host", host), ("port", port)) if v is not None]
            if given or options:
                unused = ", ".join([*given, *options])
                raise ValueError(f"{unused}: options of transport='http', not of stdio")
            self.run_stdio()
        elif transport == "http":
            self.run_http(host or "127.0.0.1", 8000 if port is None else port, **options)
        else:
            raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")

    def run_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        header_timeout: float = 10.0,
        max_connections: int = 2000,
        max_header_bytes: int = 64 * 1024,
        max_headers: int = 100,
        **options: Unpack[HttpAppOptions],
    ) -> None:
        """Serve Streamable HTTP with uvicorn (blocking), on loopback unless `host` says otherwise.

        Once listening, one line on stderr gives the endpoint's URL
        (`http://127.0.0.1:8000/mcp`).

        Args:
            host: The address to listen on.
            port: The port to listen on.
            header_timeout: Seconds a connection has to send a request's headers (see
                `mcpio.http._serve`, as for the bounds below).
            max_connections: The most connections at once (503 past it).
            max_header_bytes: The largest request head, in bytes (431 past it).
            max_headers: The most header fields in a request (431 past it).
            **options: The app's options (see `HttpOptions`).
        """
        with needs("http", "mcpio's HTTP transport"):
            from mcpio.http._serve import AnnouncingServer, uvicorn_config

        app = self.http_app(**options)
        config = uvicorn_config(
            app,
            host,
            port,
            header_timeout=header_timeout,
            max_connections=max_connections,
            max_header_bytes=max_header_bytes,
            max_headers=max_headers,
        )
        AnnouncingServer(config, app.options.path).run()
