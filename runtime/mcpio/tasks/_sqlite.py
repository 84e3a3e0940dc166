"""`SqliteTaskStore`: tasks in one SQLite file (standard library `sqlite3`).

A task's state and result survive a restart of the server, and several processes on one machine
can share the file.

The file is in WAL mode with `synchronous=FULL`: a committed task is on disk before `create`
returns. Every change runs in a `BEGIN IMMEDIATE` transaction (the file's write lock, with a busy
timeout for the other processes): it reads the stored record, applies the store's rules (see
`mcpio.tasks._store`) in Python, and writes, so that `save` and `renew` are compare-and-set across
processes. The blocking calls run in a worker thread, one at a time per store.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from mcpio.tasks._store import (
    Clock,
    TaskRecord,
    TaskStoreError,
    order_from_json,
    page_of,
    place_of,
    record_from_json,
    record_json,
)

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS mcpio_tasks (
    task_id TEXT PRIMARY KEY,
    owner TEXT,
    created_at REAL NOT NULL,
    expires_at REAL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mcpio_tasks_by_owner ON mcpio_tasks (owner, created_at, task_id);
CREATE INDEX IF NOT EXISTS mcpio_tasks_by_expiry ON mcpio_tasks (expires_at)
    WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS mcpio_task_orders (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mcpio_task_orders_by_task ON mcpio_task_orders (task_id, seq);
"""


