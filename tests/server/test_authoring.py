"""Writing a server as a FastMCP user expects: decorators bare and called, a tool's exception
as a failed result the model reads, sync handlers in worker threads, binary content helpers,
middleware around every request in both eras, and the lifespan.

Each runs through our `Client` in memory (both eras) unless it needs a transport: HTTP for the
lifespan events and a ping beside a sleeping sync tool, a subprocess for stdio.
"""

from __future__ import annotations

import base64
import logging
import subprocess
import sys
import textwrap
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import pytest

from mcp_wire_runtime.errors import ProtocolError
from mcpio import Audio, Client, Context, File, Image, LifespanError, McpError, Server, ToolError
from mcpio._core.elicitation import Accepted, form_of
from mcpio._core.jsonrpc import plain
from mcpio.latest import public as pub
from mcpio.middleware import (
    Call,
    CallNext,
    ErrorMappingMiddleware,
    LoggingMiddleware,
    Middleware,
    RateLimitMiddleware,
    ResponseCachingMiddleware,
    TimingMiddleware,
)
from mcpio.tasks._serve import declares_tasks
from tests.support import ACCEPT, MODERN, headers_for, modern, serve_app, until

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", MODERN]


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


# --- decorators, bare and called -------------------------------------------------------------


async def test_every_decorator_works_bare_and_called() -> None:
    server = Server("s")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool("times", description="Multiplies.")
    def multiply(a: int, b: int) -> int:
        return a * b

    @server.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.prompt()
    def bye() -> str:
        return "Bye"

    @server.completer
    def complete(params: Any) -> list[str]:
        return ["one", "two"]

    assert add(1, 2) == 3 and greet("x") == "Hello x"  # still the functions themselves
    assert set(server.tools) == {"add", "times"} and set(server.prompts) == {"greet", "bye"}
    async with Client(server, mode=MODERN) as client:
        assert text_of(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
        assert text_of(await client.call_tool("times", {"a": 2, "b": 3})) == "6"
        prompt = await client.get_prompt("greet", {"name": "Ann"})
        assert prompt.messages[0].content.text == "Hello Ann"  # type: ignore[union-attr]
        ref = {"type": "ref/prompt", "name": "greet"}
        completed = await client.complete(ref, "name", "o")
        assert completed.completion.values == ["one", "two"]


@pytest.mark.parametrize(
    ("decorator", "needs"),
    [("resource", "its URI"), ("resource_template", "its URI template"), ("method", "name")],
)
def test_a_decorator_that_needs_an_argument_says_so_when_bare(decorator: str, needs: str) -> None:
    server = Server("s")

    def fn() -> str:
        return ""

    with pytest.raises(TypeError, match=rf"@server.{decorator} needs .*{needs}"):
        getattr(server, decorator)(fn)


# --- a tool's exception is a result the model reads ----------------------------------------------


def failing_server(**options: Any) -> Server:
    server = Server("s", **options)

    @server.tool
    async def crash() -> str:
        raise RuntimeError("db down at 10.0.0.7")

    @server.tool
    def sync_crash() -> str:
        raise KeyError("row 7")

    @server.tool
    async def refuse() -> str:
        raise ToolError("no such city")

    @server.tool
    async def protocol() -> str:
        raise ProtocolError(-32602, "bad thing", {"thing": 1})

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_an_exception_in_a_tool_is_a_failed_result_masked_when_asked(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "mcpio")
    async with Client(failing_server(mask_error_details=True), mode=mode) as client:
        crashed = await client.call_tool("crash", {})
        assert crashed.isError and text_of(crashed) == "Error calling tool 'crash'"
        assert (
            text_of(await client.call_tool("sync_crash", {})) == "Error calling tool 'sync_crash'"
        )
        refused = await client.call_tool("refuse", {})  # ToolError: its text always shown
        assert refused.isError and text_of(refused) == "no such city"
        with pytest.raises(McpError) as caught:  # a JSON-RPC error the tool chose stays one
            await client.call_tool("protocol", {})
        assert (caught.value.code, caught.value.data) == (-32602, {"thing": 1})
        assert text_of(await client.call_tool("crash", {})) == "Error calling tool 'crash'"
    logged = [r for r in caplog.records if "Error calling" in r.getMessage()]
    # One line per failure (crash twice, sync_crash once) naming the exception, its traceback.
    assert [r.getMessage() for r in logged] == [
        "Error calling tool 'crash': RuntimeError('db down at 10.0.0.7')",
        "Error calling tool 'sync_crash': KeyError('row 7')",
        "Error calling tool 'crash': RuntimeError('db down at 10.0.0.7')",
    ]
    assert all(r.exc_info is not None for r in logged)
    assert "db down" in str(logged[0].exc_info[1])  # type: ignore[index]


@pytest.mark.parametrize("options", [{}, {"mask_error_details": False}])
async def test_by_default_errors_show_the_exception_s_message(options: dict[str, Any]) -> None:
    async with Client(failing_server(**options), mode=MODERN) as client:
        crashed = await client.call_tool("crash", {})
        assert text_of(crashed) == "Error calling tool 'crash': db down at 10.0.0.7"
        assert text_of(await client.call_tool("sync_crash", {})) == (
            "Error calling tool 'sync_crash': 'row 7'"
        )
        assert text_of(await client.call_tool("refuse", {})) == "no such city"


# --- sync handlers in worker threads -------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_concurrent_sync_tools_run_at_once_in_worker_threads(mode: str) -> None:
    """Three sync calls meet at a barrier: it opens only if all three run at the same time."""
    server = Server("s")
    barrier = threading.Barrier(3, timeout=10)
    loop_thread = threading.get_ident()

    @server.tool
    def meet(n: int) -> str:
        assert threading.get_ident() != loop_thread
        barrier.wait()
        return f"met {n}"

    results: dict[int, str] = {}
    async with Client(server, mode=mode) as client:

        async def one(n: int) -> None:
            results[n] = text_of(await client.call_tool("meet", {"n": n}))

        with anyio.fail_after(15):
            async with anyio.create_task_group() as tasks:
                for n in range(3):
                    tasks.start_soon(one, n)
    assert results == {0: "met 0", 1: "met 1", 2: "met 2"}


async def test_run_in_thread_false_keeps_a_sync_tool_on_the_loop() -> None:
    server = Server("s")
    where: list[int] = []

    @server.tool(run_in_thread=False)
    def here() -> str:
        where.append(threading.get_ident())
        return "ok"

    @server.resource("test://sync")
    def sync_resource() -> str:
        where.append(threading.get_ident())
        return "r"

    async with Client(server, mode=MODERN) as client:
        await client.call_tool("here", {})
        await client.read_resource("test://sync")
    assert where[0] == threading.get_ident() and where[1] != threading.get_ident()


async def test_a_ping_is_answered_over_http_while_a_sync_tool_blocks() -> None:
    server = Server("s")
    release = threading.Event()

    @server.tool
    def block() -> str:
        release.wait(20)
        return "released"

    async with serve_app(server.http_app()) as served:
        url = served.url + "/mcp"
        async with (
            Client(url, mode="2025-11-25") as caller,
            Client(url, mode="2025-11-25") as other,
        ):
            async with anyio.create_task_group() as tasks:
                answer: list[str] = []

                async def call() -> None:
                    answer.append(text_of(await caller.call_tool("block", {})))

                tasks.start_soon(call)
                await anyio.sleep(0.2)  # the tool is blocking its thread by now
                with anyio.fail_after(5):
                    await other.ping()  # answered while the tool still blocks
                assert not release.is_set() and answer == []
                release.set()
    assert answer == ["released"]


# --- binary content ----------------------------------------------------------------------------


async def test_bytes_and_media_helpers_become_content_blocks(tmp_path: Path) -> None:
    picture = tmp_path / "chart.jpg"
    picture.write_bytes(b"\xff\xd8jpeg")
    server = Server("s")

    @server.tool
    def raw() -> bytes:
        return b"\x00\x01"

    @server.tool
    def media() -> list[Image | Audio | File]:
        return [
            Image(path=picture),
            Image(data=b"png", format="png"),
            Audio(data=b"RIFF"),
            File(data=b"%PDF", format="application/pdf", name="report.pdf"),
        ]

    async with Client(server, mode=MODERN) as client:
        blob = (await client.call_tool("raw", {})).content[0]
        assert isinstance(blob, pub.EmbeddedResource)
        resource = blob.resource
        assert isinstance(resource, pub.BlobResourceContents)
        assert (resource.uri, resource.mimeType) == ("file:///resource", "application/octet-stream")
        assert base64.b64decode(resource.blob) == b"\x00\x01"
        blocks = (await client.call_tool("media", {})).content
    assert [type(b).__name__ for b in blocks] == [
        "ImageContent", "ImageContent", "AudioContent", "EmbeddedResource"
    ]  # fmt: skip
    assert [getattr(b, "mimeType", None) for b in blocks[:3]] == [
        "image/jpeg", "image/png", "audio/wav"
    ]  # fmt: skip
    assert base64.b64decode(blocks[0].data) == b"\xff\xd8jpeg"  # type: ignore[union-attr]
    embedded = blocks[3].resource  # type: ignore[union-attr]
    assert (embedded.uri, embedded.mimeType) == ("file:///report.pdf", "application/pdf")
    with pytest.raises(ValueError, match="data or path"):
        Image()


@pytest.mark.parametrize("mode", ERAS)
async def test_content_helpers_in_a_structured_list_are_content_blocks(mode: str) -> None:
    """`-> list[Any]` has an outputSchema: an `Image` in the list is an image block, and its
    block's data in the structured content (it was an internal error: its bytes are no JSON)."""
    server = Server("s")

    @server.tool
    def mixed() -> list[Any]:
        return ["a caption", Image(data=b"\x89PNG", format="png")]

    encoded = base64.b64encode(b"\x89PNG").decode()
    image = {"type": "image", "data": encoded, "mimeType": "image/png"}
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("mixed", {})
    assert not result.isError
    caption = {"type": "text", "text": "a caption"}
    assert [plain(block) for block in result.content] == [caption, image]
    assert result.structuredContent == {"result": ["a caption", image]}


# --- middleware --------------------------------------------------------------------------------


class Recorder(Middleware):
    def __init__(self, name: str, seen: list[Any]) -> None:
        self.name, self.seen = name, seen

    async def on_message(self, call: Call, call_next: CallNext) -> Any:
        self.seen.append((self.name, "in", call.method, type(call.params).__name__))
        result = await call_next(call)
        self.seen.append((self.name, "out", call.method, type(result).__name__))
        return result


def tool_server(**options: Any) -> Server:
    server = Server("s", **options)

    @server.tool
    async def echo(text: str) -> str:
        return text

    @server.tool
    async def secret() -> str:
        return "the secret"

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_middlewares_wrap_each_request_in_order_over_the_public_models(mode: str) -> None:
    seen: list[Any] = []
    server = tool_server(middleware=[Recorder("outer", seen)])
    server.add_middleware(Recorder("inner", seen))
    async with Client(server, mode=mode) as client:
        assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
    calls = [s for s in seen if s[2] == "tools/call"]
    assert calls == [
        ("outer", "in", "tools/call", "CallToolRequestParams"),
        ("inner", "in", "tools/call", "CallToolRequestParams"),
        ("inner", "out", "tools/call", "CallToolResult"),  # a string answer as its model
        ("outer", "out", "tools/call", "CallToolResult"),
    ]


class Seen(Middleware):
    """Records each request it wraps: method, params type, era, and the result's type (or the
    exception's)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool, str]] = []
        self.contexts: dict[str, Context] = {}

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        entry = [call.method, type(call.params).__name__, call.ctx.modern]
        self.contexts[call.method] = call.ctx
        try:
            result = await call_next(call)
        except BaseException as exc:
            self.seen.append((*entry, type(exc).__name__))  # type: ignore[arg-type]
            raise
        self.seen.append((*entry, type(result).__name__))  # type: ignore[arg-type]
        return result


def task_server(middleware: Middleware) -> Server:
    server = tool_server(middleware=[middleware])

    @server.tool(task="optional")
    async def slow(n: int) -> str:
        return f"done {n}"

    @server.resource("file:///a.txt")
    async def a() -> str:
        return "a"

    return server


async def test_a_middleware_sees_every_request_of_a_legacy_session() -> None:
    """initialize, the session's lifecycle and the task methods (outside the public revision):
    their params are plain data, their result the wire's (`WireResult`)."""
    seen = Seen()
    async with Client(task_server(seen), mode="2025-11-25", tasks=True) as client:
        await client.ping()
        await client.set_log_level("info")
        async with client.listen(resource_uris=["file:///a.txt"]):
            pass
        handle = await client.start_tool("slow", {"n": 1})
        await handle.result()  # type: ignore[union-attr]
        await client.list_tasks()
    assert seen.seen[0] == ("initialize", "dict", False, "WireResult")
    rows = set(seen.seen)
    assert {
        ("ping", "dict", False, "WireResult"),
        ("logging/setLevel", "dict", False, "WireResult"),
        ("resources/subscribe", "dict", False, "WireResult"),
        ("resources/unsubscribe", "dict", False, "WireResult"),
        ("tools/list", "PaginatedRequestParams", False, "ListToolsResult"),
        ("tools/call", "CallToolRequestParams", False, "TaskCreated"),
        ("tasks/list", "dict", False, "WireResult"),
    } <= rows, seen.seen
    assert {"tasks/result", "tasks/get"} & {row[0] for row in rows}
    initialize = seen.contexts["initialize"]  # what the request says of the client
    assert initialize.revision == "2025-11-25" and initialize.client_info is not None
    assert initialize.client_capabilities.elicitation is None
    assert seen.contexts["tasks/list"].client_info == initialize.client_info  # the session's


async def test_a_middleware_sees_every_request_of_a_modern_client() -> None:
    seen = Seen()
    async with Client(task_server(seen), mode=MODERN, tasks=True) as client:
        await client.discover()
        handle = await client.start_tool("slow", {"n": 2})
        await handle.result()  # type: ignore[union-attr]
        async with client.listen(tools=True):
            pass
        await until(lambda: any(row[0] == "subscriptions/listen" for row in seen.seen))
    rows = set(seen.seen)
    assert {
        ("server/discover", "RequestParams", True, "DiscoverResult"),
        ("tools/call", "CallToolRequestParams", True, "TaskCreated"),
        ("tasks/get", "dict", True, "WireResult"),
    } <= rows, seen.seen
    task_ctx = seen.contexts["tasks/get"]  # read from the request's _meta envelope
    assert declares_tasks(task_ctx.client_capabilities) and task_ctx.client_info is not None
    listen = [row for row in seen.seen if row[0] == "subscriptions/listen"]
    assert listen[0][1] == "SubscriptionsListenRequestParams"  # (ended by the client leaving)


class Guard(Middleware):
    """Refuses `secret` unless the caller says please; uppercases `echo`'s argument."""

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name == "secret":
            raise ToolError("not allowed")
        arguments = dict(call.params.arguments or {})
        arguments["text"] = str(arguments.get("text", "")).upper()
        call.params = call.params.model_copy(update={"arguments": arguments})
        return await call_next(call)

    async def on_list_tools(self, call: Call, call_next: CallNext) -> Any:
        listed = await call_next(call)
        listed.tools = [t for t in listed.tools if t.name != "secret"]
        return listed


@pytest.mark.parametrize("mode", ERAS)
async def test_a_middleware_changes_the_call_refuses_it_and_filters_a_listing(mode: str) -> None:
    async with Client(tool_server(middleware=[Guard()]), mode=mode) as client:
        assert text_of(await client.call_tool("echo", {"text": "hi"})) == "HI"
        refused = await client.call_tool("secret", {})
        assert refused.isError and text_of(refused) == "not allowed"
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]


