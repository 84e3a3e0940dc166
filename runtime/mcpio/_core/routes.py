"""Routes of your own beside the MCP endpoint (`server.custom_route`, `http_app(routes=...)`):
health and readiness probes, a status page. A handler takes the request (`HttpRequest`: its
body read whole, bounded as the endpoint's) and returns an `HttpResponse`, a `str` (text) or a
`dict`/`list` (JSON). Their Host and Origin headers are checked as the endpoint's (421 / 403:
a page of another site, DNS-rebound to this server, cannot read them); `check_host=False` serves
a route whatever they name (a probe from the cluster names the pod's address: keep such a route
free of anything private). Routes have no authorization and no CORS: guard them yourself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HttpRequest:
    method: str
    path: str  # inside the app (without the `root_path` it is mounted at)
    query: str  # the raw query string, without "?"
    headers: Mapping[str, str]  # lowercase names
    body: bytes


@dataclass(frozen=True)
class HttpResponse:
    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    content_type: str | None = None  # None: none sent unless `headers` has one


RouteHandler = Callable[[HttpRequest], Awaitable[HttpResponse | str | dict[str, Any] | list[Any]]]


@dataclass(frozen=True)
class Route:
    """`handler` serves `path` (exactly, a trailing slash aside) for `methods`; `check_host`:
    the request's Host and Origin checked as the endpoint's (False: any, for a probe)."""

    path: str
    handler: RouteHandler
    methods: Sequence[str] = ("GET",)
    check_host: bool = True
