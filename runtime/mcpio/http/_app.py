"""Streamable HTTP, the server's side: one ASGI app, one endpoint, both eras. The app checks
and routes each request by its envelope (`peek`); the codec of the revision that serves it
reads its params, once.

Modern (2026-07-28): every POST is a whole, stateless exchange. Its headers must agree with its
body (`Mcp-Param-*` too, for a tool that declares them: SEP-2243); the answer is JSON, or an SSE
stream when notifications (progress, log) precede the result; the client closing that stream
cancels the handler; `subscriptions/listen` is a stream that stays open. No sessions, no GET.
Error codes map to statuses (400; 404 for -32601).

Legacy (2025-03-26 .. 2025-11-25): sessions, in `mcpio.http._sessions`.

Every request is answered exactly once, or refused with a documented status (an id of the
wrong type: 400, -32600).

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
import functools
import ipaddress
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.lowlevel
import pydantic_core

from mcp_wire_runtime._peek import Peek
from mcp_wire_runtime.codec import MAX_MESSAGE_BYTES
from mcp_wire_runtime.errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError
from mcpio._core.context import HTTP_REQUEST
from mcpio._core.errors import LifespanError
from mcpio._core.jsonrpc import error_frame
from mcpio._core.negotiate import MODERN, peek_any, read_modern
from mcpio._core.principal import Principal
from mcpio._core.protocol_rules import unsupported_version
from mcpio._core.routes import Route
from mcpio._core.transport import FrameHook, Transport
from mcpio.auth._dpop_server import ReplayCacheFull
from mcpio.auth._resource import AuthRefused, ResourceServerAuth, VerifierUnavailable
from mcpio.http._admission import ByteBudget, Refused, Slots, network_share
from mcpio.http._asgi import (
    KEEPALIVE_SECONDS,
    Exchange,
    HttpError,
    Message,
    Receive,
    RequestHeaders,
    Scope,
    Send,
    Verdicts,
    body_too_large,
    error_code,
    read_body,
    respond,
    response_start,
    sent_kind,
    watch_disconnect,
    whole_body,
)
from mcpio.http._cors import Cors
from mcpio.http._routes import Routes
from mcpio.http._sessions import Hosted, LegacySessions, SessionLimits
from mcpio.latest import HEADER_MISMATCH
from mcpio.transports._http_rules import (
    JSON,
    NAMED_BY,
    ParamHeaders,
    accepts_both,
    check_params,
    decode_header_value,
    media_type,
    retry_after,
    status_of,
)
from mcpio.transports._sse import SseWriter

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mcpio._core.options import ConnectionOptions
    from mcpio.http._options import HttpAppOptions

log = logging.getLogger("mcpio")


LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]"})
# A Host header (RFC 9110 §7.2): a bracketed IPv6 literal or a name, then an optional port.
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::[0-9]{1,5})?")
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://(.+)")
_BATCH = re.compile(rb"[ \t\r\n]*\[")  # a JSON array (only its start is read)
LARGE_BODY = 256 * 1024  # bytes: a body whose parse takes the event loop for a while


@dataclass
class HttpOptions:
    """How the app serves and what it admits.

    The docs page "Limits" (docs/servers/limits.md) lists every bound. A client is the
    principal with authorization, else the peer's address.

    Args:
        path: The MCP endpoint's path (`/mcp` by default).
        allowed_hosts: The Host names served; None: loopback names only; `{"*"}`: any.
        allowed_origins: The host names an Origin header may carry.
        max_body_bytes: The largest request body (`MAX_MESSAGE_BYTES`, 16 MiB, by default).
        body_timeout: Seconds to receive a whole body: 408 past it (30).
        max_parsing_bytes: The bytes of bodies held (parsed, served) at once; None:
            `max_body_bytes` (one largest body at a time).
        admission_timeout: Seconds a body waits for that budget: 503 past it (10).
        max_batch_items: The items of a 2025-03-26 batch (256).
        max_sessions: The legacy sessions held at once (1000).
        max_sessions_per_client: The sessions one client may hold (100).
        max_sessions_per_network: What the clients of one network (IPv4 /24, IPv6 /48; not
            principals, not loopback) may hold; None: a quarter of the table, never less than
            one client's share.
        handshake_seconds: A session never used after its initialize ends then (60).
        session_idle_seconds: A session unused this long ends (1800).
        max_streams: The requests being answered at once (1000).
        max_streams_per_client: The requests of one client being answered at once (200).
        max_listen_streams: The legacy GET streams and `subscriptions/listen` streams open at
            once (1000).
        max_listen_streams_per_client: Those one client may hold (100).
        max_listen_streams_per_network: Those one network may hold, as
            `max_sessions_per_network`.
        stream_lifetime: A GET or listen stream ends after this many seconds; the client opens
            another (3600).
        stream_queue: The frames waiting for a stream's reader: a slower one is cut off (256).
        send_timeout: A stream whose reader takes no frame for this many seconds is cut off
            (30).
        poll_seconds: A 2025-11-25 POST waiting this long is closed; the client polls (30).
        auth: The resource server's token checks; None: no authorization.
        routes: The routes served beside the endpoint (`mcpio._core.routes`).
        cors_origins: The browser origins allowed to call (`mcpio.http._cors`).
    """

    path: str = "/mcp"
    allowed_hosts: frozenset[str] | None = None  # None: loopback names only; {"*"}: any
    allowed_origins: frozenset[str] | None = None  # host names an Origin may carry
    max_body_bytes: int = MAX_MESSAGE_BYTES
    body_timeout: float = 30.0  # to receive a whole body: 408 past it
    # bodies held (parsed, served) at once; None: `max_body_bytes` (one largest body at a time)
    max_parsing_bytes: int | None = None
    admission_timeout: float = 10.0  # how long a body waits for that budget: 503 past it
    max_batch_items: int = 256  # 2025-03-26 batches
    max_sessions: int = 1000
    max_sessions_per_client: int = 100
    # what the clients of one network (IPv4 /24, IPv6 /48; not principals, not loopback) may
    # hold; None: a quarter of the table, never less than one client's share
    max_sessions_per_network: int | None = None
    handshake_seconds: float = 60.0  # a session never used after its initialize ends then
    session_idle_seconds: float = 1800.0
    max_streams: int = 1000  # requests being answered at once
    max_streams_per_client: int = 200
    max_listen_streams: int = 1000  # legacy GET streams and subscriptions/listen streams
    max_listen_streams_per_client: int = 100
    max_listen_streams_per_network: int | None = None  # as `max_sessions_per_network`
    stream_lifetime: float = 3600.0  # a GET or listen stream ends then; the client opens another
    stream_queue: int = 256  # frames waiting for a stream's reader: a slower one is cut off
    send_timeout: float = 30.0  # a stream whose reader takes no frame this long: cut off
    poll_seconds: float = 30.0  # a 2025-11-25 POST waiting this long is closed; the client polls
    auth: ResourceServerAuth | None = None  # None: no authorization
    routes: Sequence[Route] = ()  # served beside the endpoint (`mcpio._core.routes`)
    cors_origins: Sequence[str] = ()  # browser origins allowed to call (`mcpio.http._cors`)


class Hosting(Protocol):
    """What the app needs of the server it serves (`mcpio.Server`)."""

    @property
    def max_answer_bytes(self) -> int:
        """The bound on a client's answers to the server's questions."""
        ...

    def connect(self, transport: Transport, **options: Unpack[ConnectionOptions]) -> Hosted:
        """A connection of the server over `transport`."""
        ...

    def param_headers(self, tool: str) -> ParamHeaders:
        """The `Mcp-Param-*` headers `tool`'s input schema marks (`x-mcp-header`)."""
        ...

    async def start(self) -> None:
        """Start the server: its lifespan, the notification bus and the task engine."""
        ...

    async def stop(self) -> None:
        """Stop what `start` started."""
        ...

    async def ensure_started(self) -> None:
        """Start the server if nothing has yet (an ASGI host without lifespan events)."""
        ...

    def running_in(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether the server is started in `loop`."""
        ...

    async def drain_tasks(self) -> None:
        """Let running tasks finish within their grace, then fail or requeue the rest."""
        ...


def _route_of(item: Any) -> tuple[str, str | None]:
    """A batch item's method and the name it acts on, for the scopes it needs."""
    method = item.get("method") if type(item) is dict else None
    if type(method) is not str:
        return "", None
    key = NAMED_BY.get(method)
    params = item.get("params")
    name = params.get(key) if key is not None and type(params) is dict else None
    return method, name if type(name) is str else None


def http_app(server: Hosting, **options: Unpack[HttpAppOptions]) -> HttpApp:
    """The ASGI app serving `server` at `path` (default `/mcp`); see `HttpOptions`."""
    return HttpApp(server, HttpOptions(**options))


class HttpApp:
    """The Streamable HTTP endpoint as a plain ASGI 3 app (what `Server.http_app` returns).

    It serves both eras, with the admission limits of `options` and the routes beside it.
    """

    def __init__(self, server: Hosting, options: HttpOptions) -> None:
        self.server = server
        self.options = options
        self.request_slots = Slots(
            "requests in flight", options.max_streams, options.max_streams_per_client
        )
        total, per_client = options.max_listen_streams, options.max_listen_streams_per_client
        self.listen_slots = Slots(
            "open streams",
            total,
            per_client,
            network_share(total, per_client, options.max_listen_streams_per_network),
        )
        parsing = options.max_parsing_bytes
        self.parsing = ByteBudget(
            options.max_body_bytes if parsing is None else parsing, options.admission_timeout
        )
        limits = SessionLimits(
            options.session_idle_seconds,
            options.handshake_seconds,
            options.stream_queue,
            options.stream_lifetime,
            options.max_batch_items,
            options.poll_seconds,
        )
        total, per_client = options.max_sessions, options.max_sessions_per_client
        share = network_share(total, per_client, options.max_sessions_per_network)
        slots = Slots("sessions", total, per_client, share)
        self.legacy = LegacySessions(server, limits, slots, self.listen_slots)
        # Verdicts by the raw header values they read (a request whose names repeat is judged
        # afresh): Host and Origin (0: allowed, else the refusing status), Content-Type and
        # Accept (likewise), and the modern routing headers' agreement with a request's envelope
        # (only agreement is kept: a refusal is judged afresh, and what is kept of the body
        # equals what the headers hold, so it is as bounded as they are).
        self._hosts: Verdicts[tuple[bytes | None, bytes | None], int] = Verdicts()
        self._media: Verdicts[tuple[bytes | None, bytes | None], int] = Verdicts()
        self._routing: Verdicts[tuple[Any, ...], bool] = Verdicts()
        self._lifespan_on = False  # between the host's startup and shutdown events
        self._path = options.path.rstrip("/")
        self.cors = Cors(options.cors_origins)
        self.routes = Routes(options.routes, options.max_body_bytes, options.body_timeout)
        if (self._path or "/") in self.routes:
            raise ValueError(f"a route takes the MCP endpoint's path {options.path}")
        # (fixed from here on: asked once, not on every request)
        self._serves_routes = bool(self.routes)
        self._serves_cors = bool(self.cors)
        self._ticker: Ticker | None = None  # of the event loop serving the latest POST
        auth = options.auth
        self._metadata_paths = frozenset[str]() if auth is None else auth.metadata_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        # a host that sends no lifespan events: started at the first request, and again after
        # a stop (an in-process client's, ending). (A check first: a coroutine costs more.)
        if not self._lifespan_on and not self.server.running_in(asyncio.get_running_loop()):
            await self.server.ensure_started()
        headers = RequestHeaders(scope["headers"])
        auth = self.options.auth
        try:
            path = route_path(scope)
            if auth is not None and path.rstrip("/") in self._metadata_paths:
                await self._metadata(send, headers, auth, scope["method"])
                return
            if self._serves_routes and path in self.routes:
                if self.routes.checks_host(path):
                    self._check_host_and_origin(headers)
                await self.routes.serve(path, scope, receive, send)
                return
            if path != self._path and path.rstrip("/") != self._path:
                raise HttpError(404, ProtocolError(INVALID_REQUEST, "not an MCP endpoint"))
            origin = headers.get("origin") if self._serves_cors else None
            if origin is not None and self.cors.allows(origin):
                send = self.cors.sending(send, origin)
                if scope["method"] == "OPTIONS":
                    self._check_host_and_origin(headers)
                    await self._preflight(send, headers)
                    return
            self._check_host_and_origin(headers)
            principal = None
            if self.options.auth is not None:
                answer: dict[str, str] = {}  # headers for the response (a fresh DPoP nonce)
                principal = await self._authenticate(headers, scope, answer)
                if answer:
                    send = _adding(send, answer)
            exchange = Exchange(receive, send, headers, principal, _client(scope, principal))
            method = scope["method"]
            if method == "POST":
                await self._post(exchange)
            elif method in ("GET", "DELETE"):
                self._authorize(principal, [])
                await (self.legacy.get if method == "GET" else self.legacy.delete)(exchange)
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
                try:
                    await self.server.start()
                except LifespanError as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                self._lifespan_on = True
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self._lifespan_on = False
                self.end_sessions()
                await self.server.drain_tasks()
                await self.server.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def end_sessions(self) -> None:
        """End every legacy session: a POST waiting in one is answered 404, a GET stream ends.

        Called at shutdown: the lifespan's, or `GracefulServer`'s before its grace runs out.
        """
        for session in list(self.legacy.sessions.values()):
            self.legacy.end(session)

    # ------------------------------------------------------------------ checks

    def _check_host_and_origin(self, headers: RequestHeaders) -> None:
        unique = headers.unique
        if unique is None:
            status = self._host_status(headers)
        else:
            key = (unique.get(b"host"), unique.get(b"origin"))
            status = self._hosts.of(key, self._host_status, headers)
        if status:
            raise HttpError(status, ProtocolError(INVALID_REQUEST, _REFUSED[status]))

    def _host_status(self, headers: RequestHeaders) -> int:
        """0 when the Host and Origin headers are allowed, else the status refusing them."""
        hosts = headers.getlist("host")
        if len(hosts) > 1:
            return 400
        if not self._host_allowed(hosts[0] if hosts else ""):
            return 421
        origins = headers.getlist("origin")
        if origins and not self._origin_allowed(origins[0] if len(origins) == 1 else ""):
            return 403  # more than one: only "*" allows
        return 0

    def _host_allowed(self, value: str) -> bool:
        allowed = self.options.allowed_hosts
        if allowed is not None and "*" in allowed:
            return True
        host = _hostname(value)
        return host is not None and host in (allowed or LOOPBACK)

    def _origin_allowed(self, value: str) -> bool:
        if self.cors and self.cors.allows(value.strip()):
            return True
        allowed = self.options.allowed_origins or self.options.allowed_hosts or LOOPBACK
        if "*" in allowed:
            return True
        match = _ORIGIN.fullmatch(value.strip().lower())
        host = _hostname(match[1]) if match is not None else None
        return host is not None and host in allowed

    async def _preflight(self, send: Send, headers: RequestHeaders) -> None:
        requested = headers.get("access-control-request-headers", "")
        answer = self.cors.preflight(requested)
        if answer is None:
            reason = f"a request header of {requested!r} is not one MCP uses"
            raise HttpError(403, ProtocolError(INVALID_REQUEST, reason))
        await send({"type": "http.response.start", "status": 204, "headers": answer})
        await send({"type": "http.response.body", "body": b""})

    # ------------------------------------------------------------------ authorization

    async def _metadata(
        self, send: Send, headers: RequestHeaders, auth: ResourceServerAuth, method: str
    ) -> None:
        """RFC 9728's document: public, so any Origin may read it (no credentials involved)."""
        host = (headers.get("host") or "").encode("latin-1")
        self._check_host_and_origin(RequestHeaders([(b"host", host)]))
        if method not in ("GET", "HEAD"):
            raise HttpError(405, ProtocolError(INVALID_REQUEST, f"{method} is not allowed"))
        body = pydantic_core.to_json(auth.metadata())
        await respond(send, 200, body, {"access-control-allow-origin": "*"})

    async def _authenticate(
        self, headers: RequestHeaders, scope: Scope, answer: dict[str, str]
    ) -> Principal | None:
        auth = self.options.auth
        if auth is None:
            return None
        authorization = headers.get("authorization")
        try:
            if auth.dpop is None:  # (a bearer token: nothing of the request but the token)
                principal = await auth.authenticate(authorization)
            else:
                principal = await auth.authenticate(
                    authorization,
                    # RFC 9449 4.3: exactly one field; repeated ones, joined, are refused
                    proof=", ".join(headers.getlist("dpop")) or None,
                    method=scope["method"],
                    urls=[_request_url(scope, headers)],
                    answer=answer,
                )
        except VerifierUnavailable:
            raise HttpError(
                503, ProtocolError(INVALID_REQUEST, "the access token cannot be verified now")
            ) from None
        except ReplayCacheFull as exc:
            reason = "too many DPoP proofs to remember now: retry later"
            retry = {"retry-after": str(max(1, math.ceil(exc.retry_after)))}
            raise HttpError(503, ProtocolError(INVALID_REQUEST, reason), retry) from None
        except AuthRefused as exc:
            raise HttpError(401, ProtocolError(INVALID_REQUEST, exc.reason), exc.headers) from None
        if principal is None:
            given = auth.token_of(authorization) is not None  # RFC 6750: no error without one
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
        if auth is None or principal is None or not auth.required_scopes:
            return  # (no scope to check: `needed` would say none)
        needed = auth.needed(routes)
        if not needed <= principal.scopes:
            missing = " ".join(sorted(needed - principal.scopes))
            raise HttpError(
                403,
                ProtocolError(INVALID_REQUEST, f"insufficient scope: needs {missing}"),
                {"www-authenticate": auth.challenge("insufficient_scope", needed)},
            )

    # ------------------------------------------------------------------ POST

    async def _post(self, exchange: Exchange) -> None:
        headers = exchange.headers
        unique = headers.unique
        if unique is None:
            status = _media_status(headers)
            declared = headers.get("content-length", "").encode("latin-1")
        else:
            key = (unique.get(b"content-type"), unique.get(b"accept"))
            status = self._media.of(key, _media_status, headers)
            declared = unique.get(b"content-length", b"").strip(b" \t")
        if status:
            raise HttpError(status, ProtocolError(INVALID_REQUEST, _REFUSED[status]))
        limit = self.options.max_body_bytes
        if declared.isdigit() and (len(declared) > 18 or int(declared) > limit):
            raise body_too_large(limit)  # at once, before the body is sent
        loop = asyncio.get_running_loop()  # each look-up of it is a getpid() call
        ticker = self._ticker
        if ticker is None or ticker.loop is not loop:
            ticker = self._ticker = Ticker(loop)
        guard = Guard(ticker, exchange.receive, self.options.body_timeout)
        try:
            # (in the time the guard allows; a body whole in its first message, as most are,
            # is taken from it here)
            first = await exchange.receive()
            body = whole_body(first, limit)
            if body is None:
                body = await read_body(exchange.receive, limit, first)
            guard.read()
            held = self.parsing.reserve(len(body))
            if held is None:
                held = await self.parsing.take(len(body))
            if len(body) > LARGE_BODY:  # its parse holds the loop: let ready I/O go first
                await anyio.lowlevel.checkpoint()
            try:
                await self._route(exchange, body, guard)
            finally:
                self.parsing.give(held)
        except asyncio.CancelledError:
            if not guard.absorb():
                raise
        finally:
            if guard.close():
                await guard.settle()
        if guard.timed_out:
            reason = f"the body did not arrive within {self.options.body_timeout:g} s"
            raise HttpError(408, ProtocolError(INVALID_REQUEST, reason))

    async def _route(self, exchange: Exchange, body: bytes, guard: Guard) -> None:
        """Route a POST by its envelope alone (`peek`): its params are read once, by the codec
        of the revision that serves it. A JSON array is a batch, for a 2025-03-26 session."""
        headers = exchange.headers
        session_id = headers.get("mcp-session-id")
        version = headers.get("mcp-protocol-version")
        if body[:1] != b"{" and _BATCH.match(body):  # (an object, as most are: no batch)
            limit = self.options.max_batch_items
            if _longer_than(body, limit):
                reason = f"a batch holds at most {limit} messages"
                raise HttpError(413, ProtocolError(INVALID_REQUEST, reason))
            try:
                items: Any = pydantic_core.from_json(body, allow_inf_nan=False)
            except ValueError as exc:
                raise HttpError(400, ProtocolError(PARSE_ERROR, f"not valid JSON: {exc}")) from None
            self._authorize(exchange.principal, [_route_of(item) for item in items])
            if session_id is None:
                reason = "a batch needs a 2025-03-26 session"
                raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
            session = self.legacy.lookup(session_id, exchange.principal)
            with self.request_slots.holding(exchange.client):
                await self.legacy.post(exchange, session, body, items, guard, version)
            return
        if session_id is None and version is not None:
            read = read_modern(version, body)  # the common request, parsed once
            if read is not None:
                message, env = read
                if exchange.principal is not None:
                    self._authorize(exchange.principal, [(env.method or "", env.name)])
                await self._modern(exchange, body, env, guard, message)
                return
        try:
            env = peek_any(body)
        except ProtocolError as exc:
            raise HttpError(400, exc) from None
        if exchange.principal is not None:
            self._authorize(exchange.principal, [(env.method, env.name)] if env.method else [])
        if session_id is None and (version in MODERN or env.protocol_version is not None):
            await self._modern(exchange, body, env, guard)
        elif env.method == "initialize":
            with self.request_slots.holding(exchange.client):
                await self.legacy.initialize(exchange, body, env)
        elif session_id is not None:
            session = self.legacy.lookup(session_id, exchange.principal)
            slots, client = self.request_slots, exchange.client
            slots.take(client)  # (not `holding`: a generator's enter and exit on every POST)
            try:
                await self.legacy.post(exchange, session, body, env, guard, version)
            finally:
                slots.give(client)
        else:
            reason = "no session: send initialize first, or a request with the 2026-07-28 envelope"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))

    async def _modern(
        self, exchange: Exchange, body: bytes, env: Peek, guard: Guard, message: Any = None
    ) -> None:
        headers = exchange.headers
        unique = headers.unique
        try:
            if unique is None or env.kind != "request":  # (a request's every field is checked)
                _check_headers(headers, env, None)
            else:
                sent = (
                    unique.get(b"mcp-protocol-version"),
                    unique.get(b"mcp-method"),
                    unique.get(b"mcp-name"),
                )
                key = (*sent, env.kind, env.method, env.name, env.protocol_version)
                self._routing.of(key, _agrees, (headers, env, sent))
            if env.method == "tools/call" and env.name is not None:
                spec = self.server.param_headers(env.name)
                if spec:
                    _check_params(exchange.headers, spec, body)
        except ProtocolError as exc:
            await respond(exchange.send, status_of(exc.code), error_frame(None, env.id, exc))
            return
        if env.kind == "notification":
            await respond(exchange.send, 202, b"")  # accepted, never answered
            return
        if env.kind != "request":
            reason = "a 2026-07-28 server takes requests and notifications, not responses"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
        listen = env.method == "subscriptions/listen"
        slots = self.listen_slots if listen else self.request_slots
        client = exchange.client
        slots.take(client)
        try:
            answer = Answer(exchange.send, guard, self.options.send_timeout)
            if listen:  # (a listen stream's bounds: the clock is read only for one)
                connection = self.server.connect(
                    answer,
                    principal=exchange.principal,
                    modern=True,
                    listen_until=time.time() + self.options.stream_lifetime,
                    listen_queue=self.options.stream_queue,
                )
            else:
                connection = self.server.connect(answer, principal=exchange.principal, modern=True)
            guard.watch_after(WATCH_AFTER)  # the handler runs in this task
            # reset after: an in-process caller's (ASGITransport's) task is this one
            request = HTTP_REQUEST.set((exchange.headers, None, client))
            try:
                data = await connection.answer(body, env, message)
                if data is not None:
                    await answer.final(data)
            finally:
                HTTP_REQUEST.reset(request)
        finally:
            slots.give(client)


