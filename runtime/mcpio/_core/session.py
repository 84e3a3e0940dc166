"""One JSON-RPC connection, either role: frames in and out, responses matched to requests by id,
incoming requests served concurrently and cancellable. It knows JSON-RPC, not MCP: what a frame
means is the business of its `Peer` (the server connection or the client)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import itertools
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, Protocol, cast

import anyio
import anyio.abc
import pydantic_core

from mcp_wire_runtime._peek import Peek, envelope, peek_validator
from mcp_wire_runtime.codec import MAX_MESSAGE_BYTES
from mcp_wire_runtime.errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError
from mcpio._core.errors import ConnectionClosed, RequestTimeout
from mcpio._core.jsonrpc import RequestId
from mcpio._core.negotiate import MODERN, codec_of, peek_any
from mcpio._core.transport import FrameTooLarge, Transport

log = logging.getLogger("mcpio")
_BATCH = re.compile(rb"[ \t\r\n]*\[")  # a JSON array: a batch (only its start is read)
_RESOLUTION = time.get_clock_info("monotonic").resolution
# The envelope of a frame as `peek_any` reads it (same members, same refusals): `_take_now`'s read.
_peek_json = peek_validator(
    codec_of(MODERN[-1]).envelope_keys.get("protocol_version")
).validate_json


# The request the current task serves, so that a transport can send what its handler says
# (progress, questions, the response) along that request's own stream (Streamable HTTP).
serving: contextvars.ContextVar[tuple[Session, RequestId] | None] = contextvars.ContextVar(
    "serving", default=None
)


class Peer(Protocol):
    """What a session hands the frames it cannot settle itself to. A frame comes as its bytes
    and its envelope (`Peek`: kind, id, method, routing name, protocol version); the params are
    read once, by the peer's codec."""

    def on_request(self, raw: bytes, env: Peek, /) -> Awaitable[None]:
        """Serve a request (in its own task) and send its response. A peer that has
        `read_request` (see `Reading`) also takes the message it read, as `message`."""
        ...

    def on_notification(self, raw: bytes, env: Peek, /) -> Awaitable[None]:
        """Handle a notification (inline, in the reading task: keep it short)."""
        ...

    def on_batch(self, raw: bytes, items: list[Any], /) -> Awaitable[None]:
        """A JSON array: a batch where the revision has them, else an error to answer."""
        ...

    def error_frame(self, id: RequestId | None, error: ProtocolError, /) -> bytes:
        """The bytes of an error response in the connection's revision (an unreadable id is
        omitted or null, as the revision requires)."""
        ...

    def on_close(self) -> Awaitable[None]:
        """The transport ended: stop what only made sense while connected."""
        ...


class Reading(Protocol):
    """What a peer may offer besides `Peer`: `read_request` decodes a request frame whole with
    its envelope (what `peek_any` reads of it), or None to leave it to `peek_any`; the session
    takes a frame as it arrives with it (one parse) and hands the message to `on_request`."""

    def read_request(self, raw: bytes) -> tuple[Any, Peek] | None:
        """The request decoded, and its envelope; None: not read here."""
        ...

    async def on_request(self, raw: bytes, env: Peek, message: Any = None) -> None:
        """Serve a request; `message`: what `read_request` read of it, if it did."""


# What makes a request's response (`ServerConnection.answer`): its bytes, None for none.
Answer = Callable[[bytes, Peek, Any], Awaitable[bytes | None]]


class _Batch:
    """A JSON-RPC batch being served: how its requests are answered, the tasks serving them,
    and the responses gathered for its one array."""

    __slots__ = ("answer", "tasks", "replies")

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.tasks: list[asyncio.Task[None]] = []
        self.replies: list[bytes] = []


def _readable_id(error: ProtocolError, raw: bytes) -> RequestId | None:
    """The id to answer a frame that is not a valid message with (`error`): its id where the
    JSON reads as an object whose id is a string or an integer, else None."""
    if error.code != INVALID_REQUEST or not raw:
        return None
    obj = pydantic_core.from_json(raw, allow_inf_nan=False)
    maybe = obj.get("id") if type(obj) is dict else None
    return maybe if type(maybe) is int or type(maybe) is str else None


