"""Tasks as a server extension (`mcpio.server.Extension`): the task methods of both eras, the
capability each era declares, the task a client offers to take (made as a request's context
is), tool calls answered with a task (at once, deferred, or queued for workers), the task tools
a 2025-11-25 listing marks, and the task ids a listen stream may follow.

The per-tool rules (`task`, `defer_task`, `retry`) are the tool's `ToolOptions`; the task
engine (`TaskEngine`) runs the tasks and holds them in its store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import mcp_wire
from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, ProtocolError
from mcpio._core.context import Context, MethodHandler, RetriedInputs
from mcpio._core.ext_methods import CLIENT_CAPABILITIES
from mcpio._core.extension import CallNextTool, Extension, ToolCall
from mcpio._core.handlers import TextAnswer, ToolEntry, tool_result
from mcpio._core.hub import TASK_CONTROL, TASK_IDS, Hub
from mcpio._core.jsonrpc import plain
from mcpio._core.negotiate import MODERN, PROTOCOL_VERSION_KEY, codec_of
from mcpio._core.options import ToolOptions
from mcpio.latest import MISSING_CAPABILITY
from mcpio.latest import public as pub
from mcpio.tasks import _serve as serve
from mcpio.tasks._engine import (
    TASKS_EXTENSION,
    TaskCreated,
    TaskEngine,
    TaskInputs,
    TaskOffer,
    Work,
    modern_task,
    tasks_available,
    tasks_codec,
)
from mcpio.tasks._owner import owner_of, owner_principal
from mcpio.tasks._queue import Job
from mcpio.tasks._store import TaskRecord, TaskStore


class Serving(Protocol):
    """What the Tasks extension needs of its server (`mcpio.Server`)."""

    @property
    def tools(self) -> Mapping[str, ToolEntry]:
        """The registered tools, by name."""
        ...

    @property
    def tool_options(self) -> Mapping[str, ToolOptions]:
        """The options of tools that other handlers answer (a proxy's, mounted ones')."""
        ...

    @property
    def hub(self) -> Hub:
        """The server's listeners and notification bus."""
        ...

    async def dispatch(
        self, ctx: Context, method: str, params: Any, handler: MethodHandler | None = None
    ) -> Any:
        """A request's result through the middlewares and its handler."""
        ...

    async def run_tool(self, ctx: Context, params: pub.CallToolRequestParams) -> Any:
        """A registered tool's call run in `ctx`, without the extensions' hooks."""
        ...


