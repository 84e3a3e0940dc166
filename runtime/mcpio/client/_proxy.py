"""`proxy_server(target)`: a server that re-serves another one (a URL, a command, a `Client`, an
`mcpServers` entry) on any transport, in whichever era each side speaks.

Every client->server method of the handler table is forwarded through a `Client` of the target
(`mcpio.client._upstream`), its result or JSON-RPC error (code kept) answered back. Each downstream client
(`lane_key`: its principal, else its legacy session, else its address) has a connection to the
target of its own, so the target's questions reach the client whose call asked them, never
another; at most `max_connections` such connections, each closed after `idle_seconds` without a
call in flight. The answers go back: a legacy downstream session gets real requests; a 2026-07-28
downstream request gets `input_required` rounds, while the call to the target waits in this
process for the answers (`Pending`: the revision bridge, so the target's tool runs once however
many rounds it asks). A task the downstream client accepts is a task of this proxy's engine,
running the forwarded call. Progress goes to the request it serves; a log line to the request it
is sent in, else to its client's only call in flight, else (several in flight: the wire names
none) to this process's log; list changes and resource updates to the proxy's listeners. The
Skills extension's methods (SEP-2640), outside the schemas, are forwarded as plain data, URIs
unchanged.

The in-flight rounds of 2026-07-28 requests live in this process: run one proxy instance (or
route a request's retries to the instance that answered it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from mcp_wire_runtime.errors import INVALID_PARAMS, ProtocolError
from mcpio._core.context import Context, InputRequired, Question, RetriedInputs
from mcpio._core.errors import ConnectionClosed, McpError
from mcpio._core.extension import Extension
from mcpio._core.hub import LIST_CHANGED, RESOURCE_UPDATED
from mcpio._core.jsonrpc import plain
from mcpio._core.options import ToolOptions
from mcpio.client._client import Client, Notice
from mcpio.client._entries import entry_options, is_config, servers_of
from mcpio.client._frames import DECLARING
from mcpio.client._proxy_sight import LISTED, TargetSight
from mcpio.client._skills import extension_request
from mcpio.client._upstream import Forwarded, Lane, Upstream, gone
from mcpio.latest import MISSING_CAPABILITY
from mcpio.server._server import Server
from mcpio.skills._format import EXTENSION as SKILLS_EXTENSION
from mcpio.tasks._client import TaskHandle
from mcpio.tasks._engine import TASKS_EXTENSION, TaskCreated, TaskInputs, TaskSupport
from mcpio.tasks._extension import task_required
from mcpio.transports._http_rules import ParamHeaders, param_headers

FORWARDED = (
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
)
_ROUND_SECONDS = 300.0  # how long a call waits for the next round of a 2026-07-28 client
_TOGETHER_SECONDS = 0.05  # questions this close together go in one input_required round
_NOTICE_FLAGS = {method: flag for flag, (method, _) in LIST_CHANGED.items()}
_ROUND_FIELDS = ("_meta", "inputResponses", "requestState", "task")
SKILLS_METHODS = ("skills/list", "skills/get", "resources/directory/read")  # SEP-2640
_LEGACY_DROPPED = ("resultType", "_meta", "ttlMs", "cacheScope")  # a modern target's, not legacy
MAX_CONNECTIONS = 64  # connections to the target, one per downstream client (`proxy_server`)
IDLE_SECONDS = 300.0  # a downstream client's connection to the target closes after this idle


def client_maker(target: Any, **options: Any) -> Callable[[dict[str, Any]], Client]:
    """How the proxy makes its client for `target`: a URL, a command (argv list), a `Client`
    (its target and settings, our callbacks), or an `mcpServers` entry (a mapping)."""
    if isinstance(target, Mapping):
        options = {**entry_options(cast(Mapping[str, Any], target)), **options}
        target = options.pop("target")
    if isinstance(target, Client):
        given = target
        return lambda callbacks: given.like(**callbacks)
    if not isinstance(target, str | Sequence | Server):
        raise ValueError(f"cannot proxy {target!r}: give a URL, a command, a Client or an entry")

    def made(callbacks: dict[str, Any]) -> Client:
        client = Client(target, **{**options, **callbacks})
        client.log_level = "debug"  # a 2026-07-28 target logs only when asked; each client filters
        return client

    return made


class Pending:
    """A call to the target waiting for a 2026-07-28 downstream client's next round."""

    def __init__(self, owner: str | None, asks: bool = True, request: str = "") -> None:
        self.id = secrets.token_hex(12)  # no "-": keys split on it
        self.owner = owner
        self.request = request  # the request it serves, as JSON (its retries are the same)
        self.keys: dict[str, int] = {}  # each question's round key (a target's own, kept)
        self.asks = asks  # whether its request may ask the client (tools/call, prompts/get, ...)
        self.aside: set[int] = set()  # the questions asked that are not the call's own
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.answers: dict[int, asyncio.Future[Any]] = {}
        self.ctx: Context | None = None
        self.task: asyncio.Task[None] | None = None
        self.touched = time.monotonic()
        self.refused: ProtocolError | None = None  # a question the client could not answer

    @property
    def call(self) -> object:
        """The downstream call it serves: itself, across the client's rounds."""
        return self

    def key(self, n: int) -> str:
        """The input key of the `n`th question asked during this call."""
        return f"proxy-{self.id}-{n}"

    async def ask_aside(self, question: Forwarded) -> Any | None:
        """A question of the target's own, asked in this call's next round (the same client),
        its refusal not this call's; None where the request may not ask (a listing)."""
        if not self.asks:
            return None
        self.aside.add(len(self.answers))
        return await self.ask(question)

    async def ask(self, question: Forwarded) -> Any:
        """Ask the real client a question the target asked, and wait for the answer."""
        n = len(self.answers)
        future = self.answers[n] = asyncio.get_running_loop().create_future()
        await self.events.put(("ask", (n, question)))
        return await future

    async def log(self, params: Any) -> None:
        """Pass a log message from the target to the real client."""
        if self.ctx is not None:
            await _log(self.ctx, params)


