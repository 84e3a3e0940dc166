"""FastMCP's Context names: `get_context()`, `get_http_headers()`, `CurrentContext()`,
`CurrentHeaders()`, `Depends(fn)`, `get_state`/`set_state`/`delete_state`, `client_id`."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest

from mcpio import (
    Client,
    Context,
    CurrentContext,
    CurrentHeaders,
    Depends,
    Principal,
    ResourceServerAuth,
    Server,
    get_context,
    get_http_headers,
)
from mcpio._core.context import CURRENT_CONTEXT
from mcpio.tasks import TaskEngine, TaskHandle
from tests.support import MODERN, serve_app

ERAS = ["2025-11-25", MODERN]
RESOURCE = "http://127.0.0.1/mcp"

pytestmark = pytest.mark.anyio


def text_of(result: Any) -> str:
    return str(result.content[0].text)


# --- get_context, CurrentContext, Depends -------------------------------------------------------


def injecting_server(made: list[str]) -> Server:
    server = Server("s")

    async def tenant(ctx: Context = CurrentContext()) -> str:  # noqa: B008
        made.append("tenant")
        return f"tenant-of-{ctx.request_id}"

    def database() -> str:
        made.append("database")
        return "db"

    @server.tool
    async def same(ctx: Context = CurrentContext()) -> bool:  # noqa: B008
        return get_context() is ctx

    @server.tool
    async def deps(
        word: str, db: str = Depends(database), who: str = Depends(tenant)
    ) -> dict[str, str]:
        return {"word": word, "db": db, "who": who}

    @server.tool
    def threaded(db: str = Depends(database), who: str = Depends(tenant)) -> str:
        return f"{db} {who} {get_context().request_id}"

    @server.resource("notes://{name}")
    def note(name: str, db: str = Depends(database)) -> str:
        return f"{name} from {db}"

    @server.prompt
    async def greet(name: str, ctx: Context = CurrentContext()) -> str:  # noqa: B008
        return f"hello {name} ({ctx.revision})"

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_dependencies_are_resolved_per_call_and_hidden_from_schemas(mode: str) -> None:
    made: list[str] = []
    async with Client(injecting_server(made), mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert (await client.call_tool("same", {})).structuredContent == {"result": True}
        first = (await client.call_tool("deps", {"word": "a"})).structuredContent
        second = await client.call_tool("deps", {"word": "b", "db": "injected?"})
        thread = text_of(await client.call_tool("threaded", {}))
        read = await client.read_resource("notes://x")
        prompt = await client.get_prompt("greet", {"name": "ann"})
    assert (tools["deps"].inputSchema.properties or {}).keys() == {"word"}
    assert not tools["same"].inputSchema.properties
    assert first is not None and first["db"] == "db" and first["who"].startswith("tenant-of-")
    assert second.structuredContent is not None and second.structuredContent["db"] == "db"
    assert made.count("database") == 4 and made.count("tenant") == 3  # once per call
    assert re.fullmatch(r"db tenant-of-(\S+) \1", thread)  # the same request's, in a thread
    assert read.contents[0].text == "x from db"  # type: ignore[union-attr]
    assert prompt.messages[0].content.text == f"hello ann ({mode})"  # type: ignore[union-attr]


def test_get_context_outside_a_request_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="only available while a request is answered"):
        get_context()
    assert get_http_headers() == {}


@pytest.mark.parametrize("mode", ERAS)
async def test_concurrent_calls_each_see_their_own_context(mode: str) -> None:
    server = Server("s")
    arrived = [anyio.Event(), anyio.Event()]

    @server.tool
    async def wait(n: int, ctx: Context) -> bool:
        arrived[n].set()
        await arrived[1 - n].wait()  # both are in flight here
        await anyio.sleep(0)
        return get_context() is ctx

    results: list[Any] = []

    async def one(client: Client, n: int) -> None:
        results.append((await client.call_tool("wait", {"n": n})).structuredContent)

    async with Client(server, mode=mode) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, client, 0)
            tg.start_soon(one, client, 1)
    assert results == [{"result": True}, {"result": True}]
    assert CURRENT_CONTEXT.get() is None  # reset after each request


# --- HTTP headers -------------------------------------------------------------------------------


def headers_server() -> Server:
    server = Server("s")

    @server.tool
    async def plain_headers() -> dict[str, str]:
        return get_http_headers()

    @server.tool
    async def all_headers(
        headers: dict[str, str] = CurrentHeaders(),  # noqa: B008
    ) -> dict[str, str]:
        return headers

    @server.tool
    async def some_headers() -> dict[str, str]:
        return get_http_headers(include={"Authorization"})

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_http_headers_leave_out_credentials_and_hop_headers(mode: str) -> None:
    sent = {"X-Tenant": "acme", "Authorization": "Bearer t", "Cookie": "c=1"}
    async with serve_app(headers_server().http_app()) as served:
        async with Client(served.url + "/mcp", mode=mode, headers=sent) as client:
            plain = (await client.call_tool("plain_headers", {})).structuredContent
            full = (await client.call_tool("all_headers", {})).structuredContent
            some = (await client.call_tool("some_headers", {})).structuredContent
    assert plain is not None and full is not None and some is not None
    assert plain["x-tenant"] == "acme"
    withheld = {"authorization", "cookie", "host", "content-type", "accept", "mcp-session-id"}
    assert not withheld & plain.keys()
    assert full["authorization"] == "Bearer t" and full["cookie"] == "c=1"
    assert "host" not in full and "mcp-session-id" not in full
    assert some["authorization"] == "Bearer t" and "cookie" not in some


@pytest.mark.parametrize("mode", ERAS)
async def test_no_http_headers_in_memory(mode: str) -> None:
    async with Client(headers_server(), mode=mode) as client:
        assert (await client.call_tool("plain_headers", {})).structuredContent == {}
        assert (await client.call_tool("all_headers", {})).structuredContent == {}


# --- state --------------------------------------------------------------------------------------


def state_server() -> Server:
    server = Server("s")

    @server.tool
    async def count(ctx: Context, caller: str | None = None) -> int:
        calls = await ctx.get_state("calls", 0, caller=caller) + 1
        await ctx.set_state("calls", calls, caller=caller)
        await ctx.set_state("scratch", object(), serializable=False)
        return calls

    @server.tool
    async def forget(ctx: Context) -> bool:
        had = await ctx.get_state("scratch") is not None  # request-scoped: never seen here
        await ctx.delete_state("calls")
        return had

    @server.tool
    async def client(ctx: Context) -> dict[str, Any]:
        return {"client_id": ctx.client_id, "caller": ctx.caller}

    return server


async def counts(client: Client, times: int, **args: Any) -> list[Any]:
    return [(await client.call_tool("count", args)).structuredContent for _ in range(times)]


@pytest.mark.parametrize("mode", ERAS)
async def test_state_outlives_the_request_in_memory_in_both_eras(mode: str) -> None:
    async with Client(state_server(), mode=mode) as client:
        assert await counts(client, 2) == [{"result": 1}, {"result": 2}]
        forget = await client.call_tool("forget", {})
        assert forget.structuredContent == {"result": False}
        assert await counts(client, 1) == [{"result": 1}]


async def test_modern_state_over_http_without_authorization_lasts_one_request() -> None:
    async with serve_app(state_server().http_app()) as served:
        async with Client(served.url + "/mcp", mode=MODERN) as client:
            assert await counts(client, 2) == [{"result": 1}, {"result": 1}]
            # An explicit key identifies the caller across requests.
            kept = await counts(client, 2, caller="acct-7")
            assert kept == [{"result": 1}, {"result": 2}]


async def test_legacy_state_over_http_is_the_session_s() -> None:
    server = state_server()
    async with serve_app(server.http_app()) as served:
        async with Client(served.url + "/mcp", mode="2025-11-25") as client:
            assert await counts(client, 2) == [{"result": 1}, {"result": 2}]
        async with Client(served.url + "/mcp", mode="2025-11-25") as client:
            assert await counts(client, 1) == [{"result": 1}]  # a new session


async def verify(token: str) -> Principal | None:
    claims = {"client_id": f"app-{token}"}
    return Principal(token, claims=claims) if token in ("alice", "bob") else None


async def test_modern_state_over_http_is_the_principal_s() -> None:
    auth = ResourceServerAuth(verify, RESOURCE, ["http://127.0.0.1/issuer"])
    async with serve_app(state_server().http_app(auth=auth)) as served:
        url = served.url + "/mcp"
        async with Client(url, mode=MODERN, auth="alice") as alice:
            assert await counts(alice, 2) == [{"result": 1}, {"result": 2}]
            who = (await alice.call_tool("client", {})).structuredContent
        async with Client(url, mode=MODERN, auth="bob") as bob:
            assert await counts(bob, 1) == [{"result": 1}]
        async with Client(url, mode=MODERN, auth="alice") as alice:
            assert await counts(alice, 1) == [{"result": 3}]
    assert who == {"client_id": "app-alice", "caller": "principal:alice"}


@pytest.mark.parametrize("mode", ERAS)
async def test_no_client_id_without_authorization(mode: str) -> None:
    async with Client(state_server(), mode=mode) as client:
        who = (await client.call_tool("client", {})).structuredContent
    assert who == {"client_id": None, "caller": "process"}


@pytest.mark.parametrize("mode", ERAS)
async def test_a_task_s_handler_sees_the_task_s_context(mode: str) -> None:
    server = Server("s", tasks=TaskEngine())

    @server.tool(task="optional")
    async def slow(ctx: Context, db: str = Depends(lambda: "db")) -> bool:
        await anyio.sleep(0.01)  # the request was answered with the task by now
        return get_context() is ctx and db == "db"

    async with Client(server, mode=mode, tasks=True) as client:
        handle = await client.start_tool("slow", {})
        assert isinstance(handle, TaskHandle)
        result = await handle.result()
    assert result.structuredContent == {"result": True}


async def test_an_async_dependency_of_a_sync_handler_on_the_loop_is_refused() -> None:
    server = Server("s")

    async def token() -> str:
        return "t"

    with pytest.raises(TypeError, match="'stuck': a sync handler with run_in_thread=False"):

        @server.tool(run_in_thread=False)
        def stuck(value: str = Depends(token)) -> str:
            return value

    @server.tool(run_in_thread=False)
    def fine(value: str = Depends(lambda: "v")) -> str:  # a sync one is called on the loop
        return value

    async with Client(server) as client:
        assert text_of(await client.call_tool("fine", {})) == "v"