class TasksExtension(Extension):
    """The Tasks extension of a `Server` (always served; declared once a tool takes tasks).

    Args:
        tasks: The task engine, or the store of a default one (memory unless given).
    """

    id = TASKS_EXTENSION
    notifications = frozenset({"notifications/tasks"})

    def __init__(self, tasks: TaskEngine | TaskStore | None = None) -> None:
        self.engine = tasks if isinstance(tasks, TaskEngine) else TaskEngine(tasks)
        self._server: Serving | None = None

    @property
    def server(self) -> Serving:
        """The server the extension was added to."""
        assert self._server is not None, "the extension is not added to a server"
        return self._server

    def added(self, server: Any) -> None:
        """Carry the engine's changes and orders on the server's hub."""
        self._server = server
        self.use(self.engine)

    def use(self, engine: TaskEngine) -> None:
        """Run the server's tasks on `engine` (`Server.tasks`)."""
        self.engine = engine
        hub = self.server.hub
        engine.control = lambda order: hub.publish(TASK_CONTROL, "tasks/control", order)
        if self._changed not in engine.watchers:
            engine.watchers.append(self._changed)
        hub.on_task_control = engine.on_control

    def takes_tasks(self) -> bool:
        """Whether any tool may run as a task."""
        server = self.server
        options = [e.options for e in server.tools.values()] + [*server.tool_options.values()]
        return any(o.get("task", "forbidden") != "forbidden" for o in options)

    # ------------------------------------------------------------------ capabilities

    def settings(self) -> Mapping[str, Any] | None:
        """Declared (with no settings) once a tool may run as a task."""
        return {} if self.takes_tasks() else None

    def declare(self, capabilities: dict[str, Any], revision: str) -> None:
        """2026-07-28: the extension where its revision has it; 2025-11-25: the native `tasks`
        capability (task-augmented `tools/call`)."""
        if not self.takes_tasks():
            return
        if revision in MODERN:
            if tasks_available(revision):
                capabilities.setdefault("extensions", {})[self.id] = {}
        elif "tasks" in mcp_wire.revision(revision).ServerCapabilities.model_fields:
            capabilities["tasks"] = serve.LEGACY_TASKS_CAPABILITY

    # ------------------------------------------------------------------ methods

    def methods(self) -> Mapping[str, MethodHandler]:
        """`tasks/get`, `tasks/update`, `tasks/cancel` (2026-07-28) and `tasks/get`,
        `tasks/result`, `tasks/list`, `tasks/cancel` (2025-11-25)."""
        names = serve.MODERN_METHODS | serve.LEGACY_METHODS
        return {method: serve.handler(lambda: self.engine, method) for method in sorted(names)}

    def serves(self, method: str, revision: str) -> bool:
        """A modern revision's methods where it has the extension; a legacy revision's where its
        schema has them."""
        if revision in MODERN:
            return method in serve.MODERN_METHODS and tasks_available(revision)
        return method in codec_of(revision).methods

    def codec(self, revision: str) -> Codec | None:
        """The Tasks extension's codec (2026-07-28), or the revision's own (2025-11-25)."""
        if revision in MODERN:
            return tasks_codec(revision) if tasks_available(revision) else None
        return codec_of(revision)

    def read(self, method: str, revision: str, raw: bytes) -> dict[str, Any] | None:
        """A task request's params as plain data, checked by its revision's schema."""
        if revision in MODERN:
            return serve.read_modern(revision, method, raw)
        return serve.legacy_params(codec_of(revision).decode(raw).params)

    # ------------------------------------------------------------------ requests

    def open_request(self, ctx: Context, params: Any, session: Any) -> None:
        """Offer a task where the client takes one: a 2026-07-28 request that declares the
        extension, a 2025-11-25 request augmented with `task`."""
        if session is None:
            capabilities = ctx.client_capabilities
            if (
                getattr(capabilities, "extensions", None)
                and tasks_available(ctx.revision)
                and serve.declares_tasks(capabilities)
            ):
                ctx.task_offer = serve.modern_offer(self.server.hub)
            return
        task = getattr(params, "task", None)
        if task is not None:
            ctx.task_offer = serve.legacy_offer(session, ctx.codec, task)

    def call_tool(self, call: ToolCall, call_next: CallNextTool) -> Awaitable[Any]:
        """A call answered with a task where the tool and the client take one (a call that
        takes none passes on without a frame of its own: every tool call's path)."""
        offer: TaskOffer | None = call.ctx.task_offer
        support = call.entry.options.get("task", "forbidden")
        if offer is None and support != "required":
            return call_next(call)
        return self._call_tool(call, call_next, offer, support)

    async def _call_tool(
        self, call: ToolCall, call_next: CallNextTool, offer: TaskOffer | None, support: str
    ) -> Any:
        ctx = call.ctx
        if offer is None:
            raise task_required(call.name, ctx.modern)
        if support == "forbidden":
            if not ctx.modern:
                raise ProtocolError(
                    METHOD_NOT_FOUND,
                    f"tool {call.name!r} does not run as a task",
                    {"name": call.name},
                )
            return await call_next(call)
        call.arguments()  # (arguments that do not fit: a tool error now, not a failed task)
        deferred = call.entry.options.get("defer_task", False)
        if self.engine.queue is not None and offer.ask is None and not deferred:
            return await self._queue(call, offer)

        async def run(inside: Context) -> Any:
            result = await call_next(dataclasses.replace(call, ctx=inside))
            return tool_result(result.text) if type(result) is TextAnswer else result

        if deferred:
            return await self.engine.start_deferred(offer, ctx, run)
        return await self.engine.start_offered(offer, ctx, run)

    async def _queue(self, call: ToolCall, offer: TaskOffer) -> TaskCreated:
        """A modern task call, queued for the workers (`mcpio.cli._worker`)."""
        ctx = call.ctx
        owner = owner_of(ctx)
        token = ctx.progress_token
        job = Job(
            task_id="",
            owner=owner,
            tool=call.name,
            arguments=plain(call.params.arguments or {}),
            revision=ctx.revision,
            capabilities=plain(ctx.client_capabilities),
            progress_token=token if offer.progress is not None else None,
        )
        retry = call.entry.options.get("retry") == "safe"
        record = await self.engine.enqueue(
            job, owner=owner, requestor=ctx.client_key, ttl_ms=offer.ttl_ms, retry=retry
        )
        return TaskCreated(record)

    def written(self, method: str, result: Any, revision: str) -> None:
        """2025-11-25 `tools/list`: each task tool's `execution.taskSupport`."""
        if method == "tools/list" and "tasks/get" in codec_of(revision).methods:
            serve.mark_task_tools(result, revision, self._marked)

    def _marked(self, tool: str) -> str | None:
        """A listed tool's `taskSupport`: a task tool's, or any tool's another handler answers
        (a proxy's target says so of each); None: a tool that is not marked ("forbidden" is what
        an unmarked tool means, so it is left unmarked)."""
        server = self.server
        entry = server.tools.get(tool)
        options = entry.options if entry is not None else server.tool_options.get(tool, {})
        support = options.get("task", "forbidden")
        return support if support != "forbidden" else None

    async def listen(self, ctx: Context, params: Any, kept: dict[str, Any]) -> None:
        """Task ids a listen request follows: those the caller owns; asking for them needs the
        extension."""
        wanted = params.notifications.model_dump(exclude_unset=True)
        task_ids = wanted.get(TASK_IDS)
        if task_ids is None:
            return
        capabilities = params.meta.io_modelcontextprotocol_clientCapabilities
        if not tasks_available(ctx.revision) or not serve.declares_tasks(capabilities):
            raise serve.missing_extension("listening to task status notifications")
        owner = owner_of(ctx)
        ids = [t for t in task_ids if type(t) is str] if type(task_ids) is list else []
        kept[TASK_IDS] = [t for t in ids if await self.engine.get(t, owner) is not None]

    async def _changed(self, record: TaskRecord) -> None:
        """Every change of a task run here, to the modern listen streams following it."""
        await self.server.hub.publish(
            TASK_IDS, "notifications/tasks", modern_task(record, detailed=True), record.task_id
        )

    # ------------------------------------------------------------------ workers

    def queued_work(self, job: Job) -> Work:
        """The work of a queued task, as a worker runs it.

        The call takes the request pipeline, middlewares included, as `tools/call` with the
        job's name and arguments, in a context of its own (no connection: questions and
        progress go through the task store and the bus).
        """
        server = self.server

        async def work(inputs: TaskInputs, status: Callable[[str], Awaitable[None]]) -> Any:
            entry = server.tools.get(job.tool)
            if entry is None:
                raise ProtocolError(INTERNAL_ERROR, f"this worker has no tool {job.tool!r}")

            async def progress(params: dict[str, Any]) -> None:
                await server.hub.publish(TASK_IDS, "notifications/progress", params, job.task_id)

            ctx = _job_context(job).for_task(inputs, status, progress)
            meta: dict[str, Any] = {
                PROTOCOL_VERSION_KEY: job.revision,
                CLIENT_CAPABILITIES: job.capabilities,
            }
            if job.progress_token is not None:
                meta["progressToken"] = job.progress_token
            params = pub.CallToolRequestParams.model_validate(
                {"name": job.tool, "arguments": job.arguments, "_meta": meta}
            )
            return plain(await server.dispatch(ctx, "tools/call", params, server.run_tool))

        return work