BATCH_PREFIX = 64 * 1024  # bytes of a batch read first to count its items


def _longer_than(batch: bytes, limit: int) -> bool:
    """Whether a JSON array holds more than `limit` items, told from as short a prefix of it
    as tells (64 KiB, then 4x longer each time): a long batch of small messages is refused
    without being parsed whole. False when unsure (not JSON that far: the parse says why)."""
    size = BATCH_PREFIX
    while size < len(batch):
        try:
            items = pydantic_core.from_json(batch[:size], allow_inf_nan=False, allow_partial=True)
        except ValueError:
            return False
        if type(items) is list and len(items) - 1 > limit:  # (the last item may be cut)
            return True
        size *= 4
    return False


def route_path(scope: Scope) -> str:
    """The request's path inside this app: without the prefix it is mounted at (ASGI
    `root_path`: a Starlette `Mount`, uvicorn's `--root-path`), which `path` includes."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "").rstrip("/")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("", "/"):
        return path[len(root) :] or "/"
    return path


def _request_url(scope: Scope, headers: RequestHeaders) -> str:
    """The URL the client addressed (a DPoP proof's `htu` names it): the scheme, the Host
    header (checked before authentication), the full path; no query."""
    host = headers.get("host") or "localhost"
    return f"{scope.get('scheme', 'http')}://{host}{scope['path']}"


def _adding(send: Send, headers: dict[str, str]) -> Send:
    """`send` adding `headers` to the response's head."""
    extra = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]

    async def adding_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *extra]}
        await send(message)

    return adding_send


