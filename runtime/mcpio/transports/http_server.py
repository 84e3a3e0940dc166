"""Streamable HTTP, the server's side: one ASGI app, one endpoint, both eras.

Modern (2026-07-28): every POST is a whole, stateless exchange. Its headers must agree with its
body; the answer is JSON, or an SSE stream when notifications (progress, log) precede the
result; the client closing that stream cancels the handler; `subscriptions/listen` is a stream
that stays open. No sessions, no GET.

Legacy (2025-03-26 .. 2025-11-25): `initialize` opens a session named by `Mcp-Session-Id`; each
POST carries one message (a batch on 2025-03-26); what a handler says while it runs (progress,
questions to the client, its response) goes back on that POST's stream, anything else on the
session's GET stream. Sessions expire when idle and end with DELETE.

Every request is answered exactly once, or refused with a documented status: a legacy POST
waits until each request it carried is done (a request the client cancelled adds nothing; a
session that ends under it: 404), an id that could not be told apart from another's (not a
string or integer, repeated in a batch, or still in use in the session) is refused without
reaching the session. The legacy era answers JSON-RPC responses, errors included, with 200 (its
clients read a 4xx as a transport failure, and a 404 as "session gone"); the modern era maps
error codes to statuses (400, 404 for -32601).

Secure by default: Host and Origin must name this machine unless configured otherwise (421 /
403, parsed exactly), bodies are bounded in size (413) and time (408), and so is what one
client, or all of them, may hold at once: sessions, requests in flight, GET and listen streams
(429 for one client past its share, 503 when full), bodies being parsed (they wait their turn),
batch length (413). Streams end after a lifetime; a stream whose reader falls behind is cut
off. No response carries a traceback.

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
import re
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.datastructures import Headers

from mcpio.auth import Principal, ResourceServerAuth, VerifierUnavailable, bearer_token
from mcpio.jsonrpc import RequestId, error_frame
from mcpio.negotiate import MODERN, peek_any
from mcpio.session import serving
from mcpio.transports.admission import ByteBudget, Refused, Slots
from mcpio.wire.codec import MAX_MESSAGE_BYTES
from mcpio.wire.errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError
from mcpio.wire.peek import NAMED_BY, Peek

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
# JSON-RPC codes the modern era answers with 400 (and 404 for an unknown method). The legacy era
# answers every JSON-RPC response with 200, as its clients expect.
BAD_REQUEST_CODES = frozenset({-32700, -32600, -32602, -32020, -32021, -32022})
LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]"})
KEEPALIVE_SECONDS = 15.0
# A Host header (RFC 9110 §7.2): a bracketed IPv6 literal or a name, then an optional port.
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::[0-9]{1,5})?")
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://(.+)")
_BATCH = re.compile(rb"[ \t\r\n]*\[")  # a JSON array (only its start is read)


@dataclass
class HttpOptions:
    """How the app serves and what it admits (the README's "Limits" lists every bound). A
    client is the principal with authorization, else the peer's address."""

    path: str = "/mcp"
    allowed_hosts: frozenset[str] | None = None  # None: loopback names only; {"*"}: any
    allowed_origins: frozenset[str] | None = None  # host names an Origin may carry
    max_body_bytes: int = MAX_MESSAGE_BYTES
    body_timeout: float = 30.0  # to receive a whole body: 408 past it
    max_parsing_bytes: int = 2 * MAX_MESSAGE_BYTES  # bodies held (parsed, served) at once
    admission_timeout: float = 10.0  # how long a body waits for that budget: 503 past it
    max_batch_items: int = 256  # 2025-03-26 batches
    max_sessions: int = 1000
    max_sessions_per_client: int = 100
    handshake_seconds: float = 60.0  # a session never used after its initialize ends then
    session_idle_seconds: float = 1800.0
    max_streams: int = 1000  # requests being answered at once
    max_streams_per_client: int = 200
    max_listen_streams: int = 1000  # legacy GET streams and subscriptions/listen streams
    max_listen_streams_per_client: int = 100
    stream_lifetime: float = 3600.0  # a GET or listen stream ends then; the client opens another
    stream_queue: int = 256  # frames waiting for a stream's reader: a slower one is cut off
    send_timeout: float = 30.0  # a stream whose reader takes no frame this long: cut off
    auth: ResourceServerAuth | None = None  # None: no authorization


def http_app(server: Server, **options: Any) -> HttpApp:
    """The ASGI app serving `server` at `path` (default `/mcp`); see `HttpOptions`."""
    return HttpApp(server, HttpOptions(**options))


@dataclass
class Exchange:
    """One HTTP request to the endpoint, and the means to answer it."""

    receive: Receive
    send: Send
    headers: Headers
    principal: Principal | None
    client: str  # whom per-client bounds count


class HttpApp:
    def __init__(self, server: Server, options: HttpOptions) -> None:
        self.server = server
        self.options = options
        self.sessions: dict[str, LegacySession] = {}
        self.session_slots = Slots(
            "sessions", options.max_sessions, options.max_sessions_per_client
        )
        self.request_slots = Slots(
            "requests in flight", options.max_streams, options.max_streams_per_client
        )
        self.listen_slots = Slots(
            "open streams", options.max_listen_streams, options.max_listen_streams_per_client
        )
        self.parsing = ByteBudget(options.max_parsing_bytes, options.admission_timeout)

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
            exchange = Exchange(receive, send, headers, principal, _client(scope, principal))
            method = scope["method"]
            if method == "POST":
                await self._post(exchange)
            elif method == "GET":
                await self._get(exchange)
            elif method == "DELETE":
                await self._delete(exchange)
            else:
                raise HttpError(405, ProtocolError(INVALID_REQUEST, f"{method} is not allowed"))
        except Refused as exc:
            error = ProtocolError(INVALID_REQUEST, exc.reason)
            retry = {"retry-after": "1"} if exc.status in (429, 503) else None
            await respond(send, exc.status, error_frame(None, None, error), retry)
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
                    self._end(session)
                await self.server.stop_bus()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # ------------------------------------------------------------------ checks

    def _check_host_and_origin(self, headers: Headers) -> None:
        allowed = self.options.allowed_hosts
        hosts = headers.getlist("host")
        if len(hosts) > 1:
            raise HttpError(400, ProtocolError(INVALID_REQUEST, "more than one Host header"))
        if allowed is None or "*" not in allowed:
            host = _hostname(hosts[0] if hosts else "")
            if host is None or host not in (allowed or LOOPBACK):
                raise HttpError(421, ProtocolError(INVALID_REQUEST, "Host not allowed"))
        origins = headers.getlist("origin")
        if not origins:
            return
        allowed = self.options.allowed_origins or self.options.allowed_hosts or LOOPBACK
        if "*" in allowed:
            return
        match = _ORIGIN.fullmatch(origins[0].strip().lower())
        host = _hostname(match[1]) if match is not None else None
        if len(origins) > 1 or host is None or host not in allowed:
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

    def _authorize(self, principal: Principal | None, routes: list[tuple[str, str | None]]) -> None:
        """403 unless the principal holds every scope these messages (method, name) need."""
        auth = self.options.auth
        if auth is None or principal is None:
            return
        needed = auth.needed(routes)
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
        limit = self.options.max_body_bytes
        with anyio.move_on_after(self.options.body_timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise HttpError(400, ProtocolError(INVALID_REQUEST, "the client went away"))
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    reason = f"body exceeds {limit} bytes"
                    raise HttpError(413, ProtocolError(INVALID_REQUEST, reason))
                chunks.append(chunk)
                if not message.get("more_body"):
                    return b"".join(chunks)
        reason = f"the body did not arrive within {self.options.body_timeout:g} s"
        raise HttpError(408, ProtocolError(INVALID_REQUEST, reason))

    # ------------------------------------------------------------------ POST

    async def _post(self, exchange: Exchange) -> None:
        headers = exchange.headers
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
        body = await self._body(exchange.receive)
        held = await self.parsing.take(len(body))
        try:
            await self._route(exchange, body)
        finally:
            self.parsing.give(held)

    async def _route(self, exchange: Exchange, body: bytes) -> None:
        """Route a POST by its envelope alone (`peek`): its params are read once, by the codec
        of the revision that serves it. A JSON array is a batch, for a 2025-03-26 session."""
        session_id = exchange.headers.get("mcp-session-id")
        if _BATCH.match(body):
            try:
                items: Any = pydantic_core.from_json(body, allow_inf_nan=False)
            except ValueError as exc:
                raise HttpError(400, ProtocolError(PARSE_ERROR, f"not valid JSON: {exc}")) from None
            self._authorize(exchange.principal, [_route_of(item) for item in items])
            if session_id is None:
                reason = "a batch needs a 2025-03-26 session"
                raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
            session = self._session(session_id, exchange.principal)
            await self._legacy(exchange, session, body, items)
            return
        try:
            env = peek_any(body)
        except ProtocolError as exc:
            raise HttpError(400, exc) from None
        self._authorize(exchange.principal, [(env.method, env.name)] if env.method else [])
        version = exchange.headers.get("mcp-protocol-version")
        if session_id is None and (version in MODERN or env.protocol_version is not None):
            await self._modern(exchange, body, env)
        elif env.method == "initialize":
            await self._initialize(exchange, body, env)
        elif session_id is not None:
            session = self._session(session_id, exchange.principal)
            await self._legacy(exchange, session, body, env)
        else:
            reason = "no session: send initialize first, or a request with the 2026-07-28 envelope"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))

    async def _modern(self, exchange: Exchange, body: bytes, env: Peek) -> None:
        try:
            _check_headers(exchange.headers, env)
        except ProtocolError as exc:
            await respond(exchange.send, status_of(exc.code), error_frame(None, env.id, exc))
            return
        if env.kind == "notification":
            await respond(exchange.send, 202, b"")  # accepted, never answered
            return
        if env.kind != "request":
            reason = "a 2026-07-28 server takes requests and notifications, not responses"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
        from mcpio.connection import ServerConnection

        listen = env.method == "subscriptions/listen"
        slots = self.listen_slots if listen else self.request_slots
        with slots.holding(exchange.client):
            # The handler runs in this task and writes straight into the response: JSON when
            # its first frame is the answer, else an SSE stream. The client going away cancels it.
            async with anyio.create_task_group() as tasks:
                answer = Answer(exchange.send, tasks, self.options.send_timeout)
                connection = ServerConnection(self.server, answer)
                connection.modern_seen = True  # without its envelope: invalid params
                connection.principal = exchange.principal
                connection.listen_until = time.time() + self.options.stream_lifetime
                connection.listen_queue = self.options.stream_queue
                tasks.start_soon(_watch_disconnect, exchange.receive, tasks.cancel_scope)
                await connection.on_request(body, env)
                tasks.cancel_scope.cancel()

    # ------------------------------------------------------------------ legacy sessions

    def _session(self, session_id: str, principal: Principal | None) -> LegacySession:
        """The session, if it exists and belongs to this principal (one of another principal's
        is answered as unknown: 404, telling nothing about it)."""
        self._expire()
        session = self.sessions.get(session_id)
        if session is None or _subject(session.principal) != _subject(principal):
            raise HttpError(404, ProtocolError(INVALID_REQUEST, "unknown or expired session"))
        session.last_used = time.monotonic()
        session.established = True
        session.principal = session.connection.principal = principal  # its latest token's
        return session

    def _expire(self) -> None:
        now = time.monotonic()
        idle, handshake = self.options.session_idle_seconds, self.options.handshake_seconds
        for session in list(self.sessions.values()):
            if session.last_used + (idle if session.established else handshake) < now:
                self._end(session)

    def _end(self, session: LegacySession) -> None:
        if self.sessions.pop(session.id, None) is not None:
            self.session_slots.give(session.client)
        session.end()

    async def _initialize(self, exchange: Exchange, body: bytes, env: Peek) -> None:
        id = env.id
        if env.kind != "request" or id is None:
            reason = "initialize must be a request whose id is a string or an integer"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
        self._expire()
        self.session_slots.take(exchange.client)
        from mcpio.connection import ServerConnection

        session = LegacySession(
            secrets.token_urlsafe(24), exchange.client, self.options.stream_queue
        )
        session.connection = ServerConnection(self.server, session)
        session.principal = session.connection.principal = exchange.principal
        session.task = asyncio.get_running_loop().create_task(session.run())
        opened = False
        try:
            outbox = session.exchange([id])
            await session.deliver(body)
            answer = await _first_response(outbox)
            if answer is None:  # the server is shutting down
                raise HttpError(503, ProtocolError(INVALID_REQUEST, SESSION_ENDED))
            opened = _has_result(answer)
            if opened:
                self.sessions[session.id] = session
            await respond(
                exchange.send, 200, answer, {"mcp-session-id": session.id} if opened else None
            )
        finally:
            session.release([id])
            if not opened:
                self.session_slots.give(exchange.client)
                session.end()

    async def _legacy(
        self, exchange: Exchange, session: LegacySession, body: bytes, message: Peek | list[Any]
    ) -> None:
        """One legacy POST: a message (its envelope) or a batch (its items)."""
        codec = session.connection.codec
        version = exchange.headers.get("mcp-protocol-version")
        if version is not None and codec is not None and version != codec.revision:
            reason = f"MCP-Protocol-Version {version!r} is not this session's ({codec.revision})"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
        batch = isinstance(message, list)
        refused: list[bytes] = []  # answers made here, for items the session must not see
        ids: list[RequestId] = []
        frames: list[bytes] = []
        if isinstance(message, list):
            if codec is None or not codec.batching or not message:
                reason = "batches are not part of this revision"
                raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
            if len(message) > self.options.max_batch_items:
                reason = f"a batch holds at most {self.options.max_batch_items} messages"
                raise HttpError(413, ProtocolError(INVALID_REQUEST, reason))
            for item in message:
                frame = pydantic_core.to_json(item)
                try:
                    env = peek_any(frame)
                except ProtocolError as exc:  # not a message; an id of the wrong type
                    refused.append(error_frame(codec, None, exc))
                    continue
                error = _in_use(session, env, ids)
                if error is not None:
                    refused.append(error_frame(codec, env.id, error))
                    continue
                frames.append(frame)
                if env.kind == "request" and env.id is not None:
                    ids.append(env.id)
        else:
            error = _in_use(session, message, ids)
            if error is not None:
                raise HttpError(400, error)
            frames.append(body)
            if message.kind == "request" and message.id is not None:
                ids.append(message.id)
        outbox = session.exchange(ids)
        try:
            for frame in frames:
                await session.deliver(frame)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_watch_disconnect, exchange.receive, tasks.cancel_scope)
                await _relay(exchange.send, outbox, ids, refused, batch)
                tasks.cancel_scope.cancel()
        finally:
            session.release(ids)

    async def _get(self, exchange: Exchange) -> None:
        headers = exchange.headers
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            raise HttpError(405, ProtocolError(INVALID_REQUEST, "GET needs a legacy session"))
        if "text/event-stream" not in headers.get("accept", ""):
            raise HttpError(
                406, ProtocolError(INVALID_REQUEST, "Accept must list text/event-stream")
            )
        self._authorize(exchange.principal, [])
        session = self._session(session_id, exchange.principal)
        if session.background is not None:
            raise HttpError(
                409, ProtocolError(INVALID_REQUEST, "this session's stream is already open")
            )
        until = time.time() + self.options.stream_lifetime
        if exchange.principal is not None and exchange.principal.expires_at is not None:
            until = min(until, exchange.principal.expires_at)
        with self.listen_slots.holding(exchange.client):
            outbox = session.open_background()
            try:
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(_watch_disconnect, exchange.receive, tasks.cancel_scope)
                    await _stream_until(exchange.send, outbox, until)
                    tasks.cancel_scope.cancel()
            finally:
                session.close_background(outbox)

    async def _delete(self, exchange: Exchange) -> None:
        session_id = exchange.headers.get("mcp-session-id")
        if session_id is None:
            raise HttpError(405, ProtocolError(INVALID_REQUEST, "DELETE needs a legacy session"))
        self._authorize(exchange.principal, [])
        self._end(self._session(session_id, exchange.principal))
        await respond(exchange.send, 200, b"")


