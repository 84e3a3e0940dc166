"""The notification bus: how a change one instance of a server publishes reaches the listeners of
every instance. `LocalBus` (the default) hands it straight back to this process; `RedisBus`
sends it through a Redis pub/sub channel that every instance subscribes to, and each instance
delivers what it receives to its own listeners, its publications included.

An `Event` carries what a listener needs to match it: the notification's method and params,
and either the `subscriptions/listen` filter flag that selects it (`toolsListChanged`, ...) or,
for a resource update, its URI. The bus knows no method.

Delivery is at most once. A bus that loses its connection says so (`available` turns false and
the server ends every listen stream with `unavailable()`), reconnects with backoff, and says so
again when it is back; what was published meanwhile is not redelivered.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
import pydantic_core

from mcp_wire_runtime.errors import INTERNAL_ERROR, ProtocolError
from mcpio._core.extras import needs
from mcpio._core.redact import Secret, redacted

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger("mcpio")

UNAVAILABLE = "notification bus unavailable; listen again"


def unavailable() -> ProtocolError:
    """The error that ends a listen stream (or refuses a new one) while the bus is down."""
    return ProtocolError(INTERNAL_ERROR, UNAVAILABLE)


def without_credentials(url: str) -> str:
    """A Redis URL without its user and password, for messages and logs."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


@dataclass(frozen=True, slots=True)
class Event:
    """One change, as the bus carries it (JSON on Redis)."""

    method: str
    params: dict[str, Any]
    flag: str | None = None  # the listen filter flag that selects it
    uri: str | None = None  # a resource update: the URI listeners subscribe to

    def encode(self) -> bytes:
        """The event as JSON bytes, as it travels on the bus."""
        return pydantic_core.to_json(
            {"method": self.method, "params": self.params, "flag": self.flag, "uri": self.uri}
        )

    @classmethod
    def decode(cls, data: bytes | str) -> Event:
        """An event read from the bus; `ValueError` for anything that is not one."""
        obj = pydantic_core.from_json(data)
        if not (
            type(obj) is dict
            and type(obj.get("method")) is str
            and type(obj.get("params")) is dict
            and type(obj.get("flag")) in (str, type(None))
            and type(obj.get("uri")) in (str, type(None))
        ):
            raise ValueError("not a notification bus event")
        return cls(obj["method"], obj["params"], obj.get("flag"), obj.get("uri"))


class BusUnavailable(Exception):
    """The bus cannot publish now (not connected yet, or connection lost)."""


Deliver = Callable[[Event], Awaitable[None]]
Changed = Callable[[bool], Awaitable[None]]


class Bus:
    """What a server needs of a notification bus (the base of `LocalBus` and `RedisBus`).

    `attach` gives it the server's callbacks: `deliver` for every event received (this
    instance's own included), `changed` when it comes up or goes down. `run` keeps it connected
    until cancelled; `publish` raises `BusUnavailable` when the event cannot be sent.
    """

    available: bool = True
    _deliver: Deliver
    _changed: Changed

    def attach(self, deliver: Deliver, changed: Changed, name: str) -> None:
        """Take the callbacks of the server that uses this bus (the server calls it).

        Args:
            deliver: Called with every event received (this instance's own included).
            changed: Called with True when the bus comes up, False when it goes down.
            name: The server's name.
        """
        self._deliver, self._changed = deliver, changed

    async def publish(self, event: Event) -> None:
        """Deliver `event` to every instance's listeners (this one's included)."""
        raise NotImplementedError

    async def run(self) -> None:
        """Nothing to keep: an in-process bus is always up."""


class LocalBus(Bus):
    """One process: an event is delivered to this server's listeners as it is published."""

    async def publish(self, event: Event) -> None:
        """Deliver `event` to this process's listeners."""
        await self._deliver(event)