def _client(scope: Scope, principal: Principal | None) -> str:
    """Whom per-client bounds count: the principal, else the peer's address (an IPv6 peer's
    /64: a subscriber gets a whole prefix, any address of which it may use)."""
    if principal is not None:
        return "principal:" + principal.subject
    peer = scope.get("client")
    host = str(peer[0]) if peer else ""
    return _prefix(host) if ":" in host else host


@functools.lru_cache(maxsize=4096)
def _prefix(host: str) -> str:
    """An IPv6 address's /64 (the IPv4 address of an IPv4-mapped one); else `host` itself."""
    try:
        address = ipaddress.IPv6Address(host.partition("%")[0])  # without a zone
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))


_REFUSED = {
    400: "more than one Host header",
    421: "Host not allowed",
    403: "Origin not allowed",
    415: "Content-Type must be application/json",
    406: "Accept must list application/json and text/event-stream",
}


def _media_status(headers: RequestHeaders) -> int:
    """0 when a POST's Content-Type and Accept headers are as they must be, else the status."""
    if media_type(headers.get("content-type", "")) != JSON:
        return 415
    if not accepts_both(headers.get("accept", "")):
        return 406
    return 0


def _text(value: bytes | None) -> str | None:
    """A raw header value as `RequestHeaders.get` reads it."""
    return None if value is None else value.strip(b" \t").decode("latin-1")


