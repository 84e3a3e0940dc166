"""Legacy sessions over Streamable HTTP (2025-03-26 .. 2025-11-25): `initialize` opens one,
named by `Mcp-Session-Id`; each POST carries a message (a batch on 2025-03-26), answered once
each request it carried is done (JSON while only responses come, else an SSE stream of every
frame); what a handler says outside a request goes on the session's GET stream. Sessions end
with DELETE, after an idle time, or (never used after their initialize) after a short one; a
session ending under a waiting POST answers it 404.

A request whose answer could not be told apart from another's (its id of the wrong type,
repeated in its batch, or still in use in the session) is refused here and never reaches the
session. Every outbox is bounded: a reader that falls behind is cut off."""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import pydantic_core

from mcp_wire_runtime._peek import Peek
from mcp_wire_runtime.errors import INVALID_REQUEST, ProtocolError
from mcpio._core.context import HTTP_REQUEST, HttpRequest
from mcpio._core.jsonrpc import RequestId, error_frame
from mcpio._core.session import Refused, Session, read_batch_item, serving
from mcpio._core.transport import FrameHook, Transport
from mcpio.http._admission import Slots
from mcpio.http._asgi import (
    KEEPALIVE_SECONDS,
    Exchange,
    HttpError,
    Send,
    respond,
    sent_kind,
    watch_disconnect,
)
from mcpio.transports._http_rules import EVENT_STREAM, accepts
from mcpio.transports._sse import SseWriter

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mcp_wire_runtime.codec import Codec
    from mcpio._core.options import ConnectionOptions
    from mcpio._core.principal import Principal
    from mcpio._core.session import Session

log = logging.getLogger("mcpio")

SESSION_ENDED = "the session ended"


WATCH_AFTER = 0.02  # seconds a POST waits for its answers before the client going away is watched


class Guarding(Protocol):
    """The POST's guard (`mcpio.http._app.Guard`)."""

    def watch_after(self, delay: float) -> None:
        """Watch for the client going away once `delay` seconds have passed."""
        ...

    def call_after(self, delay: float, callback: Callable[[], None]) -> None:
        """Call `callback` once `delay` seconds have passed, unless the POST has ended."""
        ...


class Hosted(Protocol):
    """What the host needs of one of the server's connections.

    That is `mcpio.server`'s `ServerConnection`: the host sits below the server and does not
    import it.
    """

    principal: Principal | None  # the HTTP app updates it with each request's token
    codec: Codec | None  # legacy: the negotiated revision's codec

    @property
    def session(self) -> Session:
        """The JSON-RPC session over the connection's transport."""
        ...

    async def run(self) -> None:
        """Serve the connection until it closes."""
        ...

    async def answer(self, raw: bytes, env: Peek, message: Any = None) -> bytes | None:
        """The response to a request, as bytes (None: none to send).

        Args:
            raw: The request's frame, as received.
            env: The frame's envelope (`Peek`): its id, method and routing name.
            message: The request already decoded, if it was (None: not yet).
        """
        ...


class Connecting(Protocol):
    """What the sessions need of the server: a connection over a transport, and the bound on
    a client's answers to its questions."""

    @property
    def max_answer_bytes(self) -> int:
        """The bound on a client's answers to the server's questions."""
        ...

    def connect(self, transport: Transport, **options: Unpack[ConnectionOptions]) -> Hosted:
        """A connection of the server over `transport`."""
        ...


@dataclass
class SessionLimits:
    """The bounds of legacy sessions (from the app's `HttpOptions`)."""

    idle_seconds: float
    handshake_seconds: float
    stream_queue: int
    stream_lifetime: float
    max_batch_items: int
    poll_seconds: float = (
        math.inf
    )  # a 2025-11-25 POST still waiting then is closed: the client polls


