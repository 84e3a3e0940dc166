"""Admission control for the HTTP server: what one client, or all of them together, may hold at
once. `Slots` counts things held for a while (legacy sessions, streams, requests in flight),
in all and per client; `ByteBudget` bounds the request bodies held parsed at once, since a JSON
body costs many times its size in memory while it is parsed and served.

A client is whom a request speaks for: the principal's subject with authorization, else the
peer's address, an IPv6 peer's /64 prefix (behind a proxy, let the ASGI server read it from the forwarding headers, as
uvicorn does for `--forwarded-allow-ips`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import anyio


class Refused(Exception):
    """Admission refused: `status` (429 for one client past its share, 503 when all are full,
    408/503 when a wait ran out) and why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Slots:
    """At most `total` held at once, and at most `per_client` by one client."""

    def __init__(self, what: str, total: int, per_client: int | None = None) -> None:
        self.what = what
        self.total = total
        self.per_client = per_client
        self.count = 0
        self.held: dict[str, int] = {}  # by client, only those holding any

    def take(self, client: str) -> None:
        """Take a slot for `client`; `Refused` 503 when all are taken, 429 when the client holds
        its share."""
        if self.count >= self.total:
            raise Refused(503, f"too many {self.what}; try again later")
        held = self.held.get(client, 0)
        if self.per_client is not None and held >= self.per_client:
            raise Refused(429, f"too many {self.what} for one client ({self.per_client})")
        self.count += 1
        self.held[client] = held + 1

    def give(self, client: str) -> None:
        """Give back a slot `client` held."""
        self.count -= 1
        left = self.held[client] - 1
        if left > 0:
            self.held[client] = left
        else:
            del self.held[client]

    @contextmanager
    def holding(self, client: str) -> Iterator[None]:
        """Hold a slot for `client` while the block runs."""
        self.take(client)
        try:
            yield
        finally:
            self.give(client)


class ByteBudget:
    """Bytes of request bodies held at once. A body waits (up to `timeout`) until the budget has
    room for it; a body larger than the whole budget waits until the budget is empty."""

    def __init__(self, limit: int, timeout: float) -> None:
        self.limit = limit
        self.timeout = timeout
        self.used = 0
        self._freed: anyio.Event | None = None

    def reserve(self, size: int) -> int | None:
        """`take` when no wait is needed (what to `give` back), else None."""
        size = min(size, self.limit)
        if self.used and self.used + size > self.limit:
            return None
        self.used += size
        return size

    async def take(self, size: int) -> int:
        """Reserve `size` bytes (or the whole budget); returns what to `give` back."""
        size = min(size, self.limit)
        if self.used and self.used + size > self.limit:  # else no wait, and no timeout to set
            try:
                with anyio.fail_after(self.timeout):
                    while self.used and self.used + size > self.limit:
                        if self._freed is None:
                            self._freed = anyio.Event()
                        await self._freed.wait()
            except TimeoutError:
                raise Refused(
                    503, "too many request bodies being served; try again later"
                ) from None
        self.used += size
        return size

    def give(self, size: int) -> None:
        """Give back `size` bytes, waking whoever waits for room."""
        self.used -= size
        if self._freed is not None:
            self._freed.set()
            self._freed = None
