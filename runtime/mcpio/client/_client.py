"""The client: typed calls in the public (latest revision's) models, whatever the server speaks.

`Client` is the facade; its parts live beside it: reaching the server and agreeing on a revision
(`mcpio.client._connect`), the request frames and their fast path (`mcpio.client._frames`), what
the server asks answered through the callbacks, in both eras, and the `input_required` rounds
(`mcpio.client._inputs`), listening and notification routing (`mcpio.client._listen`), tasks
(`mcpio.tasks._client`) and structured output (`mcpio._core.structured`).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

import anyio
import anyio.abc
import pydantic_core
from pydantic import BaseModel

import mcp_wire
from mcp_wire_runtime._peek import Peek
from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.errors import INTERNAL_ERROR, ProtocolError
from mcpio._core import ext_methods
from mcpio._core.errors import ConnectionClosed, McpError, RequestTimeout
from mcpio._core.jsonrpc import RequestId, answered, error_frame, error_of, plain, raise_error
from mcpio._core.negotiate import peek_any
from mcpio._core.protocol_rules import MAX_INPUT_ROUNDS as MAX_INPUT_ROUNDS  # (named here too)
from mcpio._core.protocol_rules import TASKS_EXTENSION
from mcpio._core.session import Session
from mcpio._core.structured import checked_result
from mcpio._core.transport import Transport
from mcpio.apps import UI_EXTENSION
from mcpio.apps import client_capability as apps_capability
from mcpio.auth._bearer import BearerToken
from mcpio.auth._browser import browser_oauth
from mcpio.client._connect import checked_target, negotiate, open_transport, principal, server_key
from mcpio.client._entries import configured
from mcpio.client._frames import DECLARING, RequestFrames, with_tasks
from mcpio.client._frames import LOG_LEVEL_KEY as LOG_LEVEL_KEY  # (named here too)
from mcpio.client._inputs import (
    Callbacks,
    Elicitation,
    ElicitationUrl,
    Roots,
    Sampling,
    answer,
    answer_all,
    input_required,
    input_rounds,
    url_elicitations,
)
from mcpio.client._listen import Listeners, Notice, Subscription, listen_filter
from mcpio.client._result_cache import CHANGED, ResultCache
from mcpio.latest import HEADER_MISMATCH
from mcpio.latest import REVISION as PUBLIC_REVISION
from mcpio.latest import public as pub
from mcpio.tasks._client import TaskHandle, TaskTools, created_task, task_codec, task_result
from mcpio.tasks._engine import tasks_available

if TYPE_CHECKING:
    import httpx

    from mcpio.middleware.telemetry import ClientTracing
    from mcpio.server._server import Server
    from mcpio.transports.http_client import Auth

log = logging.getLogger("mcpio")

T = TypeVar("T")

Progress = Callable[[float, float | None, str | None], Awaitable[None] | None]
LogHandler = Callable[[pub.LoggingMessageNotificationParams], Awaitable[None] | None]

__all__ = [
    "Client",
    "Elicitation",
    "ElicitationUrl",
    "LogHandler",
    "Notice",
    "Progress",
    "Roots",
    "Sampling",
    "Subscription",
]


class Client:
    """An MCP client for every pinned revision, both eras: `async with Client(target) as client`.

    `target` is a URL (Streamable HTTP), a `.py` file or a command line (stdio), a `Server` (in
    memory) or a `Transport`. `mode="auto"` probes a 2026-07-28 server with `server/discover` and
    falls back to `initialize`; `"legacy"` or a revision string pins it. The callbacks
    (`elicitation`, `on_elicit_url`, `sampling`, `roots`) answer the server's questions, in
    either era; `on_log` and `on_notice` receive its notifications. `tasks=True` takes tasks.
    A stdio server inherits only an allow-list of this process's environment (HOME, PATH, the
    locale, ...: `mcpio.transports.stdio.server_environment`); `env` adds to it.

    Args:
        target: A URL (Streamable HTTP; a `user:password@` in it is kept apart, never shown), a
            `.py` file or a command line (stdio), a `Server` (in memory), a `Transport`, or an
            `mcpServers` configuration (`{"mcpServers": {...}}`, as `from_config` reads it:
            its only server as its entry says, several mounted under their names).
        mode: "auto" (probe with `server/discover`, fall back to `initialize`), "legacy", or a
            revision string to pin.
        name: This client's name, in its `Implementation` info.
        version: This client's version, likewise.
        elicitation: Answers the server's form-mode elicitations.
        on_elicit_url: Answers the server's URL-mode elicitations.
        sampling: Answers the server's sampling requests (`sampling/createMessage`).
        roots: The roots to give the server: a callback, or the roots themselves.
        on_log: Receives the server's log messages.
        on_notice: Receives the server's other notifications (a `Notice`), those no listener
            takes.
        timeout: Seconds a request waits for its response (None: no limit); a request's own
            `timeout` overrides it.
        probe_timeout: Seconds the `server/discover` probe of `mode="auto"` waits.
        env: Environment variables a stdio server gets beyond the allow-list.
        cwd: A stdio server's working directory.
        stderr: Where a stdio server's stderr goes (None: to ours).
        auth: The HTTP auth object (`OAuth`, ...), a fixed bearer token as a string, or
            "oauth": the OAuth flow with this machine's browser (`mcpio.auth._browser`).
        headers: Headers sent on every HTTP request.
        http: For an http(s) target, the `httpx.AsyncClient` to use (TLS, proxies, mocks).
        tasks: Take tasks: declare the Tasks extension (legacy: the tasks capability).
        cache: The cache of list results, kept as the server's hints allow (a `ResultCache`;
            True: one of its own; False: none).
        apps: Render MCP Apps: declare `io.modelcontextprotocol/ui` (`mcpio.apps`).
    """

    tracing: ClientTracing | None = (
        None  # a span per call (`mcpio.middleware.telemetry`, the otel extra)
    )

    def __init__(
        self,
        target: str | Sequence[str] | Transport | Server | Mapping[str, Any],
        *,
        mode: str = "auto",
        name: str = "mcpio",
        version: str = "0.1.0",
        elicitation: Elicitation | None = None,
        on_elicit_url: ElicitationUrl | None = None,
        sampling: Sampling | None = None,
        roots: Roots | Sequence[Any] | None = None,
        on_log: LogHandler | None = None,
        on_notice: Callable[[Notice], Awaitable[None] | None] | None = None,
        timeout: float | None = 120.0,
        probe_timeout: float = 10.0,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: Any = None,
        auth: Auth | str | None = None,
        headers: Mapping[str, str] | None = None,
        http: httpx.AsyncClient | None = None,
        tasks: bool = False,
        cache: ResultCache | bool = True,
        apps: bool = False,
    ) -> None:
        if isinstance(target, Mapping):  # an `mcpServers` configuration, as `from_config`'s
            target, headers, env, cwd = configured(target, headers, env, cwd)
        # a URL's `user:password@` kept apart, never shown (`vars`, reprs, the cache's key)
        target, self._basic = checked_target(target, mode, auth, headers)
        auth = browser_oauth() if auth == "oauth" else auth  # FastMCP's: the browser's flow
        self._target = target
        self.mode = mode
        # list results kept as the server's hints allow (mcpio.client._result_cache); False: none
        self.cache = ResultCache() if cache is True else cache if cache is not False else None
        self._server_key = server_key(target)
        self._principal = principal(auth, headers or {}, self._basic)
        self.info = pub.Implementation(name=name, version=version)
        self._callbacks = Callbacks(elicitation, on_elicit_url, sampling, roots)
        self._on_log, self._on_notice = on_log, on_notice
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self._spawn = {"env": env, "cwd": cwd, "stderr": stderr}
        self._auth: Auth | None = BearerToken(auth) if isinstance(auth, str) else auth
        self._headers = dict(headers or {})  # on every HTTP request
        self._http = http  # for an http(s) target: the httpx client to use (TLS, proxies, mocks)
        self.tasks = tasks  # takes tasks: declares the extension (legacy: the tasks capability)
        self.apps = apps  # renders MCP Apps: declares io.modelcontextprotocol/ui (mcpio.apps)
        self.codec: Codec | None = None
        self.revision: str | None = None
        self.server_info: pub.Implementation | None = None
        self.server_capabilities: pub.ServerCapabilities | None = None
        self.instructions: str | None = None
        self._session: Session | None = None
        self._stack = AsyncExitStack()
        self._progress: dict[RequestId, Progress] = {}
        self._frames = RequestFrames(self._envelope)
        self._listeners = Listeners()
        self.output_schemas: dict[str, dict[str, Any]] = {}  # by tool name, from tools/list
        self._tools_listed = False  # (a tool's x-mcp-header params are learned from the list)
        self._task_tools = TaskTools(self.task_request)  # 2025-11-25: tools' taskSupport

    def like(self, **callbacks: Any) -> Client:
        """Return a new, unconnected client of the same server with the same settings.

        It has this one's mode, info, timeouts, process options, credentials, headers, tasks,
        cache, apps and log level, and `callbacks` (`elicitation`, `sampling`, `roots`,
        `on_log`, `on_notice`, ...) in place of this one's. This client is left as it is (a
        proxy connects such copies).
        """
        made = Client(
            self._target,
            mode=self.mode,
            name=self.info.name,
            version=self.info.version,
            timeout=self.timeout,
            probe_timeout=self.probe_timeout,
            **self._spawn,
            auth=self._auth,
            headers=self._headers or None,
            http=self._http,
            tasks=self.tasks,
            cache=self.cache if self.cache is not None else False,
            apps=self.apps,
            **callbacks,
        )
        made._basic = self._basic  # the URL's credentials, kept apart from the target
        made.log_level = self.log_level
        if "tracing" in vars(self):
            made.tracing = self.tracing
        return made

    # ------------------------------------------------------------------ connecting

    @property
    def modern(self) -> bool:
        """Whether the connection speaks the modern era (2026-07-28: stateless, no session)."""
        return self.codec is not None and self.codec.era == "modern"

    @property
    def log_level(self) -> str | None:
        """The level of the log messages asked for (modern: on every request)."""
        return self._frames.log_level

    @log_level.setter
    def log_level(self, level: str | None) -> None:
        self._frames.log_level = level

    def capabilities(self, modern: bool, revision: str | None = None) -> dict[str, Any]:
        """The capabilities this client declares.

        Args:
            modern: Whether for the modern era (2026-07-28).
            revision: A modern request's revision, which may lack the Tasks extension.
        """
        caps: dict[str, Any] = {}
        callbacks = self._callbacks
        modes = {"form": callbacks.elicitation, "url": callbacks.elicit_url}
        if any(modes.values()):
            caps["elicitation"] = {mode: {} for mode, callback in modes.items() if callback}
        if callbacks.sampling is not None:
            caps["sampling"] = {}
        if callbacks.roots is not None:
            caps["roots"] = {} if modern else {"listChanged": True}
        if self.tasks and modern and (revision is None or tasks_available(revision)):
            caps["extensions"] = {TASKS_EXTENSION: {}}
        elif self.tasks:
            caps["tasks"] = {}  # no request of ours runs as a task (nothing to list or cancel)
        if self.apps:  # both eras: 2025-11-25 hosts declare it too (an extra member there)
            caps.setdefault("extensions", {})[UI_EXTENSION] = apps_capability()
        return caps

    @staticmethod
    def run(main: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run `main(*args)` (an async function that uses clients) on an event loop of its own.

        The loop is uvloop's where it is installed (the `http` extra brings it), as
        `Server.run_stdio` does, else asyncio's. Inside a running loop, `async with
        Client(...)` keeps the caller's.
        """
        uvloop = importlib.util.find_spec("uvloop") is not None
        return anyio.run(main, *args, backend_options={"use_uvloop": uvloop})

    async def __aenter__(self) -> Client:
        try:
            transport = await open_transport(
                self._target,
                self._stack,
                headers=self._headers,
                auth=self._auth,
                http=self._http,
                spawn=self._spawn,
                basic=self._basic,
            )
            self._session = Session(
                transport,
                _FromServer(
                    self._on_request,
                    self._on_notification,
                    self._on_batch,
                    self._error_frame,
                    self._on_close,
                ),
            )
            tasks = await self._stack.enter_async_context(anyio.create_task_group())
            self._stack.push_async_callback(transport.aclose)
            await tasks.start(self._session.run)
            await negotiate(self)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._listeners.close()
        await self._stack.aclose()

    def _use(self, revision: str) -> None:
        self.revision = revision
        self.codec = mcp_wire.codec(revision)

    # ------------------------------------------------------------------ requests

    async def _send(self, data: bytes) -> None:
        assert self._session is not None
        await self._session.send(data)

    def _envelope(self, codec: Codec) -> dict[str, Any]:
        """What a modern request's `_meta` envelope says of this client (nothing, legacy)."""
        if codec.era != "modern":
            return {}
        declaring = DECLARING.get()  # (a proxy's: its own client's)
        return {
            "client_capabilities": (
                self.capabilities(True, codec.revision) if declaring is None else declaring
            ),
            "client_info": self.info,
            "protocol_version": codec.revision,
        }

    async def _exchange(
        self,
        codec: Codec,
        method: str,
        params: Any,
        timeout: float | None,
        id: int | None = None,
        *,
        cancel: bool = True,
        tasks: bool = False,
    ) -> bytes:
        """Send one request and return the raw response; a timeout or a cancelled caller cancels
        the request on the wire too. `tasks`: a modern request declares the Tasks extension."""
        session = self._session
        if session is None:
            raise ConnectionClosed("the client is not connected")
        id = id if id is not None else session.next_id()
        envelope = self._envelope(codec)
        if tasks and envelope:
            envelope["client_capabilities"] = with_tasks(envelope)
        frame = codec.encode(codec.request(method, params, id=id, **envelope))
        try:
            return await session.request(id, frame, timeout)
        except BaseException as exc:
            await self._given_up(codec, id, exc, cancel)
            raise

    async def _given_up(self, codec: Codec, id: int, exc: BaseException, cancel: bool) -> None:
        """A request that ended without its response: a timeout (when `cancel`) or a cancelled
        caller cancels it on the wire too."""
        if isinstance(exc, RequestTimeout):
            if cancel:
                await self._cancel(codec, id, "timed out")
        elif isinstance(exc, anyio.get_cancelled_exc_class()):
            with anyio.CancelScope(shield=True):
                await self._cancel(codec, id, "cancelled by the caller")

    async def _cancel(self, codec: Codec, id: RequestId, reason: str) -> None:
        if "notifications/cancelled" not in codec.notifications:
            return
        frame = codec.notification("notifications/cancelled", {"requestId": id, "reason": reason})
        try:
            await self._send(codec.encode(frame))
        except ConnectionClosed:
            pass

    async def request(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Progress | None = None,
        task: Mapping[str, Any] | None = None,
    ) -> Any:
        """Send any client->server method: public params in, the public result out.

        A modern server's `input_required` answers are resolved through the callbacks, then
        retried. A task answered instead of a result (with `Client(tasks=True)`, or `task`)
        comes back as a `TaskHandle`.

        Args:
            method: The method's name (`tools/call`, ...).
            params: Its params, a model or plain data.
            timeout: Seconds to wait for the response; None: the client's `timeout`.
            progress: Called with each progress notification (progress, total, message).
            task: 2025-11-25's task augmentation (`params.task`) to send (2026-07-28: the Tasks
                extension declared on this request alone).
        """
        codec = self.codec
        if codec is None or self._session is None:
            raise ConnectionClosed("the client is not connected")
        if type(params) is dict:  # (the common case, without the ABC checks below)
            data: Any = dict(params)
        else:
            data = plain(params) or {}
            data = dict(data) if isinstance(data, Mapping) else data
        timeout = self.timeout if timeout is None else timeout
        if self.tracing is not None and not self.tracing.active():
            traced = self.tracing.request
            return await traced(self, method, data, timeout=timeout, progress=progress, task=task)
        result = await self._round(codec, method, data, timeout, progress, task)
        if not input_required(type(result)):
            return result

        async def again(retry: dict[str, Any]) -> Any:
            return await self._round(codec, method, retry, timeout, progress, task)

        return await input_rounds(method, data, result, again, self._callbacks)

    async def _round(
        self,
        codec: Codec,
        method: str,
        data: Any,
        timeout: float | None,
        progress: Progress | None,
        task: Mapping[str, Any] | None,
    ) -> Any:
        """One round of a request: its public result (maybe `input_required`), or the
        `TaskHandle` of the task the server made of it."""
        session = self._session
        if session is None:
            raise ConnectionClosed("the client is not connected")
        id = session.next_id()
        if self.tracing is not None:
            self.tracing.sent(id)
        kept = False  # a task's progress goes on coming on its request's token
        if progress is not None:
            self._progress[id] = progress
        frame = self._frames.build(codec, method, data, id, progress is not None, task)
        try:
            raw = await session.request(id, frame, timeout)
        except BaseException as exc:
            await self._given_up(codec, id, exc, True)
            raise
        else:
            if self.tasks or task is not None:
                created = created_task(raw)
                if created is not None:
                    kept = progress is not None
                    return TaskHandle(self, created["taskId"], created, id if kept else None)
        finally:
            if progress is not None and not kept:
                self._progress.pop(id, None)
        response = codec.decode_response(raw, method)
        if error_of(response) is not None:
            await url_elicitations(self._callbacks, error_of(response))
            raise_error(response)
        result = response.result
        if codec.revision != PUBLIC_REVISION:
            result = codec.public_result(method, result, raw)
        return result

    # ------------------------------------------------------------------ tasks

    async def answer_inputs(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """A task's questions answered through the callbacks (see `TaskHandle`)."""
        return await answer_all(self._callbacks, requests)

    async def task_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a task method (`tasks/get`, ...) and return its result as plain data.

        On 2026-07-28 it goes through the codec with the Tasks extension (and every other
        extension this client declares).
        """
        codec = self.codec
        if codec is None or self._session is None:
            raise ConnectionClosed("the client is not connected")
        codec = task_codec(codec)
        declared = self.capabilities(codec.era == "modern", codec.revision).get("extensions")
        codec = codec.with_extensions(*(key for key in declared or () if key in codec.extensions))
        raw = await self._exchange(codec, method, params, self.timeout, tasks=True)
        return task_result(codec, method, raw)

    async def list_tasks(self, cursor: str | None = None) -> dict[str, Any]:
        """List the tasks the server lets this client see (2025-11-25 `tasks/list`).

        They come as plain data (`tasks`, and `nextCursor`). 2026-07-28 has no such method
        (-32601, raised locally).
        """
        return await self.task_request("tasks/list", _cursor(cursor))

    def task(self, task_id: str) -> TaskHandle:
        """A handle on a task known by its id (one started earlier, maybe by another process)."""
        return TaskHandle(self, task_id)

    def forget_progress(self, token: RequestId) -> None:
        """A task kept its request's progress token until now, the end of it."""
        self._progress.pop(token, None)

    # ------------------------------------------------------------------ typed calls

    async def discover(self, *, timeout: float | None = None) -> pub.DiscoverResult:
        """`server/discover` (2026-07-28): the server's revisions, capabilities and info."""
        return self._discovered(await self.request("server/discover", {}, timeout=timeout))

    def _discovered(self, result: pub.DiscoverResult) -> pub.DiscoverResult:
        self.server_capabilities = result.capabilities
        self.instructions = result.instructions
        if result.meta is not None:
            self.server_info = result.meta.io_modelcontextprotocol_serverInfo
        return result

    async def extension_request(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Send a request of an extension outside the revision's schema, and return its result.

        Skills' methods, or your own extension's (`mcpio.server.Extension`); params and result
        are plain data. A 2026-07-28 request carries the client's `_meta` envelope.

        Raises:
            McpError: The server answered with a JSON-RPC error.
            ConnectionClosed: The client is not connected.
        """
        session, codec = self._session, self.codec
        if session is None or codec is None:
            raise ConnectionClosed("the client is not connected")
        data: dict[str, Any] = dict(params or {})
        if codec.era == "modern":
            data["_meta"] = {
                **(data.get("_meta") or {}),
                ext_methods.PROTOCOL_VERSION: codec.revision,
                ext_methods.CLIENT_CAPABILITIES: self.capabilities(True, codec.revision),
                ext_methods.CLIENT_INFO: self.info.model_dump(mode="json", exclude_unset=True),
            }
        id = session.next_id()
        frame = {"jsonrpc": "2.0", "id": id, "method": method, "params": data}
        answer = pydantic_core.from_json(
            await session.request(id, pydantic_core.to_json(frame), self.timeout)
        )
        answer = answer if type(answer) is dict else {}
        error, result = answer.get("error"), answer.get("result")
        if type(error) is dict:
            code = error.get("code")
            raise McpError(
                code if type(code) is int else -32603,
                str(error.get("message") or ""),
                error.get("data"),
            )
        if type(result) is not dict:
            raise McpError(-32603, f"the answer to {method} has no result object")
        return result

    async def ping(self) -> None:
        """Legacy only (2026-07-28 removed it): a ProtocolError -32601, raised locally."""
        await self.request("ping")

    async def list_tools(self, cursor: str | None = None) -> pub.ListToolsResult:
        """Every tool, the server's pages followed; with `cursor`, that one page.

        Likewise `list_resources`, `list_resource_templates` and `list_prompts`; their pages
        come from `cache` while the server's `ttlMs` allows.
        """
        if self.tasks and self.codec is not None and "tasks/get" in self.codec.methods:
            result = await self._listing("tools", cursor, self._list_task_tools)
        else:
            result = await self._listing("tools", cursor, self._page_of("tools/list"))
        self._tools_listed = True
        for tool in result.tools:
            if tool.outputSchema is not None:
                self.output_schemas[tool.name] = plain(tool.outputSchema)
            else:
                self.output_schemas.pop(tool.name, None)
        return result

    async def _list_task_tools(self, cursor: str | None) -> pub.ListToolsResult:
        """2025-11-25 tools/list, keeping each tool's `execution.taskSupport` (the public
        models have none)."""
        assert self.codec is not None
        return await self._task_tools.list(self.codec, cursor)

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        timeout: float | None = None,
    ) -> pub.CallToolResult: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[T],
        progress: Progress | None = None,
        timeout: float | None = None,
    ) -> T: ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: Any = None,
        progress: Progress | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Call a tool and return its result, or with `result_type` its typed value.

        With `result_type`, the typed value of its `structuredContent` (unwrapped from
        `{"result": ...}` as the server wrapped it), a failed call raising `ToolError`. A tool
        whose `outputSchema` `tools/list` gave must send structured content (the object with its
        required members); `InvalidOutput` if not, or if it does not fit `result_type`. With
        `Client(tasks=True)` a task the server makes of the call is followed to its end (its
        result returned, its questions answered through the callbacks).

        Args:
            name: The tool's name.
            arguments: Its arguments.
            result_type: What the tool's function returns: a model, TypedDict, dataclass,
                `int`, `list[str]`, ...
            progress: Called with each progress notification (progress, total, message).
            timeout: Seconds to wait for the response; None: the client's `timeout`.
        """
        if self.tasks:
            answer = await self.start_tool(name, arguments, progress=progress, timeout=timeout)
            result = await answer.result() if isinstance(answer, TaskHandle) else answer
        else:  # what `start_tool` does then, without its coroutine
            params: dict[str, Any] = {"name": name}
            if arguments is not None:
                params["arguments"] = dict(arguments)
            result = await self._call_tool(params, progress, timeout)
        return checked_result(name, result, self.output_schemas.get(name), result_type)

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl_ms: int | None = None,
        progress: Progress | None = None,
        timeout: float | None = None,
    ) -> pub.CallToolResult | TaskHandle:
        """Call a tool and return at once what the server answers: its result, or a `TaskHandle`.

        With `Client(tasks=True)` it is a `TaskHandle` when the server runs the call as a task.
        On 2025-11-25 the call asks for a task (`params.task`, with `ttl_ms`) when the tool
        says it may be one.

        Args:
            name: The tool's name.
            arguments: Its arguments.
            ttl_ms: The task's time to live asked for, in milliseconds (2025-11-25).
            progress: Called with each progress notification (progress, total, message).
            timeout: Seconds to wait for the response; None: the client's `timeout`.
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        task = None
        codec = self.codec
        if self.tasks and codec is not None and not self.modern:
            if await self._task_tools.may_be_task(codec, name):
                task = {"ttl": ttl_ms} if ttl_ms is not None else {}
        return await self._call_tool(params, progress, timeout, task)

    async def _call_tool(
        self,
        params: dict[str, Any],
        progress: Progress | None,
        timeout: float | None,
        task: dict[str, Any] | None = None,
    ) -> Any:
        """`tools/call`; refused for a missing header (-32020) before this client listed the
        tools, the tools are listed (their `x-mcp-header` params learned) and the call retried
        once."""
        try:
            return await self.request(
                "tools/call", params, progress=progress, timeout=timeout, task=task
            )
        except McpError as exc:
            if exc.code != HEADER_MISMATCH or self._tools_listed or not self.modern:
                raise
        await self.list_tools()
        return await self.request(
            "tools/call", params, progress=progress, timeout=timeout, task=task
        )

    async def list_resources(self, cursor: str | None = None) -> pub.ListResourcesResult:
        """The server's resources: every page, or the one page at `cursor`."""
        return await self._listing("resources", cursor, self._page_of("resources/list"))

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> pub.ListResourceTemplatesResult:
        """The server's resource templates: every page, or the one page at `cursor`."""
        page = self._page_of("resources/templates/list")
        return await self._listing("resourceTemplates", cursor, page)

    async def read_resource(self, uri: str) -> pub.ReadResourceResult:
        """Read the resource at `uri` (a resource or a template's match)."""
        return await self.request("resources/read", {"uri": uri})

    async def list_prompts(self, cursor: str | None = None) -> pub.ListPromptsResult:
        """The server's prompts: every page, or the one page at `cursor`."""
        return await self._listing("prompts", cursor, self._page_of("prompts/list"))

    async def _listing(
        self, field: str, cursor: str | None, page: Callable[[str | None], Awaitable[Any]]
    ) -> Any:
        """One page (`cursor` given), or every page in one result (`nextCursor` None)."""
        first = await page(cursor)
        if cursor is not None or first.nextCursor is None:
            return first
        items = list(getattr(first, field))
        seen: set[str] = set()
        following: str | None = first.nextCursor
        while following is not None:
            if following in seen:
                raise ProtocolError(INTERNAL_ERROR, f"the server's {field} cursors go round")
            seen.add(following)
            result = await page(following)
            items.extend(getattr(result, field))
            following = result.nextCursor
        return first.model_copy(update={field: items, "nextCursor": None})

    def _page_of(self, method: str) -> Callable[[str | None], Awaitable[Any]]:
        async def page(cursor: str | None) -> Any:
            cache, revision = self.cache, self.revision
            where = (self._server_key, self._principal, revision or "", method, cursor)
            if cache is not None:
                kept = cache.get(*where)
                if kept is not None:
                    return kept
            result = await self.request(method, _cursor(cursor))
            if cache is not None:
                cache.put(*where, result)
            return result

        return page

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> pub.GetPromptResult:
        """Get the prompt `name` with its `arguments` (strings on the wire)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.request("prompts/get", params)

    async def complete(
        self,
        ref: Mapping[str, Any] | BaseModel,
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> pub.CompleteResult:
        """Ask for completion values for an argument of a prompt or a resource template.

        Args:
            ref: The prompt (`{"type": "ref/prompt", "name": ...}`) or the resource template
                (`{"type": "ref/resource", "uri": ...}`).
            argument: The argument's name.
            value: What is typed of it so far.
            context: The arguments already chosen.
        """
        params: dict[str, Any] = {
            "ref": plain(ref),
            "argument": {"name": argument, "value": value},
        }
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        return await self.request("completion/complete", params)

    async def set_log_level(self, level: str) -> None:
        """Receive log messages at `level` and above.

        Legacy: for the session; modern: asked for on every later request.
        """
        self.log_level = level
        if not self.modern:
            await self.request("logging/setLevel", {"level": level})

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        task_ids: Sequence[str] = (),
    ) -> AsyncIterator[Subscription]:
        """Receive change notifications while the block runs, through the `Subscription`.

        Modern: `subscriptions/listen`; on a legacy session, `resources/subscribe` plus the
        session's list-changed notifications.

        Args:
            tools: The tool list's changes.
            prompts: The prompt list's changes.
            resources: The resource list's changes.
            resource_uris: The resources whose updates to receive.
            task_ids: (2026-07-28, `Client(tasks=True)`) `notifications/tasks` of those tasks,
                their params plain data (the task as `tasks/get` gives it).
        """
        wanted = listen_filter(tools, prompts, resources, resource_uris, task_ids)
        codec, session = self.codec, self._session
        if codec is not None and session is not None and codec.era == "modern":

            async def hold(notifications: dict[str, Any], id: int) -> None:
                params = {"notifications": notifications}
                raw = await self._exchange(codec, "subscriptions/listen", params, None, id)
                raise_error(codec.decode_response(raw, "subscriptions/listen"))

            listening = self._listeners.modern(session.next_id(), wanted, hold, self.timeout)
            async with listening as subscription:
                yield subscription
            return
        for uri in resource_uris:
            await self.request("resources/subscribe", {"uri": uri})
        try:
            async with self._listeners.legacy(wanted) as subscription:
                yield subscription
        finally:
            for uri in resource_uris:
                with anyio.CancelScope(shield=True):
                    try:
                        await self.request("resources/unsubscribe", {"uri": uri})
                    except (ProtocolError, ConnectionClosed):
                        pass

    # ------------------------------------------------------------------ frames from the server

    async def _on_request(self, raw: bytes, env: Peek) -> None:
        """Answer a request from the server (a question for the callbacks)."""
        codec = self.codec
        id, method = env.id, env.method
        if codec is None or id is None or method is None:
            return
        data = await answered(id, method, self._respond(codec, raw, id, method), self._error_frame)
        if data is not None:
            await self._send(data)

    async def _respond(self, codec: Codec, raw: bytes, id: RequestId, method: str) -> bytes:
        """The response to the server's request (its callback's answer)."""
        message = codec.decode(raw)
        if method == "ping":
            result: Any = {}
        else:
            params = codec.to_public(method, message.params, "params")
            asked = await answer(self._callbacks, method, params)
            result = codec.from_public(method, asked, "result")
        return codec.encode(codec.response(id, method, result))

    async def _on_notification(self, raw: bytes, env: Peek) -> None:
        """Route a notification from the server to the listeners and callbacks."""
        codec = self.codec
        if codec is None:
            return
        if env.method == "notifications/tasks":  # the Tasks extension's: no model in the codec
            self._listeners.route_task(raw)
            return
        try:
            message = codec.decode(raw)
        except ProtocolError as exc:
            log.warning("invalid notification from the server: %s", exc.message)
            return
        method: str = message.method
        params = message.params
        if self.cache is not None and method in CHANGED:
            self.cache.drop(self._server_key, CHANGED[method])
        if codec.revision != PUBLIC_REVISION and method in codec.public:
            params = codec.to_public(method, params, "params")
        if method == "notifications/progress":
            callback = self._progress.get(params.progressToken)
            await _call(callback, params.progress, params.total, params.message)
        elif method == "notifications/cancelled":
            target = getattr(params, "requestId", None)
            session = self._session
            # the server ended a listen stream, or gave up on a request of its own
            if target is not None and not self._listeners.end(target) and session is not None:
                session.cancel_incoming(target)
        else:
            if method == "notifications/message":
                await _call(self._on_log, params)
            if not self._listeners.route(method, params):
                await _call(self._on_notice, Notice(method, params))

    async def _on_batch(self, raw: bytes, items: list[Any]) -> None:
        """Read a JSON-RPC batch from the server for its notifications.

        A client answers no batch.
        """
        for item in items:
            if type(item) is dict and "method" in item and "id" not in item:
                frame = pydantic_core.to_json(item)
                await self._on_notification(frame, peek_any(frame))
        log.warning("a batch from the server was read for its notifications only")

    def _error_frame(self, id: RequestId | None, error: ProtocolError) -> bytes:
        """The error response frame for `id`, in this connection's revision."""
        return error_frame(self.codec, id, error)

    async def _on_close(self) -> None:
        """End every listen subscription: the connection closed."""
        self._listeners.close()


@dataclass(frozen=True, slots=True)
class _FromServer:
    """The session's peer on a client (`Peer`): where the server's frames go, kept off the
    public `Client`."""

    on_request: Callable[[bytes, Peek], Awaitable[None]]
    on_notification: Callable[[bytes, Peek], Awaitable[None]]
    on_batch: Callable[[bytes, list[Any]], Awaitable[None]]
    error_frame: Callable[[RequestId | None, ProtocolError], bytes]
    on_close: Callable[[], Awaitable[None]]


async def _call(callback: Callable[..., Awaitable[None] | None] | None, *args: Any) -> None:
    """Call a user's callback, sync or async (None: nobody to tell)."""
    if callback is not None:
        outcome = callback(*args)
        if outcome is not None:
            await outcome


def _cursor(cursor: str | None) -> dict[str, Any]:
    return {} if cursor is None else {"cursor": cursor}
