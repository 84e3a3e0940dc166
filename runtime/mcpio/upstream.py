"""The proxy's side towards its target: one `Client`, connected at the first call in a task of
its own (a client's task group must be left by the task that entered it), dropped when the target
goes away and connected again at the next call. What the target asks (elicitation, sampling,
roots) and logs goes to the downstream request it serves (`Asker`): the one whose call is running
in this task (a 2026-07-28 target asks inside the call), else the most recent one in flight (a
legacy target asks on its session, which names no request)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mcpio.client import Client, Notice
from mcpio.context import ElicitUrl
from mcpio.errors import ConnectionClosed
from mcpio.jsonrpc import plain
from mcpio.wire.errors import INTERNAL_ERROR, INVALID_REQUEST, ProtocolError

log = logging.getLogger("mcpio")
_RELATED_TASK = "io.modelcontextprotocol/related-task"
_CLOSE_SECONDS = 2.0  # how long closing waits for the target's connection to end on its own


@dataclass(frozen=True)
class Forwarded:
    """A question of the target, asked again of the downstream client as it was."""

    method: str
    data: dict[str, Any]

    def params(self) -> dict[str, Any]:
        """The question's params, as the target asked them."""
        return dict(self.data)


class Asker(Protocol):
    """One downstream request: where the target's questions, progress and logs go."""

    async def ask(self, question: Forwarded) -> Any:
        """Ask the real client a question the target asked."""
        ...

    async def log(self, params: Any) -> None:
        """Pass a log message from the target to the real client."""
        ...


# A client made for the target, given the callbacks that carry its questions downstream.
ClientMaker = Callable[[dict[str, Any]], Client]

_FRESH = contextvars.Context()
_CURRENT: contextvars.ContextVar[Asker | None] = contextvars.ContextVar("mcpio_proxy_asker")


class Upstream:
    """The connection to the target (`client()`), and who answers its questions."""

    def __init__(self, make: ClientMaker, listen: bool = True) -> None:
        self._make = make
        self._listen = listen
        self._client: Client | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock: asyncio.Lock | None = None
        self.active: list[Asker] = []  # downstream requests in flight, the latest last
        self._tasks: dict[str, asyncio.Future[Asker]] = {}  # the target's tasks followed here
        self.on_notice: Callable[[Notice], Awaitable[None]] | None = None

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
        try:
            async with self._make(self._callbacks()) as client:
                # a task is asked for per call (`request(task=...)`, whose answer comes back as
                # a handle): the client, maybe the user's, is left as it was made
                ready.set_result(client)
                if self._listen:
                    await self._follow(client)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                log.debug("the proxied server's connection ended: %r", exc)
        finally:
            self._client = None

    async def _follow(self, client: Client) -> None:
        """The target's list changes, to `on_notice` (the proxy's listeners), in a task."""

        async def follow() -> None:
            try:
                async with client.listen(tools=True, prompts=True, resources=True) as sub:
                    async for notice in sub:
                        if self.on_notice is not None:
                            await self.on_notice(notice)
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
        token = _CURRENT.set(asker)
        self.active.append(asker)

        def done() -> None:
            _CURRENT.reset(token)
            self.active.remove(asker)

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

    def _asker(self) -> Asker:
        asker = _CURRENT.get(None)
        if asker is None and self.active:
            asker = self.active[-1]
        if asker is None:
            raise ProtocolError(INVALID_REQUEST, "no client request is in flight to ask")
        return asker

    def _callbacks(self) -> dict[str, Any]:
        async def elicitation(params: Any) -> Any:
            asker = await self._asker_of(params)
            return await asker.ask(Forwarded("elicitation/create", _params(params)))

        async def elicit_url(asked: ElicitUrl) -> Any:
            return await self._asker().ask(Forwarded("elicitation/create", asked.params()))

        async def sampling(params: Any) -> Any:
            asker = await self._asker_of(params)
            return await asker.ask(Forwarded("sampling/createMessage", _params(params)))

        async def roots() -> Any:
            return await self._asker().ask(Forwarded("roots/list", {}))

        async def on_log(params: Any) -> None:
            asker = _CURRENT.get(None) or (self.active[-1] if self.active else None)
            if asker is not None:
                await asker.log(params)

        async def on_notice(notice: Notice) -> None:
            if self.on_notice is not None and notice.method == "notifications/resources/updated":
                await self.on_notice(notice)

        return {
            "elicitation": elicitation,
            "on_elicit_url": elicit_url,
            "sampling": sampling,
            "roots": roots,
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