class Direct:
    """A legacy downstream request (or a task): the target's questions asked at once; in a
    task (`together`), those asked this close together as one set (as the target asked them:
    a legacy target sends them as separate requests), so the task shows them all at once."""

    def __init__(self, ctx: Context, together: float = 0.0) -> None:
        self.ctx = ctx
        self._n = 0
        self._together = together
        self._batch: dict[str, tuple[Forwarded, asyncio.Future[Any]]] | None = None
        self.refused: ProtocolError | None = None  # a question the client could not answer

    @property
    def call(self) -> object:
        """The downstream call it serves: its context's."""
        return self.ctx

    async def ask(self, question: Forwarded) -> Any:
        """Ask the real client a question the target asked, through the call's context."""
        self._n += 1
        key = f"proxy-{self._n}"
        if not self._together:
            return (await self._asked({key: question}))[key]
        future = asyncio.get_running_loop().create_future()
        if self._batch is not None:  # another question is gathering: asked with it
            self._batch[key] = (question, future)
            return await future
        self._batch = batch = {key: (question, future)}
        await asyncio.sleep(self._together)
        self._batch = None
        try:
            answers = await self._asked({k: q for k, (q, _) in batch.items()})
        except BaseException as exc:
            for k, (_, other) in batch.items():
                if k != key and not other.done():
                    other.set_exception(exc)
            raise
        for k, (_, other) in batch.items():
            if k != key and not other.done():
                other.set_result(answers[k])
        return answers[key]

    async def ask_aside(self, question: Forwarded) -> Any | None:
        """A question of the target's own, asked through this legacy call's session (the same
        client), its refusal not this call's; None in a task or a 2026-07-28 request."""
        if self.ctx.modern or self._together:
            return None
        return (await self.ctx.ask({"proxy-aside": cast(Question, question)}))["proxy-aside"]

    async def _asked(self, questions: dict[str, Forwarded]) -> dict[str, Any]:
        try:
            return await self.ctx.ask({k: cast(Question, q) for k, q in questions.items()})
        except ProtocolError as exc:
            self.refused = self.refused or exc
            raise

    async def log(self, params: Any) -> None:
        """Pass a log message from the target to the real client."""
        await _log(self.ctx, params)


async def _log(ctx: Context, params: Any) -> None:
    data = plain(params)
    await ctx.log(data.get("level", "info"), data.get("data"), data.get("logger"))