class LegacySessions:
    """The session table of one HTTP app, and the legacy exchanges: initialize, POST, GET,
    DELETE. `slots` bounds sessions (in all and per client), `streams` the GET streams (shared
    with modern listen streams)."""

    def __init__(
        self, server: Connecting, limits: SessionLimits, slots: Slots, streams: Slots
    ) -> None:
        self.server = server
        self.limits = limits
        self.slots = slots
        self.streams = streams
        self.sessions: dict[str, LegacySession] = {}
        self._next_expiry = math.inf  # no session ends before then: `expire` has nothing to do

    def lookup(self, session_id: str, principal: Principal | None) -> LegacySession:
        """The session, if it exists and belongs to this principal (one of another principal's
        is answered as unknown: 404, telling nothing about it)."""
        now = time.monotonic()
        if now > self._next_expiry:  # (`expire`'s own check, inline: on every POST)
            self.expire()
        session = self.sessions.get(session_id)
        if session is None or _subject(session.principal) != _subject(principal):
            raise HttpError(404, ProtocolError(INVALID_REQUEST, "unknown or expired session"))
        session.last_used = now
        if not session.established:
            session.established = True
            self._next_expiry = min(self._next_expiry, now + self.limits.idle_seconds)
        session.principal = session.connection.principal = principal  # its latest token's
        return session

    def expire(self) -> None:
        """End the sessions past their time; a table walk only once one may be."""
        now = time.monotonic()
        if now <= self._next_expiry:
            return
        idle, handshake = self.limits.idle_seconds, self.limits.handshake_seconds
        soonest = math.inf
        for session in list(self.sessions.values()):
            due = session.last_used + (idle if session.established else handshake)
            if due < now:
                self.end(session)
            else:
                soonest = min(soonest, due)
        self._next_expiry = soonest

    def end(self, session: LegacySession) -> None:
        """End `session` and give back its slot."""
        if self.sessions.pop(session.id, None) is not None:
            self.slots.give(session.client)
        session.end()

    async def initialize(self, exchange: Exchange, body: bytes, env: Peek) -> None:
        """Open a legacy session with its `initialize` POST and answer it."""
        id = env.id
        if env.kind != "request" or id is None:
            reason = "initialize must be a request whose id is a string or an integer"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
        self.expire()
        self.slots.take(exchange.client)
        session = LegacySession(
            secrets.token_urlsafe(24), exchange.client, self.limits.stream_queue
        )
        session.connection = self.server.connect(session, principal=exchange.principal)
        session.principal = exchange.principal
        # The session's own task serves initialize (and any frame that does not go straight to
        # dispatch): its context names this request, and the session's client (set for it
        # only: an in-process caller's task, ASGITransport's, is this one).
        request = HTTP_REQUEST.set((exchange.headers, session.id, exchange.client))
        session.task = asyncio.get_running_loop().create_task(session.run())
        HTTP_REQUEST.reset(request)
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
                due = session.last_used + self.limits.handshake_seconds
                self._next_expiry = min(self._next_expiry, due)
            await respond(
                exchange.send, 200, answer, {"mcp-session-id": session.id} if opened else None
            )
        finally:
            session.release([id])
            if not opened:
                self.slots.give(exchange.client)
                session.end()

    async def post(
        self,
        exchange: Exchange,
        session: LegacySession,
        body: bytes,
        message: Peek | list[Any],
        guard: Guarding,
        version: str | None,
    ) -> None:
        """One legacy POST: a message (its envelope) or a batch (its items); `version`: its
        MCP-Protocol-Version header. It runs in the guard's scope, which the client going away
        cancels (the handlers go on: in legacy, that is not a cancellation)."""
        codec = session.connection.codec
        if version is not None and codec is not None and version != codec.revision:
            reason = f"MCP-Protocol-Version {version!r} is not this session's ({codec.revision})"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
        batch = isinstance(message, list)
        refused: list[bytes] = []  # answers made here, for items the session must not see
        ids: list[RequestId] = []
        frames: list[tuple[bytes, Peek]] = []
        if isinstance(message, list):
            self._read_batch(session, message, frames, ids, refused)
        else:
            error = _in_use(session, message, ids)
            if error is not None:
                raise HttpError(400, error)
            frames.append((body, message))
            if message.kind == "request" and message.id is not None:
                ids.append(message.id)
        # An answer past the server's bound: still delivered (its question fails at once with
        # -32602, unread), and this POST refused.
        answer = not batch and message.kind in ("result", "error")
        limit = self.server.max_answer_bytes if answer else 0
        oversized = answer and len(body) > limit
        outbox = session.exchange(ids, (exchange.headers, session.id, exchange.client))
        poll = session.poll(self.limits.poll_seconds) if ids else None
        if poll is not None:  # (the guard's clock bounds the wait: no timer of its own)
            guard.call_after(poll.seconds, outbox.time_up)
        pending = set(ids)
        parked = False
        try:
            for frame, env in frames:
                await session.deliver(frame, env)
            if oversized:
                reason = f"an answer exceeds {limit} bytes"
                raise HttpError(413, ProtocolError(INVALID_REQUEST, reason))
            guard.watch_after(WATCH_AFTER)
            parked = await _relay(exchange.send, outbox, pending, refused, batch, poll)
        finally:
            if parked and poll is not None:
                session.park(Parked(poll, outbox, ids, pending))
            else:
                session.release(ids)

    def _read_batch(
        self,
        session: LegacySession,
        items: list[Any],
        frames: list[tuple[bytes, Peek]],
        ids: list[RequestId],
        refused: list[bytes],
    ) -> None:
        """Check a POST's batch and collect what the session is to see: its frames, the ids of
        its requests, and the answers made here for items it must not see."""
        codec = session.connection.codec
        if codec is None or not codec.batching:
            reason = "batches are not part of this revision"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
        if not items:
            reason = "an empty batch is not valid"
            raise HttpError(400, ProtocolError(INVALID_REQUEST, reason))
        if len(items) > self.limits.max_batch_items:
            reason = f"a batch holds at most {self.limits.max_batch_items} messages"
            raise HttpError(413, ProtocolError(INVALID_REQUEST, reason))
        _batch_items(session, codec, items, frames, ids, refused)

    async def get(self, exchange: Exchange) -> None:
        """Serve a session's GET: its stream of server-to-client messages (or a polled answer)."""
        headers = exchange.headers
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            raise HttpError(405, ProtocolError(INVALID_REQUEST, "GET needs a legacy session"))
        if not accepts(headers.get("accept", ""), EVENT_STREAM):
            raise HttpError(
                406, ProtocolError(INVALID_REQUEST, "Accept must list text/event-stream")
            )
        session = self.lookup(session_id, exchange.principal)
        parked = session.unpark(headers.get("last-event-id", "").rpartition(".")[0])
        if parked is not None:
            await self._resume(exchange, session, parked)
            return
        if session.background is not None:
            raise HttpError(
                409, ProtocolError(INVALID_REQUEST, "this session's stream is already open")
            )
        until = time.time() + self.limits.stream_lifetime
        if exchange.principal is not None and exchange.principal.expires_at is not None:
            until = min(until, exchange.principal.expires_at)
        with self.streams.holding(exchange.client):
            outbox = session.open_background()
            try:
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(watch_disconnect, exchange.receive, tasks.cancel_scope.cancel)
                    await _stream_until(exchange.send, outbox, until)
                    tasks.cancel_scope.cancel()
            finally:
                session.close_background(outbox)

    async def _resume(self, exchange: Exchange, session: LegacySession, parked: Parked) -> None:
        """A GET whose `Last-Event-ID` names a POST's stream the server closed for polling
        (`poll_seconds`): its answers come here, the stream closed again (a new event id)
        while they are still awaited. (Any other GET opens the session's own stream.)"""
        again = False
        with self.streams.holding(exchange.client):
            sse = await SseWriter(exchange.send).open()
            try:
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(watch_disconnect, exchange.receive, tasks.cancel_scope.cancel)
                    again = await _relay(
                        exchange.send, parked.outbox, parked.pending, [], False, parked.poll, sse
                    )
                    tasks.cancel_scope.cancel()
            finally:
                if again or (parked.pending and not session.ended.is_set()):
                    session.park(parked)  # a client that went away may poll again
                else:
                    session.release(parked.ids)

    async def delete(self, exchange: Exchange) -> None:
        """End the session the request names (DELETE)."""
        session_id = exchange.headers.get("mcp-session-id")
        if session_id is None:
            raise HttpError(405, ProtocolError(INVALID_REQUEST, "DELETE needs a legacy session"))
        self.end(self.lookup(session_id, exchange.principal))
        await respond(exchange.send, 200, b"")


