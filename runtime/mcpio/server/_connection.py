"""One client connection to a `Server`, in either era, decided by the client's first move:
`initialize` opens a legacy session (its negotiated revision, capabilities, log level and
resource subscriptions live here); a request carrying the modern `_meta` envelope is served
statelessly, from what that request says alone.

Each request is read in its era (`_initialize`, `_legacy`, `_modern`: its params and context),
then takes one path in both eras: `serve` (the server's middlewares and the handler) and `write`
(its result as the response frame)."""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Awaitable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pydantic_core
from pydantic import BaseModel

import mcp_wire
from mcp_wire_runtime._peek import Peek
from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    ProtocolError,
)
from mcpio._core import ext_methods
from mcpio._core.context import (
    Context,
    ElicitUrl,
    HttpRequest,
    InputRequired,
    MethodHandler,
    RetriedInputs,
    SentInputs,
    UrlElicitationRequired,
)
from mcpio._core.errors import McpError
from mcpio._core.handlers import SelfWritten, TextAnswer, WireResult, tool_result
from mcpio._core.jsonrpc import RequestId, error_frame, failure_answer, plain
from mcpio._core.negotiate import (
    LEGACY,
    MODERN,
    codec_of,
    fit,
    legacy_version,
    read_legacy,
    read_modern,
)
from mcpio._core.protocol_rules import MAX_INPUT_ROUNDS, unsupported_version
from mcpio._core.sealing import request_digest
from mcpio._core.session import Session, send_frame
from mcpio._core.transport import Transport
from mcpio.latest import REVISION as PUBLIC_REVISION
from mcpio.latest import public as pub
from mcpio.server._listen import Listener, listen
from mcpio.server._served import Served

if TYPE_CHECKING:
    from mcpio._core.principal import Principal

log = logging.getLogger("mcpio")

# The methods a connection answers itself (its handlers' names), per era: a legacy session's
# lifecycle, and a modern listen stream (written on this connection).
_LEGACY_OWN = {
    "initialize": "_initialized",
    "ping": "_ping",
    "logging/setLevel": "_set_level",
    "resources/subscribe": "_subscribe",
    "resources/unsubscribe": "_unsubscribe",
}
_MODERN_OWN = {"subscriptions/listen": "_listen"}
_NO_CAPABILITIES = pub.ClientCapabilities()  # a connection's before initialize (shared)