class Proxy:
    """The handlers of a proxy server: each method forwarded to the target."""

    def __init__(self, server: Server, upstream: Upstream) -> None:
        self.server = server
        self.upstream = upstream
        self.pending: dict[str, Pending] = {}
        self.target_tasks: dict[str, TaskSupport] = {}  # a 2025-11-25 target's, by tool
        self._listed = False  # target_tasks holds the whole listing (until its tools change)
        self.param_specs: dict[str, ParamHeaders] = {}  # each listed tool's Mcp-Param-* headers
        self.sight = TargetSight()  # the target's components as last listed, for the rules
        upstream.on_notice = self._notice
        for method in FORWARDED:
            server.handlers[method] = self._handler(method)
        for method in SKILLS_METHODS:  # outside the schemas: forwarded as plain data
            server.extension_methods[method] = self._extension(method)

    def _handler(self, method: str) -> Callable[[Context, Any], Awaitable[Any]]:
        async def handler(ctx: Context, params: Any) -> Any:
            sight = self.server._sight(ctx)  # pyright: ignore[reportPrivateUsage]
            await self.sight.check(sight, method, params, lambda how: self._list_all(ctx, how))
            if method == "tools/call":
                return await self._call_tool(ctx, params)
            result = await self.forward(ctx, method, params)
            if method == "tools/list":
                for tool in result.tools:
                    support = await self._support(ctx, tool.name)
                    self.server.tool_options[tool.name] = ToolOptions(task=support)
                    self.param_specs[tool.name] = param_headers(plain(tool.inputSchema))
            if method in LISTED:
                result = self.sight.listed(sight, method, result)
            return result

        return handler

    async def _list_all(self, ctx: Context, method: str) -> None:
        """Every page of the target's `method` listing, kept in `sight`."""
        cursor: str | None = None
        for _ in range(1000):
            result = await self.forward(ctx, method, {"cursor": cursor} if cursor else None)
            self.sight.listed(None, method, result)
            cursor = result.nextCursor
            if not cursor:
                return

    def _extension(self, method: str) -> Callable[[Context, Any], Awaitable[Any]]:
        """An extension's request outside the schemas (Skills), sent on to the target as it
        came, its result or error back (this hop's envelope and the target's left out)."""

        async def handler(ctx: Context, params: Any) -> Any:
            lane = await self.lane(ctx)
            done = lane.asking(Direct(ctx))
            try:
                client = await lane.client()
                result = await extension_request(client, method, _outgoing(params))
            except ConnectionClosed as exc:
                lane.drop()
                raise gone(exc) from None
            finally:
                done()
            dropped = ("resultType", "_meta") if ctx.modern else _LEGACY_DROPPED
            return {k: v for k, v in result.items() if k not in dropped}

        return handler

    async def _support(self, ctx: Context, name: str) -> TaskSupport:
        """Whether a call of tool `name` may run as a task: as a 2025-11-25 target says (the
        call then a task of the target's, followed here); else "optional" (a task of this
        proxy's engine running the call, for a target without tasks or one that decides per
        call, as 2026-07-28's does)."""
        client = await (await self.lane(ctx)).client()
        codec = client.codec
        if client.modern or codec is None or "tasks/get" not in codec.methods:
            return "optional"
        if name not in self.target_tasks and not self._listed:  # an unknown name: listed once
            await self._list_target(client)
        return self.target_tasks.get(name, "forbidden")

    async def _list_target(self, client: Client) -> Any:
        """A 2025-11-25 target's tools/list (all pages), keeping each one's taskSupport."""
        cursor: str | None = None
        while True:
            listed = await client.task_request("tools/list", {"cursor": cursor} if cursor else {})
            for tool in listed.get("tools") or ():
                support = (tool.get("execution") or {}).get("taskSupport")
                known = support in ("optional", "required")
                self.target_tasks[str(tool.get("name"))] = support if known else "forbidden"
            cursor = listed.get("nextCursor")
            if not cursor:
                self._listed = True
                return

    async def _call_tool(self, ctx: Context, params: Any) -> Any:
        """tools/call: a task where the target would make one (see `_support`)."""
        support = await self._support(ctx, str(params.name))
        if ctx.task_offer is None and support == "required":
            raise task_required(str(params.name), ctx.modern)
        if ctx.task_offer is None or support == "forbidden":
            try:
                return await self.forward(ctx, "tools/call", params)
            except McpError as exc:  # a 2026-07-28 target's task-only tool: as legacy says it
                if ctx.modern or not _wants_tasks(exc):
                    raise
                raise task_required(str(params.name), False) from None
        lane = await self.lane(ctx)
        modern = (await lane.client()).modern  # a 2026-07-28 target decides per call
        if not self.target_tasks and not modern:
            return await self._as_task(ctx, params)
        # the target's task: its questions before it makes one are the request's own
        result = await self.forward(ctx, "tools/call", params, task=True, lane=lane)
        if isinstance(result, TaskHandle):
            return await self._following(ctx, lane, result)
        if modern and not ctx.modern:  # answered at once: a legacy client still gets its task
            return await self._task(ctx, lambda _: _ready(result))
        return result

    async def lane(self, ctx: Context) -> Lane:
        """The connection to the target that serves `ctx`'s client (see `lane_key`)."""
        lane = await self.upstream.lane(lane_key(ctx))
        declared = ctx.client_capabilities
        lane.roots_declared = declared.roots is not None
        lane.caller = ctx.principal  # (the lane is its principal's, or shared by none)
        if not ctx.modern:  # a legacy session declares once: the target is told the same
            lane.declared = {
                "roots": declared.roots is not None,
                "sampling": declared.sampling is not None,
                "elicitation": declared.elicitation is not None,
            }
        return lane

    async def forward(
        self, ctx: Context, method: str, params: Any, task: bool = False, lane: Lane | None = None
    ) -> Any:
        """Forward a request to the target and return its result, its questions asked of the real
        client (with `task`: a 2025-11-25 task asked for, its handle returned)."""
        data = _outgoing(params)
        lane = lane or await self.lane(ctx)
        inputs = ctx._inputs  # pyright: ignore[reportPrivateUsage]
        if isinstance(inputs, RetriedInputs):
            # a 2026-07-28 target sees this client's capabilities (a question it cannot
            # answer is then the target's -32021, as without the proxy)
            caps = ctx.client_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
            declaring = DECLARING.set(caps)
            try:
                return await self._rounds(ctx, lane, inputs, method, data, task)
            finally:
                DECLARING.reset(declaring)
        direct = Direct(ctx)
        done = lane.asking(direct)
        try:
            result = await self._call(lane, ctx, method, data, task)
        except Exception:
            if direct.refused is not None:
                raise direct.refused from None
            raise
        finally:
            done()
        if direct.refused is not None:  # the target went on without the answer: the error
            raise direct.refused
        return result

    async def _call(
        self, lane: Lane, ctx: Context, method: str, data: dict[str, Any], task: bool = False
    ) -> Any:
        """The call to the target; with `task`, a 2025-11-25 task asked for (its handle)."""
        client = await lane.client()
        progress = _progress_to(ctx) if ctx.progress_token is not None else None
        try:
            asked = {} if task else None
            result = await client.request(method, data, progress=progress, task=asked)
            if isinstance(result, TaskHandle) and not task:  # followed here
                result = await result.result()
            return result
        except ConnectionClosed as exc:
            lane.drop()
            raise gone(exc) from None
        except BaseExceptionGroup as group:  # questions asked at once: the first failure
            raise group.exceptions[0] from None

    async def _rounds(
        self,
        ctx: Context,
        lane: Lane,
        inputs: RetriedInputs,
        method: str,
        data: dict[str, Any],
        task: bool,
    ) -> Any:
        """A 2026-07-28 downstream request: the call to the target, started or resumed with
        the round's answers, until its next question (an `input_required` round) or its end."""
        self._expire()
        owner = ctx.principal.subject if ctx.principal is not None else None
        request = json.dumps([method, data], sort_keys=True, default=str)
        pending = self._resumed(inputs.answers, owner, request)
        if pending is None:
            pending = Pending(owner, ctx.codec.methods[method].input_required, request)
            self.pending[pending.id] = pending
            running = self._run(lane, pending, method, data, task)
            pending.task = asyncio.get_running_loop().create_task(running)
        pending.ctx, pending.touched = ctx, time.monotonic()
        while True:
            try:
                kind, value = await pending.events.get()
            except asyncio.CancelledError:  # the downstream client gave up: so does the call
                if pending.task is not None:
                    pending.task.cancel()
                self.pending.pop(pending.id, None)
                raise
            if kind != "ask":
                self.pending.pop(pending.id, None)
                if pending.refused is not None:  # the client could not answer: its error
                    raise pending.refused
                if kind == "error":
                    raise value
                return value
            asked = dict([value, *await _more_asks(pending)])  # asked at once: one round
            try:
                keyed = {self._round_key(pending, n, q.key): q for n, q in asked.items()}
                await ctx.ask({key: cast(Question, q) for key, q in keyed.items()})
            except InputRequired:
                raise
            except ProtocolError as exc:  # the downstream client cannot answer them
                if not set(asked) <= pending.aside:  # (an aside's refusal is the target's only)
                    pending.refused = pending.refused or exc
                for n in asked:
                    pending.answers[n].set_exception(exc)

    async def _run(
        self, lane: Lane, pending: Pending, method: str, data: dict[str, Any], task: bool
    ) -> None:
        done = lane.asking(pending)
        try:
            relay = _Relay(pending)
            result = await self._call(lane, relay, method, data, task)  # type: ignore[arg-type]
            await pending.events.put(("done", result))
        except Exception as exc:
            await pending.events.put(("error", exc))
        finally:
            done()

    def _round_key(self, pending: Pending, n: int, wanted: str | None) -> str:
        """The round key of `pending`'s `n`th question: the target's own (`wanted`, a
        2026-07-28 target's), unless another waiting call of the same request and client has
        it or this call used it already; else the proxy's (`Pending.key`)."""
        taken = (
            wanted is None
            or wanted.startswith("proxy-")
            or wanted in pending.keys
            or any(wanted in other.keys for other in self._alike(pending.owner, pending.request))
        )
        key = pending.key(n) if taken else cast(str, wanted)
        pending.keys[key] = n
        return key

    def _alike(self, owner: str | None, request: str) -> list[Pending]:
        """The waiting calls of `owner` serving `request`."""
        return [p for p in self.pending.values() if p.owner == owner and p.request == request]

    def _resumed(
        self, answers: Mapping[str, Any], owner: str | None, request: str
    ) -> Pending | None:
        """The call the round's answers belong to, given them (None: a new call): named by a
        proxy key, else by a target's key one waiting call of this request has."""
        found: Pending | None = None
        for key, answer in answers.items():
            parts = key.split("-")
            if len(parts) != 3 or parts[0] != "proxy":
                owning = [p for p in self._alike(owner, request) if key in p.keys]
                if len(owning) != 1:
                    continue
                pending, n = owning[0], owning[0].keys[key]
            else:
                pending = self.pending.get(parts[1])
                if pending is None or pending.owner != owner:
                    raise ProtocolError(
                        INVALID_PARAMS, f"inputResponses.{key}: no such question here"
                    )
                n = int(parts[2]) if parts[2].isdigit() else -1
            future = pending.answers.get(n)
            if future is not None and not future.done():
                future.set_result(answer)
            found = pending
        return found

    async def close(self) -> None:
        """At shutdown: the calls waiting for a client's next round end (the target's questions
        unanswered), then the connection to the target closes."""
        for pending in list(self.pending.values()):
            if pending.task is not None:
                pending.task.cancel()
            for future in pending.answers.values():
                future.cancel()
        self.pending.clear()
        await self.upstream.close()

    def _expire(self) -> None:
        now = time.monotonic()
        for pending in list(self.pending.values()):
            if now - pending.touched > _ROUND_SECONDS and pending.task is not None:
                pending.task.cancel()
                self.pending.pop(pending.id, None)

    async def _as_task(self, ctx: Context, params: Any) -> TaskCreated:
        """A task of this proxy's engine, running the call to the target."""
        data = _outgoing(params)

        async def run(inner: Context) -> Any:
            lane = await self.lane(inner)
            done = lane.asking(Direct(inner))
            try:
                return await self._call(lane, inner, "tools/call", data)
            finally:
                done()

        return await self._task(ctx, run)

    async def _following(self, ctx: Context, lane: Lane, handle: TaskHandle) -> TaskCreated:
        """A task of this proxy's engine following the target's task (on `lane`, whose client
        made it) to its end."""

        async def run(inner: Context) -> Any:
            asker = Direct(inner, _TOGETHER_SECONDS)
            done = lane.following(handle.task_id, asker)
            asked = lane.asking(asker)  # a 2026-07-28 task's, through the handle
            try:
                return await handle.result()
            except asyncio.CancelledError:  # cancelled here: there too
                with contextlib.suppress(Exception):
                    await asyncio.shield(handle.cancel())
                raise
            except ConnectionClosed as exc:
                lane.drop()
                raise gone(exc) from None
            finally:
                asked()
                done()

        return await self._task(ctx, run)

    async def _task(self, ctx: Context, run: Callable[[Context], Awaitable[Any]]) -> TaskCreated:
        offer = ctx.task_offer
        assert offer is not None

        async def work(inputs: TaskInputs, status: Callable[[str], Awaitable[None]]) -> Any:
            inner = ctx.for_task(inputs, status, _task_progress(offer, inputs.task_id))
            return plain(await run(inner))

        owner = ctx.principal.subject if ctx.principal is not None else None
        record = await self.server.tasks.start(
            owner=owner,
            method="tools/call",
            work=work,
            ttl_ms=offer.ttl_ms,
            ask=offer.ask,
            watch=offer.watch,
        )
        return TaskCreated(record)

    async def _notice(self, notice: Notice) -> None:
        flag = _NOTICE_FLAGS.get(notice.method)
        if notice.method == "notifications/tools/list_changed":
            self._listed = False
        if flag is not None:
            await self.server.hub.publish(flag, notice.method, {})
        elif notice.method == RESOURCE_UPDATED:
            uri = getattr(notice.params, "uri", None)
            if isinstance(uri, str):
                await self.server.hub.publish(None, RESOURCE_UPDATED, {"uri": uri}, uri)


