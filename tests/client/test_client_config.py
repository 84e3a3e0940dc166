"""`from_config`: one client for an `mcpServers` configuration (issue 36)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import pytest

from mcpio import Client
from mcpio.client._config import from_config, servers_of
from mcpio.client._proxy import entry_options, proxy_server

pytestmark = pytest.mark.anyio

SCRIPT = """
import os
from mcpio import Server

server = Server("configured")


@server.tool()
def who() -> str:
    return os.environ.get("WHO", "nobody")


@server.resource("data://info")
def info() -> str:
    return "info of " + os.environ.get("WHO", "nobody")


server.run_stdio()
"""


def test_entries_checked_up_front(tmp_path: Any) -> None:
    assert entry_options({"url": "https://x.test/mcp", "headers": {"A": "b"}}) == {
        "target": "https://x.test/mcp",
        "headers": {"A": "b"},
    }
    stdio = entry_options({"command": "python3", "args": ["s.py"], "env": {"K": "v"}})
    # Only the entry's own: spawning adds it to the variables a stdio server inherits.
    assert stdio["target"] == ["python3", "s.py"] and stdio["env"] == {"K": "v"}
    for bad in ({}, {"command": "x", "args": "not a list"}, {"url": ""}):
        with pytest.raises(ValueError):
            entry_options(bad)
    with pytest.raises(ValueError, match="no 'mcpServers'"):
        servers_of({"other": {}})
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="cannot read"):
        servers_of(str(broken))
    vscode = servers_of({"servers": {"a": {"command": "python3"}}})
    assert list(vscode) == ["a"]


@pytest.mark.slow
async def test_three_servers_one_client(tmp_path: Any) -> None:
    script = tmp_path / "configured.py"
    script.write_text(SCRIPT)
    entry = {"command": sys.executable, "args": [str(script)]}
    config = {
        "mcpServers": {name: {**entry, "env": {"WHO": name}} for name in ("alpha", "beta", "gamma")}
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    with anyio.fail_after(90):
        async with from_config(str(path)) as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            assert tools == ["alpha_who", "beta_who", "gamma_who"]
            for name in ("alpha", "beta", "gamma"):
                result = await client.call_tool(f"{name}_who", {})
                assert result.content[0].text == name  # type: ignore[union-attr]
            read = await client.read_resource("data://beta/info")
            assert read.contents[0].text == "info of beta"  # type: ignore[union-attr]


LEAK_SCRIPT = """
import os
from mcpio import Server

server = Server("leak")


@server.tool()
def seen() -> str:
    return " ".join(os.environ.get(k, "-") for k in ("WHO", "MCPIO_TEST_API_KEY", "PATH"))


server.run_stdio()
"""


async def test_a_configured_stdio_server_gets_its_env_and_no_host_secret(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPIO_TEST_API_KEY", "s3cret")
    script = tmp_path / "leak.py"
    script.write_text(LEAK_SCRIPT)
    config = {
        "mcpServers": {
            "bare": {"command": sys.executable, "args": [str(script)]},
            "given": {"command": sys.executable, "args": [str(script)], "env": {"WHO": "me"}},
        }
    }
    with anyio.fail_after(60):
        async with from_config(config) as client:
            for name, who in (("bare", "-"), ("given", "me")):
                result = await client.call_tool(f"{name}_seen", {})
                text = result.content[0].text  # type: ignore[union-attr]
                assert text == f"{who} - {os.environ['PATH']}", name


async def test_a_proxied_entry_gets_its_env_and_no_host_secret(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPIO_TEST_API_KEY", "s3cret")
    script = tmp_path / "leak.py"
    script.write_text(LEAK_SCRIPT)
    entry = {"command": sys.executable, "args": [str(script)], "env": {"WHO": "me"}}
    with anyio.fail_after(60):
        async with Client(proxy_server(entry)) as client:
            text = (await client.call_tool("seen", {})).content[0].text  # type: ignore[union-attr]
    assert text == f"me - {os.environ['PATH']}"


def test_server_names_that_would_shadow_each_other_are_refused() -> None:
    config = {"mcpServers": {"gh": {"command": "x"}, "gh_ent": {"command": "y"}}}
    with pytest.raises(ValueError, match="clashes"):
        from_config(config)