class ShortCircuit(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        return pub.CallToolResult(
            content=[pub.TextContent(type="text", text="from the middleware")],
            resultType="complete",
        )


class Broken(Middleware):
    def __init__(self) -> None:
        self.calls = 0

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        self.calls += 1  # (on_request would fail initialize, which middlewares see too)
        if self.calls == 1:
            raise RuntimeError("middleware bug")
        return await call_next(call)


@pytest.mark.parametrize("mode", ERAS)
async def test_short_circuit_and_a_failing_middleware(mode: str) -> None:
    async with Client(tool_server(middleware=[ShortCircuit()]), mode=mode) as client:
        assert text_of(await client.call_tool("echo", {"text": "hi"})) == "from the middleware"
    broken = Broken()
    async with Client(tool_server(middleware=[broken]), mode=mode) as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool("echo", {"text": "hi"})
        assert caught.value.code == -32603
        assert text_of(await client.call_tool("echo", {"text": "again"})) == "again"  # alive


async def test_logging_and_timing_middlewares(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "mcpio.requests")
    timing = TimingMiddleware()
    server = failing_server(middleware=[LoggingMiddleware(), timing])
    async with Client(server, mode=MODERN) as client:
        await client.call_tool("refuse", {})
        with pytest.raises(McpError):
            await client.call_tool("protocol", {})
    lines = [r.getMessage().split() for r in caplog.records if r.name == "mcpio.requests"]
    assert [(line[0], line[1], line[3:]) for line in lines] == [
        ("tools/call", "refuse", ["tool", "error", "-"]),
        ("tools/call", "protocol", ["error", "-32602", "-"]),
    ]
    assert all(line[2].endswith("ms") for line in lines)
    assert timing.stats["tools/call"].count == 2


async def test_rate_limit_refuses_beyond_the_window_then_lets_through() -> None:
    now = [100.0]
    limit = RateLimitMiddleware(2, 10, clock=lambda: now[0])
    async with Client(tool_server(middleware=[limit]), mode=MODERN) as client:
        for _ in range(2):
            await client.call_tool("echo", {"text": "x"})
        with pytest.raises(McpError) as caught:
            await client.call_tool("echo", {"text": "x"})
        assert caught.value.code == -32029 and caught.value.data == {"retryAfterSeconds": 10}
        now[0] += 10.5
        assert text_of(await client.call_tool("echo", {"text": "y"})) == "y"


async def test_rate_limit_forgets_clients_idle_past_the_window() -> None:
    now = [100.0]
    keys = iter(f"10.0.0.{n}" for n in range(1, 1000))
    limit = RateLimitMiddleware(5, 10, key=lambda call: next(keys), clock=lambda: now[0])
    async with Client(tool_server(middleware=[limit]), mode=MODERN) as client:
        for _ in range(50):  # fifty clients, one request each, within one window
            await client.call_tool("echo", {"text": "x"})
        remembered = len(limit._seen)  # pyright: ignore[reportPrivateUsage]
        now[0] += 10.5
        await client.call_tool("echo", {"text": "x"})  # a window later: the fifty are forgotten
        assert remembered == 50 and len(limit._seen) == 1  # pyright: ignore[reportPrivateUsage]


async def test_response_caching_honours_the_cache_hints() -> None:
    now = [0.0]
    cache = ResponseCachingMiddleware(clock=lambda: now[0])
    server = tool_server(middleware=[cache], cache_ttl_ms=5000, cache_scope="public")
    async with Client(server, mode=MODERN, cache=False) as client:  # the server's cache alone
        assert [t.name for t in (await client.list_tools()).tools] == ["echo", "secret"]
        server.remove_tool("secret")
        cached = await client.list_tools()  # within its ttlMs: the kept answer
        assert [t.name for t in cached.tools] == ["echo", "secret"]
        now[0] += 5.1
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
    uncached = tool_server(middleware=[ResponseCachingMiddleware()])  # ttlMs 0: never kept
    async with Client(uncached, mode=MODERN) as client:
        await client.list_tools()
        uncached.remove_tool("secret")
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]


