"""Admission control for the HTTP server: what one client, or all of them together, may hold at
once. `Slots` counts things held for a while (legacy sessions, streams, requests in flight),
in all and per client; `ByteBudget` bounds the request bodies held parsed at once, since a JSON
body costs many times its size in memory while it is parsed and served.

A client is whom a request speaks for: the principal's subject with authorization, else the
peer's address, an IPv6 peer's /64 prefix (behind a proxy, let the ASGI server read it from the forwarding headers, as
uvicorn does for `--forwarded-allow-ips`). The long-lived tables (sessions, streams) also bound
what one network may hold (`network_of`): addresses are cheap within a network one party holds,
so a handful of them must not fill a table that every client shares."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

IPV4_NETWORK = 24  # the prefix length one party is taken to hold
IPV6_NETWORK = 48  # (a client is already its /64)


@functools.lru_cache(maxsize=4096)
def network_of(client: str) -> str | None:
    """The network a client without authorization belongs to: its IPv4 address's /24, its IPv6
    /64's /48. None for a principal, and for a loopback address (a process of this machine: it
    counts alone)."""
    try:
        network = ipaddress.ip_network(client, strict=False)
    except ValueError:
        return None  # "principal:<subject>", or no address at all
    if network.is_loopback or network.network_address.is_loopback:
        return None
    if network.version == 6 and ipaddress.IPv6Address("::1") in network:
        return None  # ::1's /64
    length = IPV4_NETWORK if network.version == 4 else IPV6_NETWORK
    return str(network.supernet(new_prefix=min(length, network.prefixlen)))


class Refused(Exception):
    """Admission refused: `status` (429 for one client past its share, 503 when all are full,
    408/503 when a wait ran out) and why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Slots:
    """At most `total` held at once, at most `per_client` by one client, and at most
    `per_network` by the clients of one network (`network_of`; principals are of none)."""

    def __init__(
        self,
        what: str,
        total: int,
        per_client: int | None = None,
        per_network: int | None = None,
    ) -> None:
        self.what = what
        self.total = total
        self.per_client = per_client
        self.per_network = per_network
        self.count = 0
        self.held: dict[str, int] = {}  # by client, only those holding any
        self.by_network: dict[str, int] = {}  # likewise, by network

    def take(self, client: str) -> None:
        """Take a slot for `client`; `Refused` 503 when all are taken, 429 when the client (or
        its network) holds its share."""
        if self.count >= self.total:
            raise Refused(503, f"too many {self.what}; try again later")
        held = self.held.get(client, 0)
        if self.per_client is not None and held >= self.per_client:
            raise Refused(429, f"too many {self.what} for one client ({self.per_client})")
        share = self.per_network
        network = network_of(client) if share is not None else None
        if share is not None and network is not None:
            in_network = self.by_network.get(network, 0)
            if in_network >= share:
                raise Refused(429, f"too many {self.what} for one network ({share})")
            self.by_network[network] = in_network + 1
        self.count += 1
        self.held[client] = held + 1

    def give(self, client: str) -> None:
        """Give back a slot `client` held."""
        self.count -= 1
        left = self.held[client] - 1  # (`_drop`, inline: on every request's path)
        if left > 0:
            self.held[client] = left
        else:
            del self.held[client]
        network = network_of(client) if self.per_network is not None else None
        if network is not None:
            _drop(self.by_network, network)

    @contextmanager
    def holding(self, client: str) -> Iterator[None]:
        """Hold a slot for `client` while the block runs."""
        self.take(client)
        try:
            yield
        finally:
            self.give(client)


def network_share(total: int, per_client: int | None, per_network: int | None) -> int:
    """What one network may hold of a table of `total`: `per_network`, by default a quarter
    of the table but never less than one client's share."""
    if per_network is not None:
        return per_network
    return max(per_client or 1, -(-total // 4))


def _drop(counts: dict[str, int], key: str) -> None:
    left = counts[key] - 1
    if left > 0:
        counts[key] = left
    else:
        del counts[key]


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