def _in_use(session: LegacySession, env: Peek, taken: list[RequestId]) -> ProtocolError | None:
    """Why a request is answered here rather than by the session: its id is one whose answer
    could not be told apart from another's (repeated in its POST, or still in use)."""
    if env.kind != "request" or env.id is None:
        return None
    if env.id in taken or session.in_use(env.id):
        return ProtocolError(INVALID_REQUEST, f"id {env.id!r} is in use by another request")
    return None


def _route_of(item: Any) -> tuple[str, str | None]:
    """A batch item's method and the name it acts on, for the scopes it needs."""
    method = item.get("method") if type(item) is dict else None
    if type(method) is not str:
        return "", None
    key = NAMED_BY.get(method)
    params = item.get("params")
    name = params.get(key) if key is not None and type(params) is dict else None
    return method, name if type(name) is str else None


def _has_result(frame: bytes) -> bool:
    obj = pydantic_core.from_json(frame)
    return type(obj) is dict and "result" in obj


# ---------------------------------------------------------------------- answers


@dataclass(frozen=True, slots=True)
class Done:
    """The handler of a request finished: its exchange expects nothing more for that id."""

    id: RequestId


Outbox = MemoryObjectReceiveStream["bytes | Done"]


class Sse:
    """An SSE response being written: events, keep-alive comments, its end."""

    def __init__(self, send: Send) -> None:
        self._send = send

    async def open(self) -> Sse:
        await self._send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        return self

    async def event(self, frame: bytes, last: bool = False) -> None:
        chunk = b"event: message\ndata: " + frame + b"\n\n"
        await self._send({"type": "http.response.body", "body": chunk, "more_body": not last})

    async def ping(self) -> None:
        await self._send({"type": "http.response.body", "body": b": ping\n\n", "more_body": True})

    async def close(self) -> None:
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})


