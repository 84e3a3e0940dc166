"""OpenTelemetry traces: a span per request on the server and per call on the client.

With the `otel` extra (`opentelemetry-api`): a span per request on the server
(`server.add_middleware(Tracing())`: every request, `initialize`, `server/discover`,
`subscriptions/listen` and the task methods included, since they all go through the
middlewares) and per call on the client (`client.tracing = ClientTracing()`), named and
attributed by the OpenTelemetry semantic conventions for MCP (`tools/call add`;
`mcp.method.name`, `gen_ai.tool.name`, `mcp.protocol.version`, `mcp.session.id`,
`jsonrpc.request.id` (on the client's span: its first request's, set as it goes out),
`error.type`, `rpc.response.status_code`), the trace context carried in the request's
`params._meta` (`traceparent`, `tracestate`, `baggage`: the global propagator's, W3C by
default).

Nothing here runs, nor is OpenTelemetry imported, unless one of them is made: a server or
client without one costs nothing. The spans go to the tracer provider given, else to the
global one (`opentelemetry.trace.set_tracer_provider`; without an SDK configured, a no-op)."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from mcp_wire_runtime.errors import ProtocolError
from mcpio._core.context import InputRequired
from mcpio._core.extras import needs
from mcpio._version import __version__
from mcpio.middleware._base import Call, CallNext

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

TOOL_ERROR = "tool_error"  # error.type of a tool result with isError
# The client span of the call in progress here (its own request goes on plain under it), and
# whether its request id was set.
_CLIENT_SPAN: ContextVar[list[Any] | None] = ContextVar("mcpio_client_span", default=None)


class Caller(Protocol):
    """What the client's tracing needs of `mcpio.Client`."""

    @property
    def revision(self) -> str | None:
        """The revision the client speaks, once connected."""
        ...

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        progress: Any = None,
        task: Any = None,
    ) -> Any:
        """Send a request and return its result (the call being traced).

        Args:
            method: The request's JSON-RPC method.
            params: Its params (None: none).
            timeout: Seconds to wait for the result (None: the client's default).
            progress: The request's progress callback (None: none).
            task: The task augmentation to send with the request (None: none).
        """
        ...


def _tracer(provider: TracerProvider | None) -> Tracer:
    with needs("otel", "mcpio's tracing"):
        from opentelemetry import trace
    return trace.get_tracer("mcpio", __version__, tracer_provider=provider)


def describe(method: str, params: Any) -> tuple[str, dict[str, Any]]:
    """A request's span name (`{method} {tool or prompt}`) and the attributes its params give."""
    attributes: dict[str, Any] = {"mcp.method.name": method}
    name = _get(params, "name")
    uri = _get(params, "uri")
    if type(uri) is str:
        attributes["mcp.resource.uri"] = uri
    if type(name) is str and method == "tools/call":
        attributes["gen_ai.tool.name"] = name
        attributes["gen_ai.operation.name"] = "execute_tool"
        return f"{method} {name}", attributes
    if type(name) is str and method == "prompts/get":
        attributes["gen_ai.prompt.name"] = name
        return f"{method} {name}", attributes
    return method, attributes


def _get(params: Any, key: str) -> Any:
    return params.get(key) if isinstance(params, Mapping) else getattr(params, key, None)


def _raised(span: Span, exc: Exception) -> None:
    """A request that failed with `exc`: its JSON-RPC code (a `ProtocolError`) or its type."""
    if isinstance(exc, ProtocolError):
        span.set_attribute("rpc.response.status_code", str(exc.code))
        _failed(span, str(exc.code), exc)
    else:
        _failed(span, type(exc).__qualname__, exc)


def _failed(span: Span, kind: str, exc: BaseException | None = None) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", kind)
    if exc is not None:
        span.record_exception(exc)
    span.set_status(Status(StatusCode.ERROR, str(exc) if exc is not None else None))


def _outcome(span: Span, result: Any) -> Any:
    """The result, once `span` says how it ended (a tool result with isError: `tool_error`)."""
    if getattr(result, "isError", None) is True:
        _failed(span, TOOL_ERROR)
    return result


def _carrier(params: Any) -> dict[str, str]:
    """The text entries of a request's `_meta` (the propagator reads `traceparent` there):
    of a params model, or of plain params (the task methods')."""
    meta = _get(params, "_meta" if isinstance(params, Mapping) else "meta")
    if meta is None:
        return {}
    items = meta.items() if isinstance(meta, Mapping) else dict(meta).items()
    return {key: value for key, value in items if type(value) is str}


class Tracing:
    """The server's tracing middleware: a SERVER span around each request.

    The span is the child of the client's span when the request's `_meta` carries its trace
    context. The spans go to `tracer_provider`, else to the global one.
    """

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self._tracer = _tracer(tracer_provider)

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        from opentelemetry.propagate import extract
        from opentelemetry.trace import SpanKind

        name, attributes = describe(call.method, call.params)
        ctx = call.ctx
        attributes["mcp.protocol.version"] = ctx.revision
        attributes["jsonrpc.request.id"] = str(ctx.request_id)
        if ctx.session_id is not None:
            attributes["mcp.session.id"] = ctx.session_id
        parent = extract(_carrier(call.params))
        with self._tracer.start_as_current_span(
            name,
            context=parent,
            kind=SpanKind.SERVER,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await call_next(call)
            except InputRequired:
                raise  # the client is asked, then retries: no failure
            except Exception as exc:
                _raised(span, exc)
                raise
            return _outcome(span, result)


class ClientTracing:
    """The client's tracing: a CLIENT span around each call.

    Each call is `Client.request` and all that goes through it; the span's trace context is
    written into the request's `_meta`. The spans go to `tracer_provider`, else to the global
    one.
    """

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self._tracer = _tracer(tracer_provider)

    @staticmethod
    def active() -> bool:
        """Whether a call is being traced here (the traced call itself then goes on plain)."""
        return _CLIENT_SPAN.get() is not None

    @staticmethod
    def sent(id: str | int) -> None:
        """Record that the traced call's request went out with this JSON-RPC id.

        It is the span's `jsonrpc.request.id`: the first round's, when the server asked for
        input and the request was sent again.
        """
        traced = _CLIENT_SPAN.get()
        if traced is not None and not traced[1]:
            traced[0].set_attribute("jsonrpc.request.id", str(id))
            traced[1] = True

    async def request(
        self,
        client: Caller,
        method: str,
        data: dict[str, Any],
        *,
        timeout: float | None,
        progress: Any,
        task: Any,
    ) -> Any:
        """Send the request inside a CLIENT span, its trace context in `params._meta`.

        Args:
            client: The client that sends the request.
            method: The request's JSON-RPC method.
            data: Its params as plain data (the span's trace context is added to their
                `_meta`).
            timeout: Passed on to `client.request`.
            progress: Passed on to `client.request`.
            task: Passed on to `client.request`.
        """
        from opentelemetry.propagate import inject
        from opentelemetry.trace import SpanKind

        name, attributes = describe(method, data)
        if client.revision is not None:
            attributes["mcp.protocol.version"] = client.revision
        with self._tracer.start_as_current_span(
            name,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            meta = dict(data.get("_meta") or {})
            inject(meta)
            token = _CLIENT_SPAN.set([span, False])
            try:
                params = {**data, "_meta": meta}
                result = await client.request(
                    method, params, timeout=timeout, progress=progress, task=task
                )
            except Exception as exc:
                _raised(span, exc)
                raise
            finally:
                _CLIENT_SPAN.reset(token)
            return _outcome(span, result)


__all__ = ["ClientTracing", "Tracing"]
