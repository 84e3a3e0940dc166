"""One client connection to a `Server`, in either era, decided by the client's first move:
`initialize` opens a legacy session (its negotiated revision, capabilities, log level and
resource subscriptions live here); a request carrying the modern `_meta` envelope is served
statelessly, from what that request says alone."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import pydantic_core
from pydantic import BaseModel

import mcp_wire
from mcpio.bus import unavailable
from mcpio.context import (
    Context,
    ElicitUrl,
    InputRequired,
    MethodHandler,
    RetriedInputs,
    SentInputs,
    UrlElicitationRequired,
)
from mcpio.errors import McpError
from mcpio.handlers import TextAnswer, tool_result
from mcpio.hub import LISTEN_FLAGS, TASK_IDS, Hub
from mcpio.jsonrpc import RequestId, answered, error_frame, plain
from mcpio.latest import REVISION as PUBLIC_REVISION
from mcpio.latest import public as pub
from mcpio.negotiate import (
    LEGACY,
    MODERN,
    SUBSCRIPTION_ID_KEY,
    codec_of,
    fit,
    legacy_version,
)
from mcpio.protocol_rules import MAX_INPUT_ROUNDS, unsupported_version
from mcpio.sealing import Sealer, request_digest
from mcpio.session import Session, send_frame
from mcpio.tasks import serve as tasks_serve
from mcpio.tasks.engine import (
    TASKS_EXTENSION,
    TaskCreated,
    TaskEngine,
    TaskOffer,
    legacy_task,
    modern_task,
)
from mcpio.tasks.owner import current_session, task_owner
from mcpio.tasks.store import TaskRecord
from mcpio.transports import Transport
from mcpio.wire.codec import Codec
from mcpio.wire.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    ProtocolError,
)
from mcpio.wire.peek import Peek

if TYPE_CHECKING:
    from mcpio.auth import Principal

log = logging.getLogger("mcpio")

TOKEN_EXPIRED = "the access token that opened this stream expired; listen again with a new one"
_LIFECYCLE = frozenset({"initialize", "ping", "logging/setLevel"})
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
# What a server with task tools offers a 2025-11-25 client (task-augmented tools/call).
LEGACY_TASKS_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
_NO_CAPABILITIES = pub.ClientCapabilities()  # a connection's before initialize (shared)


class Listener:
    """One modern `subscriptions/listen` stream. Change notifications wait in a bounded queue
    for the stream's writer (the listen request's own task): a reader that falls `queue`
    notifications behind is cut off, so one slow client never holds up the others."""

    def __init__(
        self,
        connection: ServerConnection,
        codec: Codec,
        id: RequestId,
        honoured: dict[str, Any],
        queue: int,
    ):
        self.connection = connection
        self.codec = codec
        self.id = id
        self.honoured = honoured
        self.error: ProtocolError | None = None  # how the server ends it, if not gracefully
        self.cut_off = False  # its reader fell behind: the stream is dropped, nothing more sent
        self._send, self.queue = anyio.create_memory_object_stream[tuple[str, dict[str, Any]]](
            queue
        )

    def end(self, error: ProtocolError | None = None) -> None:
        self.error = self.error or error
        self._send.close()

    def wants(self, flag: str | None, uri: str | None) -> bool:
        if flag == TASK_IDS:
            return uri in (self.honoured.get(TASK_IDS) or ())
        if flag is not None:
            return bool(self.honoured.get(flag))
        return uri in (self.honoured.get("resourceSubscriptions") or ())

    def deliver(self, method: str, params: dict[str, Any]) -> None:
        try:
            self._send.send_nowait((method, params))
        except anyio.WouldBlock:
            log.info("listen stream %r: its reader fell behind; cut off", self.id)
            self.cut_off = True
            self._send.close()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def write(self, method: str, params: dict[str, Any]) -> None:
        tagged = {**params, "_meta": {SUBSCRIPTION_ID_KEY: self.id}}
        if method == "notifications/tasks":  # the Tasks extension's
            codec = tasks_serve.tasks_codec(self.codec.revision)
            await self.connection.send(codec.encode(codec.notification(method, tagged)))
            return
        await self.connection.send_notification(self.codec, method, tagged)


class Served(Protocol):
    """What a connection needs of the server it serves (`mcpio.Server`)."""

    @property
    def info(self) -> pub.Implementation: ...

    @property
    def instructions(self) -> str | None: ...

    @property
    def handlers(self) -> Mapping[str, MethodHandler]: ...

    async def dispatch(self, ctx: Context, method: str, params: Any) -> Any:
        """A request's result through the middlewares and its handler (`Server.dispatch`)."""
        ...

    @property
    def lifespan_state(self) -> Any: ...

    @property
    def sealer(self) -> Sealer: ...

    @property
    def request_timeout(self) -> float: ...

    @property
    def hub(self) -> Hub: ...

    @property
    def tasks(self) -> TaskEngine: ...

    @property
    def task_support(self) -> Mapping[str, str]: ...

    @property
    def result_meta(self) -> pub.ResultMetaObject: ...

    @property
    def result_meta_json(self) -> bytes: ...

    def capabilities(self) -> pub.ServerCapabilities: ...

    def cache_hints(self, method: str | None = None) -> dict[str, Any]: ...


