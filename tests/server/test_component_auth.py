"""Per-component authorization (issue 51, item 2's leftover): FastMCP's `auth=` on tools,
resources, templates and prompts, a check (`require_scopes`, `restrict_tag`, a function of an
`AuthContext`) or a list of them. A component the caller may not use is unlisted and answers
as unknown; checks run over HTTP (the token's principal), not over stdio or in memory.

Over HTTP with a resource server's tokens ("admin": scope `admin`; "reader": none), both eras.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcpio import Client, McpError, Principal, Server
from mcpio.auth import AuthContext, ResourceServerAuth, require_scopes, restrict_tag
from mcpio.client import proxy_server
from tests.support import MODERN, serve_app

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", MODERN]
RESOURCE = "http://127.0.0.1/mcp"
SCOPES = {"admin": frozenset({"admin"}), "reader": frozenset[str]()}


async def verify(token: str) -> Principal | None:
    return Principal(token, scopes=SCOPES[token]) if token in SCOPES else None


def named_ann(ctx: AuthContext) -> bool:
    return ctx.principal is not None and ctx.principal.subject == "admin"


def broken(ctx: AuthContext) -> bool:
    raise RuntimeError("a broken check")


def guarded() -> Server:
    server = Server("guarded", on_duplicate="error")

    @server.tool
    def status() -> str:
        return "ok"

    @server.tool(auth=require_scopes("admin"))
    def wipe() -> str:
        return "wiped"

    @server.tool(auth=[named_ann, require_scopes("admin")])
    def audit() -> str:
        return "audited"

    @server.tool(auth=broken)
    def fragile() -> str:
        return "never"

    @server.resource("data://secrets", auth=require_scopes("admin"))
    def secrets() -> str:
        return "s3cret"

    @server.resource_template("data://user/{name}", auth=require_scopes("admin"))
    def user(name: str) -> str:
        return f"user {name}"

    @server.prompt(auth=require_scopes("admin"))
    def incident() -> str:
        return "report"

    child = Server("child")

    @child.tool(tags={"billing"})
    def refund() -> str:
        return "refunded"

    @child.tool(auth=restrict_tag("billing", scopes={"admin"}))
    def invoice() -> str:
        return "invoiced"

    child.tool("charge", tags={"billing"}, auth=restrict_tag("billing", scopes={"admin"}))(
        lambda: "charged"
    )
    server.mount(child, "pay")
    server.add_transformed_tool("wipe", name="wipe_all")  # inherits the source's check
    return server


@asynccontextmanager
async def client_of(token: str, mode: str) -> AsyncIterator[Client]:
    auth = ResourceServerAuth(verify, RESOURCE, ["http://127.0.0.1/issuer"])
    async with serve_app(guarded().http_app(auth=auth)) as served:
        async with Client(served.url + "/mcp", mode=mode, auth=token) as client:
            yield client


async def seen(client: Client) -> dict[str, list[str]]:
    return {
        "tools": sorted(t.name for t in (await client.list_tools()).tools),
        "resources": [str(r.uri) for r in (await client.list_resources()).resources],
        "templates": [
            t.uriTemplate for t in (await client.list_resource_templates()).resourceTemplates
        ],
        "prompts": [p.name for p in (await client.list_prompts()).prompts],
    }


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_caller_without_the_scope_sees_and_uses_none_of_them(mode: str) -> None:
    async with client_of("reader", mode) as client:
        listed = await seen(client)
        with pytest.raises(McpError, match="unknown tool 'wipe'"):
            await client.call_tool("wipe", {})
        with pytest.raises(McpError, match="unknown tool"):
            await client.call_tool("wipe_all", {})
        with pytest.raises(McpError, match="resource not found"):
            await client.read_resource("data://secrets")
        with pytest.raises(McpError, match="resource not found"):
            await client.read_resource("data://user/ann")
        with pytest.raises(McpError, match="unknown prompt"):
            await client.get_prompt("incident", {})
        assert text_of(await client.call_tool("pay_invoice", {})) == "invoiced"  # untagged
    assert listed == {
        "tools": ["pay_invoice", "pay_refund", "status"],
        "resources": [],
        "templates": [],
        "prompts": [],
    }


@pytest.mark.parametrize("mode", ERAS)
async def test_a_caller_with_the_scope_sees_and_uses_them(mode: str) -> None:
    async with client_of("admin", mode) as client:
        listed = await seen(client)
        assert text_of(await client.call_tool("wipe", {})) == "wiped"
        assert text_of(await client.call_tool("wipe_all", {})) == "wiped"
        assert text_of(await client.call_tool("pay_charge", {})) == "charged"
        assert (await client.read_resource("data://user/ann")).contents[0].text == "user ann"  # type: ignore[union-attr]
    assert listed == {
        "tools": ["audit", "pay_charge", "pay_invoice", "pay_refund", "status", "wipe",
                  "wipe_all"],
        "resources": ["data://secrets"],
        "templates": ["data://user/{name}"],
        "prompts": ["incident"],
    }  # fmt: skip


async def test_a_check_that_raises_denies_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "mcpio"):
        async with client_of("admin", MODERN) as client:
            with pytest.raises(McpError, match="unknown tool 'fragile'"):
                await client.call_tool("fragile", {})
    assert any("auth check" in r.getMessage() and "fragile" in r.getMessage()
               for r in caplog.records)  # fmt: skip


@pytest.mark.parametrize("mode", ERAS)
async def test_in_memory_the_local_user_is_not_judged(mode: str) -> None:
    async with Client(guarded(), mode=mode) as client:
        assert "wipe" in (await seen(client))["tools"]
        assert text_of(await client.call_tool("wipe", {})) == "wiped"


def test_an_auth_that_is_no_check_is_a_type_error_naming_the_fix() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match=r"auth is a check or a list of them"):
        server.tool(auth="admin")(lambda: "")  # type: ignore[arg-type]

    async def check(ctx: AuthContext) -> bool:
        return True

    with pytest.raises(TypeError, match="an auth check is a plain function"):
        server.prompt(auth=check)(lambda: "")  # type: ignore[arg-type]


def guarded_later() -> Server:
    """A transformed tool made before its source's server is mounted (the source's check
    denies callers without the scope)."""
    server = Server("later")
    server.add_transformed_tool("ops_purge", name="purge_all")
    ops = Server("ops")
    ops.tool("purge", auth=require_scopes("admin"))(lambda: "purged")
    server.mount(ops, "ops")
    return server


async def tools_and_call(server: Server, token: str, mode: str, tool: str) -> tuple[list[str], str]:
    """What `token`'s caller sees of `server` over HTTP: its tools, and the call of `tool`
    (its text, or the error's message)."""
    auth = ResourceServerAuth(verify, RESOURCE, ["http://127.0.0.1/issuer"])
    async with serve_app(server.http_app(auth=auth)) as served:
        async with Client(served.url + "/mcp", mode=mode, auth=token) as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            try:
                return tools, text_of(await client.call_tool(tool, {}))
            except McpError as exc:
                return tools, str(exc)


@pytest.mark.parametrize("token", ["reader", "admin"])
async def test_a_transformed_tool_of_a_source_mounted_later_keeps_the_source_s_check(
    token: str,
) -> None:
    tools, called = await tools_and_call(guarded_later(), token, MODERN, "purge_all")
    if token == "reader":
        assert (tools, called) == ([], "unknown tool 'purge_all'")
    else:
        assert (tools, called) == (["ops_purge", "purge_all"], "purged")


def behind_a_proxy() -> Server:
    """A server mounting a proxy of an in-process server whose tool has a check."""
    ops = Server("ops")
    ops.tool("purge", auth=require_scopes("admin"))(lambda: "purged")
    ops.tool("status")(lambda: "ok")
    server = Server("front")
    server.mount(proxy_server(ops), "ops")
    return server


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("token", ["reader", "admin"])
async def test_an_in_process_server_behind_a_mounted_proxy_judges_the_caller(
    token: str, mode: str
) -> None:
    tools, called = await tools_and_call(behind_a_proxy(), token, mode, "ops_purge")
    if token == "reader":
        assert (tools, called) == (["ops_status"], "unknown tool 'purge'")
    else:
        assert (tools, called) == (["ops_purge", "ops_status"], "purged")
