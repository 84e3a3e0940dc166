"""Modern `subscriptions/listen` streams, beside the hub that feeds them (`mcpio._core.hub`): what a
listen request is honoured with, its stream of change notifications, and how it ends."""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.errors import INVALID_REQUEST, ProtocolError
from mcpio._core.bus import unavailable
from mcpio._core.extension import Extensions
from mcpio._core.hub import LISTEN_FLAGS, TASK_IDS, Hub
from mcpio._core.jsonrpc import RequestId
from mcpio._core.negotiate import SUBSCRIPTION_ID_KEY, codec_of
from mcpio.latest import public as pub

if TYPE_CHECKING:
    from mcpio._core.context import Context

log = logging.getLogger("mcpio")

TOKEN_EXPIRED = "the access token that opened this stream expired; listen again with a new one"


class Streaming(Protocol):
    """What a listen stream needs of the connection it is written on (`ServerConnection`)."""

    hub: Hub
    listeners: set[Listener]
    listen_until: float  # seconds since the epoch: the stream then ends gracefully
    listen_queue: int  # notifications waiting for the reader: more, and it is cut off

    @property
    def closed(self) -> bool:
        """Whether the connection has closed."""
        ...

    async def send(self, data: bytes) -> None:
        """Write a frame on the connection."""
        ...

    async def send_notification(self, codec: Codec, method: str, params: dict[str, Any]) -> None:
        """Write a notification with public params, in `codec`'s revision."""
        ...


class Listener:
    """One modern `subscriptions/listen` stream. Change notifications wait in a bounded queue
    for the stream's writer (the listen request's own task): a reader that falls `queue`
    notifications behind is cut off, so one slow client never holds up the others."""

    def __init__(
        self,
        connection: Streaming,
        codec: Codec,
        id: RequestId,
        honoured: dict[str, Any],
        queue: int,
        extensions: Extensions | None = None,
    ):
        self.connection = connection
        self.codec = codec
        self.extensions = extensions
        self.id = id
        self.honoured = honoured
        self.error: ProtocolError | None = None  # how the server ends it, if not gracefully
        self.cut_off = False  # its reader fell behind: the stream is dropped, nothing more sent
        self._send, self.queue = anyio.create_memory_object_stream[tuple[str, dict[str, Any]]](
            queue
        )

    def end(self, error: ProtocolError | None = None) -> None:
        """End the listen stream: its response goes out (with `error`: that JSON-RPC error)."""
        self.error = self.error or error
        self._send.close()

    def wants(self, flag: str | None, uri: str | None) -> bool:
        """Whether the stream asked for this change (`flag`: a list or task ids; `uri`: a
        resource)."""
        if flag == TASK_IDS:
            return uri in (self.honoured.get(TASK_IDS) or ())
        if flag is not None:
            return bool(self.honoured.get(flag))
        return uri in (self.honoured.get("resourceSubscriptions") or ())

    def deliver(self, method: str, params: dict[str, Any]) -> None:
        """Queue a notification for the stream; a stream whose reader fell behind is cut off."""
        try:
            self._send.send_nowait((method, params))
        except anyio.WouldBlock:
            log.info("listen stream %r: its reader fell behind; cut off", self.id)
            self.cut_off = True
            self._send.close()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def write(self, method: str, params: dict[str, Any]) -> None:
        """Write a notification on the stream, tagged with its subscription id."""
        tagged = {**params, "_meta": {SUBSCRIPTION_ID_KEY: self.id}}
        theirs = self.extensions.codec(method, self.codec.revision) if self.extensions else None
        if theirs is not None:  # an extension's notification, checked by its codec
            await self.connection.send(theirs.encode(theirs.notification(method, tagged)))
            return
        await self.connection.send_notification(self.codec, method, tagged)


async def honoured(
    ctx: Context, params: Any, offered: dict[str, Any], extensions: Extensions
) -> dict[str, Any]:
    """What a listen request asked for that the server offers (`offered`: its capabilities in
    the request's revision); the extensions grant what is theirs (task ids: the Tasks
    extension)."""
    wanted = params.notifications.model_dump(exclude_unset=True)
    flags = {flag: cap in offered for flag, cap in LISTEN_FLAGS.items()}
    kept = {k: v for k, v in wanted.items() if flags.get(k) and v not in (False, None)}
    await extensions.listen(ctx, params, kept)
    return kept


async def listen(
    connection: Streaming,
    ctx: Context,
    params: Any,
    offered: dict[str, Any],
    extensions: Extensions,
) -> pub.SubscriptionsListenResult | None:
    """`subscriptions/listen`: acknowledge, then write the changes asked for until the stream
    ends: its result when it ends gracefully, None when there is no one left to answer (the
    connection closed, or its reader was cut off), the error it ended with otherwise."""
    kept = await honoured(ctx, params, offered, extensions)
    hub = connection.hub
    if not hub.bus.available:
        raise unavailable()  # at once: the client listens again later
    codec = codec_of(ctx.revision)
    listener = Listener(
        connection, codec, ctx.request_id, kept, connection.listen_queue, extensions
    )
    await listener.write("notifications/subscriptions/acknowledged", {"notifications": kept})
    connection.listeners.add(listener)
    hub.listeners.add(listener)
    if not hub.bus.available:  # lost while acknowledging
        listener.end(unavailable())
    try:
        await _stream(listener, ctx, connection.listen_until)
    finally:
        connection.listeners.discard(listener)
        hub.listeners.discard(listener)
        listener.end()
    if connection.closed or listener.cut_off:
        return None
    if listener.error is not None:
        raise listener.error
    return pub.SubscriptionsListenResult.model_validate(
        {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: ctx.request_id}}
    )


async def _stream(listener: Listener, ctx: Context, listen_until: float) -> None:
    """Write the stream's notifications until it ends, it is cut off, or its time is up (the
    connection's `listen_until`, or the expiry of the access token that opened it)."""
    principal = ctx.principal
    expires_at = principal.expires_at if principal is not None else None
    until = min(listen_until, math.inf if expires_at is None else expires_at)
    with anyio.move_on_after(until - time.time()) as lifetime:
        async for method, params in listener.queue:
            if listener.cut_off:
                break
            await listener.write(method, params)
    if lifetime.cancelled_caught and until == expires_at:
        listener.end(ProtocolError(INVALID_REQUEST, TOKEN_EXPIRED))
