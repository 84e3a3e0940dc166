"""`RateLimitMiddleware`: at most `requests` per `seconds` for each client.

The window slides; requests beyond are refused with a JSON-RPC error that says when to retry. A
client is `ctx.client_key`: the
principal with authorization, else the peer's address (an IPv6 peer's /64); over stdio and in
memory, the one client of the process."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from mcp_wire_runtime.errors import ProtocolError
from mcpio.middleware._base import Call, CallNext, Middleware

#: Server-defined JSON-RPC error code (the implementation-defined range) for a refused request.
RATE_LIMITED = -32029


def by_client(call: Call) -> str:
    """Key a request by its caller's `ctx.client_key` (its principal, else its address).

    Over stdio and in memory: the principal if any, else one key for the process's one client.
    """
    key = call.ctx.client_key
    if key is not None:
        return key
    principal = call.ctx.principal
    return "principal:" + principal.subject if principal is not None else ""


def by_principal(call: Call) -> str:
    """The access token's subject; one shared key for requests without authorization."""
    principal = call.ctx.principal
    return principal.subject if principal is not None else ""


class RateLimitMiddleware(Middleware):
    """A middleware that refuses a client's requests beyond `requests` in the last `seconds`.

    The refusal is a JSON-RPC error -32029 (`RATE_LIMITED`) with `data.retryAfterSeconds`.

    Args:
        requests: How many requests a client may make in the window (at least 1).
        seconds: The window's length, in seconds (more than 0).
        key: Whose budget a request spends (default `by_client`: its principal's, else its
            address's; `by_principal` makes every caller without authorization share one).
        clock: The monotonic clock the window is measured with (default `time.monotonic`).

    Raises:
        ValueError: `requests` < 1 or `seconds` <= 0.
    """

    def __init__(
        self,
        requests: int,
        seconds: float,
        *,
        key: Callable[[Call], str] = by_client,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if requests < 1 or seconds <= 0:
            raise ValueError("a rate limit needs requests >= 1 and seconds > 0")
        self.requests, self.seconds, self.key, self.clock = requests, seconds, key, clock
        self._seen: dict[str, deque[float]] = {}
        self._next_sweep = -math.inf  # when clients with no request in the window are forgotten

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Refuse the request with -32029 (`retryAfterSeconds`) when its client is over limit."""
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
        if now >= self._next_sweep:  # once a window: a client's key is kept only while it counts
            self._next_sweep = now + self.seconds
            horizon = now - self.seconds
            for idle in [k for k, times in self._seen.items() if times[-1] <= horizon]:
                del self._seen[idle]
        return await call_next(call)