async def test_error_mapping_middleware() -> None:
    server = Server("s", middleware=[ErrorMappingMiddleware(
        {KeyError: lambda e: ProtocolError(-32602, f"no such item: {e}")}
    )])  # fmt: skip

    @server.resource_template("item://{id}")
    async def item(id: str) -> str:
        raise KeyError(id)

    async with Client(server, mode=MODERN) as client:
        with pytest.raises(McpError) as caught:
            await client.read_resource("item://7")
        assert (caught.value.code, caught.value.message) == (-32602, "no such item: '7'")


# --- lifespan ------------------------------------------------------------------------------------


def lifespan_server(events: list[str], fail: bool = False) -> Server:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events.append("enter")
        if fail:
            raise ConnectionError("database unreachable")
        async with anyio.create_task_group() as tasks:  # owned by the lifespan's own task
            tasks.start_soon(anyio.sleep, 0)
            yield {"db": "connection"}
        events.append("exit")

    server = Server("s", lifespan=lifespan)

    @server.tool
    async def db(ctx: Context) -> str:
        return str(ctx.lifespan["db"])

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_the_lifespan_is_entered_once_and_handlers_read_it(mode: str) -> None:
    events: list[str] = []
    server = lifespan_server(events)
    async with Client(server, mode=mode) as first, Client(server, mode=mode) as second:
        assert text_of(await first.call_tool("db", {})) == "connection"
        assert text_of(await second.call_tool("db", {})) == "connection"
        assert events == ["enter"]  # two connections, one lifespan
    assert events == ["enter", "exit"]
    assert server.lifespan_state is None


