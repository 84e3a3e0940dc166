"""OpenTelemetry traces (issue 35, item 6): a span per request on the server and per call on the
client, by the semantic conventions for MCP, the trace context carried in `params._meta`;
checked with the SDK's in-memory exporter."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcp_wire_runtime.errors import ProtocolError
from mcpio import Client, Server, ToolError
from mcpio.latest import public as pub
from mcpio.middleware.telemetry import ClientTracing, Tracing
from mcpio.tasks._client import TaskHandle
from tests.support import MODERN, ROOT, serve_app, until

pytestmark = pytest.mark.anyio


def traced_server(provider: TracerProvider) -> Server:
    server = Server("traced", "1.0", middleware=[Tracing(provider)])

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def refuse() -> str:
        raise ToolError("no")

    @server.prompt()
    async def greet(who: str) -> str:
        return f"hello {who}"

    @server.tool(task="optional")
    async def slow(n: int) -> str:
        return f"done {n}"

    return server


def server_spans(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    spans = exporter.get_finished_spans()
    return {span.name: span for span in spans if span.kind == SpanKind.SERVER}


async def test_a_legacy_session_has_a_span_for_every_request() -> None:
    """`initialize`, the session's lifecycle and the task methods go through the same pipeline
    as a tool call, so they are traced too."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    async with Client(traced_server(provider), mode="2025-11-25", tasks=True) as client:
        await client.ping()
        handle = await client.start_tool("slow", {"n": 3})
        assert isinstance(handle, TaskHandle)
        assert (await handle.result()).content[0].text == "done 3"  # type: ignore[union-attr]
        await client.list_tasks()
    spans = server_spans(exporter)
    for name in ("initialize", "ping", "tools/list", "tools/call slow", "tasks/list"):
        attributes = dict(spans[name].attributes or {})
        assert attributes["mcp.method.name"] == name.split()[0]
        assert attributes["mcp.protocol.version"] == "2025-11-25"
        assert attributes["jsonrpc.request.id"]
        assert spans[name].status.status_code == StatusCode.UNSET
    assert "tasks/result" in spans or "tasks/get" in spans


async def test_a_modern_client_has_a_span_for_discover_listen_and_tasks() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    async with Client(traced_server(provider), mode=MODERN, tasks=True) as client:
        await client.discover()
        handle = await client.start_tool("slow", {"n": 4})
        assert isinstance(handle, TaskHandle)
        assert (await handle.result()).content[0].text == "done 4"  # type: ignore[union-attr]
        with pytest.raises(ProtocolError):
            await client.task("no-such-task").refresh()
        async with client.listen(tools=True):
            pass
        await until(lambda: "subscriptions/listen" in server_spans(exporter))
    spans = server_spans(exporter)
    for name in ("server/discover", "tools/call slow", "tasks/get", "subscriptions/listen"):
        attributes = dict(spans[name].attributes or {})
        assert attributes["mcp.method.name"] == name.split()[0]
        assert attributes["mcp.protocol.version"] == MODERN
    failed = [s for s in exporter.get_finished_spans() if s.status.status_code == StatusCode.ERROR]
    assert [dict(s.attributes or {}).get("error.type") for s in failed] == ["-32602"]


