"""The HTTP host's keyword options as they pass through (`Server.run` -> `run_http` ->
`http_app` -> `HttpOptions`), typed for `Unpack`: a misspelled option is an error pyright
reports in the caller's code, not a `TypeError` at run time. tests/test_consumer_typing.py
keeps them the same as `HttpOptions`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from mcpio._core.routes import Route
    from mcpio.auth._resource import ResourceServerAuth


class HttpAppOptions(TypedDict, total=False):
    """`mcpio.http._app.HttpOptions`, field for field (see there)."""

    path: str
    allowed_hosts: frozenset[str] | None
    allowed_origins: frozenset[str] | None
    max_body_bytes: int
    body_timeout: float
    max_parsing_bytes: int | None
    admission_timeout: float
    max_batch_items: int
    max_sessions: int
    max_sessions_per_client: int
    max_sessions_per_network: int | None
    handshake_seconds: float
    session_idle_seconds: float
    max_streams: int
    max_streams_per_client: int
    max_listen_streams: int
    max_listen_streams_per_client: int
    max_listen_streams_per_network: int | None
    stream_lifetime: float
    stream_queue: int
    send_timeout: float
    poll_seconds: float
    auth: ResourceServerAuth | None
    routes: Sequence[Route]
    cors_origins: Sequence[str]


class HttpServeOptions(HttpAppOptions, total=False):
    """`Server.run_http`'s options: the app's, and uvicorn's connection bounds."""

    header_timeout: float
    max_connections: int
    max_header_bytes: int
    max_headers: int
