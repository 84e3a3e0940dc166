"""`RedisTaskStore`: tasks in Redis, shared by every instance behind a load balancer.

It needs the `redis` extra, as `mcpio._core.bus.RedisBus` does.

Keys, under a prefix (`mcpio:tasks` by default):

- `task:<id>`: the record as JSON (`mcpio.tasks._store.record_json`), expiring with its TTL (the
  record's own check is the rule; the key's expiry only frees the memory);
- `owner:<owner>`: a sorted set of the owner's task ids by creation time, for `list`;
- `expiry:<owner>`: a sorted set of the same ids by expiry time, from which `create` trims both
  sets.
- `orders:<id>`: a list of the orders queued for the task (JSON), expiring with it.

Both sets expire with the owner's last task to expire (and are kept for good once one of its
tasks has no TTL), so that an owner who stops creating and listing tasks leaves nothing behind.
`save` and `renew` are compare-and-set: read the record, apply the store's rules in Python, and
write only if the stored JSON is still what was read (a Lua script), else read again. A store
remembers the JSON it last read or wrote of a task and tries that first, sparing the read when
no other instance changed the task meanwhile.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from mcpio._core.bus import without_credentials
from mcpio._core.extras import needs
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

if TYPE_CHECKING:
    from redis.asyncio import Redis

# KEYS: task, owner set, expiry set. ARGV: record, PX ('' = none), created_at, expires_at ('' =
# none), task id, now. Stores a new task (0 when the id exists), makes the owner's sets last as
# long as it (PTTL of the owner set: -2 new, -1 kept for good) and trims them.
CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if ARGV[2] == '' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
local left = redis.call('PTTL', KEYS[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[5])
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5]) end
if ARGV[2] == '' then
  redis.call('PERSIST', KEYS[2])
  redis.call('PERSIST', KEYS[3])
elseif left == -2 or (left >= 0 and left < tonumber(ARGV[2])) then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[6], 'LIMIT', 0, 100)
if #gone > 0 then
  redis.call('ZREM', KEYS[2], unpack(gone))
  redis.call('ZREM', KEYS[3], unpack(gone))
end
return 1
"""

# KEYS: task, its orders. ARGV: the JSON read, the JSON to store ('' = delete), '1' when the
# task ends (its orders go). 1 when stored.
SWAP = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
end
if ARGV[3] == '1' then redis.call('DEL', KEYS[2]) end
return 1
"""

# KEYS: task, its orders. ARGV: the task's JSON read, the order, PX ('' = none). 1 when queued
# (the task unchanged since read).
POST = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
if ARGV[3] ~= '' then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1
"""

PAGE = 100  # owner-set entries read per round trip by `list`
SEEN = 10_000  # tasks whose last JSON a store remembers, to save a read before each change


