"""The task methods as a server answers them, per era: 2026-07-28's Tasks extension
(`tasks/get`, `tasks/update`, `tasks/cancel`, only for requests that declare the extension)
and 2025-11-25's native tasks (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`).
Results are plain JSON data in the revision's own shape."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, cast

import mcp_wire
from mcpio.latest import MISSING_CAPABILITY
from mcpio.tasks.engine import TASKS_EXTENSION, TaskEngine, legacy_task, modern_task
from mcpio.tasks.store import TaskRecord
from mcpio.wire.codec import Codec
from mcpio.wire.errors import INTERNAL_ERROR, INVALID_PARAMS, ProtocolError

MODERN_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
LEGACY_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
RELATED_TASK = "io.modelcontextprotocol/related-task"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


@functools.cache
def tasks_available(revision: str) -> bool:
    """Whether a modern revision was generated with the Tasks extension: a revision newer than
    the extension gets it only where it still fits (`mcp_wire.EXTENSION_FITS` says why not)."""
    return revision in mcp_wire.EXTENSIONS.get(TASKS_EXTENSION, ())


@functools.cache
def tasks_codec(revision: str) -> Codec:
    """The codec of a modern revision with the Tasks extension (its frames and results)."""
    return mcp_wire.codec(revision).with_extensions(TASKS_EXTENSION)


def declares_tasks(capabilities: Any) -> bool:
    """Whether per-request client capabilities (a model or plain data) name the extension."""
    if not isinstance(capabilities, Mapping):
        extensions = getattr(capabilities, "extensions", None)
    else:
        extensions = capabilities.get("extensions")  # pyright: ignore[reportUnknownMemberType]
    return isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions


def missing_extension(what: str) -> ProtocolError:
    return ProtocolError(
        MISSING_CAPABILITY,
        f"{what} needs the client capability extension {TASKS_EXTENSION!r}",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def not_found(task_id: str) -> ProtocolError:
    # Unknown, expired and another principal's tasks read alike.
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
                INVALID_PARAMS, "params.inputResponses must be an object",
                {"field": "params.inputResponses"},
            )  # fmt: skip
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