def _job_context(job: Job) -> Context:
    """A queued task's context on a worker: no connection, the owner's principal."""
    return Context(
        revision=job.revision,
        request_id=job.task_id,
        client_capabilities=pub.ClientCapabilities.model_validate(job.capabilities),
        client_info=None,
        inputs=RetriedInputs({}),
        notify=_nowhere,
        codec=codec_of(job.revision),
        progress_token=job.progress_token,
        principal=owner_principal(job.owner),
    )


async def _nowhere(method: str, params: dict[str, Any]) -> None:
    """A worker's notifications: a task carries none but its progress (sent otherwise)."""


def task_required(name: str, modern: bool) -> ProtocolError:
    """A tool that only runs as a task, called by a client that takes no task."""
    if modern:
        return ProtocolError(
            MISSING_CAPABILITY,
            f"tool {name!r} runs only as a task: declare the {TASKS_EXTENSION} extension",
            {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        )
    return ProtocolError(
        METHOD_NOT_FOUND, f"tool {name!r} must be called as a task (params.task)", {"name": name}
    )


def tasks_of(server: Any) -> TasksExtension:
    """The Tasks extension of `server` (every server has one)."""
    found = server.extensions.get(TASKS_EXTENSION)
    assert isinstance(found, TasksExtension)
    return found