async def _next(outbox: Outbox, until: float = math.inf) -> bytes | Done | None:
    """The next item; None when a stream should say it is still there. Raises EndOfStream when
    the outbox ends (its stream cut off, or its session ended) or at the time `until`."""
    wait = min(KEEPALIVE_SECONDS, until - time.time())
    if wait <= 0:
        raise anyio.EndOfStream
    with anyio.move_on_after(wait):
        return await outbox.receive()
    return None


async def _first_response(outbox: Outbox) -> bytes | None:
    """The response a request's handler sent, once it finished (None: it sent none)."""
    response = None
    try:
        while True:
            item = await outbox.receive()
            if isinstance(item, Done):
                return response
            if _is_response(item):
                response = item
    except anyio.EndOfStream:
        return response


async def _relay(
    send: Send, outbox: Outbox, ids: list[RequestId], answers: list[bytes], batch: bool
) -> None:
    """Answer a legacy POST once every request it carried is done: as JSON (the response, or
    the batch's array) while only responses come, as an SSE stream of every frame (responses
    included) once a handler says something else first (progress, a log, a request). A
    request cancelled by the client adds nothing; with nothing to answer, 202."""
    pending = set(ids)
    sse: Sse | None = None
    try:
        while pending:
            item = await _next(outbox)
            if item is None:
                if sse is not None:
                    await sse.ping()
            elif isinstance(item, Done):
                pending.discard(item.id)
            else:
                obj = pydantic_core.from_json(item)
                if type(obj) is dict and "method" not in obj:  # a response
                    pending.discard(obj.get("id"))
                    if sse is None:
                        answers.append(item)
                        continue
                elif sse is None:
                    sse = await Sse(send).open()
                    for answer in answers:
                        await sse.event(answer)
                await sse.event(item)
    except anyio.EndOfStream:  # the session ended, or this stream's reader fell behind
        if sse is None and not answers:
            raise HttpError(404, ProtocolError(INVALID_REQUEST, SESSION_ENDED)) from None
    if sse is not None:
        await sse.close()
    elif not answers:
        await respond(send, 202, b"")
    else:
        await respond(send, 200, b"[" + b",".join(answers) + b"]" if batch else answers[0])


