"""The keyword options that pass through one call to another (`Server.run` -> `run_http` ->
`http_app` -> `HttpOptions`; `Server.connect` -> `ServerConnection`), typed for `Unpack`: a
misspelled option is an error pyright reports in the caller's code, not a `TypeError` at run
time. Each mirrors what it reaches; tests/test_consumer_typing.py keeps the two the same."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from mcpio.auth import Principal, ResourceServerAuth
    from mcpio.routes import Route


class ConnectionOptions(TypedDict, total=False):
    """`ServerConnection`'s keyword options (see there)."""

    principal: Principal | None
    modern: bool
    listen_until: float
    listen_queue: int


class HttpAppOptions(TypedDict, total=False):
    """`mcpio.http.app.HttpOptions`, field for field (see there)."""

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


class SamplingOptions(TypedDict, total=False):
    """`Context.sample`'s options beyond messages and max tokens: the fields of
    `sampling/createMessage`'s params, by their wire names (`tools` and `toolChoice` from
    2025-11-25 on)."""

    systemPrompt: str
    temperature: float
    stopSequences: Sequence[str]
    modelPreferences: Any  # a `ModelPreferences` model or its JSON object
    includeContext: Literal["none", "thisServer", "allServers"]
    metadata: dict[str, Any]
    tools: Sequence[Any]
    toolChoice: Any
