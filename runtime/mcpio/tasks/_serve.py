"""The task methods as a server answers them, per era: 2026-07-28's Tasks extension
(`tasks/get`, `tasks/update`, `tasks/cancel`, only for requests that declare the extension)
and 2025-11-25's native tasks (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`).
Results are plain JSON data in the revision's own shape (`WireResult`). Also what a connection
offers a request that may become a task (`legacy_offer`, `modern_offer`) and how a task is
written as the request's answer (`created`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

import pydantic_core
from pydantic import BaseModel

import mcp_wire
from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.errors import INTERNAL_ERROR, INVALID_PARAMS, ProtocolError
from mcpio._core.context import SentInputs
from mcpio._core.ext_methods import CLIENT_CAPABILITIES
from mcpio._core.handlers import WireResult
from mcpio._core.hub import TASK_IDS, Hub
from mcpio._core.jsonrpc import plain
from mcpio._core.negotiate import codec_of
from mcpio.latest import MISSING_CAPABILITY
from mcpio.tasks._engine import (
    TASKS_EXTENSION,
    TaskEngine,
    TaskOffer,
    legacy_task,
    modern_task,
    tasks_codec,
)
from mcpio.tasks._owner import owner_of
from mcpio.tasks._store import TaskRecord

if TYPE_CHECKING:
    from mcpio._core.context import Context

MODERN_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
LEGACY_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
RELATED_TASK = "io.modelcontextprotocol/related-task"
# What a server with task tools offers a 2025-11-25 client (task-augmented tools/call).
LEGACY_TASKS_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


def declares_tasks(capabilities: Any) -> bool:
    """Whether per-request client capabilities (a model or plain data) name the extension."""
    if not isinstance(capabilities, Mapping):
        extensions = getattr(capabilities, "extensions", None)
    else:
        extensions = capabilities.get("extensions")  # pyright: ignore[reportUnknownMemberType]
    return isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions


def missing_extension(what: str) -> ProtocolError:
    """The -32021 error for a client that has not declared the Tasks extension."""
    return ProtocolError(
        MISSING_CAPABILITY,
        f"{what} needs the client capability extension {TASKS_EXTENSION!r}",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def not_found(task_id: str) -> ProtocolError:
    # Unknown, expired and another principal's tasks read alike.
    """The -32602 error for a task that is unknown, expired or another principal's (alike)."""
    return ProtocolError(
        INVALID_PARAMS, "Failed to retrieve task: Task not found", {"taskId": task_id}
    )


def _found(record: TaskRecord | None, task_id: str) -> TaskRecord:
    if record is None:
        raise not_found(task_id)
    return record


def _object(value: Any) -> Mapping[str, Any] | None:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def _task_id(params: Any) -> str:
    task_id = (_object(params) or {}).get("taskId")
    if type(task_id) is not str:
        raise ProtocolError(
            INVALID_PARAMS, "params.taskId must be a string", {"field": "params.taskId"}
        )
    return task_id


async def modern(engine: TaskEngine, method: str, params: Any, owner: str | None) -> dict[str, Any]:
    """A 2026-07-28 task method's result (`params` as plain data, its `_meta` envelope
    included)."""
    params = _object(params)
    if params is None:
        raise ProtocolError(INVALID_PARAMS, "params must be an object", {"field": "params"})
    if not declares_tasks((_object(params.get("_meta")) or {}).get(CLIENT_CAPABILITIES)):
        raise missing_extension(method)
    task_id = _task_id(params)
    if method == "tasks/get":
        record = _found(await engine.get(task_id, owner), task_id)
        return {**modern_task(record, detailed=True), "resultType": "complete"}
    if method == "tasks/update":
        responses = _object(params.get("inputResponses"))
        if responses is None:
            raise ProtocolError(
                INVALID_PARAMS,
                "params.inputResponses must be an object",
                {"field": "params.inputResponses"},
            )
        _found(await engine.update(task_id, owner, dict(responses)), task_id)
    else:
        _found(await engine.cancel(task_id, owner), task_id)
    return {"resultType": "complete"}  # an empty acknowledgement, terminal task or not


async def legacy(
    engine: TaskEngine, method: str, params: Mapping[str, Any], owner: str | None
) -> tuple[dict[str, Any] | None, TaskRecord | None]:
    """A 2025-11-25 task method: its result, or (for `tasks/result` of a completed task) None
    and the record whose stored result the caller projects to its revision."""
    if method == "tasks/list":
        cursor = params.get("cursor")
        try:
            records, rest = await engine.list(owner, cursor if type(cursor) is str else None)
        except ValueError:
            raise ProtocolError(INVALID_PARAMS, "invalid cursor", {"cursor": cursor}) from None
        listed: dict[str, Any] = {"tasks": [legacy_task(r) for r in records]}
        if rest is not None:
            listed["nextCursor"] = rest
        return listed, None
    task_id = _task_id(params)
    if method == "tasks/get":
        return legacy_task(_found(await engine.get(task_id, owner), task_id)), None
    if method == "tasks/cancel":
        record = _found(await engine.get(task_id, owner), task_id)
        if record.terminal:
            raise ProtocolError(
                INVALID_PARAMS, f"Cannot cancel task: already {record.status}", {"taskId": task_id}
            )
        return legacy_task(_found(await engine.cancel(task_id, owner, wait=True), task_id)), None
    # tasks/result: waits for a terminal status
    record = _found(await engine.wait(task_id, owner), task_id)
    if record.status == "failed":
        error = record.error or {}
        raise ProtocolError(
            int(error.get("code", INTERNAL_ERROR)),
            str(error.get("message", "failed")),
            error.get("data"),
        )
    if record.status == "cancelled":
        raise ProtocolError(INVALID_PARAMS, "Task was cancelled", {"taskId": task_id})
    return None, record


