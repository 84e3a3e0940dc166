"""A server's lifespan: started and stopped by every transport that serves it, entered once
however many do at a time, in a task of its own; and the notification bus that runs
meanwhile."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpio._core.errors import LifespanError

if TYPE_CHECKING:
    from mcpio._core.extension import Extensions
    from mcpio._core.hub import Hub

log = logging.getLogger("mcpio")

# `Server.lifespan` (`mcpio.server.Lifespan`), called with the server.
_AnyLifespan = Callable[[Any], AbstractAsyncContextManager[Any]]


class Lifecycle:
    """`Server`'s starts and stops (`start`, `stop`, `running`), and its lifespan's value."""

    if TYPE_CHECKING:  # what the lifecycle uses of the rest of `Server`
        hub: Hub
        extensions: Extensions

    def _lifecycle(self, lifespan: _AnyLifespan | None) -> None:
        """Not started yet, with `lifespan` to enter at the first start."""
        self.lifespan = lifespan
        self.lifespan_state: Any = None  # what the lifespan yielded (`ctx.lifespan`)
        self._life = _Running()

    def start_bus(self) -> None:
        """Run the bus in a task of the running (asyncio) event loop, once per loop.

        `start` does it, so `serve`, `serve_stdio` and the HTTP app do.
        """
        self.hub.start_bus()

    async def stop_bus(self) -> None:
        """Stop reading the notification bus."""
        await self.hub.stop_bus()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The server started (`start`) while inside, stopped (`stop`) on the way out."""
        await self.start()
        try:
            yield
        finally:
            await self.stop()

    async def start(self) -> None:
        """Enter the lifespan (`Server(lifespan=...)`) unless it is entered already; run the bus.

        Each `start` is paired with a `stop`; the last `stop` exits the lifespan, so it is
        entered once however many transports serve at a time: `serve` (stdio,
        `Client(server)`) and the HTTP app's lifespan events start and stop the server; an HTTP
        host that sends no lifespan events starts it at its first request and never stops it.

        Raises:
            LifespanError: The lifespan failed to start (nothing is served then).
        """
        loop = asyncio.get_running_loop()
        if self._life.lock is None or self._life.loop is not loop:  # a new event loop
            self._life.lock, self._life.loop, self._life.count = asyncio.Lock(), loop, 0
        async with self._life.lock:
            if self._life.count == 0:
                await self._enter_lifespan(loop)
            self._life.count += 1
        self.hub.start_bus()

    async def stop(self) -> None:
        """Undo one `start`: the last one exits the lifespan and stops the bus."""
        if self._life.lock is None or self._life.loop is not asyncio.get_running_loop():
            return
        async with self._life.lock:
            self._life.count -= 1
            if self._life.count > 0:
                return
            await self.stop_bus()
            task, stop = self._life.task, self._life.stop
            self._life.task = self._life.stop = None
            if task is not None and stop is not None:
                stop.set()
                await task

    async def ensure_started(self) -> None:
        """`start` once per event loop, never stopped (an HTTP host without lifespan events)."""
        if not self.running_in(asyncio.get_running_loop()):
            await self.start()

    def running_in(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether the server is started in `loop`: a `start` there not yet undone."""
        return self._life.loop is loop and self._life.count > 0

    async def _enter_lifespan(self, loop: asyncio.AbstractEventLoop) -> None:
        # The lifespan lives in a task of its own, entered and exited there: a task group or
        # cancel scope inside it belongs to that task, whichever transport starts or stops it.
        lifespan = self.lifespan
        if lifespan is None and not self.extensions.hooked("lifespan"):
            return
        ready, stop = asyncio.Event(), asyncio.Event()
        failed: list[BaseException] = []

        async def hold() -> None:
            try:
                async with self.extensions.running(), _entered(lifespan, self) as state:
                    self.lifespan_state = state
                    ready.set()
                    await stop.wait()
            except Exception as exc:
                if not ready.is_set():
                    failed.append(exc)
                else:
                    log.error("the server's lifespan failed on exit", exc_info=exc)
            finally:
                self.lifespan_state = None
                ready.set()

        task = loop.create_task(hold())
        await ready.wait()
        if failed:
            await task
            raise LifespanError(f"the server's lifespan failed to start: {failed[0]!r}")
        self._life.task, self._life.stop = task, stop


@asynccontextmanager
async def _entered(lifespan: _AnyLifespan | None, server: Any) -> AsyncIterator[Any]:
    """`lifespan(server)`'s value while inside (None without a lifespan)."""
    if lifespan is None:
        yield None
        return
    async with lifespan(server) as state:
        yield state


@dataclass
class _Running:
    """A server's starts (`Server.start`) on one event loop: how many are not stopped yet,
    and the task holding its lifespan."""

    lock: asyncio.Lock | None = None
    loop: asyncio.AbstractEventLoop | None = None
    count: int = 0
    task: asyncio.Task[None] | None = None
    stop: asyncio.Event | None = None