def _in_use(session: LegacySession, env: Peek, taken: list[RequestId]) -> ProtocolError | None:
    """Why a request is answered here rather than by the session: its id is one whose answer
    could not be told apart from another's (repeated in its POST, or still in use)."""
    if env.kind != "request" or env.id is None:
        return None
    if env.id in taken or session.in_use(env.id):
        return ProtocolError(INVALID_REQUEST, f"id {env.id!r} is in use by another request")
    return None


def _has_result(frame: bytes) -> bool:
    return sent_kind(frame).kind == "result"


# ---------------------------------------------------------------------- answers


@dataclass(frozen=True, slots=True)
class Done:
    """The handler of a request finished: its exchange expects nothing more for that id."""

    id: RequestId


@dataclass(slots=True)
class Response:
    """A response in an outbox: its frame and the request `id` it answers (None: an error
    answering no readable id)."""

    id: RequestId | None
    frame: bytes


def _response_of(item: bytes | Response) -> Response | None:
    """The response an outbox item is, else None (a frame a handler said: a notification, a
    request). One the connection sent as such (`send_response`) is not read again."""
    if isinstance(item, Response):
        return item
    env = sent_kind(item)
    return Response(env.id, item) if env.kind in ("result", "error") else None


Item = bytes | Response | Done  # what an outbox holds


