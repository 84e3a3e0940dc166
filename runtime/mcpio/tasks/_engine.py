"""The task engine: a request that becomes a task is stored, then run in the background.

This instance runs it, holding a lease on it that it renews while the handler works. The
handler is an ordinary handler. What it asks the client (`ctx.elicit`, ...) becomes the
task's `input_required` status with the questions in its `inputRequests`, answered by
`tasks/update` (modern) or, on a legacy session, by the client's answers to real requests;
its progress messages become the task's status message; `tasks/cancel` cancels it (anyio
cancellation: cooperative at the handler's next await); a `ProtocolError` it raises makes the
task `failed` with that JSON-RPC error, anything else `failed` with -32603 (traceback logged).

`tasks/update` and `tasks/cancel` may reach another instance than the one running the task
(a shared store behind a load balancer): the engine then queues them in the store, which the
instance running the task reads at each renewal of its lease, and hands them to the bus
(`control`), which brings them at once while it is up; that instance applies them
(`on_control`), twice at most, which changes nothing (an answered question stays answered).

With a queue (`mcpio.tasks._queue`), `enqueue` stores a task held by no one and queues it; a
worker (`mcpio.cli._worker`) claims it in the store and runs it here with `execute`. A
retry-safe task keeps the answers it collected in its record, so that a re-run after its worker
died (or shut down) gets them.

`drain` is the graceful shutdown: no new task; the running ones get a grace period, then the
rest are stopped and handed back: a queued retry-safe task goes back to the queue's workers (the
stopped run not counted against its `max_attempts`), any other ends `failed` with `SHUT_DOWN`,
never left `working` until its lease runs out.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import json
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import pydantic
from pydantic import BaseModel

import mcp_wire
from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.errors import INTERNAL_ERROR, INVALID_PARAMS, SERVER_BUSY, ProtocolError
from mcpio._core.context import CURRENT_CONTEXT, Context, Inputs, Question
from mcpio._core.handlers import SelfWritten, WireResult
from mcpio._core.jsonrpc import plain
from mcpio._core.protocol_rules import TASKS_EXTENSION as TASKS_EXTENSION  # (named here too)
from mcpio.latest import public as pub
from mcpio.tasks._owner import owner_of
from mcpio.tasks._queue import Job, TaskQueue
from mcpio.tasks._quota import TaskLedger
from mcpio.tasks._store import (
    Clock,
    MemoryTaskStore,
    TaskRecord,
    TaskStore,
    TaskStoreError,
    record_json,
)

log = logging.getLogger("mcpio")

# What answers each kind of question a task asks.
ANSWERS: dict[str, type[BaseModel]] = {
    "elicitation/create": pub.ElicitResult,
    "sampling/createMessage": pub.CreateMessageResult,
    "roots/list": pub.ListRootsResult,
}
CANCELLED = "cancelled by the client"
SHUT_DOWN = "the server shut down before this task finished"
HANDED_BACK = "the server running this task shut down: it will run again"

Watcher = Callable[[TaskRecord], Awaitable[None]]
Renewed = Callable[[], Awaitable[None]]
Control = Callable[[dict[str, Any]], Awaitable[None]]
TaskSupport = Literal["forbidden", "optional", "required"]


ProgressSink = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Where a task's `notifications/progress` go: given the task id and the params."""


@dataclass(frozen=True)
class TaskOffer:
    """A client's offer to take a task as the answer to its request, and how to reach it.

    Modern: the client declared the extension; legacy: a task-augmented request.

    Args:
        ttl_ms: The TTL it asked for.
        ask: How questions reach the client, given the task id (legacy: real requests on its
            session; None: `tasks/update`).
        watch: Told of each change (legacy: `notifications/tasks/status` on its session).
        progress: How the task's progress notifications reach the client (legacy: its session;
            modern: the listen streams following the task).
    """

    ttl_ms: int | None = None
    ask: Callable[[str], Inputs] | None = None  # given the task id
    watch: Watcher | None = None
    progress: ProgressSink | None = None

    def reporter(self, task_id: str) -> Callable[[dict[str, Any]], Awaitable[None]] | None:
        """Where the progress of task `task_id` goes (None: nowhere but its status message)."""
        progress = self.progress
        if progress is None:
            return None

        async def report(params: dict[str, Any]) -> None:
            await progress(task_id, params)

        return report


