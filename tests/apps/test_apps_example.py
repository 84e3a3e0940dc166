"""examples/apps_server.py, the example of docs/servers/apps.md, run as a user runs it: over
stdio in both eras, by a client that renders apps and one that does not."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcpio import Client
from mcpio.apps import UI_MIME_TYPE, resource_ui, tool_ui
from tests.support import ROOT

pytestmark = pytest.mark.anyio
EXAMPLE = [sys.executable, str(ROOT / "examples" / "apps_server.py")]


@pytest.mark.parametrize("mode", ["2025-11-25", "2026-07-28"])
async def test_the_example_serves_its_app(mode: str) -> None:
    async with Client(EXAMPLE, mode=mode, apps=True) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(tools) == ["increment", "show_counter"]
        shown = tool_ui(tools["show_counter"])
        assert shown is not None and shown.resourceUri == "ui://counter/app.html"
        (page,) = (await client.read_resource("ui://counter/app.html")).contents
        assert page.mimeType == UI_MIME_TYPE and "callServerTool" in getattr(page, "text", "")
        meta = resource_ui(page)
        assert meta is not None and meta.csp is not None
        assert meta.csp.resourceDomains == ["https://unpkg.com"]
        first = await client.call_tool("increment", {"by": 2})
        second = await client.call_tool("show_counter", {})
        assert [first.content[0].text, second.content[0].text] == [  # type: ignore[union-attr]
            "2",
            "the counter is at 2",
        ]
    async with Client(EXAMPLE, mode=mode) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["show_counter"]


def test_a_wrong_command_line_is_one_line_and_status_2() -> None:
    done = subprocess.run(
        [*EXAMPLE, "ftp"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stderr == "usage: apps_server.py [http [PORT]]\n"