def _agrees(
    checked: tuple[RequestHeaders, Peek, tuple[bytes | None, bytes | None, bytes | None]],
) -> bool:
    """True when a modern POST's routing headers (their raw values `sent`: no name repeats)
    agree with its envelope; else the `ProtocolError` of `_check_headers`."""
    headers, env, sent = checked
    _check_headers(headers, env, tuple(_text(v) for v in sent))
    return True


def _hostname(host: str) -> str | None:
    """The host of a Host header (or of an Origin after its scheme), lowercase, without its
    port; None unless it is exactly a host and an optional port."""
    match = _HOST.fullmatch(host.strip().lower())
    return match[1] if match is not None else None


def _check_headers(
    headers: RequestHeaders, env: Peek, routing: tuple[str | None, ...] | None
) -> None:
    """A modern POST's routing headers must be present and agree with its body. `routing`:
    their text (MCP-Protocol-Version, Mcp-Method, Mcp-Name) when no header name repeats."""
    version = headers.get("mcp-protocol-version") if routing is None else routing[0]
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
        raise unsupported_version(version)
    if env.kind != "request":
        return
    method = env.method
    if (_single(headers, "mcp-method") if routing is None else routing[1]) != method:
        raise ProtocolError(HEADER_MISMATCH, "Mcp-Method is missing or does not match the body")
    key = NAMED_BY.get(method) if method is not None else None
    if key is not None:
        name = _single(headers, "mcp-name") if routing is None else routing[2]
        if name is None or decode_header_value(name) != env.name:
            raise ProtocolError(
                HEADER_MISMATCH, f"Mcp-Name is missing or does not match params.{key}"
            )


