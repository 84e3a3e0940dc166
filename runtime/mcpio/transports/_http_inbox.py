"""What `HttpTransport` holds between its HTTP exchanges and its session: the frames waiting for
the session (`Inbox`) and each request in flight (`Post`), with the cancel scope that ends its
exchange (anyio's, or the cheaper `TaskScope` on the lean client's loop)."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol

import anyio


class Inbox:
    """The frames for the session, in order: what `receive` returns (a deque, and an event only
    while the session waits on an empty one: no checkpoint per frame)."""

    def __init__(self) -> None:
        self._items: deque[bytes] = deque()
        self._sending = True
        self._closed = False
        self._waiter: anyio.Event | None = None

    def put(self, raw: bytes) -> None:
        if self._sending:
            self._items.append(raw)
            if self._waiter is not None:
                self._waiter.set()

    def idle(self) -> bool:
        """Whether a reader waits on an empty inbox."""
        return not self._items and self._waiter is not None

    def close_sending(self) -> None:
        """No more frames: `get` drains those there are, then raises `EndOfStream`."""
        self._sending = False
        if self._waiter is not None:
            self._waiter.set()

    def close(self) -> None:
        """Closed: `get` raises `ClosedResourceError`, whatever is left."""
        self._closed = True
        self.close_sending()

    async def get(self) -> bytes:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._items:
                return self._items.popleft()
            if not self._sending:
                raise anyio.EndOfStream
            waiter = self._waiter = anyio.Event()
            try:
                await waiter.wait()
            finally:
                self._waiter = None


class Scope(Protocol):
    """What the transport asks of a request's cancel scope (anyio's, or a `TaskScope`)."""

    def cancel(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> bool | None: ...


class TaskScope:
    """A request's cancel scope on the lean client's loop (asyncio's), entered once around the
    whole body of the request's own task: what anyio's scope does there, for a fraction of its
    cost (the task is cancelled; the cancellation ends at the scope's exit)."""

    __slots__ = ("_task", "cancel_called")

    def __init__(self) -> None:
        self._task: asyncio.Task[Any] | None = None
        self.cancel_called = False

    def __enter__(self) -> TaskScope:
        task = self._task = asyncio.current_task()
        if self.cancel_called and task is not None:  # cancelled before its task began
            task.cancel()
        return self

    def cancel(self) -> None:
        if not self.cancel_called:
            self.cancel_called = True
            if self._task is not None:
                self._task.cancel()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        task, self._task = self._task, None
        if not self.cancel_called or task is None:
            return False
        ours = task.uncancel() == 0  # no one else asked the task to stop
        return ours and exc_type is not None and issubclass(exc_type, asyncio.CancelledError)


@dataclass
class Post:
    """A request in flight: its POST's cancel scope and how it ended."""

    method: str
    modern: bool
    scope: Scope = field(default_factory=anyio.CancelScope)
    settled: bool = False  # its response (or an error standing for it) went to the session
    aborted: bool = False  # we closed it (cancellation, a new handshake): nothing to settle
