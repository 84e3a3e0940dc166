"""What each requestor holds of an instance's tasks, so that no client takes the room of others.

The *owner* of a task (`mcpio.tasks._owner`) decides who may reach it; the *requestor* is whom its
bounds count: `Context.client_key` ("principal:<subject>" with authorization, else the peer's
address, an IPv6 peer's /64), so that every legacy session and every anonymous 2026-07-28 request
from one address spend one budget, and distinct addresses and principals spend their own. Off HTTP
(no client key) a task counts for its owner.

A task is held from its creation until it expires (its TTL): while it runs (or waits in the queue)
and once ended, its record kept in the store. A requestor may hold `max_tasks` tasks and
`max_bytes` of ended records (their size as stored, JSON); all requestors together `max_bytes_all`
(the per-requestor share well below it keeps room for the others). A new task past a bound is
refused with -32005; a task already accepted is never refused its result: its record is counted
when it ends, even over the share, and the next new task waits until enough of them expire.
Counts are per instance, kept in memory: with several instances behind a balancer, a requestor
gets a share of each.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

from mcp_wire_runtime.errors import SERVER_BUSY, ProtocolError


@dataclass
class _Held:
    requestor: str | None
    expires_at: float | None
    running: bool = True
    size: int = 0  # bytes of its record as stored, once ended


class TaskLedger:
    """The tasks each requestor holds here: how many (running or kept) and the bytes of the
    ended ones, until each expires."""

    def __init__(self, max_tasks: int, max_bytes: int, max_bytes_all: int) -> None:
        self.max_tasks = max_tasks
        self.max_bytes = max_bytes
        self.max_bytes_all = max_bytes_all
        self._held: dict[str, _Held] = {}
        self._mine: dict[str | None, dict[str, _Held]] = {}  # by requestor, oldest first
        self._bytes: dict[str | None, int] = {}
        self.bytes_all = 0
        self._expiry: list[tuple[float, str]] = []  # (expires_at, task id): a heap

    def held(self, requestor: str | None) -> tuple[int, int]:
        """How many tasks `requestor` holds, and the bytes of its ended ones."""
        return len(self._mine.get(requestor, {})), self._bytes.get(requestor, 0)

    def check(self, requestor: str | None, now: float) -> None:
        """-32005 when `requestor` (or everyone together) holds its share already."""
        self._prune(now)
        count, size = self.held(requestor)
        if count >= self.max_tasks:
            raise ProtocolError(
                SERVER_BUSY,
                f"too many tasks for this requestor ({self.max_tasks}): running, or ended and "
                "not yet expired; retry when one has expired",
                {"retryAfterSeconds": self._retry_after(requestor, now)},
            )
        if size >= self.max_bytes:
            raise ProtocolError(
                SERVER_BUSY,
                f"too many task results kept for this requestor ({size} bytes; the limit is "
                f"{self.max_bytes}): retry when one has expired",
                {"retryAfterSeconds": self._retry_after(requestor, now)},
            )
        if self.bytes_all >= self.max_bytes_all:
            raise ProtocolError(
                SERVER_BUSY,
                f"too many task results kept ({self.bytes_all} bytes; the limit is "
                f"{self.max_bytes_all}): retry later",
                {"retryAfterSeconds": 1},
            )

    def hold(self, task_id: str, requestor: str | None, expires_at: float | None) -> None:
        """Count a new task for `requestor` (running until `ended`) until it expires."""
        held = _Held(requestor, expires_at)
        self._held[task_id] = held
        self._mine.setdefault(requestor, {})[task_id] = held
        if expires_at is not None:
            heapq.heappush(self._expiry, (expires_at, task_id))

    def running(self, task_id: str) -> bool:
        """Whether `task_id` is a task held here that has not ended."""
        held = self._held.get(task_id)
        return held is not None and held.running

    def forget(self, task_id: str) -> None:
        """Stop counting a task (one that was not stored after all)."""
        if task_id in self._held:
            self._drop(task_id)

    def ended(self, task_id: str, size: int, now: float) -> None:
        """A task held here ended (or left this instance): its record of `size` bytes is kept
        until it expires."""
        held = self._held.get(task_id)
        if held is None or not held.running:
            return
        held.running = False
        if held.expires_at is not None and held.expires_at <= now:
            self._drop(task_id)
            return
        held.size = size
        self._bytes[held.requestor] = self._bytes.get(held.requestor, 0) + size
        self.bytes_all += size

    def _prune(self, now: float) -> None:
        """Forget the ended tasks that expired (a running one is forgotten when it ends)."""
        while self._expiry and self._expiry[0][0] <= now:
            _, task_id = heapq.heappop(self._expiry)
            held = self._held.get(task_id)
            if held is not None and not held.running:
                self._drop(task_id)

    def _drop(self, task_id: str) -> None:
        held = self._held.pop(task_id)
        mine = self._mine[held.requestor]
        del mine[task_id]
        if not mine:
            del self._mine[held.requestor]
        if held.size:
            left = self._bytes[held.requestor] - held.size
            if left:
                self._bytes[held.requestor] = left
            else:
                del self._bytes[held.requestor]
            self.bytes_all -= held.size

    def _retry_after(self, requestor: str | None, now: float) -> int:
        """Seconds until the first of `requestor`'s ended tasks expires (1 when none will)."""
        ends = [
            h.expires_at
            for h in self._mine.get(requestor, {}).values()
            if not h.running and h.expires_at is not None
        ]
        return max(1, math.ceil(min(ends) - now)) if ends else 1
