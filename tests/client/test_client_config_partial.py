"""`from_config` and mounts when one server cannot take part (issue 50): a server that lacks a
feature (no resources or prompts: it answers -32601, as most published servers do) is left out
of that listing and the others' are listed; a server that fails to start is named in a warning
and in `Server.unavailable`, and the others keep serving."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio import Client, Server
from mcpio.client._config import from_config
from mcpio.client._proxy import proxy_server
from tests.support import text_of

pytestmark = pytest.mark.anyio

# A server of tools alone, written against the wire (no framework answers for it): every method
# but initialize, ping, tools/list and tools/call is -32601, as the official SDKs answer.
TOOLS_ONLY = r"""
import json, sys

TOOL = {"name": "hello", "inputSchema": {"type": "object"}}
for line in sys.stdin:
    frame = json.loads(line)
    if "id" not in frame or "method" not in frame:
        continue
    method, answer = frame["method"], {"jsonrpc": "2.0", "id": frame["id"]}
    if method == "initialize":
        answer["result"] = {
            "protocolVersion": frame["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tools-only", "version": "1"},
        }
    elif method == "ping":
        answer["result"] = {}
    elif method == "tools/list":
        answer["result"] = {"tools": [TOOL]}
    elif method == "tools/call":
        answer["result"] = {"content": [{"type": "text", "text": "hello from tools-only"}]}
    else:
        answer["error"] = {"code": -32601, "message": f"Method not found: {method}"}
    print(json.dumps(answer), flush=True)
"""

FULL = """
from mcpio import Server

server = Server("full")


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


@server.resource("data://note", mime_type="text/plain")
def note() -> str:
    return "a note"


@server.resource("data://notes/{name}", mime_type="text/plain")
def named(name: str) -> str:
    return name


@server.prompt()
def greet(who: str) -> str:
    return f"Hello {who}"


server.run_stdio()
"""


def config(tmp_path: Path, **entries: dict[str, Any]) -> dict[str, Any]:
    (tmp_path / "tools_only.py").write_text(TOOLS_ONLY)
    (tmp_path / "full.py").write_text(FULL)
    scripts = {
        "tools": {"command": sys.executable, "args": [str(tmp_path / "tools_only.py")]},
        "full": {"command": sys.executable, "args": [str(tmp_path / "full.py")]},
    }
    return {"mcpServers": {**scripts, **entries}}


async def listed(client: Client) -> dict[str, list[str]]:
    """Every listing's names (URIs, templates)."""
    return {
        "tools": [t.name for t in (await client.list_tools()).tools],
        "resources": [r.uri for r in (await client.list_resources()).resources],
        "templates": [
            t.uriTemplate for t in (await client.list_resource_templates()).resourceTemplates
        ],
        "prompts": [p.name for p in (await client.list_prompts()).prompts],
    }


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_server_lacking_a_feature_is_left_out_of_that_listing(
    mode: str, tmp_path: Path
) -> None:
    with anyio.fail_after(60):
        async with from_config(config(tmp_path), mode=mode) as client:
            assert await listed(client) == {
                "tools": ["tools_hello", "full_add"],
                "resources": ["data://full/note"],
                "templates": ["data://full/notes/{name}"],
                "prompts": ["full_greet"],
            }
            assert text_of(await client.call_tool("tools_hello", {})) == "hello from tools-only"
            greeting = await client.get_prompt("full_greet", {"who": "you"})
            assert "Hello you" in str(greeting.messages[0].content)


async def test_a_server_that_fails_to_start_is_named_and_the_rest_serve(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = {"command": str(tmp_path / "no-such-server"), "args": []}
    server = proxy_server(config(tmp_path, broken=missing))
    with anyio.fail_after(60), caplog.at_level(logging.WARNING, logger="mcpio"):
        async with Client(server) as client:
            names = await listed(client)
            assert names["tools"] == ["tools_hello", "full_add"]
            assert names["prompts"] == ["full_greet"]
            assert text_of(await client.call_tool("full_add", {"a": 2, "b": 3})) == "5"
            assert list(server.unavailable) == ["broken"]
            assert "no-such-server" in server.unavailable["broken"]
    warned = [r.getMessage() for r in caplog.records if "'broken' is left out" in r.getMessage()]
    assert len(warned) == 1  # once, not at every listing


async def test_a_mount_that_answers_again_leaves_unavailable() -> None:
    flaky = Server("flaky")
    failing = True

    @flaky.tool()
    def ping() -> str:
        return "pong"

    async def refuse(call: Any, call_next: Any) -> Any:
        if failing and call.method == "tools/list":
            from mcp_wire_runtime.errors import INTERNAL_ERROR, ProtocolError

            raise ProtocolError(INTERNAL_ERROR, "not reachable")
        return await call_next(call)

    flaky.add_middleware(refuse)
    main = Server("main")
    main.mount(flaky, namespace="flaky")
    async with Client(main) as client:
        assert (await client.list_tools()).tools == []
        assert main.unavailable == {"flaky": "not reachable"}
        failing = False
        client.cache = None  # the listing asked again, not served from the cache
        assert [t.name for t in (await client.list_tools()).tools] == ["flaky_ping"]
        assert main.unavailable == {}


async def test_a_mount_asking_for_input_in_a_modern_listing_is_left_out() -> None:
    """A 2026-07-28 listing cannot ask the client anything: a mounted server that does (a proxy
    whose target asks for roots) is left out of it, and the other's tools are listed."""
    asker, plain = Server("asker"), Server("plain")

    @asker.tool()
    def hidden() -> str:
        return "never listed"

    @plain.tool()
    def shown() -> str:
        return "listed"

    async def ask(call: Any, call_next: Any) -> Any:
        if call.method == "tools/list":
            await call.ctx.elicit("Who?", {"type": "object", "properties": {}})
        return await call_next(call)

    asker.add_middleware(ask)
    main = Server("main")
    main.mount(asker, namespace="asker")
    main.mount(plain, namespace="plain")

    async def answer(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async with Client(main, mode="2026-07-28", elicitation=answer) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["plain_shown"]
    assert main.unavailable == {"asker": "tools/list asked the client for input"}