async def test_a_failing_lifespan_fails_the_start() -> None:
    server = lifespan_server([], fail=True)
    with pytest.raises(LifespanError, match="failed to start: ConnectionError"):
        await server.start()


async def test_the_lifespan_over_http_with_and_without_lifespan_events() -> None:
    events: list[str] = []
    server = lifespan_server(events)
    async with serve_app(server.http_app()) as served:  # uvicorn sends lifespan events
        assert events == ["enter"]  # before the first request
        async with Client(served.url + "/mcp", mode=MODERN) as client:
            assert text_of(await client.call_tool("db", {})) == "connection"
    assert events == ["enter", "exit"]

    events.clear()
    quiet = lifespan_server(events)
    transport = httpx.ASGITransport(app=quiet.http_app())  # sends no lifespan events
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        frame = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        body = {**frame, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}}  # fmt: skip
        response = await http.post("/mcp", json=body, headers=headers)
        assert response.status_code == 200
    assert events == ["enter"]  # entered at the first request, kept for the process


async def test_an_app_without_lifespan_events_starts_its_server_again_after_a_stop() -> None:
    """An in-process client that ends stops the server the app shares with it: the app's next
    request starts it again (its lifespan entered anew) instead of serving it stopped."""
    events: list[str] = []
    server = lifespan_server(events)
    transport = httpx.ASGITransport(app=server.http_app())  # sends no lifespan events
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        async with Client(server, mode=MODERN) as client:
            assert text_of(await client.call_tool("db", {})) == "connection"
            assert (await _db_over_http(http)) == "connection"
        assert events == ["enter", "exit"]  # the client's stop undid the only start left
        assert (await _db_over_http(http)) == "connection"
    assert events == ["enter", "exit", "enter"]