class Outbox:
    """The frames for one exchange or stream, bounded: a deque and a waiter (cheaper than a
    memory object stream, made for every POST). `put` refuses an item once `size` wait; once
    closed (by either end) it takes no more, and `receive` ends (EndOfStream) when drained."""

    __slots__ = ("_items", "_size", "_waiter", "_due", "closed")

    def __init__(self, size: int) -> None:
        self._items: deque[Item] = deque()
        self._size = size
        self._waiter: asyncio.Future[object] | None = None
        self._due = False  # `time_up` was called: the next wait with nothing queued ends
        self.closed = False

    def put(self, item: Item) -> bool:
        """Queue an item (False: full, the reader fell behind). A closed outbox drops it."""
        if self.closed:
            return True
        if len(self._items) >= self._size:
            return False
        self._items.append(item)
        waiter = self._waiter  # (`_wake`, inline: twice on every POST)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return True

    def close(self) -> None:
        """Close the outbox: its reader ends once it has read what is queued."""
        self.closed = True
        self._wake()

    def time_up(self) -> None:
        """End the reader's wait, now or its next one: `receive` returns None once (if nothing
        is queued then). A timer kept elsewhere bounds the wait so (a POST's guard)."""
        self._due = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def receive(self, timeout: float = math.inf) -> Item | None:
        """The next queued item; None once `timeout` seconds pass without one, or
        once `time_up` was called; `anyio.EndOfStream` once closed and empty. (A timer handle:
        a cancel scope or `asyncio.timeout` costs several times more.)"""
        while not self._items:
            if self.closed:
                raise anyio.EndOfStream
            if self._due:
                self._due = False
                return None
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = None if timeout == math.inf else loop.call_later(timeout, _time_up, waiter)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
            if waiter.result() is _TIME_UP and not self._items:
                return None
        return self._items.popleft()


_TIME_UP = object()  # what wakes an outbox's reader whose time is up


def _time_up(waiter: asyncio.Future[object]) -> None:
    if not waiter.done():
        waiter.set_result(_TIME_UP)


def _batch_items(
    session: LegacySession,
    codec: Codec,
    items: list[Any],
    frames: list[tuple[bytes, Peek]],
    ids: list[RequestId],
    refused: list[bytes],
) -> None:
    """A batch's items sorted: the messages the session will see (`frames`, the requests'
    `ids`), and the answers made here for the others (`refused`: not a message, an id in use,
    a method that must not be batched) as a stdio session answers them (`Session.serve_batch`)."""

    def in_use(id: RequestId) -> bool:
        return id in ids or session.in_use(id)

    for item in items:
        frame = pydantic_core.to_json(item)
        env = read_batch_item(frame, codec.unbatchable, in_use)
        if env is None:  # a notification that must not be batched
            continue
        if isinstance(env, Refused):  # not a message; an id of the wrong type; initialize
            refused.append(error_frame(codec, env.id, env.error))
            continue
        error = _in_use(session, env, ids)
        if error is not None:
            refused.append(error_frame(codec, env.id, error))
            continue
        frames.append((frame, env))
        if env.kind == "request" and env.id is not None:
            ids.append(env.id)