class SqliteTaskStore:
    """Tasks in the SQLite file at `path` (created if missing).

    Args:
        path: The file: made readable by its owner only (0600) if missing; a symbolic link there
            is refused rather than followed.
        clock: The time now, in seconds since the epoch.
        busy_timeout: Seconds a change waits for the file's write lock, held by another
            process, before it fails (`TaskStoreError`).

    Raises:
        TaskStoreError: When the file cannot be opened, or is not a usable task store.
    """

    def __init__(
        self, path: str | os.PathLike[str], clock: Clock = time.time, busy_timeout: float = 10.0
    ) -> None:
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self._clock = clock
        _create_private(self.path)
        try:
            self._db = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise TaskStoreError(f"{self.path}: cannot open a task store ({exc})") from None
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)
        except sqlite3.Error as exc:
            self._db.close()
            raise TaskStoreError(f"{self.path}: not a usable task store ({exc})") from None
        self._limiter: anyio.CapacityLimiter | None = None

    async def _run(self, fn: Callable[[], T]) -> T:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
        try:
            return await anyio.to_thread.run_sync(fn, limiter=self._limiter)
        except sqlite3.OperationalError as exc:  # locked past the busy timeout, disk full, ...
            if "locked" in str(exc):
                why = f"locked by another connection for over {self.busy_timeout} s"
            else:
                why = str(exc)
            raise TaskStoreError(f"task store {self.path}: {why}") from None

    # The blocking side: called in the worker thread only.

    def _write(self, fn: Callable[[float], T]) -> T:
        """`fn(now)` in one write transaction."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            out = fn(self._clock())
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        return out

    def _read(self, task_id: str) -> TaskRecord | None:
        row = self._db.execute(
            "SELECT record FROM mcpio_tasks WHERE task_id = ?", (task_id,)
        ).fetchone()
        return None if row is None else self._load(task_id, row[0])

    def _load(self, task_id: str, text: object) -> TaskRecord:
        return record_from_json(text, task_id, f"task {task_id!r} in {self.path}")

    def _put(self, task: TaskRecord) -> None:
        self._db.execute(
            "UPDATE mcpio_tasks SET owner = ?, created_at = ?, expires_at = ?, record = ? "
            "WHERE task_id = ?",
            (task.owner, task.created_at, task.expires_at, record_json(task), task.task_id),
        )

    def _settled(self, task_id: str, now: float) -> TaskRecord | None:
        """The live record, the rules applied and stored (in a write transaction)."""
        task = self._read(task_id)
        if task is None:
            return None
        if task.expired(now):
            self._db.execute("DELETE FROM mcpio_tasks WHERE task_id = ?", (task_id,))
            self._drop_orders(task_id)
            return None
        if task.lease_lost(now):
            task = task.after_lost_lease(now)
            self._put(task)
            if task.terminal:
                self._drop_orders(task_id)
        return task

    def _drop_orders(self, task_id: str) -> None:
        self._db.execute("DELETE FROM mcpio_task_orders WHERE task_id = ?", (task_id,))

    def _live(self, task_id: str) -> TaskRecord | None:
        task = self._read(task_id)
        now = self._clock()
        if task is not None and (task.expired(now) or task.lease_lost(now)):
            return self._write(partial(self._settled, task_id))
        return task

    def _drop_expired(self, now: float) -> int:
        dropped = self._db.execute("DELETE FROM mcpio_tasks WHERE expires_at <= ?", (now,)).rowcount
        if dropped:
            self._db.execute(
                "DELETE FROM mcpio_task_orders WHERE task_id NOT IN (SELECT task_id FROM mcpio_tasks)"
            )
        return dropped

    async def sweep(self) -> int:
        """Drop every expired task (and its orders) now; how many were dropped."""
        return await self._run(partial(self._write, self._drop_expired))

    def _create(self, task: TaskRecord, now: float) -> None:
        self._drop_expired(now)
        try:
            self._db.execute(
                "INSERT INTO mcpio_tasks (task_id, owner, created_at, expires_at, record) "
                "VALUES (?, ?, ?, ?, ?)",
                (task.task_id, task.owner, task.created_at, task.expires_at, record_json(task)),
            )
        except sqlite3.IntegrityError:
            raise TaskStoreError(f"task {task.task_id!r} exists already in {self.path}") from None

    def _save(self, task: TaskRecord, now: float) -> TaskRecord | None:
        stored = self._settled(task.task_id, now)
        if stored is None or stored.terminal:
            return stored
        self._put(task)
        if task.terminal:
            self._drop_orders(task.task_id)
        return task

    def _renew(self, task_id: str, holder: str, until: float, now: float) -> bool:
        task = self._settled(task_id, now)
        if task is None or task.terminal or task.lease_holder not in (None, holder):
            return False
        self._put(dataclasses.replace(task, lease_holder=holder, lease_until=until))
        return True

    def _claim(self, task_id: str, holder: str, until: float, now: float) -> TaskRecord | None:
        task = self._settled(task_id, now)
        claimed = None if task is None else task.claimed(holder, until, now)
        if claimed is not None:
            self._put(claimed)
        return claimed

    def _post_order(self, task_id: str, body: str, now: float) -> bool:
        task = self._settled(task_id, now)
        if task is None or task.terminal:
            return False
        self._db.execute(
            "INSERT INTO mcpio_task_orders (task_id, body) VALUES (?, ?)", (task_id, body)
        )
        return True

    def _take_orders(self, task_id: str) -> list[object]:
        if not self._db.execute(  # the common case, no order: no write lock taken
            "SELECT 1 FROM mcpio_task_orders WHERE task_id = ? LIMIT 1", (task_id,)
        ).fetchone():
            return []
        return self._write(partial(self._take, task_id))

    def _take(self, task_id: str, now: float) -> list[object]:
        task = self._settled(task_id, now)
        rows = self._db.execute(
            "SELECT body FROM mcpio_task_orders WHERE task_id = ? ORDER BY seq", (task_id,)
        ).fetchall()
        self._drop_orders(task_id)
        return [] if task is None or task.terminal else [body for (body,) in rows]

    def _list(
        self, owner: str | None, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        created_at, task_id = place_of(cursor) if cursor is not None else (float("-inf"), "")
        now = self._clock()
        rows = self._db.execute(
            "SELECT task_id, record FROM mcpio_tasks WHERE owner IS ? "
            "AND (expires_at IS NULL OR expires_at > ?) AND (created_at, task_id) >= (?, ?) "
            "ORDER BY created_at, task_id LIMIT ?",
            (owner, now, created_at, task_id, limit + 1),
        ).fetchall()
        live: list[TaskRecord] = []
        for row_id, text in rows:
            task = self._load(row_id, text)
            if task.lease_lost(now):
                task = self._write(partial(self._settled, task.task_id))
            if task is not None:
                live.append(task)
        return page_of(live, None, limit)

    # The store.

    async def create(self, task: TaskRecord) -> None:
        """Store a new task (see `TaskStore.create`), on disk before it returns."""
        await self._run(partial(self._write, partial(self._create, task)))

    async def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        """The task as it stands, or None: unknown, expired, or another owner's."""
        task = await self._run(partial(self._live, task_id))
        return task if task is not None and task.owner == owner else None

    async def save(self, task: TaskRecord) -> TaskRecord | None:
        """Store `task` unless its stored state is terminal (compare-and-set).

        Returns:
            What is stored now (see `TaskStore.save`).
        """
        return await self._run(partial(self._write, partial(self._save, task)))

    async def renew(self, task_id: str, holder: str, until: float) -> bool:
        """Extend the lease of a task held by `holder` (or no one); False when it cannot.

        Args:
            task_id: The task's id.
            holder: The instance running it.
            until: When the lease runs out.
        """
        return await self._run(partial(self._write, partial(self._renew, task_id, holder, until)))

    async def claim(self, task_id: str, holder: str, until: float) -> TaskRecord | None:
        """Hold the task to run it (see `TaskRecord.claimed`); the task as claimed, or None.

        Args:
            task_id: The task's id.
            holder: The instance that claims it.
            until: When its lease runs out.
        """
        return await self._run(partial(self._write, partial(self._claim, task_id, holder, until)))

    async def post_order(self, task_id: str, order: dict[str, Any]) -> bool:
        """Queue an order for the instance running the task; False when it is gone or terminal."""
        body = json.dumps(order, separators=(",", ":"))
        return await self._run(partial(self._write, partial(self._post_order, task_id, body)))

    async def take_orders(self, task_id: str) -> list[dict[str, Any]]:
        """The task's queued orders, oldest first, removed from the store."""
        bodies = await self._run(partial(self._take_orders, task_id))  # taken: a bad one too
        where = f"an order of task {task_id!r} in {self.path}"
        return [order_from_json(body, where) for body in bodies]

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
        return await self._run(partial(self._list, owner, cursor, limit))

    async def close(self) -> None:
        """Close the database connection."""
        await self._run(self._db.close)


def _create_private(path: str) -> None:
    """The store's file, readable by its owner only (0600: results are plain JSON; SQLite gives
    its -wal and -shm files the same mode), made here if missing; a symbolic link at the path
    is refused rather than followed (`TaskStoreError`)."""
    if path in ("", ":memory:") or path.startswith("file:"):
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if os.path.islink(path):
            raise TaskStoreError(
                f"{path}: a symbolic link; give the task store's real path"
            ) from None
        raise TaskStoreError(f"{path}: cannot open a task store ({exc.strerror or exc})") from None
    os.close(fd)
