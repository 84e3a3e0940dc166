"""The README's Python snippets run as written.

Every fenced `python` block of README.md runs in one temporary directory, in the order it
appears, with this interpreter (the checkout's mcpgen installed). A block after the marker
`<!-- readme-check: file NAME -->` is a file the others use (a server they start): it is written
as NAME before anything runs. A block after `<!-- readme-check: define ... -->` needs what a
test cannot have (a browser, a real authorization server), which the marker says: it runs as a
module, not as `__main__`, so its imports and definitions run and its main does not. Every
other block runs as a script and must exit 0. The quick start's HTTP server runs too, on a free
port, and says where it serves.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcpio import Client
from tests.support import Snippet, free_port, readme_snippets

pytestmark = pytest.mark.slow

TIMEOUT = 60


SNIPPETS = readme_snippets()


def test_the_readme_has_its_snippets() -> None:
    # The quick start's server and client; the rest is the documentation site's, whose examples
    # tests/test_examples.py runs.
    assert len(SNIPPETS) == 2
    assert {s.file for s in SNIPPETS if s.file} == {"demo_server.py"}
    assert sum(s.define for s in SNIPPETS) == 0


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("readme")
    for snippet in SNIPPETS:
        if snippet.file:
            (where / snippet.file).write_text(snippet.code, encoding="utf-8")
    return where


def run(snippet: Snippet, where: Path) -> subprocess.CompletedProcess[str]:
    script = where / f"snippet_{snippet.line}.py"
    script.write_text(snippet.code, encoding="utf-8")
    if snippet.define:
        command = [sys.executable, "-c", f"import runpy; runpy.run_path({str(script)!r})"]
    else:
        command = [sys.executable, str(script)]
    env = {**os.environ, "MCPIO_STATE_KEY": secrets.token_hex(32)}  # as the README exports it
    return subprocess.run(
        command, cwd=where, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


@pytest.mark.parametrize(
    "snippet", [s for s in SNIPPETS if not s.file], ids=lambda s: f"README.md:{s.line}"
)
def test_the_snippet_runs_as_written(snippet: Snippet, workdir: Path) -> None:
    proc = run(snippet, workdir)
    assert proc.returncode == 0, f"README.md:{snippet.line}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    out = proc.stdout.splitlines()
    if "from_config" in snippet.code:  # the quick start's server behind a one-entry config
        assert out == ["['add']", "5"]
    elif "demo_server.py" in snippet.code:  # the quick start's client
        assert out == ["2026-07-28", "['add']", "3"]
    if '"target": "staging"' in snippet.code:  # the runtime section's client, with its elicitation
        assert out[:3] == ["2026-07-28", "server asks: Deploy to staging?", "deployed"]
    if "model_validate_json" in snippet.code:
        assert out[0] == "echo {'text': 'hi'}"
        assert "null" not in out[1]
    if "start_tool" in snippet.code:  # a task, its question answered, followed to its end
        assert out == ["working", "built and deployed"]
    if "decode_response" in snippet.code:
        assert out == ["CallToolRequest tools/call 2026-07-28 CallToolResult"]


def test_the_quick_start_server_serves_http_where_it_says(workdir: Path) -> None:
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    proc = subprocess.Popen(
        [sys.executable, "demo_server.py", "--http"],
        cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = f"http://127.0.0.1:{port}/mcp"
        assert line == f"mcpio: serving MCP (Streamable HTTP) at {url}\n"

        async def call() -> list[str]:
            with anyio.fail_after(TIMEOUT):
                async with Client(url) as client:
                    result = await client.call_tool("add", {"a": 2, "b": 3})
                    tools = await client.list_tools()
                    return [t.name for t in tools.tools] + [result.content[0].text]  # type: ignore[union-attr]

        assert anyio.run(call) == ["add", "5"]
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)