# ---------------------------------------------------------------------- the handlers


def handler(engine: Callable[[], TaskEngine], method: str) -> Callable[[Context, Any], Any]:
    """The handler of task method `method` (an entry of the server's handler table), in the
    request's era; `engine`: the server's task engine when asked. Its params and result are
    plain JSON data (the Tasks extension and 2025-11-25's tasks are outside the public models)."""

    async def serve(ctx: Context, params: Any) -> WireResult:
        owner = owner_of(ctx)
        if ctx.modern:
            return WireResult(await modern(engine(), method, params, owner))
        result, record = await legacy(engine(), method, params, owner)
        if result is None:
            assert record is not None  # tasks/result of a completed task
            result = stored_result(codec_of(ctx.revision), record)
        return WireResult(result)

    return serve


def stored_result(codec: Codec, record: TaskRecord) -> dict[str, Any]:
    """2025-11-25 `tasks/result`: the task's stored result in the revision's shape, tagged with
    the task it came from."""
    result: dict[str, Any] = plain(codec.from_public(record.method, record.result or {}, "result"))
    result["_meta"] = {**(result.get("_meta") or {}), RELATED_TASK: {"taskId": record.task_id}}
    return result


def read_modern(version: str, method: str, raw: bytes) -> dict[str, Any]:
    """A 2026-07-28 task request's params as plain data, its envelope checked by the Tasks
    extension's codec (`tasks/update`'s `inputResponses` are read leniently: unknown keys)."""
    if method != "tasks/update":
        tasks_codec(version).decode(raw)
    params: Any = pydantic_core.from_json(raw).get("params")
    return params


def legacy_params(params: BaseModel | None) -> dict[str, Any]:
    """A 2025-11-25 task request's params as plain data."""
    return params.model_dump(mode="json", by_alias=True, exclude_unset=True) if params else {}


def mark_task_tools(listed: Any, revision: str, support: Callable[[str], str | None]) -> None:
    """2025-11-25 `tools/list`: each task tool's `execution.taskSupport` (`support`: a tool's,
    by name; None: left unmarked)."""
    execution = mcp_wire.revision(revision).ToolExecution
    for tool in getattr(listed, "tools", None) or ():
        taken = support(tool.name)
        if taken is not None:
            tool.execution = execution.model_validate({"taskSupport": taken})


# ---------------------------------------------------------------------- offers


class Asking(Protocol):
    """What a legacy task offer needs of the session that made the request."""

    @property
    def closed(self) -> bool:
        """Whether the session has closed."""
        ...

    async def ask_client(self, method: str, params: dict[str, Any]) -> BaseModel:
        """Send the client a request on the session and wait for its answer."""
        ...

    async def send(self, data: bytes) -> None:
        """Write a frame on the session."""
        ...

    async def send_notification(self, codec: Codec, method: str, params: dict[str, Any]) -> None:
        """Write a notification with public params, in `codec`'s revision."""
        ...


def legacy_offer(session: Asking, codec: Codec, task: Any) -> TaskOffer:
    """2025-11-25, a task-augmented request: the task's questions are real requests on the
    session, tagged with the task they serve; its status changes and progress are told there."""
    ttl = getattr(task, "ttl", None)

    def inputs(task_id: str) -> SentInputs:
        related = {RELATED_TASK: {"taskId": task_id}}

        async def ask(method: str, params: dict[str, Any]) -> BaseModel:
            meta = {**(params.get("_meta") or {}), **related}
            return await session.ask_client(method, {**params, "_meta": meta})

        return SentInputs(ask)

    async def watch(record: TaskRecord) -> None:
        if not session.closed:
            frame = codec.notification("notifications/tasks/status", legacy_task(record))
            await session.send(codec.encode(frame))

    async def progress(task_id: str, params: dict[str, Any]) -> None:
        if not session.closed:
            await session.send_notification(codec, "notifications/progress", params)

    return TaskOffer(ttl if type(ttl) is int else None, inputs, watch, progress)


def modern_offer(hub: Hub) -> TaskOffer:
    """2026-07-28, a request declaring the extension: a task's progress goes to the listen
    streams following it (on any instance)."""

    async def progress(task_id: str, params: dict[str, Any]) -> None:
        await hub.publish(TASK_IDS, "notifications/progress", params, task_id)

    return TaskOffer(progress=progress)