@dataclass(frozen=True)
class TaskCreated(SelfWritten):
    """What a handler returns when its request became a task.

    The connection answers the request with its revision's `CreateTaskResult`.
    """

    record: TaskRecord

    def wire(self, revision: str, modern: bool) -> WireResult:
        """The `CreateTaskResult` of `revision` (modern: checked by the Tasks extension's codec)."""
        if modern:
            data = {**modern_task(self.record, detailed=False), "resultType": "task"}
            return WireResult(data, tasks_codec(revision))
        return WireResult({"task": legacy_task(self.record)})


@functools.cache
def tasks_available(revision: str) -> bool:
    """Whether a modern revision was generated with the Tasks extension: a revision newer than
    the extension gets it only where it still fits (`mcp_wire.EXTENSION_FITS` says why not)."""
    return revision in mcp_wire.EXTENSIONS.get(TASKS_EXTENSION, ())


@functools.cache
def tasks_codec(revision: str) -> Codec:
    """The codec of a modern revision with the Tasks extension (its frames and results)."""
    return mcp_wire.codec(revision).with_extensions(TASKS_EXTENSION)


def iso(t: float) -> str:
    """An ISO 8601 UTC timestamp (what `createdAt` / `lastUpdatedAt` carry)."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_task_id() -> str:
    """An unguessable task id (192 random bits): task ids act as bearer references."""
    return secrets.token_urlsafe(24)


class _Run:
    """A task this instance is running."""

    def __init__(self, record: TaskRecord) -> None:
        self.record = record
        # Questions waiting for an answer, by key (a re-run: those its last run left open).
        self.open: dict[str, dict[str, Any]] = dict(record.input_requests or {})
        self.answers: dict[str, Any] = dict(record.answers or {})
        self.answered = asyncio.Event()
        self.done = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.cancelled = False
        self.shutdown = False  # stopped by `drain`
        self.watch: Watcher | None = None  # told of this task's changes (besides the engine's)
        self.renewed: Renewed | None = None  # called after each renewal of its lease
        self.saving = asyncio.Lock()  # one change at a time, stored in the order made

    @property
    def keeps_answers(self) -> bool:
        """A task that may run again keeps its answers in its record."""
        return self.record.max_attempts > 1


class TaskInputs:
    """The inputs of a task: the questions it asks the client, and their answers.

    Unanswered questions park it in `input_required` until `tasks/update` (or `ask`, a legacy
    session's real requests) answers all of them.

    Args:
        engine: The engine running the task.
        run: The task's run on this instance.
        ask: The legacy session's real requests that answer the questions (None:
            `tasks/update` does).
    """

    def __init__(self, engine: TaskEngine, run: _Run, ask: Inputs | None = None) -> None:
        self.task_id = run.record.task_id
        self._engine = engine
        self._run = run
        self._ask = ask

    async def ask(self, questions: Mapping[str, Question]) -> dict[str, Any]:
        """The answers to `questions`, waiting for those not answered yet.

        The answers the task has collected; the questions still open park it in
        `input_required`.

        Raises:
            ProtocolError: -32603 when a question to go out in `tasks/get` is not valid.
        """
        run = self._run
        missing = {k: q for k, q in questions.items() if k not in run.answers}
        if missing:
            asked = {k: {"method": q.method, "params": q.params()} for k, q in missing.items()}
            if self._ask is None:  # they go out in tasks/get: valid ones only (else: failed)
                try:
                    pub.InputRequiredResult.model_validate(
                        {"resultType": "input_required", "inputRequests": asked}
                    )
                except pydantic.ValidationError as exc:
                    first = exc.errors(include_url=False, include_input=False)[0]
                    where = ".".join(str(p) for p in first["loc"][1:3])
                    raise ProtocolError(
                        INTERNAL_ERROR, f"the task asked an invalid question ({where})"
                    ) from None
            run.open.update(asked)
            run.answered = asyncio.Event()
            await self._engine.save(run, status="input_required", input_requests=dict(run.open))
            if self._ask is not None:  # legacy: real requests on the session
                answers = await self._ask.ask(missing)
                run.answers.update(answers)
                run.open.clear()
                await self._engine.save(run, status="working", input_requests=None)
            else:
                await run.answered.wait()
        return {key: run.answers[key] for key in questions}


Work = Callable[[TaskInputs, Callable[[str], Awaitable[None]]], Awaitable[dict[str, Any]]]
"""What a task runs: given the task's inputs (questions to the client; its id) and a function
that sets its status message, the request's result as plain JSON data."""