class ServerConnection:
    """One client's connection to a server (see the module's docstring), made by
    `Server.connect`. `principal`: who the transport authenticated; `modern`: it speaks
    2026-07-28 from its first request; a listen stream on it ends gracefully at `listen_until`
    (seconds since the epoch) and is cut off when `listen_queue` notifications wait for its
    reader."""

    def __init__(
        self,
        server: Served,
        transport: Transport,
        *,
        principal: Principal | None = None,
        modern: bool = False,
        listen_until: float = math.inf,
        listen_queue: int = 256,
    ) -> None:
        self.server = server
        self.hub = server.hub
        self.transport = transport
        self._session: Session | None = None
        self.codec: Codec | None = None  # legacy: the negotiated revision's codec
        self.modern_seen = modern  # once modern, a request without its envelope: invalid params
        self.client_capabilities = _NO_CAPABILITIES  # replaced by initialize, never changed
        self.client_capabilities_data: dict[str, Any] = {}
        self.client_info: pub.Implementation | None = None
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        self.state: dict[str, Any] = {}  # a legacy session's `ctx.state`
        self.listeners: set[Listener] = set()
        self.principal = principal  # the HTTP app updates it with each request's token
        self.listen_until = listen_until
        self.listen_queue = listen_queue

    @property
    def session(self) -> Session:
        """The JSON-RPC session over the transport, made on first use: the connection of one
        modern HTTP request only answers it, and without a session it is no reference cycle
        (left to the garbage collector after every request)."""
        session = self._session
        if session is None:
            session = self._session = Session(self.transport, self)
        return session

    async def send(self, data: bytes) -> None:
        """Send a frame (`ConnectionClosed` if the transport is gone)."""
        if self._session is not None:
            await self._session.send(data)
        else:
            await send_frame(self.transport, data)

    @property
    def subject(self) -> str | None:
        return self.principal.subject if self.principal is not None else None

    @property
    def task_owner(self) -> str | None:
        return task_owner(self.principal, current_session())

    async def run(self) -> None:
        try:
            await self.session.run()
        finally:
            self.hub.sessions.discard(self)

    # ------------------------------------------------------------------ frames in

    async def on_request(self, raw: bytes, env: Peek) -> None:
        data = await self.answer(raw, env)
        if data is not None:
            await self.send(data)

    async def answer(self, raw: bytes, env: Peek, message: Any = None) -> bytes | None:
        """The response to a request, as bytes (None: none to send): `on_request` sends it, the
        HTTP app writes it itself. `message`: a modern request already decoded (`read_modern`)."""
        id = env.id
        method = env.method
        assert id is not None and method is not None  # a request's envelope
        codec = self.codec
        if method == "initialize" and env.protocol_version not in MODERN:
            work = self._initialize(raw, id)
        elif codec is not None:
            work = self._legacy(codec, raw, id, env)
        else:
            work = self._modern(raw, id, env, message)
        return await answered(id, method, work, self.error_frame)

    async def on_notification(self, raw: bytes, env: Peek) -> None:
        method = env.method
        if method == "notifications/cancelled":
            params = pydantic_core.from_json(raw).get("params")
            request_id = params.get("requestId") if type(params) is dict else None
            if type(request_id) is int or type(request_id) is str:
                self.session.cancel_incoming(request_id)
        elif method == "notifications/initialized" and self.codec is not None:
            self.hub.sessions.add(self)
        else:
            log.debug("notification %s ignored", method)

    async def on_batch(self, raw: bytes, items: list[Any]) -> None:
        codec = self.codec
        if codec is None or not codec.batching:
            revision = codec.revision if codec else "this connection"
            error = ProtocolError(INVALID_REQUEST, f"JSON-RPC batches are not part of {revision}")
            await self.session.reply(None, error)
            return
        replies: list[bytes] = []

        async def one(item: Any) -> None:
            frame = pydantic_core.to_json(item)
            try:
                env = codec.peek(frame)
            except ProtocolError as exc:
                replies.append(self.error_frame(None, exc))
                return
            if env.kind not in ("request", "notification"):
                error = ProtocolError(INVALID_REQUEST, "invalid batch item")
                replies.append(self.error_frame(None, error))
            elif env.method == "initialize":
                error = ProtocolError(INVALID_REQUEST, "initialize must not be batched")
                replies.append(self.error_frame(env.id, error))
            elif env.kind == "notification":
                await self.on_notification(frame, env)
            else:
                assert env.id is not None  # a request's
                try:
                    reply = await self._legacy(codec, frame, env.id, env)
                except ProtocolError as exc:
                    reply = self.error_frame(env.id, exc)
                if reply is not None:
                    replies.append(reply)

        async with anyio.create_task_group() as tasks:
            for item in items:
                tasks.start_soon(one, item)
        if replies:
            await self.session.send(b"[" + b",".join(replies) + b"]")

    async def on_close(self) -> None:
        self.hub.sessions.discard(self)
        for listener in list(self.listeners):
            self.hub.listeners.discard(listener)
            listener.end()

    def error_frame(self, id: RequestId | None, error: ProtocolError) -> bytes:
        return error_frame(self.codec, id, error)

    # ------------------------------------------------------------------ legacy

    async def _initialize(self, raw: bytes, id: RequestId) -> bytes:
        if self.codec is not None:
            raise ProtocolError(INVALID_REQUEST, f"already initialized ({self.codec.revision})")
        params = pydantic_core.from_json(raw).get("params")  # once a session: its version
        requested = params.get("protocolVersion") if type(params) is dict else None
        version = legacy_version(requested)
        codec = codec_of(version)
        message = codec.decode(raw)
        caps = message.params.capabilities
        self.client_capabilities_data = caps.model_dump(
            mode="json", by_alias=True, exclude_unset=True
        )
        self.client_capabilities = pub.ClientCapabilities.model_validate(
            fit(pub.ClientCapabilities, self.client_capabilities_data)
        )
        self.client_info = pub.Implementation.model_validate(
            message.params.clientInfo.model_dump(mode="json", by_alias=True, exclude_unset=True)
        )
        self.codec = codec
        models = mcp_wire.revision(version)
        server_caps = self.server.capabilities().model_dump(
            mode="json", by_alias=True, exclude_unset=True
        )
        if self.server.task_support and "tasks" in models.ServerCapabilities.model_fields:
            server_caps["tasks"] = LEGACY_TASKS_CAPABILITY
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": fit(models.ServerCapabilities, server_caps),
            "serverInfo": fit(
                models.Implementation, self.server.info.model_dump(exclude_unset=True)
            ),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        self.hub.sessions.add(self)
        return codec.encode(codec.response(id, "initialize", result))

    async def _legacy(self, codec: Codec, raw: bytes, id: RequestId, env: Peek) -> bytes | None:
        if env.protocol_version in MODERN:
            raise ProtocolError(
                INVALID_REQUEST, f"this connection is a legacy session of revision {codec.revision}"
            )
        message = codec.decode(raw)
        method = message.method
        if method in _LIFECYCLE or method in ("resources/subscribe", "resources/unsubscribe"):
            return codec.encode(codec.response(id, method, self._lifecycle(method, message.params)))
        if method in tasks_serve.LEGACY_METHODS:
            return await self._legacy_task_method(codec, id, method, message.params)
        task = getattr(message.params, "task", None)
        params = codec.to_public(
            method, message.params, "params", client_capabilities=self.client_capabilities_data
        )
        meta = params.meta if params is not None else None
        ctx = self._context(
            codec,
            id,
            SentInputs(self._ask_client),
            self.client_capabilities,
            self.client_info,
            meta.progressToken if meta is not None else None,
            self.log_level,
        )
        if task is not None:
            ttl = getattr(task, "ttl", None)
            ctx.task_offer = TaskOffer(
                ttl_ms=ttl if type(ttl) is int else None,
                ask=self._task_inputs,
                watch=lambda record: self._task_status(codec, record),
                progress=lambda task_id, params: self._task_progress(codec, params),
            )
        result = await self.server.dispatch(ctx, method, params)
        if type(result) is TextAnswer:
            return codec.result_frame(id, result.json(False))
        if isinstance(result, TaskCreated):
            task_result = {"task": legacy_task(result.record)}
            return codec.encode(codec.response(id, method, task_result))
        own = codec.from_public(method, result, "result")
        if method == "tools/list" and "tasks/get" in codec.methods:
            self._mark_task_tools(own)
        return codec.encode_result(id, own)

    async def _legacy_task_method(
        self, codec: Codec, id: RequestId, method: str, params: Any
    ) -> bytes:
        data = params.model_dump(mode="json", by_alias=True, exclude_unset=True) if params else {}
        result, record = await tasks_serve.legacy(self.server.tasks, method, data, self.task_owner)
        if result is None:
            assert record is not None  # tasks/result of a completed task
            result = plain(codec.from_public(record.method, record.result or {}, "result"))
            meta = {
                **(result.get("_meta") or {}),
                tasks_serve.RELATED_TASK: {"taskId": record.task_id},
            }
            result["_meta"] = meta
        return codec.encode(codec.response(id, method, result))

    def _task_inputs(self, task_id: str) -> SentInputs:
        """2025-11-25: a task's questions, real requests tagged with the task they serve."""
        related = {tasks_serve.RELATED_TASK: {"taskId": task_id}}

        async def ask(method: str, params: dict[str, Any]) -> BaseModel:
            meta = {**(params.get("_meta") or {}), **related}
            return await self._ask_client(method, {**params, "_meta": meta})

        return SentInputs(ask)

    def _mark_task_tools(self, listed: Any) -> None:
        """2025-11-25 tools/list: each task tool's `execution.taskSupport`."""
        execution = mcp_wire.revision(self.codec.revision if self.codec else "").ToolExecution
        for tool in getattr(listed, "tools", None) or ():
            support = self.server.task_support.get(tool.name)
            if support is not None:
                tool.execution = execution.model_validate({"taskSupport": support})

    async def _task_status(self, codec: Codec, record: TaskRecord) -> None:
        """2025-11-25: a task's status changes, told to the session that created it."""
        if self.session.closed.is_set():
            return
        frame = codec.notification("notifications/tasks/status", legacy_task(record))
        await self.send(codec.encode(frame))

    async def _task_progress(self, codec: Codec, params: dict[str, Any]) -> None:
        """2025-11-25: a task's progress, told to the session that created it."""
        if not self.session.closed.is_set():
            await self.send_notification(codec, "notifications/progress", params)

    async def _task_progress_published(self, task_id: str, params: dict[str, Any]) -> None:
        """2026-07-28: a task's progress, to the listen streams following it (any instance)."""
        await self.hub.publish(TASK_IDS, "notifications/progress", params, task_id)

    def _lifecycle(self, method: str, params: Any) -> dict[str, Any]:
        if method == "logging/setLevel":
            self.log_level = params.level
        elif method == "resources/subscribe":
            self.subscriptions.add(params.uri)
        elif method == "resources/unsubscribe":
            self.subscriptions.discard(params.uri)
        return {}

    async def _ask_client(self, method: str, params: dict[str, Any]) -> BaseModel:
        codec = self.codec
        assert codec is not None
        id = self.session.next_id()
        frame = codec.request(method, codec.from_public(method, params, "params"), id=id)
        raw = await self.session.request(id, codec.encode(frame), self.server.request_timeout)
        response = codec.decode_response(raw, method)
        error = getattr(response, "error", None)
        if error is not None:
            raise McpError(error.code, error.message, error.data)
        return codec.to_public(method, response.result, "result")

    def wants(self, uri: str | None) -> bool:
        return uri is None or uri in self.subscriptions

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if self.codec is not None:
            await self.send_notification(self.codec, method, params)

    # ------------------------------------------------------------------ modern

    async def _modern(
        self, raw: bytes, id: RequestId, env: Peek, message: Any = None
    ) -> bytes | None:
        version = self._modern_version(env.protocol_version)
        codec = codec_of(version)
        tasks = tasks_serve.tasks_available(version)
        if env.method in tasks_serve.MODERN_METHODS and tasks:
            return await self._modern_task_method(version, id, env.method, raw)
        if message is None:
            message = codec.decode(raw)
        method = message.method
        spec = codec.methods[method]
        params = codec.to_public(method, message.params, "params")
        meta = params.meta
        answers, rounds = (
            self._sealed_answers(method, params, raw) if spec.input_required else ({}, 0)
        )
        inputs = RetriedInputs(answers)
        capabilities = meta.io_modelcontextprotocol_clientCapabilities
        ctx = self._context(
            codec,
            id,
            inputs,
            capabilities,
            meta.io_modelcontextprotocol_clientInfo,
            meta.progressToken,
            meta.io_modelcontextprotocol_logLevel,
        )
        if (
            getattr(capabilities, "extensions", None)
            and tasks
            and tasks_serve.declares_tasks(capabilities)
        ):
            ctx.task_offer = TaskOffer(progress=self._task_progress_published)
        if method == "server/discover":
            result: Any = self._discover(tasks)
        elif method == "subscriptions/listen":
            result = await self._listen(codec, id, params)
        else:
            try:
                result = await self._dispatch_asking(ctx, method, params)
            except InputRequired as needed:
                if not spec.input_required:
                    raise ProtocolError(
                        INTERNAL_ERROR, f"{method} cannot ask the client for input"
                    ) from None
                digest = request_digest(method, _params_of(raw))
                result = self._input_required(inputs, needed, digest, rounds + 1)
        return None if result is None else self._modern_answer(codec, id, method, result)

    def _modern_version(self, version: str | None) -> str:
        """The revision a modern request is served in (its envelope's, or the newest for a
        request of a connection already modern)."""
        if version is None:
            if not self.modern_seen:
                raise ProtocolError(
                    INVALID_REQUEST,
                    "not initialized: send initialize first, or a request of revision "
                    f"{', '.join(MODERN)} with its _meta envelope",
                    {"supported": [*reversed(MODERN), *reversed(LEGACY)]},
                )
            version = MODERN[-1]
        elif version not in MODERN:
            raise unsupported_version(version)
        self.modern_seen = True
        return version

    def _sealed_answers(self, method: str, params: Any, raw: bytes) -> tuple[dict[str, Any], int]:
        """A retried request's answers and the rounds so far: those sealed in earlier rounds
        stand (the client cannot replace them), beside the new `inputResponses`."""
        sealed: dict[str, Any] = {}
        rounds = 0
        if params.requestState is not None:
            digest = request_digest(method, _params_of(raw))
            sealed, rounds = self.server.sealer.open(params.requestState, digest, self.subject)
        return {**(params.inputResponses or {}), **sealed}, rounds

    async def _dispatch_asking(self, ctx: Context, method: str, params: Any) -> Any:
        """`Server.dispatch`; a legacy `UrlElicitationRequired` becomes the question it asks
        (2026-07-28 retired the error)."""
        try:
            return await self.server.dispatch(ctx, method, params)
        except UrlElicitationRequired as error:
            ctx.require_url_elicitation()
            raise InputRequired(
                {f"url-{i}": ElicitUrl(e.message, e.url) for i, e in enumerate(error.elicitations)}
            ) from None

    def _modern_answer(self, codec: Codec, id: RequestId, method: str, result: Any) -> bytes:
        """A modern result as its response frame, the server's info in its `_meta`."""
        public = codec.revision == PUBLIC_REVISION
        if type(result) is TextAnswer:
            if public:
                return codec.result_frame(id, result.json(True), self.server.result_meta_json)
            result = tool_result(result.text)
        if isinstance(result, TaskCreated):
            created = {**modern_task(result.record, detailed=False), "resultType": "task"}
            return self._modern_frame(codec.revision, id, method, created)
        meta = result.meta
        if public and "meta" not in result.__pydantic_fields_set__:
            return codec.encode_result(id, result, self.server.result_meta_json)
        if meta is None:
            result.meta = self.server.result_meta
        elif meta.io_modelcontextprotocol_serverInfo is None:
            meta.io_modelcontextprotocol_serverInfo = self.server.info
        own = result if public else codec.from_public(method, result, "result")
        return codec.encode_result(id, own)

    async def _modern_task_method(
        self, version: str, id: RequestId, method: str, raw: bytes
    ) -> bytes:
        if method != "tasks/update":  # its inputResponses are read leniently (unknown keys)
            tasks_serve.tasks_codec(version).decode(raw)  # the envelope and params, checked
        params = pydantic_core.from_json(raw).get("params")
        result = await tasks_serve.modern(self.server.tasks, method, params, self.task_owner)
        return self._modern_frame(version, id, method, result)

    def _modern_frame(
        self, version: str, id: RequestId, method: str, result: dict[str, Any]
    ) -> bytes:
        """A result of the Tasks extension (built, so checked, by its codec), with the server's
        info in its `_meta` as on every modern result."""
        codec = tasks_serve.tasks_codec(version)
        info = self.server.info.model_dump(mode="json", by_alias=True, exclude_unset=True)
        result = {**result, "_meta": {SERVER_INFO: info}}
        return codec.encode(codec.response(id, method, result))

    def _input_required(
        self, inputs: RetriedInputs, needed: InputRequired, digest: str, round: int
    ) -> Any:
        if round > MAX_INPUT_ROUNDS:
            raise ProtocolError(
                INTERNAL_ERROR, f"the handler needed more than {MAX_INPUT_ROUNDS} rounds of input"
            )
        answered = {key: plain(inputs.answers[key]) for key in inputs.asked}
        return pub.InputRequiredResult.model_validate(
            {
                "resultType": "input_required",
                "inputRequests": needed.requests,
                "requestState": self.server.sealer.seal(digest, answered, round, self.subject),
            }
        )

    def _discover(self, tasks: bool) -> pub.DiscoverResult:
        """`server/discover`'s result; `tasks`: whether the request's revision has the Tasks
        extension (a revision it was not carried to does not offer it)."""
        capabilities: Any = self.server.capabilities()
        extensions = capabilities.extensions
        if not tasks and extensions is not None and TASKS_EXTENSION in extensions:
            capabilities = capabilities.model_dump(by_alias=True, exclude_unset=True)
            others = {k: v for k, v in extensions.items() if k != TASKS_EXTENSION}
            capabilities.pop("extensions")
            if others:
                capabilities["extensions"] = others
        data: dict[str, Any] = {
            "supportedVersions": list(reversed(MODERN)),
            "capabilities": capabilities,
            **self.server.cache_hints("server/discover"),
        }
        if self.server.instructions:
            data["instructions"] = self.server.instructions
        return pub.DiscoverResult.model_validate(data)

    async def _listen(self, codec: Codec, id: RequestId, params: Any) -> Any:
        wanted = params.notifications.model_dump(exclude_unset=True)
        caps = self.server.capabilities()
        offered = {flag: getattr(caps, cap) is not None for flag, cap in LISTEN_FLAGS.items()}
        honoured = {k: v for k, v in wanted.items() if offered.get(k) and v not in (False, None)}
        task_ids = wanted.get(TASK_IDS)
        if task_ids is not None:
            if not tasks_serve.tasks_available(codec.revision) or not tasks_serve.declares_tasks(
                params.meta.io_modelcontextprotocol_clientCapabilities
            ):
                raise tasks_serve.missing_extension("listening to task status notifications")
            ids = [t for t in task_ids if type(t) is str] if type(task_ids) is list else []
            owned = [t for t in ids if await self.server.tasks.get(t, self.task_owner) is not None]
            honoured[TASK_IDS] = owned
        if not self.hub.bus.available:
            raise unavailable()  # at once: the client listens again later
        listener = Listener(self, codec, id, honoured, self.listen_queue)
        await listener.write(
            "notifications/subscriptions/acknowledged", {"notifications": honoured}
        )
        self.listeners.add(listener)
        self.hub.listeners.add(listener)
        if not self.hub.bus.available:  # lost while acknowledging
            listener.end(unavailable())
        expires_at = self.principal.expires_at if self.principal is not None else None
        until = min(self.listen_until, math.inf if expires_at is None else expires_at)
        try:
            with anyio.move_on_after(until - time.time()) as lifetime:
                async for method, params in listener.queue:
                    if listener.cut_off:
                        break
                    await listener.write(method, params)
            if lifetime.cancelled_caught and until == expires_at:
                listener.end(ProtocolError(INVALID_REQUEST, TOKEN_EXPIRED))
        finally:
            self.listeners.discard(listener)
            self.hub.listeners.discard(listener)
            listener.end()
        if self.session.closed.is_set() or listener.cut_off:
            return None
        if listener.error is not None:
            raise listener.error
        return pub.SubscriptionsListenResult.model_validate(
            {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: id}}
        )

    # ------------------------------------------------------------------ both eras

    def _context(
        self,
        codec: Codec,
        id: RequestId,
        inputs: SentInputs | RetriedInputs,
        capabilities: pub.ClientCapabilities,
        client_info: pub.Implementation | None,
        progress_token: str | int | None,
        log_level: str | None,
    ) -> Context:
        """A handler's context: what its request says (or, legacy, its session) of the client."""
        return Context(
            revision=codec.revision,
            request_id=id,
            client_capabilities=capabilities,
            client_info=client_info,
            inputs=inputs,
            notify=lambda m, p: self.send_notification(codec, m, p),
            codec=codec,
            progress_token=progress_token,
            log_level=log_level,
            principal=self.principal,
            lifespan=self.server.lifespan_state,
            state=self.state if self.codec is not None else None,  # legacy: the session's
            dispatch=self.server.dispatch,
        )

    async def send_notification(self, codec: Codec, method: str, params: dict[str, Any]) -> None:
        own = (
            params
            if codec.revision == PUBLIC_REVISION
            else codec.from_public(method, params, "params")
        )
        await self.send(codec.encode(codec.notification(method, own)))


def _params_of(raw: bytes) -> dict[str, Any]:
    """A request's params as plain data (read again: only a multi-round request needs them)."""
    params: dict[str, Any] = pydantic_core.from_json(raw)["params"]
    return params
