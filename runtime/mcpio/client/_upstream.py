"""The proxy's side towards its target: a `Lane` per downstream client (an authenticated
principal, else a legacy HTTP session, else a peer address; one shared lane for a proxy served on
stdio or in memory), each one `Client` of the target, connected at its first call in a task of its
own (a client's task group must be left by the task that entered it), dropped when the target
goes away and connected again at the next call, closed after `idle_seconds` without a call in
flight; at most `max_connections` of them (`Upstream`). A legacy target asks its questions
(elicitation, sampling, roots) on its session, which names no request: each session serves one
downstream client, so a question reaches only that client. Within it a question goes to the
request it names (a task's), else to the call running in the same task (a 2026-07-28 target asks
inside the call), else to the client's newest call in flight; but a `roots/list` outside a call
(a target asking on its own) is never a call's: see `Lane._roots`. A log line goes to the call it is
sent in, else to the client's only call in flight; with several in flight it names none of them,
and goes to this process's log (`mcpio` logger, debug) instead."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mcp_wire_runtime.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_BUSY,
    ProtocolError,
)
from mcpio._core.context import ElicitUrl
from mcpio._core.errors import ConnectionClosed
from mcpio._core.jsonrpc import plain
from mcpio._core.principal import Principal
from mcpio.client._client import Client, Notice
from mcpio.client._connect import IN_PROCESS_CALLER
from mcpio.client._inputs import ANSWERING
from mcpio.latest import public as pub

log = logging.getLogger("mcpio")
_RELATED_TASK = "io.modelcontextprotocol/related-task"
_CLOSE_SECONDS = 2.0  # how long closing waits for the target's connection to end on its own
_PROBE_SECONDS = 60.0  # how long a starting proxy waits to learn what its target offers


@dataclass(frozen=True)
class Forwarded:
    """A question of the target, asked again of the downstream client as it was."""

    method: str
    data: dict[str, Any]
    key: str | None = None  # a 2026-07-28 target's `inputRequests` key for it

    def params(self) -> dict[str, Any]:
        """The question's params, as the target asked them."""
        return dict(self.data)


class Asker(Protocol):
    """One downstream request: where the target's questions, progress and logs go."""

    @property
    def call(self) -> object:
        """The downstream call it serves (the askers of one call share it)."""
        ...

    async def ask(self, question: Forwarded) -> Any:
        """Ask the real client a question the target asked."""
        ...

    async def ask_aside(self, question: Forwarded) -> Any | None:
        """Ask the real client a question that is not its call's (the target asked it on its
        own), its refusal the target's only; None: this call cannot ask one (a 2026-07-28
        request asks only its own, in its rounds)."""
        ...

    async def log(self, params: Any) -> None:
        """Pass a log message from the target to the real client."""
        ...


# A client made for the target, given the callbacks that carry its questions downstream.
ClientMaker = Callable[[dict[str, Any]], Client]

_FRESH = contextvars.Context()
# The lane and asker of the call running in this task (a 2026-07-28 target asks inside the call)
_CURRENT: contextvars.ContextVar[tuple[Lane, Asker] | None] = contextvars.ContextVar(
    "mcpio_proxy_asker"
)


