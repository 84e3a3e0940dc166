"""The per-instance hub: who listens on this instance of a server (modern `subscriptions/listen`
streams, legacy sessions) and how a change reaches them, through the notification bus
(`mcpio._core.bus`), from this instance or another. The server announces changes through it; each
connection registers with it while it lasts."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcp_wire_runtime.errors import ProtocolError
from mcpio._core.bus import Bus, BusUnavailable, Event, LocalBus, unavailable
from mcpio.latest import public as pub

log = logging.getLogger("mcpio")

# listen filter flag -> the list-changed notification it selects, and the capability offering it
LIST_CHANGED = {
    "toolsListChanged": ("notifications/tools/list_changed", "tools"),
    "promptsListChanged": ("notifications/prompts/list_changed", "prompts"),
    "resourcesListChanged": ("notifications/resources/list_changed", "resources"),
}
RESOURCE_UPDATED = "notifications/resources/updated"  # selected by URI
RESOURCE_SUBSCRIPTIONS = "resourceSubscriptions"  # the listen filter member naming URIs
# Tasks: the listen filter member naming task ids (its events carry the id as `uri`), and the
# flag of an update or cancel for the instance running a task (handed to `on_task_control`).
TASK_IDS = "taskIds"
TASK_CONTROL = "task-control"
# listen filter member -> the capability that lets the server honour it
LISTEN_FLAGS = {
    **{f: cap for f, (_, cap) in LIST_CHANGED.items()},
    RESOURCE_SUBSCRIPTIONS: "resources",
}


class Listening(Protocol):
    """A modern listen stream, as the hub sees it."""

    def wants(self, flag: str | None, uri: str | None) -> bool:
        """Whether this listener takes a change (`flag`: a list changed; `uri`: a resource
        updated)."""
        ...

    def deliver(self, method: str, params: dict[str, Any]) -> None:
        """Queue a notification for the stream (never waits)."""
        ...

    def end(self, error: ProtocolError | None = None) -> None:
        """End the listen stream (with `error`: as that JSON-RPC error)."""
        ...


class Subscribed(Protocol):
    """A legacy session, as the hub sees it: it hears every change it may care for."""

    subscriptions: set[str]

    def wants(self, uri: str | None) -> bool:
        """Whether this legacy session takes a change of `uri` (None: a list change)."""
        ...

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send the session a notification."""
        ...


class Hub:
    """This instance's listeners and legacy sessions, and its bus. `offered` gives the server's
    capabilities (which list-changed notifications it offers)."""

    def __init__(
        self, name: str, offered: Callable[[], pub.ServerCapabilities], bus: Bus | None = None
    ) -> None:
        self.name = name
        self.listeners: set[Listening] = set()
        self.sessions: set[Subscribed] = set()
        self._offered = offered
        self._bus_task: asyncio.Task[None] | None = None
        self.bus = bus or LocalBus()
        self.on_task_control: Callable[[dict[str, Any]], Awaitable[None]] | None = None

    @property
    def bus(self) -> Bus:
        """The notification bus changes travel on."""
        return self._bus

    @bus.setter
    def bus(self, bus: Bus) -> None:
        bus.attach(self.deliver, self.bus_changed, self.name)
        self._bus = bus

    async def publish(
        self, flag: str | None, method: str, params: dict[str, Any], uri: str | None = None
    ) -> None:
        """Publish a change on the bus; `flag` is the listen filter flag that selects it, or
        `uri` the resource it updates. While the bus is down, legacy sessions of this instance
        still get it (their listeners hear of the outage when it ends: see `bus_changed`)."""
        event = Event(method, params, flag, uri)
        try:
            await self.bus.publish(event)
        except BusUnavailable:
            log.debug("notification bus unavailable: %s reaches this instance's sessions", method)
            await self.deliver(event, listeners=False)

    async def deliver(self, event: Event, listeners: bool = True) -> None:
        """Deliver an event from the bus to every modern listener of this instance that asked
        for it and every legacy session (resource updates: only those subscribed to the URI)."""
        method, params = event.method, event.params
        if event.flag == TASK_CONTROL:
            if self.on_task_control is not None:
                await self.on_task_control(params)
            return
        for listener in list(self.listeners) if listeners else ():
            if listener.wants(event.flag, event.uri):
                listener.deliver(method, params)  # queued for its stream: never waits
        for session in list(self.sessions) if event.flag != TASK_IDS else ():
            if not session.wants(event.uri):
                continue
            try:
                await session.notify(method, params)
            except Exception as exc:  # one gone peer must not stop the others
                log.debug("could not deliver %s: %s", method, exc)

    async def bus_changed(self, up: bool) -> None:
        """Down: every listen stream ends with `unavailable()` (the client listens again).
        Up again: legacy sessions, which cannot re-listen, are told that every list may have
        changed and so may every resource they subscribe to."""
        if not up:
            for listener in list(self.listeners):
                listener.end(unavailable())
            return
        caps = self._offered()
        events = [
            Event(m, {}) for m, cap in LIST_CHANGED.values() if getattr(caps, cap) is not None
        ]
        uris = {uri for session in list(self.sessions) for uri in session.subscriptions}
        events += [Event(RESOURCE_UPDATED, {"uri": uri}, uri=uri) for uri in sorted(uris)]
        for event in events:
            await self.deliver(event, listeners=False)

    def start_bus(self) -> None:
        """Run the bus (connect, subscribe, reconnect) in a task of the running (asyncio) event
        loop, once per loop."""
        loop = asyncio.get_running_loop()
        if self._bus_task is None or self._bus_task.get_loop() is not loop:
            self._bus_task = loop.create_task(self.bus.run())

    async def stop_bus(self) -> None:
        """Stop reading the bus (the server stops)."""
        task, self._bus_task = self._bus_task, None
        if task is not None and task.get_loop() is asyncio.get_running_loop():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