async def _next(outbox: Outbox, until: float = math.inf) -> Item | None:
    """The next item; None when a stream should say it is still there. Raises EndOfStream when
    the outbox ends (its stream cut off, or its session ended) or at the time `until`."""
    wait = min(KEEPALIVE_SECONDS, until - time.time())
    if wait <= 0:
        raise anyio.EndOfStream
    return await outbox.receive(wait)


async def _first_response(outbox: Outbox) -> bytes | None:
    """The response a request's handler sent, once it finished (None: it sent none)."""
    response = None
    try:
        while True:
            item = await outbox.receive()
            if isinstance(item, Done):
                return response
            answered = _response_of(item) if isinstance(item, (bytes, Response)) else None
            if answered is not None:
                response = answered.frame
    except anyio.EndOfStream:
        return response


async def _relay(
    send: Send,
    outbox: Outbox,
    pending: set[RequestId],
    answers: list[bytes],
    batch: bool,
    poll: Poll | None = None,
    sse: SseWriter | None = None,
) -> bool:
    """Answer a legacy POST once every request it carried is done: as JSON (the response, or
    the batch's array) while only responses come, as an SSE stream of every frame (responses
    included) once a handler says something else first (progress, a log, a request). A
    request cancelled by the client adds nothing; with nothing to answer, 202. `pending`: the
    ids still awaited (updated). With `poll`, once its time is up the stream is closed after
    an event id (True: parked, the client polls with a GET and `Last-Event-ID`); `sse`: the
    stream of such a GET, open already."""
    until = math.inf if poll is None else time.time() + poll.seconds
    try:
        while pending:
            if sse is None:  # a POST's answers: the poll's time is up when its guard says
                item = await outbox.receive()
                if item is None:
                    item = _DUE
            else:
                item = await _wait(outbox, until)
            if item is _DUE and poll is not None:  # (only with a poll is `until` finite)
                sse = sse or await _stream_of(send, answers)
                await send({"type": "http.response.body", "body": poll.event(), "more_body": True})
                await sse.close()
                return True
            if item is None:
                if sse is not None:
                    await sse.ping()
            elif isinstance(item, Done):
                pending.discard(item.id)
            elif isinstance(item, (bytes, Response)):
                response = _response_of(item)
                frame = item if isinstance(item, bytes) else item.frame
                if response is not None:
                    pending.discard(response.id)
                    if sse is None:
                        answers.append(frame)
                        continue
                elif sse is None:
                    sse = await _stream_of(send, answers)
                await sse.event(frame)
    except anyio.EndOfStream:  # the session ended, or this stream's reader fell behind
        if sse is None and not answers:
            raise HttpError(404, ProtocolError(INVALID_REQUEST, SESSION_ENDED)) from None
    if sse is not None:
        await sse.close()
    elif not answers:
        await respond(send, 202, b"")
    else:
        await respond(send, 200, b"[" + b",".join(answers) + b"]" if batch else answers[0])
    return False


_DUE = object()  # `_wait`: the stream's time is up


async def _wait(outbox: Outbox, until: float) -> Item | object | None:
    """A stream's next item; None when it should say it is still there; `_DUE` at `until`."""
    wait = until - time.time()
    if wait <= 0:
        return _DUE
    return await outbox.receive(min(wait, KEEPALIVE_SECONDS))


async def _stream_of(send: Send, answers: list[bytes]) -> SseWriter:
    """The POST's answer turned into an event stream, with the answers it holds so far."""
    sse = await SseWriter(send).open()
    for answer in answers:
        await sse.event(answer)
    answers.clear()
    return sse


