"""`Server.mount`: a server re-serving another under a namespace (issue 36)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpio import Call, Client, Context, McpError, Server
from mcpio.server._mount import prefixed_uri, unprefixed_uri
from mcpio.tasks._client import TaskHandle

pytestmark = pytest.mark.anyio

MODES = ["2026-07-28", "2025-11-25", "2025-06-18"]


def weather_server(seen: dict[str, Any]) -> Server:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        seen["entered"] = True
        yield "weather-state"
        seen["left"] = True

    async def counting(call: Call, call_next: Any) -> Any:
        seen.setdefault("middleware", []).append(call.method)
        return await call_next(call)

    weather = Server("weather", lifespan=lifespan, middleware=[counting])

    @weather.tool()
    async def forecast(city: str, ctx: Context) -> str:
        await ctx.progress(1, 2, "looking")
        return f"sunny in {city} ({ctx.lifespan})"

    @weather.tool(task="optional")
    async def slow(n: int) -> str:
        await anyio.sleep(0.05)
        return f"slow {n}"

    @weather.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit(
            "City?", {"type": "object", "properties": {"v": {"type": "string"}}}
        )
        return str((answer.content or {}).get("v"))

    @weather.resource("data://cities", mime_type="text/plain")
    def cities() -> str:
        return "Paris, Oslo"

    @weather.resource_template("data://city/{name}")
    def city(name: str) -> str:
        return f"city {name}"

    @weather.prompt()
    def brief(city: str) -> str:
        return f"Brief me on {city}"

    @weather.completer
    def complete(params: Any) -> list[str]:
        return [f"{params.ref.type}:{params.argument.value}"]

    return weather


def composite(seen: dict[str, Any]) -> tuple[Server, Server]:
    main = Server("main")

    @main.tool()
    def hello() -> str:
        return "hello"

    weather = weather_server(seen)
    main.mount(weather, namespace="weather")
    return main, weather


async def elicit(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"v": "Oslo"}}


def test_uri_prefixes_round_trip() -> None:
    for uri, expected in [
        ("data://info", "data://ns/info"),
        ("data://{id}", "data://ns/{id}"),
        ("urn:thing", "urn:ns/thing"),
        ("plain", "ns/plain"),
    ]:
        assert prefixed_uri(uri, "ns") == expected
        assert unprefixed_uri(expected, "ns") == uri
    assert unprefixed_uri("data://other/info", "ns") is None


@asynccontextmanager
async def mounted(mode: str, seen: dict[str, Any]) -> AsyncIterator[Client]:
    """Our client in `mode` on `composite(seen)`'s parent server, answering elicitations."""
    main, _ = composite(seen)
    async with Client(main, mode=mode, elicitation=elicit) as client:
        yield client


