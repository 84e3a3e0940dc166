"""`mcpio inspect` and the Skills extension (SEP-2640): a host loading a server's skills through
the HTTP relay raises no finding in either era (the methods are known once the server declares
the extension); the same methods sent to a server that does not declare it are flagged as
undeclared use (`capability.server`), not as unknown methods."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from mcpio import Client, McpError, Server
from mcpio.client._skills import Skills, extension_request
from mcpio.inspect._http_proxy import ProxyApp
from mcpio.inspect._transcript import Recorder
from tests.support import serve_app

pytestmark = pytest.mark.anyio
MODES = ["legacy", "2026-07-28"]
SKILL = "---\nname: pdf-tools\ndescription: Fill PDF forms\n---\n\nRead references/FORMS.md.\n"


def skills_server(root: Path) -> Server:
    (root / "pdf-tools" / "references").mkdir(parents=True)
    (root / "pdf-tools" / "SKILL.md").write_text(SKILL)
    (root / "pdf-tools" / "references" / "FORMS.md").write_text("# Forms\n")
    server = Server("skills", "1.0")
    server.skills(root, watch_interval=None)
    return server


@asynccontextmanager
async def relayed(server: Server) -> AsyncIterator[tuple[str, Recorder]]:
    recorder = Recorder(io.StringIO())
    async with serve_app(server.http_app()) as upstream:
        async with serve_app(ProxyApp(f"{upstream.url}/mcp", recorder)) as proxy:
            yield f"{proxy.url}/mcp", recorder


@pytest.mark.parametrize("mode", MODES)
async def test_a_host_loading_skills_through_the_relay_is_unflagged(
    tmp_path: Path, mode: str
) -> None:
    async with relayed(skills_server(tmp_path)) as (url, recorder):
        async with Client(url, mode=mode) as client:
            if mode != "legacy":
                await client.discover()  # what tells the host, and the relay, the extension
            skills = Skills(client)
            [entry] = await skills.list()
            assert (await skills.get(entry.uri)).uri == entry.uri
            loaded = await skills.load(entry)
            assert loaded.text == SKILL
            assert await skills.read(entry, "references/FORMS.md") == b"# Forms\n"
            children = await skills.read_directory("skill://pdf-tools")
            assert {child["uri"] for child in children} >= {"skill://pdf-tools/SKILL.md"}
            with pytest.raises(McpError):
                await extension_request(client, "skills/get", {"uri": "skill://nope/SKILL.md"})
    methods = {json.loads(e.frame).get("method") for e in recorder.entries}
    assert {"skills/list", "skills/get", "resources/directory/read"} <= methods
    assert recorder.findings() == []


@pytest.mark.parametrize("mode", MODES)
async def test_skills_methods_to_a_server_without_the_extension_are_undeclared_use(
    mode: str,
) -> None:
    server = Server("plain", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Say it back."""
        return text

    async with relayed(server) as (url, recorder):
        async with Client(url, mode=mode) as client:
            if mode != "legacy":
                await client.discover()
            for method, params in (("skills/list", {}), ("skills/get", {"uri": "skill://a"})):
                with pytest.raises(McpError):
                    await extension_request(client, method, params)
    found = [(f.rule, f.path, f.message) for f in recorder.findings()]
    assert [(rule, path) for rule, path, _ in found] == [("capability.server", "$.method")] * 2
    assert all("io.modelcontextprotocol/skills, not declared" in what for _, _, what in found)