async def _db_over_http(http: httpx.AsyncClient) -> str:
    frame = modern(1, "tools/call", name="db", arguments={})
    response = await http.post("/mcp", json=frame, headers=headers_for(frame))
    assert response.status_code == 200, response.text
    return response.json()["result"]["content"][0]["text"]


def test_a_failing_lifespan_stops_run_stdio_with_one_line(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent("""
        from contextlib import asynccontextmanager
        from mcpio import Server

        @asynccontextmanager
        async def lifespan(server):
            raise ConnectionError("database unreachable")
            yield

        Server("demo", lifespan=lifespan).run_stdio()
        """))
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "demo: the server's lifespan failed to start: ConnectionError('database unreachable')"
    ]


# --- Context: headers, session, state, resources, FastMCP's names --------------------------------


def context_server() -> Server:
    server = Server("s")

    @server.tool
    async def whoami(ctx: Context) -> dict[str, Any]:
        ctx.state["calls"] = ctx.state.get("calls", 0) + 1
        return {
            "tenant": ctx.headers.get("x-tenant"),
            "session": ctx.session_id is not None,
            "calls": ctx.state["calls"],
            "client": ctx.client_key,
        }

    @server.resource("test://motd")
    def motd() -> str:
        return "hello"

    @server.tool
    async def relay(ctx: Context) -> str:
        read = await ctx.read_resource("test://motd")
        await ctx.report_progress(1, 1, "read")
        await ctx.info("read the motd")
        return read.contents[0].text  # type: ignore[union-attr]

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_context_headers_session_and_state_over_http(mode: str) -> None:
    async with serve_app(context_server().http_app()) as served:
        async with httpx.AsyncClient(headers={"X-Tenant": "acme"}) as http:
            async with Client(served.url + "/mcp", mode=mode, http=http) as client:
                first = (await client.call_tool("whoami", {})).structuredContent
                second = (await client.call_tool("whoami", {})).structuredContent
    legacy = mode != MODERN
    # Without authorization, per-client bounds count the peer's address.
    assert first == {"tenant": "acme", "session": legacy, "calls": 1, "client": "127.0.0.1"}
    # A legacy session keeps its state; each 2026-07-28 request starts afresh (stateless).
    assert second == {
        "tenant": "acme",
        "session": legacy,
        "calls": 2 if legacy else 1,
        "client": "127.0.0.1",
    }