@pytest.fixture(scope="module", params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    """Each mode, for the tests that share one client per mode."""
    return request.param


@pytest.fixture(scope="module")
async def client(mode: str, anyio_backend: str) -> AsyncIterator[Client]:
    """One client per mode on one composite server, shared by the calls that change nothing."""
    async with mounted(mode, {}) as client:
        yield client


async def test_mounted_tools_are_listed_under_the_namespace(client: Client) -> None:
    names = [t.name for t in (await client.list_tools()).tools]
    assert names == ["hello", "weather_forecast", "weather_slow", "weather_ask"]


@pytest.mark.parametrize("mode", MODES)
async def test_the_mounted_lifespan_is_entered_and_left_with_the_parent_s(mode: str) -> None:
    seen: dict[str, Any] = {}
    async with mounted(mode, seen) as client:
        await client.list_tools()
        assert seen.get("entered")  # the mounted server's lifespan, entered with the parent's
    assert seen.get("left")


async def test_a_mounted_tool_sees_its_lifespan_and_reports_progress(client: Client) -> None:
    steps: list[float] = []
    result = await client.call_tool(
        "weather_forecast", {"city": "Paris"}, progress=lambda p, t, m: steps.append(p)
    )
    assert result.content[0].text == "sunny in Paris (weather-state)"  # type: ignore[union-attr]
    assert steps == [1]


async def test_a_mounted_tool_elicits_through_the_parent(client: Client) -> None:
    asked = await client.call_tool("weather_ask", {})
    assert asked.content[0].text == "Oslo"  # type: ignore[union-attr]


async def test_mounted_resources_and_templates_are_listed_under_the_namespace(
    client: Client,
) -> None:
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    assert [r.uri for r in resources.resources] == ["data://weather/cities"]
    assert [t.uriTemplate for t in templates.resourceTemplates] == ["data://weather/city/{name}"]


async def test_a_mounted_template_reads_under_the_namespace(client: Client) -> None:
    read = await client.read_resource("data://weather/city/Oslo")
    assert (read.contents[0].uri, read.contents[0].text) == ("data://weather/city/Oslo", "city Oslo")  # type: ignore[union-attr]


async def test_mounted_prompts_are_listed_and_rendered_under_the_namespace(client: Client) -> None:
    prompts = await client.list_prompts()
    prompt = await client.get_prompt("weather_brief", {"city": "Oslo"})
    assert [p.name for p in prompts.prompts] == ["weather_brief"]
    assert prompt.messages[0].content.text == "Brief me on Oslo"  # type: ignore[union-attr]


async def test_a_mounted_prompt_completes_through_its_server_s_completer(client: Client) -> None:
    completion = await client.complete(
        {"type": "ref/prompt", "name": "weather_brief"}, "city", "Os"
    )
    assert completion.completion.values == ["ref/prompt:Os"]


async def test_the_parent_s_own_tool_answers_beside_the_mount(client: Client) -> None:
    assert (await client.call_tool("hello", {})).content[0].text == "hello"  # type: ignore[union-attr]


async def test_an_unknown_namespaced_tool_or_resource_is_invalid_params(client: Client) -> None:
    with pytest.raises(McpError) as caught:
        await client.call_tool("weather_nothing", {})
    with pytest.raises(McpError) as missing:
        await client.read_resource("data://weather/none")
    assert caught.value.code == -32602
    assert missing.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_the_mounted_server_s_middleware_runs_on_its_calls(mode: str) -> None:
    seen: dict[str, Any] = {}
    async with mounted(mode, seen) as client:
        await client.call_tool("weather_forecast", {"city": "Paris"})
    assert "tools/call" in seen["middleware"]  # the mounted server's middleware ran


@pytest.mark.parametrize("mode", ["2026-07-28", "2025-11-25"])
async def test_mounted_task_tool_runs_as_a_task_of_the_parent(mode: str) -> None:
    main, _ = composite({})
    async with Client(main, mode=mode, tasks=True) as client:
        await client.list_tools()
        handle = await client.start_tool("weather_slow", {"n": 3})
        assert isinstance(handle, TaskHandle)
        result = await handle.result()
        assert result.content[0].text == "slow 3"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_list_changes_of_the_mounted_server_propagate(mode: str) -> None:
    main, weather = composite({})
    async with Client(main, mode=mode) as client:
        async with client.listen(tools=True, resource_uris=["data://weather/cities"]) as sub:
            weather.remove_tool("slow")
            await weather.notify_resource_updated("data://cities")
            with anyio.fail_after(5):
                first = await sub.__anext__()
                second = await sub.__anext__()
        heard = {n.method: n.params for n in (first, second)}  # the removal's is a task
        assert set(heard) == {"notifications/tools/list_changed", "notifications/resources/updated"}
        assert heard["notifications/resources/updated"].uri == "data://weather/cities"
        names = [t.name for t in (await client.list_tools()).tools]
        assert "weather_slow" not in names


async def test_paged_composite_listing_and_bad_namespaces() -> None:
    main = Server("main", list_page_size=2)
    for i in range(3):
        main.tool(name=f"own{i}")(lambda: "x")
    main.mount(weather_server({}), namespace="weather")
    async with Client(main) as client:
        names = [t.name for t in (await client.list_tools()).tools]  # every page followed
        assert len(names) == 6 and names[3] == "weather_forecast"
        first = await client.request("tools/list", {})  # one page of the union
        assert [t.name for t in first.tools] == names[:2] and first.nextCursor
        second = await client.request("tools/list", {"cursor": first.nextCursor})
        assert [t.name for t in second.tools] == names[2:4]
    with pytest.raises(ValueError):
        main.mount(Server("x"), namespace="weather")
    with pytest.raises(ValueError):
        main.mount(Server("x"), namespace="a/b")


def _one_tool(name: str, answer: str) -> Server:
    server = Server(answer)
    server.tool(name=name)(lambda: answer)
    return server


@pytest.mark.parametrize("first, second", [("gh", "gh_ent"), ("gh_ent", "gh")])
def test_a_namespace_that_prefixes_another_with_an_underscore_is_refused(
    first: str, second: str
) -> None:
    # `gh`'s `ent_x` and `gh_ent`'s `x` would both be `gh_ent_x`: one would shadow the other
    main = Server("main")
    main.mount(_one_tool("ent_x" if first == "gh" else "x", first), namespace=first)
    with pytest.raises(ValueError, match="clashes"):
        main.mount(_one_tool("ent_x" if second == "gh" else "x", second), namespace=second)
    assert [m.namespace for m in main.__dict__["_mounts"].mounted] == [first]


async def test_namespaces_that_share_a_start_without_the_separator_route_apart() -> None:
    main = Server("main")
    main.mount(_one_tool("entx", "gh"), namespace="gh")
    main.mount(_one_tool("x", "ghent"), namespace="ghent")
    async with Client(main) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        assert names == ["gh_entx", "ghent_x"]
        assert (await client.call_tool("gh_entx", {})).content[0].text == "gh"
        assert (await client.call_tool("ghent_x", {})).content[0].text == "ghent"


@pytest.mark.parametrize("mode", ["2026-07-28", "2025-11-25"])
async def test_a_mounted_server_s_extensions_are_declared_by_the_parent(mode: str) -> None:
    """The parent has no app or task tool of its own: the mounted server's MCP App and task
    tool make it declare both extensions (Tasks natively on 2025-11-25)."""
    from mcpio.apps import UI_EXTENSION, UiApp

    child = Server("child")

    @child.tool(app=UiApp("ui://panel"), task="optional")
    async def panel() -> str:  # pyright: ignore[reportUnusedFunction]
        return "panel"

    parent = Server("parent")
    parent.mount(child, "kid")
    async with Client(parent, mode=mode) as client:
        if client.modern:
            await client.discover()
        assert client.server_capabilities is not None
        seen = client.server_capabilities.model_dump(by_alias=True, exclude_unset=True)
    reported = parent.capabilities_in(mode)  # what initialize / server/discover write
    tasks_declared = "io.modelcontextprotocol/tasks" in reported.get("extensions", {})
    assert (UI_EXTENSION in seen["extensions"], tasks_declared, "tasks" in reported) == (
        True,
        mode == "2026-07-28",
        mode == "2025-11-25",
    )
