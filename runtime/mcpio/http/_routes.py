"""Serving the routes of `mcpio._core.routes` inside the HTTP app: one request read (bounded in size
and time as the endpoint's), handed to its handler, its answer written (a Starlette-style response
writes itself). A handler that raises is a 500 without a traceback (logged)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeGuard

import anyio
import pydantic_core

from mcp_wire_runtime.errors import INVALID_REQUEST, ProtocolError
from mcpio._core.routes import HttpRequest, HttpResponse, Route
from mcpio.http._asgi import HttpError, Receive, RequestHeaders, Scope, Send, read_body

log = logging.getLogger("mcpio")


class Routes:
    """The plain HTTP routes served beside the MCP endpoint (`http_app(routes=...)`)."""

    def __init__(self, routes: Sequence[Route], max_body_bytes: int, body_timeout: float) -> None:
        self._routes = {route.path.rstrip("/") or "/": route for route in routes}
        self._max_body_bytes = max_body_bytes
        self._body_timeout = body_timeout

    def __contains__(self, path: str) -> bool:
        return (path.rstrip("/") or "/") in self._routes

    def __bool__(self) -> bool:
        return bool(self._routes)

    def checks_host(self, path: str) -> bool:
        """Whether the route at `path` wants the Host and Origin checks."""
        return self._routes[path.rstrip("/") or "/"].check_host

    async def serve(self, path: str, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a request to the route at `path`: 405 for a method it does not take."""
        route = self._routes[path.rstrip("/") or "/"]
        methods = [method.upper() for method in route.methods]
        if scope["method"] not in methods:
            reason = f"{scope['method']} is not allowed"
            raise HttpError(
                405, ProtocolError(INVALID_REQUEST, reason), {"allow": ", ".join(methods)}
            )
        request = HttpRequest(
            method=scope["method"],
            path=path,
            query=scope.get("query_string", b"").decode("latin-1"),
            headers=RequestHeaders(scope["headers"]).as_mapping(),
            body=await self._body(receive),
            client=scope["client"][0] if scope.get("client") else None,
        )
        try:
            answer = await route.handler(request)
        except Exception:
            log.exception("route %s failed", route.path)
            answer = HttpResponse(500, b"Internal Server Error", content_type="text/plain")
        if _writes_itself(answer):
            await answer(scope, receive, send)
            return
        await _write(send, _response(answer))

    async def _body(self, receive: Receive) -> bytes:
        with anyio.move_on_after(self._body_timeout):
            return await read_body(receive, self._max_body_bytes)
        reason = f"the body did not arrive within {self._body_timeout:g} s"
        raise HttpError(408, ProtocolError(INVALID_REQUEST, reason))


def _writes_itself(answer: object) -> TypeGuard[Callable[[Scope, Receive, Send], Awaitable[None]]]:
    """Whether the answer is a response that writes itself, an ASGI app: a Starlette `Response`
    (`PlainTextResponse("OK")`, as FastMCP's routes return)."""
    return callable(answer) and not isinstance(answer, HttpResponse | str | dict | list)


def _response(answer: object) -> HttpResponse:
    if isinstance(answer, HttpResponse):
        return answer
    if isinstance(answer, str):
        return HttpResponse(body=answer.encode(), content_type="text/plain; charset=utf-8")
    return HttpResponse(body=pydantic_core.to_json(answer), content_type="application/json")


async def _write(send: Send, response: HttpResponse) -> None:
    headers = [(b"content-length", b"%d" % len(response.body))]
    if response.content_type is not None:
        headers.append((b"content-type", response.content_type.encode("latin-1")))
    headers += [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items()
    ]
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body})