async def _more_asks(pending: Pending) -> list[tuple[int, Forwarded]]:
    """The other questions a target asks at the same time (a legacy target sends them as
    separate requests, one right after another)."""
    more: list[tuple[int, Forwarded]] = []
    while True:
        try:
            kind, value = await asyncio.wait_for(pending.events.get(), _TOGETHER_SECONDS)
        except TimeoutError:
            return more
        if kind != "ask":  # cannot happen while questions wait: kept for the next turn
            pending.events.put_nowait((kind, value))
            return more
        more.append(value)


class _Relay:
    """The context a waiting call reports progress through: the latest round's."""

    def __init__(self, pending: Pending) -> None:
        self._pending = pending

    @property
    def progress_token(self) -> Any:
        ctx = self._pending.ctx
        return ctx.progress_token if ctx is not None else None

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        ctx = self._pending.ctx
        if ctx is not None:
            await ctx.progress(progress, total, message)


def _wants_tasks(error: McpError) -> bool:
    """Whether a 2026-07-28 error says the call needs the Tasks extension (a task-only tool)."""
    data = error.data if isinstance(error.data, dict) else {}
    needed = (data.get("requiredCapabilities") or {}).get("extensions") or {}
    return error.code == MISSING_CAPABILITY and TASKS_EXTENSION in needed