class RedisBus(Bus):
    """A bus on Redis pub/sub: every instance of one server subscribes to one channel.

    Down at start or lost later, it logs once per outage, tells the server (whose listen
    streams then end with `unavailable()`), and reconnects after `backoff` seconds, doubled
    (with jitter) on each failure up to `max_backoff`. Nothing is queued here: a subscriber
    that falls behind is cut off by Redis's own output buffer limit, which is an outage too.

    Args:
        url: The Redis URL (`redis://host:port/db`, `rediss://`, `unix://`); it may hold
            credentials, which are kept out of messages and logs.
        channel: The pub/sub channel (default `mcpio:<server name>`).
        backoff: Seconds before the first reconnection attempt.
        max_backoff: The longest wait between attempts, in seconds.
        timeout: Seconds allowed for connecting, for each command, and for the answer to a
            PING.
        health: Seconds of a quiet subscription after which it sends a PING.
    """

    def __init__(
        self,
        url: str,
        *,
        channel: str | None = None,
        backoff: float = 0.1,
        max_backoff: float = 2.0,
        timeout: float = 2.0,
        health: float = 5.0,
    ) -> None:
        with needs("redis", "RedisBus"):
            from redis.asyncio import ConnectionPool

        try:
            ConnectionPool.from_url(url)  # a malformed URL fails here, not later
        except ValueError as exc:
            raise ValueError(redacted(str(exc))) from None
        self.url = without_credentials(url)  # for show; `_url` connects
        self._url = Secret(url)
        self.channel = channel or ""  # set by `attach` when not given
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.timeout = timeout  # connecting, each command, and the answer to a PING
        self.health = health  # a quiet subscription sends a PING after this many seconds
        self.available = False
        self._client: Redis | None = None
        self._connection: anyio.CancelScope | None = None
        self._outage_logged = False

    def attach(self, deliver: Deliver, changed: Changed, name: str) -> None:
        """Take the server's callbacks, and name the channel after the server unless given.

        Args:
            deliver: Called with every event received (this instance's own included).
            changed: Called with True when the bus comes up, False when it goes down.
            name: The server's name (the channel is `mcpio:<name>` unless given).
        """
        super().attach(deliver, changed, name)
        self.channel = self.channel or f"mcpio:{name}"

    def where(self) -> str:
        """The URL without credentials, for logs."""
        return without_credentials(self.url)

    async def publish(self, event: Event) -> None:
        """Publish `event` on the Redis channel; `BusUnavailable` while Redis is unreachable."""
        client = self._client
        if client is None or not self.available:
            raise BusUnavailable(self.where())
        try:
            await client.publish(self.channel, event.encode())
        except Exception as exc:  # lost: the subscriber reconnects, listeners learn of the gap
            await self._down(exc)
            if self._connection is not None:
                self._connection.cancel()
            raise BusUnavailable(self.where()) from exc

    async def run(self) -> None:
        from redis.asyncio import Redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        delay = self.backoff
        while True:
            client = Redis.from_url(
                self._url.reveal(),
                retry=Retry(NoBackoff(), 0),  # a silent reconnection would hide a gap
                socket_connect_timeout=self.timeout,
                socket_timeout=self.timeout,
            )
            try:
                with anyio.CancelScope() as self._connection:
                    async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                        await pubsub.subscribe(self.channel)
                        self._client = client
                        await self._up()
                        delay = self.backoff
                        pinged = False  # a stalled (not closed) connection is an outage too
                        while True:
                            wait = self.timeout if pinged else self.health
                            message = await pubsub.get_message(timeout=wait)
                            if message is None and pinged:
                                raise TimeoutError(f"no answer to PING within {wait} s")
                            if message is None:
                                await pubsub.ping()
                            elif message["type"] == "message":
                                await self._receive(message["data"])
                            pinged = message is None
            except Exception as exc:
                await self._down(exc)
            finally:
                self._client = None
                self._connection = None
                with anyio.CancelScope(shield=True):
                    await client.aclose()
            await anyio.sleep(delay * random.uniform(0.5, 1.0))
            delay = min(delay * 2, self.max_backoff)

    async def _receive(self, data: bytes) -> None:
        try:
            event = Event.decode(data)
        except ValueError:
            log.warning("notification bus %s: an invalid message was ignored", self.where())
            return
        await self._deliver(event)

    async def _up(self) -> None:
        self.available = True
        if self._outage_logged:
            log.warning("notification bus %s: connected again", self.where())
        self._outage_logged = False
        await self._changed(True)

    async def _down(self, exc: BaseException) -> None:
        if not self._outage_logged:
            self._outage_logged = True
            log.error(
                "notification bus %s unavailable (%s): listen streams end with an error "
                "until it is back; reconnecting",
                self.where(),
                exc,
            )
        else:
            log.debug("notification bus %s: still unavailable (%s)", self.where(), exc)
        if self.available:
            self.available = False
            await self._changed(False)
