"""A parent server's `enable`/`disable` reaching the components of the servers mounted in it
(issue 51, item 2's leftover): by the names the parent offers them under, by their tags and
versions, with a namespace or without, through nested mounts and mounted proxies (their
target's components judged by what its listing says), and a legacy session's own rules
the same way. A hidden component is unlisted and answers as unknown; what the mounted server
hides itself stays hidden.

Each runs through our `Client` in memory, in both eras unless it is about one.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpio import Client, Context, McpError, Server
from mcpio.client import proxy_server
from tests.support import MODERN

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", MODERN]


def child() -> Server:
    """Tagged components of every kind, one disabled by the child itself, one in two
    versions."""
    server = Server("child")

    @server.tool(tags={"admin"})
    def wipe() -> str:
        return "wiped"

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool(enabled=False)
    def secret() -> str:
        return "secret"

    @server.tool(version="1")
    def calc() -> str:
        return "calc 1"

    @server.tool("calc", version="2")
    def calc_two() -> str:
        return "calc 2"

    @server.prompt(tags={"admin"})
    def audit() -> str:
        return "audit"

    @server.resource("data://log", tags={"admin"})
    def log() -> str:
        return "log"

    @server.resource_template("data://user/{name}", tags={"admin"})
    def user(name: str) -> str:
        return f"user {name}"

    return server


def parent(namespace: str | None = "c") -> Server:
    server = Server("parent")

    @server.tool
    def own() -> str:
        return "own"

    server.mount(child(), namespace)
    return server


async def tool_names(client: Client) -> list[str]:
    return sorted(t.name for t in (await client.list_tools()).tools)


async def listed(client: Client) -> dict[str, list[str]]:
    return {
        "tools": await tool_names(client),
        "prompts": [p.name for p in (await client.list_prompts()).prompts],
        "resources": [str(r.uri) for r in (await client.list_resources()).resources],
        "templates": [
            t.uriTemplate for t in (await client.list_resource_templates()).resourceTemplates
        ],
    }


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_parent_hides_a_mounted_tool_by_the_name_it_offers(mode: str) -> None:
    server = parent()
    server.disable(names={"c_echo"})
    async with Client(server, mode=mode) as client:
        assert await tool_names(client) == ["c_calc", "c_wipe", "own"]
        with pytest.raises(McpError, match="unknown tool"):
            await client.call_tool("c_echo", {"text": "x"})
        assert text_of(await client.call_tool("c_wipe", {})) == "wiped"


@pytest.mark.parametrize("namespace", ["c", None])
@pytest.mark.parametrize("mode", ERAS)
async def test_a_parent_s_tag_rule_hides_mounted_components_of_every_kind(
    mode: str, namespace: str | None
) -> None:
    server = parent(namespace)
    server.disable(tags={"admin"})
    wipe = "wipe" if namespace is None else "c_wipe"
    log = "data://log" if namespace is None else "data://c/log"
    user = "data://user/ann" if namespace is None else "data://c/user/ann"
    async with Client(server, mode=mode) as client:
        assert await listed(client) == {
            "tools": sorted(
                ("own", *(n if namespace is None else f"c_{n}" for n in ("calc", "echo")))
            ),
            "prompts": [],
            "resources": [],
            "templates": [],
        }
        with pytest.raises(McpError, match="unknown tool"):
            await client.call_tool(wipe, {})
        with pytest.raises(McpError, match="resource not found"):
            await client.read_resource(log)
        with pytest.raises(McpError, match="resource not found"):
            await client.read_resource(user)
        with pytest.raises(McpError, match="unknown prompt"):
            await client.get_prompt("audit" if namespace is None else "c_audit")


async def test_only_is_an_allowlist_over_mounted_components_too() -> None:
    server = parent()
    server.enable(names={"c_echo", "c_secret", "data://c/log"}, only=True)
    async with Client(server, mode=MODERN) as client:
        seen = await listed(client)
        # the child's own `enabled=False` stays: the parent's rules hide, they do not unhide
        assert seen == {"tools": ["c_echo"], "prompts": [], "resources": ["data://c/log"],
                        "templates": []}  # fmt: skip
        with pytest.raises(McpError, match="unknown tool"):
            await client.call_tool("own", {})
        assert text_of(await client.call_tool("c_echo", {"text": "hi"})) == "hi"


async def test_a_parent_s_version_rule_serves_the_next_version_of_a_mounted_tool() -> None:
    server = parent()
    server.disable(names={"c_calc"}, version="2")
    async with Client(server, mode=MODERN) as client:
        assert text_of(await client.call_tool("c_calc", {})) == "calc 1"
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["c_calc"].meta is not None
    assert tools["c_calc"].meta.model_extra["fastmcp"]["version"] == "1"  # type: ignore[index]


async def test_every_server_up_a_nested_mount_hides_by_its_own_names() -> None:
    middle = Server("middle")
    middle.mount(child(), "c")
    middle.disable(names={"c_wipe"})
    top = Server("top")
    top.mount(middle, "m")
    top.disable(names={"m_c_echo"})
    async with Client(top, mode=MODERN) as client:
        assert await tool_names(client) == ["m_c_calc"]
        with pytest.raises(McpError, match="unknown tool"):
            await client.call_tool("m_c_echo", {"text": "x"})


async def test_a_later_parent_rule_shows_what_an_earlier_one_hid() -> None:
    server = parent()
    server.disable(tags={"admin"})
    server.enable(names={"c_wipe"})
    async with Client(server, mode=MODERN) as client:
        assert "c_wipe" in await tool_names(client)
        assert text_of(await client.call_tool("c_wipe", {})) == "wiped"


def session_parent() -> Server:
    server = parent()

    @server.tool
    async def focus(ctx: Context) -> str:
        await ctx.enable_components(names={"c_echo", "focus"}, only=True)
        return "focused"

    @server.tool
    async def hide_echo(ctx: Context) -> str:
        await ctx.disable_components(names={"c_echo", "own"})
        return "hidden"

    return server


async def test_a_session_s_rules_reach_mounted_components_by_the_parent_s_names() -> None:
    async with (
        Client(session_parent(), mode="2025-11-25") as mine,
        Client(session_parent(), mode="2025-11-25") as fresh,
    ):
        await mine.call_tool("focus", {})
        assert await tool_names(mine) == ["c_echo", "focus"]
        assert text_of(await mine.call_tool("c_echo", {"text": "hi"})) == "hi"
        # a server without rules of its own still applies a session's
        await fresh.call_tool("hide_echo", {})
        assert await tool_names(fresh) == ["c_calc", "c_wipe", "focus", "hide_echo"]
        with pytest.raises(McpError, match="unknown tool"):
            await fresh.call_tool("c_echo", {"text": "x"})


def remote() -> Server:
    """Components as a FastMCP server lists them (its tags under `_meta.fastmcp`), to proxy."""
    server = Server("remote")
    admin = {"fastmcp": {"tags": ["admin"]}}

    @server.tool(meta=admin)
    def wipe() -> str:
        return "wiped"

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.prompt(meta=admin)
    def audit() -> str:
        return "audit"

    @server.resource("data://log", meta=admin)
    def log() -> str:
        return "log"

    @server.resource_template("data://user/{name}", meta=admin)
    def user(name: str) -> str:
        return f"user {name}"

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_a_parent_s_rules_reach_a_mounted_proxy_s_components(mode: str) -> None:
    server = Server("parent")
    server.mount(proxy_server(Client(remote())), "r")
    server.disable(tags={"admin"})
    async with server.running(), Client(server, mode=mode) as client:
        with pytest.raises(McpError, match="unknown tool"):
            await client.call_tool("r_wipe", {})  # hidden before anything was listed
        with pytest.raises(McpError, match="resource not found"):
            await client.read_resource("data://r/user/ann")  # by its template's tags
        assert await listed(client) == {
            "tools": ["r_echo"],
            "prompts": [],
            "resources": [],
            "templates": [],
        }
        with pytest.raises(McpError, match="unknown prompt"):
            await client.get_prompt("r_audit")
        with pytest.raises(McpError, match="resource not found"):
            await client.read_resource("data://r/log")
        assert text_of(await client.call_tool("r_echo", {"text": "hi"})) == "hi"


async def test_a_proxy_s_own_rules_reach_its_target_s_components() -> None:
    proxy = proxy_server(Client(remote()))
    proxy.disable(names={"echo"})
    async with proxy.running(), Client(proxy, mode="2025-11-25") as client:
        assert await tool_names(client) == ["wipe"]
        with pytest.raises(McpError, match="unknown tool 'echo'"):
            await client.call_tool("echo", {"text": "x"})
        assert text_of(await client.call_tool("wipe", {})) == "wiped"
