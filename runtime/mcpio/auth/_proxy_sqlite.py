"""`SqliteOAuthStore`: the OAuth proxy's store in one SQLite file (standard library `sqlite3`),
kept across restarts and shared by the processes of one machine.

The file is private (0600, as the task store's) and in WAL mode; `take` reads and deletes in
one `BEGIN IMMEDIATE` transaction, so one process gets a code, and `count` reads and writes a
counter in one. The blocking calls run in a worker thread, one at a time per store.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from mcpio.auth._proxy_store import Clock, OAuthStore, loads

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS mcpio_oauth (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires_at REAL
);
CREATE INDEX IF NOT EXISTS mcpio_oauth_by_expiry ON mcpio_oauth (expires_at)
    WHERE expires_at IS NOT NULL;
"""


class SqliteOAuthStore(OAuthStore):
    """The store in the SQLite file at `path` (created, private, if missing).

    Args:
        path: The file.
        clock: The time now, in seconds since the epoch.
        busy_timeout: Seconds a change waits for the write lock another process holds.
    """

    def __init__(
        self, path: str | os.PathLike[str], clock: Clock = time.time, busy_timeout: float = 10.0
    ) -> None:
        self.path = os.fspath(path)
        self._clock = clock
        _create_private(self.path)
        self._db = sqlite3.connect(
            self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        self._limiter: anyio.CapacityLimiter | None = None

    async def _run(self, fn: Callable[[], T]) -> T:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
        return await anyio.to_thread.run_sync(fn, limiter=self._limiter)

    def _live(self, key: str, now: float) -> str | None:
        row = self._db.execute(
            "SELECT value FROM mcpio_oauth WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)",
            (key, now),
        ).fetchone()
        return None if row is None else row[0]

    def _put(self, key: str, text: str, ttl: float | None) -> None:
        now = self._clock()
        with self._db:
            self._db.execute(
                "DELETE FROM mcpio_oauth WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,)
            )
            self._db.execute(
                "INSERT OR REPLACE INTO mcpio_oauth (key, value, expires_at) VALUES (?, ?, ?)",
                (key, text, None if ttl is None else now + ttl),
            )

    def _take(self, key: str) -> str | None:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            text = self._live(key, self._clock())
            self._db.execute("DELETE FROM mcpio_oauth WHERE key = ?", (key,))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return text

    def _count(self, key: str, ttl: float) -> int:
        now = self._clock()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            row = self._db.execute(
                "SELECT value, expires_at FROM mcpio_oauth WHERE key = ? AND expires_at > ?",
                (key, now),
            ).fetchone()
            value, until = (int(row[0]) + 1, row[1]) if row is not None else (1, now + ttl)
            self._db.execute(
                "INSERT OR REPLACE INTO mcpio_oauth (key, value, expires_at) VALUES (?, ?, ?)",
                (key, str(value), until),
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return value

    async def put(self, key: str, value: dict[str, Any], ttl: float | None) -> None:
        text = json.dumps(value)
        await self._run(lambda: self._put(key, text, ttl))

    async def get(self, key: str) -> dict[str, Any] | None:
        text = await self._run(lambda: self._live(key, self._clock()))
        return None if text is None else loads(text)

    async def take(self, key: str) -> dict[str, Any] | None:
        text = await self._run(lambda: self._take(key))
        return None if text is None else loads(text)

    async def delete(self, key: str) -> None:
        await self._run(lambda: self._db.execute("DELETE FROM mcpio_oauth WHERE key = ?", (key,)))

    async def count(self, key: str, ttl: float) -> int:
        return await self._run(lambda: self._count(key, ttl))

    async def close(self) -> None:
        await self._run(self._db.close)


def _create_private(path: str) -> None:
    """The file, readable by its owner only (0600: it holds registrations and grants), made
    here if missing; a symbolic link at the path is refused rather than followed (OSError)."""
    if path in ("", ":memory:") or path.startswith("file:"):
        return
    os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))