SESSION_ENDED = "the session ended"


async def _stream_until(send: Send, outbox: Outbox, until: float) -> None:
    """A session's GET stream: every frame sent to it, keep-alive comments, until `until`
    (its lifetime, or its access token's expiry) or until it is cut off."""
    sse = await Sse(send).open()
    try:
        while True:
            item = await _next(outbox, until)
            if item is None:
                await sse.ping()
            elif not isinstance(item, Done):
                await sse.event(item)
    except anyio.EndOfStream:
        await sse.close()


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
    """The HTTP status of a modern JSON-RPC answer."""
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


def _client(scope: Scope, principal: Principal | None) -> str:
    if principal is not None:
        return "principal:" + principal.subject
    peer = scope.get("client")
    return str(peer[0]) if peer else ""


def _subject(principal: Principal | None) -> str | None:
    return principal.subject if principal is not None else None


def _hostname(host: str) -> str | None:
    """The host of a Host header (or of an Origin after its scheme), lowercase, without its
    port; None unless it is exactly a host and an optional port."""
    match = _HOST.fullmatch(host.strip().lower())
    return match[1] if match is not None else None


def decode_header(value: str) -> str:
    """A header value, with the `=?base64?...?=` form for text that is not plain header text."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode()
        except ValueError:
            raise ProtocolError(HEADER_MISMATCH, "a header's base64 value is malformed") from None
    return value


def _check_headers(headers: Headers, env: Peek) -> None:
    """A modern POST's routing headers must be present and agree with its body."""
    version = headers.get("mcp-protocol-version")
    declared = env.protocol_version
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
    if env.kind != "request":
        return
    method = env.method
    if _single(headers, "mcp-method") != method:
        raise ProtocolError(HEADER_MISMATCH, "Mcp-Method is missing or does not match the body")
    key = NAMED_BY.get(method) if method is not None else None
    if key is not None:
        name = _single(headers, "mcp-name")
        if name is None or decode_header(name) != env.name:
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
    stream does), which the response ends. A frame its reader does not take within
    `send_timeout` ends the exchange, as the client going away does."""

    def __init__(self, send: Send, tasks: anyio.abc.TaskGroup, send_timeout: float) -> None:
        self._send = send
        self._tasks = tasks
        self._send_timeout = send_timeout
        self._sse: Sse | None = None
        self._done = False
        self._lock = anyio.Lock(fast_acquire=True)

    async def receive(self) -> bytes:
        raise anyio.EndOfStream  # the request arrived with the POST; nothing else comes

    async def send(self, data: bytes) -> None:
        async with self._lock:
            if self._done:
                return
            written = False
            with anyio.move_on_after(self._send_timeout):
                try:
                    await self._write(data)
                    written = True
                except OSError:
                    pass
            if not written:  # the client went away, or stopped reading: stop the work
                self._done = True
                self._tasks.cancel_scope.cancel()

    async def _write(self, data: bytes) -> None:
        response = _is_response(data)
        self._done = response
        if self._sse is None:
            if response:
                await respond(self._send, _status_of_frame(data), data)
                return
            self._sse = await Sse(self._send).open()
            self._tasks.start_soon(self._keepalive)
        await self._sse.event(data, last=response)

    async def _keepalive(self) -> None:
        while True:
            await anyio.sleep(KEEPALIVE_SECONDS)
            async with self._lock:
                if self._done or self._sse is None:
                    return
                await self._sse.ping()

    async def aclose(self) -> None:
        pass


class LegacySession:
    """A legacy session's transport: frames in from its POSTs, frames out to the exchange of
    the request whose handler said them, or to the GET stream. Every outbox is bounded: a
    reader that falls `queue` frames behind is cut off (its stream ends)."""

    def __init__(self, id: str, client: str, queue: int) -> None:
        self.id = id
        self.client = client  # whose share of the session table it takes
        self.queue = queue
        self.connection: ServerConnection
        self.task: asyncio.Task[None] | None = None
        self.last_used = time.monotonic()
        self.established = False  # used again after its initialize
        self.ended = anyio.Event()
        self.streams: dict[RequestId, MemoryObjectSendStream[bytes | Done]] = {}
        self.background: MemoryObjectSendStream[bytes | Done] | None = None
        self.principal: Principal | None = None  # who opened it (with authorization)
        self._send_in, self._receive_in = anyio.create_memory_object_stream[bytes](math.inf)

    def in_use(self, id: RequestId) -> bool:
        """Whether a request of this session with this id is still awaited or being served."""
        return id in self.streams or self.connection.session.serves(id)

    def exchange(self, ids: list[RequestId]) -> Outbox:
        """One outbox for the frames said while serving these requests (one POST's)."""
        send, receive = anyio.create_memory_object_stream[bytes | Done](self.queue)
        for id in ids:
            self.streams[id] = send
        if self.ended.is_set():
            send.close()
        return receive

    def release(self, ids: list[RequestId]) -> None:
        for id in ids:
            stream = self.streams.pop(id, None)
            if stream is not None:
                stream.close()

    def open_background(self) -> Outbox:
        send, receive = anyio.create_memory_object_stream[bytes | Done](self.queue)
        self.background = send
        if self.ended.is_set():
            send.close()
        return receive

    def close_background(self, outbox: Outbox) -> None:
        outbox.close()
        self.background = None

    async def run(self) -> None:
        self.connection.session.on_served = self._served
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.connection.run)
            await self.ended.wait()
            tasks.cancel_scope.cancel()

    def _served(self, id: RequestId) -> None:
        self._put(self.streams.get(id), Done(id))

    async def deliver(self, frame: bytes) -> None:
        try:
            await self._send_in.send(frame)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise HttpError(404, ProtocolError(INVALID_REQUEST, SESSION_ENDED)) from None

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
        self._put(target, data)

    def _put(self, target: MemoryObjectSendStream[bytes | Done] | None, item: bytes | Done) -> None:
        if target is None:
            return
        try:
            target.send_nowait(item)
        except anyio.WouldBlock:
            log.info("session %s: a stream's reader fell behind; cut off", self.id[:8])
            target.close()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # that stream's client went away (in legacy, not a cancellation)

    async def aclose(self) -> None:
        self._send_in.close()

    def end(self) -> None:
        """End the session: no more frames in; every exchange and stream waiting on it ends."""
        self._send_in.close()
        self.ended.set()
        for stream in [*self.streams.values(), self.background]:
            if stream is not None:
                stream.close()