class Upstream:
    """The proxy's connections to its target: a `Lane` per downstream client (`lane(key)`),
    at most `max_connections` (None: no bound) besides the shared one (key None: a proxy served
    on stdio or in memory), each closed after `idle_seconds` (None: never) without a call in
    flight. Each follows its connection's list changes (a stdio target runs a process per
    connection, each with its own lists)."""

    def __init__(
        self,
        make: ClientMaker,
        listen: bool = True,
        *,
        max_connections: int | None = 64,
        idle_seconds: float | None = 300.0,
    ) -> None:
        if max_connections is not None and max_connections < 1:
            raise ValueError("max_connections must be 1 or more (None: no bound)")
        self._make = make
        self._listen = listen
        self.max_connections = max_connections
        self.idle_seconds = idle_seconds
        self.lanes: dict[str | None, Lane] = {}
        self.on_notice: Callable[[Notice], Awaitable[None]] | None = None
        # The target's capabilities (plain data) as its latest connection reported them; None:
        # not known (it could not be reached yet)
        self.offered: dict[str, Any] | None = None
        self.modern: bool | None = None  # whether the target speaks 2026-07-28 (None: not known)
        self._probing: asyncio.Task[None] | None = None

    async def known(self) -> None:
        """Wait until what the target offers is known, learning it (`probe`) if needed: a
        target that cannot be reached is tried again at the next wait."""
        if self.offered is not None:
            return
        if self._probing is None or self._probing.done():
            self.start_probe()
        assert self._probing is not None
        await asyncio.shield(self._probing)

    def start_probe(self) -> None:
        """Learn what the target offers in the background (`known` waits for it)."""
        self._probing = asyncio.get_running_loop().create_task(self.probe())

    async def probe(self) -> None:
        """Learn what the target offers, on a connection of its own that declares no client
        capability (so the target asks it nothing) and closes at once; a target that cannot
        be reached is logged."""
        try:
            async with asyncio.timeout(_PROBE_SECONDS), self._make({}) as client:
                if client.server_capabilities is None:  # 2026-07-28: asked for
                    await client.discover()
                self.learned(client)
        except Exception as exc:
            log.warning("the proxied server's capabilities are not known: %r", exc)

    def learned(self, client: Client) -> None:
        """Keep what `client`'s server said it offers (a connection's `initialize` answer)."""
        self.modern = client.modern
        offered = client.server_capabilities
        if offered is not None:
            self.offered = offered.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def lane(self, key: str | None) -> Lane:
        """The lane of downstream client `key`, made if needed; -32005 when `max_connections`
        lanes all have calls in flight."""
        lane = self.lanes.get(key)
        if lane is None:
            if key is not None:
                self._make_room()
            lane = self.lanes[key] = Lane(self, key, self._listen)
        lane.touched = time.monotonic()
        return lane

    def _make_room(self) -> None:
        """Close the least recently used idle lane when a new one would pass the bound."""
        bound = self.max_connections
        keyed = [lane for key, lane in self.lanes.items() if key is not None]
        if bound is None or len(keyed) < bound:
            return
        idle = [lane for lane in keyed if not lane.busy]
        if not idle:
            raise ProtocolError(
                SERVER_BUSY,
                f"the proxy holds {bound} connections to its target (max_connections), each "
                "with calls in flight; try again later",
            )
        min(idle, key=lambda lane: lane.touched).retire()

    def forget(self, lane: Lane) -> None:
        """`lane` closed: the next call of its client makes a new one."""
        if self.lanes.get(lane.key) is lane:
            del self.lanes[lane.key]

    async def close(self) -> None:
        """Disconnect every lane from the target (and a probe under way)."""
        probing, self._probing = self._probing, None
        if probing is not None and not probing.done():
            probing.cancel()
            await asyncio.gather(probing, return_exceptions=True)
        lanes = list(self.lanes.values())
        self.lanes.clear()
        await asyncio.gather(*(lane.close() for lane in lanes))


