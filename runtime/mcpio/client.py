"""The client: typed calls in the public (latest revision's) models, whatever the server speaks.

`mode="auto"` probes with `server/discover` and falls back to the legacy `initialize` handshake
on any error other than an unsupported-version answer that names a modern revision we share
(or, with `auth`, a refused authorization);
`"legacy"` goes straight to `initialize`; a revision string speaks exactly that revision.
What a server may ask of the client (elicitation, sampling, roots) goes to the callbacks, in
both eras: as server->client requests on a legacy session, as `input_required` rounds (answered,
then retried with the answers and the sealed `requestState`) on a modern one.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import math
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

import anyio
import anyio.abc
import pydantic
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel

import mcp_wire
from mcpio.bearer import BearerToken
from mcpio.context import URL_ELICITATION_REQUIRED, URL_ELICITATION_SINCE, ElicitUrl
from mcpio.errors import (
    ConnectionClosed,
    InvalidOutput,
    McpError,
    NegotiationError,
    RequestTimeout,
    ToolError,
)
from mcpio.extras import needs
from mcpio.jsonrpc import RequestId, answered, error_frame, plain
from mcpio.latest import REVISION as PUBLIC_REVISION
from mcpio.latest import UNSUPPORTED_VERSION
from mcpio.latest import public as pub
from mcpio.negotiate import LEGACY, MODERN, SUBSCRIPTION_ID_KEY, fit, peek_any
from mcpio.result_cache import CHANGED, ResultCache
from mcpio.session import Session
from mcpio.structured import output_of, reader, summary
from mcpio.targets import command_for, is_url, root_of
from mcpio.tasks.client import TaskHandle
from mcpio.tasks.engine import TASKS_EXTENSION
from mcpio.tasks.serve import tasks_available, tasks_codec
from mcpio.transports import Transport
from mcpio.url_check import url_problem

if TYPE_CHECKING:
    import httpx

    from mcpio.server import Server
    from mcpio.telemetry import ClientTracing
    from mcpio.transports.http_client import Auth
from mcpio.wire.codec import Codec
from mcpio.wire.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError
from mcpio.wire.peek import Peek

log = logging.getLogger("mcpio")

MAX_INPUT_ROUNDS = 10
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
T = TypeVar("T")


Elicitation = Callable[[Any], Awaitable[pub.ElicitResult | Mapping[str, Any]]]
ElicitationUrl = Callable[[ElicitUrl], Awaitable[pub.ElicitResult | Mapping[str, Any]]]
Sampling = Callable[
    [pub.CreateMessageRequestParams], Awaitable[pub.CreateMessageResult | Mapping[str, Any]]
]
Roots = Callable[[], Awaitable[pub.ListRootsResult | Sequence[Any]]]
Progress = Callable[[float, float | None, str | None], Awaitable[None] | None]
LogHandler = Callable[[pub.LoggingMessageNotificationParams], Awaitable[None] | None]


@dataclass(frozen=True)
class Notice:
    """A notification from the server: its method and params (public models)."""

    method: str
    params: Any


@dataclass
class Subscription:
    """What `Client.listen` yields: the filters the server honours, and the notices. When the
    server ends the stream with an error (its notification bus went down, say), iterating
    raises that `McpError` (also kept in `error`): listen again."""

    id: RequestId | None
    honoured: dict[str, Any] = field(default_factory=dict[str, Any])
    _receive: MemoryObjectReceiveStream[Notice] | None = None
    error: McpError | None = None

    def __aiter__(self) -> AsyncIterator[Notice]:
        return self

    async def __anext__(self) -> Notice:
        assert self._receive is not None
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            if self.error is not None:
                raise self.error from None
            raise StopAsyncIteration from None


def _retry_params(data: Any, answers: dict[str, Any], state: str | None) -> dict[str, Any]:
    """A request's params for its retry after `input_required`: the answers, and the state the
    server sealed, in place of the last round's."""
    retry = {k: v for k, v in data.items() if k not in ("inputResponses", "requestState")}
    if answers:
        retry["inputResponses"] = answers
    if state is not None:
        retry["requestState"] = state
    return retry


def _checked_target(
    target: str | Sequence[str] | Transport | Server,
    mode: str,
    auth: Auth | str | None,
    headers: Mapping[str, str] | None,
) -> Sequence[str] | Transport | Server | str:
    """The target to connect to (a command string or a file made argv: `mcpio.targets`);
    `ValueError` for a mode that is no revision, or credentials for a target that is no URL."""
    if mode not in ("auto", "legacy", *mcp_wire.REVISIONS):
        raise ValueError(f"mode must be 'auto', 'legacy' or one of {', '.join(mcp_wire.REVISIONS)}")
    url = isinstance(target, str) and is_url(target)
    if (headers or isinstance(auth, str)) and not url:
        raise ValueError("headers= and auth='token' are for an http(s) URL target")
    if isinstance(target, str) and not url:
        return command_for(target)
    return target