@asynccontextmanager
async def traced(target: str) -> AsyncIterator[tuple[Client, InMemorySpanExporter]]:
    """A traced client of a traced server (in memory, or over HTTP in either era), and the
    spans both report."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = traced_server(provider)
    if target == "memory":
        async with Client(server) as client:
            client.tracing = ClientTracing(provider)
            yield client, exporter
        return
    async with serve_app(server.http_app()) as served:
        mode = "legacy" if target == "http-legacy" else "auto"
        async with Client(f"{served.url}/mcp", mode=mode) as client:
            client.tracing = ClientTracing(provider)
            exporter.clear()  # (what connecting sent)
            yield client, exporter


def pair(exporter: InMemorySpanExporter, name: str) -> tuple[ReadableSpan, ReadableSpan]:
    spans = [span for span in exporter.get_finished_spans() if span.name == name]
    kinds = {span.kind: span for span in spans}
    assert len(spans) == 2 and set(kinds) == {SpanKind.CLIENT, SpanKind.SERVER}, spans
    return kinds[SpanKind.CLIENT], kinds[SpanKind.SERVER]


@dataclass
class EchoCall:
    """One `echo` call through `traced(target)`: its result, the revision and both spans."""

    target: str
    result: pub.CallToolResult
    revision: str | None
    client_span: ReadableSpan
    server_span: ReadableSpan


@pytest.fixture(scope="module", params=["memory", "http", "http-legacy"])
async def echo_call(request: pytest.FixtureRequest, anyio_backend: str) -> EchoCall:
    """One traced call per target, shared by the tests that read its spans."""
    async with traced(request.param) as (client, exporter):
        result = await client.call_tool("echo", {"text": "hi"})
        client_span, server_span = pair(exporter, "tools/call echo")
        return EchoCall(request.param, result, client.revision, client_span, server_span)


async def test_a_traced_call_succeeds(echo_call: EchoCall) -> None:
    assert not echo_call.result.isError


async def test_the_server_span_is_the_client_span_s_child(echo_call: EchoCall) -> None:
    client_span, server_span = echo_call.client_span, echo_call.server_span
    assert client_span.context is not None and server_span.context is not None
    # The server's span is the client's child: the trace context crossed in _meta.
    assert server_span.context.trace_id == client_span.context.trace_id
    assert server_span.parent is not None
    assert server_span.parent.span_id == client_span.context.span_id


async def test_both_spans_carry_the_tool_call_s_attributes(echo_call: EchoCall) -> None:
    for span in (echo_call.client_span, echo_call.server_span):
        attributes = dict(span.attributes or {})
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "echo"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["mcp.protocol.version"] == echo_call.revision
        assert "error.type" not in attributes
        assert span.status.status_code == StatusCode.UNSET


async def test_both_spans_name_the_same_request_id(echo_call: EchoCall) -> None:
    server_attributes = dict(echo_call.server_span.attributes or {})
    assert server_attributes["jsonrpc.request.id"]
    # The client's span names the same request (its id as it went out).
    assert dict(echo_call.client_span.attributes or {})["jsonrpc.request.id"] == (
        server_attributes["jsonrpc.request.id"]
    )


async def test_only_a_legacy_http_call_s_server_span_names_the_session(
    echo_call: EchoCall,
) -> None:
    server_attributes = dict(echo_call.server_span.attributes or {})
    if echo_call.target == "http-legacy":
        assert server_attributes["mcp.session.id"]
    else:
        assert "mcp.session.id" not in server_attributes


async def test_outcomes_tool_errors_and_error_codes() -> None:
    async with traced("http") as (client, exporter):
        result = await client.call_tool("refuse", {})
        assert result.isError
        for span in pair(exporter, "tools/call refuse"):
            assert dict(span.attributes or {})["error.type"] == "tool_error"
            assert span.status.status_code == StatusCode.ERROR
        with pytest.raises(ProtocolError):
            await client.get_prompt("nobody", {})
        for span in pair(exporter, "prompts/get nobody"):
            attributes = dict(span.attributes or {})
            assert attributes["gen_ai.prompt.name"] == "nobody"
            assert attributes["error.type"] == attributes["rpc.response.status_code"] == "-32602"
            assert span.status.status_code == StatusCode.ERROR
        await client.list_tools()
        client_span, server_span = pair(exporter, "tools/list")
        assert dict(server_span.attributes or {})["mcp.method.name"] == "tools/list"


async def test_a_caller_span_is_the_parent_of_the_call() -> None:
    async with traced("memory") as (client, exporter):
        tracer = TracerProvider().get_tracer("app")
        with tracer.start_as_current_span("handling a user's question") as outer:
            await client.call_tool("echo", {"text": "x"})
        client_span, _ = pair(exporter, "tools/call echo")
        assert client_span.parent is not None
        assert client_span.parent.span_id == outer.get_span_context().span_id


def test_nothing_is_imported_without_tracing() -> None:
    """A server and client that trace nothing import no OpenTelemetry; without the extra,
    asking for tracing names the extra to install."""
    code = (
        "import sys; import mcpio, mcpio.server, mcpio.client, mcpio.middleware.telemetry;"
        "from mcpio.http import _app as app;"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], sys.modules;"
        "sys.modules['opentelemetry'] = None;"
        "from mcpio._core.extras import MissingExtra;"
        "from mcpio.middleware.telemetry import Tracing\n"
        "try:\n    Tracing()\nexcept MissingExtra as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "needs the 'otel' extra" in done.stdout


def test_spans_cost_nothing_when_not_asked_for() -> None:
    assert Client.tracing is None
    assert all(not isinstance(m, Tracing) for m in Server("plain").middleware)