@pytest.mark.parametrize("mode", ERAS)
async def test_context_reads_resources_reports_progress_and_logs(mode: str) -> None:
    steps: list[Any] = []
    logs: list[Any] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        steps.append((p, total, message))

    async with Client(context_server(), mode=mode, on_log=lambda p: logs.append(p.data)) as client:
        if mode == MODERN:
            await client.set_log_level("info")
        assert text_of(await client.call_tool("relay", {}, progress=on_progress)) == "hello"
        no_http = (await client.call_tool("whoami", {})).structuredContent
    assert steps == [(1, 1, "read")] and logs == ["read the motd"]
    assert no_http is not None and no_http["tenant"] is None and no_http["session"] is False
    assert no_http["client"] is None


# --- typed elicitation ---------------------------------------------------------------------------


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Booking:
    name: str
    seats: int
    window: bool = False


def elicit_server(asked: list[Any]) -> Server:
    server = Server("s")

    @server.tool
    async def book(ctx: Context) -> str:
        answer = await ctx.elicit("Who and how many?", response_type=Booking)
        if isinstance(answer, Accepted):
            booking: Booking = answer.data
            return f"{booking.name} x{booking.seats} window={booking.window}"
        return answer.action

    @server.tool
    async def single(ctx: Context, kind: str) -> str:
        types: dict[str, Any] = {
            "bool": bool, "int": int, "literal": Literal["a", "b"], "enum": Colour, "none": None
        }  # fmt: skip
        answer = await ctx.elicit(f"{kind}?", response_type=types[kind])
        return repr(answer.data) if isinstance(answer, Accepted) else answer.action

    @server.tool
    async def raw(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}}
        result = await ctx.elicit("Age?", schema)
        return str((result.content or {}).get("age"))

    return server