def _names_a_method(raw: bytes) -> bool:
    """Whether `raw`, a JSON object, has a `method` member (a request or notification, not an
    answer)."""
    obj = pydantic_core.from_json(raw, allow_inf_nan=False)
    return type(obj) is dict and "method" in obj


class Refused(NamedTuple):
    """A batch item answered where the batch is read: the id to answer with, and the error."""

    id: RequestId | None
    error: ProtocolError


def read_batch_item(
    frame: bytes, unbatchable: frozenset[str], in_use: Callable[[RequestId], bool]
) -> Peek | Refused | None:
    """A batch item's envelope, to serve as the frame alone is; else why it is refused (not a
    message: with its id where it can be read and is not `in_use`; a request whose method is
    `unbatchable`), or None for a notification that must not be batched (dropped)."""
    try:
        env = peek_any(frame)
    except ProtocolError as exc:
        id = _readable_id(exc, frame)
        return Refused(None if id is not None and in_use(id) else id, exc)
    if env.method in unbatchable:
        if env.kind != "request":
            return None
        reason = f"{env.method} must not be part of a batch"
        return Refused(env.id, ProtocolError(INVALID_REQUEST, reason, {"method": env.method}))
    return env


async def send_frame(transport: Transport, data: bytes) -> None:
    """Send a frame; a transport that is gone is `ConnectionClosed`."""
    try:
        await transport.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
        raise ConnectionClosed("the connection is closed") from exc


