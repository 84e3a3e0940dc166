"""What the framework layer costs per `tools/call`: no-op middlewares, and a sync tool run in a
worker thread, on the server's dispatch core alone (as ``bench/dispatch.py``'s ``connection``
paths: a 2026-07-28 request's bytes to its answer's bytes, a new connection per request).

A benchmark, not a test: it prints figures (Markdown) and exits 0. Rows: an ``async def`` echo
tool with 0, 1 and 5 no-op middlewares (`mcpio.Middleware` subclasses that override nothing,
so each runs its `on_message`, `on_request` and `on_call_tool` hooks), and a ``def`` echo tool in
a worker thread (the default) and on the loop (``run_in_thread=False``). Figures: the server's
CPU time per call (``time.process_time``, every thread of this process), the median over
``ROUNDS`` rounds of ``CALLS`` calls, and the ratio to the first row (goal: one no-op middleware
adds at most 5%).

    MCPGEN_BENCH_CALLS=5000 MCPGEN_BENCH_ROUNDS=5 .venv/bin/python bench/middleware.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dispatch import Kept, check, modern_call  # noqa: E402

from mcpio import Middleware, Server  # noqa: E402
from mcpio.negotiate import peek_any  # noqa: E402

CALLS = int(os.environ.get("MCPGEN_BENCH_CALLS", "5000"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_ROUNDS", "5"))
WARMUP = 500


def make_server(middlewares: int, kind: str) -> Server:
    server = Server("bench", "1.0", middleware=[Middleware() for _ in range(middlewares)])
    if kind == "async":

        @server.tool(structured_output=False)
        async def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
            return text

    else:

        @server.tool(structured_output=False, run_in_thread=kind == "thread")
        def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
            return text

    return server


async def measure(middlewares: int, kind: str) -> list[float]:
    server = make_server(middlewares, kind)
    transport = Kept()
    raw = modern_call(1)
    env = peek_any(raw)
    connect = server.connect

    async def run(calls: int) -> None:
        for _ in range(calls):
            await connect(transport, modern=True).on_request(raw, env)
        check(transport.sent[-1], "modern")
        transport.sent.clear()

    await run(WARMUP)
    per_call = []
    for _ in range(ROUNDS):
        start = time.process_time()
        await run(CALLS)
        per_call.append((time.process_time() - start) / CALLS * 1e6)
    return per_call


ROWS = [
    ("async tool, no middleware", 0, "async"),
    ("async tool, 1 no-op middleware", 1, "async"),
    ("async tool, 5 no-op middlewares", 5, "async"),
    ("sync tool, worker thread (default)", 0, "thread"),
    ("sync tool, on the loop (run_in_thread=False)", 0, "loop"),
]


async def main() -> None:
    print(f"## Framework layer per tools/call ({CALLS} calls x {ROUNDS} rounds, CPU µs)\n")
    print("| path | median µs | min..max | / first row |")
    print("|---|---:|---:|---:|")
    base = 0.0
    for label, middlewares, kind in ROWS:
        figures = await measure(middlewares, kind)
        median = statistics.median(figures)
        base = base or median
        print(
            f"| {label} | {median:.1f} | {min(figures):.1f}..{max(figures):.1f} "
            f"| {median / base:.2f}x |"
        )


if __name__ == "__main__":
    asyncio.run(main())
