"""FastMCP's configuration shapes (issue 51, item 6): `Client(config)`, `from_config` of one
server without a prefix, `proxy_server` of a whole `mcpServers` configuration."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio import Client, Server
from mcpio.client import from_config, proxy_server
from mcpio.client._entries import configured

pytestmark = pytest.mark.anyio

MODES = ["2026-07-28", "2025-11-25"]

SCRIPT = """
import os
from mcpio import Server

server = Server("configured")


@server.tool()
def who() -> str:
    return os.environ.get("WHO", "nobody")


server.run_stdio()
"""


def config_of(tmp_path: Path, *names: str) -> dict[str, Any]:
    script = tmp_path / "configured.py"
    script.write_text(SCRIPT)
    entry = {"command": sys.executable, "args": [str(script)]}
    return {"mcpServers": {name: {**entry, "env": {"WHO": name}} for name in names}}


def text(result: Any) -> str:
    return result.content[0].text


def test_one_entry_is_its_own_target_with_its_options_under_the_given_ones() -> None:
    config = {"mcpServers": {"w": {"url": "https://x.test/mcp", "headers": {"A": "1", "B": "2"}}}}
    target, headers, env, cwd = configured(config, {"B": "mine"}, None, None)
    assert (target, headers, env, cwd) == (
        "https://x.test/mcp",
        {"A": "1", "B": "mine"},
        None,
        None,
    )
    stdio = {"mcpServers": {"s": {"command": "python3", "env": {"K": "v"}, "cwd": "/srv"}}}
    assert configured(stdio, None, {"L": "w"}, None) == (
        ["python3"],
        None,
        {"K": "v", "L": "w"},
        "/srv",
    )


def test_several_entries_are_one_server_mounting_each_under_its_name() -> None:
    config = {"mcpServers": {"a": {"command": "python3"}, "b": {"url": "https://x.test/mcp"}}}
    target, *_ = configured(config, None, None, None)
    assert isinstance(target, Server) and target.info.name == "mcpServers"
    mounts = target.__dict__["_mounts"].mounted
    assert [(m.namespace, m.server.info.name) for m in mounts] == [("a", "a"), ("b", "b")]


def test_a_mapping_that_is_no_configuration_says_what_it_lacks() -> None:
    with pytest.raises(ValueError, match="no 'mcpServers' entries"):
        Client({"command": "python3"})


@pytest.mark.slow
async def test_client_of_a_config_of_one_server_uses_its_names_as_they_are(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with Client(config_of(tmp_path, "solo")) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            answer = await client.call_tool("who", {})
        async with from_config(config_of(tmp_path, "solo")) as client:
            again = await client.call_tool("who", {})
    assert names == ["who"]
    assert text(answer) == text(again) == "solo"


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_client_of_a_config_of_several_servers_prefixes_each(
    mode: str, tmp_path: Path
) -> None:
    with anyio.fail_after(60):
        async with Client(config_of(tmp_path, "a", "b"), mode=mode) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            answer = await client.call_tool("b_who", {})
    assert names == ["a_who", "b_who"]
    assert text(answer) == "b"


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_proxy_server_of_a_whole_config(mode: str, tmp_path: Path) -> None:
    one = proxy_server(config_of(tmp_path, "solo"))
    several = proxy_server(config_of(tmp_path, "a", "b"), name="gateway")
    assert (one.info.name, several.info.name) == ("solo", "gateway")
    with anyio.fail_after(60):
        async with Client(one, mode=mode) as client:
            solo = await client.call_tool("who", {})
        async with Client(several, mode=mode) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            answer = await client.call_tool("a_who", {})
    assert text(solo) == "solo"
    assert names == ["a_who", "b_who"]
    assert text(answer) == "a"