class Lane:
    """One downstream client's connection to the target (`client()`), and who answers its
    questions: its calls in flight (`asking`) and the target's tasks followed (`following`)."""

    def __init__(self, pool: Upstream, key: str | None, listen: bool) -> None:
        self.pool = pool
        self.key = key
        self._listen = listen
        self._client: Client | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock: asyncio.Lock | None = None
        self.active: list[Asker] = []  # downstream requests in flight, the latest last
        self._tasks: dict[str, asyncio.Future[Asker]] = {}  # the target's tasks followed here
        self.touched = time.monotonic()
        self.roots_declared = False  # whether its client declared roots (its latest request)
        # what a legacy client declared (a kind of question -> declared), declared in turn to a
        # legacy target when it connects; None (a 2026-07-28 client, declaring per request) or a
        # 2026-07-28 target (told per request): every kind, the proxy answering for the client
        self.declared: dict[str, bool] | None = None
        self.roots: pub.ListRootsResult | None = None  # its client's roots, as last answered
        self.caller: Principal | None = None  # its client's principal (an in-process target's)

    @property
    def busy(self) -> bool:
        """Whether a call is in flight on it (or a task of the target is followed)."""
        return bool(self.active or self._tasks)

    async def client(self) -> Client:
        """The connected client of the target, connecting (again) if needed."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            keeper = self._keeper
            if self._client is not None and keeper is not None and not keeper.done():
                return self._client
            ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            # a context of its own: the tasks it starts must not inherit this caller's asker
            keep = self._keep(ready)
            self._keeper = asyncio.get_running_loop().create_task(keep, context=_FRESH.copy())
            try:
                self._client = await ready
            except ConnectionClosed as exc:
                raise gone(exc) from None
            except OSError as exc:
                raise gone(exc) from None
            return self._client

    async def _keep(self, ready: asyncio.Future[Client]) -> None:
        stop = self._stop  # this connection's (a reconnection makes another)
        IN_PROCESS_CALLER.set(self.caller)  # (this task's own context)
        try:
            async with self.pool._make(
                self._callbacks()
            ) as client:  # pyright: ignore[reportPrivateUsage]
                # a task is asked for per call (`request(task=...)`, whose answer comes back as
                # a handle): the client, maybe the user's, is left as it was made
                self.pool.learned(client)  # the target's capabilities, kept current
                ready.set_result(client)
                if self._listen:
                    await self._follow(client)
                await self._until_stopped_or_idle(stop)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                log.debug("the proxied server's connection ended: %r", exc)
        finally:
            self._client = None

    async def _until_stopped_or_idle(self, stop: asyncio.Event) -> None:
        """Wait for `stop` (`drop`), or (a client's own lane) `idle_seconds` without a call in
        flight: then the lane is forgotten (its client's next call makes a new one)."""
        idle = self.pool.idle_seconds
        while not stop.is_set():
            if idle is None or self.key is None:
                await stop.wait()
                return
            left = self.touched + idle - time.monotonic()
            if left <= 0 and not self.busy:
                self.retire()
                return
            try:
                await asyncio.wait_for(stop.wait(), max(left, idle / 10))
            except TimeoutError:
                pass

    async def _follow(self, client: Client) -> None:
        """The target's list changes, to `on_notice` (the proxy's listeners), in a task."""

        async def follow() -> None:
            try:
                async with client.listen(tools=True, prompts=True, resources=True) as sub:
                    async for notice in sub:
                        if self.pool.on_notice is not None:
                            await self.pool.on_notice(notice)
            except Exception as exc:  # a target that offers no listening
                log.debug("not following the proxied server's changes: %r", exc)

        task = asyncio.get_running_loop().create_task(follow())
        self._stop_follow = task

    def drop(self) -> None:
        """The target went away: the next call connects again."""
        self._stop.set()
        self._client = None
        follow = getattr(self, "_stop_follow", None)
        if follow is not None:
            follow.cancel()

    def retire(self) -> None:
        """Close the connection and forget the lane (idle, or room made for another)."""
        self.pool.forget(self)
        self.drop()

    async def close(self) -> None:
        """Disconnect from the target."""
        self.drop()
        keeper, self._keeper = self._keeper, None
        if keeper is not None:  # a target's questions still unanswered: not waited for
            done, _ = await asyncio.wait({keeper}, timeout=_CLOSE_SECONDS)
            if not done:
                keeper.cancel()
                await asyncio.gather(keeper, return_exceptions=True)

    def asking(self, asker: Asker) -> Callable[[], None]:
        """`asker` serves the calls of this task (and of tasks it starts) until the returned
        function is called."""
        token = _CURRENT.set((self, asker))
        self.active.append(asker)
        self.touched = time.monotonic()

        def done() -> None:
            _CURRENT.reset(token)
            self.active.remove(asker)
            self.touched = time.monotonic()

        return done

    def following(self, task_id: str, asker: Asker) -> Callable[[], None]:
        """`asker` answers the questions of the target's task `task_id` (2025-11-25 names the
        task in each) until the returned function is called."""
        self._task_future(task_id).set_result(asker)
        return lambda: self._tasks.pop(task_id, None) and None

    def _task_future(self, task_id: str) -> asyncio.Future[Asker]:
        if task_id not in self._tasks:
            self._tasks[task_id] = asyncio.get_running_loop().create_future()
        return self._tasks[task_id]

    async def _asker_of(self, params: Any) -> Asker:
        """Who answers this question: the task's follower if it names a task (one that may
        ask before the proxy answered its client with the task: awaited), else `_asker()`."""
        related = (plain(params) or {}).get("_meta", {}).get(_RELATED_TASK) or {}
        task_id = related.get("taskId") if isinstance(related, dict) else None
        if not isinstance(task_id, str):
            return self._asker()
        try:
            return await asyncio.wait_for(asyncio.shield(self._task_future(task_id)), 30)
        except TimeoutError:
            self._tasks.pop(task_id, None)
            raise ProtocolError(INVALID_REQUEST, f"no one follows task {task_id} here") from None

    def _running(self) -> Asker | None:
        """The asker of the call running in this task, if it is one of this lane's."""
        current = _CURRENT.get(None)
        return current[1] if current is not None and current[0] is self else None

    def _asker(self) -> Asker:
        asker = self._running()
        if asker is None and self.active:
            asker = self.active[-1]
        if asker is None:
            raise ProtocolError(INTERNAL_ERROR, "no client request is in flight to ask")
        return asker

    async def _roots(self) -> pub.ListRootsResult:
        """The target's `roots/list`: a question of the call it is asked in (a 2026-07-28
        target asks inside it); else one the target asks on its own (a legacy one names no
        request: right after `initialize`, at a change), answered by this lane's client through
        a legacy call in flight (asked aside: its refusal never replaces that call's result),
        else from the roots it last answered, else refused."""
        question = Forwarded("roots/list", {}, ANSWERING.get())
        asker = self._running()
        if asker is not None:
            return self._kept(await asker.ask(question))
        for other in reversed(self.active):
            answer = await other.ask_aside(question)
            if answer is not None:
                return self._kept(answer)
        if self.roots is not None:
            return self.roots
        if not self.roots_declared:
            raise ProtocolError(
                METHOD_NOT_FOUND, "the proxy's client did not declare the 'roots' capability"
            )
        raise ProtocolError(
            INTERNAL_ERROR, "the proxy's client has not told its roots yet (none is in flight)"
        )

    def _kept(self, answer: Any) -> pub.ListRootsResult:
        """The client's roots (whatever revision's model it came in), kept for later."""
        self.roots = pub.ListRootsResult.model_validate(plain(answer))
        return self.roots

    def _log_to(self) -> Asker | None:
        """Who gets a log line: the call it is sent in, else the only call in flight."""
        asker = self._running()
        if asker is None and self.active and len({id(a.call) for a in self.active}) == 1:
            asker = self.active[-1]
        return asker

    def _callbacks(self) -> dict[str, Any]:
        async def elicitation(params: Any) -> Any:
            asker = await self._asker_of(params)
            asked = Forwarded("elicitation/create", _params(params), ANSWERING.get())
            return await asker.ask(asked)

        async def elicit_url(asked: ElicitUrl) -> Any:
            question = Forwarded("elicitation/create", asked.params(), ANSWERING.get())
            return await self._asker().ask(question)

        async def sampling(params: Any) -> Any:
            asker = await self._asker_of(params)
            asked = Forwarded("sampling/createMessage", _params(params), ANSWERING.get())
            return await asker.ask(asked)

        async def roots() -> Any:
            return await self._roots()

        async def on_log(params: Any) -> None:
            asker = self._log_to()
            if asker is not None:
                await asker.log(params)
            else:  # no request it can be told to belong to: not a client's to see
                log.debug("a log line of the proxied server, for no one call: %r", plain(params))

        async def on_notice(notice: Notice) -> None:
            on_notice = self.pool.on_notice
            if on_notice is not None and notice.method == "notifications/resources/updated":
                await on_notice(notice)

        asking = {"elicitation": elicitation, "sampling": sampling, "roots": roots}
        declared = self.declared
        if declared is not None and self.pool.modern is False:  # legacy on both sides
            asking = {kind: answer for kind, answer in asking.items() if declared[kind]}
        elicits = "elicitation" in asking
        return {
            **asking,
            **({"on_elicit_url": elicit_url} if elicits else {}),
            "on_log": on_log,
            "on_notice": on_notice,
        }


def _params(params: Any) -> dict[str, Any]:
    data = dict(plain(params) or {})
    data.pop("_meta", None)
    return data


def gone(exc: BaseException) -> ProtocolError:
    """The -32603 error for a call whose target went away."""
    return ProtocolError(
        INTERNAL_ERROR,
        f"the proxied server is not reachable ({exc}); the next call connects again",
    )
