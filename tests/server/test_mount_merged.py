"""`Server.mount(other)` without a namespace: names merged as they are, a shared name handled
as the parent's `on_duplicate` says (issue 51, item 6)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from mcpio import Client, McpError, Server
from mcpio.server._registry import OnDuplicate

pytestmark = pytest.mark.anyio

MODES = ["2026-07-28", "2025-11-25"]


def weather() -> Server:
    server = Server("weather")

    @server.tool()
    def forecast(city: str) -> str:
        return f"sunny in {city}"

    @server.tool()
    def hello() -> str:
        return "hello from weather"

    @server.resource("data://cities", mime_type="text/plain")
    def cities() -> str:
        return "Paris, Oslo"

    @server.resource_template("data://city/{name}")
    def city(name: str) -> str:
        return f"city {name}"

    @server.prompt()
    def brief(city: str) -> str:
        return f"Brief me on {city}"

    return server


def main_server(on_duplicate: OnDuplicate = "warn") -> Server:
    main = Server("main", on_duplicate=on_duplicate)

    @main.tool()
    def hello() -> str:
        return "hello from main"

    return main


def text(result: Any) -> str:
    return result.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_a_server_mounted_without_a_namespace_serves_its_own_names(mode: str) -> None:
    main = main_server("ignore")
    main.mount(weather())
    async with Client(main, mode=mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        forecast = await client.call_tool("forecast", {"city": "Oslo"})
        read = await client.read_resource("data://city/Oslo")
        listed = [r.uri for r in (await client.list_resources()).resources]
        prompt = await client.get_prompt("brief", {"city": "Oslo"})
    assert names == ["hello", "forecast"]
    assert text(forecast) == "sunny in Oslo"
    assert (read.contents[0].uri, read.contents[0].text) == ("data://city/Oslo", "city Oslo")  # type: ignore[union-attr]
    assert listed == ["data://cities"]
    assert prompt.messages[0].content.text == "Brief me on Oslo"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_name_is_still_invalid_params(mode: str) -> None:
    main = main_server()
    main.mount(Server("empty"))
    async with Client(main, mode=mode) as client:
        with pytest.raises(McpError, match="unknown tool 'nope'"):
            await client.call_tool("nope", {})
        with pytest.raises(McpError, match="resource not found"):
            await client.read_resource("data://nope")


def test_a_shared_name_is_refused_naming_both_servers_with_on_duplicate_error() -> None:
    main = main_server("error")
    with pytest.raises(ValueError, match="tool 'hello' is offered by both 'main' and 'weather'"):
        main.mount(weather())


def test_a_shared_name_between_two_mounts_is_refused_too() -> None:
    main = Server("main", on_duplicate="error")
    main.mount(weather())
    again = Server("again")
    again.tool(name="forecast")(lambda: "x")
    with pytest.raises(
        ValueError, match="tool 'forecast' is offered by both 'weather' and 'again'"
    ):
        main.mount(again)


@pytest.mark.parametrize("mode", MODES)
async def test_by_default_a_shared_name_warns_and_the_mounted_server_answers(mode: str) -> None:
    main = main_server()
    with pytest.warns(UserWarning, match="tool 'hello' is offered by both 'main' and 'weather'"):
        main.mount(weather())
    async with Client(main, mode=mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        answer = await client.call_tool("hello", {})
    assert names == ["hello", "forecast"]
    assert text(answer) == "hello from weather"


@pytest.mark.parametrize("mode", MODES)
async def test_with_on_duplicate_ignore_the_parent_s_own_name_answers(mode: str) -> None:
    main = main_server("ignore")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no duplicate warning
        main.mount(weather())
    async with Client(main, mode=mode) as client:
        answer = await client.call_tool("hello", {})
        names = [t.name for t in (await client.list_tools()).tools]
    assert text(answer) == "hello from main"
    assert names == ["hello", "forecast"]


def test_the_same_server_is_not_mounted_twice() -> None:
    main = main_server()
    other = Server("other")
    main.mount(other)
    with pytest.raises(ValueError, match="'other' is mounted already"):
        main.mount(other, namespace="o")
