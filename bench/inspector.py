"""Added latency per frame through `mcpio inspect`: `tools/call` round trips (two frames each)
of our Client against examples/everything_server.py, direct and through the inspector, over
stdio and over Streamable HTTP (2026-07-28; server and inspector each a process of its own),
and the checker's own CPU time per frame.

MCPGEN_BENCH_RUNS runs (5), direct and through the inspector taking turns (a burst of load on a
shared machine falls on both), each MCPGEN_BENCH_CALLS calls (300) on one connection: per run
the median and the 10th percentile of the round trips; printed, the added time per frame as
the median (min..max) over the runs. Wall time (latency is what the relay adds), so the
machine's other load shows: the 10th percentiles are the least disturbed.

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
RUNS = int(os.environ.get("MCPGEN_BENCH_RUNS", "5"))
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


def added(direct: list[float], proxied: list[float]) -> tuple[float, float, float, float]:
    """One run: (direct median, added per frame at the median, direct p10, added at the p10),
    in microseconds (a round trip is two frames)."""
    d, p = statistics.median(direct) * 1e6, statistics.median(proxied) * 1e6
    d10 = statistics.quantiles(direct, n=10)[0] * 1e6
    p10 = statistics.quantiles(proxied, n=10)[0] * 1e6
    return d, (p - d) / 2, d10, (p10 - d10) / 2


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.1f} ({min(values):.1f}..{max(values):.1f})"


def line(runs: list[tuple[float, float, float, float]]) -> str:
    """Over the runs: the direct round trip and the added time per frame, median (min..max)."""
    columns = list(zip(*runs, strict=True))
    return (
        f"{len(runs)} runs; median round trip direct {spread(list(columns[0]))} us, "
        f"added per frame {spread(list(columns[1]))} us; "
        f"p10 round trip direct {spread(list(columns[2]))} us, "
        f"added per frame {spread(list(columns[3]))} us"
    )


async def interleaved(direct: str | list[str], proxied: str | list[str]) -> str:
    """RUNS runs of each target, taking turns: their `line`."""
    runs = []
    for _ in range(max(1, RUNS)):
        runs.append(added(await round_trips(direct), await round_trips(proxied)))
    return line(runs)


def checker_cost() -> str:
    """The checker's own CPU time per frame (in process: no pipes, no scheduling)."""
    from mcpio.inspect._checks import Checker

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
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"tools/call round trips, {CALLS} calls a run (2 frames per call); load {load}")
    print(f"stdio {await interleaved(SERVER, [*INSPECT, *SERVER])}")
    # Over HTTP, the server and the inspector are processes of their own, as in use.
    upstream_port, proxy_port = free_port(), free_port()
    http_server = [*SERVER[:2], "http", "--port", str(upstream_port)]
    async with process(http_server, upstream_port) as upstream:
        inspect = [*INSPECT[:-1], "--upstream", upstream, "--listen", f"127.0.0.1:{proxy_port}"]
        async with process(inspect, proxy_port) as proxy:
            print(f"http  {await interleaved(upstream, proxy)}")
    print("Goal (issue 37): the HTTP relay adds <= 1 ms (1,000 us) median per frame.")


if __name__ == "__main__":
    anyio.run(main)