class TaskEngine:
    """Creates, runs, updates and cancels tasks over a `TaskStore` (default: `MemoryTaskStore`).

    Bounds (a new task beyond one is -32005, retry later): `max_tasks` tasks running here at
    once; per requestor (`mcpio.tasks._quota`: the client's address or principal, whatever its
    sessions), `max_tasks_per_requestor` tasks and `max_kept_bytes_per_requestor` bytes kept,
    and `max_kept_bytes` for all requestors together; a client's TTL clamped to
    `min_ttl_ms`..`ttl_ms`; a result larger than `max_result_bytes` (as JSON) fails its task
    instead of being stored.

    Args:
        store: Where tasks live (None: a `MemoryTaskStore` on `clock`).
        ttl_ms: How long a task is kept after its creation (None: until deleted); a client may
            ask for less.
        poll_interval_ms: The polling interval clients are told.
        lease_seconds: How long a task survives this instance's silence (renewed every third
            of it, and by each change of the task).
        instance: This instance's name as the holder of leases (None: a random one).
        clock: The time now, in seconds since the epoch.
        queue: Where `enqueue` puts tasks for workers (None: tasks run here).
        max_attempts: The runs a retry-safe queued task gets (a run `drain` stopped is given
            back).
        grace_seconds: How long `drain` lets running tasks finish.
        max_tasks_per_requestor: Tasks a requestor holds here: accepted here and not yet
            expired (running, queued, or ended and kept).
        max_tasks: Tasks running here at once.
        max_kept_bytes_per_requestor: Bytes of a requestor's ended tasks' records kept.
        max_kept_bytes: Bytes of ended tasks' records kept, for all requestors together.
        min_ttl_ms: The shortest TTL a client's request gets.
        max_result_bytes: The largest result (as JSON) stored; a larger one fails its task.
        sweep_seconds: How often expired tasks are swept from the store while tasks run here
            (the memory and SQLite stores; Redis expires its keys itself).
    """

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        ttl_ms: int | None = 3_600_000,
        poll_interval_ms: int = 500,
        lease_seconds: float = 30.0,
        instance: str | None = None,
        clock: Clock = time.time,
        queue: TaskQueue | None = None,
        max_attempts: int = 3,
        grace_seconds: float = 10.0,
        max_tasks_per_requestor: int = 1_000,
        max_tasks: int = 10_000,
        max_kept_bytes_per_requestor: int = 64 * 1024 * 1024,
        max_kept_bytes: int = 1024 * 1024 * 1024,
        min_ttl_ms: int = 1_000,
        max_result_bytes: int = 4 * 1024 * 1024,
        sweep_seconds: float = 60.0,
    ) -> None:
        self.store: TaskStore = store if store is not None else MemoryTaskStore(clock)
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.lease_seconds = lease_seconds
        self.instance = instance or secrets.token_hex(8)
        self.clock = clock
        self.watchers: list[Watcher] = []  # told of every change of a task run here
        self.control: Control | None = None  # sends update/cancel to the instance running a task
        self.queue = queue
        self.max_attempts = max_attempts
        self.grace_seconds = grace_seconds
        self.accepting = True  # False once `drain` began
        self.max_tasks = max_tasks
        self.ledger = TaskLedger(
            max_tasks_per_requestor, max_kept_bytes_per_requestor, max_kept_bytes
        )
        self.min_ttl_ms = min_ttl_ms
        self.max_result_bytes = max_result_bytes
        self.sweep_seconds = sweep_seconds
        self._runs: dict[str, _Run] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._expiring_until = -math.inf  # (clock) the last TTL of a task started here

    # ------------------------------------------------------------------ running

    def _new_record(
        self, owner: str | None, requestor: str | None, method: str, ttl_ms: int | None
    ) -> TaskRecord:
        """A new task, held in the ledger for `requestor` (`owner` when None): released by
        `_create` if it is not stored after all."""
        if not self.accepting:
            raise ProtocolError(SERVER_BUSY, "the server is shutting down: retry elsewhere")
        now = self.clock()
        who = owner if requestor is None else requestor
        self._check_room(who, now)
        if ttl_ms is not None:  # a client's wish, within the server's range
            ttl_ms = max(ttl_ms, self.min_ttl_ms)
        ttl = min((t for t in (ttl_ms, self.ttl_ms) if t is not None), default=None)
        record = TaskRecord(
            task_id=new_task_id(),
            owner=owner,
            method=method,
            status="working",
            created_at=now,
            updated_at=now,
            ttl_ms=ttl,
            poll_interval_ms=self.poll_interval_ms,
            lease_holder=self.instance,
            lease_until=now + self.lease_seconds,
        )
        self.ledger.hold(record.task_id, who, record.expires_at)
        return record

    def _check_room(self, requestor: str | None, now: float) -> None:
        """-32005 when this instance runs its limit of tasks, or `requestor` holds its share."""
        if len(self._runs) >= self.max_tasks:
            raise ProtocolError(
                SERVER_BUSY,
                f"too many tasks running ({self.max_tasks}): retry later",
                {"retryAfterSeconds": 1},
            )
        self.ledger.check(requestor, now)

    def _sweep_here(self, record: TaskRecord) -> None:
        """Keep a sweeper running on this event loop while tasks run here and until the last
        of them has expired (started once)."""
        if record.ttl_ms is not None:
            expires = record.created_at + record.ttl_ms / 1000
            self._expiring_until = max(self._expiring_until, expires)
        sweep = getattr(self.store, "sweep", None)
        if sweep is None or (self._sweeper is not None and not self._sweeper.done()):
            return

        def ended() -> bool:
            return not self._runs and self.clock() > self._expiring_until

        async def sweeper() -> None:
            # The last sweep starts after the last expiry: one that began just before it (a slow
            # store, a loaded machine) would leave the last tasks stored for good.
            while True:
                await asyncio.sleep(self.sweep_seconds)
                last = ended()
                try:
                    await sweep()
                except TaskStoreError as exc:
                    log.warning("sweeping expired tasks failed: %s", exc)
                if last and ended():
                    return

        self._sweeper = asyncio.get_running_loop().create_task(
            sweeper(), context=contextvars.Context()
        )

    async def enqueue(
        self,
        job: Job,
        *,
        owner: str | None,
        requestor: str | None = None,
        ttl_ms: int | None = None,
        retry: bool = False,
    ) -> TaskRecord:
        """Store a new task held by no one and queue `job` for the workers.

        A full queue, or one holding the requestor's share: the task is stored `failed` and a
        `SERVER_BUSY` error raised.

        Args:
            job: What the workers run (its `task_id` and `requestor` are set here).
            owner: The task's owner (see `TaskRecord.owner`).
            requestor: Whom its bounds count (`Context.client_key`; None: `owner`).
            ttl_ms: The TTL the client asked for (None: the engine's).
            retry: Whether it is retry-safe: it gets `max_attempts` runs, else one.
        """
        assert self.queue is not None, "enqueue needs a queue"
        record = dataclasses.replace(
            self._new_record(owner, requestor, "tools/call", ttl_ms),
            lease_holder=None,
            lease_until=None,
            attempts=0,
            max_attempts=self.max_attempts if retry else 1,
        )
        # Queued, it runs elsewhere: held here by its count until it expires (its result's
        # size is the worker's to bound, `max_result_bytes`).
        self.ledger.ended(record.task_id, 0, self.clock())
        await self._create(record)
        who = owner if requestor is None else requestor
        queued = await self.queue.put(
            dataclasses.replace(job, task_id=record.task_id, requestor=who)
        )
        if queued != "queued":
            if queued == "full":
                refused = f"the task queue is full ({self.queue.max_queued} tasks): retry later"
            else:
                refused = (
                    "too many queued tasks for this requestor "
                    f"({self.queue.max_queued_per_requestor}): retry when one has ended"
                )
            await self.store.save(record.failed(refused, self.clock()))
            raise ProtocolError(SERVER_BUSY, refused, {"retryAfterSeconds": 1})
        return record

    async def _create(self, record: TaskRecord) -> None:
        """Store a new task; one the store refused is no longer held in the ledger."""
        try:
            await self.store.create(record)
        except BaseException:
            self.ledger.forget(record.task_id)
            raise

    async def execute(
        self, record: TaskRecord, work: Work, renewed: Renewed | None = None
    ) -> TaskRecord:
        """Run the work of a task this instance claimed (`TaskStore.claim`) to its end.

        Args:
            record: The task as claimed.
            work: What it runs.
            renewed: Called after each renewal of its lease.

        Returns:
            The task as stored then: terminal, or handed back (held by no one) by `drain`.
        """
        run = self._launch(record, work, None, None)
        run.renewed = renewed
        await run.done.wait()
        return run.record

    async def start(
        self,
        *,
        owner: str | None,
        method: str,
        work: Work,
        ttl_ms: int | None = None,
        ask: Callable[[str], Inputs] | None = None,
        watch: Watcher | None = None,
        requestor: str | None = None,
    ) -> TaskRecord:
        """Store a new task (returns once stored) and run `work` in the background.

        Args:
            owner: The task's owner (see `TaskRecord.owner`).
            method: The request it runs, e.g. "tools/call".
            work: What it runs.
            ttl_ms: The TTL the client asked for (None: the engine's).
            ask: How its questions reach the client, given the task id (None: `tasks/update`).
            watch: Told of each change of the task (besides the engine's `watchers`).
            requestor: Whom its bounds count (`Context.client_key`; None: `owner`).
        """
        record = self._new_record(owner, requestor, method, ttl_ms)
        await self._create(record)
        self._launch(record, work, ask, watch)
        return record

    async def start_offered(
        self, offer: TaskOffer, ctx: Context, run: Callable[[Context], Awaitable[Any]]
    ) -> TaskCreated:
        """Answer a request with a task at once, its handler running in the background.

        Args:
            offer: How the request's client takes the task.
            ctx: The request's context.
            run: The handler, given the context inside the task (`Context.for_task`).
        """

        async def work(inputs: TaskInputs, status: Callable[[str], Awaitable[None]]) -> Any:
            inside = ctx.for_task(inputs, status, offer.reporter(inputs.task_id))
            CURRENT_CONTEXT.set(inside)  # `get_context()` (the task's own contextvars, dropped)
            return plain(await run(inside))

        return TaskCreated(await self._start_for(offer, ctx, work))

    async def start_deferred(
        self, offer: TaskOffer, ctx: Context, run: Callable[[Context], Awaitable[Any]]
    ) -> Any:
        """Run a deferred task's handler, answering the request, until it becomes a task.

        A deferred task is a tool registered with `defer_task=True`: `run` (the handler) runs
        here, answering the request itself, until it calls `ctx.become_task()`; the request is
        then answered with a task and the handler goes on in the background, inside it.

        Args:
            offer: How the request's client takes the task.
            ctx: The request's context.
            run: The handler.

        Returns:
            The handler's result, or a `TaskCreated` once it called `ctx.become_task()`.
        """
        asked, released = asyncio.Event(), asyncio.Event()

        async def become() -> None:
            asked.set()
            await released.wait()

        ctx.on_become_task(become)
        handler = asyncio.ensure_future(run(ctx))
        waiter = asyncio.ensure_future(asked.wait())
        try:
            await asyncio.wait({handler, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            if not asked.is_set():
                handler.cancel()
        if not asked.is_set():
            return handler.result()

        async def resume(inputs: TaskInputs, status: Callable[[str], Awaitable[None]]) -> Any:
            ctx.switch_to_task(inputs, status, offer.reporter(inputs.task_id))
            released.set()
            return plain(await handler)

        try:
            return TaskCreated(await self._start_for(offer, ctx, resume))
        except BaseException:
            handler.cancel()
            raise

    async def _start_for(self, offer: TaskOffer, ctx: Context, work: Work) -> TaskRecord:
        return await self.start(
            owner=owner_of(ctx),
            method="tools/call",
            work=work,
            ttl_ms=offer.ttl_ms,
            ask=offer.ask,
            watch=offer.watch,
            requestor=ctx.client_key,
        )

    def _launch(
        self,
        record: TaskRecord,
        work: Work,
        ask: Callable[[str], Inputs] | None,
        watch: Watcher | None,
    ) -> _Run:
        run = _Run(record)
        self._runs[record.task_id] = run
        self._sweep_here(record)
        # A context of its own: the task outlives the request (and its transport stream) that
        # started it, so nothing of that request's context may follow it.
        run.task = asyncio.get_running_loop().create_task(
            self._drive(run, work, ask(record.task_id) if ask else None, watch),
            context=contextvars.Context(),
        )
        return run

    async def _drive(
        self, run: _Run, work: Work, ask: Inputs | None, watch: Watcher | None
    ) -> None:
        renewer = asyncio.get_running_loop().create_task(self._renew(run))
        changes: dict[str, Any]
        run.watch = watch

        async def status(message: str) -> None:
            await self.save(run, status_message=message)

        try:
            result = await work(TaskInputs(self, run, ask), status)
            changes = {"status": "completed", "result": result}
            size = len(json.dumps(result))
            if size > self.max_result_bytes:
                too_large = ProtocolError(
                    INTERNAL_ERROR,
                    f"the task's result is too large to keep ({size} bytes; the limit is "
                    f"{self.max_result_bytes})",
                )
                changes = {
                    "status": "failed",
                    "status_message": too_large.message,
                    "error": too_large.to_error(),
                }
        except asyncio.CancelledError:
            changes = {"status": "cancelled", "status_message": CANCELLED}
            if run.shutdown:
                changes = _handed_back(run)
            elif not run.cancelled:
                raise  # the engine itself is closing: the lease will run out
        except Exception as exc:
            if not isinstance(exc, ProtocolError):
                log.exception("task %s failed", run.record.task_id)
                exc = ProtocolError(INTERNAL_ERROR, "internal error")
            changes = {"status": "failed", "status_message": exc.message, "error": exc.to_error()}
        except BaseException:
            run.done.set()  # abandoned (the engine closing): `execute` returns it as it stands
            raise
        finally:
            renewer.cancel()
            self._runs.pop(run.record.task_id, None)
        try:
            await self.save(
                run,
                **{"input_requests": None, "lease_holder": None, "lease_until": None, **changes},
            )
        finally:
            # Its record counts from now on for its requestor, whatever its size: a result
            # accepted is kept (the next new task waits for room instead).
            if self.ledger.running(run.record.task_id):
                stored = len(record_json(run.record))
                self.ledger.ended(run.record.task_id, stored, self.clock())
            run.done.set()

    async def _renew(self, run: _Run) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            until = self.clock() + self.lease_seconds
            if not await self.store.renew(run.record.task_id, self.instance, until):
                log.info(
                    "task %s: lease lost or task ended elsewhere; stopping", run.record.task_id
                )
                run.cancelled = True
                if run.task is not None:
                    run.task.cancel()
                return
            run.record = dataclasses.replace(run.record, lease_until=until)
            try:
                if run.renewed is not None:
                    await run.renewed()
            except Exception as exc:
                log.warning("task %s: renewal hook failed: %s", run.record.task_id, exc)
            try:
                for order in await self.store.take_orders(run.record.task_id):
                    await self.on_control(order)
            except Exception as exc:  # the lease is what keeps the task alive: renew on
                log.warning("task %s: orders not applied: %s", run.record.task_id, exc)

    async def save(self, run: _Run, **changes: Any) -> TaskRecord:
        """Store a change of a task run here and tell the watchers.

        The change renews the task's lease, unless it ends the task.
        """
        async with run.saving:
            now = self.clock()
            changes.setdefault("lease_until", now + self.lease_seconds)
            record = dataclasses.replace(run.record, updated_at=now, **changes)
            stored = await self.store.save(record)
            run.record = stored if stored is not None else record
            for watcher in [*self.watchers, *([run.watch] if run.watch is not None else [])]:
                try:
                    await watcher(run.record)
                except Exception as exc:  # a watcher gone (its connection closed) stops nothing
                    log.debug("task watcher failed: %s", exc)
            return run.record

    # ------------------------------------------------------------------ requests about a task

    async def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        """The task `task_id` if `owner` owns it and it is live, else None."""
        return await self.store.get(task_id, owner)

    async def wait(self, task_id: str, owner: str | None) -> TaskRecord | None:
        """The task once terminal (None: unknown, expired, another owner's)."""
        while True:
            run = self._runs.get(task_id)
            if run is not None and run.record.owner == owner:
                await run.done.wait()
            record = await self.store.get(task_id, owner)
            if record is None or record.terminal:
                return record
            if task_id not in self._runs:  # run by another instance: poll the store
                await asyncio.sleep((record.poll_interval_ms or self.poll_interval_ms) / 1000)

    async def update(
        self, task_id: str, owner: str | None, responses: Mapping[str, Any]
    ) -> TaskRecord | None:
        """Answer open questions of a task (keys not open are ignored).

        Args:
            task_id: The task's id.
            owner: Who asks: only the task's owner reaches it.
            responses: The answers, by the key of the question each answers.

        Returns:
            The task as read before the answers apply (None: no such task).

        Raises:
            ProtocolError: -32602 when an answer to an open question is not a valid result of
                the method asked.
        """
        record = await self.store.get(task_id, owner)
        if record is None:
            return None
        if not record.terminal:
            _check_answers(record.input_requests or {}, responses)
            await self._apply({"op": "update", "taskId": task_id, "responses": dict(responses)})
        return record

    async def cancel(
        self, task_id: str, owner: str | None, wait: bool = False
    ) -> TaskRecord | None:
        """Ask a task to stop (cooperative); the task as it stands after (None: no such task).

        Args:
            task_id: The task's id.
            owner: Who asks: only the task's owner reaches it.
            wait: Whether to wait until it is terminal, if it runs here.
        """
        record = await self.store.get(task_id, owner)
        if record is None or record.terminal:
            return record
        run = self._runs.get(task_id)
        if run is None and record.lease_holder in (None, self.instance):
            # Nobody runs it (a store that outlived its instance): settle it here.
            done = dataclasses.replace(
                record,
                status="cancelled",
                status_message=CANCELLED,
                input_requests=None,
                lease_holder=None,
                lease_until=None,
                updated_at=self.clock(),
            )
            return await self.store.save(done) or done
        await self._apply({"op": "cancel", "taskId": task_id})
        if run is not None and wait:
            await run.done.wait()
        return await self.store.get(task_id, owner) or record

    async def list(
        self, owner: str | None, cursor: str | None, limit: int = 100
    ) -> tuple[list[TaskRecord], str | None]:
        """The owner's live tasks, oldest first, at most `limit`, and the cursor of the rest.

        Args:
            owner: Whose tasks (see `TaskRecord.owner`).
            cursor: Where the page starts: the cursor of a previous page (None: the first task).
            limit: The most tasks on the page.

        Raises:
            ValueError: For an unknown cursor.
        """
        return await self.store.list(owner, cursor, limit)

    async def _apply(self, order: dict[str, Any]) -> None:
        """Apply an update or cancel to a task run here, else send it to the one running it:
        through the store (at its next renewal, whatever the bus) and the bus (at once)."""
        if order["taskId"] in self._runs:
            await self.on_control(order)
        elif await self.store.post_order(order["taskId"], order) and self.control is not None:
            await self.control(order)

    async def on_control(self, order: dict[str, Any]) -> None:
        """An update or cancel for a task, from this instance or another (through the bus)."""
        run = self._runs.get(order.get("taskId", ""))
        if run is None:
            return
        if order.get("op") == "cancel":
            run.cancelled = True
            if run.task is not None:
                run.task.cancel()
            return
        responses = order.get("responses")
        if type(responses) is not dict:
            return
        fresh = {k: v for k, v in responses.items() if k in run.open}
        if not fresh:
            return
        run.answers.update(fresh)
        for key in fresh:
            del run.open[key]
        kept = {"answers": dict(run.answers)} if run.keeps_answers else {}
        if run.open:
            await self.save(run, input_requests=dict(run.open), **kept)
        else:
            await self.save(run, status="working", input_requests=None, **kept)
            run.answered.set()

    async def drain(self, grace: float | None = None) -> None:
        """Shut down gracefully: take no new task, and let the running ones finish for a while.

        They get up to `grace` seconds (default `grace_seconds`); the rest are then stopped and
        handed back.
        """
        self.accepting = False
        runs = list(self._runs.values())
        if runs:
            waiting = [asyncio.ensure_future(r.done.wait()) for r in runs]
            await asyncio.wait(waiting, timeout=self.grace_seconds if grace is None else grace)
            for waiter in waiting:
                waiter.cancel()
        left = [r for r in self._runs.values() if r.task is not None]
        for run in left:
            run.shutdown = True
            if run.task is not None:
                run.task.cancel()
        await asyncio.gather(*(r.task for r in left if r.task is not None), return_exceptions=True)

    async def aclose(self) -> None:
        """Stop the tasks running here; the store stays open.

        They turn `failed` for others once their lease runs out. The store stays open (it may
        be shared): close it yourself.
        """
        tasks = [r.task for r in self._runs.values() if r.task is not None]
        if self._sweeper is not None:
            tasks.append(self._sweeper)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _handed_back(run: _Run) -> dict[str, Any]:
    """The changes that end this instance's run of a task stopped by `drain`: a retry-safe
    queued task goes back to the queue, its open questions kept, and gets the run back (the
    shutdown stopped it, not the task: `attempts` still counts it, `max_attempts` grows by one),
    so that a rolling restart never fails it, however many of its runs it catches."""
    record = run.record
    if record.max_attempts > 1:
        return {
            "status_message": HANDED_BACK,
            "input_requests": dict(run.open) or None,
            "answers": dict(run.answers) or None,
            "max_attempts": record.max_attempts + 1,
        }
    error = {"code": INTERNAL_ERROR, "message": SHUT_DOWN}
    return {"status": "failed", "status_message": SHUT_DOWN, "error": error}


def _check_answers(asked: Mapping[str, Any], responses: Mapping[str, Any]) -> None:
    """Answers to the task's open questions must be results of the methods asked (-32602);
    answers to other keys are ignored, whatever they hold."""
    for key, answer in responses.items():
        question = asked.get(key)
        method = question.get("method") if isinstance(question, Mapping) else None
        kind = ANSWERS.get(method) if isinstance(method, str) else None
        if kind is None:
            continue
        try:
            kind.model_validate(answer)
        except pydantic.ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False)
            raise ProtocolError(
                INVALID_PARAMS,
                f"inputResponses.{key}: not a valid {method} result",
                {"field": f"inputResponses.{key}", "errors": errors},
            ) from None


# ---------------------------------------------------------------------- wire shapes


def modern_task(record: TaskRecord, *, detailed: bool) -> dict[str, Any]:
    """The 2026-07-28 extension's `Task` of a record.

    A `DetailedTask` when `detailed`: with its `inputRequests`, `result` or `error`.
    """
    task = _task(record, record.status, "ttlMs", "pollIntervalMs")
    if detailed:
        if record.status == "input_required":
            task["inputRequests"] = record.input_requests or {}
        elif record.status == "completed":
            task["result"] = record.result or {}
        elif record.status == "failed":
            task["error"] = record.error or {"code": INTERNAL_ERROR, "message": "failed"}
    return task


def legacy_task(record: TaskRecord) -> dict[str, Any]:
    """2025-11-25's `Task` of a record.

    That revision calls a tool call whose result is an error (`isError`) `failed` (2026-07-28:
    `completed`); `tasks/result` gives that result all the same.
    """
    status = record.status
    if status == "completed" and (record.result or {}).get("isError") is True:
        status = "failed"
    return _task(record, status, "ttl", "pollInterval")


def _task(record: TaskRecord, status: str, ttl: str, poll: str) -> dict[str, Any]:
    """The fields both revisions' `Task` share; `ttl` and `poll` name the two they spell apart."""
    task: dict[str, Any] = {
        "taskId": record.task_id,
        "status": status,
        "createdAt": iso(record.created_at),
        "lastUpdatedAt": iso(record.updated_at),
        ttl: record.ttl_ms,
    }
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    if record.poll_interval_ms is not None:
        task[poll] = record.poll_interval_ms
    return task
