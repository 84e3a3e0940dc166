"""Streamable HTTP, the server's side: one ASGI app, one endpoint, both eras.

Modern (2026-07-28): every POST is a whole, stateless exchange. Its headers must agree with its
body; the answer is JSON, or an SSE stream when notifications (progress, log) precede the
result; the client closing that stream cancels the handler; `subscriptions/listen` is a stream
that stays open. No sessions, no GET.

Legacy (2025-03-26 .. 2025-11-25): `initialize` opens a session named by `Mcp-Session-Id`; each
POST carries one message (a batch on 2025-03-26); what a handler says while it runs (progress,
questions to the client, its response) goes back on that POST's stream, anything else on the
session's GET stream. Sessions expire when idle and end with DELETE.

Secure by default: Host and Origin must name this machine unless configured otherwise (421 /
403), bodies are bounded (413), so are sessions and open streams (503), and no response carries
a traceback.

Authorization (opt-in, `auth=ResourceServerAuth(...)`, see `mcpio.auth`): every request to the
endpoint needs a valid bearer token (401, 403 `insufficient_scope`), the protected-resource
metadata is served at its well-known paths, the principal reaches handlers as `ctx.principal`,
and a legacy session belongs to the principal that opened it (another one is told 404, as for an
unknown session).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.datastructures import Headers

from mcpio.auth import Principal, ResourceServerAuth, VerifierUnavailable, bearer_token
from mcpio.jsonrpc import RequestId, error_frame
from mcpio.negotiate import MODERN, envelope_version
from mcpio.session import serving
from mcpio.wire.codec import MAX_MESSAGE_BYTES
from mcpio.wire.errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError
from mcpio.wire.peek import NAMED_BY

if TYPE_CHECKING:
    from mcpio.connection import ServerConnection
    from mcpio.server import Server

log = logging.getLogger("mcpio")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022
# JSON-RPC codes the modern era answers with 400 (and 404 for an unknown method).
BAD_REQUEST_CODES = frozenset({-32700, -32600, -32602, -32020, -32021, -32022})
LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
KEEPALIVE_SECONDS = 15.0


@dataclass
class HttpOptions:
    path: str = "/mcp"
    allowed_hosts: frozenset[str] | None = None  # None: loopback names only; {"*"}: any
    allowed_origins: frozenset[str] | None = None  # host names an Origin may carry
    max_body_bytes: int = MAX_MESSAGE_BYTES
    max_sessions: int = 1000
    max_streams: int = 1000
    session_idle_seconds: float = 1800.0
    auth: ResourceServerAuth | None = None  # None: no authorization


def http_app(server: Server, **options: Any) -> HttpApp:
    """The ASGI app serving `server` at `path` (default `/mcp`); see `HttpOptions`."""
    return HttpApp(server, HttpOptions(**options))


class HttpApp:
    def __init__(self, server: Server, options: HttpOptions) -> None:
        self.server = server
        self.options = options
        self.sessions: dict[str, LegacySession] = {}
        self.streams = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        self.server.start_bus()  # once per event loop: a host may not send lifespan events
        headers = Headers(scope=scope)
        auth = self.options.auth
        try:
            if auth is not None and scope["path"].rstrip("/") in auth.metadata_paths:
                await self._metadata(send, headers, auth, scope["method"])
                return
            if scope["path"].rstrip("/") != self.options.path.rstrip("/"):
                raise HttpError(404, ProtocolError(INVALID_REQUEST, "not an MCP endpoint"))
            self._check_host_and_origin(headers)
            principal = await self._authenticate(headers)
            method = scope["method"]
            if method == "POST":
                await self._post(scope, receive, send, headers, principal)
            elif method == "GET":
                await self._get(scope, receive, send, headers, principal)
            elif method == "DELETE":
                await self._delete(send, headers, principal)
            else:
                raise HttpError(405, ProtocolError(INVALID_REQUEST, f"{method} is not allowed"))
        except HttpError as exc:
            await respond(send, exc.status, error_frame(None, None, exc.error), exc.headers)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.server.start_bus()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for session in list(self.sessions.values()):
                    await session.close()
                await self.server.stop_bus()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # ------------------------------------------------------------------ checks

    def _check_host_and_origin(self, headers: Headers) -> None:
        allowed = self.options.allowed_hosts
        if allowed is None or "*" not in allowed:
            host = _hostname(headers.get("host", ""))
            if host not in (allowed or LOOPBACK):
                raise HttpError(421, ProtocolError(INVALID_REQUEST, "Host not allowed"))
        origin = headers.get("origin")
        if origin is not None:
            origins = self.options.allowed_origins or self.options.allowed_hosts or LOOPBACK
            if "*" not in origins and _hostname(origin.split("://", 1)[-1]) not in origins:
                raise HttpError(403, ProtocolError(INVALID_REQUEST, "Origin not allowed"))

    # ------------------------------------------------------------------ authorization

    async def _metadata(
        self, send: Send, headers: Headers, auth: ResourceServerAuth, method: str
    ) -> None:
        """RFC 9728's document: public, so any Origin may read it (no credentials involved)."""
        self._check_host_and_origin(Headers({"host": headers.get("host", "")}))
        if method not in ("GET", "HEAD"):
            raise HttpError(405, ProtocolError(INVALID_REQUEST, f"{method} is not allowed"))
        body = pydantic_core.to_json(auth.metadata())
        await respond(send, 200, body, {"access-control-allow-origin": "*"})

    async def _authenticate(self, headers: Headers) -> Principal | None:
        auth = self.options.auth
        if auth is None:
            return None
        authorization = headers.get("authorization")
        try:
            principal = await auth.authenticate(authorization)
        except VerifierUnavailable:
            raise HttpError(
                503, ProtocolError(INVALID_REQUEST, "the access token cannot be verified now")
            ) from None
        if principal is None:
            given = bearer_token(authorization) is not None  # RFC 6750: no error without one
            reason = "invalid access token" if given else "this endpoint needs an access token"
            error = "invalid_token" if given else None
            raise HttpError(
                401,
                ProtocolError(INVALID_REQUEST, reason),
                {"www-authenticate": auth.challenge(error)},
            )
        return principal

    def _authorize(self, principal: Principal | None, messages: list[Any]) -> None:
        """403 unless the principal holds every scope these messages need."""
        auth = self.options.auth
        if auth is None or principal is None:
            return
        needed = auth.needed(messages)
        if not needed <= principal.scopes:
            missing = " ".join(sorted(needed - principal.scopes))
            raise HttpError(
                403,
                ProtocolError(INVALID_REQUEST, f"insufficient scope: needs {missing}"),
                {"www-authenticate": auth.challenge("insufficient_scope", needed)},
            )

    async def _body(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise HttpError(400, ProtocolError(INVALID_REQUEST, "the client went away"))
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.options.max_body_bytes:
                limit = self.options.max_body_bytes
                raise HttpError(413, ProtocolError(INVALID_REQUEST, f"body exceeds {limit} bytes"))
            chunks.append(chunk)
            if not message.get("more_body"):
                return b"".join(chunks)

    # ------------------------------------------------------------------ POST

    async def _post(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        principal: Principal | None,
    ) -> None:
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            raise HttpError(
                415, ProtocolError(INVALID_REQUEST, "Content-Type must be application/json")
            )
        accept = headers.get("accept", "")
        if not ("application/json" in accept or "*/*" in accept) or not (
            "text/event-stream" in accept or "*/*" in accept
        ):
            reason = "Accept must list application/json and text/event-stream"
            raise HttpError(406, ProtocolError(INVALID_REQUEST, reason))
        body = await self._body(receive)
        try:
            obj = pydantic_core.from_json(body, allow_inf_nan=False)
        except ValueError as exc:
            raise HttpError(400, ProtocolError(PARSE_ERROR, f"not valid JSON: {exc}")) from None
        self._authorize(principal, _messages(obj))
        session_id = headers.get("mcp-session-id")
        modern = type(obj) is dict and (
            headers.get("mcp-protocol-version") in MODERN or envelope_version(obj) is not None
        )
        if session_id is None and modern:
            await self._modern(receive, send, headers, body, obj, principal)
        elif type(obj) is dict and obj.get("method") == "initialize":
            await self._initialize(receive, send, body, obj, principal)
        elif session_id is not None:
            session = self._session(session_id, principal)
            await self._legacy(receive, send, headers, session, body, obj)
        elif type(obj) is not dict:
            raise HttpError(
                400, ProtocolError(INVALID_REQUEST, "a JSON-RPC message must be an object")
            )
        else:
            reason = "no session: send initialize first, or a request with the 2026-07-28 envelope"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))

    async def _modern(
        self,
        receive: Receive,
        send: Send,
        headers: Headers,
        body: bytes,
        obj: dict[str, Any],
        principal: Principal | None,
    ) -> None:
        id = obj.get("id")
        id = id if type(id) is int or type(id) is str else None
        try:
            _check_headers(headers, obj)
        except ProtocolError as exc:
            await respond(send, status_of(exc.code), error_frame(None, id, exc))
            return
        if "method" not in obj or id is None:
            await respond(send, 202 if "method" in obj else 400, b"")  # notifications: accepted
            return
        from mcpio.connection import ServerConnection

        if self.streams >= self.options.max_streams:
            raise HttpError(503, ProtocolError(INVALID_REQUEST, "too many open streams"))
        self.streams += 1
        try:
            # The handler runs in this task and writes straight into the response: JSON when
            # its first frame is the answer, else an SSE stream. The client going away cancels it.
            async with anyio.create_task_group() as tasks:
                answer = Answer(send, tasks)
                connection = ServerConnection(self.server, answer)
                connection.modern_seen = True  # without its envelope: invalid params
                connection.principal = principal
                tasks.start_soon(_watch_disconnect, receive, tasks.cancel_scope)
                await connection.on_request(body, obj)
                tasks.cancel_scope.cancel()
        finally:
            self.streams -= 1

    # ------------------------------------------------------------------ legacy sessions

    def _session(self, session_id: str, principal: Principal | None) -> LegacySession:
        """The session, if it exists and belongs to this principal (one of another principal's
        is answered as unknown: 404, telling nothing about it)."""
        self._expire()
        session = self.sessions.get(session_id)
        if session is None or _subject(session.principal) != _subject(principal):
            raise HttpError(404, ProtocolError(INVALID_REQUEST, "unknown or expired session"))
        session.last_used = time.monotonic()
        session.principal = session.connection.principal = principal  # its latest token's
        return session

    def _expire(self) -> None:
        deadline = time.monotonic() - self.options.session_idle_seconds
        for key, session in list(self.sessions.items()):
            if session.last_used < deadline:
                del self.sessions[key]
                session.ended.set()

    async def _initialize(
        self,
        receive: Receive,
        send: Send,
        body: bytes,
        obj: dict[str, Any],
        principal: Principal | None,
    ) -> None:
        self._expire()
        if len(self.sessions) >= self.options.max_sessions:
            raise HttpError(503, ProtocolError(INVALID_REQUEST, "too many sessions"))
        from mcpio.connection import ServerConnection

        session = LegacySession(secrets.token_urlsafe(24))
        session.connection = ServerConnection(self.server, session)
        session.principal = session.connection.principal = principal
        self._start(session)
        id = obj.get("id")
        outbox = session.stream_for(id if type(id) is int or type(id) is str else None)
        await session.deliver(body)
        frame = await outbox.receive()
        session.streams.pop(id, None)
        answer = pydantic_core.from_json(frame)
        if "result" in answer:
            self.sessions[session.id] = session
            await respond(send, 200, frame, {"mcp-session-id": session.id})
        else:
            session.ended.set()
            await respond(send, 400, frame)

    def _start(self, session: LegacySession) -> None:
        """Sessions outlive the request that opened them: each runs in a task of its own."""
        session.task = asyncio.get_running_loop().create_task(session.run())

    async def _legacy(
        self,
        receive: Receive,
        send: Send,
        headers: Headers,
        session: LegacySession,
        body: bytes,
        obj: Any,
    ) -> None:
        codec = session.connection.codec
        version = headers.get("mcp-protocol-version")
        if version is not None and codec is not None and version != codec.revision:
            reason = f"MCP-Protocol-Version {version!r} is not this session's ({codec.revision})"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
        items = obj if type(obj) is list else [obj]
        if type(obj) is list and (codec is None or not codec.batching or not obj):
            raise HttpError(
                400, ProtocolError(INVALID_REQUEST, "batches are not part of this revision")
            )
        requests: list[RequestId] = []
        for item in items:
            if type(item) is not dict:
                raise HttpError(
                    400, ProtocolError(INVALID_REQUEST, "a JSON-RPC message must be an object")
                )
            if "method" in item and type(item.get("id")) in (int, str):
                requests.append(item["id"])
        outboxes = [session.stream_for(id) for id in requests]
        for item in items:
            await session.deliver(body if item is obj else pydantic_core.to_json(item))
        if not requests:
            await respond(send, 202, b"")
        elif type(obj) is list:
            answers = [await outbox.receive() for outbox in outboxes]
            for id in requests:
                session.streams.pop(id, None)
            await respond(send, 200, b"[" + b",".join(answers) + b"]")
        else:
            await self._stream(receive, send, outboxes[0], None, requests[0], session)

    async def _get(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        principal: Principal | None,
    ) -> None:
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            raise HttpError(405, ProtocolError(INVALID_REQUEST, "GET needs a legacy session"))
        if "text/event-stream" not in headers.get("accept", ""):
            raise HttpError(
                406, ProtocolError(INVALID_REQUEST, "Accept must list text/event-stream")
            )
        self._authorize(principal, [])
        session = self._session(session_id, principal)
        if session.background is not None:
            raise HttpError(
                409, ProtocolError(INVALID_REQUEST, "this session's stream is already open")
            )
        outbox = session.open_background()
        until = principal.expires_at if principal is not None else None
        try:
            await self._stream(receive, send, outbox, None, None, session, until)
        finally:
            session.background = None

    async def _delete(self, send: Send, headers: Headers, principal: Principal | None) -> None:
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            raise HttpError(405, ProtocolError(INVALID_REQUEST, "DELETE needs a legacy session"))
        self._authorize(principal, [])
        session = self._session(session_id, principal)
        del self.sessions[session_id]
        await session.close()
        await respond(send, 200, b"")

    # ------------------------------------------------------------------ answers

    async def _stream(
        self,
        receive: Receive,
        send: Send,
        outbox: MemoryObjectReceiveStream[bytes],
        run: Callable[[], Coroutine[Any, Any, None]] | None,
        id: RequestId | None,
        session: LegacySession | None = None,
        until: float | None = None,
    ) -> None:
        """Answer with the first frame as JSON if it is the response, else as an SSE stream of
        every frame up to the response (forever, for a GET stream or a listen; a GET stream
        ends at `until`, when its access token expires). The client going away cancels the
        work (modern) or just ends the stream (legacy)."""
        if self.streams >= self.options.max_streams:
            raise HttpError(503, ProtocolError(INVALID_REQUEST, "too many open streams"))
        self.streams += 1
        try:
            async with anyio.create_task_group() as tasks:
                if run is not None:
                    tasks.start_soon(run)
                tasks.start_soon(_watch_disconnect, receive, tasks.cancel_scope)
                await _answer(send, outbox, id, session is not None and id is None, until)
                tasks.cancel_scope.cancel()
        finally:
            self.streams -= 1
            if session is not None and id is not None:
                session.streams.pop(id, None)