def _check_params(headers: RequestHeaders, spec: ParamHeaders, body: bytes) -> None:
    """The `Mcp-Param-*` headers of a tools/call against its arguments (its body is read
    again here, only for a tool that declares such headers)."""
    frame = pydantic_core.from_json(body)
    params = frame.get("params") if type(frame) is dict else None
    arguments = params.get("arguments") if type(params) is dict else None
    check_params(spec, arguments if type(arguments) is dict else {}, headers.getlist)


def _single(headers: RequestHeaders, name: str) -> str | None:
    values = headers.getlist(name)
    if len(values) > 1:
        raise ProtocolError(HEADER_MISMATCH, f"{name} appears more than once")
    return values[0] if values else None


# ---------------------------------------------------------------------- transports


def _status(answer: bytes) -> int:
    """The status of a modern answer: an error frame's is read from its code (parsed only
    when the bytes could be an error's)."""
    return 200 if answer.find(b'"error"') < 0 else status_of(error_code(answer))


class Answer:
    """One modern POST's answer as a transport. The handler runs in the POST's task and its
    answer is written as JSON, unless notifications come first: they make it an SSE stream
    (kept alive with comments while it stays open, as a listen stream does), which the answer
    ends. The client going away cancels the handler: watched for once the stream opens or the
    handler has run `WATCH_AFTER` seconds, so that a quick answer costs no task. A frame its
    reader does not take within `send_timeout` ends the exchange, as the client going away
    does."""

    on_frame: FrameHook | None = None  # (never called: frames come by dispatch)

    def __init__(self, send: Send, guard: Guard, send_timeout: float) -> None:
        self._send = send
        self._guard = guard
        self._send_timeout = send_timeout
        self._sse: SseWriter | None = None
        self._done = False
        self._lock: anyio.Lock | None = None  # once anything but the answer is sent

    async def final(self, data: bytes) -> None:
        """Write the answer: as JSON unless a stream is open."""
        if self._lock is None:  # nothing else was sent: the answer alone, as JSON
            self._done = True
            # A reader that takes nothing (its buffer full) ends the exchange, timed by the
            # guard's timer (cheaper than a scope of its own).
            self._guard.write_by(self._send_timeout)
            try:  # (`respond`'s two messages, sent here: a frame fewer on every answer)
                status = _status(data)
                headers = retry_after(status) if status != 200 else None
                await self._send(response_start(status, data, headers))
                await self._send({"type": "http.response.body", "body": data})
            except OSError:
                pass
            finally:
                self._guard.write_by(None)
            return
        await self.send(data)

    async def receive(self) -> bytes:
        """Nothing more comes in: the request arrived with the POST."""
        raise anyio.EndOfStream  # the request arrived with the POST; nothing else comes

    async def send(self, data: bytes) -> None:
        """Write the POST's answer: a JSON body, or events on its SSE stream."""
        if self._done:
            return
        if self._lock is None:
            self._lock = anyio.Lock(fast_acquire=True)
        async with self._lock:
            if self._done:
                return
            await self._guarded(self._write(data))

    async def _guarded(self, writing: Awaitable[None]) -> None:
        written = False
        with anyio.move_on_after(self._send_timeout):
            try:
                await writing
                written = True
            except OSError:
                pass
        if not written:  # the client went away, or stopped reading: stop the work
            self._done = True
            self._guard.cancel()

    async def _write(self, data: bytes) -> None:
        kind = sent_kind(data).kind
        response = kind in ("result", "error")
        self._done = response
        if self._sse is None:
            if response:
                status = _status(data)
                await respond(self._send, status, data, retry_after(status))
                return
            self._sse = await SseWriter(self._send).open()
            self._guard.spawn(self._keepalive())
            self._guard.watch()
        await self._sse.event(data, last=response)

    async def _keepalive(self) -> None:
        assert self._lock is not None  # made before the stream opened
        while True:
            await anyio.sleep(KEEPALIVE_SECONDS)
            async with self._lock:
                if self._done or self._sse is None:
                    return
                await self._sse.ping()

    async def aclose(self) -> None:
        """Nothing to close: the POST's response ends on its own."""
        pass