def elicit_answers() -> dict[str, dict[str, Any]]:
    """The answer our client gives to each question `elicit_server` asks."""
    return {
        "Who and how many?": {"action": "accept", "content": {"name": "Ann", "seats": "2"}},
        "bool?": {"action": "accept", "content": {"value": True}},
        "int?": {"action": "accept", "content": {"value": 7}},
        "literal?": {"action": "accept", "content": {"value": "b"}},
        "enum?": {"action": "accept", "content": {"value": "blue"}},
        "none?": {"action": "accept", "content": {}},
        "Age?": {"action": "accept", "content": {"age": 30}},
    }


@asynccontextmanager
async def eliciting(
    mode: str, answers: dict[str, dict[str, Any]]
) -> AsyncIterator[tuple[Client, list[Any]]]:
    """Our client on `elicit_server` answering from `answers`; the (question, schema) asked."""
    asked: list[Any] = []

    async def answer(params: Any) -> dict[str, Any]:
        asked.append((params.message, plain(params.requestedSchema)))
        return answers[params.message]

    async with Client(elicit_server(asked), mode=mode, elicitation=answer) as client:
        yield client, asked


@pytest.mark.parametrize("mode", ERAS)
async def test_a_typed_elicitation_s_answer_arrives_as_the_type(mode: str) -> None:
    async with eliciting(mode, elicit_answers()) as (client, _):
        booked = text_of(await client.call_tool("book", {}))
        results = {
            kind: text_of(await client.call_tool("single", {"kind": kind}))
            for kind in ("bool", "int", "literal", "enum", "none")
        }
        raw = text_of(await client.call_tool("raw", {}))
    assert booked == "Ann x2 window=False"
    assert raw == "30"
    assert results == {
        "bool": "True",
        "int": "7",
        "literal": "'b'",
        "enum": "<Colour.BLUE: 'blue'>",
        "none": "None",
    }


