"""`RedisOAuthStore`: the OAuth proxy's store in Redis, shared by every instance behind a load
balancer (the `redis` extra, as `mcpio.tasks._redis.RedisTaskStore`).

Each value is a string key `<prefix>:<key>` with Redis's own expiry; `take` is `GETDEL`, so one
instance gets a code; `count` is `SET NX` (the expiry) and `INCR` in one transaction.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcpio._core.bus import without_credentials
from mcpio._core.extras import needs
from mcpio.auth._proxy_store import OAuthStore, loads

if TYPE_CHECKING:
    from redis.asyncio import Redis


class RedisOAuthStore(OAuthStore):
    """The store in the Redis at `url` (redis://host:port/db).

    Args:
        url: The Redis URL; its credentials stay with the Redis client (`url` shows it
            without them).
        prefix: The prefix of the store's keys.
        timeout: Seconds to wait for the connection and for each answer of Redis.
    """

    def __init__(self, url: str, *, prefix: str = "mcpio:oauth", timeout: float = 5.0) -> None:
        with needs("redis", "RedisOAuthStore"):
            from redis.asyncio import Redis

        self.url = without_credentials(url)
        self.prefix = prefix
        self._redis: Redis = Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout
        )

    def _key(self, key: str) -> str:
        return f"{self.prefix}:{key}"

    async def put(self, key: str, value: dict[str, Any], ttl: float | None) -> None:
        px = None if ttl is None else max(1, int(ttl * 1000))
        await self._redis.set(self._key(key), json.dumps(value), px=px)

    async def get(self, key: str) -> dict[str, Any] | None:
        text = await self._redis.get(self._key(key))
        return None if text is None else loads(text)

    async def take(self, key: str) -> dict[str, Any] | None:
        text = await self._redis.getdel(self._key(key))
        return None if text is None else loads(text)

    async def delete(self, key: str) -> None:
        await self._redis.delete(self._key(key))

    async def count(self, key: str, ttl: float) -> int:
        async with self._redis.pipeline(transaction=True) as pipe:  # MULTI ... EXEC
            pipe.set(self._key(key), 0, px=max(1, int(ttl * 1000)), nx=True)
            pipe.incr(self._key(key))
            _, value = await pipe.execute()
        return int(value)

    async def close(self) -> None:
        await self._redis.aclose()
