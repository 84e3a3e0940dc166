"""The task queue: tasks the HTTP instances accepted, waiting for workers to run them.

The workers are `mcpio.cli._worker`; the queue is a Redis Stream read by one consumer group (the
`redis` extra): the task store already decides who runs a task, what is left to a queue is
delivery (why not a task-queue library: docs/servers/tasks.md, "Where tasks run").

- `put` adds a job unless the stream holds `max_queued` entries already, or its requestor's
  (`Job.requestor`: whom the task's bounds count, `mcpio.tasks._quota`) `max_queued_per_requestor`
  (one Lua script: the bounds are exact, whatever the instances putting jobs); the entry stays
  until its task ends, so the bounds count tasks accepted and not finished (waiting or running).
  Each entry names its requestor (its `who` field) and the hash `<prefix>:queued` counts the
  entries of each requestor, kept by the scripts that add and remove entries, so that one
  requestor never holds more than its share of the queue. A refused job is the only one lost:
  none accepted is.
- A worker `read`s new entries, `reclaim`s those whose worker went silent (pending, idle past
  the lease), `touch`es the entries of the tasks it runs at each renewal of their lease (so that
  they never look idle while it lives), and, once a task ended, marks its entry `done` (acked
  and deleted); a task handed back at shutdown is `requeue`d at once (acked, deleted and added
  anew in one script).
- Delivery is at least once: the store's `claim` decides who runs a task, so an entry delivered
  twice runs once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from mcpio._core.bus import without_credentials
from mcpio._core.extras import needs

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger("mcpio")

# KEYS: the stream, the count of entries by requestor. ARGV: the job, the bound, the requestor,
# its share. The entry's id; 0 when the stream is full, 1 when the requestor has its share.
PUT = """
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
if tonumber(redis.call('HGET', KEYS[2], ARGV[3]) or '0') >= tonumber(ARGV[4]) then return 1 end
redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
return redis.call('XADD', KEYS[1], '*', 'job', ARGV[1], 'who', ARGV[3])
"""

# The requestor an entry counts for (false: none, an entry put before entries named theirs).
WHO = """
local function who(stream, id)
  local found = redis.call('XRANGE', stream, id, id)
  if #found == 0 then return false end
  local fields = found[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'who' then return fields[i + 1] end
  end
  return false
end
"""

# KEYS: the stream, the counts. ARGV: the group, the entry's id. Acked and deleted; its requestor
# counts one less (once: an entry already deleted counts for no one).
DONE = WHO + """
local was = who(KEYS[1], ARGV[2])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if was and redis.call('HINCRBY', KEYS[2], was, -1) <= 0 then redis.call('HDEL', KEYS[2], was) end
return 1
"""

# KEYS: the stream, the counts. ARGV: the group, the entry's id, the job, the requestor. The new
# entry's id; it counts for the requestor (in place of the old one, when that one did).
REQUEUE = WHO + """
local was = who(KEYS[1], ARGV[2])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if was then
  if redis.call('HINCRBY', KEYS[2], was, -1) <= 0 then redis.call('HDEL', KEYS[2], was) end
end
redis.call('HINCRBY', KEYS[2], ARGV[4], 1)
return redis.call('XADD', KEYS[1], '*', 'job', ARGV[3], 'who', ARGV[4])
"""

Queued = Literal["queued", "full", "share"]
"""What `put` did: queued the job, or refused it: the queue is full, or holds the job's
requestor's share."""


@dataclass(frozen=True)
class Job:
    """What a worker needs to run a queued `tools/call` task (JSON data only).

    Args:
        task_id: The task it runs.
        owner: The principal that created it (the subject).
        tool: The tool called.
        arguments: The call's arguments.
        revision: The revision of the request that created it.
        capabilities: The client's capabilities.
        progress_token: The progress token of the request that created it, if any.
        requestor: Whom its bounds count (`mcpio.tasks._quota`).
    """

    task_id: str
    owner: str | None  # the principal that created it (the subject)
    tool: str
    arguments: dict[str, Any]
    revision: str  # of the request that created it
    capabilities: dict[str, Any] = field(default_factory=dict[str, Any])  # the client's
    progress_token: str | int | None = None
    requestor: str | None = None  # whom its bounds count (`mcpio.tasks._quota`)

    @property
    def who(self) -> str:
        """The requestor as the queue counts it (\"-\" for none)."""
        return "-" if self.requestor is None else f"={self.requestor}"

    def to_json(self) -> str:
        """The job as the JSON text the queue holds."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Job:
        """Read a job written by `to_json`.

        Raises:
            ValueError: For anything else.
        """
        data = json.loads(text)
        if type(data) is not dict:
            raise ValueError("not a job (a JSON object)")
        try:
            job = cls(**data)
        except TypeError as exc:
            raise ValueError(f"not a job ({exc})") from None
        if type(job.task_id) is not str or type(job.tool) is not str:
            raise ValueError("not a job (task_id, tool)")
        if job.requestor is not None and type(job.requestor) is not str:
            raise ValueError("not a job (requestor)")
        return job


@dataclass(frozen=True)
class Entry:
    """A job as delivered: its stream entry's id (for `touch`, `done`, `requeue`)."""

    id: str
    job: Job


class TaskQueue(Protocol):
    """What the accepting side needs of a queue."""

    max_queued: int
    max_queued_per_requestor: int

    async def put(self, job: Job) -> Queued:
        """Queue a job, unless the queue is full or holds the share of its requestor."""
        ...


class RedisTaskQueue:
    """A task queue in Redis: the stream `<prefix>:queue`, read by the consumer group `workers`.

    It holds at most `max_queued` entries, `max_queued_per_requestor` of one requestor.

    Args:
        url: The Redis URL (redis://host:port/db); its credentials stay with the Redis client
            (`where` shows it without them).
        prefix: The prefix of the queue's keys (`<prefix>:queue`, `<prefix>:queued`).
        max_queued: The most entries in the stream (tasks accepted and not finished).
        max_queued_per_requestor: The most entries of one requestor.
        timeout: Seconds to wait for the connection; an answer may take 5 more (a read blocks
            for up to a second).
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "mcpio:tasks",
        max_queued: int = 10_000,
        max_queued_per_requestor: int = 1_000,
        timeout: float = 5.0,
    ) -> None:
        with needs("redis", "RedisTaskQueue"):
            from redis.asyncio import Redis

        self.url = without_credentials(url)  # for show: the client keeps the credentials
        self.key = f"{prefix}:queue"
        self.counts = f"{prefix}:queued"  # entries by requestor
        self.group = "workers"
        self.max_queued = max_queued
        self.max_queued_per_requestor = max_queued_per_requestor
        # Reads block for up to a second: the socket waits longer than that.
        self._redis: Redis = Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout + 5
        )
        self._put = self._redis.register_script(PUT)
        self._requeue = self._redis.register_script(REQUEUE)
        self._done = self._redis.register_script(DONE)
        self._grouped = False
        self._cursor = "0-0"  # where the next `reclaim` scan starts

    def where(self) -> str:
        """The queue's Redis URL without credentials (for log lines)."""
        return without_credentials(self.url)

    async def _group(self) -> None:
        if self._grouped:
            return
        from redis.exceptions import ResponseError

        try:
            await self._redis.xgroup_create(self.key, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._grouped = True

    async def put(self, job: Job) -> Queued:
        """Queue a job, unless the queue is full or holds its requestor's share.

        Refused (nothing queued) when the queue already holds `max_queued` entries (\"full\"),
        or `max_queued_per_requestor` of the job's requestor (\"share\").

        Returns:
            What it did: \"queued\", \"full\" or \"share\".
        """
        await self._group()
        args = [job.to_json(), self.max_queued, job.who, self.max_queued_per_requestor]
        added = await cast(
            "Awaitable[bytes | int]", self._put(keys=[self.key, self.counts], args=args)
        )
        if added == 0:
            return "full"
        return "share" if added == 1 else "queued"

    async def length(self) -> int:
        """Entries in the stream: tasks accepted and not finished."""
        return await cast("Awaitable[int]", self._redis.xlen(self.key))

    async def queued_for(self, requestor: str | None) -> int:
        """Entries of `requestor` in the stream."""
        who = Job("", None, "", {}, "", requestor=requestor).who
        count = await cast("Awaitable[bytes | None]", self._redis.hget(self.counts, who))
        return 0 if count is None else int(count)

    async def read(self, consumer: str, count: int, block_ms: int) -> list[Entry]:
        """Up to `count` new entries for `consumer`, waiting up to `block_ms` for the first.

        Args:
            consumer: The worker reading (its name in the consumer group).
            count: The most entries read.
            block_ms: How long to wait for the first entry (milliseconds).
        """
        await self._group()
        answer = await self._redis.xreadgroup(
            self.group, consumer, {self.key: ">"}, count=count, block=block_ms
        )
        return [e for _, entries in answer or [] for e in await self._entries(entries)]

    async def reclaim(self, consumer: str, idle_ms: int, count: int) -> list[Entry]:
        """Take up to `count` entries whose worker went silent, for `consumer`.

        The entries pending for over `idle_ms` become `consumer`'s.

        Args:
            consumer: The worker taking them (its name in the consumer group).
            idle_ms: How long an entry has been pending, at least (milliseconds).
            count: The most entries taken.
        """
        await self._group()
        answer = await self._redis.xautoclaim(
            self.key, self.group, consumer, idle_ms, start_id=self._cursor, count=count
        )
        cursor, entries = answer[0], answer[1]
        self._cursor = cursor.decode() if isinstance(cursor, bytes) else str(cursor)
        return await self._entries(entries)

    async def touch(self, consumer: str, entry_id: str) -> None:
        """Reset the idle time of an entry `consumer` works on."""
        await self._redis.xclaim(self.key, self.group, consumer, 0, [entry_id], justid=True)

    async def done(self, entry_id: str) -> None:
        """Acknowledge and delete a finished entry (its requestor's count with it)."""
        await cast(
            "Awaitable[int]",
            self._done(keys=[self.key, self.counts], args=[self.group, entry_id]),
        )

    async def requeue(self, entry: Entry) -> None:
        """Give an entry's job back to the queue at once (a new entry, to any worker)."""
        job = entry.job
        await cast(
            "Awaitable[bytes]",
            self._requeue(
                keys=[self.key, self.counts], args=[self.group, entry.id, job.to_json(), job.who]
            ),
        )

    async def _entries(self, raw: Any) -> list[Entry]:
        """The entries read; one that holds no job is logged and removed."""
        found: list[Entry] = []
        for entry_id, fields in raw or []:
            if not fields:  # deleted meanwhile
                continue
            ident = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
            try:
                found.append(Entry(ident, Job.from_json(fields.get(b"job", b""))))
            except ValueError as exc:
                log.error("task queue %s: entry %s dropped: %s", self.key, ident, exc)
                await self.done(ident)
        return found

    async def close(self) -> None:
        """Close the Redis connection."""
        await self._redis.aclose()
