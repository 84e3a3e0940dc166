"""The ASGI side of the HTTP server that its parts share: one exchange (a request to the
endpoint and the means to answer it), the one exit for refusals (`HttpError`), and plain
answers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import pydantic_core

from mcp_wire_runtime._peek import Peek
from mcp_wire_runtime.errors import INVALID_REQUEST, ProtocolError
from mcpio._core.negotiate import peek_any

if TYPE_CHECKING:
    from mcpio._core.principal import Principal

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

KEEPALIVE_SECONDS = 15.0  # a comment on an SSE stream that has been silent this long
K = TypeVar("K")
V = TypeVar("V")
A = TypeVar("A")


class RequestHeaders:
    """A request's header fields: each value without the whitespace around it (RFC 9110 5.5;
    h11 strips it, httptools keeps trailing whitespace), every value of a name that repeats
    kept in order. Names are looked up case-insensitively (ASGI gives them lowercase). Built
    by one `dict` of the raw fields (a list per name only when a name repeats); a value is
    decoded when read."""

    __slots__ = ("_one", "_many", "unique", "_mapping")

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        fields = raw if isinstance(raw, list) else list(raw)
        self._one: dict[bytes, bytes] = dict(fields)
        self._many: dict[bytes, list[bytes]] | None = None
        # The raw fields by (lowercase) name, as sent, when no name repeats: for checks whose
        # verdicts are kept by the raw values they read.
        self.unique: dict[bytes, bytes] | None = self._one
        self._mapping: Mapping[str, str] | None = None
        if len(self._one) != len(fields):  # a name repeats
            self.unique = None
            many: dict[bytes, list[bytes]] = {}
            for name, value in fields:
                many.setdefault(name, []).append(value)
            self._many = many

    @overload
    def get(self, name: str) -> str | None: ...

    @overload
    def get(self, name: str, default: str) -> str: ...

    def get(self, name: str, default: str | None = None) -> str | None:
        """The field `name` (any case): its first value where it repeats; else `default`."""
        key = _KEYS.get(name) or _key(name)
        if self._many is None:
            value = self._one.get(key)
            return default if value is None else value.strip(b" \t").decode("latin-1")
        values = self._many.get(key)
        return values[0].strip(b" \t").decode("latin-1") if values else default

    def as_mapping(self) -> Mapping[str, str]:
        """Every field, read-only, names lowercase; a name that repeats has its values joined
        by ", " (RFC 9110 5.3). Made on first use."""
        mapping = self._mapping
        if mapping is None:
            fields: dict[str, list[str]] = {}
            for name, value in self._pairs():
                fields.setdefault(name.decode("latin-1").lower(), []).append(
                    value.strip(b" \t").decode("latin-1")
                )
            mapping = self._mapping = MappingProxyType({k: ", ".join(v) for k, v in fields.items()})
        return mapping

    def _pairs(self) -> list[tuple[bytes, bytes]]:
        if self._many is None:
            return list(self._one.items())
        return [(name, value) for name, values in self._many.items() for value in values]

    def getlist(self, name: str) -> list[str]:
        """Every value of the field `name` (any case), in order."""
        key = _KEYS.get(name) or _key(name)
        if self._many is None:
            value = self._one.get(key)
            return [] if value is None else [value.strip(b" \t").decode("latin-1")]
        return [value.strip(b" \t").decode("latin-1") for value in self._many.get(key, ())]


_KEYS: dict[str, bytes] = {}  # a looked-up name, as a raw (lowercase) header name


def _key(name: str) -> bytes:
    key = name.lower().encode("latin-1", "replace")
    if len(_KEYS) < 1024:  # names come from code and tool schemas; bounded all the same
        _KEYS[name] = key
    return key


@dataclass(slots=True)
class Exchange:
    """One HTTP request to the endpoint, and the means to answer it."""

    receive: Receive
    send: Send
    headers: RequestHeaders
    principal: Principal | None
    client: str  # whom per-client bounds count


JSON_TYPE = (b"content-type", b"application/json")


async def respond(
    send: Send, status: int, body: bytes, headers: dict[str, str] | None = None
) -> None:
    """Write a whole response: `body` (a JSON frame, or nothing) with its length, and `headers`
    (the one writer of the endpoint's JSON answers)."""
    await send(response_start(status, body, headers))
    await send({"type": "http.response.body", "body": body})


def response_start(status: int, body: bytes, headers: dict[str, str] | None = None) -> Message:
    """The head of `respond`'s response (a modern answer's writer sends it itself)."""
    raw = [(b"content-length", b"%d" % len(body))]
    if body:
        raw.append(JSON_TYPE)
    if headers:
        raw += [(k.encode(), v.encode()) for k, v in headers.items()]
    return {"type": "http.response.start", "status": status, "headers": raw}


class HttpError(Exception):
    """An HTTP refusal: its status, the JSON-RPC error of its body, and extra headers."""

    def __init__(self, status: int, error: ProtocolError, headers: dict[str, str] | None = None):
        super().__init__(error.message)
        self.status = status
        self.error = error
        self.headers = headers


def body_too_large(limit: int) -> HttpError:
    """413 for a body past `limit`. The connection stays open (closing it under a client still
    sending would reset it, losing the answer): uvicorn discards the rest of the body, and the
    header timeout closes the connection unless a next request begins."""
    return HttpError(413, ProtocolError(INVALID_REQUEST, f"body exceeds {limit} bytes"))


def whole_body(message: Message, limit: int) -> bytes | None:
    """The body of a request whose first message holds all of it, as an ASGI server hands a
    small one over (within `limit`); else None: `read_body` reads it."""
    if message["type"] != "http.request" or message.get("more_body"):
        return None
    body = message.get("body", b"")
    return body if len(body) <= limit else None


async def read_body(receive: Receive, limit: int, first: Message | None = None) -> bytes:
    """A request's whole body, at most `limit` bytes (413 past it; 400 if the client goes
    away), from its `first` message (None: not received yet) on. Its time is the caller's to
    bound."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive() if first is None else first
        first = None
        if message["type"] == "http.disconnect":
            raise HttpError(400, ProtocolError(INVALID_REQUEST, "the client went away"))
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise body_too_large(limit)
        if not message.get("more_body"):
            if not chunks:
                return chunk
            chunks.append(chunk)
            return b"".join(chunks)
        chunks.append(chunk)


async def watch_disconnect(receive: Receive, gone: Callable[[], object]) -> None:
    """Read what the client sends until it goes away, then call `gone` (the one disconnect
    watcher: a POST's `Guard`, a session's GET stream)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    gone()


class Verdicts(Generic[K, V]):
    """The verdicts of one header check, kept by the raw values it reads (see
    `RequestHeaders.unique`). Bounded: a client sending ever new values costs a check each, no
    memory."""

    __slots__ = ("_seen",)
    SIZE = 256

    def __init__(self) -> None:
        self._seen: dict[K, V] = {}

    def of(self, key: K, judge: Callable[[A], V], arg: A) -> V:
        """The verdict for `key`: kept, else `judge(arg)`, kept from now on."""
        verdict = self._seen.get(key)
        if verdict is None:
            seen = self._seen
            if len(seen) >= self.SIZE:
                seen.clear()
            verdict = seen[key] = judge(arg)
        return verdict


def sent_kind(frame: bytes) -> Peek:
    """The envelope of a frame this server sends (its own, so valid), read without its params
    or result: whether it is a response (`kind` result or error), and to which id."""
    return peek_any(frame)


def error_code(frame: bytes) -> Any:
    """The code of an error response (read in full: error frames are small)."""
    error = pydantic_core.from_json(frame).get("error")
    return error.get("code") if type(error) is dict else None
