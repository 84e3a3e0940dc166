"""Added latency per frame through `mcpio inspect`: `tools/call` round trips (two frames each)
of our Client against examples/everything_server.py, direct and through the inspector, over
stdio and over Streamable HTTP (2026-07-28; server and inspector each a process of its own),
each the median and the 10th percentile of MCPGEN_BENCH_CALLS calls, and the checker's own CPU
time per frame.

    .venv/bin/python bench/inspector.py
"""

from __future__ import annotations

import sys

# Its folder must not shadow the standard library (bench/http.py would hide `http`).
sys.path[:] = [p for p in sys.path if not p.endswith("bench")]

import contextlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import AsyncIterator  # noqa: E402
from pathlib import Path  # noqa: E402

import anyio  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from mcpio import Client  # noqa: E402
from tests.support import free_port, until  # noqa: E402

CALLS = int(os.environ.get("MCPGEN_BENCH_CALLS", "300"))
SERVER = [sys.executable, str(ROOT / "examples" / "everything_server.py"), "stdio"]
INSPECT = [sys.executable, "-m", "mcpio", "inspect", "--log", os.devnull, "--"]


async def round_trips(target: str | list[str]) -> list[float]:
    async with Client(target, mode="2026-07-28") as client:
        for _ in range(20):  # warm up
            await client.call_tool("test_simple_text", {})
        times: list[float] = []
        for _ in range(CALLS):
            start = time.perf_counter()
            await client.call_tool("test_simple_text", {})
            times.append(time.perf_counter() - start)
    return times


def line(name: str, direct: list[float], proxied: list[float]) -> str:
    """Medians, and the 10th percentiles (the least disturbed by other load on the machine)."""
    d, p = statistics.median(direct) * 1e6, statistics.median(proxied) * 1e6
    d10 = statistics.quantiles(direct, n=10)[0] * 1e6
    p10 = statistics.quantiles(proxied, n=10)[0] * 1e6
    return (
        f"{name:<6} median: direct {d:8.1f} us, through inspect {p:8.1f} us, "
        f"added {(p - d) / 2:7.1f} us per frame; "
        f"p10: direct {d10:8.1f} us, through inspect {p10:8.1f} us, "
        f"added {(p10 - d10) / 2:7.1f} us per frame"
    )


def checker_cost() -> str:
    """The checker's own CPU time per frame (in process: no pipes, no scheduling)."""
    from mcpio.inspect.checks import Checker

    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    request = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "test_simple_text", "arguments": {}, "_meta": meta}}
    ).encode()  # fmt: skip
    text = {"type": "text", "text": "This is a simple text response for testing."}
    answer = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": [text]}}
    ).encode()
    checker = Checker()
    rounds = CALLS * 10
    for _ in range(50):  # build the codec's readers first
        checker.check("client->server", request)
        checker.check("server->client", answer)
    start = time.perf_counter()
    for _ in range(rounds):
        checker.check("client->server", request)
        checker.check("server->client", answer)
    per_frame = (time.perf_counter() - start) / rounds / 2 * 1e6
    return f"checker alone: {per_frame:.1f} us CPU per frame (tools/call request and answer)"


@contextlib.asynccontextmanager
async def process(command: list[str], port: int) -> AsyncIterator[str]:
    """A server process listening on 127.0.0.1:`port`, its URL while the block runs."""
    proc = await anyio.open_process(command, stdout=None, stderr=None)
    try:
        await until(lambda: _listening(port), 30)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.send_signal(signal.SIGINT)
        with anyio.move_on_after(10):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


async def main() -> None:
    print(checker_cost())
    print(f"tools/call round trips, {CALLS} calls (2 frames per call)")
    direct = await round_trips(SERVER)
    proxied = await round_trips([*INSPECT, *SERVER])
    print(line("stdio", direct, proxied))
    # Over HTTP, the server and the inspector are processes of their own, as in use.
    upstream_port, proxy_port = free_port(), free_port()
    http_server = [*SERVER[:2], "http", "--port", str(upstream_port)]
    async with process(http_server, upstream_port) as upstream:
        direct = await round_trips(upstream)
        inspect = [*INSPECT[:-1], "--upstream", upstream, "--listen", f"127.0.0.1:{proxy_port}"]
        async with process(inspect, proxy_port) as proxy:
            proxied = await round_trips(proxy)
    print(line("http", direct, proxied))


if __name__ == "__main__":
    anyio.run(main)
