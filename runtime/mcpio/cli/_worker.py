"""Task workers: processes that run the queued tasks (`mcpio.tasks._queue`) of a server's tools,
apart from the HTTP instances that accept them (which store and queue the tasks, and answer
`tasks/*` from the store).

A worker imports the same app as the HTTP instances (its tools), shares their task store, queue
and bus (one Redis), and runs at most `concurrency` tasks at once: a burst waits in the queue.
For each entry it takes (new, or reclaimed from a worker gone silent for a lease) it claims the
task in the store (`TaskStore.claim`: one worker at a time; a claim counts a run) and runs it in
its task engine, which renews the lease and keeps the entry from looking idle. A task that ended
leaves the queue; one handed back by a graceful shutdown goes back to it at once.

    mcpio worker examples/everything_server.py --redis redis://127.0.0.1:6379/0

or, in Python, `await Worker(server, RedisTaskQueue(url)).run()` (`server.tasks.store` on the
same Redis). SIGTERM (or SIGINT) stops it gracefully: see `TaskEngine.drain`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import signal
import sys
import time

from mcpio.server._loading import load_server
from mcpio.server._server import Server
from mcpio.tasks._extension import tasks_of
from mcpio.tasks._queue import Entry, RedisTaskQueue

log = logging.getLogger("mcpio")

BLOCK_MS = 500  # how long one read waits for new entries
RETRY_SECONDS = 1.0  # after the queue failed


class Worker:
    """Runs `server`'s queued tasks from `queue`, `concurrency` at a time.

    Args:
        server: The server whose tools run the tasks (its task engine, `server.tasks`, on the
            same Redis as the queue).
        queue: The queue the tasks are taken from.
        concurrency: How many tasks run at once (at least 1; 8 by default).
    """

    def __init__(self, server: Server, queue: RedisTaskQueue, *, concurrency: int = 8) -> None:
        if concurrency < 1:
            raise ValueError(f"a worker runs at least one task at a time (not {concurrency})")
        self.server = server
        self.engine = server.tasks
        self.queue = queue
        self.concurrency = concurrency
        self.name = self.engine.instance  # its consumer name and lease holder
        self._stopping = asyncio.Event()
        self._running: set[asyncio.Task[None]] = set()

    def stop(self) -> None:
        """Stop taking tasks; `run` then drains the running ones and returns."""
        self._stopping.set()

    async def run(self) -> None:
        """Take and run tasks until `stop`, then shut down gracefully (`TaskEngine.drain`)."""
        reclaim_every = self.engine.lease_seconds / 4
        reclaimed_at = 0.0
        try:
            while not self._stopping.is_set():
                free = self.concurrency - len(self._running)
                if free == 0:
                    stopping = asyncio.ensure_future(self._stopping.wait())
                    await asyncio.wait(
                        [*self._running, stopping], return_when=asyncio.FIRST_COMPLETED
                    )
                    stopping.cancel()
                    continue
                entries: list[Entry] = []
                try:
                    if time.monotonic() - reclaimed_at >= reclaim_every:
                        reclaimed_at = time.monotonic()
                        idle_ms = round(self.engine.lease_seconds * 1000)
                        entries = await self.queue.reclaim(self.name, idle_ms, free)
                    if not entries:
                        entries = await self.queue.read(self.name, free, BLOCK_MS)
                except Exception as exc:  # Redis down: try again in a second
                    log.warning("task queue %s: %s", self.queue.where(), exc)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stopping.wait(), RETRY_SECONDS)
                    continue
                if self._stopping.is_set():  # taken as the stop came: to another worker
                    for entry in entries:
                        await self.queue.requeue(entry)
                    break
                for entry in entries:
                    task = asyncio.get_running_loop().create_task(self._one(entry))
                    self._running.add(task)
                    task.add_done_callback(self._running.discard)
        finally:
            await self.engine.drain()
            await asyncio.gather(*self._running, return_exceptions=True)

    async def _one(self, entry: Entry) -> None:
        job, store = entry.job, self.engine.store
        try:
            until = time.time() + self.engine.lease_seconds
            record = await store.claim(job.task_id, self.name, until)
            if record is None:
                current = await store.get(job.task_id, job.owner)
                if current is None or current.terminal:
                    await self.queue.done(entry.id)  # ended, expired or failed meanwhile
                # else another worker holds it: the entry stays pending, reclaimed if it dies
                return
            if not self.engine.accepting:  # the shutdown began meanwhile: not run, given back
                not_run = dataclasses.replace(
                    record, attempts=record.attempts - 1, lease_holder=None, lease_until=None
                )
                await store.save(not_run)
                await self.queue.requeue(entry)
                return
            log.info(
                "task %s: run %d of %d on %s",
                job.task_id,
                record.attempts,
                record.max_attempts,
                self.name,
            )

            async def touch() -> None:
                await self.queue.touch(self.name, entry.id)

            work = tasks_of(self.server).queued_work(job)
            final = await self.engine.execute(record, work, touch)
            log.info("task %s: %s on %s", job.task_id, final.status, self.name)
            if final.terminal:
                await self.queue.done(entry.id)
            elif final.lease_holder is None:  # handed back by the shutdown
                await self.queue.requeue(entry)
        except Exception:  # the entry stays pending: reclaimed after a lease
            log.exception("task %s: not run", job.task_id)


# ---------------------------------------------------------------------- the command


async def serve(server: Server, args: argparse.Namespace) -> None:
    """Run the worker: claim queued tasks from Redis and run them until SIGTERM or SIGINT."""
    from mcpio._core.bus import RedisBus
    from mcpio.tasks._redis import RedisTaskStore

    engine = server.tasks
    engine.store = RedisTaskStore(args.redis)
    engine.lease_seconds = args.lease
    engine.grace_seconds = args.grace
    engine.max_attempts = args.attempts
    queue = RedisTaskQueue(args.redis)
    server.bus = RedisBus(args.redis)
    server.start_bus()
    worker = Worker(server, queue, concurrency=args.concurrency)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, worker.stop)
    print(
        f"mcpio: worker {worker.name} taking tasks from {queue.where()} "
        f"({args.concurrency} at a time)",
        file=sys.stderr,
        flush=True,
    )
    try:
        await worker.run()
    finally:
        await server.stop_bus()
        await queue.close()
        await engine.store.close()
    print(f"mcpio: worker {worker.name} stopped", file=sys.stderr, flush=True)


def main(args: argparse.Namespace) -> int:
    """`mcpio worker`: load the server and serve its queue; the exit status."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    try:
        server = load_server(args.app)
    except (ValueError, ImportError) as exc:
        print(f"mcpio worker: {exc}", file=sys.stderr)
        return 2
    asyncio.run(serve(server, args))
    return 0
