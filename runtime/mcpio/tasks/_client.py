"""The client's side of tasks: a handle on a task a server runs, in either era.

A handle polls the task at the server's `pollIntervalMs`, answers the questions the task asks
(2026-07-28: `inputRequests` on `tasks/get`, answered through the client's callbacks by
`tasks/update`; 2025-11-25: the server asks them as ordinary requests, which the client's
callbacks answer anyway), cancels it, and gives its result. A handle is made from a task id
alone, so another process (or the same one after a restart) resumes it: `client.task(task_id)`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, cast

import anyio
import pydantic_core

from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, ProtocolError
from mcpio._core.errors import McpError
from mcpio._core.jsonrpc import plain, raise_error
from mcpio._core.protocol_rules import TASKS_EXTENSION
from mcpio.latest import REVISION as PUBLIC_REVISION
from mcpio.latest import public as pub
from mcpio.tasks._engine import tasks_available, tasks_codec
from mcpio.tasks._store import TERMINAL

DEFAULT_POLL_MS = 1000


class TaskCancelled(Exception):
    """The task ended `cancelled`: it has no result."""


class TaskCaller(Protocol):
    """What a handle needs of its client."""

    @property
    def modern(self) -> bool:
        """Whether the client speaks the modern era."""
        ...

    async def task_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A task method's result as plain data (`McpError` for the server's error)."""
        ...

    async def answer_inputs(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """The callbacks' answers to a task's `inputRequests` (public models), by key."""
        ...

    def listen(self, *, task_ids: Sequence[str] = ()) -> AbstractAsyncContextManager[Any]:
        """2026-07-28 `subscriptions/listen` for these tasks' `notifications/tasks`."""
        ...

    def forget_progress(self, token: str | int) -> None:
        """The progress callback of a task's request is no longer needed (the task ended)."""
        ...


class TaskHandle:
    """A task on the server, as the client follows it.

    `status` and `task` are as last seen (`refresh()` reads again).

    Args:
        client: The client the task's methods go through.
        task_id: The task's id.
        task: The task as last seen (None: its id alone).
        progress_token: The token of the request that started it, whose progress callback hears
            the task's `notifications/progress` until the handle sees it end.
    """

    def __init__(
        self,
        client: TaskCaller,
        task_id: str,
        task: Mapping[str, Any] | None = None,
        progress_token: str | int | None = None,
    ):
        self._client = client
        self.task_id = task_id
        self.task: dict[str, Any] = dict(task or {"taskId": task_id})
        self._answered: set[str] = set()
        self._progress_token = progress_token

    def _seen(self, task: dict[str, Any]) -> dict[str, Any]:
        self.task = task
        if self._progress_token is not None and task.get("status") in TERMINAL:
            self._client.forget_progress(self._progress_token)
            self._progress_token = None
        return task

    @property
    def status(self) -> str | None:
        """The task's status as last seen (`working`, `input_required`, `completed`, ...)."""
        return self.task.get("status")

    @property
    def poll_interval(self) -> float:
        """Seconds between polls: the server's `pollIntervalMs` (`pollInterval` in 2025-11-25)."""
        ms = self.task.get("pollIntervalMs", self.task.get("pollInterval"))
        return (ms if isinstance(ms, int) and ms > 0 else DEFAULT_POLL_MS) / 1000

    def __repr__(self) -> str:
        return f"TaskHandle({self.task_id!r}, status={self.status!r})"

    async def refresh(self) -> dict[str, Any]:
        """`tasks/get`: the task as it stands now (modern: with its result, error or questions)."""
        task = await self._client.task_request("tasks/get", {"taskId": self.task_id})
        task.pop("resultType", None)
        task.pop("_meta", None)
        return self._seen(task)

    async def updates(self) -> AsyncIterator[dict[str, Any]]:
        """Yield each change of the task (status or status message) until it is terminal.

        The task is polled at its poll interval; questions it asks meanwhile are answered
        through the callbacks.
        """
        seen: tuple[Any, Any] | None = None
        while True:
            task = await self.refresh()
            now = (task.get("status"), task.get("statusMessage"))
            if now != seen:
                seen = now
                yield task
            if task.get("status") in TERMINAL:
                return
            if task.get("status") == "input_required" and self._client.modern:
                await self._answer(task.get("inputRequests") or {})
                continue
            await anyio.sleep(self.poll_interval)

    async def _answer(self, requests: Mapping[str, Any]) -> None:
        fresh = {k: v for k, v in requests.items() if k not in self._answered}
        if not fresh:
            await anyio.sleep(self.poll_interval)
            return
        parsed = pub.InputRequiredResult.model_validate(
            {"resultType": "input_required", "inputRequests": fresh}
        )
        answers = await self._client.answer_inputs(parsed.inputRequests or {})
        self._answered.update(answers)
        await self._client.task_request(
            "tasks/update", {"taskId": self.task_id, "inputResponses": answers}
        )

    async def result(self) -> pub.CallToolResult:
        """The task's result once it is terminal: a `completed` task's result.

        2026-07-28: it follows the task's `notifications/tasks` on a listen stream (reading it
        again now and then, in case one is lost), and polls where the server refuses that.

        Raises:
            McpError: The JSON-RPC error of a `failed` task.
            TaskCancelled: For a `cancelled` task.
        """
        followed = False
        if self._client.modern:
            try:
                followed = await self._follow()
            except McpError:
                followed = False  # no listening (the server's bus is down, say): poll
        if not followed:
            async for _ in self.updates():
                pass
        task = self.task
        if task.get("status") == "cancelled":
            raise TaskCancelled(task.get("statusMessage") or f"task {self.task_id} was cancelled")
        if not self._client.modern:  # 2025-11-25: the payload comes from tasks/result
            payload = await self._client.task_request("tasks/result", {"taskId": self.task_id})
            return pub.CallToolResult.model_validate({"resultType": "complete", **payload})
        if task.get("status") == "failed":
            error = task.get("error") or {}
            raise McpError(
                int(error.get("code", INTERNAL_ERROR)),
                str(error.get("message", "")),
                error.get("data"),
            )
        return pub.CallToolResult.model_validate({"resultType": "complete", **task["result"]})

    async def _follow(self) -> bool:
        """Wait for the task's end on a listen stream; False when the server does not follow
        this task for us (then the caller polls)."""
        async with self._client.listen(task_ids=[self.task_id]) as changes:
            if self.task_id not in (changes.honoured.get("taskIds") or ()):
                return False
            task = await self.refresh()  # after the acknowledgement: nothing is missed
            while task.get("status") not in TERMINAL:
                if task.get("status") == "input_required":
                    await self._answer(task.get("inputRequests") or {})
                notice = None
                with anyio.move_on_after(max(5.0, 10 * self.poll_interval)):
                    notice = await anext(changes, None)
                    if notice is None:  # the stream ended: poll the rest
                        return False
                if notice is None:
                    task = await self.refresh()
                else:
                    task = self._seen(dict(notice.params))
        return True

    async def cancel(self) -> None:
        """Ask the server to stop the task (`tasks/cancel`); it may still end otherwise.

        A task already terminal is left as it is.
        """
        try:
            await self._client.task_request("tasks/cancel", {"taskId": self.task_id})
        except McpError:
            if self._client.modern:
                raise
            await self.refresh()  # 2025-11-25 refuses to cancel a terminal task
            if self.status not in TERMINAL:
                raise


def created_task(raw: bytes) -> dict[str, Any] | None:
    """The task of a response answering with one, as plain data; None for any other response.

    2026-07-28: a result of `resultType: "task"`; 2025-11-25: a `CreateTaskResult`.
    """
    if b'"task' not in raw:
        return None
    frame = pydantic_core.from_json(raw)
    result = frame.get("result") if type(frame) is dict else None
    if type(result) is not dict:
        return None
    if result.get("resultType") == "task" and type(result.get("taskId")) is str:
        return {k: v for k, v in result.items() if k not in ("resultType", "_meta")}
    task = result.get("task")
    if type(task) is dict and type(task.get("taskId")) is str and "content" not in result:
        return task
    return None


def task_codec(codec: Codec) -> Codec:
    """The codec a task method goes through.

    2026-07-28's with the Tasks extension; a legacy revision's own.

    Raises:
        ProtocolError: -32601, raised locally, for a modern revision without the extension.
    """
    if codec.era != "modern":
        return codec
    if not tasks_available(codec.revision):
        raise ProtocolError(
            METHOD_NOT_FOUND,
            f"revision {codec.revision} has no {TASKS_EXTENSION} extension "
            "(mcp_wire.EXTENSION_FITS says why)",
        )
    return tasks_codec(codec.revision)


def task_result(codec: Codec, method: str, raw: bytes) -> dict[str, Any]:
    """A task method's response as plain data.

    `tasks/result` is projected to the public `CallToolResult`'s members.

    Args:
        codec: The codec the method went through (`task_codec`).
        method: The task method the response answers.
        raw: The response, as received.

    Raises:
        McpError: The server's error.
    """
    response = codec.decode_response(raw, method)
    raise_error(response)
    result = plain(response.result)
    if method == "tasks/result" and codec.revision != PUBLIC_REVISION:
        result.pop("_meta", None)
        result = plain(codec.to_public("tools/call", result, "result"))
    return cast(dict[str, Any], result)


class TaskTools:
    """Which tools may run as tasks, for 2025-11-25 (`execution.taskSupport`).

    The public models lack `execution.taskSupport`: it is read from `tools/list` as `request`
    (a task method call) gives it.
    """

    def __init__(self, request: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]):
        self._request = request
        self.support: dict[str, str] = {}  # tool name -> execution.taskSupport
        self.listed = False
        self._listing = anyio.Lock()  # concurrent start_tool calls list the tools once

    async def list(self, codec: Codec, cursor: str | None) -> pub.ListToolsResult:
        """One page of `tools/list`, keeping each tool's `execution.taskSupport`."""
        listed = await self._request("tools/list", {} if cursor is None else {"cursor": cursor})
        self.listed = True
        for tool in listed.get("tools") or ():
            support = (tool.get("execution") or {}).get("taskSupport")
            if isinstance(support, str):
                self.support[tool.get("name")] = support
        return codec.to_public("tools/list", listed, "result")

    async def may_be_task(self, codec: Codec, name: str) -> bool:
        """Whether the server runs tool calls as tasks and this tool may be one.

        From the last listing; every page is listed once if the tool is unknown.
        """
        async with self._listing:  # the others wait for the listing, not guess
            if name not in self.support and not self.listed:
                self.listed = True
                if "tasks/get" in codec.methods:
                    cursor: str | None = None
                    while True:
                        cursor = (await self.list(codec, cursor)).nextCursor
                        if cursor is None:
                            break
        return self.support.get(name) in ("optional", "required")