SESSION_ENDED = "the session ended"


async def _stream_until(send: Send, outbox: Outbox, until: float) -> None:
    """A session's GET stream: every frame sent to it, keep-alive comments, until `until`
    (its lifetime, or its access token's expiry) or until it is cut off."""
    sse = await SseWriter(send).open()
    try:
        while True:
            item = await _next(outbox, until)
            if item is None:
                await sse.ping()
            elif not isinstance(item, Done):
                await sse.event(item if isinstance(item, bytes) else item.frame)
    except anyio.EndOfStream:
        await sse.close()


POLL_REVISION = "2025-11-25"  # the first whose clients poll a stream the server closed
POLL_RETRY_MS = 200  # how long the client waits before it polls (the SSE `retry` field)
MAX_PARKED = 64  # POST streams of one session awaiting their poll; past it, POSTs wait open


class Poll:
    """How a long POST is polled: after `seconds` its stream closes with a new event id
    `<key>.<n>` and a `retry` field (2025-11-25 Streamable HTTP: the server may close the
    connection after an event id, the client then GETs with `Last-Event-ID`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._key: str | None = None  # made when first named: most POSTs answer before
        self._round = 0

    @property
    def key(self) -> str:
        """The stream's random event-id prefix (what a poll's `Last-Event-ID` names)."""
        if self._key is None:
            self._key = secrets.token_urlsafe(12)
        return self._key

    def event(self) -> bytes:
        """The next priming event of a polled stream: its id, and the client's retry delay."""
        self._round += 1
        return f"id: {self.key}.{self._round}\nretry: {POLL_RETRY_MS}\n\n".encode()

    @property
    def abandoned_after(self) -> float:
        """Seconds a parked stream waits for its poll before its requests are let go."""
        return max(60.0, 4 * self.seconds)


@dataclass
class Parked:
    """A POST's stream closed for polling: its outbox (still receiving what the handlers say)
    and the requests it still awaits."""

    poll: Poll
    outbox: Outbox
    ids: list[RequestId]
    pending: set[RequestId]
    timer: asyncio.TimerHandle | None = None


def _subject(principal: Principal | None) -> str | None:
    return principal.subject if principal is not None else None