class ServerConnection:
    """One client's connection to a server (see the module's docstring), made by
    `Server.connect`. `principal`: who the transport authenticated; `modern`: it speaks
    2026-07-28 from its first request; a listen stream on it ends gracefully at `listen_until`
    (seconds since the epoch) and is cut off when `listen_queue` notifications wait for its
    reader."""

    # What a legacy session's initialize sets (class defaults until then: the connection made
    # for each modern HTTP request reads none of them).
    _session: Session | None = None  # made on first use (`session`)
    client_capabilities = _NO_CAPABILITIES  # replaced by initialize, never changed
    client_capabilities_data: Mapping[str, Any] = MappingProxyType({})  # likewise
    client_info: pub.Implementation | None = None

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
        self.identity = server.identity
        self.transport = transport
        self.codec: Codec | None = None  # legacy: the negotiated revision's codec
        self.log_level: str | None = None
        self.modern_seen = modern  # once modern, a request without its envelope: invalid params
        self.principal = principal  # the HTTP app updates it with each request's token
        self.listen_until = listen_until
        self.listen_queue = listen_queue
        self.subscriptions: set[str] = set()
        self.listeners: set[Listener] = set()

    @functools.cached_property
    def state(self) -> dict[str, Any]:
        """A legacy session's `ctx.state`, kept across its requests (made on first use: a
        modern request's connection has none)."""
        return {}

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
        """The principal's subject (with authorization), else None."""
        return self.principal.subject if self.principal is not None else None

    async def run(self) -> None:
        """Serve the connection until it closes."""
        try:
            await self.session.run()
        finally:
            self.hub.sessions.discard(self)

    # ------------------------------------------------------------------ frames in

    async def on_request(self, raw: bytes, env: Peek, message: Any = None) -> None:
        """Answer one request frame; called by the transport (`message`: as `answer`'s)."""
        data = await self.answer(raw, env, message)
        if data is not None:
            session = self._session
            if session is None:
                await send_frame(self.transport, data)
            else:
                assert env.id is not None  # (a request's, as `answer` checked)
                await session.respond(env.id, data)

    def read_request(self, raw: bytes) -> tuple[Any, Peek] | None:
        """A request decoded whole, in the revision it is served in, with its envelope (what
        `peek_any` reads of it): the session's one parse of a frame it takes as it arrives;
        None leaves the frame to `peek_any`, then `answer` decodes it."""
        codec = self.codec
        if codec is None:
            return read_modern(MODERN[-1], raw)
        return read_legacy(codec, raw)

    async def answer(self, raw: bytes, env: Peek, message: Any = None) -> bytes | None:
        """The response to a request, as bytes (None: none to send): `on_request` sends it, the
        HTTP app writes it itself. `message`: the request already decoded (`read_request`,
        `read_modern`)."""
        id = env.id
        method = env.method
        assert id is not None and method is not None  # a request's envelope
        codec = self.codec
        try:
            if method == "initialize" and env.protocol_version not in MODERN:
                return await self._initialize(raw, id)
            if method in self.server.extensions.methods and self._extended(method, env):
                return await self._extension(raw, id, env)
            if codec is not None:
                return await self._legacy(codec, raw, id, env, message)
            return await self._modern(raw, id, env, message)
        except Exception as exc:
            return failure_answer(id, method, exc, self.error_frame)

    async def on_notification(self, raw: bytes, env: Peek) -> None:
        """Handle one notification from the client (cancellation, roots changes, ...)."""
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
        """Serve a JSON-RPC batch where the revision has batches (2025-03-26), each request in
        it as one sent alone (`answer`); else one -32600 error."""
        codec = self.codec
        if codec is None or not codec.batching:
            revision = codec.revision if codec else "this connection"
            error = ProtocolError(INVALID_REQUEST, f"JSON-RPC batches are not part of {revision}")
            await self.session.reply(None, error)
            return
        await self.session.serve_batch(items, self.answer, codec.unbatchable)

    async def on_close(self) -> None:
        """Drop the connection's session and end its listeners."""
        self.hub.sessions.discard(self)
        for listener in list(self.listeners):
            self.hub.listeners.discard(listener)
            listener.end()

    def error_frame(self, id: RequestId | None, error: ProtocolError) -> bytes:
        """The error response frame for `id`, in this connection's revision."""
        return error_frame(self.codec, id, error)

    # ------------------------------------------------------------------ the pipeline

    def serve(
        self, ctx: Context, method: str, params: Any, handler: MethodHandler | None = None
    ) -> Awaitable[Any]:
        """A request's result: the one path every request takes once read, in both eras, through
        the server's middlewares (`Server.dispatch`) to its handler: the connection's own for
        the session's lifecycle (legacy) and `subscriptions/listen` (modern), else the
        server's handler table's. `params`: the public model, or (methods outside the public
        revision) the revision's own model or plain data (see `mcpio.middleware`)."""
        if handler is None:
            own = (_MODERN_OWN if ctx.modern else _LEGACY_OWN).get(method)
            handler = getattr(self, own) if own is not None else None
        return self.server.dispatch(ctx, method, params, handler)  # (awaited by the caller)

    def write(self, codec: Codec, id: RequestId, method: str, result: Any) -> bytes | None:
        """The one result writer, both eras: a request's result as its response frame (None: no
        answer is left to send). A result is a public model, or a `WireResult` (data in the
        revision's own shape; `TextAnswer` and `SelfWritten` are written as one); a modern
        result carries the server's info in its `_meta`."""
        if result is None:
            return None
        modern = codec.revision in MODERN
        kind = type(result)
        if kind is TextAnswer:
            if not modern:
                return codec.result_frame(id, result.json(False))
            if codec.revision == PUBLIC_REVISION:
                return codec.result_frame(id, result.json(True), self.identity.result_meta_json)
            result, kind = tool_result(result.text), pub.CallToolResult
        elif kind is not WireResult and isinstance(result, SelfWritten):
            result, kind = result.wire(codec.revision, modern), WireResult
        if kind is WireResult:
            return self._wire(codec, id, method, result, modern)
        if modern:
            return self._stamped(codec, id, method, result)
        own = codec.from_public(method, result, "result")
        self.server.extensions.written(method, own, codec.revision)
        return codec.encode_result(id, own)

    def _wire(
        self, codec: Codec, id: RequestId, method: str, result: WireResult, modern: bool
    ) -> bytes:
        """A result in the revision's own shape, checked by its codec (an extension's, or the
        request's) where that has the method, else written as it is."""
        data = result.data
        if modern:
            data = ext_methods.stamped(data, self.identity.info_data())
        checker = result.codec or codec
        if method in checker.methods:
            return checker.encode(checker.response(id, method, data))
        return codec.result_frame(id, pydantic_core.to_json(data))

    def _stamped(self, codec: Codec, id: RequestId, method: str, result: Any) -> bytes:
        """A modern result model as its response frame, the server's info in its `_meta`."""
        public = codec.revision == PUBLIC_REVISION
        if public and "meta" not in result.__pydantic_fields_set__:
            return codec.encode_result(id, result, self.identity.result_meta_json)
        meta = result.meta
        if meta is None:
            result.meta = self.identity.result_meta
        elif meta.io_modelcontextprotocol_serverInfo is None:
            meta.io_modelcontextprotocol_serverInfo = self.identity.info
        own = result if public else codec.from_public(method, result, "result")
        return codec.encode_result(id, own)

    def _context(
        self,
        codec: Codec,
        id: RequestId,
        inputs: SentInputs | RetriedInputs,
        capabilities: pub.ClientCapabilities,
        client_info: pub.Implementation | None,
        meta: Any,
        log_level: str | None,
    ) -> Context:
        """A handler's context: what its request says (or, legacy, its session) of the client;
        `meta`: the request's `_meta` (its progress token)."""
        legacy = type(inputs) is SentInputs
        ctx = Context(
            revision=codec.revision,
            request_id=id,
            client_capabilities=capabilities,
            client_info=client_info,
            inputs=inputs,
            notify=lambda m, p: self.send_notification(codec, m, p),
            codec=codec,
            progress_token=getattr(meta, "progressToken", None),
            log_level=log_level,
            principal=self.principal,
            state=self.state if legacy else None,  # legacy: the session's
            dispatch=self.server.dispatch,
        )
        if legacy and self._http_requests is not None:  # (a legacy HTTP session's POST)
            request = self._http_requests.get(id)
            if request is not None:
                ctx._answering(request)  # pyright: ignore[reportPrivateUsage]
        return ctx

    @functools.cached_property
    def _http_requests(self) -> Mapping[RequestId, HttpRequest] | None:
        """The HTTP requests that carry the requests of a legacy HTTP session, by id (its
        transport's); None on any other transport. (Asked once: a legacy session's.)"""
        return getattr(self.transport, "http_requests", None)

    # ------------------------------------------------------------------ legacy

    async def _initialize(self, raw: bytes, id: RequestId) -> bytes | None:
        """A legacy session's first request: read in the revision it negotiates."""
        if self.codec is not None:
            raise ProtocolError(INVALID_REQUEST, f"already initialized ({self.codec.revision})")
        params = pydantic_core.from_json(raw).get("params")  # once a session: its version
        requested = params.get("protocolVersion") if type(params) is dict else None
        codec = codec_of(legacy_version(requested))
        own = _data(codec.decode(raw).params)  # plain data, as every method outside the public
        caps = pub.ClientCapabilities.model_validate(
            fit(pub.ClientCapabilities, own["capabilities"])
        )
        info = pub.Implementation.model_validate(own["clientInfo"])
        ctx = self._context(codec, id, SentInputs(self.ask_client), caps, info, None, None)
        result = await self.serve(ctx, "initialize", own)
        return self.write(codec, id, "initialize", result)

    async def _initialized(self, ctx: Context, params: Any) -> WireResult:
        """`initialize`'s handler: the session opens in the request's revision."""
        codec = codec_of(ctx.revision)
        self.client_capabilities_data = dict(params.get("capabilities") or {})
        self.client_capabilities = ctx.client_capabilities
        self.client_info = ctx.client_info
        self.codec = codec
        models = mcp_wire.revision(codec.revision)
        server_caps = self.server.capabilities_in(codec.revision)
        extensions = server_caps.get("extensions")  # (SEP-2133 predates the legacy schemas)
        identity = self.identity
        result: dict[str, Any] = {
            "protocolVersion": codec.revision,
            "capabilities": {
                **fit(models.ServerCapabilities, server_caps),
                **({"extensions": extensions} if extensions else {}),
            },
            "serverInfo": fit(models.Implementation, identity.info.model_dump(exclude_unset=True)),
        }
        if identity.instructions:
            result["instructions"] = identity.instructions
        self.hub.sessions.add(self)
        return WireResult(result)

    async def _legacy(
        self, codec: Codec, raw: bytes, id: RequestId, env: Peek, message: Any = None
    ) -> bytes | None:
        if env.protocol_version in MODERN:
            raise ProtocolError(
                INVALID_REQUEST, f"this connection is a legacy session of revision {codec.revision}"
            )
        if message is None:
            message = codec.decode(raw)
        method = message.method
        own = message.params
        if method in _LEGACY_OWN:
            params = _data(own) if own is not None else {}  # outside the public revision
        else:
            params = codec.public_params(
                method, own, raw, client_capabilities=self.client_capabilities_data
            )
        inputs = SentInputs(self.ask_client)
        meta = getattr(params, "meta", None)
        caps, info = self.client_capabilities, self.client_info
        ctx = self._context(codec, id, inputs, caps, info, meta, self.log_level)
        for opener in self.server.extensions.openers:
            opener(ctx, own, self)
        return self.write(codec, id, method, await self.serve(ctx, method, params))

    def _extended(self, method: str, env: Peek) -> bool:
        """Whether an extension answers `method` in the request's revision."""
        codec = self.codec
        if codec is not None:
            revision = codec.revision
        else:
            version = env.protocol_version
            revision = version if version in MODERN else MODERN[-1]
        return self.server.extensions.serves(method, revision)

    async def _extension(self, raw: bytes, id: RequestId, env: Peek) -> bytes | None:
        """A request of an extension's method, either era: its params plain data, as the
        extension reads them (`mcpio._core.extension`)."""
        method = env.method
        assert method is not None  # a request's
        codec = self.codec
        extensions = self.server.extensions
        if codec is not None:  # a legacy session
            if env.protocol_version in MODERN:
                reason = f"this connection is a legacy session of revision {codec.revision}"
                raise ProtocolError(INVALID_REQUEST, reason)
            params = extensions.read(method, codec.revision, raw)
            inputs: SentInputs | RetriedInputs = SentInputs(self.ask_client)
            caps, info, level = self.client_capabilities, self.client_info, self.log_level
            session: ServerConnection | None = self
        else:
            codec = codec_of(self._modern_version(env.protocol_version))
            params = extensions.read(method, codec.revision, raw)
            inputs, level, session = RetriedInputs({}), None, None
            caps, info = ext_methods.envelope(params)
        ctx = self._context(codec, id, inputs, caps, info, None, level)
        for opener in extensions.openers:
            opener(ctx, params, session)
        result = await self.serve(ctx, method, params, extensions.methods[method])
        if type(result) is not WireResult and not isinstance(result, SelfWritten):
            result = WireResult(dict(result)) if result is not None else None
        if type(result) is WireResult and result.codec is None:
            result = result._replace(codec=extensions.codec(method, codec.revision))
        return self.write(codec, id, method, result)

    # The legacy session's own methods (their params: plain data, checked by the revision).

    async def _ping(self, ctx: Context, params: dict[str, Any]) -> WireResult:
        return WireResult({})

    async def _set_level(self, ctx: Context, params: dict[str, Any]) -> WireResult:
        self.log_level = params["level"]
        return WireResult({})

    async def _subscribe(self, ctx: Context, params: dict[str, Any]) -> WireResult:
        self.subscriptions.add(params["uri"])
        return WireResult({})

    async def _unsubscribe(self, ctx: Context, params: dict[str, Any]) -> WireResult:
        self.subscriptions.discard(params["uri"])
        return WireResult({})

    async def ask_client(self, method: str, params: dict[str, Any]) -> BaseModel:
        """Ask the legacy session's client (a server->client request) and wait for its answer."""
        codec = self.codec
        assert codec is not None
        id = self.session.next_id()
        frame = codec.request(method, codec.from_public(method, params, "params"), id=id)
        limits = self.server.limits
        raw = await self.session.request(id, codec.encode(frame), limits.request_timeout)
        limit = limits.max_answer_bytes
        if len(raw) > limit:
            raise ProtocolError(
                INVALID_PARAMS, f"the client's answer to {method} exceeds {limit} bytes"
            )
        try:
            response = codec.decode_response(raw, method)
            error = getattr(response, "error", None)
            if error is None:
                return codec.public_result(method, response.result, raw)
        except ProtocolError as exc:  # one line for the caller, no traceback
            raise ProtocolError(
                INVALID_PARAMS,
                f"the client's answer to {method} is not a valid result: {exc.message}",
            ) from None
        raise McpError(error.code, error.message, error.data)

    @property
    def closed(self) -> bool:
        """Whether the connection has closed."""
        return self.session.closed.is_set()

    def wants(self, uri: str | None) -> bool:
        """Whether this legacy session takes a change of `uri` (None: a list change)."""
        return uri is None or uri in self.subscriptions

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification (public params) in the connection's revision."""
        if self.codec is not None:
            await self.send_notification(self.codec, method, params)

    # ------------------------------------------------------------------ modern

    async def _modern(
        self, raw: bytes, id: RequestId, env: Peek, message: Any = None
    ) -> bytes | None:
        version = self._modern_version(env.protocol_version)
        codec = codec_of(version)
        if message is None:
            message = codec.decode(raw)
        method = message.method
        asks = codec.methods[method].input_required
        params = (
            message.params  # (the public revision's own: nothing to project)
            if version == PUBLIC_REVISION
            else codec.to_public(method, message.params, "params")
        )
        retried = asks and (params.inputResponses or params.requestState is not None)
        answers, rounds = self._sealed_answers(method, params, raw) if retried else ({}, 0)
        inputs = RetriedInputs(answers)
        ctx = self._modern_context(codec, id, inputs, params)
        try:
            try:
                result = await self.serve(ctx, method, params)
            except UrlElicitationRequired as error:  # retired by 2026-07-28: the question it asks
                raise _url_questions(ctx, error) from None
        except InputRequired as needed:
            if not asks:
                raise ProtocolError(
                    INTERNAL_ERROR, f"{method} cannot ask the client for input"
                ) from None
            digest = request_digest(method, _params_of(raw))
            result = self._input_required(inputs, needed, digest, rounds + 1)
        return self.write(codec, id, method, result)

    def _modern_context(
        self, codec: Codec, id: RequestId, inputs: RetriedInputs, params: Any
    ) -> Context:
        """A modern request's context, from its `_meta` envelope (and the extensions' say:
        `Extension.open_request`)."""
        meta = params.meta
        capabilities = meta.io_modelcontextprotocol_clientCapabilities
        info = meta.io_modelcontextprotocol_clientInfo
        level = meta.io_modelcontextprotocol_logLevel
        ctx = self._context(codec, id, inputs, capabilities, info, meta, level)
        for opener in self.server.extensions.openers:
            opener(ctx, params, None)
        return ctx

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
        limit = self.server.limits.max_answer_bytes
        if params.inputResponses and len(raw) > limit:  # (else no answer can be larger)
            for key, answer in params.inputResponses.items():
                if len(pydantic_core.to_json(answer)) > limit:
                    raise ProtocolError(
                        INVALID_PARAMS,
                        f"inputResponses.{key}: the answer exceeds {limit} bytes",
                        {"field": f"inputResponses.{key}"},
                    )
        if params.requestState is not None:
            digest = request_digest(method, _params_of(raw))
            sealed, rounds = self.server.sealer.open(params.requestState, digest, self.subject)
        return {**(params.inputResponses or {}), **sealed}, rounds

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

    async def _listen(self, ctx: Context, params: Any) -> Any:
        """`subscriptions/listen`'s handler: a stream of this connection (`mcpio.server._listen`)."""
        offered = self.server.capabilities_in(ctx.revision)
        return await listen(self, ctx, params, offered, self.server.extensions)

    async def send_notification(self, codec: Codec, method: str, params: dict[str, Any]) -> None:
        """Send a notification whose public params are projected to `codec`'s revision."""
        own = (
            params
            if codec.revision == PUBLIC_REVISION
            else codec.from_public(method, params, "params")
        )
        await self.send(codec.encode(codec.notification(method, own)))


def _url_questions(ctx: Context, error: UrlElicitationRequired) -> InputRequired:
    """A legacy `UrlElicitationRequired` as the questions it asks a 2026-07-28 client."""
    ctx.require_url_elicitation()
    return InputRequired(
        {f"url-{i}": ElicitUrl(e.message, e.url) for i, e in enumerate(error.elicitations)}
    )


def _params_of(raw: bytes) -> dict[str, Any]:
    """A request's params as plain data (read again: only a multi-round request needs them)."""
    params: dict[str, Any] = pydantic_core.from_json(raw)["params"]
    return params


def _data(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
