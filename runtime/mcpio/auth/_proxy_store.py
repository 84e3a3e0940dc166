"""Where the OAuth proxy (`mcpio.auth._proxy`) keeps what it must remember: client
registrations, pending authorizations, codes and tokens, each a JSON object under a key, each
until its time to live ends.

`take` reads and deletes in one step, so that a code or a state is used once even when several
instances share the store; `count` adds one to a counter in one step (the registration limit). Three backends, as for tasks (`mcpio.tasks`): `MemoryOAuthStore`
(one process), `SqliteOAuthStore` (a file, `mcpio.auth._proxy_sqlite`) and `RedisOAuthStore`
(shared by instances, `mcpio.auth._proxy_redis`); `open_oauth_store`
(`mcpio.auth._proxy_stores`) picks one from a string.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Protocol, cast

Clock = Callable[[], float]


class OAuthStore(Protocol):
    """JSON objects by key, each until its time to live ends."""

    async def put(self, key: str, value: dict[str, Any], ttl: float | None) -> None:
        """Store `value` under `key` for `ttl` seconds, replacing any.

        Args:
            key: The key (`code:<sha256>`, `client:<id>`, ...).
            value: A JSON object.
            ttl: Seconds it is kept (None: until deleted).
        """
        ...

    async def get(self, key: str) -> dict[str, Any] | None:
        """The value under `key`, None if there is none or it has expired."""
        ...

    async def take(self, key: str) -> dict[str, Any] | None:
        """The value under `key`, deleted in the same step (one caller gets it)."""
        ...

    async def delete(self, key: str) -> None:
        """Forget `key` (nothing if there is no such key)."""
        ...

    async def count(self, key: str, ttl: float) -> int:
        """Add one to the counter under `key`; its new value.

        In one step: no increment is lost when several instances count at once. A new counter
        starts at 1 and ends `ttl` seconds later. A counter's key is read with `count` alone.

        Args:
            key: The counter's key (`register:<address>:<window>`).
            ttl: Seconds a new counter is kept.
        """
        ...

    async def close(self) -> None:
        """Release the store's connections."""
        ...


def loads(text: str | bytes) -> dict[str, Any] | None:
    """A stored value back: None unless it is a JSON object."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return cast(dict[str, Any], value) if type(value) is dict else None


class MemoryOAuthStore(OAuthStore):
    """The store in this process's memory: lost on restart, not shared between instances.

    Args:
        clock: The time now, in seconds since the epoch.
    """

    def __init__(self, clock: Clock = time.time) -> None:
        self._clock = clock
        self._items: dict[str, tuple[str, float | None]] = {}

    def _sweep(self, now: float) -> None:
        gone = [k for k, (_, until) in self._items.items() if until is not None and until <= now]
        for key in gone:
            del self._items[key]

    async def put(self, key: str, value: dict[str, Any], ttl: float | None) -> None:
        now = self._clock()
        if len(self._items) % 64 == 0:  # expired entries go now and then, not on every write
            self._sweep(now)
        self._items[key] = (json.dumps(value), None if ttl is None else now + ttl)

    async def get(self, key: str) -> dict[str, Any] | None:
        item = self._items.get(key)
        if item is None:
            return None
        text, until = item
        if until is not None and until <= self._clock():
            del self._items[key]
            return None
        return loads(text)

    async def take(self, key: str) -> dict[str, Any] | None:
        value = await self.get(key)
        self._items.pop(key, None)
        return value

    async def delete(self, key: str) -> None:
        self._items.pop(key, None)

    async def count(self, key: str, ttl: float) -> int:
        now = self._clock()
        text, until = self._items.get(key, ("0", None))
        if until is None or until <= now:
            text, until = "0", now + ttl
        value = int(text) + 1
        self._items[key] = (str(value), until)
        return value

    async def close(self) -> None:
        self._items.clear()