class Client:
    tracing: ClientTracing | None = None  # a span per call (`mcpio.telemetry`, the otel extra)

    def __init__(
        self,
        target: str | Sequence[str] | Transport | Server,
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
    ) -> None:
        self._target = target = _checked_target(target, mode, auth, headers)
        self.mode = mode
        # list results kept as the server's hints allow (mcpio.result_cache); False: none
        self.cache = ResultCache() if cache is True else cache if cache is not False else None
        self._server_key = _server_key(target)
        self._principal = _principal(auth, headers or {})
        self.info = pub.Implementation(name=name, version=version)
        self._elicitation, self._elicit_url = elicitation, on_elicit_url
        self._sampling, self._roots = sampling, roots
        self._on_log = on_log
        self._on_notice = on_notice
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self._spawn = {"env": env, "cwd": cwd, "stderr": stderr}
        self._auth: Auth | None = BearerToken(auth) if isinstance(auth, str) else auth
        self._headers = dict(headers or {})  # on every HTTP request
        self._http = http  # for an http(s) target: the httpx client to use (TLS, proxies, mocks)
        self.tasks = tasks  # takes tasks: declares the extension (legacy: the tasks capability)
        self.codec: Codec | None = None
        self.revision: str | None = None
        self.server_info: pub.Implementation | None = None
        self.server_capabilities: pub.ServerCapabilities | None = None
        self.instructions: str | None = None
        self.log_level: str | None = None  # modern: asked for on every request
        self._session: Session | None = None
        self._stack = AsyncExitStack()
        self._progress: dict[RequestId, Progress] = {}
        self._metas: dict[tuple[str, str | None], dict[str, Any]] = {}  # see `_meta_of`
        self._subscriptions: dict[RequestId, MemoryObjectSendStream[Notice]] = {}
        self._acknowledged: dict[RequestId, anyio.Event] = {}
        self._honoured: dict[RequestId, dict[str, Any]] = {}
        self._legacy_listeners: list[tuple[Subscription, MemoryObjectSendStream[Notice]]] = []
        self.output_schemas: dict[str, dict[str, Any]] = {}  # by tool name, from tools/list
        self._task_support: dict[str, str] = {}  # 2025-11-25: tool name -> execution.taskSupport
        self._tools_listed = False

    # ------------------------------------------------------------------ connecting

    @property
    def modern(self) -> bool:
        return self.codec is not None and self.codec.era == "modern"

    def capabilities(self, modern: bool, revision: str | None = None) -> dict[str, Any]:
        """The capabilities this client declares (`revision`: a modern request's, which may
        lack the Tasks extension)."""
        caps: dict[str, Any] = {}
        modes = {"form": self._elicitation, "url": self._elicit_url}
        if any(modes.values()):
            caps["elicitation"] = {mode: {} for mode, callback in modes.items() if callback}
        if self._sampling is not None:
            caps["sampling"] = {}
        if self._roots is not None:
            caps["roots"] = {} if modern else {"listChanged": True}
        if self.tasks and modern and (revision is None or tasks_available(revision)):
            caps["extensions"] = {TASKS_EXTENSION: {}}
        elif self.tasks:
            caps["tasks"] = {}  # no request of ours runs as a task (nothing to list or cancel)
        return caps

    @staticmethod
    def run(main: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run `main(*args)` (an async function that uses clients) on an event loop of its own:
        uvloop's where it is installed (the `http` extra brings it), as `Server.run_stdio` does,
        else asyncio's. Inside a running loop, `async with Client(...)` keeps the caller's."""
        uvloop = importlib.util.find_spec("uvloop") is not None
        return anyio.run(main, *args, backend_options={"use_uvloop": uvloop})

    async def __aenter__(self) -> Client:
        try:
            transport = await self._connect()
            self._session = Session(transport, self)
            tasks = await self._stack.enter_async_context(anyio.create_task_group())
            self._stack.push_async_callback(transport.aclose)
            await tasks.start(self._session.run)
            await self._negotiate()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        for stream in list(self._subscriptions.values()):
            stream.close()
        await self._stack.aclose()

    async def _connect(self) -> Transport:
        from mcpio.server import Server

        target = self._target
        if isinstance(target, Server):
            from mcpio.transports.memory import memory_pair

            mine, theirs = memory_pair()
            tasks = await self._stack.enter_async_context(anyio.create_task_group())
            tasks.start_soon(target.serve, theirs)
            return mine
        if isinstance(target, str) and is_url(target):
            with needs("http", "mcpio's HTTP transport"):
                from mcpio.transports.http_client import HttpTransport

            transport = HttpTransport(
                target, headers=self._headers, auth=self._auth, http=self._http
            )
            return await self._stack.enter_async_context(transport)
        if isinstance(target, Sequence) and not isinstance(target, str):
            command = cast(Sequence[str], target)
        elif hasattr(target, "receive") and hasattr(target, "send"):
            # a transport that is an async context manager is entered (and left) here, unless
            # it says it is open already (`HttpTransport.entered`)
            if hasattr(target, "__aenter__") and not getattr(target, "entered", False):
                return await self._stack.enter_async_context(cast(Any, target))
            return cast(Transport, target)
        else:
            raise ValueError(
                f"unsupported target {target!r}: give an http(s) URL, a .py file, a command "
                "(a list of strings, or a string: see mcpio.targets), a transport or a Server"
            )
        from mcpio.transports.stdio import spawn

        return await spawn([str(part) for part in command], **self._spawn)

    async def _negotiate(self) -> None:
        mode = self.mode
        if mode in MODERN:
            self._use(mode)
            return
        if mode in LEGACY or mode == "legacy":
            await self._initialize(LEGACY[-1] if mode == "legacy" else mode, exact=mode != "legacy")
            return
        try:
            self._use(MODERN[-1])
            discovered = await self._probe()
        except McpError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            supported = data.get("supported")  # pyright: ignore[reportUnknownMemberType]
            shared = [v for v in MODERN if isinstance(supported, list) and v in supported]
            if exc.code == UNSUPPORTED_VERSION and shared:
                self._use(shared[-1])
                await self._probe()
                return
            status = data.get("status")  # pyright: ignore[reportUnknownMemberType]
            if self._auth is not None and (
                status in (401, 403) or exc.message.startswith("authorization failed")
            ):
                raise  # the server wants authorization we could not get: not an old server
            await self._initialize(LEGACY[-1], exact=False)
        except RequestTimeout:
            await self._initialize(LEGACY[-1], exact=False)
        else:
            shared = [v for v in MODERN if v in discovered.supportedVersions]
            if shared:
                self._use(shared[-1])
            elif any(v in LEGACY for v in discovered.supportedVersions):
                await self._initialize(LEGACY[-1], exact=False)
            else:
                raise NegotiationError(
                    f"no shared revision: the server speaks {discovered.supportedVersions}"
                )

    async def _probe(self) -> pub.DiscoverResult:
        """`server/discover` as the era probe: a legacy server may never answer it, and is then
        not told about it (before `initialize` it should hear nothing else)."""
        codec = self.codec
        assert codec is not None
        raw = await self._exchange(codec, "server/discover", None, self.probe_timeout, cancel=False)
        response = codec.decode_response(raw, "server/discover")
        _raise_error(response)
        return self._discovered(response.result)

    def _use(self, revision: str) -> None:
        self.revision = revision
        self.codec = mcp_wire.codec(revision)

    async def _initialize(self, version: str, *, exact: bool) -> None:
        self._use(version)
        codec = mcp_wire.codec(version)
        models = mcp_wire.revision(version)
        capabilities = self.capabilities(False)
        if version < URL_ELICITATION_SINCE and self._elicitation is None:
            capabilities.pop("elicitation", None)  # URL mode alone: nothing to offer there
        params = {
            "protocolVersion": version,
            "capabilities": fit(models.ClientCapabilities, capabilities),
            "clientInfo": fit(models.Implementation, self.info.model_dump(exclude_unset=True)),
        }
        raw = await self._exchange(codec, "initialize", params, self.timeout)
        response = codec.decode_response(raw, "initialize")
        _raise_error(response)
        offered = response.result.protocolVersion
        if offered != version:
            if exact or offered not in LEGACY:
                raise NegotiationError(f"asked for {version}, the server offered {offered}")
            codec = mcp_wire.codec(offered)
            self._use(offered)
            response = codec.decode_response(raw, "initialize")
        result = response.result
        caps = result.capabilities.model_dump(mode="json", by_alias=True, exclude_unset=True)
        self.server_capabilities = pub.ServerCapabilities.model_validate(
            fit(pub.ServerCapabilities, caps)
        )
        self.server_info = pub.Implementation.model_validate(
            fit(pub.Implementation, result.serverInfo.model_dump(mode="json", exclude_unset=True))
        )
        self.instructions = result.instructions
        await self._send(codec.encode(codec.notification("notifications/initialized")))

    # ------------------------------------------------------------------ requests

    async def _send(self, data: bytes) -> None:
        assert self._session is not None
        await self._session.send(data)

    def _envelope(self, codec: Codec) -> dict[str, Any]:
        """What a modern request's `_meta` envelope says of this client (nothing, legacy)."""
        if codec.era != "modern":
            return {}
        return {
            "client_capabilities": self.capabilities(True, codec.revision),
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
    ) -> bytes:
        """Send one request and return the raw response; a timeout or a cancelled caller cancels
        the request on the wire too."""
        session = self._session
        if session is None:
            raise ConnectionClosed("the client is not connected")
        id = id if id is not None else session.next_id()
        frame = codec.request(method, params, id=id, **self._envelope(codec))
        return await self._round_trip(codec, id, codec.encode(frame), timeout, cancel)

    async def _round_trip(
        self, codec: Codec, id: int, data: bytes, timeout: float | None, cancel: bool = True
    ) -> bytes:
        """Send a request's bytes and return the raw response (see `_exchange`)."""
        session = self._session
        if session is None:
            raise ConnectionClosed("the client is not connected")
        try:
            return await session.request(id, data, timeout)
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

    def _call_frame(
        self, codec: Codec, id: int, data: Mapping[str, Any], progress: bool
    ) -> bytes | None:
        """The bytes of a plain `tools/call` request (a name, JSON arguments, maybe a progress
        token), built without a model: its `_meta` envelope was built and checked once, and
        such params are valid in every revision. None for anything else (the general path)."""
        name = data.get("name")
        arguments = data.get("arguments")
        if (
            type(name) is not str
            or len(data) > (2 if "arguments" in data else 1)
            or not (arguments is None or (type(arguments) is dict and _json_plain(arguments)))
            or not (codec.era == "legacy" or codec.revision == PUBLIC_REVISION)
        ):
            return None
        meta = self._meta_of(codec)
        if progress:
            meta = {**meta, "progressToken": id}
        params = {**data, "_meta": meta} if meta else data
        frame = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
        return pydantic_core.to_json(frame)

    def _meta_of(self, codec: Codec) -> dict[str, Any]:
        """The `_meta` a request of this client carries in `codec`'s revision (the modern
        envelope, with the log level asked for), as the codec writes it: built once per
        revision and level."""
        key = (codec.revision, self.log_level)
        meta = self._metas.get(key)
        if meta is None:
            meta = {}
            if codec.era == "modern":
                params: dict[str, Any] = {"name": ""}
                if self.log_level is not None:
                    params["_meta"] = {LOG_LEVEL_KEY: self.log_level}
                frame = codec.request("tools/call", params, id=0, **self._envelope(codec))
                meta = plain(frame)["params"]["_meta"]
            self._metas[key] = meta
        return meta

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
        """Any client->server method: public params in, the public result out. A modern server's
        `input_required` answers are resolved through the callbacks, then retried. A task
        answered instead of a result (with `Client(tasks=True)`) comes back as a `TaskHandle`;
        `task`: 2025-11-25's task augmentation (`params.task`) to send."""
        codec = self.codec
        session = self._session
        if codec is None or session is None:
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
        for _ in range(MAX_INPUT_ROUNDS + 1):
            id = session.next_id()
            kept = False  # a task's progress goes on coming on its request's token
            if progress is not None:
                self._progress[id] = progress
            frame = self._request_frame(codec, method, data, id, progress is not None, task)
            try:
                # `_round_trip`, inlined: one coroutine less on every call's path
                raw = await session.request(id, frame, timeout)
            except BaseException as exc:
                await self._given_up(codec, id, exc, True)
                raise
            else:
                if self.tasks:
                    created = _created_task(raw)
                    if created is not None:
                        kept = progress is not None
                        token = id if kept else None
                        return TaskHandle(self, created["taskId"], created, token)
            finally:
                if progress is not None and not kept:
                    self._progress.pop(id, None)
            response = codec.decode_response(raw, method)
            if _error_of(response) is not None:
                await self._url_elicitations(response)
                _raise_error(response)
            result = response.result
            if codec.revision != PUBLIC_REVISION:
                result = codec.to_public(method, result, "result")
            if not _input_required(type(result)):
                return result
            answers = await self._answer_all(result.inputRequests or {})
            data = _retry_params(data, answers, result.requestState)
        raise ProtocolError(INTERNAL_ERROR, f"{method}: more than {MAX_INPUT_ROUNDS} input rounds")

    def _request_frame(
        self,
        codec: Codec,
        method: str,
        data: Any,
        id: int,
        progress: bool,
        task: Mapping[str, Any] | None,
    ) -> bytes:
        """A request's bytes: a plain `tools/call` by the short builder, else by `_frame`."""
        if method == "tools/call" and task is None and type(data) is dict:
            frame = self._call_frame(codec, id, data, progress)
            if frame is not None:
                return frame
        return self._frame(codec, method, data, id, progress, task)

    def _frame(
        self,
        codec: Codec,
        method: str,
        data: Any,
        id: int,
        progress: bool,
        task: Mapping[str, Any] | None,
    ) -> bytes:
        """A request's bytes, built and checked by the codec (from the public params)."""
        meta = dict(data.get("_meta") or {})
        if progress:
            meta["progressToken"] = id
        if self.log_level is not None and codec.era == "modern":
            meta[LOG_LEVEL_KEY] = self.log_level
        payload = {**data, "_meta": meta} if meta else data
        if codec.revision != PUBLIC_REVISION and method in codec.public:
            envelope = self._envelope(codec)
            payload = plain(codec.from_public(method, payload, "params", envelope=envelope))
        if task is not None and codec.era != "modern":
            payload = {**payload, "task": dict(task)}
        built = codec.request(method, payload or None, id=id, **self._envelope(codec))
        return codec.encode(built)

    async def _url_elicitations(self, response: Any) -> None:
        """A -32042 answer (2025-11-25): its URLs go to `on_elicit_url` (the request still
        fails with that `McpError`; retry it once the user is done)."""
        error = _error_of(response)
        if error is None or error.code != URL_ELICITATION_REQUIRED or self._elicit_url is None:
            return
        data = plain(getattr(error, "data", None))
        items = data.get("elicitations") if isinstance(data, dict) else None
        for item in items if isinstance(items, list) else []:
            fields: dict[str, Any] = item if isinstance(item, dict) else {}
            message, url, elicitation_id = (
                fields.get("message"),
                fields.get("url"),
                fields.get("elicitationId"),
            )
            problem = url_problem(url) if isinstance(message, str) else "no message"
            if problem is not None or not isinstance(message, str):
                log.warning("a URL elicitation of the server refused: %s", problem)
                continue
            known = elicitation_id if isinstance(elicitation_id, str) else None
            await self._elicit_url(ElicitUrl(message, str(url), known))

    async def _answer_all(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        answers: dict[str, Any] = {}

        async def one(key: str, request: Any) -> None:
            answers[key] = plain(await self._answer(request.method, request.params))

        async with anyio.create_task_group() as tasks:
            for key, request in requests.items():
                tasks.start_soon(one, key, request)
        return answers

    async def answer_inputs(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """A task's questions answered through the callbacks (see `TaskHandle`)."""
        return await self._answer_all(requests)

    async def task_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A task method (`tasks/get`, ...) and its result as plain data (2026-07-28: through
        the codec with the Tasks extension)."""
        codec = self.codec
        if codec is None or self._session is None:
            raise ConnectionClosed("the client is not connected")
        if codec.era == "modern":
            if not tasks_available(codec.revision):
                raise ProtocolError(
                    METHOD_NOT_FOUND,
                    f"revision {codec.revision} has no {TASKS_EXTENSION} extension "
                    "(mcp_wire.EXTENSION_FITS says why)",
                )
            codec = tasks_codec(codec.revision)
        raw = await self._exchange(codec, method, params, self.timeout)
        response = codec.decode_response(raw, method)
        _raise_error(response)
        result = plain(response.result)
        if method == "tasks/result" and codec.revision != PUBLIC_REVISION:
            result.pop("_meta", None)
            result = plain(codec.to_public("tools/call", result, "result"))
        return cast(dict[str, Any], result)

    async def list_tasks(self, cursor: str | None = None) -> dict[str, Any]:
        """2025-11-25 `tasks/list`: the tasks the server lets this client see (`tasks`, and
        `nextCursor`), as plain data. 2026-07-28 has no such method (-32601, raised locally)."""
        return await self.task_request("tasks/list", _cursor(cursor) or {})

    def task(self, task_id: str) -> TaskHandle:
        """A handle on a task known by its id (one started earlier, maybe by another process)."""
        return TaskHandle(self, task_id)

    async def _answer(self, method: str, params: Any) -> BaseModel:
        """The callback's answer to what the server asks, as the public result model."""
        if method == "elicitation/create" and getattr(params, "mode", None) == "url":
            if self._elicit_url is None:
                raise ProtocolError(
                    INVALID_PARAMS, "this client does not take URL-mode elicitation"
                )
            problem = url_problem(params.url)
            if problem is not None:  # not shown to the user: declined for them
                log.warning("a URL elicitation of the server declined: %s", problem)
                return pub.ElicitResult.model_validate({"action": "decline"})
            extra = params.model_extra or {}
            asked = ElicitUrl(params.message, params.url, extra.get("elicitationId"))
            return pub.ElicitResult.model_validate(plain(await self._elicit_url(asked)))
        if method == "elicitation/create" and self._elicitation is not None:
            return pub.ElicitResult.model_validate(plain(await self._elicitation(params)))
        if method == "sampling/createMessage" and self._sampling is not None:
            return pub.CreateMessageResult.model_validate(plain(await self._sampling(params)))
        if method == "roots/list" and self._roots is not None:
            roots = self._roots
            value: Any = await roots() if callable(roots) else roots
            if not isinstance(value, pub.ListRootsResult):
                listed = [root_of(plain(r)) for r in value]
                value = pub.ListRootsResult.model_validate({"roots": listed})
            return value
        raise ProtocolError(METHOD_NOT_FOUND, f"this client does not answer {method}")

    # ------------------------------------------------------------------ typed calls

    async def discover(self, *, timeout: float | None = None) -> pub.DiscoverResult:
        return self._discovered(await self.request("server/discover", {}, timeout=timeout))

    def _discovered(self, result: pub.DiscoverResult) -> pub.DiscoverResult:
        self.server_capabilities = result.capabilities
        self.instructions = result.instructions
        if result.meta is not None:
            self.server_info = result.meta.io_modelcontextprotocol_serverInfo
        return result

    async def ping(self) -> None:
        """Legacy only (2026-07-28 removed it): a ProtocolError -32601, raised locally."""
        await self.request("ping")

    async def list_tools(self, cursor: str | None = None) -> pub.ListToolsResult:
        """Every tool, the server's pages followed; with `cursor`, that one page. Likewise
        `list_resources`, `list_resource_templates` and `list_prompts`; their pages come from
        `cache` while the server's `ttlMs` allows."""
        if self.tasks and self.codec is not None and "tasks/get" in self.codec.methods:
            result = await self._listing("tools", cursor, self._list_task_tools)
        else:
            result = await self._listing("tools", cursor, self._page_of("tools/list"))
        for tool in result.tools:
            if tool.outputSchema is not None:
                self.output_schemas[tool.name] = plain(tool.outputSchema)
            else:
                self.output_schemas.pop(tool.name, None)
        return result

    async def _list_task_tools(self, cursor: str | None) -> pub.ListToolsResult:
        """2025-11-25 tools/list, keeping each tool's `execution.taskSupport` (the public
        models have none)."""
        listed = await self.task_request("tools/list", _cursor(cursor))
        self._tools_listed = True
        for tool in listed.get("tools") or ():
            support = (tool.get("execution") or {}).get("taskSupport")
            if isinstance(support, str):
                self._task_support[tool.get("name")] = support
        codec = self.codec
        assert codec is not None
        return codec.to_public("tools/list", listed, "result")

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
        """Call a tool. With `result_type` (what the tool's function returns: a model, TypedDict,
        dataclass, `int`, `list[str]`, ...), the typed value of its `structuredContent`
        (unwrapped from `{"result": ...}` as the server wrapped it), a failed call raising
        `ToolError`. A tool whose `outputSchema` `tools/list` gave must send structured content
        (the object with its required members); `InvalidOutput` if not, or if it does not fit
        `result_type`. With `Client(tasks=True)` a task the server makes of the call is followed
        to its end (its result returned, its questions answered through the callbacks)."""
        if self.tasks:
            answer = await self.start_tool(name, arguments, progress=progress, timeout=timeout)
            result = await answer.result() if isinstance(answer, TaskHandle) else answer
        else:  # what `start_tool` does then, without its coroutine
            params: dict[str, Any] = {"name": name}
            if arguments is not None:
                params["arguments"] = dict(arguments)
            result = await self.request("tools/call", params, progress=progress, timeout=timeout)
        if result.isError:
            if result_type is None:
                return result
            text = " ".join(b.text for b in result.content if isinstance(b, pub.TextContent))
            raise ToolError(text or f"tool {name} failed", structured=result.structuredContent)
        schema = self.output_schemas.get(name)
        if schema is None and result_type is None:
            return result
        structured = plain(result.structuredContent)
        if schema is not None:
            missing = [k for k in schema.get("required", ()) if k not in (structured or {})]
            if not isinstance(structured, dict) or missing:
                raise InvalidOutput(
                    f"tool {name}: the structured content its outputSchema promises is missing "
                    f"({', '.join(missing) or 'structuredContent'})"
                )
        if result_type is None:
            return result
        try:
            output = reader(result_type)
        except TypeError:  # unhashable (an Annotated with a dict in it, say)
            output = output_of(result_type, name)
        if output is None:
            raise TypeError(f"result_type {result_type!r} is not structured output")
        try:
            return output.read(structured)
        except pydantic.ValidationError as exc:
            raise InvalidOutput(f"tool {name}: {summary(exc)}") from None

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl_ms: int | None = None,
        progress: Progress | None = None,
        timeout: float | None = None,
    ) -> pub.CallToolResult | TaskHandle:
        """Call a tool and return at once what the server answers: its result, or (with
        `Client(tasks=True)`) a `TaskHandle` when it runs the call as a task. On 2025-11-25 the
        call asks for a task (`params.task`, with `ttl_ms`) when the tool says it may be one."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        task = None
        if self.tasks and not self.modern and await self._task_tool(name):
            task = {"ttl": ttl_ms} if ttl_ms is not None else {}
        return await self.request(
            "tools/call", params, progress=progress, timeout=timeout, task=task
        )

    async def _task_tool(self, name: str) -> bool:
        """2025-11-25: whether the server runs tool calls as tasks and this tool may be one
        (its `execution.taskSupport`, from the last `list_tools`; listed once if unknown)."""
        if name not in self._task_support and not self._tools_listed:
            self._tools_listed = True
            if self.codec is not None and "tasks/get" in self.codec.methods:
                cursor: str | None = None
                while True:
                    listed = await self._list_task_tools(cursor)
                    cursor = listed.nextCursor
                    if cursor is None:
                        break
        return self._task_support.get(name) in ("optional", "required")

    async def list_resources(self, cursor: str | None = None) -> pub.ListResourcesResult:
        return await self._listing("resources", cursor, self._page_of("resources/list"))

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> pub.ListResourceTemplatesResult:
        page = self._page_of("resources/templates/list")
        return await self._listing("resourceTemplates", cursor, page)

    async def read_resource(self, uri: str) -> pub.ReadResourceResult:
        return await self.request("resources/read", {"uri": uri})

    async def list_prompts(self, cursor: str | None = None) -> pub.ListPromptsResult:
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
        params: dict[str, Any] = {
            "ref": plain(ref),
            "argument": {"name": argument, "value": value},
        }
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        return await self.request("completion/complete", params)

    async def set_log_level(self, level: str) -> None:
        """Receive log messages at `level` and above (legacy: for the session; modern: asked
        for on every later request)."""
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
        """Change notifications while the block runs: modern `subscriptions/listen`; on a legacy
        session, `resources/subscribe` plus the session's list-changed notifications.
        `task_ids` (2026-07-28, `Client(tasks=True)`): `notifications/tasks` of those tasks,
        their params plain data (the task as `tasks/get` gives it)."""
        send, receive = anyio.create_memory_object_stream[Notice](math.inf)
        wanted: dict[str, Any] = {}
        for flag, on in (
            ("toolsListChanged", tools),
            ("promptsListChanged", prompts),
            ("resourcesListChanged", resources),
        ):
            if on:
                wanted[flag] = True
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        if task_ids:
            wanted["taskIds"] = list(task_ids)
        if self.modern:
            async with self._modern_listen(wanted, send, receive) as subscription:
                yield subscription
            return
        subscription = Subscription(None, wanted, receive)
        for uri in resource_uris:
            await self.request("resources/subscribe", {"uri": uri})
        self._legacy_listeners.append((subscription, send))
        try:
            yield subscription
        finally:
            self._legacy_listeners.remove((subscription, send))
            send.close()
            for uri in resource_uris:
                with anyio.CancelScope(shield=True):
                    try:
                        await self.request("resources/unsubscribe", {"uri": uri})
                    except (ProtocolError, ConnectionClosed):
                        pass

    @asynccontextmanager
    async def _modern_listen(
        self,
        wanted: dict[str, Any],
        send: MemoryObjectSendStream[Notice],
        receive: MemoryObjectReceiveStream[Notice],
    ) -> AsyncIterator[Subscription]:
        codec, session = self.codec, self._session
        assert codec is not None and session is not None
        id = session.next_id()
        acknowledged = anyio.Event()
        subscription = Subscription(id, {}, receive)
        self._subscriptions[id] = send
        self._acknowledged[id] = acknowledged

        refused: list[BaseException] = []

        async def hold() -> None:
            """The listen request stays open until either side ends it; its response (a
            refusal, or the server's graceful end) closes the stream."""
            try:
                raw = await self._exchange(
                    codec, "subscriptions/listen", {"notifications": wanted}, None, id
                )
                _raise_error(codec.decode_response(raw, "subscriptions/listen"))
            except (ConnectionClosed, ProtocolError) as exc:
                if not acknowledged.is_set():
                    refused.append(exc)
                elif isinstance(exc, McpError):
                    subscription.error = exc
            finally:
                send.close()
                acknowledged.set()

        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(hold)
                with anyio.fail_after(self.timeout):
                    await acknowledged.wait()
                if not refused:
                    subscription.honoured = self._honoured.pop(id, {})
                    try:
                        yield subscription
                    finally:
                        tasks.cancel_scope.cancel()
        finally:
            self._subscriptions.pop(id, None)
            self._acknowledged.pop(id, None)
            self._honoured.pop(id, None)
        if refused:
            raise refused[0]

    # ------------------------------------------------------------------ frames from the server

    async def on_request(self, raw: bytes, env: Peek) -> None:
        codec = self.codec
        id, method = env.id, env.method
        if codec is None or id is None or method is None:
            return
        data = await answered(id, method, self._respond(codec, raw, id, method), self.error_frame)
        if data is not None:
            await self._send(data)

    async def _respond(self, codec: Codec, raw: bytes, id: RequestId, method: str) -> bytes:
        """The response to the server's request (its callback's answer)."""
        message = codec.decode(raw)
        if method == "ping":
            result: Any = {}
        else:
            params = codec.to_public(method, message.params, "params")
            result = codec.from_public(method, await self._answer(method, params), "result")
        return codec.encode(codec.response(id, method, result))

    async def on_notification(self, raw: bytes, env: Peek) -> None:
        codec = self.codec
        if codec is None:
            return
        if env.method == "notifications/tasks":  # the Tasks extension's: no model in the codec
            self._task_notification(raw)
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
        meta = getattr(params, "meta", None)
        subscription = getattr(meta, "io_modelcontextprotocol_subscriptionId", None)
        if method == "notifications/progress":
            callback = self._progress.get(params.progressToken)
            if callback is not None:
                outcome = callback(params.progress, params.total, params.message)
                if outcome is not None:
                    await outcome
            return
        if method == "notifications/message" and self._on_log is not None:
            outcome = self._on_log(params)
            if outcome is not None:
                await outcome
        elif method == "notifications/cancelled":
            target = getattr(params, "requestId", None)
            stream = self._subscriptions.get(target) if target is not None else None
            if stream is not None:
                stream.close()  # the server ended a listen stream
            elif target is not None and self._session is not None:
                self._session.cancel_incoming(target)
            return
        if subscription is not None and subscription in self._subscriptions:
            if method == "notifications/subscriptions/acknowledged":
                honoured = params.notifications.model_dump(exclude_unset=True)
                self._honoured[subscription] = honoured
                self._acknowledged[subscription].set()
            else:
                self._subscriptions[subscription].send_nowait(Notice(method, params))
            return
        for listener, stream in self._legacy_listeners:
            if _legacy_wants(listener.honoured, method, params):
                stream.send_nowait(Notice(method, params))
        if self._on_notice is not None:
            outcome = self._on_notice(Notice(method, params))
            if outcome is not None:
                await outcome

    def forget_progress(self, token: RequestId) -> None:
        """A task kept its request's progress token until now, the end of it."""
        self._progress.pop(token, None)

    def _task_notification(self, raw: bytes) -> None:
        params = pydantic_core.from_json(raw).get("params")
        if type(params) is not dict:
            return
        meta = params.pop("_meta", None)
        subscription = meta.get(SUBSCRIPTION_ID_KEY) if type(meta) is dict else None
        stream = self._subscriptions.get(subscription) if subscription is not None else None
        if stream is not None:
            stream.send_nowait(Notice("notifications/tasks", params))

    async def on_batch(self, raw: bytes, items: list[Any]) -> None:
        for item in items:
            if type(item) is dict and "method" in item and "id" not in item:
                frame = pydantic_core.to_json(item)
                await self.on_notification(frame, peek_any(frame))
        log.warning("a batch from the server was read for its notifications only")

    def error_frame(self, id: RequestId | None, error: ProtocolError) -> bytes:
        return error_frame(self.codec, id, error)

    async def on_close(self) -> None:
        for stream in list(self._subscriptions.values()):
            stream.close()
        for _, stream in self._legacy_listeners:
            stream.close()


_LEGACY_FLAGS = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}


def _legacy_wants(wanted: Mapping[str, Any], method: str, params: Any) -> bool:
    flag = _LEGACY_FLAGS.get(method)
    if flag is not None:
        return bool(wanted.get(flag))
    if method == "notifications/resources/updated":
        return getattr(params, "uri", None) in (wanted.get("resourceSubscriptions") or ())
    return False


def _created_task(raw: bytes) -> dict[str, Any] | None:
    """The task of a response answering with one (2026-07-28 `resultType: "task"`, 2025-11-25
    `CreateTaskResult`), as plain data; None for any other response."""
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


def _error_of(response: Any) -> Any:
    """The error of a decoded response, None for a result (read from the model's fields: a
    missing attribute costs a pydantic `__getattr__` and an exception)."""
    fields = getattr(response, "__dict__", None)
    return fields.get("error") if fields is not None else getattr(response, "error", None)


def _json_plain(value: Any, depth: int = 0) -> bool:
    """Whether `value` is JSON data as it is: built-in types only, finite numbers, string keys
    (what a request may carry unvalidated; anything else takes the validating path)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth > 32:
        return False
    if kind is dict:
        for k, v in value.items():  # (a loop, not all() of a generator: every call's path)
            if type(k) is not str:
                return False
            if type(v) is not str and not _json_plain(v, depth + 1):
                return False
        return True
    if kind is list:
        for v in value:
            if type(v) is not str and not _json_plain(v, depth + 1):
                return False
        return True
    return False


@functools.cache
def _input_required(cls: type) -> bool:
    """Whether a result of this class asks for input (an ABC `isinstance` per call, else)."""
    return issubclass(cls, pub.InputRequiredResult)


def _raise_error(response: Any) -> None:
    error = _error_of(response)
    if error is not None:
        raise McpError(error.code, error.message, plain(getattr(error, "data", None)))


def _server_key(target: Any) -> str:
    """Who answers, for the cache: a URL, a command line, else the object itself."""
    if isinstance(target, str):
        return target
    if isinstance(target, Sequence):
        return shlex.join(str(part) for part in cast(Sequence[Any], target))
    return f"{type(target).__name__}@{id(target):x}"


def _principal(auth: Any, headers: Mapping[str, str]) -> str:
    """Whose private results these are: a digest of the fixed credentials, the auth object's
    identity, or "" (no credentials: the local user, over stdio or in memory)."""
    if isinstance(auth, str):
        return "bearer:" + hashlib.sha256(auth.encode()).hexdigest()
    if auth is not None:
        return f"auth:{id(auth):x}"
    given = {k.lower(): v for k, v in headers.items()}.get("authorization")
    return "" if given is None else "header:" + hashlib.sha256(given.encode()).hexdigest()


def _cursor(cursor: str | None) -> dict[str, Any]:
    return {} if cursor is None else {"cursor": cursor}