async def _ready(result: Any) -> Any:
    return result


def _progress_to(ctx: Any) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        await ctx.progress(progress, total, message)

    return report


def _task_progress(offer: Any, task_id: str) -> Callable[[dict[str, Any]], Awaitable[None]] | None:
    sink = offer.progress
    if sink is None:
        return None

    async def report(params: dict[str, Any]) -> None:
        await sink(
            task_id,
            {**params, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": task_id}}},
        )

    return report


def _outgoing(params: Any) -> dict[str, Any]:
    """A request's params as the target gets them: without this hop's envelope and rounds."""
    data = dict(plain(params) or {})
    meta = {k: v for k, v in (data.get("_meta") or {}).items() if not _hop_meta(k)}
    for name in _ROUND_FIELDS:
        data.pop(name, None)
    if meta:
        data["_meta"] = meta
    return data


def _hop_meta(key: str) -> bool:
    return key == "progressToken" or key.startswith("io.modelcontextprotocol/")


def lane_key(ctx: Context) -> str | None:
    """Whose connection to the target serves `ctx`: its principal's (with authorization), else
    its legacy HTTP session's, else its peer address's; None (the shared one) on stdio and in
    memory, where one client is served."""
    if ctx.principal is not None:
        return f"principal:{ctx.principal.subject}"
    if ctx.session_id is not None:
        return f"session:{ctx.session_id}"
    return ctx.client_key


def proxy_server(
    target: Any,
    *,
    name: str | None = None,
    max_connections: int | None = MAX_CONNECTIONS,
    idle_seconds: float | None = IDLE_SECONDS,
    **options: Any,
) -> Server:
    """Make a `Server` that re-serves `target`, in whichever era each side speaks.

    Every client->server method is forwarded through a `Client` of the target (the docs page
    "Composition", docs/servers/composition.md, tells the rest). Each downstream client
    (`lane_key`) has a connection to the target of its own, closed after `idle_seconds` without
    a call in flight; at most `max_connections` of them, the least recently used idle one closed
    to make room, a call answered -32005 when all have calls in flight.

    Args:
        target: The server to re-serve: a URL, a command, a `Client` (a template: the proxy
            connects new ones like it), an `mcpServers` entry, or a whole configuration
            (`{"mcpServers": {...}}`: its only server's proxy, else a server mounting a proxy
            of each under its name, as `from_config` does).
        name: The proxy server's name (default: "mcpio-proxy"; a configuration's: its only
            server's name, else "mcpServers").
        max_connections: The connections to the target at once (64; None: no bound).
        idle_seconds: Seconds a downstream client's connection stays open without a call in
            flight (300; None: never closed).
        **options: The `Client`'s (`mode`, `timeout`, `headers`, `auth`, `env`, ...).

    Raises:
        ValueError: A target that cannot be proxied, a configuration that cannot be read, or
            server names that would shadow each other's tools (`gh`, `gh_ent`: `Server.mount`).
    """
    if is_config(target):
        limits = {"max_connections": max_connections, "idle_seconds": idle_seconds}
        return config_server(servers_of(target), name=name, **limits, **options)
    upstream = Upstream(
        client_maker(target, **options), max_connections=max_connections, idle_seconds=idle_seconds
    )
    server = Server(name or "mcpio-proxy")
    server.__dict__["_proxy"] = proxy = Proxy(server, upstream)
    server.add_extension(Proxied(proxy))
    return server


def config_server(
    entries: dict[str, dict[str, Any]], *, name: str | None = None, **options: Any
) -> Server:
    """The server re-serving a configuration's entries: its only server's proxy, else one
    mounting a proxy of each under its name (`options`: `proxy_server`'s)."""
    if len(entries) == 1:
        ((only, entry),) = entries.items()
        return proxy_server(entry, name=name or only, **options)
    combined = Server(name or "mcpServers")
    for each, entry in entries.items():
        combined.mount(proxy_server(entry, name=each, **options), namespace=each)
    return combined


class Proxied(Extension):
    """What a proxy server offers and when it runs: its target's capabilities (learned when the
    proxy starts, waited for before a client is told, kept current at each connection to the
    target), with the Tasks extension the
    proxy's engine serves for the target's tools; the `Mcp-Param-*` headers of the target's
    tools as last listed through it; its connections to the target closed when it stops."""

    id = "io.github.mcpio/proxy"  # (declares nothing: it has no settings)

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy

    def offer(self, capabilities: dict[str, Any]) -> None:
        """The target's capabilities in place of the server's own (unknown: all a target may
        offer, a method the target lacks answered with its error)."""
        target = self.proxy.upstream.offered
        offered = _EVERYTHING if target is None else target
        capabilities.clear()
        capabilities.update({k: v for k, v in offered.items() if k != "tasks"})  # (legacy's)
        if "tools" in offered:  # a call may run as a task of the proxy's engine
            extensions = capabilities["extensions"] = dict(capabilities.get("extensions") or {})
            extensions.setdefault(TASKS_EXTENSION, {})

    async def prepare(self, ctx: Context) -> None:
        """What the target offers, learned before a client is told."""
        await self.proxy.upstream.known()

    def param_headers(self, tool: str) -> ParamHeaders | None:
        """SEP-2243 headers checked against the target's schemas as last listed through it."""
        return self.proxy.param_specs.get(tool)

    def lifespan(self, server: Any) -> Any:
        return _running(self.proxy)


# What a proxy offers while its target's capabilities are unknown (the target could not be
# reached when the proxy started): all a target may.
_EVERYTHING: dict[str, Any] = {
    "logging": {},
    "completions": {},
    "tools": {"listChanged": True},
    "prompts": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "extensions": {SKILLS_EXTENSION: {"directoryRead": True}},
}


@contextlib.asynccontextmanager
async def _running(proxy: Proxy) -> AsyncIterator[None]:
    proxy.upstream.start_probe()  # (not waited for: a target down does not hold the start)
    try:
        yield None
    finally:
        await proxy.close()