class LegacySession:
    """A legacy session's transport: frames in from its POSTs, frames out to the exchange of
    the request whose handler said them, or to the GET stream. Every outbox is bounded: a
    reader that falls `queue` frames behind is cut off (its stream ends)."""

    on_frame: FrameHook | None = None  # (never called: frames come by dispatch)

    def __init__(self, id: str, client: str, queue: int) -> None:
        self.id = id
        self.client = client  # whose share of the session table it takes
        self.queue = queue
        self.connection: Hosted
        self.task: asyncio.Task[None] | None = None
        self.last_used = time.monotonic()
        self.established = False  # used again after its initialize
        self.ended = anyio.Event()
        self.streams: dict[RequestId, Outbox] = {}
        # The POST that carried each request being served (its handler's `ctx.headers`).
        self.http_requests: dict[RequestId, HttpRequest] = {}
        self.background: Outbox | None = None
        self.principal: Principal | None = None  # who opened it (with authorization)
        self.parked: dict[str, Parked] = {}  # by `Poll.key`
        self._send_in, self._receive_in = anyio.create_memory_object_stream[bytes](math.inf)

    @functools.cached_property
    def session(self) -> Session:
        """The connection's JSON-RPC session (looked up once: on every POST's path)."""
        return self.connection.session

    def in_use(self, id: RequestId) -> bool:
        """Whether a request of this session with this id is still awaited or being served."""
        return id in self.streams or self.session.serves(id)

    def exchange(self, ids: list[RequestId], request: HttpRequest | None = None) -> Outbox:
        """One outbox for the frames said while serving these requests (one POST's, `request`:
        what their handlers' contexts read of it)."""
        outbox = Outbox(self.queue)
        for id in ids:
            self.streams[id] = outbox
            if request is not None:
                self.http_requests[id] = request
        if self.ended.is_set():
            outbox.close()
        return outbox

    def release(self, ids: list[RequestId]) -> None:
        """Close the streams of the answered requests `ids`."""
        for id in ids:
            self.http_requests.pop(id, None)
            stream = self.streams.pop(id, None)
            if stream is not None:
                stream.close()

    def poll(self, seconds: float) -> Poll | None:
        """The bound of a POST's wait, where the revision has clients poll (else None)."""
        codec = self.connection.codec
        if seconds == math.inf or codec is None or codec.revision < POLL_REVISION:
            return None
        return Poll(seconds) if len(self.parked) < MAX_PARKED else None

    def park(self, parked: Parked) -> None:
        """Keep a closed POST stream for the client's poll, for a while."""
        if self.ended.is_set():
            self.release(parked.ids)
            return
        loop = asyncio.get_running_loop()
        key = parked.poll.key
        parked.timer = loop.call_later(parked.poll.abandoned_after, self._abandon, key)
        self.parked[key] = parked

    def unpark(self, key: str) -> Parked | None:
        """Take the parked answer `key` (a polled request's), stopping its timer."""
        parked = self.parked.pop(key, None)
        if parked is not None and parked.timer is not None:
            parked.timer.cancel()
        return parked

    def _abandon(self, key: str) -> None:
        parked = self.parked.pop(key, None)
        if parked is not None:
            self.release(parked.ids)

    def open_background(self) -> Outbox:
        """Open the session's background stream (its GET)."""
        outbox = Outbox(self.queue)
        self.background = outbox
        if self.ended.is_set():
            outbox.close()
        return outbox

    def close_background(self, outbox: Outbox) -> None:
        """Close the session's background stream."""
        outbox.close()
        self.background = None

    async def run(self) -> None:
        """Serve the session until it ends."""
        self.session.on_served = self._served
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.connection.run)
            await self.ended.wait()
            tasks.cancel_scope.cancel()

    def _served(self, id: RequestId) -> None:
        self._put(self.streams.get(id), Done(id))

    async def deliver(self, frame: bytes, env: Peek | None = None) -> None:
        """Hand a frame to the session: with its envelope (`env`), straight to its dispatch
        once the session runs; else through its inbox, read in order by its read loop."""
        if env is not None and not self.ended.is_set():
            if await self.session.dispatch(frame, env):
                return
        try:
            await self._send_in.send(frame)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise HttpError(404, ProtocolError(INVALID_REQUEST, SESSION_ENDED)) from None

    async def receive(self) -> bytes:
        """The next frame the client POSTed; `anyio.EndOfStream` once the session ends."""
        try:
            return await self._receive_in.receive()
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            raise anyio.EndOfStream from None

    async def send(self, data: bytes) -> None:
        """Write a frame on the stream of the request it answers, else on the background stream."""
        current = serving.get()
        id = current[1] if current is not None and current[0] is self.session else None
        self._route(id, data, data)

    async def send_response(self, id: RequestId, data: bytes) -> None:
        """Write the response to request `id` (`mcpio._core.transport.Responding`) as `send`
        would, marked as that request's response on its exchange's stream."""
        self._route(id, data, Response(id, data))

    def _route(self, id: RequestId | None, data: bytes, item: Item) -> None:
        """`item` on the stream of request `id`, else `data` on the background stream."""
        target = None if id is None else self.streams.get(id)
        if target is not None:
            self._put(target, item)
        elif self.background is not None:
            self._put(self.background, data)
        else:
            log.debug("session %s: no open stream for a server message; dropped", self.id[:8])

    def _put(self, target: Outbox | None, item: Item) -> None:
        # A closed outbox (its client went away: in legacy, not a cancellation) drops the item.
        if target is not None and not target.put(item):
            log.info("session %s: a stream's reader fell behind; cut off", self.id[:8])
            target.close()

    async def aclose(self) -> None:
        """Stop taking frames from the client."""
        self._send_in.close()

    def end(self) -> None:
        """End the session: no more frames in; every exchange and stream waiting on it ends."""
        self._send_in.close()
        self.ended.set()
        for key in list(self.parked):
            self.unpark(key)
        for stream in [*self.streams.values(), self.background]:
            if stream is not None:
                stream.close()
