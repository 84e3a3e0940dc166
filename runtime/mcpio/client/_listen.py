"""The client's listening: `Client.listen` streams (modern `subscriptions/listen`, legacy
`resources/subscribe` plus the session's list-changed notifications) and the routing of the
server's notifications to them. The filter flags are the hub's (`mcpio._core.hub`): one table for
both sides."""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_wire_runtime.errors import ProtocolError
from mcpio._core.errors import ConnectionClosed, McpError
from mcpio._core.hub import LIST_CHANGED, RESOURCE_SUBSCRIPTIONS, RESOURCE_UPDATED, TASK_IDS
from mcpio._core.jsonrpc import RequestId
from mcpio._core.negotiate import SUBSCRIPTION_ID_KEY

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
TASK_NOTIFICATION = "notifications/tasks"  # the Tasks extension's: no model in the codec
# list-changed notification -> the listen flag that selects it
_FLAG_OF = {method: flag for flag, (method, _) in LIST_CHANGED.items()}


@dataclass(frozen=True)
class Notice:
    """A notification from the server: its method and params (public models)."""

    method: str
    params: Any


@dataclass
class Subscription:
    """What `Client.listen` yields: the filters the server honours, and the notices.

    When the server ends the stream with an error (its notification bus went down, say),
    iterating raises that `McpError` (also kept in `error`): listen again.

    Args:
        id: The listen request's id (None on a legacy session).
        honoured: The notification filters the server honours.
        _receive: Where the notices come from (the client's: leave it out).
        error: The error the server ended the stream with, if it did.
    """

    id: RequestId | None
    honoured: dict[str, Any] = field(default_factory=dict[str, Any])
    _receive: MemoryObjectReceiveStream[Notice] | None = None
    error: McpError | None = None

    def __aiter__(self) -> AsyncIterator[Notice]:
        return self

    async def __anext__(self) -> Notice:
        assert self._receive is not None
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            if self.error is not None:
                raise self.error from None
            raise StopAsyncIteration from None


def listen_filter(
    tools: bool,
    prompts: bool,
    resources: bool,
    resource_uris: Sequence[str],
    task_ids: Sequence[str],
) -> dict[str, Any]:
    """The `notifications` filter of a listen request, from `Client.listen`'s arguments."""
    on = {"tools": tools, "prompts": prompts, "resources": resources}
    wanted: dict[str, Any] = {f: True for f, (_, cap) in LIST_CHANGED.items() if on[cap]}
    if resource_uris:
        wanted[RESOURCE_SUBSCRIPTIONS] = list(resource_uris)
    if task_ids:
        wanted[TASK_IDS] = list(task_ids)
    return wanted


def legacy_wants(wanted: Mapping[str, Any], method: str, params: Any) -> bool:
    """Whether a legacy listener with filter `wanted` hears this notification."""
    flag = _FLAG_OF.get(method)
    if flag is not None:
        return bool(wanted.get(flag))
    if method == RESOURCE_UPDATED:
        return getattr(params, "uri", None) in (wanted.get(RESOURCE_SUBSCRIPTIONS) or ())
    return False


# Sends a listen request (its filter, its id) and returns when it is answered.
Hold = Callable[[dict[str, Any], int], Awaitable[None]]


class Listeners:
    """The client's open listen streams, by request id (modern) or in a list (legacy)."""

    def __init__(self) -> None:
        self._streams: dict[RequestId, MemoryObjectSendStream[Notice]] = {}
        self._acknowledged: dict[RequestId, anyio.Event] = {}
        self._honoured: dict[RequestId, dict[str, Any]] = {}
        self._legacy: list[tuple[Subscription, MemoryObjectSendStream[Notice]]] = []

    @asynccontextmanager
    async def modern(
        self, id: int, wanted: dict[str, Any], hold: Hold, timeout: float | None
    ) -> AsyncIterator[Subscription]:
        """A `subscriptions/listen` stream: `hold(wanted, id)` sends the request and returns
        when it is answered (a refusal raising, the server's graceful end returning)."""
        send, receive = anyio.create_memory_object_stream[Notice](math.inf)
        acknowledged = anyio.Event()
        subscription = Subscription(id, {}, receive)
        self._streams[id], self._acknowledged[id] = send, acknowledged
        refused: list[BaseException] = []

        async def held() -> None:
            try:
                await hold(wanted, id)
            except (ConnectionClosed, ProtocolError) as exc:
                if not acknowledged.is_set():
                    refused.append(exc)
                elif isinstance(exc, McpError):
                    subscription.error = exc
            finally:
                send.close()
                acknowledged.set()

        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(held)
                with anyio.fail_after(timeout):
                    await acknowledged.wait()
                if not refused:
                    subscription.honoured = self._honoured.pop(id, {})
                    try:
                        yield subscription
                    finally:
                        tasks.cancel_scope.cancel()
        finally:
            self._streams.pop(id, None)
            self._acknowledged.pop(id, None)
            self._honoured.pop(id, None)
        if refused:
            raise refused[0]

    @asynccontextmanager
    async def legacy(self, wanted: dict[str, Any]) -> AsyncIterator[Subscription]:
        """A legacy listener: the session's notifications that `wanted` selects."""
        send, receive = anyio.create_memory_object_stream[Notice](math.inf)
        subscription = Subscription(None, wanted, receive)
        self._legacy.append((subscription, send))
        try:
            yield subscription
        finally:
            self._legacy.remove((subscription, send))
            send.close()

    def end(self, id: RequestId) -> bool:
        """The server cancelled request `id`: True if that was a listen stream (now ended)."""
        stream = self._streams.get(id)
        if stream is None:
            return False
        stream.close()
        return True

    def route(self, method: str, params: Any) -> bool:
        """Hand a notification to the listen stream its `_meta` names (True: taken there), else
        to the legacy listeners that want it (False: the client's `on_notice` hears it too)."""
        meta = getattr(params, "meta", None)
        subscription = getattr(meta, "io_modelcontextprotocol_subscriptionId", None)
        if subscription is not None and subscription in self._streams:
            if method == ACKNOWLEDGED:
                honoured = params.notifications.model_dump(exclude_unset=True)
                self._honoured[subscription] = honoured
                self._acknowledged[subscription].set()
            else:
                _hand(self._streams[subscription], Notice(method, params))
            return True
        for listener, stream in self._legacy:
            if legacy_wants(listener.honoured, method, params):
                _hand(stream, Notice(method, params))
        return False

    def route_task(self, raw: bytes) -> None:
        """A `notifications/tasks` frame (plain data: the extension has no model in the
        codec) to the stream its `_meta` names."""
        params = pydantic_core.from_json(raw).get("params")
        if type(params) is not dict:
            return
        meta = params.pop("_meta", None)
        subscription = meta.get(SUBSCRIPTION_ID_KEY) if type(meta) is dict else None
        stream = self._streams.get(subscription) if subscription is not None else None
        if stream is not None:
            _hand(stream, Notice(TASK_NOTIFICATION, params))

    def close(self) -> None:
        """End every stream (the connection ended)."""
        for stream in list(self._streams.values()):
            stream.close()
        for _, stream in self._legacy:
            stream.close()


def _hand(stream: MemoryObjectSendStream[Notice], notice: Notice) -> None:
    """Queue a notification on a listen stream; a stream that has ended (the server ended its
    request, or its reader left) drops it: a late notification is no error of the session."""
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        stream.send_nowait(notice)
