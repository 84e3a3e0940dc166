"""Routes of your own beside the MCP endpoint (`server.custom_route`, `http_app(routes=...)`):
health and readiness probes, a status page. A handler takes the request (`HttpRequest`: its
body read whole, bounded as the endpoint's) and returns an `HttpResponse`, a `str` (text), a
`dict`/`list` (JSON) or a Starlette-style response (an ASGI app, which writes itself). Their Host and Origin headers are checked as the endpoint's (421 / 403:
a page of another site, DNS-rebound to this server, cannot read them); `check_host=False` serves
a route whatever they name (a probe from the cluster names the pod's address: keep such a route
free of anything private). Routes have no authorization and no CORS: guard them yourself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HttpRequest:
    """An HTTP request to a custom route, its body read whole (bounded as the endpoint's).

    Args:
        method: The request's method (`GET`, `POST`, ...).
        path: The path inside the app (without the `root_path` it is mounted at).
        query: The raw query string, without "?".
        headers: The header fields, by lowercase name.
        body: The request's body.
        client: The address of the peer that sent it (the ASGI server's: behind a reverse
            proxy, the original client's only where the server trusts its forwarded headers,
            as uvicorn's `--forwarded-allow-ips`); None when the server does not tell.
    """

    method: str
    path: str  # inside the app (without the `root_path` it is mounted at)
    query: str  # the raw query string, without "?"
    headers: Mapping[str, str]  # lowercase names
    body: bytes
    client: str | None = None


@dataclass(frozen=True)
class HttpResponse:
    """What a custom route answers (a handler may also return a `str` or a `dict`/`list`).

    Args:
        status: The HTTP status code.
        body: The response's body.
        headers: Header fields to send.
        content_type: The `Content-Type` to send; None: none unless `headers` has one.
    """

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    content_type: str | None = None  # None: none sent unless `headers` has one


# A Starlette-style response: an ASGI app, called with the request's scope, receive and send.
AsgiResponse = Callable[[Any, Any, Any], Awaitable[None]]
RouteHandler = Callable[
    [HttpRequest], Awaitable[HttpResponse | str | dict[str, Any] | list[Any] | AsgiResponse]
]


@dataclass(frozen=True)
class Route:
    """A route of your own beside the MCP endpoint, for `http_app(routes=...)`.

    Args:
        path: The path it serves (exactly, a trailing slash aside).
        handler: The async function that answers it, given the `HttpRequest`.
        methods: The HTTP methods it serves.
        check_host: Whether the request's Host and Origin are checked as the endpoint's
            (False: any, for a probe).
    """

    path: str
    handler: RouteHandler
    methods: Sequence[str] = ("GET",)
    check_host: bool = True
