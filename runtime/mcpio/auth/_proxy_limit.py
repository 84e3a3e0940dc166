"""The OAuth proxy's bound on dynamic client registration: at most so many registrations from
one client address in each window of time, the rest refused with 429 and `Retry-After`.

Registration is open to anyone (RFC 7591 without an initial access token), and each one is
kept for `registration_seconds`: without a bound, one host could fill the store. The counts are
kept in the proxy's store (`OAuthStore.count`), one counter per address and window (fixed
windows), so instances sharing a store share the bound.
"""

from __future__ import annotations

import math
import time

from mcpio._core.routes import HttpResponse
from mcpio.auth._proxy_settings import oauth_error
from mcpio.auth._proxy_store import Clock, OAuthStore


class RegistrationLimit:
    """At most `most` registrations per client address in each window of `seconds`.

    Args:
        store: Where the counts are kept.
        most: The bound (None: no bound).
        seconds: The window's length.
        clock: The time now, in seconds since the epoch.
    """

    def __init__(
        self, store: OAuthStore, most: int | None, seconds: float, clock: Clock = time.time
    ) -> None:
        if (most is not None and most < 1) or seconds <= 0:
            raise ValueError("the registration limit is a positive count in a positive window")
        self.store = store
        self.most = most
        self.seconds = seconds
        self.clock = clock

    async def refusal(self, address: str | None) -> HttpResponse | None:
        """Count one registration from `address`: None while within the bound, else the 429
        answer (`Retry-After`: the seconds until the window ends)."""
        if self.most is None:
            return None
        now = self.clock()
        window = math.floor(now / self.seconds)
        # an ASGI server that names no peer: all such requests share one count
        key = f"register:{address or 'unknown'}:{window}"
        if await self.store.count(key, self.seconds) <= self.most:
            return None
        retry = max(1, math.ceil((window + 1) * self.seconds - now))
        return oauth_error(
            429,
            "too_many_requests",  # no registered OAuth error code says it; the MCP SDKs' word
            f"at most {self.most} registrations from one address per {self.seconds:g} s",
            **{"retry-after": str(retry)},
        )
