"""The ASGI side of the HTTP server that its parts share: one exchange (a request to the
endpoint and the means to answer it), the one exit for refusals (`HttpError`), and plain
answers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import anyio
import pydantic_core

from mcpio.negotiate import peek_any
from mcpio.wire.errors import ProtocolError
from mcpio.wire.peek import Peek

if TYPE_CHECKING:
    from mcpio.auth import Principal

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

KEEPALIVE_SECONDS = 15.0  # a comment on an SSE stream that has been silent this long


class RequestHeaders:
    """A request's header fields, read in one pass: each value without the whitespace around it
    (RFC 9110 5.5; h11 strips it, httptools keeps trailing whitespace), every value of a name
    that repeats kept in order. Names are looked up case-insensitively (ASGI gives them
    lowercase)."""

    __slots__ = ("_fields",)

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        fields: dict[str, list[str]] = {}
        for name, value in raw:
            key = name.decode("latin-1")
            text = value.strip(b" \t").decode("latin-1")
            values = fields.get(key)
            if values is None:
                fields[key] = [text]
            else:
                values.append(text)
        self._fields = fields

    @overload
    def get(self, name: str) -> str | None: ...

    @overload
    def get(self, name: str, default: str) -> str: ...

    def get(self, name: str, default: str | None = None) -> str | None:
        values = self._fields.get(name) or self._fields.get(name.lower())
        return values[0] if values else default

    def getlist(self, name: str) -> list[str]:
        return self._fields.get(name) or self._fields.get(name.lower()) or []


@dataclass(slots=True)
class Exchange:
    """One HTTP request to the endpoint, and the means to answer it."""

    receive: Receive
    send: Send
    headers: RequestHeaders
    principal: Principal | None
    client: str  # whom per-client bounds count


_JSON_TYPE = (b"content-type", b"application/json")


async def respond(
    send: Send, status: int, body: bytes, headers: dict[str, str] | None = None
) -> None:
    raw = [(b"content-length", b"%d" % len(body))]
    if body:
        raw.append(_JSON_TYPE)
    if headers:
        raw += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class HttpError(Exception):
    def __init__(self, status: int, error: ProtocolError, headers: dict[str, str] | None = None):
        super().__init__(error.message)
        self.status = status
        self.error = error
        self.headers = headers


async def watch_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


def sent_kind(frame: bytes) -> Peek:
    """The envelope of a frame this server sends (its own, so valid), read without its params
    or result: whether it is a response (`kind` result or error), and to which id."""
    return peek_any(frame)


def error_code(frame: bytes) -> Any:
    """The code of an error response (read in full: error frames are small)."""
    error = pydantic_core.from_json(frame).get("error")
    return error.get("code") if type(error) is dict else None