class RedisTaskStore:
    """Tasks in the Redis at `url` (redis://host:port/db), shared by every store on it.

    Args:
        url: The Redis URL; its credentials stay with the Redis client (`where` shows it
            without them).
        prefix: The prefix of the store's keys.
        clock: The time now, in seconds since the epoch.
        timeout: Seconds to wait for the connection and for each answer of Redis.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "mcpio:tasks",
        clock: Clock = time.time,
        timeout: float = 5.0,
    ) -> None:
        with needs("redis", "RedisTaskStore"):
            from redis.asyncio import Redis

        self.url = without_credentials(url)  # for show: the client keeps the credentials
        self.prefix = prefix
        self._clock = clock
        self._redis: Redis = Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout
        )
        self._create = self._redis.register_script(CREATE)
        self._swap = self._redis.register_script(SWAP)
        self._post = self._redis.register_script(POST)
        self._seen: OrderedDict[str, bytes] = OrderedDict()

    def where(self) -> str:
        """The URL without credentials, for messages and logs."""
        return without_credentials(self.url)

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}:task:{task_id}"

    def _orders(self, task_id: str) -> str:
        return f"{self.prefix}:orders:{task_id}"

    def _sets(self, owner: str | None) -> tuple[str, str]:
        who = "-" if owner is None else f"={owner}"
        return f"{self.prefix}:owner:{who}", f"{self.prefix}:expiry:{who}"

    def _load(self, task_id: str, text: bytes) -> TaskRecord:
        return record_from_json(
            text, task_id, f"task {task_id!r} in Redis key {self._key(task_id)!r}"
        )

    async def _get_text(self, task_id: str) -> bytes | None:
        return await cast("Awaitable[bytes | None]", self._redis.get(self._key(task_id)))

    async def _swapped(self, task_id: str, read: bytes, new: str, ends: bool) -> bool:
        keys = [self._key(task_id), self._orders(task_id)]
        done = await cast(
            "Awaitable[int]", self._swap(keys=keys, args=[read, new, "1" if ends else ""])
        )
        return done == 1

    async def _settled(self, task_id: str) -> tuple[TaskRecord | None, bytes]:
        """The live record and its stored JSON, the rules applied and stored."""
        while True:
            text = await self._get_text(task_id)
            if text is None:
                return None, b""
            task, now = self._load(task_id, text), self._clock()
            if task.expired(now):
                if await self._swapped(task_id, text, "", True):
                    return None, b""
            elif task.lease_lost(now):
                after = task.after_lost_lease(now)
                new = record_json(after)
                if await self._swapped(task_id, text, new, after.terminal):
                    return after, new.encode()
            else:
                return task, text

    async def create(self, task: TaskRecord) -> None:
        """Store a new task (see `TaskStore.create`), with its expiry."""
        now = self._clock()
        expires = task.expires_at
        px = "" if expires is None else str(max(1, round((expires - now) * 1000)))
        owner_set, expiry_set = self._sets(task.owner)
        args: list[Any] = [
            record_json(task),
            px,
            repr(task.created_at),
            "" if expires is None else repr(expires),
            task.task_id,
            repr(now),
        ]
        created = await cast(
            "Awaitable[int]",
            self._create(keys=[self._key(task.task_id), owner_set, expiry_set], args=args),
        )
        if created != 1:
            raise TaskStoreError(f"task {task.task_id!r} exists already in {self.where()}")
        self._remember(task, args[0].encode())

    async def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        """The task as it stands, or None: unknown, expired, or another owner's."""
        task, text = await self._settled(task_id)
        if task is not None:
            self._remember(task, text)
        return task if task is not None and task.owner == owner else None

    async def save(self, task: TaskRecord) -> TaskRecord | None:
        """Store `task` unless its stored state is terminal (compare-and-set).

        Returns:
            What is stored now (see `TaskStore.save`).
        """
        stored, _ = await self._update(task.task_id, lambda now: None if now.terminal else task)
        return stored

    async def renew(self, task_id: str, holder: str, until: float) -> bool:
        """Extend the lease of a task held by `holder` (or no one); False when it cannot.

        Args:
            task_id: The task's id.
            holder: The instance running it.
            until: When the lease runs out.
        """

        def renewed(now: TaskRecord) -> TaskRecord | None:
            if now.terminal or now.lease_holder not in (None, holder):
                return None
            return dataclasses.replace(now, lease_holder=holder, lease_until=until)

        _, done = await self._update(task_id, renewed)
        return done

    async def claim(self, task_id: str, holder: str, until: float) -> TaskRecord | None:
        """Hold the task to run it (see `TaskRecord.claimed`); the task as claimed, or None.

        Args:
            task_id: The task's id.
            holder: The instance that claims it.
            until: When its lease runs out.
        """
        stored, done = await self._update(
            task_id, lambda now: now.claimed(holder, until, self._clock())
        )
        return stored if done else None

    async def _update(
        self, task_id: str, change: Callable[[TaskRecord], TaskRecord | None]
    ) -> tuple[TaskRecord | None, bool]:
        """`change(live record)` (None: leave it) stored by compare-and-set: the record stored
        now, and whether it is the change. The JSON this store last saw of the task is tried
        first: one round trip when no one else changed the task meanwhile."""
        seen = self._seen.pop(task_id, None)
        if seen is not None:
            current, now = self._load(task_id, seen), self._clock()
            new = None if current.expired(now) or current.lease_lost(now) else change(current)
            if new is not None:
                text = record_json(new)
                if await self._swapped(task_id, seen, text, new.terminal):
                    self._remember(new, text.encode())
                    return new, True
        while True:
            stored, seen = await self._settled(task_id)
            new = None if stored is None else change(stored)
            if stored is None or new is None:
                return stored, False
            text = record_json(new)
            if await self._swapped(task_id, seen, text, new.terminal):
                self._remember(new, text.encode())
                return new, True

    async def post_order(self, task_id: str, order: dict[str, Any]) -> bool:
        """Queue an order for the instance running the task; False when it is gone or terminal."""
        body = json.dumps(order, separators=(",", ":"))
        keys = [self._key(task_id), self._orders(task_id)]
        while True:
            task, text = await self._settled(task_id)
            if task is None or task.terminal:
                return False
            expires = task.expires_at
            px = "" if expires is None else str(max(1, round((expires - self._clock()) * 1000)))
            if await cast("Awaitable[int]", self._post(keys=keys, args=[text, body, px])) == 1:
                return True

    async def take_orders(self, task_id: str) -> list[dict[str, Any]]:
        """The task's queued orders, oldest first, removed from the store."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.lrange(self._orders(task_id), 0, -1)
            pipe.delete(self._orders(task_id))
            texts: list[bytes] = (await pipe.execute())[0]
        if not texts:
            return []
        task, _ = await self._settled(task_id)  # a task gone or ended has none
        if task is None or task.terminal:
            return []
        where = f"an order of task {task_id!r} in Redis key {self._orders(task_id)!r}"
        return [order_from_json(text, where) for text in texts]

    def _remember(self, task: TaskRecord, text: bytes) -> None:
        """The JSON last seen of a task that may change again (a terminal one cannot)."""
        if task.terminal:
            self._seen.pop(task.task_id, None)
            return
        self._seen[task.task_id] = text
        self._seen.move_to_end(task.task_id)
        if len(self._seen) > SEEN:
            self._seen.popitem(last=False)

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
        place = place_of(cursor) if cursor is not None else None
        owner_set, expiry_set = self._sets(owner)
        low = None if place is None else place[0]
        skip = 0  # entries scored `low` already read (ties on created_at)
        live: list[TaskRecord] = []
        while len(live) <= limit:
            entries = await cast(
                "Awaitable[list[tuple[bytes, float]]]",
                self._redis.zrangebyscore(
                    owner_set,
                    "-inf" if low is None else repr(low),
                    "+inf",
                    start=skip,
                    num=PAGE,
                    withscores=True,
                ),
            )
            ids = [
                i
                for i, score in ((m.decode(), s) for m, s in entries)
                if place is None or (score, i) >= place
            ]
            texts = await cast(
                "Awaitable[list[bytes | None]]",
                self._redis.mget([self._key(i) for i in ids]) if ids else _nothing(),
            )
            gone = [i for i, text in zip(ids, texts, strict=True) if text is None]
            if gone:  # expired keys: their ids leave the owner's sets
                await cast("Awaitable[int]", self._redis.zrem(owner_set, *gone))
                await cast("Awaitable[int]", self._redis.zrem(expiry_set, *gone))
            now = self._clock()
            for task_id, text in zip(ids, texts, strict=True):
                task = None if text is None else self._load(task_id, text)
                if task is not None and (task.expired(now) or task.lease_lost(now)):
                    task, _ = await self._settled(task_id)
                if task is not None and task.owner == owner:
                    live.append(task)
            if len(entries) < PAGE:
                break
            # The next batch starts at the last score read, past the entries still there at it:
            # an id removed meanwhile shifts nothing but a run of equal scores.
            last = entries[-1][1]
            ties = sum(1 for m, score in entries if score == last and m.decode() not in gone)
            skip = skip + ties if last == low else ties
            low = last
        return page_of(live, None, limit)

    async def close(self) -> None:
        """Close the Redis connection."""
        await self._redis.aclose()


async def _nothing() -> list[bytes | None]:
    return []