WATCH_AFTER = 0.02  # seconds a request is served before the client going away is watched for


TICK = 0.02  # seconds between an event loop's checks of its open POSTs' guards


class Ticker:
    """The guards of the POSTs open in one event loop, checked every `TICK` s by one timer that
    runs while any is open: cheaper than a timer per POST, at the cost of a deadline being
    seen up to `TICK` s late. Deadlines are on `time.monotonic` (a C call; asyncio's
    `loop.time()` is a Python method reading it)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.guards: set[Guard] = set()
        self._timer: asyncio.TimerHandle | None = None

    def add(self, guard: Guard) -> None:
        """Watch `guard` on the shared timer."""
        self.guards.add(guard)
        if self._timer is None:
            self._timer = self.loop.call_later(TICK, self._tick)

    def _tick(self) -> None:
        now = time.monotonic()
        for guard in list(self.guards):
            guard.tick(now)
        self._timer = self.loop.call_later(TICK, self._tick) if self.guards else None


class Guard:
    """One POST's time bound and cancellation, checked by its loop's `Ticker`: its body must
    arrive within `body_timeout` (else the POST's task is cancelled and `timed_out` set), and
    once `watch_after` a delay (a request still being served then) or `watch()` (a stream
    opened), the client going away cancels the task: a quick answer needs no task. A write that
    does not end by the time given to `write_by` cancels the task too, and `call_after` bounds
    another wait of the POST on the same clock (a polled answer's). The POST catches that
    cancellation and asks `absorb` whether it was the guard's (no anyio scope: the POST runs in
    the server's own task for this request, which the guard cancels directly)."""

    def __init__(self, ticker: Ticker, receive: Receive, body_timeout: float) -> None:
        self.timed_out = False
        self._fired = False  # the guard cancelled the task (or may no longer)
        self._pending = False  # that cancellation is not absorbed yet
        self._ticker = ticker
        self._loop = loop = ticker.loop
        self._task = asyncio.current_task(loop)
        self._receive = receive
        self._deadline = time.monotonic() + body_timeout
        self._reading = True
        self._watch_at = math.inf  # when to start watching, once the body is in
        self._write_by = math.inf  # when the write under way must have ended
        self._call_at = math.inf  # when to call `_callback` (`call_after`)
        self._callback: Callable[[], None] | None = None
        self._tasks: list[asyncio.Task[None]] = []  # the disconnect watcher, a keepalive
        self._watching = False
        ticker.add(self)

    def tick(self, now: float) -> None:
        """Cancel the POST if its body or a write is past its deadline at `now`."""
        if self._reading:
            if now >= self._deadline:
                self.timed_out = True
                self.cancel()
        elif now >= self._write_by:
            self.cancel()
        elif now >= self._watch_at:
            self._watch_at = math.inf
            self.watch()
        if now >= self._call_at and self._callback is not None:
            self._call_at = math.inf
            self._callback()

    def cancel(self) -> None:
        """End the POST's work: its task is cancelled (once)."""
        if not self._fired and self._task is not None:
            self._fired = self._pending = True
            self._task.cancel()

    def absorb(self) -> bool:
        """Whether the cancellation being raised is the guard's own (then it ends here) rather
        than one from outside, which must go on."""
        if not self._pending or self._task is None:
            return False
        self._pending = False
        return self._task.uncancel() == 0

    def read(self) -> None:
        """The body is in: its deadline no longer applies."""
        self._reading = False

    def watch_after(self, delay: float) -> None:
        """Watch for the client going away once this request has been served `delay` s."""
        self._watch_at = time.monotonic() + delay

    def call_after(self, delay: float, callback: Callable[[], None]) -> None:
        """Call `callback` once `delay` s have passed (seen by a tick: up to `TICK` s late),
        unless the POST has ended: a bound on a wait that costs no timer of its own. One at a
        time: a later call replaces it."""
        self._call_at = time.monotonic() + delay
        self._callback = callback

    def write_by(self, delay: float | None) -> None:
        """A write must end within `delay` s (None: it has ended)."""
        self._write_by = math.inf if delay is None else time.monotonic() + delay

    def watch(self) -> None:
        """Start watching for the client going away."""
        if not self._watching:
            self._watching = True
            self.spawn(watch_disconnect(self._receive, self.cancel))

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` in a task until the POST ends."""
        self._tasks.append(self._loop.create_task(work))

    def close(self) -> bool:
        """Stop guarding: nothing cancels the task from here on. True when tasks it spawned or
        a cancellation it made are left to `settle` (a quick answer leaves none)."""
        self._ticker.guards.discard(self)
        self._fired = True  # from here on, nothing cancels the task
        return bool(self._tasks) or self._pending

    async def settle(self) -> None:
        """End the tasks the guard spawned, and take a cancellation it made that the work
        ended before."""
        while True:
            try:
                if self._tasks:
                    for task in self._tasks:
                        task.cancel()
                    await asyncio.wait(self._tasks)
                if self._pending:  # a cancellation the work ended before: take it now
                    await asyncio.sleep(0)
                return
            except asyncio.CancelledError:
                if not self.absorb():
                    raise