async def _answer(
    send: Send,
    outbox: MemoryObjectReceiveStream[bytes],
    id: RequestId | None,
    keepalive: bool,
    until: float | None = None,
) -> None:
    first: bytes | None = b""  # a stream of the session's own (GET): open it at once
    if id is not None:
        first = await _next(outbox, keepalive)
        if first is None:
            return
        if _is_response(first):
            await respond(send, _status_of_frame(first), first)
            return
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/event-stream"),
                (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no"),
            ],
        }
    )
    frame: bytes | None = first
    while frame is not None:
        chunk = b": ping\n\n" if frame == b"" else b"event: message\ndata: " + frame + b"\n\n"
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if id is not None and frame and _is_response(frame):
            break
        frame = await _next(outbox, True, until)
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _next(
    outbox: MemoryObjectReceiveStream[bytes], keepalive: bool, until: float | None = None
) -> bytes | None:
    """The next frame; b"" when a long-lived stream should say it is still there; None when
    the stream ends (its outbox closed, or the time `until` reached)."""
    try:
        if not keepalive:
            return await outbox.receive()
        wait = KEEPALIVE_SECONDS if until is None else min(KEEPALIVE_SECONDS, until - time.time())
        with anyio.move_on_after(wait):
            return await outbox.receive()
        return b"" if until is None or time.time() < until else None
    except anyio.EndOfStream:
        return None


