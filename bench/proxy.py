"""What a proxy adds to a ``tools/call``: mcpio's `proxy_server` against FastMCP's
`create_proxy`, each against a direct call by the same client library, in the same run.

A benchmark, not a test: it prints figures (Markdown) and exits 0 (non-zero only when FastMCP is
missing or an answer is wrong). The target is ``bench/peers/mcpio_server.py`` (an echo tool) over
stdio, in its own process. The client and the proxy run in this process (the proxy in memory,
as `Client(server)` and FastMCP's in-memory transport serve it), so the CPU time of this process
per call is the client's (direct) or the client's plus the proxy's (through it): the proxy's
added CPU per call is the difference, and its added latency the difference of the median
round trips (one call in flight). Runs:

* mcpio, same era: a 2026-07-28 client, the proxy reaching the target in 2026-07-28;
* mcpio, across eras: a 2026-07-28 client, the target reached in 2025-11-25 (and the reverse);
* FastMCP 4.1.6: its client, its proxy (the backend era mirroring the front's, its default).

    MCPGEN_BENCH_CALLS=500 MCPGEN_BENCH_ROUNDS=5 .venv/bin/python bench/proxy.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

# bench/http.py would shadow the standard library's `http` (httpx, FastMCP's client need it)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

from mcpio import Client  # noqa: E402
from mcpio.client._proxy import proxy_server  # noqa: E402

TARGET = [sys.executable, str(Path(__file__).resolve().parent / "peers" / "mcpio_server.py")]
CALLS = int(os.environ.get("MCPGEN_BENCH_CALLS", "300"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_ROUNDS", "3"))
WARMUP = 30
Echo = Callable[[str], Awaitable[str]]


@asynccontextmanager
async def ours(client_mode: str, target_mode: str | None) -> AsyncIterator[Echo]:
    """Our client, direct (`target_mode` None) or through our proxy."""
    target: Any = TARGET if target_mode is None else proxy_server(TARGET, mode=target_mode)
    async with Client(target, mode=client_mode) as client:

        async def echo(text: str) -> str:
            result = await client.call_tool("echo", {"text": text})
            return str(getattr(result.content[0], "text", ""))

        yield echo


@asynccontextmanager
async def theirs(proxied: bool) -> AsyncIterator[Echo]:
    """FastMCP's client, direct or through FastMCP's proxy."""
    from fastmcp.client import Client as FastClient
    from fastmcp.client.transports import StdioTransport
    from fastmcp.server import create_proxy

    # keep_alive (FastMCP's default): its proxy keeps one target process, not one per request
    transport = StdioTransport(TARGET[0], TARGET[1:], keep_alive=True)
    target: Any = create_proxy(transport) if proxied else transport
    async with FastClient(target) as client:

        async def echo(text: str) -> str:
            result = await client.call_tool_mcp("echo", {"text": text})
            return str(getattr(result.content[0], "text", ""))

        yield echo


async def measure(connect: Any) -> tuple[float, float]:
    """Median round trip (ms) and median CPU of this process per call (ms), over the rounds."""
    trips: list[float] = []
    cpus: list[float] = []
    async with connect as echo:
        for i in range(WARMUP):
            await check(echo, f"w{i}")
        for _ in range(ROUNDS):
            wall, cpu = time.perf_counter(), time.process_time()
            for i in range(CALLS):
                await check(echo, f"c{i}")
            trips.append((time.perf_counter() - wall) / CALLS * 1000)
            cpus.append((time.process_time() - cpu) / CALLS * 1000)
    return statistics.median(trips), statistics.median(cpus)


async def check(echo: Echo, text: str) -> None:
    answer = await echo(text)
    if answer != text:
        raise SystemExit(f"wrong answer: echo({text!r}) gave {answer!r}")


async def main() -> None:
    runs: dict[str, tuple[float, float]] = {}
    runs["mcpio direct (2026-07-28)"] = await measure(ours("2026-07-28", None))
    runs["mcpio direct (2025-11-25)"] = await measure(ours("2025-11-25", None))
    runs["mcpio proxy, same era (2026-07-28 -> 2026-07-28)"] = await measure(
        ours("2026-07-28", "2026-07-28")
    )
    runs["mcpio proxy, across eras (2026-07-28 -> 2025-11-25)"] = await measure(
        ours("2026-07-28", "2025-11-25")
    )
    runs["mcpio proxy, across eras (2025-11-25 -> 2026-07-28)"] = await measure(
        ours("2025-11-25", "2026-07-28")
    )
    runs["FastMCP direct"] = await measure(theirs(False))
    runs["FastMCP proxy"] = await measure(theirs(True))
    report(runs)


def report(runs: dict[str, tuple[float, float]]) -> None:
    print(f"load average {os.getloadavg()[0]:.2f}; {CALLS} calls x {ROUNDS} rounds, one in flight")
    print("\n| run | round trip ms | CPU ms/call (client + proxy) |\n|---|---|---|")
    for name, (trip, cpu) in runs.items():
        print(f"| {name} | {trip:.3f} | {cpu:.3f} |")
    baseline = {"2026-07-28": runs["mcpio direct (2026-07-28)"]}
    baseline["2025-11-25"] = runs["mcpio direct (2025-11-25)"]
    fast = runs["FastMCP proxy"][1] - runs["FastMCP direct"][1]
    fast_trip = runs["FastMCP proxy"][0] - runs["FastMCP direct"][0]
    print("\n| proxy | added latency ms | added CPU ms/call | added CPU vs FastMCP's |")
    print("|---|---|---|---|")
    for name, (trip, cpu) in runs.items():
        if not name.startswith("mcpio proxy"):
            continue
        client_era = name.split("(")[1].split(" ")[0]
        direct = baseline[client_era]
        added = cpu - direct[1]
        print(f"| {name} | {trip - direct[0]:.3f} | {added:.3f} | {added / fast:.2f}x |")
    print(f"| FastMCP proxy | {fast_trip:.3f} | {fast:.3f} | 1.00x |")
    print("\ngoal: half FastMCP's added CPU or less (<= 0.50x)")


if __name__ == "__main__":
    anyio.run(main)
