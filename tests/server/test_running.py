"""Running a server: `Server.run(transport=...)` as a process, driven by our client."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import anyio
import pytest

from mcpio import Client, Server
from tests.support import free_port

SERVER = """
import sys

from mcpio import Server

server = Server("adder")


@server.tool
def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    if sys.argv[1:]:
        server.run("http", port=int(sys.argv[1]))
    else:
        server.run()
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "adder.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


async def added(target: Sequence[str]) -> tuple[str | None, int]:
    with anyio.fail_after(60):
        async with Client(target) as client:
            assert client.server_info is not None
            return client.server_info.name, await client.call_tool(
                "add", {"a": 2, "b": 3}, result_type=int
            )


@pytest.mark.anyio
async def test_run_serves_stdio_by_default(script: Path) -> None:
    assert await added([sys.executable, str(script)]) == ("adder", 5)


@pytest.fixture
def http_process(script: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(script), str(port)], stderr=subprocess.PIPE, text=True
    )
    try:
        yield process, port
    finally:
        process.terminate()
        process.wait(timeout=60)


@pytest.mark.anyio
async def test_run_http_serves_on_loopback_at_the_port(
    http_process: tuple[subprocess.Popen[str], int],
) -> None:
    process, port = http_process
    assert process.stderr is not None
    line = await anyio.to_thread.run_sync(process.stderr.readline)
    url = f"http://127.0.0.1:{port}/mcp"
    assert line == f"mcpio: serving MCP (Streamable HTTP) at {url}\n"
    assert await added(url) == ("adder", 5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ({"transport": "sse"}, "transport must be 'stdio' or 'http', not 'sse'"),
        ({"port": 9000}, "port: options of transport='http', not of stdio"),
        ({"host": "::1", "path": "/x"}, "host, path: options of transport='http', not of stdio"),
    ],
)
def test_run_refuses_what_it_cannot_do(call: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        Server("x").run(**call)  # type: ignore[arg-type]
    assert str(refused.value) == message