class Session:
    """Correlation, concurrency and cancellation over one transport."""

    def __init__(
        self, transport: Transport, peer: Peer, *, ids: itertools.count[int] | None = None
    ):
        self.transport = transport
        # a transport may carry the exchange in the requesting task (`Exchanging`): read once
        # (a missing attribute costs an exception on every request)
        self._send_request = getattr(transport, "send_request", None)
        self._send_response = getattr(transport, "send_response", None)  # (`Responding`)
        self.peer = peer
        self._read: Callable[[bytes], tuple[Any, Peek] | None] | None = getattr(
            peer, "read_request", None
        )
        self._ids = ids or itertools.count(1)
        self._pending: dict[RequestId, asyncio.Future[bytes]] = {}
        # Request timeouts: id -> (deadline, timeout), swept by one timer set for the earliest
        # deadline (not a timer per request: this is the hot path of every call).
        self._deadlines: dict[RequestId, tuple[float, float]] = {}
        self._timer: asyncio.TimerHandle | None = None
        # The loop `run` runs on (`get_running_loop` costs a getpid system call per request).
        self._loop: asyncio.AbstractEventLoop | None = None
        # The handlers of incoming requests: each a plain asyncio task (cheaper than a task
        # group's, on every request's path), or the scope of one served inline (initialize).
        self._serving: dict[RequestId, asyncio.Task[None] | anyio.CancelScope] = {}
        self._tasks: anyio.abc.TaskGroup | None = None
        self._context = contextvars.Context()
        self.closed = asyncio.Event()
        # Told when the handler of an incoming request has finished, answered or not (cancelled):
        # the HTTP transport ends that request's exchange then.
        self.on_served: Callable[[RequestId], None] | None = None

    # -------------------------------------------------------------- outgoing

    def next_id(self) -> int:
        """A request id never used before on this session."""
        return next(self._ids)

    async def send(self, data: bytes) -> None:
        """Write a frame on the transport."""
        await send_frame(self.transport, data)

    async def respond(self, id: RequestId, data: bytes) -> None:
        """Write the response to the incoming request `id`: by the transport's `send_response`
        where it has one (`mcpio._core.transport.Responding`), else as any frame."""
        send = self._send_response
        if send is None:
            await send_frame(self.transport, data)
        else:
            await send(id, data)

    async def request(self, id: RequestId, data: bytes, timeout: float | None) -> bytes:
        """Send a request frame and wait for its response (its bytes).

        Raises `RequestTimeout` after `timeout` seconds and `ConnectionClosed` when the transport
        ends first; the caller decides whether to tell the peer (cancellation)."""
        if self.closed.is_set():
            raise ConnectionClosed("the connection is closed")
        loop = self._loop or asyncio.get_running_loop()
        future: asyncio.Future[bytes] = loop.create_future()
        self._pending[id] = future
        if timeout is not None:
            deadline = loop.time() + timeout
            self._deadlines[id] = (deadline, timeout)
            timer = self._timer
            if timer is None or deadline < timer.when():
                if timer is not None:
                    timer.cancel()
                self._timer = loop.call_at(deadline, self._expire)
        try:
            try:
                await (self._send_request or self.transport.send)(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                raise ConnectionClosed("the connection is closed") from exc
            return await future
        finally:
            self._pending.pop(id, None)
            self._deadlines.pop(id, None)

    def _expire(self) -> None:
        """Fail the requests past their deadline; set the timer for the next one."""
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        for id, (deadline, timeout) in list(self._deadlines.items()):
            if deadline <= now + _RESOLUTION:  # (the loop may run a timer that much early)
                del self._deadlines[id]
                future = self._pending.get(id)
                if future is not None and not future.done():
                    future.set_exception(RequestTimeout(f"no response within {timeout} s"))
                    abandon = getattr(self.transport, "abandon", None)
                    if abandon is not None:  # its caller may wait in the exchange
                        abandon(id)
        if self._deadlines:
            self._timer = loop.call_at(min(d for d, _ in self._deadlines.values()), self._expire)

    # -------------------------------------------------------------- incoming

    def start_soon(self, fn: Any, *args: Any) -> None:
        """Run a task for as long as the session runs."""
        assert self._tasks is not None, "the session is not running"
        self._tasks.start_soon(fn, *args)

    def serves(self, id: RequestId) -> bool:
        """Whether the handler of an incoming request with this id is still running."""
        return id in self._serving

    def cancel_incoming(self, id: RequestId) -> bool:
        """Cancel the handler of a request being served; False if there is none."""
        handler = self._serving.get(id)
        if handler is None:
            return False
        self._cancel(id, handler)
        return True

    def _cancel(self, id: RequestId, handler: asyncio.Task[None] | anyio.CancelScope) -> None:
        handler.cancel()
        if isinstance(handler, asyncio.Task):  # it may not have started: see `_unstarted`
            handler.add_done_callback(functools.partial(self._unstarted, id))

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED):
        """Read frames until the transport ends; then fail what is pending and wait for the
        handlers still running (cancelled instead when the session itself is)."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            self._loop = asyncio.get_running_loop()
            # What a handler started from the transport runs in (a copy each): the context the
            # read loop would have started it in, not the transport callback's.
            self._context = contextvars.copy_context()
            self.transport.on_frame = self._take_now
            task_status.started()
            try:
                try:
                    await self._read_loop()
                finally:
                    self.closed.set()
                    if self._timer is not None:
                        self._timer.cancel()
                    for future in self._pending.values():
                        if not future.done():
                            future.set_exception(ConnectionClosed("the peer closed the connection"))
                    with anyio.CancelScope(shield=True):
                        await self.peer.on_close()
                while running := self._handlers():
                    await asyncio.wait(running)
            finally:
                if running := self._handlers():
                    for id, handler in list(self._serving.items()):
                        if isinstance(handler, asyncio.Task) and not handler.done():
                            self._cancel(id, handler)
                    with anyio.CancelScope(shield=True):
                        await asyncio.wait(running)

    def _handlers(self) -> list[asyncio.Task[None]]:
        """The handlers' tasks not done yet (one done already, that never ran its `_served`,
        was cancelled before it started by another than `_cancel`: let go of here)."""
        running: list[asyncio.Task[None]] = []
        for id, handler in list(self._serving.items()):
            if isinstance(handler, asyncio.Task):
                if handler.done():
                    self._unstarted(id, handler)
                else:
                    running.append(handler)
        return running

    async def _read_loop(self) -> None:
        while True:
            try:
                raw = await self.transport.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            except FrameTooLarge as exc:
                await self._answer_unreadable(ProtocolError(INVALID_REQUEST, str(exc)))
                continue
            if _BATCH.match(raw):
                await self._batch(raw)
                continue
            try:
                env = peek_any(raw)
            except ProtocolError as exc:
                await self._answer_unreadable(exc, raw)
                continue
            await self._dispatch(raw, env)

    async def dispatch(self, raw: bytes, env: Peek) -> bool:
        """Handle a frame read and peeked elsewhere (an HTTP legacy session's POST) as the read
        loop would; False (nothing done) until `run` has started or once it has ended."""
        if self._tasks is None or self.closed.is_set():
            return False
        await self._dispatch(raw, env)
        return True

    async def _batch(self, raw: bytes) -> None:
        try:
            items = pydantic_core.from_json(raw, allow_inf_nan=False)
        except ValueError as exc:
            await self._answer_unreadable(ProtocolError(PARSE_ERROR, f"not valid JSON: {exc}"))
            return
        await self.peer.on_batch(raw, items)

    async def serve_batch(
        self, items: list[Any], answer: Answer, unbatchable: frozenset[str] = frozenset()
    ) -> None:
        """Serve a JSON-RPC batch (its array read): each item as the read loop serves a frame
        alone (a request in a task of its own, its response made by `answer`); the responses
        and the errors of the items refused go out as one array once every request is done
        (nothing when there are none). An empty batch is one -32600 error; a request whose
        method is `unbatchable` is refused with -32600 (such a notification is dropped)."""
        if not items:
            await self.reply(None, ProtocolError(INVALID_REQUEST, "an empty batch is not valid"))
            return
        batch = _Batch(answer)
        for item in items:
            frame = pydantic_core.to_json(item)
            read = read_batch_item(frame, unbatchable, self._serving.__contains__)
            if isinstance(read, Refused):
                log.warning("batch item refused: %s", read.error.message)
                batch.replies.append(self.peer.error_frame(read.id, read.error))
            elif read is not None:
                await self._dispatch(frame, read, batch)
        if batch.tasks:  # the array waits for them, the frames that follow do not
            self.start_soon(self._answer_batch, batch)
        else:
            await self._answer_batch(batch)

    async def _answer_batch(self, batch: _Batch) -> None:
        """Send a batch's array once its requests are done."""
        if batch.tasks:
            await asyncio.wait(batch.tasks)
        if batch.replies:
            try:
                await self.send(b"[" + b",".join(batch.replies) + b"]")
            except ConnectionClosed:
                pass

    async def _dispatch(self, raw: bytes, env: Peek, batch: _Batch | None = None) -> None:
        if env.kind == "notification":
            await self.peer.on_notification(raw, env)
        elif env.kind != "request":
            self._settle(raw, env)
        else:
            id = env.id
            assert id is not None  # a request's id: peek refuses one of another type
            if id in self._serving:
                # One still being served: an answer could not be told apart from its. (In a
                # batch, its array's: the error carries the id, one answer per item.)
                error = ProtocolError(INVALID_REQUEST, "id must not be one in use")
                if batch is None:
                    await self.reply(None, error)
                else:
                    batch.replies.append(self.peer.error_frame(id, error))
                return
            if env.method == "initialize":
                # The lifecycle keeps the order of arrival: the frames that follow initialize
                # are read once it is answered, and answered in the revision it chose.
                scope = self._serving[id] = anyio.CancelScope()
                with scope:
                    await self._serve(id, raw, env, None, batch, inline=True)
            else:
                self._start(id, raw, env, batch=batch)

    def _start(
        self,
        id: RequestId,
        raw: bytes,
        env: Peek,
        context: contextvars.Context | None = None,
        message: Any = None,
        batch: _Batch | None = None,
    ) -> None:
        """Serve a request in a task of its own (in a copy of the current context, else in
        `context`, a copy made for it); `message`: what the peer's `read_request` read of it;
        `batch`: the batch it is an item of, whose array takes its response."""
        loop = self._loop or asyncio.get_running_loop()
        # (no done callback here, on every request's path: `_cancel` adds `_unstarted`)
        work = self._serve(id, raw, env, message, batch)
        task = self._serving[id] = loop.create_task(work, context=context)
        if batch is not None:
            batch.tasks.append(task)

    async def _serve(
        self,
        id: RequestId,
        raw: bytes,
        env: Peek,
        message: Any = None,
        batch: _Batch | None = None,
        inline: bool = False,
    ) -> None:
        """Serve a request: in a task of its own (`_start`), else `inline` in the caller's."""
        token = serving.set((self, id))
        try:
            if batch is not None:
                reply = await batch.answer(raw, env, message)
                if reply is not None:
                    batch.replies.append(reply)
            elif message is None:
                await self.peer.on_request(raw, env)
            else:
                await cast(Reading, self.peer).on_request(raw, env, message)
        except ConnectionClosed:
            pass
        except Exception:  # a peer's bug: logged; the session goes on
            log.exception("serving request %r failed", id)
        finally:
            if inline:  # (a task's own context ends with it)
                serving.reset(token)
            self._served(id)

    def _served(self, id: RequestId) -> None:
        self._serving.pop(id, None)
        if self.on_served is not None:
            self.on_served(id)

    def _unstarted(self, id: RequestId, task: asyncio.Task[None]) -> None:
        """A handler cancelled before it started (its cancellation read right after it) never
        ran its own `_served` (told once a cancelled handler is done)."""
        if self._serving.get(id) is task:
            self._served(id)

    def _take_now(self, raw: bytes, id: RequestId | None = None) -> bool:
        """Take a frame straight from the transport (called only while the read loop waits with
        nothing queued, so the order of frames holds): settle a response to a pending request,
        or start the handler of a request as the read loop would; False for any other frame,
        left to the read loop. With `id`, the transport read the frame's envelope: a response
        with that id. Else `peek_any`'s verdict, one parse: a frame it refuses is left to the
        read loop, which answers it."""
        if id is not None:
            return self._settle_pending(raw, id)
        if type(raw) is not bytes or len(raw) > MAX_MESSAGE_BYTES:
            return False
        read = self._read
        if read is not None and (got := read(raw)) is not None:
            message, env = got  # a request, parsed once (its envelope as `peek_any`'s)
            id = env.id
            if env.method == "initialize" or id in self._serving or self._tasks is None:
                return False
            assert id is not None  # a request's
            self._start(id, raw, env, self._context.copy(), message)
            return True
        try:
            frame = _peek_json(raw)
        except pydantic_core.ValidationError:
            return False
        get = frame.get
        id = get("id")
        if id is None:  # a notification, or what the read loop answers
            return False
        method = get("method")
        if method is None:
            if "error" not in frame and "result" not in frame:
                return False
            return self._settle_pending(raw, id)
        if method == "initialize" or id in self._serving or self._tasks is None:
            return False  # (initialize is served inline, in order: the read loop's)
        self._start(id, raw, envelope(frame), self._context.copy())
        return True

    def _settle_pending(self, raw: bytes, id: RequestId) -> bool:
        future = self._pending.get(id)
        if future is None:
            return False
        if not future.done():
            future.set_result(raw)
        return True

    def _settle(self, raw: bytes, env: Peek) -> None:
        future = self._pending.get(env.id) if env.id is not None else None
        if future is None:
            if env.kind == "error" and env.id is None:
                log.warning("the peer reported an error it could not correlate: %s", raw[:200])
            else:
                log.debug("dropped a response to no pending request (id %r)", env.id)
        elif not future.done():
            future.set_result(raw)

    async def _answer_unreadable(self, error: ProtocolError, raw: bytes = b"") -> None:
        """Answer a frame that is not a JSON-RPC message, with its id when one can be read."""
        log.warning("unreadable frame: %s", error.message)
        id = _readable_id(error, raw)
        if id is not None and id in self._pending and not _names_a_method(raw):
            self._settle_pending(raw, id)  # a malformed answer: the request waiting for it refuses
            return
        await self.reply(None if id in self._serving else id, error)  # in use: not told apart

    async def reply(self, id: RequestId | None, error: ProtocolError) -> None:
        """Send an error response, ignoring a closed connection (nobody is left to tell)."""
        try:
            await self.send(self.peer.error_frame(id, error))
        except ConnectionClosed:
            pass

    async def aclose(self) -> None:
        """Close the transport."""
        await self.transport.aclose()