@pytest.mark.parametrize("mode", ERAS)
async def test_a_dataclass_is_asked_as_its_schema(mode: str) -> None:
    async with eliciting(mode, elicit_answers()) as (client, asked):
        await client.call_tool("book", {})
    booking_schema = dict(asked)["Who and how many?"]
    assert booking_schema["required"] == ["name", "seats"]
    assert booking_schema["properties"]["seats"] == {"type": "integer"}


@pytest.mark.parametrize("mode", ERAS)
async def test_an_enum_and_a_literal_are_asked_as_their_schema(mode: str) -> None:
    async with eliciting(mode, elicit_answers()) as (client, asked):
        await client.call_tool("single", {"kind": "enum"})
        await client.call_tool("single", {"kind": "literal"})
    assert dict(asked)["enum?"]["properties"]["value"]["enum"] == ["red", "blue"]
    assert dict(asked)["literal?"]["required"] == ["value"]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_declined_or_cancelled_typed_elicitation_answers_its_action(mode: str) -> None:
    answers = elicit_answers()
    async with eliciting(mode, answers) as (client, _):
        answers["Who and how many?"] = {"action": "decline"}
        assert text_of(await client.call_tool("book", {})) == "decline"
        answers["Who and how many?"] = {"action": "cancel"}
        assert text_of(await client.call_tool("book", {})) == "cancel"


@pytest.mark.parametrize("mode", ERAS)
async def test_elicited_content_that_does_not_fit_is_invalid_params_naming_the_member(
    mode: str,
) -> None:
    # Content that does not fit: -32602 naming the member, typed or raw.
    answers = elicit_answers()
    answers["Who and how many?"] = {"action": "accept", "content": {"name": "Ann"}}
    answers["Age?"] = {"action": "accept", "content": {"age": -1}}
    async with eliciting(mode, answers) as (client, _):
        with pytest.raises(McpError) as typed:
            await client.call_tool("book", {})
        with pytest.raises(McpError) as raw:
            await client.call_tool("raw", {})
    assert typed.value.code == -32602 and "seats" in typed.value.message
    assert raw.value.code == -32602 and "age" in raw.value.message


def test_a_response_type_a_form_cannot_ask_for_is_a_type_error() -> None:
    @dataclass
    class Nested:
        inner: Booking

    with pytest.raises(TypeError, match="member 'inner' is not a string"):
        form_of(Nested)


# --- hand-written schemas enforced ---------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_hand_written_input_and_output_schemas_are_enforced(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server("s")
    number = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    @server.tool(input_schema=number)
    async def double(n: Any) -> str:
        return str(n * 2)

    @server.tool(output_schema=number)
    async def report(n: Any) -> dict[str, Any]:
        return {"n": n}

    async with Client(server, mode=mode) as client:
        assert text_of(await client.call_tool("double", {"n": 2})) == "4"
        bad = await client.call_tool("double", {"n": "ab"})
        assert (
            bad.isError
            and text_of(bad) == "invalid arguments for double: n: 'ab' is not of type 'integer'"
        )
        missing = await client.call_tool("double", {})
        assert missing.isError and "'n' is a required property" in text_of(missing)
        assert (await client.call_tool("report", {"n": 3})).structuredContent == {"n": 3}
        with pytest.raises(McpError) as caught:
            await client.call_tool("report", {"n": "x"})
        assert caught.value.code == -32603
    lines = [r.getMessage() for r in caplog.records if "outputSchema" in r.getMessage()]
    assert lines == [
        "tool report: its result does not match its outputSchema: n: 'x' is not of type 'integer'"
    ]
