"""`RateLimitMiddleware`: at most `requests` per `seconds` for each principal (a sliding window),
refused beyond with a JSON-RPC error that says when to retry."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from mcpio.middleware.base import Call, CallNext, Middleware
from mcpio.wire.errors import ProtocolError

#: Server-defined JSON-RPC error code (the implementation-defined range) for a refused request.
RATE_LIMITED = -32029


def by_principal(call: Call) -> str:
    """The access token's subject; one shared key for requests without authorization."""
    principal = call.ctx.principal
    return principal.subject if principal is not None else ""


class RateLimitMiddleware(Middleware):
    """Refuses a principal's request once it made `requests` in the last `seconds` (-32029,
    `data.retryAfterSeconds`). `key`: whose budget a request spends (default: its principal's;
    without authorization every client shares one, so key by something of yours there)."""

    def __init__(
        self,
        requests: int,
        seconds: float,
        *,
        key: Callable[[Call], str] = by_principal,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if requests < 1 or seconds <= 0:
            raise ValueError("a rate limit needs requests >= 1 and seconds > 0")
        self.requests, self.seconds, self.key, self.clock = requests, seconds, key, clock
        self._seen: dict[str, deque[float]] = {}

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Refuse the request with -32029 (`retryAfterSeconds`) when its principal is over the
        limit."""
        now = self.clock()
        key = self.key(call)
        seen = self._seen.setdefault(key, deque())
        while seen and seen[0] <= now - self.seconds:
            seen.popleft()
        if len(seen) >= self.requests:
            wait = seen[0] + self.seconds - now
            raise ProtocolError(
                RATE_LIMITED,
                f"rate limit: {self.requests} requests per {self.seconds:g} s",
                {"retryAfterSeconds": max(1, math.ceil(wait))},
            )
        seen.append(now)
        for idle in [k for k, times in self._seen.items() if not times]:
            del self._seen[idle]  # keys come and go: keep only those with requests in the window
        return await call_next(call)
