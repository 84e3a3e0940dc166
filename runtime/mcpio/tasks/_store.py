"""Where tasks live: the task store any instance reads, and the rules every store keeps.

A task outlives the request that started it, the connection that polls it and (with a durable
store) the process that runs it. A store keeps `TaskRecord`s. It knows no wire format and no
method: the runtime turns records into `Task` / `CreateTaskResult` / `GetTaskResult` of the
negotiated revision. The rules every store keeps (the tests of tests/tasks/test_task_stores.py
hold each implementation to them):

- `create` returns only once the task is stored (durably, for a durable store): a client never
  holds a task id that a restart could lose.
- A terminal status (completed, failed, cancelled) is final: `save` over a terminal task
  changes nothing and returns the stored, terminal record.
- A task is visible only to its owner (the principal that created it; `None` when the server
  has no authorization): another owner reads `None`, exactly as for an unknown id.
- A task past its TTL (`created_at + ttl_ms`) reads `None` and may be purged at any time.
- A non-terminal task whose lease ran out (`lease_until < now`: the instance running it
  stopped renewing, i.e. it died) reads `failed` with `LEASE_LOST` as its status message, and is
  stored so from then on; unless it may run again (a queued retry-safe task with runs left,
  `attempts < max_attempts`): it is then handed back, held by no one, for a worker to `claim`.
- `claim` gives a task to one worker at a time: a task held by no one, not terminal, with a run
  left; the claim counts the run (`attempts`).
- An order (a `tasks/update` or `tasks/cancel` another instance received) is queued for a live,
  non-terminal task only (`post_order`), and `take_orders` hands each one over once, oldest
  first; a task's orders go with it when it ends, expires or loses its lease.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

from mcp_wire_runtime.errors import INTERNAL_ERROR

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
LEASE_LOST = "the server running this task stopped before it finished"
RUN_AGAIN = "the server running this task stopped before it finished: it will run again"
# Fields a record written before them may lack (read as their defaults).
_LATER_FIELDS = frozenset({"attempts", "max_attempts", "answers"})

Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task, as stored. Times are seconds since the epoch.

    Args:
        task_id: The task's id.
        owner: The principal that created it; None without authorization.
        method: The request it runs, e.g. "tools/call".
        status: `working`, `input_required`, `completed`, `failed` or `cancelled`.
        created_at: When it was created.
        updated_at: When it last changed.
        ttl_ms: Kept this long after creation (milliseconds); None: until deleted.
        poll_interval_ms: The polling interval clients are told (milliseconds).
        status_message: Its status message, if any.
        result: The request's result, once completed.
        error: The JSON-RPC error object, once failed.
        input_requests: The questions open while `input_required`, by key.
        lease_holder: The instance running it.
        lease_until: When that instance's lease on it runs out.
        attempts: Runs started (a queued task: 0 until a worker claims it).
        max_attempts: Runs allowed: more than one for a queued retry-safe task only.
        answers: The answers collected so far (kept for a re-run).
    """

    task_id: str
    owner: str | None  # the principal that created it; None without authorization
    method: str  # the request it runs, e.g. "tools/call"
    status: TaskStatus
    created_at: float
    updated_at: float
    ttl_ms: int | None  # kept this long after creation; None: until deleted
    poll_interval_ms: int | None = None
    status_message: str | None = None
    result: dict[str, Any] | None = None  # the request's result, once completed
    error: dict[str, Any] | None = None  # the JSON-RPC error object, once failed
    input_requests: dict[str, Any] | None = None  # questions open while input_required
    lease_holder: str | None = None  # the instance running it
    lease_until: float | None = None
    attempts: int = 1  # runs started (a queued task: 0 until a worker claims it)
    max_attempts: int = 1  # runs allowed: more than one for a queued retry-safe task only
    answers: dict[str, Any] | None = None  # answers collected so far (kept for a re-run)

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (`completed`, `failed`, `cancelled`)."""
        return self.status in TERMINAL

    @property
    def expires_at(self) -> float | None:
        """When the task expires (epoch seconds), or None without a TTL."""
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def expired(self, now: float) -> bool:
        """Whether the task has expired at `now`."""
        return self.expires_at is not None and now >= self.expires_at

    def lease_lost(self, now: float) -> bool:
        """Whether the instance running the task let its lease run out before `now`."""
        return not self.terminal and self.lease_until is not None and self.lease_until < now

    def after_lost_lease(self, now: float) -> TaskRecord:
        """What this task becomes once its lease ran out.

        Handed back (held by no one, its open questions kept) when it may run again, else
        `failed` with `LEASE_LOST`.
        """
        if self.attempts < self.max_attempts:
            return dataclasses.replace(
                self, status_message=RUN_AGAIN, updated_at=now, lease_holder=None, lease_until=None
            )
        reason = LEASE_LOST
        if self.max_attempts > 1:
            reason = f"{LEASE_LOST} ({self.attempts} attempts, its limit)"
        return self.failed(reason, now)

    def failed(self, reason: str, now: float) -> TaskRecord:
        """This task ended `failed` for `reason` (an internal error), held by no one."""
        return dataclasses.replace(
            self,
            status="failed",
            status_message=reason,
            error={"code": INTERNAL_ERROR, "message": reason},
            input_requests=None,
            updated_at=now,
            lease_holder=None,
            lease_until=None,
        )

    def claimed(self, holder: str, until: float, now: float) -> TaskRecord | None:
        """This task claimed by `holder` for one more run, or None if it cannot be.

        None: it ended, someone holds it, or it has no run left.

        Args:
            holder: The instance that claims it.
            until: When its lease runs out.
            now: The time now.
        """
        if self.terminal or self.lease_holder is not None or self.attempts >= self.max_attempts:
            return None
        return dataclasses.replace(
            self, lease_holder=holder, lease_until=until, attempts=self.attempts + 1, updated_at=now
        )


class TaskStoreError(Exception):
    """A task store that cannot be read or used now: an internal error.

    The store holds something it cannot read (a corrupt row or value), or cannot be used now (a
    SQLite file locked past its busy timeout).
    """


_NUMBER = (int, float)
_FIELDS: dict[str, tuple[type, ...]] = {
    "task_id": (str,),
    "owner": (str, type(None)),
    "method": (str,),
    "status": (str,),
    "created_at": _NUMBER,
    "updated_at": _NUMBER,
    "ttl_ms": (int, type(None)),
    "poll_interval_ms": (int, type(None)),
    "status_message": (str, type(None)),
    "result": (dict, type(None)),
    "error": (dict, type(None)),
    "input_requests": (dict, type(None)),
    "lease_holder": (str, type(None)),
    "lease_until": (*_NUMBER, type(None)),
    "attempts": (int,),
    "max_attempts": (int,),
    "answers": (dict, type(None)),
}


def record_json(task: TaskRecord) -> str:
    """A record as the durable stores keep it (JSON text)."""
    return json.dumps(dataclasses.asdict(task), separators=(",", ":"))


def record_from_json(text: object, task_id: str, where: str) -> TaskRecord:
    """Read the record of task `task_id` stored by `record_json`.

    Args:
        text: The stored JSON text.
        task_id: The id the record must have.
        where: Where it was read, for the error's message.

    Raises:
        TaskStoreError: For anything else, naming `where`.
    """
    if not isinstance(text, str | bytes):
        raise TaskStoreError(f"{where}: not a task record (not text)")
    try:
        obj = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise TaskStoreError(f"{where}: not a task record ({exc})") from None
    if type(obj) is not dict or not (
        set(_FIELDS) - _LATER_FIELDS <= set(obj) <= set(_FIELDS)  # pyright: ignore
    ):
        raise TaskStoreError(f"{where}: not a task record (wrong fields)")
    fields: dict[str, Any] = obj  # pyright: ignore[reportUnknownVariableType]
    for name, types in _FIELDS.items():
        if name not in fields:
            continue
        value = fields[name]
        if type(value) not in types or (name == "status" and value not in get_args(TaskStatus)):
            raise TaskStoreError(f"{where}: not a task record (bad {name}: {value!r})")
    if fields["task_id"] != task_id:
        raise TaskStoreError(f"{where}: not a task record (it is {fields['task_id']!r})")
    return TaskRecord(**fields)


def order_from_json(text: object, where: str) -> dict[str, Any]:
    """An order stored as JSON text; a `TaskStoreError` naming `where` for anything else."""
    try:
        order = json.loads(text) if isinstance(text, str | bytes) else None
    except (ValueError, UnicodeDecodeError):
        order = None
    if type(order) is not dict:
        raise TaskStoreError(f"{where}: not an order (a JSON object)")
    return order  # pyright: ignore[reportUnknownVariableType]


def cursor_of(task: TaskRecord) -> str:
    """The list cursor that resumes at `task`.

    It is `task`'s place in the order (created_at, task_id), so that it stays valid when that
    task is gone by the time the cursor comes back.
    """
    place = json.dumps([task.created_at, task.task_id], separators=(",", ":"))
    return base64.urlsafe_b64encode(place.encode()).decode()


def place_of(cursor: str) -> tuple[float, str]:
    """The (created_at, task_id) a cursor of `cursor_of` resumes at; ValueError for others."""
    try:
        place = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
    except (ValueError, binascii.Error):
        place = None
    if (
        type(place) is not list
        or len(place) != 2  # pyright: ignore[reportUnknownArgumentType]
        or type(place[0]) not in _NUMBER
        or type(place[1]) is not str
    ):
        raise ValueError(f"unknown cursor {cursor!r}")
    return float(place[0]), place[1]  # pyright: ignore[reportUnknownArgumentType]


def page_of(
    live: list[TaskRecord], cursor: str | None, limit: int
) -> tuple[list[TaskRecord], str | None]:
    """One page of `live` (sorted by created_at, task_id) from `cursor`, and the next cursor.

    Args:
        live: The tasks, sorted by (created_at, task_id).
        cursor: Where the page starts: a cursor of `cursor_of` (None: the first task).
        limit: The most tasks on the page (at least one).

    Raises:
        ValueError: For a limit under one, or a cursor `cursor_of` did not make.
    """
    if limit < 1:
        raise ValueError(f"a page holds at least one task (limit {limit})")
    if cursor is not None:
        place = place_of(cursor)
        live = [t for t in live if (t.created_at, t.task_id) >= place]
    rest = cursor_of(live[limit]) if len(live) > limit else None
    return live[:limit], rest


class TaskStore(Protocol):
    """What the runtime needs of a task store (see the module's rules)."""

    async def create(self, task: TaskRecord) -> None:
        """Store a new task; return once it is stored. Ids are unique (the runtime makes them)."""
        ...

    async def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        """The task as it stands, or None: unknown, expired, or another owner's."""
        ...

    async def save(self, task: TaskRecord) -> TaskRecord | None:
        """Store `task` over its previous state unless that state is terminal (or gone).

        Returns:
            What is stored now (None: unknown or expired).
        """
        ...

    async def renew(self, task_id: str, holder: str, until: float) -> bool:
        """Extend the lease of a non-terminal task held by `holder` (or by no one).

        Args:
            task_id: The task's id.
            holder: The instance running it.
            until: When the lease runs out.

        Returns:
            Whether it did: False when the task is gone, terminal, or held by another instance.
        """
        ...

    async def claim(self, task_id: str, holder: str, until: float) -> TaskRecord | None:
        """Hold a task to run it (once more): see `TaskRecord.claimed`.

        Args:
            task_id: The task's id.
            holder: The instance that claims it.
            until: When its lease runs out.

        Returns:
            The task as claimed, or None (gone, ended, held by another, no run left).
        """
        ...

    async def post_order(self, task_id: str, order: dict[str, Any]) -> bool:
        """Queue an order (JSON data) for the instance running the task.

        Returns:
            Whether it did: False when the task is gone or terminal.
        """
        ...

    async def take_orders(self, task_id: str) -> list[dict[str, Any]]:
        """Take the orders queued for the task, oldest first, removing them from the store.

        Empty for a task gone or terminal.
        """
        ...

    async def list(
        self, owner: str | None, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        """The owner's live tasks, oldest first, `limit` at most, and the cursor of the rest.

        Args:
            owner: Whose tasks (see `TaskRecord.owner`).
            cursor: Where the page starts: the cursor of a previous page (None: the first task).
            limit: The most tasks on the page.

        Raises:
            ValueError: For an unknown cursor (the runtime answers it as invalid params).
        """
        ...

    async def close(self) -> None:
        """Release what the store holds open (connections, files)."""
        ...


class MemoryTaskStore:
    """The default store: one process, nothing survives it."""

    def __init__(self, clock: Clock = time.time) -> None:
        self._tasks: dict[str, TaskRecord] = {}
        self._orders: dict[str, list[str]] = {}  # as JSON text, as a durable store keeps them
        self._clock = clock

    async def create(self, task: TaskRecord) -> None:
        """Store a new task (see `TaskStore.create`); `TaskStoreError` if its id exists."""
        if task.task_id in self._tasks:
            raise TaskStoreError(f"task {task.task_id!r} exists already")
        self._tasks[task.task_id] = task

    def _live(self, task_id: str) -> TaskRecord | None:
        now = self._clock()
        task = self._tasks.get(task_id)
        if task is None:
            return None
        if task.expired(now):
            del self._tasks[task_id]
            self._orders.pop(task_id, None)
            return None
        if task.lease_lost(now):
            task = self._tasks[task_id] = task.after_lost_lease(now)
            if task.terminal:
                self._orders.pop(task_id, None)
        return task

    async def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        """The task as it stands, or None: unknown, expired, or another owner's."""
        task = self._live(task_id)
        return task if task is not None and task.owner == owner else None

    async def save(self, task: TaskRecord) -> TaskRecord | None:
        """Store `task` unless its stored state is terminal; what is stored now."""
        stored = self._live(task.task_id)
        if stored is None or stored.terminal:
            return stored
        self._tasks[task.task_id] = task
        if task.terminal:
            self._orders.pop(task.task_id, None)
        return task

    async def renew(self, task_id: str, holder: str, until: float) -> bool:
        """Extend the lease of a task held by `holder` (or no one); False when it cannot.

        Args:
            task_id: The task's id.
            holder: The instance running it.
            until: When the lease runs out.
        """
        task = self._live(task_id)
        if task is None or task.terminal or task.lease_holder not in (None, holder):
            return False
        self._tasks[task_id] = dataclasses.replace(task, lease_holder=holder, lease_until=until)
        return True

    async def claim(self, task_id: str, holder: str, until: float) -> TaskRecord | None:
        """Hold the task to run it (see `TaskRecord.claimed`); the task as claimed, or None.

        Args:
            task_id: The task's id.
            holder: The instance that claims it.
            until: When its lease runs out.
        """
        task = self._live(task_id)
        claimed = None if task is None else task.claimed(holder, until, self._clock())
        if claimed is not None:
            self._tasks[task_id] = claimed
        return claimed

    async def post_order(self, task_id: str, order: dict[str, Any]) -> bool:
        """Queue an order for the instance running the task; False when it is gone or terminal."""
        task = self._live(task_id)
        if task is None or task.terminal:
            return False
        self._orders.setdefault(task_id, []).append(json.dumps(order))
        return True

    async def take_orders(self, task_id: str) -> list[dict[str, Any]]:
        """The task's queued orders, oldest first, removed from the store."""
        self._live(task_id)  # a task gone or ended drops its orders
        return [order_from_json(text, "order") for text in self._orders.pop(task_id, [])]

    async def sweep(self) -> int:
        """Drop every expired task (and its orders) now; how many were dropped."""
        before = len(self._tasks)
        for task_id in list(self._tasks):
            self._live(task_id)
        return before - len(self._tasks)

    async def list(
        self, owner: str | None, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        """The owner's live tasks, oldest first, at most `limit`, and the cursor of the rest.

        Args:
            owner: Whose tasks (see `TaskRecord.owner`).
            cursor: Where the page starts: the cursor of a previous page (None: the first task).
            limit: The most tasks on the page.

        Raises:
            ValueError: For an unknown cursor.
        """
        live = [t for i in list(self._tasks) if (t := self._live(i)) is not None]
        mine = sorted(
            (t for t in live if t.owner == owner), key=lambda t: (t.created_at, t.task_id)
        )
        return page_of(mine, cursor, limit)

    async def close(self) -> None:
        """Forget every task and order."""
        self._tasks.clear()
        self._orders.clear()