async def _watch_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


def _is_response(frame: bytes) -> bool:
    obj = pydantic_core.from_json(frame)
    return type(obj) is dict and "method" not in obj


def _status_of_frame(frame: bytes) -> int:
    error = pydantic_core.from_json(frame).get("error")
    return status_of(error.get("code")) if type(error) is dict else 200


def status_of(code: Any) -> int:
    if code == -32601:
        return 404
    return 400 if code in BAD_REQUEST_CODES else 200


async def respond(
    send: Send, status: int, body: bytes, headers: dict[str, str] | None = None
) -> None:
    raw = [(b"content-length", str(len(body)).encode())]
    if body:
        raw.append((b"content-type", b"application/json"))
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class HttpError(Exception):
    def __init__(self, status: int, error: ProtocolError, headers: dict[str, str] | None = None):
        super().__init__(error.message)
        self.status = status
        self.error = error
        self.headers = headers


def _messages(obj: Any) -> list[Any]:
    return obj if type(obj) is list else [obj]


def _subject(principal: Principal | None) -> str | None:
    return principal.subject if principal is not None else None


def _hostname(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def decode_header(value: str) -> str:
    """A header value, with the `=?base64?...?=` form for text that is not plain header text."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode()
        except ValueError:
            raise ProtocolError(HEADER_MISMATCH, "a header's base64 value is malformed") from None
    return value


def _check_headers(headers: Headers, obj: dict[str, Any]) -> None:
    """A modern POST's routing headers must be present and agree with its body."""
    version = headers.get("mcp-protocol-version")
    declared = envelope_version(obj)
    if version is None:
        raise ProtocolError(HEADER_MISMATCH, "the MCP-Protocol-Version header is missing")
    if declared is not None and declared != version:
        raise ProtocolError(
            HEADER_MISMATCH,
            "MCP-Protocol-Version does not match the request's _meta",
            {"header": version, "body": declared},
        )
    if version not in MODERN:
        raise ProtocolError(
            UNSUPPORTED_VERSION,
            f"unsupported protocol version {version!r}; supported: {', '.join(reversed(MODERN))}",
            {"supported": list(reversed(MODERN)), "requested": version},
        )
    if "id" not in obj:
        return
    method = obj.get("method")
    if _single(headers, "mcp-method") != method:
        raise ProtocolError(HEADER_MISMATCH, "Mcp-Method is missing or does not match the body")
    key = NAMED_BY.get(method) if isinstance(method, str) else None
    if key is not None:
        params = obj.get("params")
        value = params.get(key) if type(params) is dict else None
        name = _single(headers, "mcp-name")
        if name is None or decode_header(name) != value:
            raise ProtocolError(
                HEADER_MISMATCH, f"Mcp-Name is missing or does not match params.{key}"
            )


def _single(headers: Headers, name: str) -> str | None:
    values = headers.getlist(name)
    if len(values) > 1:
        raise ProtocolError(HEADER_MISMATCH, f"{name} appears more than once")
    return values[0] if values else None


# ---------------------------------------------------------------------- transports


SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class Answer:
    """One modern POST's answer as a transport: the response alone as JSON; notifications
    first make it an SSE stream (kept alive with comments while it stays open, as a listen
    stream does), which the response ends."""

    def __init__(self, send: Send, tasks: anyio.abc.TaskGroup) -> None:
        self._send = send
        self._tasks = tasks
        self._streaming = False
        self._done = False
        self._lock = anyio.Lock(fast_acquire=True)

    async def receive(self) -> bytes:
        raise anyio.EndOfStream  # the request arrived with the POST; nothing else comes

    async def send(self, data: bytes) -> None:
        async with self._lock:
            if self._done:
                return
            try:
                await self._write(data)
            except OSError:  # the client went away mid-answer: stop the work
                self._done = True
                self._tasks.cancel_scope.cancel()

    async def _write(self, data: bytes) -> None:
        response = _is_response(data)
        if not self._streaming:
            if response:
                self._done = True
                await respond(self._send, _status_of_frame(data), data)
                return
            self._streaming = True
            await self._send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            self._tasks.start_soon(self._keepalive)
        chunk = b"event: message\ndata: " + data + b"\n\n"
        await self._send({"type": "http.response.body", "body": chunk, "more_body": not response})
        self._done = response

    async def _keepalive(self) -> None:
        while True:
            await anyio.sleep(KEEPALIVE_SECONDS)
            async with self._lock:
                if self._done:
                    return
                await self._send(
                    {"type": "http.response.body", "body": b": ping\n\n", "more_body": True}
                )

    async def aclose(self) -> None:
        pass


class LegacySession:
    """A legacy session's transport: frames in from its POSTs, frames out to the stream of the
    request whose handler said them, or to the GET stream."""

    def __init__(self, id: str) -> None:
        self.id = id
        self.connection: ServerConnection
        self.task: asyncio.Task[None] | None = None
        self.last_used = time.monotonic()
        self.ended = anyio.Event()
        self.streams: dict[RequestId | None, MemoryObjectSendStream[bytes]] = {}
        self.background: MemoryObjectSendStream[bytes] | None = None
        self.principal: Principal | None = None  # who opened it (with authorization)
        self._send_in, self._receive_in = anyio.create_memory_object_stream[bytes](math.inf)

    def stream_for(self, id: RequestId | None) -> MemoryObjectReceiveStream[bytes]:
        send, receive = anyio.create_memory_object_stream[bytes](math.inf)
        self.streams[id] = send
        return receive

    def open_background(self) -> MemoryObjectReceiveStream[bytes]:
        send, receive = anyio.create_memory_object_stream[bytes](math.inf)
        self.background = send
        return receive

    async def run(self) -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.connection.run)
            await self.ended.wait()
            tasks.cancel_scope.cancel()
        for stream in [*self.streams.values(), self.background]:
            if stream is not None:
                stream.close()

    async def deliver(self, frame: bytes) -> None:
        await self._send_in.send(frame)

    async def receive(self) -> bytes:
        try:
            return await self._receive_in.receive()
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            raise anyio.EndOfStream from None

    async def send(self, data: bytes) -> None:
        current = serving.get()
        target = None
        if current is not None and current[0] is self.connection.session:
            target = self.streams.get(current[1])
        if target is None:
            target = self.background
        if target is None:
            log.debug("session %s: no open stream for a server message; dropped", self.id[:8])
            return
        try:
            target.send_nowait(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # that stream's client went away (in legacy, not a cancellation)

    async def aclose(self) -> None:
        self._send_in.close()

    async def close(self) -> None:
        self._send_in.close()
        self.ended.set()
